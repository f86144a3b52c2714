"""Questions about tensors whose answers have no gradient: isnan, isclose, equal, ...

Their results are bool tensors or Python values, never recorded in a graph and never
differentiable, so they are plain functions on the arrays rather than spec entries.
`PredicateMethods` holds their Tensor methods, which runtime/methods.py sets on Tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes
from runtime import modes as _modes
from runtime._tensor import Tensor

__all__ = ["allclose", "equal", "is_floating_point", "is_tensor", "isclose", "isfinite",
           "isinf", "isnan", "numel"]


def _check_tensor(function: str, name: str, position: int, value: Any) -> None:
    """PyTorch's error for a non-tensor argument where a Tensor is expected."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{function}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _bool_tensor(array: Any) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=np.bool_), None)


def is_tensor(obj: Any) -> bool:
    """Whether `obj` is a Tensor (a Parameter is one too)."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of `input`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(numel, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("numel", "input", 1, input)
    return input._data.size


def is_floating_point(input: Tensor) -> bool:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_floating_point, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_floating_point", "input", 1, input)
    return input.dtype.is_floating_point


def isnan(input: Tensor) -> Tensor:
    """Where `input` is NaN (never, for integers and bools)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isnan, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isnan", "input", 1, input)
    return _bool_tensor(np.isnan(input._data) if input.dtype.is_floating_point
                        else np.zeros(input._data.shape, np.bool_))


def isinf(input: Tensor) -> Tensor:
    """Where `input` is +inf or -inf."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isinf, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isinf", "input", 1, input)
    return _bool_tensor(np.isinf(input._data) if input.dtype.is_floating_point
                        else np.zeros(input._data.shape, np.bool_))


def isfinite(input: Tensor) -> Tensor:
    """Where `input` is neither infinite nor NaN."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isfinite, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isfinite", "input", 1, input)
    return _bool_tensor(np.isfinite(input._data) if input.dtype.is_floating_point
                        else np.ones(input._data.shape, np.bool_))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Where |input - other| <= atol + rtol * |other|, elementwise (broadcast), as PyTorch
    computes it: in the tensors' dtype (the default float dtype for integers and bools),
    equal infinities close, NaN close to NaN only with `equal_nan`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isclose, (input, other, rtol, atol, equal_nan), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isclose", "input", 1, input)
    _check_tensor("isclose", "other", 2, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_scalar_name(input)} did not match {_scalar_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    a, b = input._data, other._data
    close = a == b
    if equal_nan and input.dtype.is_floating_point:
        close |= np.isnan(a) & np.isnan(b)
    if rtol == 0 and atol == 0:
        return _bool_tensor(close)
    if not input.dtype.is_floating_point:
        a = a.astype(dtypes.get_default_dtype().numpy)
        b = b.astype(a.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        allowed = a.dtype.type(atol) + np.abs(a.dtype.type(rtol) * b)
        actual = np.abs(a - b)
        close |= np.isfinite(actual) & (actual <= allowed)
    return _bool_tensor(close)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether isclose holds everywhere."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(allclose, (input, other, rtol, atol, equal_nan), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("allclose", "input", 1, input)
    _check_tensor("allclose", "other", 2, other)
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape and equal elements (NaN equals nothing);
    the dtypes may differ."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(equal, (input, other), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("equal", "input", 1, input)
    _check_tensor("equal", "other", 2, other)
    if input._data.shape != other._data.shape:
        return False
    return bool(np.array_equal(input._data, other._data))


def _scalar_name(tensor: Tensor) -> str:
    """`Float`, `Long`: PyTorch's name for a dtype in messages."""
    return tensor.dtype._type_string.removeprefix("torch.").removesuffix("Tensor")


class PredicateMethods:
    """Tensor methods for the functions above."""

    __slots__ = ()

    def isnan(self) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.isnan, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isnan(self)

    def isinf(self) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.isinf, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isinf(self)

    def isfinite(self) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.isfinite, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isfinite(self)

    def isclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.isclose, (self, other, rtol, atol, equal_nan),
                {})
            if heard is not _modes.PASS:
                return heard
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.allclose, (self, other, rtol, atol, equal_nan),
                {})
            if heard is not _modes.PASS:
                return heard
        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Tensor) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(PredicateMethods.equal, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return equal(self, other)
