"""The lean-eager shortcuts (docs/performance.md, "Levers used") give what the plain path
gives: manual.conj's per-type cache, mm's float path, the direct ones of backward(),
the sure-Tensor array reads of the generated wrappers, F.linear's usual call, and the
saved strides of a matrix, each checked against torch or the path it skips."""

from __future__ import annotations

import inspect
from decimal import Decimal
from fractions import Fraction
from numbers import Number

import ml_dtypes
import numpy as np
import pytest
import torch

import runtime
from generated import ops
from runtime import kernels, manual
from runtime.namespaces import array_ops


def _conj_by_the_abc(value):
    """manual.conj as it was written before its cache: the Number ABC asked every call."""
    if isinstance(value, Number):
        return value.conjugate() if isinstance(value, complex) else value
    return array_ops.conj(value) if manual._is_complex(value) else value


VALUES = [1.5, 2, True, 1 + 2j, np.float32(2.5), np.complex64(1 + 1j), np.complex128(1 - 1j),
          np.int64(3), Fraction(1, 3), Decimal("1.5"), np.ones((2, 3), np.float32),
          np.array([1 + 2j, 3 - 1j], np.complex64), np.ones(2, ml_dtypes.bfloat16),
          np.array(2.0), np.array(1j)]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_conj_with_its_type_cache_is_conj_by_the_abc(value) -> None:
    for _ in range(2):  # the first call fills the cache, the second reads it
        got, expected = manual.conj(array_ops, value), _conj_by_the_abc(value)
        assert type(got) is type(expected)
        assert np.array_equal(np.asarray(got), np.asarray(expected))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "bfloat16"])
def test_complex_dtype_by_kind_first(dtype: str) -> None:
    complex_ = dtype.startswith("complex")
    assert manual._complex_dtype(np.dtype(getattr(ml_dtypes, dtype, dtype))) is complex_
    assert manual._complex_dtype(getattr(runtime, dtype)) is complex_
    assert manual._complex_dtype(getattr(torch, dtype)) is complex_


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int64, np.int32, np.uint8, np.complex64, np.bool_])
@pytest.mark.parametrize(("rows", "inner", "columns"), [(3, 4, 5), (0, 3, 2), (2, 0, 3)])
def test_mm_of_each_dtype_as_before(dtype: type, rows: int, inner: int, columns: int) -> None:
    """The float path and _mm_of_other_dtypes give numpy's product (bfloat16: in float32,
    rounded once) and torch's errors."""
    rng = np.random.default_rng(rows + 7 * inner + 31 * columns)
    left = (rng.standard_normal((rows, inner)) * 3).astype(dtype)
    right = (rng.standard_normal((inner, columns)) * 3).astype(dtype)
    if dtype is np.bool_ and left.size and right.size:
        with pytest.raises(NotImplementedError, match="addmm_impl_cpu_"):
            kernels.mm(left, right)
        return
    product = kernels.mm(left, right)
    if dtype is ml_dtypes.bfloat16:
        expected = np.matmul(left.astype(np.float32), right.astype(np.float32)).astype(dtype)
    else:
        expected = np.matmul(left, right)
    assert product.dtype == expected.dtype
    assert product.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("left", "right"), [((2, 3), (4, 5)), ((2, 3), (3,)), ((3,), (3, 2))])
def test_mm_errors_are_torchs(left: tuple, right: tuple) -> None:
    def message(lib, a, b):
        with pytest.raises(RuntimeError) as error:
            lib.mm(lib.ones(a), lib.ones(b))
        return str(error.value)
    assert message(runtime, left, right) == message(torch, left, right)


def test_mm_dtype_mismatch_is_torchs_error() -> None:
    messages = []
    for lib in (runtime, torch):
        with pytest.raises(RuntimeError) as error:
            lib.mm(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def _tiny_loss(lib, requires_grad=True):
    weight = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=requires_grad)
    bias = lib.tensor([0.1, -0.2], requires_grad=requires_grad)
    x = lib.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 0.0]])
    out = lib.nn.functional.linear(x, weight, bias)
    return (out.relu() - 1.0).pow(2).sum(), weight, bias


def test_backward_of_a_scalar_loss_with_direct_ones_is_torchs() -> None:
    ours, theirs = _tiny_loss(runtime), _tiny_loss(torch)
    ours[0].backward()
    theirs[0].backward()
    for mine, expected in zip(ours[1:], theirs[1:], strict=True):
        assert mine.grad.dtype == runtime.float32
        np.testing.assert_array_equal(mine.grad.numpy(), expected.grad.numpy())


def test_backward_under_a_function_mode_hears_what_torchs_hears() -> None:
    def heard(lib):
        log = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(getattr(func, "__name__", str(func)))
                return func(*args, **(kwargs or {}))

        loss, weight, _ = _tiny_loss(lib)
        with Log():
            loss.backward()
        return log, weight.grad.tolist()
    assert heard(runtime) == heard(torch)


def test_wrappers_read_a_sure_tensor_as_its_array() -> None:
    """addmm's Tensors are never numbers past the guard; mul's may be (`torch.mul(2, x)`)."""
    addmm, mul = inspect.getsource(ops.addmm), inspect.getsource(ops.mul_Tensor)
    assert "kernels.addmm(self_._data, mat1._data, mat2._data" in addmm
    assert "grad_fn._saved_mat1_sym_sizes = mat1._data.shape" in addmm
    assert ("(self_._data if isinstance(self_, Tensor) else self_), "
            "(other._data if isinstance(other, Tensor) else other)") in mul
    assert runtime.mul(2, runtime.ones(2)).tolist() == torch.mul(2, torch.ones(2)).tolist()
    for lib in (runtime, torch):
        with pytest.raises(TypeError, match="must be Tensor"):
            lib.addmm(lib.ones(2), 2, lib.ones(2, 2))


@pytest.mark.parametrize("case", ["linear", "weight 0-d", "input 0-d", "3-d input", "no bias"])
def test_linear_as_torch(case: str) -> None:
    def run(lib):
        x = lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
        weight = lib.nn.Parameter(lib.tensor(np.ones((4, 3), np.float32) / 3))
        bias = lib.tensor(np.arange(4, dtype=np.float32))
        if case == "weight 0-d":
            weight = lib.tensor(2.0)
        if case == "input 0-d":
            x = lib.tensor(2.0)
        if case == "3-d input":
            x = x.reshape(1, 2, 3)
        try:
            out = lib.nn.functional.linear(x, weight, None if case == "no bias" else bias)
        except RuntimeError as error:
            return str(error)
        return out.detach().numpy().tolist(), type(out.grad_fn).__name__
    assert run(runtime) == run(torch)


@pytest.mark.parametrize("transposed", [False, True])
def test_saved_strides_of_a_matrix_are_torchs(transposed: bool) -> None:
    def saved(lib):
        mat2 = lib.ones(4, 3, requires_grad=True)
        mat2 = mat2.t() if transposed else mat2.reshape(3, 4)
        out = lib.addmm(lib.ones(4), lib.ones(2, 3, requires_grad=True), mat2)
        return tuple(out.grad_fn._saved_mat2_sym_strides), tuple(
            out.grad_fn._saved_mat1_sym_strides)
    assert saved(runtime) == saved(torch)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_add_of_a_half_with_alpha_past_its_range_is_silent_inf(dtype: str) -> None:
    """(Met while checking _arithmetic: numpy's overflow warning leaked from the cast.)"""
    def run(lib):
        return lib.ones(2, dtype=getattr(lib, dtype)).add(1e38, alpha=2).float().tolist()
    assert run(runtime) == run(torch)
