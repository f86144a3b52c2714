"""Linear algebra and nn through the public API, against PyTorch: the same program written
once, run with `torch` and with `runtime`, must give the same values, gradients, graph
(grad_fn names in breadth-first order) and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_functional

import runtime
from generated import ops
from runtime import composite

RNG = np.random.default_rng(0)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def uniform(*shape: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def indices(values: list) -> np.ndarray:
    return np.array(values, dtype=np.int64)


class Constant:
    """An input that does not require grad (weights of a loss)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def graph(output) -> list[str]:
    """grad_fn names, breadth first from the output: the shape of the recorded graph."""
    names, queue, seen = [], [output.grad_fn], set()
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name())
        queue.extend(next_node for next_node, _ in node.next_functions)
    return names


def run(library, functional, program: Callable, arrays: list):
    leaves = [library.tensor(a.array) if isinstance(a, Constant)
              else library.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = program(library, functional, *leaves)
    differentiable = [leaf for leaf in leaves
                      if isinstance(leaf, library.Tensor) and leaf.requires_grad]
    cotangent = library.tensor(np.random.default_rng(1).standard_normal(output.shape))
    grads = library.autograd.grad(output, differentiable, cotangent, allow_unused=True,
                                  materialize_grads=True)
    return output, grads


def check(program: Callable, *arrays: np.ndarray | Constant) -> None:
    ours, our_grads = run(runtime, composite, program, list(arrays))
    theirs, their_grads = run(torch, torch_functional, program, list(arrays))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert graph(ours) == graph(theirs)
    for mine, reference in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


def check_error(program: Callable, *arrays: np.ndarray) -> None:
    errors = []
    for library, functional in ((runtime, composite), (torch, torch_functional)):
        tensors = [library.tensor(a) for a in arrays]
        with pytest.raises(Exception) as info:  # noqa: PT011 - compared with torch's below
            program(library, functional, *tensors)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


# -- matmul and friends ---------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),        # mm
    ((2, 3, 4), (4, 5)),     # a batch folded into one mm
    ((2, 6, 3, 4), (4, 5)),
    ((2, 3, 4), (2, 4, 5)),  # bmm
    ((2, 1, 3, 4), (5, 4, 2)),  # bmm with broadcast batches
    ((4,), (4,)),            # dot
    ((3, 4), (4,)),          # mv
    ((4,), (4, 5)),          # unsqueeze, mm, squeeze
    ((2, 3, 4), (4,)),       # a batch folded into one mv
    ((4,), (2, 4, 5)),       # transposed, folded into mv
    ((3, 4), (2, 4, 5)),     # transposed, folded into mm, transposed back
]


@pytest.mark.parametrize(("left", "right"), MATMUL_SHAPES, ids=str)
def test_matmul(left, right) -> None:
    check(lambda t, f, a, b: a @ b, normal(*left), normal(*right))
    check(lambda t, f, a, b: t.matmul(a, b), normal(*left), normal(*right))


@pytest.mark.parametrize("name", ["bmm", "dot", "mv", "outer", "ger"])
def test_products(name) -> None:
    shapes = {"bmm": ((2, 3, 4), (2, 4, 5)), "dot": ((4,), (4,)), "mv": ((3, 4), (4,)),
              "outer": ((3,), (4,)), "ger": ((3,), (4,))}[name]
    arrays = [normal(*s) for s in shapes]
    check(lambda t, f, a, b: getattr(t, name)(a, b), *arrays)
    check(lambda t, f, a, b: getattr(a, name)(b), *arrays)


@pytest.mark.parametrize(("left", "right"), [
    ((2, 3), (4, 5)), ((3,), (3, 5)), ((3, 3), (2, 3, 5)),
])
def test_mm_errors(left, right) -> None:
    check_error(lambda t, f, a, b: t.mm(a, b), normal(*left), normal(*right))


@pytest.mark.parametrize(("left", "right"), [
    ((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 6)), ((3, 4), (2, 4, 6)), ((2, 3, 4), (4, 6)),
])
def test_bmm_errors(left, right) -> None:
    check_error(lambda t, f, a, b: t.bmm(a, b), normal(*left), normal(*right))


@pytest.mark.parametrize(("left", "right"), [
    ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 3), (4, 5)), ((2, 2, 3), (4, 5)),
    ((2, 2, 3), (2, 4, 5)), ((2, 2, 3), (3, 3, 5)), ((), (3,)), ((2, 3), (2, 4, 5)),
    ((2, 2, 3), (4,)),
])
def test_matmul_errors(left, right) -> None:
    check_error(lambda t, f, a, b: a @ b, normal(*left), normal(*right))


def test_dot_and_mv_errors() -> None:
    check_error(lambda t, f, a, b: t.dot(a, b), normal(3, 1), normal(3))
    check_error(lambda t, f, a, b: t.mv(a, b), normal(2, 3), normal(4))
    check_error(lambda t, f, a, b: t.outer(a, b), normal(2, 3), normal(3))


@pytest.mark.parametrize(("input_shape", "bias"), [
    ((3, 4), True), ((3, 4), False), ((2, 3, 4), True), ((2, 3, 4), False), ((4,), True),
    ((2, 2, 3, 4), True),
])
def test_linear(input_shape, bias) -> None:
    arrays = [normal(*input_shape), normal(5, 4)] + ([normal(5)] if bias else [])
    check(lambda t, f, *a: f.linear(*a), *arrays)


# -- softmax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("spelling", ["functional", "torch", "method", "dtype"])
def test_softmax(name, spelling) -> None:
    programs = {
        "functional": lambda t, f, x: getattr(f, name)(x, dim=1),
        "torch": lambda t, f, x: getattr(t, name)(x, -1),
        "method": lambda t, f, x: getattr(x, name)(0),
        "dtype": lambda t, f, x: getattr(f, name)(x.float(), 1, dtype=t.float64),
    }
    check(programs[spelling], normal(3, 4))


def test_softmax_implicit_dim_warns() -> None:
    x = runtime.tensor(normal(3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        composite.softmax(x)


# -- losses ----------------------------------------------------------------------------------

REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss(reduction) -> None:
    check(lambda t, f, x, y: f.mse_loss(x, y, reduction=reduction), normal(3, 4), normal(3, 4))


needs_abs = pytest.mark.skipif(not hasattr(ops, "abs") or not hasattr(ops, "mean"),
                               reason="l1_loss needs abs and mean (elementwise, reductions)")


@needs_abs
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_l1_loss(reduction) -> None:
    check(lambda t, f, x, y: f.l1_loss(x, y, reduction=reduction), normal(3, 4), normal(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_smooth_l1_loss(reduction, beta) -> None:
    check(lambda t, f, x, y: f.smooth_l1_loss(x, y, reduction=reduction, beta=beta),
          normal(3, 4), normal(3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_and_cross_entropy(reduction, weighted, ignore_index) -> None:
    target = indices([0, 1, 3, 1])
    weight = [Constant(uniform(5, low=0.5, high=2.0))] if weighted else []

    def nll(t, f, x, y, *w):
        return f.nll_loss(f.log_softmax(x, 1), y, *w, ignore_index=ignore_index,
                          reduction=reduction)

    def cross_entropy(t, f, x, y, *w):
        return f.cross_entropy(x, y, *w, ignore_index=ignore_index, reduction=reduction)

    check(nll, normal(4, 5), target, *weight)
    check(cross_entropy, normal(4, 5), target, *weight)


def test_cross_entropy_unbatched() -> None:
    check(lambda t, f, x, y: f.cross_entropy(x, y), normal(5), indices(2))


def test_nll_loss_errors() -> None:
    check_error(lambda t, f, x, y: f.nll_loss(x, y), normal(3, 5), indices([0, 7, 1]))
    check_error(lambda t, f, x, y: f.nll_loss(x, y), normal(3, 5), indices([0, 1]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted) -> None:
    weight = [Constant(uniform(4, low=0.5, high=2.0))] if weighted else []
    check(lambda t, f, x, y, *w: f.binary_cross_entropy(x, y, *w, reduction=reduction),
          uniform(3, 4, low=0.05, high=0.95), uniform(3, 4), *weight)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("pos_weight", [False, True])
def test_binary_cross_entropy_with_logits(reduction, pos_weight) -> None:
    extra = [Constant(uniform(4, low=0.5, high=3.0))] if pos_weight else []

    def program(t, f, x, y, *p):
        return f.binary_cross_entropy_with_logits(x, y, reduction=reduction,
                                                  pos_weight=p[0] if p else None)

    check(program, normal(3, 4), uniform(3, 4), *extra)


def test_loss_errors() -> None:
    check_error(lambda t, f, x, y: f.binary_cross_entropy(x, y), uniform(3), uniform(4))
    check_error(lambda t, f, x, y: f.binary_cross_entropy_with_logits(x, y), normal(3),
                uniform(4))
    check_error(lambda t, f, x, y: f.mse_loss(x, y, reduction="average"), normal(3), normal(3))


# -- dropout, embedding, layer norm -----------------------------------------------------------

def test_dropout_identity() -> None:
    x = runtime.tensor(normal(3, 4), requires_grad=True)
    assert composite.dropout(x, 0.0) is x
    assert composite.dropout(x, 0.5, training=False) is x
    check(lambda t, f, x: f.dropout(x, 1.0) + x, normal(3, 4))


def test_dropout_scales_what_it_keeps() -> None:
    runtime.manual_seed(0)
    x = runtime.tensor(np.ones((200, 50)), requires_grad=True)
    y = composite.dropout(x, 0.3)
    assert y.grad_fn.name() == "MulBackward0"
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7)
    assert abs(kept.mean() - 0.7) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.7, 0.0))


def test_dropout_is_seeded() -> None:
    x = runtime.tensor(normal(4, 5))
    runtime.manual_seed(3)
    first = composite.dropout(x, 0.5).numpy()
    runtime.manual_seed(3)
    np.testing.assert_array_equal(first, composite.dropout(x, 0.5).numpy())


@pytest.mark.parametrize("padding_idx", [None, 0, -1])
def test_embedding(padding_idx) -> None:
    check(lambda t, f, i, w: f.embedding(i, w, padding_idx=padding_idx),
          indices([[0, 2, 3], [3, 0, 1]]), normal(4, 3))


def test_embedding_errors() -> None:
    check_error(lambda t, f, i, w: f.embedding(i, w), indices([5]), normal(3, 2))


@pytest.mark.parametrize(("shape", "normalized", "affine"), [
    ((2, 3, 4), (4,), True), ((2, 3, 4), (3, 4), False), ((5, 4), [4], True),
])
def test_layer_norm(shape, normalized, affine) -> None:
    params = [normal(*normalized), normal(*normalized)] if affine else []
    check(lambda t, f, x, *p: f.layer_norm(x, normalized, *p), normal(*shape), *params)


def test_layer_norm_errors() -> None:
    check_error(lambda t, f, x: f.layer_norm(x, [5]), normal(2, 3, 4))
