"""Issue 16's cases: bad input, 0-dim and empty tensors, integer semantics, values at kinks.

Each case is a line of Python run once with `t` bound to torch (and `F` to its
nn.functional) and once with them bound to gradgen's runtime. Where torch returns, gradgen
must return a tensor of the same shape, dtype and values; where torch raises, gradgen must
raise the same exception class with the same message. The cases gradgen does not meet yet
are marked xfail (strict, so one that starts passing is noticed), each with what is wrong.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_functional

import runtime
import runtime.nn.functional as runtime_functional

NAN = float("nan")


def _outcome(library: Any, functional: Any, code: str) -> tuple:
    """What the line gives with `library`: ("returns", value) or ("raises", class, message)."""
    try:
        return "returns", eval(code, {"t": library, "F": functional, "np": np, "nan": NAN})
    except Exception as error:  # the class is compared, whatever it is
        return "raises", type(error).__name__, str(error)


def _as_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor | runtime.Tensor):
        return value.detach().numpy()
    return np.asarray(value)


def _check_same(code: str) -> None:
    expected = _outcome(torch, torch_functional, code)
    actual = _outcome(runtime, runtime_functional, code)
    if expected[0] == "raises":
        assert actual[0] == "raises", f"torch raises {expected[1:]}, gradgen gives {actual[1]!r}"
        if "received an invalid combination of arguments" in expected[2]:
            # The overloads torch then lists are its Python signatures (gradgen lists its
            # schemas): the first line, with the types it got, must be the same.
            expected = (*expected[:2], expected[2].splitlines()[0])
            actual = (*actual[:2], actual[2].splitlines()[0])
        assert actual[1:] == expected[1:]
        return
    assert actual[0] == "returns", f"gradgen raises {actual[1:]}, torch gives {expected[1]!r}"
    want, got = expected[1], actual[1]
    if isinstance(want, torch.Tensor):
        assert isinstance(got, runtime.Tensor), f"{type(got)} for a Tensor"
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(_as_numpy(got), _as_numpy(want), rtol=1e-12, atol=0,
                               equal_nan=True)


# Where torch raises and gradgen answered silently.
SILENT = [
    "t.ones(2) + None",
    "t.add(t.ones(2), None)",
    "t.ones(2).add(None)",
    "t.ones(2) * None",
    "t.mul(t.tensor(1.), [1., 2.])",
    "t.add(t.ones(2), np.ones(2))",
    "t.maximum(t.ones(2), -1.5)",
    "t.maximum(None, t.ones(2))",
    "t.dot(t.ones(2), 2)",
    "t.exp(2.)",
    "t.cat([t.ones(2), None])",
    "t.max(t.ones(2), None)",
    "t.flatten(t.tensor(1.), start_dim=4, end_dim=-2)",
    "F.cross_entropy(t.ones(1, 4), t.full((1, 4), .25), ignore_index=2)",
    "t.argmax(t.tensor([True, False]))",
    "t.relu(t.tensor([True]))",
    "t.matmul(t.ones(2, 2, dtype=t.bool), t.ones(2, 2, dtype=t.bool))",
    "t.mm(t.ones(2, 2, dtype=t.bool), t.ones(2, 2, dtype=t.bool))",
    "t.abs(t.tensor([True]))",
    "t.pow(t.tensor([True]), 2)",
    "t.pow(t.tensor([True]), t.tensor([False]))",
    "t.pow(t.tensor([True]), False)",
    "t.softmax(t.tensor([1, 2]), 0)",
    "t.arange(0, -3, 2)",
    "F.layer_norm(t.ones(2), ())",
    "t.ones(3, 2).index_add(0, t.tensor([0]), t.ones(1, 3))",
    "t.ones(2, 3).sum_to_size(4, 3)",
    "F.embedding(t.tensor([0]), t.ones(2, 2, 2))",
]

# Wrong shapes or dtypes.
SHAPES = [
    "t.gather(t.ones(1, 3), 0, t.zeros(0, dtype=t.int64))",
    "F.linear(t.zeros(0), t.zeros(0, 0))",
    "t.clamp(t.tensor(True), min=2, max=t.tensor(3, dtype=t.int32))",
    "t.tensor([True, False]).sum_to_size(1)",
    "t.arange(0.0, -8.000001, -4.0, dtype=t.int64)",
    "t.linspace(4.3, -3, 50, dtype=t.int64)",
    "t.arange(t.tensor(0.1, dtype=t.float32), 1, 0.3, dtype=t.float64)",
    "2 ** t.tensor([-1, 2])",
]

# 0-dim and empty tensors.
ZERO_DIM = [
    "t.squeeze(t.tensor(1.), (0,))",
    "t.squeeze(t.tensor(1.), 0)",
    "t.transpose(t.tensor(1.), 0, 0)",
    "t.gather(t.tensor(1.), 0, t.tensor(0))",
    "t.index_select(t.tensor(1.), 0, t.tensor([0]))",
    "t.tensor(1.).index_add(0, t.tensor([0]), t.tensor(2.))",
    "t.softmax(t.ones(5, 0, 0), -1)",
    "t.log_softmax(t.ones(5, 0, 0), -1)",
]

# Missing overloads and arguments.
OVERLOADS = [
    "t.max(t.tensor([1., 5.]), t.tensor([3., 2.]))",
    "t.min(t.tensor([1., 5.]), t.tensor([3., 2.]))",
    "t.tensor([1., 5.]).max(t.tensor([3., 2.]))",
    "t.div(t.tensor([-7., 7.]), 2, rounding_mode='floor')",
    "t.div(t.tensor([-7., 7.]), 2, rounding_mode='trunc')",
    "t.div(t.tensor([-7, 7]), t.tensor(2), rounding_mode='floor')",
    "t.div(t.tensor([-7, 7]), t.tensor(2), rounding_mode='trunc')",
    "t.div(t.tensor([-7, 7]), t.tensor(2), rounding_mode=None)",
    "t.div(t.tensor([1.]), 2, rounding_mode='round')",
    "t.div(t.tensor([True]), t.tensor([True]), rounding_mode='floor')",
    "t.div(t.tensor([1, 2]), t.tensor([1, 0]), rounding_mode='trunc')",
    "t.div(t.tensor([-7., 7., 1., -1., 0.]), t.tensor([2., -2., 0., 0., 0.]), "
    "rounding_mode='floor')",
    "t.all(t.ones(2, 3), dim=(0, 1))",
    "t.any(t.zeros(2, 3), dim=(0,))",
    "t.ones(2, 3).flip(dims=(0,))",
    "t.ones(2, 3).flip(0, 1)",
    "t.ones(2, 3).permute(dims=(1, 0))",
    "t.ones(2, 3).view(size=(3, 2))",
    "t.zeros(3).masked_fill(t.tensor([[True], [False]]), 1.)",
    "t.add(t.ones(2), t.ones(2), out=t.zeros(2))",
]

# Values at kinks and specials.
KINKS = [
    "t.sign(t.tensor(nan))",
    "t.sign(t.tensor([nan, -0.0, 2.0]))",
]

# Exception classes.
EXCEPTIONS = [
    "t.cat([])",
    "t.sum(t.ones(0, 3), dim=5)",
    "t.amax(t.ones(0, 3), dim=0)",
    "t.gather(t.ones(2, 3), 5, t.zeros(1, 1, dtype=t.int64))",
    "t.index_select(t.ones(2, 3), 5, t.tensor([0]))",
    "t.pow(t.tensor([2]), -2)",
    "t.where(t.ones(2, dtype=t.bool), t.ones(3), t.ones(2))",
    "t.ones(3).masked_fill(t.ones(2, dtype=t.bool), 1.)",
    "t.clamp(t.ones(3), min=t.ones(2))",
    "t.arange(0, 3, 0)",
    "F.linear(t.tensor(1.), t.ones(2, 1))",
]

# What gradgen does not do yet, each with what is wrong (strict xfail: a fix is noticed).
OPEN: dict[str, str] = {}


def _param(code: str) -> Any:
    if code in OPEN:
        return pytest.param(code, marks=pytest.mark.xfail(reason=OPEN[code], strict=True))
    return code


@pytest.mark.parametrize("code", [_param(c) for c in
                                  SILENT + SHAPES + ZERO_DIM + OVERLOADS + KINKS + EXCEPTIONS])
def test_as_torch(code: str) -> None:
    _check_same(code)


def test_open_cases_are_listed_cases() -> None:
    listed = set(SILENT + SHAPES + ZERO_DIM + OVERLOADS + KINKS + EXCEPTIONS)
    assert set(OPEN) <= listed


# -- gradients at kinks and of 0-dim and empty inputs ----------------------------------


def _gradients(library: Any, functional: Any, function: str, values: Any,
               order: int = 1) -> list[np.ndarray]:
    """The gradient of sum(function(x)) at x = values (and, with order 2, of the sum of
    that gradient), as arrays."""
    x = library.tensor(values, dtype=library.float64, requires_grad=True)
    y = eval(function, {"t": library, "F": functional})(x)
    (grad,) = library.autograd.grad(y.sum(), x, create_graph=order == 2)
    if order == 1:
        return [grad.detach().numpy()]
    (second,) = library.autograd.grad(grad.sum(), x, allow_unused=True)
    return [grad.detach().numpy(), None if second is None else second.numpy()]


GRADIENTS = [
    ("lambda x: t.abs(x)", [NAN, 1.0, -2.0, 0.0], 1),
    ("lambda x: t.relu(x)", [NAN, 1.0, -2.0, 0.0], 1),
    ("lambda x: t.relu(x)", 0.7, 1),
    ("lambda x: t.sign(x)", [NAN, 1.0], 1),
    ("lambda x: F.smooth_l1_loss(x, t.tensor(0.2, dtype=t.float64))", 0.7, 2),
    ("lambda x: t.squeeze(x, 0)", [], 1),
    ("lambda x: t.squeeze(x, 0)", 3.0, 1),
    ("lambda x: F.mse_loss(x, t.zeros(0, dtype=t.float64))", [], 1),
    ("lambda x: t.softmax(x, -1)", np.zeros((2, 0)).tolist(), 1),
    # self broadcast up to the mask's shape: its gradient is summed back to self's shape
    ("lambda x: x.masked_fill(t.tensor([[True], [False]]), 5.0) * t.tensor([1.0, 2.0, 3.0], "
     "dtype=t.float64)", [1.0, 2.0, 3.0], 1),
    ("lambda x: t.gather(x, 0, t.tensor([0, 0]))", 2.0, 1),
    ("lambda x: t.max(x, t.tensor([0.5, 0.5, 9.0], dtype=t.float64))", [1.0, 0.5, 3.0], 1),
    ("lambda x: t.div(x, 2.0, rounding_mode='floor')", [1.5, -2.5], 1),
]


@pytest.mark.parametrize(("function", "values", "order"), GRADIENTS)
def test_gradients_as_torch(function: str, values: Any, order: int) -> None:
    expected = _gradients(torch, torch_functional, function, values, order)
    actual = _gradients(runtime, runtime_functional, function, values, order)
    for want, got in zip(expected, actual, strict=True):
        if want is None:
            assert got is None
            continue
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def _tangent(library: Any, primal: float, tangent: float, function: str) -> float:
    forward_ad = library.autograd.forward_ad
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(library.tensor(primal, dtype=library.float64),
                                    library.tensor(tangent, dtype=library.float64))
        out = eval(function, {"t": library})(dual)
        return float(forward_ad.unpack_dual(out).tangent)


@pytest.mark.parametrize("function", [
    "lambda x: t.mul(x, 1.0)",
    "lambda x: t.mul(x, t.tensor(1.0, dtype=t.float64))",
    "lambda x: x * t.tensor(2.0, dtype=t.float64)",
    "lambda x: t.mul(x, t.ones(3, dtype=t.float64)).sum()",
    "lambda x: t.add(t.ones(3, dtype=t.float64), x).sum()",
    "lambda x: t.mm(x.reshape(1, 1), t.ones(1, 2, dtype=t.float64)).sum()",  # nan in both
    "lambda x: t.add(x, t.tensor(1.0, dtype=t.float64))",
    "lambda x: t.tensor(3.0, dtype=t.float64) / x",
])
def test_undefined_tangent_is_skipped(function: str) -> None:
    """An input without a tangent contributes no term (not a zero times inf, which is nan)."""
    expected = _tangent(torch, math.inf, 0.5, function)
    actual = _tangent(runtime, math.inf, 0.5, function)
    assert actual == pytest.approx(expected, nan_ok=True)


# -- arange and linspace over bounds, steps and dtypes ------------------------------------------

RANGES = [(0, -3, 2), (0, 3, 0), (0.0, -8.000001, -4.0), (1, 2.5, 0.5), (5.5, None, 1),
          (0, 10, 3), (0, 1, 0.1), (-1, 1, 0.3), (10, 0, -3), (0.5, 7.25, 0.75), (3, 3, 1),
          (0, 1, 0.5), (0, float("nan"), 1), (0, float("inf"), 1)]
SPACES = [(4.3, -3, 50), (0, 1, 7), (-2.5, 9.1, 13), (0, 1, 0), (0, 1, 1), (1, 0, 2),
          (0.1, 0.9, 1000), (-1e3, 1e3, 101), (0, 1, -1)]
DTYPES = [None, "int64", "int32", "float32", "float64"]


def _made(lib: Any, make: Any) -> Any:
    try:
        made = make(lib)
    except Exception as error:  # noqa: BLE001 - the class and message are compared
        return type(error).__name__, str(error)
    return str(made.dtype), made.detach().numpy().tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bounds", RANGES, ids=str)
def test_arange_counts_errs_and_computes_as_torch(bounds: tuple, dtype: str | None) -> None:
    """Length, values (bit for bit), dtype, and the exception class and message."""
    start, end, step = bounds

    def make(lib: Any) -> Any:
        options = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return lib.arange(start, **options) if end is None else \
            lib.arange(start, end, step, **options)
    assert _made(runtime, make) == _made(torch, make)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bounds", SPACES, ids=str)
def test_linspace_computes_as_torch(bounds: tuple, dtype: str | None) -> None:
    def make(lib: Any) -> Any:
        options = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return lib.linspace(*bounds, **options)
    assert _made(runtime, make) == _made(torch, make)
