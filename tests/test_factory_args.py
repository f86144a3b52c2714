"""The factories' arguments, compared with torch's: torch.zeros, ones, empty, full, eye,
arange, linspace, logspace, the `*_like` factories, rand, randn, randint, randperm,
tensor, as_tensor and Tensor.new_* (runtime/arguments.py parses their arguments as
PyTorch's argument parser does; runtime/factories.py and runtime/random_ops.py check the
values as torch's kernels do).

Each case is a line of Python run with `t` bound to torch and to gradgen's runtime
(tests/test_edge_cases.py's `_check_same`): where torch raises, gradgen raises the same
exception class with the same message; where torch returns, gradgen returns the same
shape, dtype and values (random ones after the same seed, or from a seeded generator).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime
from tests.test_edge_cases import _check_same

# The 61 bad calls of the probe that opened this work (all but one of them, which is
# METHOD_CALLS's below), and two in-place methods whose checks were right already.
PROBE = [
    't.eye(-1)', 't.eye(42, -3)', 't.eye(-7, 42)', 't.eye(2.5)', 't.eye(3, None)', 't.zeros(-1)',
    't.zeros(2, -3)', 't.zeros((2, -1))', 't.zeros(2.5)', 't.zeros((2, 2.0))', 't.zeros(None)',
    "t.zeros('a')", 't.zeros(2, dtype=3)', "t.zeros(2, dtype='float32')", 't.ones(-2)',
    't.ones((3,), dtype=int)', 't.empty(-1)', 't.empty(2, -1)', 't.full((2, -1), 1.)',
    't.full((2,), None)', "t.full((2,), 'a')", 't.full(2, 1.)', 't.full((2,), t.ones(2))',
    't.full((2,), [1, 2])', 't.rand(-1)', 't.randn(-2)', 't.randn(2.5)',
    't.rand(2, dtype=t.int64)', 't.randint(5, (2, -1))', 't.randint(5, 2)',
    't.randint(3, 1, (2,))', 't.randint(0, (2,))', 't.arange(0, 5, 0.0)',
    "t.arange(0, float('inf'))", "t.arange(float('nan'))", 't.arange(0, 5, -1)', "t.arange('a')",
    't.arange(None)', 't.arange(5, dtype=t.bool)', 't.linspace(0, 3, 1.0)',
    't.linspace(0, 3, -1)', 't.linspace(t.tensor([1, 1]), t.tensor([3, 3]), 1)',
    't.linspace(0, 1, None)', 't.linspace(0, 1)', 't.logspace(0, 1, -2)', 't.zeros_like(2)',
    't.ones_like(None)', 't.full_like(t.ones(2), None)', 't.rand_like(t.ones(2, dtype=t.int64))',
    't.randn_like(t.ones(2, dtype=t.int64))', "t.tensor([1, 'a'])", 't.tensor([[1, 2], [3]])',
    't.tensor(None)', 't.tensor([1, 2], dtype=3)', 't.as_tensor([[1], [2, 3]])',
    't.zeros(2, 3).new_zeros(-1)', 't.ones(2).new_full((2,), None)', 't.ones(2).new_ones(-3)',
    't.zeros(3).normal_(0, -1)', 't.zeros(3).uniform_(2, 1)',
]

# Bad calls beyond the probe: binding, types, values, for every factory.
BAD = [
    't.zeros()', 't.zeros(2, foo=1)', 't.zeros(size=2)', 't.zeros(2, size=3)',
    't.zeros((2, 3), (4,))', 't.zeros(2.0, 2)', 't.zeros((2.0, 2))', 't.zeros([2, None])',
    't.zeros(2, None)', "t.zeros(2, 'a')", 't.zeros(True)', 't.zeros((True, 2))',
    't.zeros(np.float64(2))', 't.zeros(2, t.tensor(3.))', 't.zeros(2, np.bool_(True))',
    't.zeros(t.tensor(True))', 't.zeros(2, requires_grad=1)', 't.zeros(2, dtype=np.float32)',
    't.zeros(2, device=0)', 't.zeros(2, names=None)', 't.zeros(2, layout=3)',
    't.zeros(2, device=[0])', 't.ones(2, 2.5)', "t.empty(2, 'a')", 't.ones(size=(2,), foo=2)',
    't.empty(0, -2)', 't.zeros(0, -1)', 't.zeros(-1, 0)', 't.full()', 't.full((2,))',
    't.full((2,), 1., 3)', 't.full(size=(2,))', 't.full((2, 2.5), 1.)',
    't.full((2,), t.tensor(2., requires_grad=True))', 't.full((2,), t.tensor([2.]))',
    "t.full((2,), 1., dtype='a')", 't.full((2,), fill_value=None)',
    't.full(fill_value=1., size=2)', 't.eye(True)', 't.eye(3, 2.5)', 't.eye()', 't.eye(3, 4, 5)',
    't.eye(t.tensor(3.))', 't.eye(3, t.float32)', 't.eye(3, t.zeros(2).shape)',
    't.eye(3, np.float64(1))', 't.eye(n=-2)', 't.eye(3, m=-1)', 't.eye(3, dtype=5)',
    't.eye(-1, out=t.ones(1))', 't.arange()', 't.arange(0, 5, None)', 't.arange(0, None)',
    't.arange(t.tensor([1]))', 't.arange(1, 2, 3, 4)', 't.arange(5, foo=1)',
    't.arange(0, 5, 1, dtype=t.bool)', 't.arange(3, dtype=t.bool, out=None)',
    't.arange(t.tensor(3., requires_grad=True))',
    't.arange(0, 2, out=t.ones(1), dtype=t.float64)', 't.linspace(0, 1, True)',
    't.linspace(0, 1, t.tensor(3, dtype=t.bool))', 't.linspace(0, 1, 3, 4)',
    't.linspace(t.tensor([1.]), 3, 2)', 't.linspace(1, t.tensor([[3.]]), 2)',
    't.linspace(0, 1, 5, dtype=t.bool)', 't.linspace(0, 1, 2, dtype=3)', 't.linspace(0, 1, 2.5)',
    't.linspace(0, 1, -3)', 't.linspace(None, 1, 3)', "t.linspace('a', 1, 3)",
    't.logspace(t.tensor([1.]), t.tensor(2.), 2)', 't.logspace(0, 1, 5, dtype=t.bool)',
    "t.logspace(0, 2, 3, 'a')", 't.logspace(0, 2)', 't.logspace(0, 2, 3, base=None)',
    't.zeros_like()', 't.zeros_like(t.ones(2), t.ones(2))', 't.zeros_like(t.ones(2), foo=1)',
    't.zeros_like([1, 2])', 't.ones_like(t.ones(2), dtype=3)', 't.empty_like(2.5)',
    't.full_like(t.ones(2))', "t.full_like(t.ones(2), 'a')", 't.full_like(2, 1.)',
    't.full_like(t.ones(2), t.ones(2))', "t.zeros_like(t.ones(2), requires_grad='a')", 't.rand()',
    't.rand(2, generator=3)', 't.rand(2, foo=1)', 't.rand(2.5)', 't.rand(2, -1)',
    "t.randn(2, 'a')", 't.rand((2, 2.0))', 't.randn(2, dtype=t.int64)', 't.rand(2, dtype=3)',
    't.randint(5)', 't.randint(5, (2,), (3,))', 't.randint(2.5, (2,))', 't.randint(5, (2.5,))',
    't.randint(0, 5, 2)', 't.randint(5, size=2)', 't.randint(5, (2,), dtype=t.bool)',
    't.randint(5, (2,), foo=1)', 't.randint(high=5)', 't.randint(5, 3, (2,))', 't.rand_like(2)',
    't.rand_like(t.ones(2), 3)', 't.randn_like(None)', 't.randint_like(t.ones(2))',
    't.randint_like(t.ones(2), 2.5)', 't.randint_like(t.ones(2), 3, 1)', 't.randint_like(2, 3)',
    't.randperm(-1)', 't.randperm(2.5)', 't.randperm(3, dtype=t.bool)', 't.randperm()',
    't.randperm(3, 4)', 't.tensor()', 't.tensor(1, 2)', "t.tensor([1, 2], dtype='float32')",
    't.tensor([1,2], device=3)', 't.tensor([1,2], requires_grad=1)', 't.tensor([1,2], foo=1)',
    "t.tensor('a')", 't.tensor([None])', 't.tensor([1, None])', 't.tensor([[1, 2], None])',
    't.tensor({1: 2})', 't.tensor([1, [2]])', 't.tensor([[1], 2])',
    't.tensor([[1, 2], [3, 4, 5]])', 't.tensor([[[1]], [[2, 3]]])', 't.tensor([1, 2], t.float32)',
    't.tensor([1], requires_grad=True)', 't.as_tensor([1,2], dtype=3)', 't.as_tensor(None)',
    "t.as_tensor([1, 'a'])", 't.as_tensor()', 't.as_tensor([1], requires_grad=True)',
    't.ones(2).new_empty(-1)', 't.ones(2).new_full((-1,), 1)', 't.ones(2).new_zeros(2.5)',
    't.ones(2).new_zeros((2, 2.5))', 't.ones(2).new_zeros(size=3)', 't.ones(2).new_full(2, 1)',
    't.ones(2).new_zeros()', 't.ones(2).new_full((2,))', 't.ones(2).new_zeros(2, dtype=3)',
    't.ones(2).new_zeros(2, foo=1)', "t.ones(2).new_ones(2, 'a')",
    't.ones(2).new_empty(size=(2,), x=1)',
    't.ones(2).new_zeros(2, dtype=t.int64, requires_grad=True)',
]

# Calls torch accepts, which must keep working (the quick path and the parser's).
GOOD = [
    't.zeros(2, 3)', 't.zeros((2, 3))', 't.zeros([2, 3])', 't.zeros(t.Size([2, 3]))',
    't.zeros(())', 't.zeros([])', 't.zeros(size=(2,))', 't.zeros(size=[2, 1])',
    't.zeros(t.tensor(2))', 't.zeros((t.tensor(2), 3))', 't.zeros(2, t.tensor(3))',
    't.zeros(np.int64(2))', 't.zeros(2, True)', 't.zeros((2, True))', 't.zeros(2, t.tensor([3]))',
    't.zeros(t.tensor([2]))', 't.zeros(np.array(2))', 't.zeros((np.int32(2),))', 't.zeros(0)',
    't.zeros(2, 0, 3)', 't.zeros(2, dtype=None)', 't.zeros(2, dtype=int)',
    't.zeros(2, dtype=float)', 't.zeros(2, dtype=bool)', 't.zeros(2, dtype=t.int32)',
    't.zeros(2, requires_grad=None)', 't.zeros(2, requires_grad=True)', 't.zeros(2, device=None)',
    "t.zeros(2, device='cpu')", "t.zeros(2, device=t.device('cpu'))", 't.zeros(2, layout=None)',
    't.zeros(2, pin_memory=False)', 't.zeros(2, out=None)', 't.zeros(2, 3, out=t.ones(1))',
    't.ones(2, out=t.empty(2, dtype=t.int64))', 't.ones((3,), dtype=int)',
    't.ones(2, 2, dtype=t.float64)', 't.empty(2, 3).shape', 't.empty((0,)).shape',
    't.empty(2, memory_format=None).shape', 't.full((2,), 1.5)', 't.full([2, 1], 3)',
    't.full((2,), True)', 't.full((2,), np.float32(1.5))', 't.full((2,), np.bool_(True))',
    't.full((2,), t.tensor(2))', 't.full((2,), t.tensor(2.5))', 't.full((2,), np.int64(3))',
    't.full(size=(2,), fill_value=4)', 't.full((2,), 2, dtype=t.float64)',
    't.full(t.Size([2]), 1.)', 't.full((t.tensor(2),), 1.)', 't.full((2,), 1., out=t.zeros(3))',
    't.full((), 7)', 't.full((2,), 1., requires_grad=True)', 't.eye(3)', 't.eye(2, 3)',
    't.eye(0)', 't.eye(3, dtype=int)', 't.eye(t.tensor(3))', 't.eye(np.int64(3))', 't.eye(n=3)',
    't.eye(3, m=2)', 't.eye(m=2, n=3)', 't.eye(3, np.int32(1))', 't.eye(t.tensor([3]))',
    't.eye(2, out=t.zeros(1))', 't.eye(2, 0)', 't.arange(5)', 't.arange(1, 4)',
    't.arange(0, 1, 0.25)', 't.arange(5.)', 't.arange(t.tensor(3))', 't.arange(np.float32(2.5))',
    't.arange(end=4)', 't.arange(start=1, end=4)', 't.arange(1, 10, step=3)',
    't.arange(0, 5, dtype=t.float64)', 't.arange(True)', 't.arange(4, out=t.zeros(4))',
    't.arange(t.tensor(1.5), 4)', 't.arange(0, 4, 2, requires_grad=True, dtype=t.float32)',
    't.linspace(0, 1, 5)', 't.linspace(t.tensor(1.), 3, 2)', 't.linspace(0, 1, t.tensor(3))',
    't.linspace(0, 1, np.int64(3))', 't.linspace(0, 1, steps=3)',
    't.linspace(start=0, end=1, steps=3)', 't.linspace(t.tensor(1., requires_grad=True), 3, 2)',
    't.linspace(0, 10, 5, dtype=t.int64)', 't.linspace(-2, 2, 0)', 't.linspace(3, 3, 1)',
    't.linspace(0, 1, 3, out=t.zeros(3))', 't.linspace(t.tensor(0.), t.tensor(1.), 4)',
    't.linspace(0, t.tensor(2), 3)', 't.logspace(0, 2, 3)', 't.logspace(0, 2, 3, base=2)',
    't.logspace(0, 2, 3, 2)', 't.logspace(0, 2, 3, dtype=t.int64)',
    't.logspace(0, 2, 3, base=t.tensor(2.))', 't.logspace(-1, 1, 7)', 't.logspace(0, 1, 1)',
    't.logspace(0, 1, 0)', 't.logspace(2.5, -3, 11, dtype=t.float64)',
    't.logspace(t.tensor(0.), t.tensor(3.), 4, 3.)', 't.logspace(0, 3, 4, dtype=t.int32)',
    't.logspace(0.1, 1.7, 9, base=1.5, dtype=t.float32)', 't.logspace(0, 2, 3, out=t.zeros(3))',
    't.logspace(0, 40, 5, base=10, dtype=t.int64)', 't.zeros_like(t.ones(2))',
    't.zeros_like(input=t.ones(2))', 't.ones_like(t.ones(2), dtype=int)',
    't.empty_like(t.ones(2, 3)).shape', 't.full_like(t.ones(2), 3)',
    't.full_like(t.ones(2), t.tensor(2.))', 't.full_like(t.ones(2), 7, dtype=t.int64)',
    't.zeros_like(t.ones(2), requires_grad=True)',
    't.ones_like(t.ones(2, dtype=t.int64), memory_format=None)',
    '(t.manual_seed(0), t.rand(2, 3))[1]', '(t.manual_seed(0), t.rand((2, 3)))[1]',
    '(t.manual_seed(0), t.randn(size=(3,)))[1]',
    '(t.manual_seed(0), t.randn(2, dtype=t.float64))[1]',
    't.rand(2, generator=t.Generator().manual_seed(1))',
    '(t.manual_seed(0), t.randn(3, generator=None))[1]', 't.rand(0)',
    't.randn(t.Size([2]), generator=t.Generator().manual_seed(2))',
    '(t.manual_seed(0), t.randint(5, (4,)))[1]', '(t.manual_seed(0), t.randint(2, 9, (4,)))[1]',
    '(t.manual_seed(0), t.randint(low=2, high=9, size=(4,)))[1]',
    '(t.manual_seed(0), t.randint(9, size=(2, 2)))[1]',
    't.randint(5, (3,), generator=t.Generator().manual_seed(3))',
    '(t.manual_seed(0), t.randint(5, (2,), dtype=t.float32))[1]',
    't.randint(t.tensor(5), (3,), generator=t.Generator().manual_seed(3))',
    '(t.manual_seed(0), t.rand(2, out=t.zeros(3)))[1]',
    '(t.manual_seed(0), t.randn(2, out=t.zeros(2, dtype=t.float64)))[1]',
    '(t.manual_seed(0), t.rand_like(t.ones(2)))[1]',
    '(t.manual_seed(0), t.randn_like(t.ones(2), dtype=t.float64))[1]',
    't.rand_like(t.ones(3), generator=t.Generator().manual_seed(4))',
    '(t.manual_seed(0), t.randint_like(t.ones(3), 5))[1]',
    '(t.manual_seed(0), t.randint_like(t.ones(3), 2, 9))[1]',
    '(t.manual_seed(0), t.randint_like(t.ones(3), high=7))[1]',
    '(t.manual_seed(0), t.randperm(5))[1]',
    't.randperm(6, generator=t.Generator().manual_seed(5))',
    '(t.manual_seed(0), t.randperm(4, dtype=t.float32))[1]', 't.randperm(0)', 't.tensor([1, 2])',
    't.tensor(data=[1])', 't.tensor([[1., 2.], [3., 4.]])', 't.tensor(3)',
    't.tensor([True, False])', 't.tensor([1, 2], dtype=float)',
    't.tensor([1, 2], dtype=t.float64)', 't.tensor([], dtype=t.int64)', 't.tensor([[], []])',
    't.tensor([1., 2.], requires_grad=True)', 't.tensor(np.array([1, 2]))',
    't.tensor([np.float32(1.5)])', "t.tensor([1, 2], device='cpu')", 't.as_tensor([1, 2])',
    't.as_tensor([1., 2.], dtype=t.float64)', 't.as_tensor(data=[3])',
    't.as_tensor(t.ones(2), dtype=int)', 't.ones(2).new_zeros(3)', 't.ones(2).new_zeros((2, 3))',
    't.ones(2).new_zeros(size=(2,))', 't.ones(2, dtype=t.int64).new_ones(2)',
    't.ones(2).new_empty(2, 3).shape', 't.ones(2).new_full((2,), 3)',
    't.ones(2).new_full(size=(2,), fill_value=5)', 't.ones(2).new_zeros(2, dtype=t.int64)',
    't.ones(2).new_zeros(2, requires_grad=True)', "t.ones(2).new_ones(2, 2, device='cpu')",
    't.ones(2, dtype=t.float64).new_full((1,), t.tensor(2))',
    '(t.manual_seed(0), t.randint(5, [4]))[1]', '(t.manual_seed(0), t.randint(-3, 5, (2, 2)))[1]',
    '(t.manual_seed(0), t.randperm(7))[1]',
    '(t.manual_seed(0), t.randint(5, (4,), dtype=t.int32))[1]',
]

# A fill value the dtype cannot hold (torch's checked conversion; a negative int wraps
# around into uint8) and the values that fit.
FILL_VALUES = [
    "t.full((2,), 300, dtype=t.uint8)", "t.full((2,), -256, dtype=t.uint8)",
    "t.full((2,), -255, dtype=t.uint8)", "t.full((2,), -1, dtype=t.uint8)",
    "t.full((2,), -1.0, dtype=t.uint8)", "t.full((2,), 255.9, dtype=t.uint8)",
    "t.full((2,), -0.5, dtype=t.uint8)", "t.full((2,), 1e10, dtype=t.int32)",
    "t.full((2,), 2**31, dtype=t.int32)", "t.full((2,), float('nan'), dtype=t.int64)",
    "t.full((2,), float('inf'), dtype=t.int64)", "t.full((2,), 1e39, dtype=t.float32)",
    "t.full((2,), 3.5e38, dtype=t.float32)", "t.full((2,), 1e300, dtype=t.float16)",
    "t.full((2,), 70000, dtype=t.float16)", "t.full((2,), float('nan'), dtype=t.float16)",
    "t.full((2,), float('inf'))", "t.full((2,), 2**63)", "t.full((2,), 2**64)",
    "t.full((2,), -2**63)", "t.full((2,), 2**63 + 5, dtype=t.float32)",
    "t.full((2,), True, dtype=t.uint8)", "t.full((2,), 1.5, dtype=t.bool)",
    "t.full_like(t.ones(2, dtype=t.uint8), 300)", "t.full_like(t.ones(2, dtype=t.uint8), -3)",
    "t.ones(2, dtype=t.uint8).new_full((2,), 300)", "t.ones(2, dtype=t.int32).new_full((1,), 7.9)",
    # tensor()'s data cast to the dtype, item by item, checked the same way
    "t.tensor([300], dtype=t.uint8)", "t.tensor([-1, 2], dtype=t.uint8)",
    "t.tensor([-256], dtype=t.uint8)", "t.tensor([-1.0], dtype=t.uint8)",
    "t.tensor([[1, 2**40]], dtype=t.int32)", "t.tensor([1.5, 1e10], dtype=t.int32)",
    "t.tensor([float('nan')], dtype=t.int64)", "t.tensor([1.7, -2.5], dtype=t.int64)",
    "t.tensor([1.7, 0.0], dtype=t.bool)", "t.tensor(2.9, dtype=t.uint8)",
    "t.tensor(1e300, dtype=t.float16)", "t.tensor(1e40, dtype=t.float32)", "t.tensor(2**63)",
    "t.tensor([2**64, 1])", "t.tensor(b'ab')", "t.tensor([True, False], dtype=t.uint8)",
]

# Where torch's message lists its signatures ("received an invalid combination of
# arguments"), the whole message must be torch's, list included.
INVALID_COMBINATIONS = [
    "t.eye(3, None)", "t.eye(3, 2.5)", "t.eye((3,), [1, 2.])", "t.eye(3, t.float32)",
    "t.eye(2.5, m=None, dtype=2)", "t.eye(n=2.5, m=None)", "t.linspace(0, 1)",
    "t.linspace(0, 1, 2.5)", "t.linspace(0, 1, 2, dtype=3)", "t.logspace(0, 2)",
    "t.logspace(0, 2, 3, 'a')", "t.arange(0, None)", "t.arange(0, 5, None)",
    "t.randint(5, (2,), (3,))", "t.randint(high=5)", "t.rand(2, generator=3)",
    "t.randint_like(t.ones(2))", "t.rand_like(t.ones(2), 3)",
    "t.eye(3, 4, dtype=t.float32, requires_grad='a')",
]

# Bad calls with out=: torch's error, and out left as it was.
OUT_CALLS = [
    "t.zeros(2, -3, out=out)", "t.ones((-2,), out=out)", "t.empty(2, -2, out=out)",
    "t.full((-1,), 1., out=out)", "t.rand(-1, out=out)", "t.randn(2, -2, out=out)",
    "t.randint(3, (-1,), out=out)", "t.randperm(-1, out=out)", "t.linspace(0, 1, -1, out=out)",
    "t.eye(2, -1, out=out)", "t.arange(0, 5, 0, out=out)", "t.zeros(2.5, out=out)",
    "t.full((2,), None, out=out)", "t.eye(3, dtype=t.float64, out=out)",
    "t.rand(2, out=out.long())",
]

# A method's message leaves self out ("got (NoneType)"), as runtime/arguments.py words it
# for a method.
METHOD_CALLS = ["t.empty((2,), dtype=t.float32).fill_(None)"]


@pytest.mark.parametrize("code", PROBE)
def test_probe_case(code: str) -> None:
    _check_same(code)


@pytest.mark.parametrize("code", BAD)
def test_bad_call(code: str) -> None:
    _check_same(code)


@pytest.mark.parametrize("code", GOOD)
def test_good_call(code: str) -> None:
    _check_same(code)


@pytest.mark.parametrize("code", FILL_VALUES)
def test_fill_value_conversion(code: str) -> None:
    _check_same(code)


def _message(library: Any, code: str) -> str:
    with pytest.raises(Exception) as raised:
        eval(code, {"t": library, "np": np})
    return f"{type(raised.value).__name__}: {raised.value}"


@pytest.mark.parametrize("code", INVALID_COMBINATIONS)
def test_invalid_combination_lists_torchs_signatures(code: str) -> None:
    expected = _message(torch, code)
    assert "received an invalid combination of arguments" in expected
    assert _message(runtime, code) == expected


@pytest.mark.parametrize("code", OUT_CALLS)
def test_bad_out_call_leaves_out_unchanged(code: str) -> None:
    """(torch itself resizes out before some of these errors, to a negative size.)"""
    messages = []
    for library in (torch, runtime):
        out = library.arange(3.0)
        with pytest.raises(Exception) as raised:
            eval(code, {"t": library, "out": out})
        messages.append(f"{type(raised.value).__name__}: {raised.value}")
    assert messages[1] == messages[0]
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.0, 2.0])
    assert out.shape == (3,)


@pytest.mark.parametrize("code", METHOD_CALLS)
def test_method_message_leaves_self_out(code: str) -> None:
    _check_same(code)


def test_logspace_is_exported() -> None:
    assert runtime.logspace is runtime.factories.logspace
    assert "logspace" in runtime.factories.__all__
