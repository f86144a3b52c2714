"""The generated Node classes against backward functions written by hand (tests/reference).

For each node the seed material discusses, random inputs (Hypothesis draws the shapes,
values and scalars) go through the forward op; the node's own `apply` is then called on a
random gradient and diffed against the hand-written backward after the engine's sum_to.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime
from tests.reference import backward as reference

SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
SCALARS = st.sampled_from([1.0, 0.5, -2.0, 3.0])
SEEDS = st.integers(0, 2**32 - 1)


def _leaf(rng: np.random.Generator, shape: tuple[int, ...], positive: bool = False):
    values = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    return runtime.tensor(values, requires_grad=True), values


def _check(output, expected_node: str, expected: list[np.ndarray], rng) -> None:
    """Run the generated node on a random gradient; compare with the reference."""
    node = output.grad_fn
    assert node.name() == expected_node
    grad = rng.standard_normal(output.shape)
    got = node.apply([runtime.tensor(grad)])
    want = expected(grad)
    assert len(got) == len(want), f"{expected_node}: {len(got)} gradients, want {len(want)}"
    for index, ((next_node, input_nr), g, w) in enumerate(
            zip(node.next_functions, got, want, strict=True)):
        shape = next_node._input_metadata[input_nr][0]
        actual = reference.sum_to(g._data, shape)
        np.testing.assert_allclose(actual, w, rtol=1e-12, atol=1e-12,
                                   err_msg=f"{expected_node}, gradient {index}")


def _broadcast_pair(draw_shape: tuple[int, ...], seed: int) -> tuple[tuple, tuple]:
    """A shape and a second shape that broadcasts against it (some dimensions 1 or dropped)."""
    rng = np.random.default_rng(seed)
    other = tuple(1 if rng.random() < 0.3 else s for s in draw_shape)
    return draw_shape, other[int(rng.integers(0, len(other))):]


@settings(max_examples=30, deadline=None)
@given(SHAPES, SEEDS, SCALARS)
def test_add_and_sub(shape, seed, alpha) -> None:
    rng = np.random.default_rng(seed)
    a_shape, b_shape = _broadcast_pair(shape, seed)
    (a, av), (b, bv) = _leaf(rng, a_shape), _leaf(rng, b_shape)
    _check(runtime.add(a, b, alpha=alpha), "AddBackward0",
           lambda g: reference.add_backward(g, av, bv, alpha), rng)
    _check(runtime.sub(a, b, alpha=alpha), "SubBackward0",
           lambda g: reference.sub_backward(g, av, bv, alpha), rng)


@settings(max_examples=30, deadline=None)
@given(SHAPES, SEEDS)
def test_mul_and_div(shape, seed) -> None:
    rng = np.random.default_rng(seed)
    a_shape, b_shape = _broadcast_pair(shape, seed)
    (a, av), (b, bv) = _leaf(rng, a_shape), _leaf(rng, b_shape, positive=True)
    _check(a * b, "MulBackward0", lambda g: reference.mul_backward(g, av, bv), rng)
    _check(a / b, "DivBackward0", lambda g: reference.div_backward(g, av, bv), rng)


@settings(max_examples=30, deadline=None)
@given(SHAPES, SEEDS, st.sampled_from([0, 1, 2, 3, 0.5, -1.5]))
def test_pow(shape, seed, exponent) -> None:
    rng = np.random.default_rng(seed)
    a, av = _leaf(rng, shape, positive=True)
    _check(a.pow(exponent), "PowBackward0",
           lambda g: reference.pow_backward(g, av, exponent), rng)


@settings(max_examples=30, deadline=None)
@given(SHAPES, SEEDS)
def test_sum_mean_relu(shape, seed) -> None:
    rng = np.random.default_rng(seed)
    a, av = _leaf(rng, shape)
    _check(a.sum(), "SumBackward0", lambda g: reference.sum_backward(g, av), rng)
    _check(a.mean(), "MeanBackward0", lambda g: reference.mean_backward(g, av), rng)
    _check(a.relu(), "ReluBackward0", lambda g: reference.relu_backward(g, av), rng)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), SEEDS, SCALARS, SCALARS,
       st.booleans())
def test_t_mm_addmm(n, k, m, seed, beta, alpha, bias_is_vector) -> None:
    rng = np.random.default_rng(seed)
    (x, xv), (w, wv) = _leaf(rng, (n, k)), _leaf(rng, (k, m))
    _check(w.t(), "TBackward0", lambda g: reference.t_backward(g, wv), rng)
    _check(runtime.mm(x, w), "MmBackward0", lambda g: reference.mm_backward(g, xv, wv), rng)
    b, bv = _leaf(rng, (m,) if bias_is_vector else (n, m))
    _check(runtime.addmm(b, x, w, beta=beta, alpha=alpha), "AddmmBackward0",
           lambda g: reference.addmm_backward(g, bv, xv, wv, beta, alpha), rng)
