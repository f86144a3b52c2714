"""Python spellings of the elementwise ops (`2 - x`, `x ** y`, `x.clamp(min=0)`, `x == y`)
give torch's values, dtypes, grad_fn names and gradients, kinks included."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime

RNG = np.random.default_rng(0)
X = RNG.standard_normal(5).astype(np.float32)
POSITIVE = RNG.uniform(0.5, 2.0, 5).astype(np.float32)
KINK = np.array([-1.0, 0.0, 0.0, 1.0, 2.0], dtype=np.float32)
KINK2 = np.array([-1.0, 0.0, 1.0, 1.0, 3.0], dtype=np.float32)
MASK = np.array([True, False, True, False, True])
INTS, INTS2 = np.array([1, 2, 3]), np.array([2, 2, 2])
DOUBLE_0DIM = np.array(1.5)

CASES = {
    "x - 2": (lambda t, a: a - 2, X),
    "2 - x": (lambda t, a: 2 - a, X),
    "x / 2": (lambda t, a: a / 2, X),
    "2 / x": (lambda t, a: 2 / a, POSITIVE),
    "-x": (lambda t, a: -a, X),
    "x ** y": (lambda t, a, b: a ** b, POSITIVE, X),
    "2 ** x": (lambda t, a: 2 ** a, X),
    "x ** 2": (lambda t, a: a ** 2, X),
    "x.clamp(min=0)": (lambda t, a: a.clamp(min=0), KINK),
    "clamp(x, -1, 1)": (lambda t, a: t.clamp(a, -1, 1), KINK),
    "clamp(x, tensor, tensor)": (lambda t, a, lo, hi: t.clamp(a, lo, hi), KINK, KINK2 - 1, KINK2),
    "x.clamp_min(0)": (lambda t, a: a.clamp_min(0), KINK),
    "relu at 0": (lambda t, a: t.relu(a), KINK),
    "abs(x) at 0": (lambda t, a: abs(a), KINK),
    "maximum ties": (lambda t, a, b: t.maximum(a, b), KINK, KINK2),
    "minimum ties": (lambda t, a, b: t.minimum(a, b), KINK, KINK2),
    "where(c, x, y)": (lambda t, c, a, b: t.where(c, a, b), MASK, X, POSITIVE),
    "where(x > 0, x, 0.)": (lambda t, a: t.where(a > 0, a, 0.0), X),
    "x.masked_fill(m, 0.)": (lambda t, a, m: a.masked_fill(m, 0.0), X, MASK),
    "x == y": (lambda t, a, b: a == b, KINK, KINK2),
    "x != 0": (lambda t, a: a != 0, KINK),
    "x < y": (lambda t, a, b: a < b, KINK, KINK2),
    "x >= 0": (lambda t, a: a >= 0, KINK),
    "~m & (x > 0) | m": (lambda t, m, a: ~m & (a > 0) | m, MASK, X),
    "int / int": (lambda t, a, b: a / b, INTS, INTS2),
    "float32 + float64 0-dim": (lambda t, a, b: a + b, X, DOUBLE_0DIM),
    "int64 * 2.5": (lambda t, a: a * 2.5, INTS),
    "2 ** int": (lambda t, a: 2 ** a, INTS),
    "int.exp()": (lambda t, a: a.exp(), INTS),
    "x.clone().clamp_(min=0)": (lambda t, a: a.clone().clamp_(min=0), KINK),
    "x.clone().div_(y)": (lambda t, a, b: a.clone().div_(b), X, POSITIVE),
    "x.clone().fill_(2.)": (lambda t, a: a.clone().fill_(2.0), X),
    "x.clone().fill_(0-dim)": (lambda t, a, v: a.clone().fill_(v), X, DOUBLE_0DIM),
    "x.clamp() (error)": (lambda t, a: a.clamp(), X),
    "int /= 2 (error)": (lambda t, a: a.clone().div_(2), INTS),
}


def _run(lib, function, *arrays):
    """(dtype, grad_fn name, value, input gradients), or the error's type and message."""
    tensors = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    try:
        out = function(lib, *tensors)
    except (RuntimeError, TypeError) as error:
        return type(error).__name__, str(error)
    name = out.grad_fn.name() if out.grad_fn is not None else None
    grads = []
    if out.requires_grad:
        out.sum().backward()
        grads = [t.grad.numpy() for t in tensors if t.requires_grad]
    return str(out.dtype), name, out.detach().numpy(), grads


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_python_spelling_matches_torch(case: str) -> None:
    function, *arrays = CASES[case]
    ours, theirs = _run(runtime, function, *arrays), _run(torch, function, *arrays)
    assert ours[:2] == theirs[:2]
    if len(ours) == 4:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
        assert len(ours[3]) == len(theirs[3])
        for g, h in zip(ours[3], theirs[3], strict=True):
            np.testing.assert_allclose(g, h, rtol=1e-6)


def test_comparing_with_none_is_false_as_in_torch() -> None:
    x = runtime.tensor([1.0, 2.0])
    assert (x == None) is False  # noqa: E711 - the spelling under test
    assert (x != None) is True  # noqa: E711


INPLACE_PROGRAMS = {
    "sin_ function": lambda lib: lib.sin_(lib.tensor([0.5, 1.0])),
    "exp_ method": lambda lib: lib.tensor([0.5, 1.0]).exp_(),
    "relu_ function": lambda lib: lib.relu_(lib.tensor([-1.0, 2.0])),
    "clamp_ function": lambda lib: lib.clamp_(lib.tensor([5.0, -5.0, 0.5]), -1, 1),
    "sign_ method": lambda lib: lib.tensor([-2.0, 0.0, 3.0]).sign_(),
    "pow_ method": lambda lib: lib.tensor([2.0, 3.0]).pow_(2),
}


@pytest.mark.parametrize("name", list(INPLACE_PROGRAMS))
def test_inplace_unary_ops_like_torch(name) -> None:
    program = INPLACE_PROGRAMS[name]
    np.testing.assert_allclose(program(runtime).tolist(), program(torch).tolist(), rtol=1e-6)


@pytest.mark.parametrize("op", ["sin_", "exp_", "relu_", "tanh_", "sqrt_"])
def test_inplace_unary_ops_record_their_node_and_gradient(op) -> None:
    def run(lib):
        x = lib.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = x * 1
        getattr(y, op)()
        (y * y).sum().backward()
        return y.grad_fn.name(), x.grad.tolist()
    ours, theirs = run(runtime), run(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
