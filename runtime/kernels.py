"""Forward kernels: one function per op overload, on numpy arrays (gradgen's "ATen").

A kernel knows numpy and nothing else (the random ones also runtime.sampling, PyTorch's
samplers on numpy arrays, and lerp and addcmul runtime.cpu_math's fused multiply-add):
no Tensor, no graph, no grad mode. Arguments that
the schema types as Tensor arrive as numpy arrays, or as Python numbers where a number
stands in for a tensor (`x * 2`). Results follow PyTorch's type promotion: a Python
number or a 0-dim array does not widen a dimensioned array of the same category.
A numpy dtype of kind "V" is bfloat16 (the ml_dtypes package's, a floating type):
kind tests read `kind in "fV"` for "floating". Kernels named after ops shadow builtins
(`sum`, `max`, `abs`): other code here says `builtins.max`.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import operator
import warnings
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
from numpy import ndarray  # (on the hottest paths: a global, not np's attribute)

from runtime import blas, cpu_math, sampling, sampling_serial
from runtime._warn import warn_at_caller

_DEFAULT_FLOAT = np.float32
_DEFAULT_COMPLEX = np.dtype(np.complex64)  # the complex dtype of the default float's parts
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
_HALVES = (np.dtype(np.float16), _BFLOAT16)  # computed in float32 (their opmath type)
_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)
_WIDE_FLOATS = frozenset((_FLOAT32, _FLOAT64))  # a Python number needs no care with these
_COMPLEX32 = np.dtype(ml_dtypes.complex32)
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # "V": bfloat16
_COMPLEX_OF = {np.dtype(np.float16): np.dtype(ml_dtypes.complex32),
               np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(ml_dtypes.bfloat16): np.dtype(np.complex64)}  # (torch's choice too)


# Floating-point warnings (0 * inf, 1 / 0, overflow) are silenced in the kernels, as torch
# never warns about them: around one ufunc call (`quietly`, `_arithmetic`), or around a
# whole kernel (`@silent`); a test runs every op of the spec with infinities, NaN and huge
# values and checks that none warns. `np.errstate` costs about 1 µs a call, as much as a
# small op; on numpy 2 the state it sets is one context variable, which these set directly
# (numpy 1.x has no such variable: there they go through np.errstate and np.seterr).
try:
    from numpy._core.umath import _extobj_contextvar, _make_extobj

    _QUIET = _make_extobj(all="ignore")
    _set_state, _reset_state = _extobj_contextvar.set, _extobj_contextvar.reset

    def quietly(function: Any, *args: Any) -> Any:
        """`function(*args)` with numpy's floating-point warnings off."""
        token = _set_state(_QUIET)
        try:
            return function(*args)
        finally:
            _reset_state(token)
except ImportError:  # numpy 1.x
    def _set_state(_: Any) -> dict:
        return np.seterr(all="ignore")

    def _reset_state(previous: dict) -> None:
        np.seterr(**previous)

    _QUIET = None

    def quietly(function: Any, *args: Any) -> Any:
        """`function(*args)` with numpy's floating-point warnings off."""
        with np.errstate(all="ignore"):
            return function(*args)


class silenced:  # noqa: N801 - used like np.errstate
    """`with silenced():` numpy's floating-point warnings off for a whole block."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _set_state(_QUIET)

    def __exit__(self, *exc_info: object) -> None:
        _reset_state(self._token)


def silent(kernel: Any) -> Any:
    """`kernel`, run with numpy's floating-point warnings off (and the caller's state back
    after): for a kernel whose arithmetic is more than one ufunc call that `quietly` could
    wrap. tests/test_kernels.py runs every op of the spec with infinities, NaN and
    overflowing values and checks that none warns, as torch's never do."""
    @functools.wraps(kernel)
    def run(*args: Any, **kwargs: Any) -> Any:
        token = _set_state(_QUIET)
        try:
            return kernel(*args, **kwargs)
        finally:
            _reset_state(token)

    return run


def default_float(dtype: np.dtype) -> None:
    """Set the dtype integers promote to in float ops (torch.set_default_dtype)."""
    global _DEFAULT_FLOAT, _DEFAULT_COMPLEX
    _DEFAULT_FLOAT = dtype
    _DEFAULT_COMPLEX = _COMPLEX_OF[np.dtype(dtype)]


# The numpy values that have a dtype, for isinstance: a tuple made once (`np.ndarray |
# np.generic` written in a call builds a union at every call, which costs as much again).
_NUMPY_VALUES = (np.ndarray, np.generic)


def _category(value: Any) -> int:
    if isinstance(value, _NUMPY_VALUES):
        return _CATEGORY[value.dtype.kind]
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return 1
    return 3 if isinstance(value, builtins.complex) else 2


def complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts are `dtype` (float32 -> complex64); torch's complex32
    (float16 parts) has no numpy type, and is refused."""
    result = _COMPLEX_OF.get(dtype)
    if result is None:
        raise TypeError("gradgen has no complex32 arithmetic: numpy has no complex type with "
                        "float16 parts. Use torch.complex64 or torch.complex128 instead.")
    return result


def _combine(higher: np.dtype, lower: np.dtype) -> np.dtype:
    """torch's combine_categories: the result of a higher tier (dimensioned arrays over
    0-dim ones over Python numbers) unless the lower one is of a higher category; a float
    meeting a lower tier's complex keeps its precision (float64[3] * 1j is complex128)."""
    if higher.kind == "c":
        return higher
    if lower.kind == "c":
        return complex_of(higher) if higher.kind in "fV" else lower
    if higher.kind in "fV":
        return higher
    if higher.kind == "b" or lower.kind in "fV":
        return promote_types([higher, lower])
    return higher


def sum_to(data: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast array back to `shape` (PyTorch's at::sum_to)."""
    lead = data.ndim - len(shape)
    if lead == 1 and data.shape[1:] == shape and data.dtype.kind in "fV" and data.ndim == 2:
        # A bias's gradient, summed over the batch: a product with a ones vector runs in
        # BLAS, several times faster than numpy's reduction along the first axis.
        return quietly(np.matmul, _ones_vector(data.shape[0], data.dtype), data)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and data.shape[lead + i] != 1)
    summed = data.sum(axis=dims, keepdims=True) if dims else data
    return summed.reshape(shape)


# The ones vectors of sum_to, made once per length and dtype, read-only (np.ones costs
# more than the product at a small batch). Bounded: a program of ever new batch sizes
# only makes them afresh.
_ONES: dict[tuple[int, np.dtype], np.ndarray] = {}


def _ones_vector(length: int, dtype: np.dtype) -> np.ndarray:
    ones = _ONES.get((length, dtype))
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        ones = _ONES[length, dtype] = np.ones(length, dtype)
        ones.flags.writeable = False
    return ones


def promote_types(dtypes: list[np.dtype]) -> np.dtype:
    """torch.promote_types: a higher category wins whatever the size (float32 with int64 is
    float32, where numpy says float64); within a category, the wider type."""
    result = dtypes[0]
    for dtype in dtypes[1:]:
        if dtype == result:
            continue
        if result.kind == "c" and dtype.kind in "fV" or result.kind in "fV" and dtype.kind == "c":
            # a float meets a complex: the complex of the wider parts (float64 with complex64
            # is complex128)
            result = np.promote_types(result, dtype)
        elif _CATEGORY[dtype.kind] > _CATEGORY[result.kind]:
            result = dtype
        elif _CATEGORY[dtype.kind] == _CATEGORY[result.kind]:
            result = np.promote_types(result, dtype)
    return result


def result_type(*operands: Any) -> np.dtype:
    """PyTorch's promotion: dimensioned arrays, then 0-dim arrays, then Python numbers.

    A lower tier only matters when it is of a higher category (bool < int < float):
    float32[3] + float64 0-dim -> float32, int64[3] + 2.5 -> float32 (the default).
    """
    first = operands[0]
    if type(first) is np.ndarray and first.ndim:
        # The common case, decided without building tiers: a dimensioned array with
        # operands of its own dtype, Python numbers of no higher category, or None.
        dtype = first.dtype
        kind = dtype.kind
        for value in operands[1:]:
            kind_of_value = type(value)
            if kind_of_value is np.ndarray:
                if value.dtype != dtype:
                    break
            elif kind_of_value is float:
                if kind not in "fV":
                    break
            elif kind_of_value is int:
                if kind == "b":
                    break
            elif value is not None and kind_of_value is not bool:
                break
        else:
            return dtype
    return _result_type_by_tiers(operands)


def _result_type_by_tiers(operands: tuple) -> np.dtype:
    """result_type's general case: dimensioned arrays, 0-dim arrays, Python numbers, each
    tier promoted within, then combined as torch's combine_categories does."""
    tiers: list[list[Any]] = [[], [], []]
    for value in operands:
        if isinstance(value, np.ndarray):
            tiers[0 if value.ndim else 1].append(value.dtype)
        elif value is not None:
            tiers[2].append(value)
    results: list[np.dtype | None] = [None, None, None]
    for tier, values in enumerate(tiers):
        if not values:
            continue
        if tier < 2:
            results[tier] = promote_types(values)
        else:
            category = builtins.max(_category(v) for v in values)
            results[tier] = np.dtype([np.bool_, np.int64, _DEFAULT_FLOAT, _DEFAULT_COMPLEX]
                                     [category])
    result: np.dtype | None = None
    for candidate in reversed(results):
        if candidate is not None:
            result = candidate if result is None else _combine(candidate, result)
    return result if result is not None else np.dtype(_DEFAULT_FLOAT)


def _float_type(*operands: Any) -> np.dtype:
    """The result dtype of an op that always gives floats (exp, div, ...)."""
    dtype = result_type(*operands)
    return dtype if dtype.kind in "fcV" else np.dtype(_DEFAULT_FLOAT)


def _as(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    token = _set_state(_QUIET)  # (a number beyond a float dtype is an infinity, silently)
    try:
        return dtype.type(value)
    except OverflowError:  # a Python int the integer type cannot hold wraps, as in torch
        return np.array(value, np.int64).astype(dtype)[()]
    finally:
        _reset_state(token)


# torch's C++ names of the dtypes, as its overflow message prints them.
_CPP_TYPES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
              "int32": "int", "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
              "uint64": "uint64_t"}
_RANGES: dict[np.dtype, tuple[Any, Any]] = {}  # dtype -> (lowest, highest), asked once
_F16_MAX = 65504.0  # float16's largest: a number within it fits every floating dtype


def dtype_range(dtype: np.dtype) -> tuple[Any, Any]:
    """The lowest and highest number a float or integer dtype holds (ints as Python ints)."""
    found = _RANGES.get(dtype)
    if found is None:
        if dtype.kind in "fV":
            highest = builtins.float(ml_dtypes.finfo(dtype).max)
            found = (-highest, highest)
        else:
            info = np.iinfo(dtype)
            found = (int(info.min), int(info.max))
        _RANGES[dtype] = found
    return found


def check_fits(value: Any, dtype: np.dtype) -> None:
    """torch's check where a Scalar argument (an alpha, a fill value, a bound) is converted to
    the dtype an op computes in: a finite number the dtype cannot hold is refused, as is NaN or
    an infinity for an integer dtype; a negative integer may wrap into an unsigned dtype down
    to -max (-1 is 255 in uint8); a bool dtype takes anything."""
    kind = type(value)
    if kind is float and -_F16_MAX <= value <= _F16_MAX and dtype.kind == "f" or \
            kind is int and -127 <= value <= 127:
        return  # (the usual calls: a small int fits every dtype, as int8 or wrapping)
    value = _plain_number(value)
    if value is None or dtype.kind not in "fViu":
        return
    lowest, highest = dtype_range(dtype)
    if dtype.kind in "fV":
        fits = -highest <= value <= highest or not math.isfinite(value)
    elif type(value) is int:
        fits = (-value if dtype.kind == "u" and value < 0 else value) <= highest and \
            (value >= lowest or dtype.kind == "u")
    else:
        fits = builtins.float(lowest) <= value <= builtins.float(highest)  # (NaN fails too)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_CPP_TYPES[dtype.name]} "
                           "without overflow")


def _plain_number(value: Any) -> int | float | None:
    """A Scalar argument as the Python int or float torch's Scalar holds (None for a bool, a
    complex number or anything else check_fits leaves alone)."""
    kind = type(value)
    if kind is not float and kind is not int:
        if not isinstance(value, np.integer | np.floating) and not (
                type(value) is ndarray and value.ndim == 0 and value.dtype.kind in "iuf"):
            return None
        value = value.item()
    if type(value) is int and not -(1 << 63) <= value < (1 << 64):
        raise OverflowError("int too big to convert")  # (torch's Scalar holds 64 bits)
    return value


def checked(value: Any, dtype: Any) -> Any:
    """`value`, once check_fits has passed it for `dtype` (a numpy dtype or scalar type)."""
    check_fits(value, np.dtype(dtype))
    return value


def _check_fits_all(dtype: np.dtype, *values: Any) -> None:
    for value in values:
        check_fits(value, dtype)


def _check_alpha(alpha: Any, dtype: np.dtype) -> None:
    """add's and sub's alpha, as torch checks it against the result dtype (alpha itself
    takes no part in the promotion)."""
    if _is_bool(alpha):
        if dtype.kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        return
    if dtype.kind in "biu" and isinstance(alpha, float | np.floating):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    check_fits(alpha, dtype)


def _binary(a: Any, b: Any, dtype: np.dtype | None = None) -> tuple[Any, Any]:
    """a and b in their result dtype; torch's error where their shapes do not broadcast."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.shape != b.shape:
        broadcast_shapes(a.shape, b.shape)
    dtype = result_type(a, b) if dtype is None else dtype
    if type(b) is float and dtype.kind in "fV" and type(a) is np.ndarray:
        # A Python float is "weak" in numpy too: `a * 0.5` keeps a's dtype, no cast needed.
        return _as(a, dtype), b
    return _as(a, dtype), _as(b, dtype)


def _array(value: Any, dtype: np.dtype) -> np.ndarray:
    if type(value) is np.ndarray and value.dtype == dtype:
        return value
    return np.asarray(value, dtype=dtype)


# PyTorch's names of the scalar types, as its messages spell them.
_TYPE_NAMES = {"float64": "Double", "float32": "Float", "int64": "Long", "int32": "Int",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble",
               "bool": "Bool", "int16": "Short", "int8": "Char"}


def check_inplace_result(target: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    """PyTorch's checks before an in-place op writes a result of `dtype` and `shape`
    into `target`: the shape must broadcast to target's, then (checked second, as torch
    does: `int_tensor.div_(wider)` names the shape) the type must cast within its kind."""
    if shape != target.shape:
        try:
            broadcast = np.broadcast_shapes(shape, target.shape)
        except ValueError:
            broadcast = None
        if broadcast != target.shape:
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                               f"broadcast shape {list(broadcast) if broadcast else '(none)'}")
    if not np.can_cast(dtype, target.dtype, casting="same_kind"):
        raise RuntimeError(f"result type {_TYPE_NAMES[dtype.name]} can't be cast to the "
                           f"desired output type {_TYPE_NAMES[target.dtype.name]}")


def _inplace(ufunc: np.ufunc, self: np.ndarray, other: Any, dtype: np.dtype) -> None:
    """`self = ufunc(self, other)` computed in `dtype`, written into self's storage."""
    if dtype == self.dtype and (type(other) is not np.ndarray or other.shape == self.shape):
        quietly(ufunc, self, _as(other, dtype), self)  # the common case: nothing to check
        return
    shape = broadcast_shapes(self.shape, np.shape(other)) if np.ndim(other) else self.shape
    check_inplace_result(self, dtype, shape)
    if dtype == self.dtype:
        quietly(ufunc, self, _as(other, dtype), self)
    else:
        np.copyto(self, quietly(ufunc, _as(self, dtype), _as(other, dtype)), casting="unsafe")


# -- elementwise ------------------------------------------------------------------------------

# A Python int no larger than this is a float exactly: numpy takes it "weakly" as torch does
# (`x * 2` stays float32) and converts it without rounding. (Larger ones go the long way.)
_EXACT = 2 ** 53


def _arithmetic(ufunc: np.ufunc, self: Any, other: Any, dtype: np.dtype | None = None) -> Any:
    """`ufunc(self, other)` in PyTorch's result dtype, silently (inf - inf, 0 * inf, 1 / 0).

    The common cases, two arrays of one dtype or a float array and a Python number, need
    no promotion; this is the path of most elementwise ops, so it is written out here.
    """
    if dtype is None and type(self) is ndarray and (
            (type(other) is ndarray and other.dtype is self.dtype)
            or (type(other) is float or type(other) is int and -_EXACT <= other <= _EXACT)
            and self.dtype in _WIDE_FLOATS):
        a, b = self, other  # (the dtypes' most common pairs, tested first and cheaply)
    else:
        a, b = _operands(ufunc, self, other, dtype)
        if a is None:  # computed there: a half dtype with a number, in float32
            return b
    token = _set_state(_QUIET)
    try:
        result = ufunc(a, b)
    except ValueError:  # shapes that do not broadcast: torch's error, not numpy's
        broadcast_shapes(np.shape(a), np.shape(b))
        raise
    finally:
        _reset_state(token)
    return result if type(result) is ndarray and result.dtype is a.dtype \
        else _array(result, a.dtype)


def _operands(ufunc: np.ufunc, self: Any, other: Any, dtype: np.dtype | None) -> tuple:
    """_arithmetic's operands where its first test did not settle them: (a, b) in the dtype
    to compute in, or (None, the result) for a half dtype with a number (torch's float32)."""
    if dtype is None and type(self) is np.ndarray and (
            (type(other) is np.ndarray and other.dtype == self.dtype)
            or (type(other) is float and self.dtype.kind in "fV")
            or (type(other) is int and self.dtype.kind in "fV" and -_EXACT <= other <= _EXACT)):
        # A number with float16 or bfloat16 (_HALVES: the float kinds two bytes wide).
        if type(other) is not np.ndarray and self.itemsize == 2 and ufunc in _SCALAR_IN_OPMATH:
            return None, _with_scalar(ufunc, self, other)
        return self, other
    if dtype is None and _scalar_in_opmath(ufunc, self, other):
        return None, _with_scalar(ufunc, self, other.item())
    return _binary(self, other, dtype)


_SCALAR_IN_OPMATH = (np.multiply, np.true_divide)


def _scalar_in_opmath(ufunc: np.ufunc, self: Any, other: Any) -> bool:
    """A float16 / bfloat16 array times (or over) a 0-dim float array that does not promote
    it: torch's CPU scalar, taken in float32."""
    return (ufunc in _SCALAR_IN_OPMATH and type(self) is np.ndarray and self.ndim > 0
            and self.dtype in _HALVES and type(other) is np.ndarray and other.ndim == 0
            and other.dtype.kind in "fV")


def _with_scalar(ufunc: np.ufunc, self: np.ndarray, other: Any) -> np.ndarray:
    """float16 / bfloat16 `self` with a number: torch's CPU mul and div take the number in
    float32 (not rounded to self's dtype), compute in float32, round once."""
    with silenced():
        return _array(ufunc(self.astype(np.float32), np.float32(other)), self.dtype)


# With an alpha, torch's CPU kernels compute add and sub as one fused multiply-add, self +
# alpha * other rounded once, alpha first converted to the result dtype (halves computed in
# float32). So does add and sub out of place here: a large array through BLAS's axpy on a
# copy of self (runtime/blas.py), a smaller one through the exact emulation (_fused). In
# place, add_Tensor_'s update of a small float array (an optimizer's) rounds twice, alpha *
# other then the sum: at most an ulp apart, on about a sixth of the elements; rounding it
# once would cost more than the update itself.
def add_Tensor(self, other, alpha=1):
    if alpha == 1 and alpha is not True:
        return _arithmetic(np.add, self, other)
    return _plus_scaled(self, other, alpha, 1)


def _plus_scaled(self: Any, other: Any, alpha: Any, sign: int) -> Any:
    """self + sign * alpha * other, as torch's add (sign 1) and sub (-1) compute it."""
    dtype = result_type(self, other)
    _check_alpha(alpha, dtype)
    if dtype in _WIDE_FLOATS and (type(alpha) is float or type(alpha) is int):
        factor = builtins.float(dtype.type(alpha)) * sign  # (alpha in the dtype first)
        if type(self) is ndarray and type(other) is ndarray and self.dtype == dtype and \
                other.dtype == dtype and self.shape == other.shape:
            result = np.array(self, order="C")
            if adds_in_one_pass(result, other, factor):
                blas.axpy(factor, other, result)
                return result
        return _fused(other, factor, self, dtype)
    if dtype in _HALVES:  # self + alpha * other in float32 (alpha in dtype), rounded once
        with silenced():  # (a number past float16's range becomes inf, silently, as in torch)
            a, b = (np.asarray(_as(x, dtype), np.float32) for x in (self, other))
            return _array(a + np.float32(_as(alpha, dtype)) * sign * b, dtype)
    # integers, bools, complex numbers (and a number the compiler reads afresh, whose own
    # product writes its line): alpha * other, then the sum
    a, b = _binary(self, other, dtype)
    scaled = quietly(operator.mul, builtins.bool(alpha) if dtype.kind == "b" else alpha, b)
    return _arithmetic(np.add if sign > 0 else np.subtract, a, scaled)


def add_Tensor_(self, other, alpha=1):
    """In place: the optimizers' `p.add_(grad, alpha=-lr)` without a temporary result."""
    if type(alpha) is float and type(other) is np.ndarray and other.dtype is self.dtype \
            and self.dtype.kind == "f" and other.shape == self.shape:
        # that update itself: one dtype, one shape, nothing to promote; alpha checked only
        # where a float dtype narrower than float64 might not hold it
        if not -_F16_MAX <= alpha <= _F16_MAX and self.dtype is not _FLOAT64:
            check_fits(alpha, self.dtype)
        if self.size >= blas.MIN_SIZE and adds_in_one_pass(self, other, alpha):
            blas.axpy(alpha, other, self)
            return
        token = _set_state(_QUIET)  # quietly's work, written out: every parameter's update
        try:  # (an overflowing product is inf, silently, as in torch)
            np.add(self, alpha * other, self)
        finally:
            _reset_state(token)
        return
    _inplace(np.add, self, _times_alpha(self, other, alpha), result_type(self, other))


def adds_in_one_pass(self: np.ndarray, other: np.ndarray, alpha: float) -> bool:
    """Whether add_Tensor_'s update of a large array goes through BLAS's axpy: one pass, one
    rounding (a fused multiply-add), as torch's kernel computes it (runtime/blas.py).
    (alpha 0 stays with numpy: BLAS skips the product, where 0 * inf must give NaN.)"""
    return alpha != 0 and blas.fits(self, other)


def add_Scalar(self, other, alpha=1):
    return add_Tensor(self, other, alpha)


def _is_bool(value: Any) -> bool:
    return type(value) is bool or (isinstance(value, _NUMPY_VALUES)
                                   and value.dtype.kind == "b")


def _check_subtraction(self: Any, other: Any) -> None:
    """PyTorch refuses `-` with a bool operand, pointing to what was probably meant."""
    if type(self) is np.ndarray and self.dtype.kind != "b" and (
            type(other) is float or type(other) is np.ndarray and other.dtype.kind != "b"):
        return  # the usual operands, told apart without a call
    if not (_is_bool(self) or _is_bool(other)):
        return
    if _is_bool(self) and _is_bool(other):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


def sub_Tensor(self, other, alpha=1):
    _check_subtraction(self, other)
    if alpha == 1 and alpha is not True:
        return _arithmetic(np.subtract, self, other)
    return _plus_scaled(self, other, alpha, -1)


def sub_Tensor_(self, other, alpha=1):
    _check_subtraction(self, other)
    _inplace(np.subtract, self, _times_alpha(self, other, alpha), result_type(self, other))


def _times_alpha(self: Any, other: Any, alpha: Any) -> Any:
    """add_'s and sub_'s `alpha * other`, in their result dtype, alpha checked against it."""
    if alpha == 1 and alpha is not True:
        return other
    dtype = result_type(self, other)
    _check_alpha(alpha, dtype)
    # (alpha first: a number the compiler reads afresh at each call, runtime/compile/numbers.py,
    # writes its own product)
    return quietly(operator.mul, builtins.bool(alpha) if dtype.kind == "b" else alpha,
                   _as(other, dtype))


def rsub_Tensor(self, other, alpha=1):
    return sub_Tensor(other, self, alpha)


def rsub_Scalar(self, other, alpha=1):
    return sub_Tensor(other, self, alpha)


def mul_Tensor(self, other):
    return _arithmetic(np.multiply, self, other)


def mul_Tensor_(self, other):
    _inplace(np.multiply, self, other, result_type(self, other))


def mul_Scalar(self, other):
    return mul_Tensor(self, other)


def div_Tensor(self, other):
    """True division: integers divide to the default float dtype, as in PyTorch."""
    return _arithmetic(np.true_divide, self, other, _float_type(self, other))


def div_Scalar(self, other):
    return div_Tensor(self, other)


def div_Tensor_mode(self, other, rounding_mode=None):
    """Division rounded toward zero ('trunc') or down ('floor'); None: true division.
    Rounded, integers stay integers (a zero divisor is an error, as in PyTorch)."""
    if rounding_mode is None:
        return div_Tensor(self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    dtype = result_type(self, other)
    if dtype == np.bool_:
        raise NotImplementedError(f'"div_{rounding_mode}_cpu" not implemented for \'Bool\'')
    a, b = _binary(self, other, dtype)
    if dtype.kind in "iu":
        if np.any(np.asarray(b) == 0):
            raise RuntimeError("ZeroDivisionError")
        floor = np.floor_divide(a, b)
        if rounding_mode == "floor":
            return _array(floor, dtype)
        # toward zero: one more than the floor where the signs differ and it is not exact
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return _array(floor + inexact, dtype)
    with silenced():
        result = np.floor_divide(a, b) if rounding_mode == "floor" else np.trunc(a / b)
    return _array(result, dtype)


def neg(self):
    if self.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return np.negative(self)


def pow_Tensor_Scalar(self, exponent):
    if exponent == 2 and type(exponent) is int and type(self) is np.ndarray \
            and self.dtype.kind == "f":  # a float squared (a loss): nothing to promote
        return _array(quietly(np.square, self), self.dtype)
    dtype = result_type(self, exponent)
    if dtype == np.bool_:  # a bool exponent: PyTorch's shortcuts for 0 and 1, no kernel
        return np.ones_like(self) if not exponent else self.copy()
    base = _as(self, dtype)
    if dtype.kind in "iu" and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if exponent == 1 and type(base) is np.ndarray:  # as PyTorch: a copy, no power computed
        return base.copy() if base is self else base
    if exponent == 2:
        return _array(quietly(np.square, base), dtype)
    if (dtype in (np.float32, np.float64) and not isinstance(exponent, np.ndarray)
            and exponent in _POWER_SHORTCUTS):  # (a 0-dim array exponent is not hashable)
        return _array(quietly(_POWER_SHORTCUTS[exponent], base), dtype)
    return _array(quietly(np.power, base, exponent), dtype)


# The float and double powers PyTorch's CPU kernel computes without pow(), so rounded as
# these products and roots are (x ** 3 is x * x * x, rounded twice).
_POWER_SHORTCUTS = {
    3: lambda x: x * x * x,
    -1: np.reciprocal,
    -2: lambda x: 1 / (x * x),
    0.5: np.sqrt,
    -0.5: lambda x: 1 / np.sqrt(x),
}


def _no_bool_pow(dtype: np.dtype) -> None:
    """PyTorch has no bool pow kernel (a bool tensor to an int power is promoted first)."""
    if dtype == np.bool_:
        raise NotImplementedError('"pow" not implemented for \'Bool\'')


def pow_Tensor_Tensor(self, exponent):
    a, b = _binary(self, exponent)
    _no_bool_pow(a.dtype)
    if a.dtype.kind in "iu" and np.any(b < 0):
        return _integer_power(a, b)
    return _array(quietly(np.power, a, b), a.dtype)


def _integer_power(base: Any, exponent: Any) -> np.ndarray:
    """Integer powers with negative exponents as PyTorch computes them (numpy refuses):
    1 stays 1, -1 alternates in sign, any other base gives 0 (its reciprocal truncated)."""
    base, exponent = np.broadcast_arrays(base, exponent)
    negative = exponent < 0
    result = np.power(base, np.where(negative, 0, exponent))
    odd = (exponent % 2) == 1
    reciprocal = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, result).astype(base.dtype)


def pow_Scalar(self, exponent):
    return pow_Tensor_Tensor(self, exponent)


def _unary_float(function: Any, self: Any) -> np.ndarray:
    """A float function of one tensor; integer and bool inputs give the default float.
    float16 and bfloat16 are computed in float32 and rounded once, as torch's kernels do."""
    dtype = _float_type(self)
    return _array(quietly(function, _as(self, _opmath(dtype))), dtype)


def reciprocal(self):
    return _unary_float(np.reciprocal, self)


def exp(self):
    return _unary_float(np.exp, self)


def expm1(self):
    return _unary_float(np.expm1, self)


def log(self):
    return _unary_float(np.log, self)


def log1p(self):
    return _unary_float(np.log1p, self)


def sqrt(self):
    return _unary_float(np.sqrt, self)


def rsqrt(self):
    return _unary_float(lambda x: 1 / np.sqrt(x), self)


def sin(self):
    return _unary_float(np.sin, self)


def cos(self):
    return _unary_float(np.cos, self)


def tan(self):
    return _unary_float(np.tan, self)


def tanh(self):
    return _unary_float(np.tanh, self)


@silent
def tanh_backward(grad_output, output):
    a, b = _binary(grad_output, output)
    return _array(a * (1 - b * b), a.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) without overflow: e^-|x| is at most 1."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def sigmoid(self):
    if self.dtype.kind == "c":
        return _unary_float(lambda z: 1 / (1 + np.exp(-z)), self)
    return _unary_float(_sigmoid, self)


@silent
def sigmoid_backward(grad_output, output):
    a, b = _binary(grad_output, output)
    return _array(a * b * (1 - b), a.dtype)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(self):
    return _unary_float(_erf, self)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_CUBIC = 0.044715


def _check_approximate(approximate: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(self, approximate="none"):
    """x * Phi(x), or with approximate='tanh' the tanh approximation of it."""
    _check_approximate(approximate)
    if approximate == "tanh":
        def function(x):
            return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x ** 3)))
    else:
        def function(x):
            return 0.5 * x * (1 + _erf(x / math.sqrt(2)).astype(x.dtype))
    return _unary_float(function, self)


@silent
def gelu_backward(grad_output, self, approximate="none"):
    _check_approximate(approximate)
    g, x = _binary(grad_output, self)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x ** 3)
        t = np.tanh(inner)
        d_inner = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x ** 2)
        derivative = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d_inner
    else:
        cdf = 0.5 * (1 + _erf(x / math.sqrt(2)))
        pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        derivative = cdf + x * pdf
    return _array(g * derivative, g.dtype)


def relu(self):
    if self.dtype.kind == "f":  # the usual input: no complex or bool to refuse, no cast
        return np.maximum(self, 0)
    _no_complex_error(NotImplementedError, "clamp is not supported for complex types", self)
    if self.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return np.maximum(self, 0).astype(self.dtype, copy=False)


_SAME_SIZE_INTEGER = {size: np.dtype(f"i{size}") for size in (1, 2, 4, 8)}


def threshold_backward(grad_output, self, threshold):
    """grad where self > threshold, else 0 (even where grad is inf or NaN)."""
    if grad_output.dtype.kind in "fV" and grad_output.shape == self.shape:
        # A bitwise AND of grad's bits with an all-ones or all-zeros mask: no branch per
        # element, so several times faster than np.where on a mask without pattern.
        bits = _SAME_SIZE_INTEGER[grad_output.itemsize]
        # The mask: `self <= threshold` as PyTorch tests it (at NaN the gradient passes),
        # its bytes minus one (0 where it holds, -1: all ones, where not), widened to
        # grad's width by a plain cast (astype), which is faster than casting inside the AND.
        low = np.less_equal(self, threshold)
        if type(low) is not np.ndarray:  # 0-d operands give a numpy scalar
            low = np.asarray(low)
        low = low.view(np.int8)
        np.subtract(low, 1, out=low)
        mask = low.astype(bits)
        return np.bitwise_and(grad_output.view(bits), mask, out=mask).view(grad_output.dtype)
    return np.where(self <= threshold, 0, grad_output).astype(grad_output.dtype, copy=False)


def leaky_relu(self, negative_slope=0.01):
    work = _opmath(self.dtype)  # (float16's in float32: its slope is not rounded to float16)
    check_fits(negative_slope, work)
    if work != self.dtype:
        with silenced():
            x = self.astype(work)
            return _array(np.where(x > 0, x, x * negative_slope), self.dtype)
    return _array(np.where(self > 0, self, self * negative_slope), self.dtype)


def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead."
        )
    return _array(np.where(self > 0, grad_output, grad_output * negative_slope),
                  grad_output.dtype)


@silent
def softplus(self, beta=1, threshold=20):
    """log(1 + e^(beta x)) / beta, and x itself once beta * x > threshold (float16's in
    float32, its beta not rounded to float16)."""
    work = _opmath(self.dtype)
    _check_fits_all(work, beta, threshold)
    x = self if work == self.dtype else self.astype(work)
    z = x * beta
    return _array(np.where(z > threshold, x, np.logaddexp(0, z) / beta), self.dtype)


@silent
def softplus_backward(grad_output, self, beta, threshold):
    z = self * beta
    return _array(np.where(z > threshold, grad_output, grad_output * _sigmoid(z)),
                  grad_output.dtype)


def abs(self):  # noqa: A001 - the op's name
    if self.dtype == np.bool_:
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
    return np.abs(self)


def angle(self):
    """The argument of a real number: pi below zero, 0 otherwise (NaN stays NaN); integers
    give the default float; of a complex number, its argument in its parts' dtype."""
    if self.dtype.kind == "c":
        return np.angle(self)
    return _unary_float(lambda x: np.where(x < 0, x.dtype.type(math.pi),
                                           np.where(np.isnan(x), x, x.dtype.type(0))), self)


def sign(self):
    if self.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                           "numbers. Please use torch.sgn instead.")
    if self.dtype.kind in "fV":  # sign(nan) is 0 in PyTorch, nan in numpy
        return np.sign(np.where(np.isnan(self), 0, self)).astype(self.dtype, copy=False)
    if self.dtype == np.bool_:  # numpy has no bool sign; a bool is its own sign
        return self.copy()
    return np.sign(self)


def _clamp(self: Any, min: Any, max: Any) -> np.ndarray:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dtype = result_type(self, min, max)
    result = _as(self, dtype)
    for bound in (min, max):  # PyTorch's message for a bound that does not broadcast
        if isinstance(bound, np.ndarray):
            broadcast_shapes(np.shape(self), bound.shape)
        elif bound is not None:
            check_fits(bound, dtype)
    if min is not None:
        result = np.maximum(result, _as(min, dtype))
    if max is not None:
        result = np.minimum(result, _as(max, dtype))  # min > max gives max, as in PyTorch
    return _array(result, dtype)


def clamp_Tensor(self, min=None, max=None):
    return _clamp(self, min, max)


def _no_bool_clamp(self: Any, kernel: str, *bounds: Any) -> None:
    """PyTorch's clamp by numbers has no bool kernel (clamp by tensors has): a bool tensor
    clamped by bools is an error (by an int, it is promoted to int64 first)."""
    if result_type(self, *bounds) == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def clamp(self, min=None, max=None):
    _no_complex_error(NotImplementedError, "clamp is not supported for complex types", self)
    if min is not None or max is not None:
        _no_bool_clamp(self, "clamp_scalar_cpu" if min is not None and max is not None
                       else "clamp_min_scalar_cpu" if min is not None else "clamp_max_scalar_cpu",
                       min, max)
    return _clamp(self, min, max)


def clamp_min(self, min):
    _no_complex_error(NotImplementedError, "clamp is not supported for complex types", self)
    _no_bool_clamp(self, "clamp_min_scalar_cpu", min)
    return _clamp(self, min, None)


def clamp_min_Tensor(self, min):
    return _clamp(self, min, None)


def clamp_max(self, max):
    _no_complex_error(NotImplementedError, "clamp is not supported for complex types", self)
    _no_bool_clamp(self, "clamp_max_scalar_cpu", max)
    return _clamp(self, None, max)


def clamp_max_Tensor(self, max):
    return _clamp(self, None, max)


def maximum(self, other):
    _no_complex_error(RuntimeError, "maximum not implemented for complex tensors.", self, other)
    a, b = _binary(self, other)
    return _array(np.maximum(a, b), a.dtype)


def minimum(self, other):
    _no_complex_error(RuntimeError, "minimum not implemented for complex tensors.", self, other)
    a, b = _binary(self, other)
    return _array(np.minimum(a, b), a.dtype)


def where_self(condition, self, other):
    if np.asarray(condition).dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_scalar_name(condition)}")
    # torch's error names the condition's shape beside self's first, then other's
    broadcast_shapes(broadcast_shapes(np.shape(condition), np.shape(self)), np.shape(other))
    dtype = result_type(self, other)
    for operand in (self, other):
        if type(operand) is not ndarray:  # a number, converted to the type torch computes in
            check_fits(operand, _opmath(dtype))
    a, b = _binary(self, other, dtype)
    # (quietly: a number beyond float16 becomes inf there, silently, as in torch)
    return _array(quietly(np.where, condition, a, b), dtype)


_SCALAR_NAMES = {np.dtype(np.bool_): "Bool", np.dtype(np.int32): "Int",
                 np.dtype(np.int64): "Long", np.dtype(np.float32): "Float",
                 np.dtype(np.float64): "Double", np.dtype(np.int16): "Short",
                 np.dtype(np.int8): "Char"}


def _scalar_name(array: np.ndarray) -> str:
    """PyTorch's name for an array's dtype in messages (`Float`, `Long`)."""
    dtype = np.asarray(array).dtype
    return _SCALAR_NAMES.get(dtype, str(dtype))


_NOT_INDEX_TYPES = (np.dtype(np.int8), np.dtype(np.int16))  # torch indexes with long, int, byte

def masked_fill_Scalar(self, mask, value):
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_scalar_name(mask)}")
    # Out of place, self is expanded to the mask's shape as in PyTorch (in place, the
    # wrapper's write refuses a result of another shape).
    shape = broadcast_shapes(mask.shape, self.shape)
    result = np.array(np.broadcast_to(self, shape), copy=True)
    check_fits(value, self.dtype)
    np.copyto(result, np.asarray(value), casting="unsafe", where=mask)
    return result


def masked_fill_Tensor(self, mask, value):
    if np.ndim(value) != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {np.ndim(value)} dimension(s).")
    return masked_fill_Scalar(self, mask, value)


def fill_Scalar(self, value):
    check_fits(value, self.dtype)
    return _filled(self, value)


def _filled(self: np.ndarray, value: Any) -> np.ndarray:
    return np.full(self.shape, value, dtype=self.dtype)


def fill_Tensor(self, value):
    if np.ndim(value) != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{np.ndim(value)} dimensions.")
    return _filled(self, value)  # (a tensor's value is cast, unchecked, as in torch)


def fill__Scalar(self, value):
    return fill_Scalar(self, value)


def fill__Tensor(self, value):
    return fill_Tensor(self, value)


def copy_(self, src, non_blocking=False):
    """`src` broadcast to self's shape and cast to self's dtype."""
    src = np.asarray(src)
    if src.shape != self.shape:  # PyTorch words it as a broadcast into self, not an expand
        check_inplace_result(self, self.dtype, broadcast_shapes(self.shape, src.shape))
    return np.array(_broadcast_to(src, self.shape), dtype=self.dtype)


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes, with PyTorch's error when they don't match."""
    size = builtins.max(len(a), len(b))
    result = []
    for i in range(size):
        x = a[i - size + len(a)] if i >= size - len(a) else 1
        y = b[i - size + len(b)] if i >= size - len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        result.append(y if x == 1 else x)
    return tuple(result)


_NUMPY_VALUES_OR_COMPLEX = (np.ndarray, np.generic, builtins.complex)


def no_complex(name: str, *operands: Any) -> None:
    """torch's NotImplementedError for a kernel it has no complex version of."""
    for value in operands:
        if isinstance(value, _NUMPY_VALUES_OR_COMPLEX) and \
                np.result_type(value).kind == "c":
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{_TYPE_NAMES[result_type(*operands).name]}'")


def _no_complex_error(kind: type, message: str, *operands: Any) -> None:
    """`kind(message)` when an operand is complex."""
    for value in operands:  # (a loop: cheaper than any() of a generator, on every relu)
        if isinstance(value, np.ndarray) and value.dtype.kind == "c":
            raise kind(message)


_ORDERED = {np.greater_equal: "ge_cpu", np.greater: "gt_cpu", np.less_equal: "le_cpu",
            np.less: "lt_cpu"}


def _compare(function: Any, self: Any, other: Any) -> np.ndarray:
    if function in _ORDERED:
        no_complex(_ORDERED[function], self, other)
    a, b = _binary(self, other)
    try:
        return _array(function(a, b), np.bool_)
    except ValueError:  # shapes that do not broadcast: torch's error, not numpy's
        broadcast_shapes(np.shape(a), np.shape(b))
        raise


def eq_Scalar(self, other):
    return _compare(np.equal, self, other)


def eq_Tensor(self, other):
    return _compare(np.equal, self, other)


def ge_Scalar(self, other):
    return _compare(np.greater_equal, self, other)


def ge_Tensor(self, other):
    return _compare(np.greater_equal, self, other)


def gt_Scalar(self, other):
    return _compare(np.greater, self, other)


def gt_Tensor(self, other):
    return _compare(np.greater, self, other)


def le_Scalar(self, other):
    return _compare(np.less_equal, self, other)


def le_Tensor(self, other):
    return _compare(np.less_equal, self, other)


def lt_Scalar(self, other):
    return _compare(np.less, self, other)


def lt_Tensor(self, other):
    return _compare(np.less, self, other)


def ne_Scalar(self, other):
    return _compare(np.not_equal, self, other)


def ne_Tensor(self, other):
    return _compare(np.not_equal, self, other)


# In place (torch's eq_ & co): the comparison, which write_inplace casts to self's dtype.
def eq__Scalar(self, other):
    return eq_Scalar(self, other)


def eq__Tensor(self, other):
    return eq_Tensor(self, other)


def ge__Scalar(self, other):
    return ge_Scalar(self, other)


def ge__Tensor(self, other):
    return ge_Tensor(self, other)


def gt__Scalar(self, other):
    return gt_Scalar(self, other)


def gt__Tensor(self, other):
    return gt_Tensor(self, other)


def le__Scalar(self, other):
    return le_Scalar(self, other)


def le__Tensor(self, other):
    return le_Tensor(self, other)


def lt__Scalar(self, other):
    return lt_Scalar(self, other)


def lt__Tensor(self, other):
    return lt_Tensor(self, other)


def ne__Scalar(self, other):
    return ne_Scalar(self, other)


def ne__Tensor(self, other):
    return ne_Tensor(self, other)


def logical_not(self):
    return np.logical_not(self)


def logical_and(self, other):
    _broadcastable(self, other)
    return _array(np.logical_and(self, other), np.bool_)


def logical_or(self, other):
    _broadcastable(self, other)
    return _array(np.logical_or(self, other), np.bool_)


def _broadcastable(a: Any, b: Any) -> None:
    """torch's error, not numpy's, where two arrays' shapes do not broadcast."""
    if np.shape(a) != np.shape(b):
        broadcast_shapes(np.shape(a), np.shape(b))


def _bitwise(ufunc: np.ufunc, name: str, *operands: Any) -> np.ndarray:
    dtype = result_type(*operands)
    if dtype.kind in "fcV":
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_TYPE_NAMES[dtype.name]}\'')
    return _array(ufunc(*(_as(o, dtype) for o in operands)), dtype)


def bitwise_not(self):
    return _bitwise(np.invert, "bitwise_not", self)


def bitwise_and_Tensor(self, other):
    return _bitwise(np.bitwise_and, "bitwise_and", self, other)


def bitwise_or_Tensor(self, other):
    return _bitwise(np.bitwise_or, "bitwise_or", self, other)


def bitwise_xor_Tensor(self, other):
    return _bitwise(np.bitwise_xor, "bitwise_xor", self, other)


# -- reductions ---------------------------------------------------------------------------------

def _axes(dim: Any, ndim: int) -> tuple[int, ...]:
    """The numpy axes of a reduction over `dim`: every axis for None or [] (as in PyTorch).

    `dim` is an int or a list of ints (int[1] takes both); a 0-dim tensor accepts 0 and -1.
    """
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    axes = tuple(_wrap_dim(d, ndim) for d in dims)
    for d, axis in zip(dims, axes, strict=True):
        if axes.count(axis) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return axes if ndim else ()


def _sum_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    """sum and prod accumulate bool and integers as int64 unless told otherwise."""
    if dtype is not None:
        return dtype
    return np.dtype(np.int64) if array.dtype.kind in "biu" else array.dtype


def _mean_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    out = array.dtype if dtype is None else np.dtype(dtype)
    if out.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_type_name(out)}"
        )
    return out


def _scalar_type_name(dtype: np.dtype) -> str:
    return {"f4": "Float", "f8": "Double", "i8": "Long", "i4": "Int", "b1": "Bool",
            "i2": "Short", "i1": "Char", "u1": "Byte", "f2": "Half",
            "c8": "ComplexFloat", "c16": "ComplexDouble"}[np.dtype(dtype).str[1:]]


def _float_input(array: np.ndarray) -> np.ndarray:
    """logsumexp makes sense only on floats: it takes integers as the default float dtype."""
    return array if array.dtype.kind in "fV" else array.astype(_DEFAULT_FLOAT)


def sum(self, dtype=None):  # noqa: A001 - the op's name
    """Silently, as PyTorch sums (a float32 sum past its largest value is inf, no warning);
    float16 and bfloat16 add up in float32, rounded once."""
    if dtype is None and (self.dtype is _FLOAT32 or self.dtype is _FLOAT64):  # the usual sum
        token = _set_state(_QUIET)  # (quietly's work, written out: a loss's every step)
        try:
            total = _add_reduce(self, None)  # a numpy scalar of self's dtype
        finally:
            _reset_state(token)
        return np.asarray(total)
    out = _sum_dtype(self, dtype)
    if self.dtype.kind == "c" and np.dtype(out).kind != "c":  # torch casts the input first
        warn_at_caller("Casting complex values to real discards the imaginary part",
                       UserWarning)
        self = self.real
    # np.sum's own reduction, without np.sum's Python layers (which cost more than summing
    # a small array)
    return _array(quietly(_add_reduce, self, None, _opmath(out)), out)


_add_reduce = np.add.reduce


@silent
def sum_dim_IntList(self, dim, keepdim=False, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.sum(self, axis=_axes(dim, self.ndim), keepdims=keepdim,
                         dtype=_opmath(out)), out)


@silent
def mean(self, dtype=None):
    out = _mean_dtype(self, dtype)
    return _array(np.mean(self, dtype=_opmath(out)), out)


@silent
def mean_dim(self, dim, keepdim=False, dtype=None):
    out = _mean_dtype(self, dtype)
    return _array(np.mean(self, axis=_axes(dim, self.ndim), keepdims=keepdim,
                          dtype=_opmath(out)), out)


def _check_nonempty(self: np.ndarray, axes: tuple[int, ...], name: str, hint: str = "",
                    given: Any = None) -> None:
    """max-like reductions have no identity: an empty slice is PyTorch's error. amax and
    amin name the first empty dim of the list as it was `given` (-1, not 1)."""
    if self.size:
        return
    if not given and len(axes) == self.ndim:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{hint}"
        )
    for axis, named in zip(axes, given or axes, strict=True):
        if self.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {named} to have non-zero size.")


_DIM_HINT = " Specify the reduction dim with the 'dim' argument."


def amax(self, dim=(), keepdim=False):
    no_complex("max_values_cpu", self)
    axes = _axes(dim, self.ndim)
    _check_nonempty(self, axes, "amax", _DIM_HINT,
                    () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim))
    return np.amax(self, axis=axes, keepdims=keepdim)


def amin(self, dim=(), keepdim=False):
    no_complex("min_values_cpu", self)
    axes = _axes(dim, self.ndim)
    _check_nonempty(self, axes, "amin", _DIM_HINT,
                    () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim))
    return np.amin(self, axis=axes, keepdims=keepdim)


def _select(self: np.ndarray, dim: int, keepdim: bool, pick,
            name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of max.dim / min.dim; ties pick the first index, NaN wins."""
    _no_complex_error(RuntimeError, f"{name}(): does not support complex input", self)
    axis = _axes(dim, self.ndim)
    _check_nonempty(self, axis, name)
    if not axis:  # a 0-dim tensor: the value itself, at index 0
        return self.copy(), np.zeros((), dtype=np.int64)
    indices = np.expand_dims(pick(self, axis=axis[0]), axis[0])
    values = np.take_along_axis(self, indices, axis[0])
    if not keepdim:
        values, indices = np.squeeze(values, axis[0]), np.squeeze(indices, axis[0])
    return values, indices.astype(np.int64)


def max_dim(self, dim, keepdim=False):
    return _select(self, dim, keepdim, np.argmax, "max")


def max(self):  # noqa: A001 - the op's name
    no_complex("max_all", self)
    _check_nonempty(self, _axes(None, self.ndim), "max", _DIM_HINT)
    return np.asarray(np.max(self))


def min_dim(self, dim, keepdim=False):
    return _select(self, dim, keepdim, np.argmin, "min")


def min(self):  # noqa: A001 - the op's name
    no_complex("min_all", self)
    _check_nonempty(self, _axes(None, self.ndim), "min", _DIM_HINT)
    return np.asarray(np.min(self))


def any(self):  # noqa: A001 - the op's name
    return np.asarray(np.any(self))


def any_dim(self, dim, keepdim=False):
    return np.any(self, axis=_wrap_dim(dim, self.ndim), keepdims=keepdim)


def _reduce_dims(function: Any, self: Any, dim: Any, keepdim: bool) -> np.ndarray:
    """`function` over the dims `dim` (None: all of them; none listed: no reduction at all,
    each element tested on its own, as in PyTorch)."""
    if dim is None:
        axes = tuple(range(self.ndim))
    else:
        axes = tuple(_wrap_dim(d, self.ndim) for d in dim)
        for d in axes:
            if axes.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not self.ndim:
        axes = ()
    return np.asarray(function(self, axis=axes, keepdims=keepdim))


def any_dims(self, dim=None, keepdim=False):
    return _reduce_dims(np.any, self, dim, keepdim)


def all(self):  # noqa: A001 - the op's name
    return np.asarray(np.all(self))


def all_dim(self, dim, keepdim=False):
    return np.all(self, axis=_wrap_dim(dim, self.ndim), keepdims=keepdim)


def all_dims(self, dim=None, keepdim=False):
    return _reduce_dims(np.all, self, dim, keepdim)


def argmax(self, dim=None, keepdim=False):
    _no_complex_error(RuntimeError, "argmax(): does not support complex input", self)
    if self.dtype == np.bool_:
        raise RuntimeError("argmax(): does not support bool input")
    if dim is None:
        _check_nonempty(self, _axes(None, self.ndim), "argmax")
        index = np.asarray(np.argmax(self), dtype=np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    return _select(self, dim, keepdim, np.argmax, "argmax")[1]


def argmin(self, dim=None, keepdim=False):
    _no_complex_error(RuntimeError, "argmin(): does not support complex input", self)
    if self.dtype == np.bool_:
        raise RuntimeError("argmin(): does not support bool input")
    if dim is None:
        _check_nonempty(self, _axes(None, self.ndim), "argmin")
        index = np.asarray(np.argmin(self), dtype=np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    return _select(self, dim, keepdim, np.argmin, "argmin")[1]


@silent
def prod(self, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.prod(self, dtype=out), out)


@silent
def prod_dim_int(self, dim, keepdim=False, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.prod(self, axis=_axes(dim, self.ndim), keepdims=keepdim, dtype=out), out)


def _variance(self, dim, correction, keepdim, name):
    if self.dtype.kind not in "fV":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ddof = 1 if correction is None else correction
    axes = _axes(dim, self.ndim)
    count = self.size if self.ndim == 0 else math.prod(self.shape[a] for a in axes)
    if count - ddof > 0:
        return np.asarray(np.var(self, axis=axes, ddof=ddof, keepdims=keepdim))
    # torch warns in its own words (numpy's "Degrees of freedom <= 0 for slice" is not
    # torch's), and gives inf or NaN as numpy does.
    warn_at_caller(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                   "less than the reduction factor (input numel divided by output numel).")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.var(self, axis=axes, ddof=ddof, keepdims=keepdim))


@silent  # (N <= correction gives inf or nan; a large value overflows)
def var_correction(self, dim=None, correction=None, keepdim=False):
    return _variance(self, dim, correction, keepdim, "var")


@silent
def std_correction(self, dim=None, correction=None, keepdim=False):
    return np.sqrt(_variance(self, dim, correction, keepdim, "std"))


@silent
def logsumexp(self, dim, keepdim=False):
    self = _float_input(self)
    axes = _axes(dim, self.ndim)
    if self.size == 0:  # log(0) = -inf, without numpy's warning
        return np.log(np.sum(np.exp(self), axis=axes, keepdims=keepdim))
    # Shift by the maximum so exp cannot overflow; an infinite maximum is not shifted by.
    shift = np.amax(self, axis=axes, keepdims=True)
    shift = np.where(np.isinf(shift), 0, shift)
    with np.errstate(divide="ignore"):
        result = np.log(np.sum(np.exp(self - shift), axis=axes, keepdims=True)) + shift
    return result if keepdim else np.squeeze(result, axes)


@silent
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    if self.dtype.kind not in "fV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_type_name(self.dtype)}")
    x = np.abs(self if dtype is None else self.astype(dtype))
    axes = _axes(dim, self.ndim)
    if ord == float("inf"):
        result = np.amax(x, axis=axes, keepdims=keepdim, initial=0)
    elif ord == -float("inf"):
        result = np.amin(x, axis=axes, keepdims=keepdim)
    elif ord == 0:
        result = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif ord == 1:
        result = np.sum(x, axis=axes, keepdims=keepdim)
    elif ord == 2:
        result = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    else:
        result = np.sum(x ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(result, dtype=x.dtype)


def _check_norm_input(self: np.ndarray) -> None:
    if self.dtype.kind not in "fV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_type_name(self.dtype)} instead.")


def norm_Scalar(self, p=2):
    _check_norm_input(self)
    return linalg_vector_norm(self, p)


def norm_ScalarOpt_dim(self, p, dim, keepdim=False):
    _check_norm_input(self)
    return linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)


# -- shape and indexing -----------------------------------------------------------------------

def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


def expand(self, size, implicit=False):
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({self.ndim})"
        )
    if -1 in size:  # -1 keeps the size of that dimension
        lead = len(size) - self.ndim
        target = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(size))
        return _broadcast_to(self, target, size)
    return _broadcast_to(self, size)


def _broadcast_to(array: np.ndarray, target: tuple[int, ...],
                  asked: tuple[int, ...] | None = None) -> np.ndarray:
    """A read-only broadcast view, with PyTorch's message where a size does not fit
    (naming the sizes `asked` for, -1s and all)."""
    lead = len(target) - array.ndim
    if lead < 0:
        raise _broadcast_error(array, target, asked)
    strides = [0] * lead  # a new dimension, or one of size 1 that grows, gets stride 0
    for size, wanted, stride in zip(array.shape, target[lead:], array.strides, strict=True):
        if size == wanted:
            strides.append(stride)
        elif size == 1:
            strides.append(0)
        else:
            raise _broadcast_error(array, target, asked)
    try:
        # The view built directly, as np.broadcast_to builds it, in a third of the time;
        # only an array that is one block of memory can be the buffer.
        view = np.ndarray(target, array.dtype, array, 0, tuple(strides))
    except (ValueError, TypeError, BufferError):
        return np.broadcast_to(array, target)
    view.flags.writeable = False
    return view


def _broadcast_error(array: np.ndarray, target: tuple[int, ...],
                     asked: tuple[int, ...] | None) -> RuntimeError:
    lead = len(target) - array.ndim
    for dim in range(array.ndim - 1, -1, -1):
        size, wanted = array.shape[dim], target[lead + dim] if lead + dim >= 0 else None
        if wanted is None or (size != wanted and size != 1):
            return RuntimeError(
                f"The expanded size of the tensor ({wanted}) must match the existing size "
                f"({size}) at non-singleton dimension {lead + dim}.  Target sizes: "
                f"{list(target if asked is None else asked)}.  Tensor sizes: "
                f"{list(array.shape)}")
    raise AssertionError("no dimension fails to broadcast")


def unsqueeze(self, dim):
    return np.expand_dims(self, _wrap_dim(dim, self.ndim + 1))


def squeeze(self):
    return np.squeeze(self)


def squeeze_dim(self, dim):
    dim = _wrap_dim(dim, self.ndim)
    return np.squeeze(self, dim) if self.ndim and self.shape[dim] == 1 else self.view()


def squeeze_dims(self, dim):
    wrapped = [_wrap_dim(d, self.ndim) for d in dim]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not self.ndim:  # a 0-dim tensor has no dimension to remove
        return self.view()
    dims = tuple(d for d in wrapped if self.shape[d] == 1)
    return np.squeeze(self, dims) if dims else self.view()


def squeeze_(self):
    return squeeze(self)


def squeeze__dim(self, dim):
    return squeeze_dim(self, dim)


def squeeze__dims(self, dim):
    return squeeze_dims(self, dim)


def _to_copy(self, dtype=None):
    if dtype is not None and self.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        warn_at_caller("Casting complex values to real discards the imaginary part",
                       UserWarning)
        return cast(self.real, dtype)
    if dtype is None or np.dtype(dtype) == self.dtype:
        return np.array(self, copy=True)
    return cast(self, dtype)




@silent
def cast(array, dtype):
    """A copy of `array` in `dtype`, converted as torch's CPU kernels convert: to bfloat16
    and float16 from other types, and from them to integers, through float32 (torch makes
    its Half and BFloat16 from a float, so a double is rounded twice: 1 + 2**-8 + 2**-30
    becomes bfloat16's 1, not 1.0078125)."""
    dtype = np.dtype(dtype)
    if not hasattr(array, "astype"):  # a number (a traced array has astype: compile's Value)
        array = np.asarray(array)
    if dtype in _HALVES and array.dtype not in _HALVES and array.dtype != np.float32 \
            and array.dtype.kind != "c":
        array = array.astype(np.float32)
    elif array.dtype in _HALVES and dtype.kind in "iu":  # as C converts a float to integer
        array = array.astype(np.float32)
    elif (dtype == _COMPLEX32) != (array.dtype == _COMPLEX32) and array.dtype.kind != "b":
        # complex32 is made from and read as complex<float> (its float16 parts from floats)
        array = array.astype(np.complex64 if array.dtype.kind == "c" or dtype == _COMPLEX32
                             else np.float32)
        if dtype.kind != "c" and array.dtype.kind == "c":
            array = array.real
    return array.astype(dtype)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in [-ndim, ndim), made non-negative, with PyTorch's error."""
    size = builtins.max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], "
            f"but got {dim})"
        )
    return dim % size


def clone(self):
    # A C-ordered copy: what `contiguous()` needs (PyTorch's preserve_format would keep a
    # transposed layout; in gradgen strides show only through is_contiguous and view).
    return np.array(self, copy=True, order="C")


def transpose_int(self, dim0, dim1):
    if not self.ndim:  # dims 0 and -1 of a 0-dim tensor: the tensor itself, as in PyTorch
        _wrap_dim(dim0, 0), _wrap_dim(dim1, 0)
        return self.view()
    return np.swapaxes(self, _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim))


def _view_shape(size, numel: int) -> tuple[int, ...]:
    """`size` with a -1 filled in, or PyTorch's error if it does not fit `numel` elements."""
    size = tuple(size)
    known = int(np.prod([s for s in size if s != -1]))
    if size.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in size:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        size = tuple(numel // known if s == -1 else s for s in size)
    if int(np.prod(size)) != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def view(self, size):
    shape = _view_shape(size, self.size)
    result = self.view()
    try:
        result.shape = shape  # numpy refuses where a view would need a copy, as torch does
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return result


def _unsafe_view(self, size):
    return np.reshape(self, _view_shape(size, self.size))


def zero_(self):
    return np.zeros_like(self)


def _take(dim: int, index: Any) -> tuple:
    """The numpy key that picks `index` (an int, a slice or an array) along `dim`."""
    return (slice(None),) * dim + (index, Ellipsis)


def alias(self):
    return self.view()


def permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{self.ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = [_wrap_dim(d, self.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, dims)


def cat(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch still skips 1-D empty tensors, whatever the shape of the others (and if all
    # are, whatever the dim).
    arrays = [a for a in tensors if a.shape != (0,)]
    if not arrays:
        return np.empty(0, result_type(*tensors))
    first = arrays[0]
    for position, array in enumerate(tensors):
        if array.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {position}) cannot be concatenated"
            )
    dim = _wrap_dim(dim, first.ndim)
    for number, array in enumerate(arrays):
        if array.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {array.ndim}"
            )
        for d in range(first.ndim):
            if d != dim and array.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{first.shape[d]} but got size {array.shape[d]} for tensor number {number} "
                    "in the list."
                )
    # the skipped empty tensors still take part in the type promotion
    return np.concatenate(arrays, axis=dim).astype(result_type(*tensors), copy=False)


def stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for entry, array in enumerate(tensors):
        if array.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                f"at entry 0 and {list(array.shape)} at entry {entry}"
            )
    dim = _wrap_dim(dim, tensors[0].ndim + 1)
    return np.stack(tensors, axis=dim).astype(result_type(*tensors), copy=False)


def split_Tensor(self, split_size, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                           f"{split_size}")
    dim = _wrap_dim(dim, self.ndim)
    return split_with_sizes(self, _split_sizes(self.shape[dim], split_size), dim)


def _split_sizes(length: int, split_size: int) -> list[int]:
    """The pieces split.Tensor cuts `length` into: all `split_size`, the last one shorter."""
    if split_size == 0 and length != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {length}")
    count = builtins.max(-(-length // split_size), 1) if split_size else 1
    return [split_size] * (count - 1) + [length - split_size * (count - 1)]


def split_with_sizes(self, split_sizes, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, self.ndim)
    if builtins.any(s < 0 for s in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={list(split_sizes)}")
    if builtins.sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {self.shape[dim]} (input "
            f"tensor's size at dimension {dim}), but got split_sizes={list(split_sizes)}"
        )
    starts = np.cumsum([0, *split_sizes])
    return [self[_take(dim, slice(int(a), int(b)))] for a, b in zip(starts, starts[1:],
                                                                     strict=False)]


def unbind_int(self, dim=0):
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _wrap_dim(dim, self.ndim)
    return [self[_take(dim, i)] for i in range(self.shape[dim])]


def select_int(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {dim}")
    return self[_take(dim, index)]


def select_backward(grad_output, input_sizes, dim, index):
    result = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    result[_take(_wrap_dim(dim, len(input_sizes)), index)] = grad_output
    return result


def slice_Tensor(self, dim=0, start=None, end=None, step=1):
    if self.ndim == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return self[_take(_wrap_dim(dim, self.ndim), slice(start, end, step))]


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    result = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    result[_take(_wrap_dim(dim, len(input_sizes)), slice(start, end, step))] = grad_output
    return result


def _index_key(self: np.ndarray, indices: list) -> tuple:
    """`indices` (index's `Tensor?[]`) as a numpy key: None is a whole dimension, a bool
    mask covers as many dimensions as it has and becomes their nonzero positions."""
    if not indices:
        raise IndexError("at least one index must be provided")
    covered = builtins.sum(1 if i is None or i.dtype.kind != "b" else builtins.max(i.ndim, 1)
                           for i in indices)
    if covered > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    key: list = []
    position = 0  # which index tensor, as PyTorch counts them in its messages
    for index in indices:
        dim = len(key)
        if index is None:
            key.append(slice(None))
            continue
        if index.dtype.kind == "b":
            mask_shape = self.shape[dim:dim + index.ndim]
            for k, (size, own) in enumerate(zip(index.shape, mask_shape, strict=True)):
                if size != own:
                    raise IndexError(
                        f"The shape of the mask {list(index.shape)} at index {k} does not match "
                        f"the shape of the indexed tensor {list(self.shape)} at index {dim + k}"
                    )
            key.extend(np.nonzero(index))
        elif index.dtype.kind in "iu" and index.dtype not in _NOT_INDEX_TYPES:
            size = self.shape[dim]
            bad = index[(index < -size) | (index >= size)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {position} "
                                 f"with size {size}")
            key.append(index)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        position += 1
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    return tuple(key)


def index_Tensor(self, indices):
    return np.array(self[_index_key(self, indices)], copy=True)


def _same_dtype(self: np.ndarray, source: Any, message: str) -> None:
    """PyTorch's index and scatter ops write `source` into a copy of `self` without casting."""
    if isinstance(source, np.ndarray) and source.dtype != self.dtype:
        names = {k: _TYPE_NAMES.get(a.dtype.name, a.dtype.name)
                 for k, a in (("self", self), ("source", source))}
        raise RuntimeError(message.format(**names))


@silent
def index_put(self, indices, values, accumulate=False):
    _same_dtype(self, values, "Index put requires the source and destination dtypes match, got "
                "{self} for the destination and {source} for the source.")
    key = _index_key(self, indices)
    values = _as(values, self.dtype)
    result = np.array(self, copy=True)
    target = result[key].shape
    try:
        fits = np.broadcast_shapes(np.shape(values), target) == target
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(values))} "
                           f"cannot be broadcast to indexing result of shape {list(target)}")
    if accumulate:
        np.add.at(result, key, values)
    else:
        result[key] = values
    return result


@silent
def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return index_put(self, indices, values, accumulate)


def _check_index(index: np.ndarray, op: str) -> None:
    if index.dtype.kind not in "iu" or index.dtype in _NOT_INDEX_TYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


def index_select(self, dim, index):
    _check_index(index, "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = _wrap_dim(dim, self.ndim)
    if not self.ndim and index.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.size} value(s)")
    size = builtins.max(self.shape[dim:dim + 1] or (1,))
    if index.size and (index.min() < 0 or index.max() >= size):
        raise IndexError("index out of range in self")
    return np.take(self, index.reshape(-1), axis=dim) if self.ndim else self.copy()


@silent
def index_add(self, dim, index, source, alpha=1):
    _check_index(index, "index_add")
    _same_dtype(self, source, "index_add_(): self ({self}) and source ({source}) must have the "
                "same scalar type")
    dim = _wrap_dim(dim, self.ndim)
    shape = np.shape(source)
    if self.ndim != len(shape) or builtins.any(
            a != b for d, (a, b) in enumerate(zip(self.shape, shape, strict=True)) if d != dim):
        if self.ndim or np.ndim(source) > 1 or np.size(source) != 1:
            raise RuntimeError(
                f"source tensor shape must match self tensor shape, excluding the specified "
                f"dimension. Got self.shape = {list(self.shape)} source.shape = "
                f"{list(np.shape(source))}")
    count = np.shape(source)[dim] if np.ndim(source) else 1
    if index.size != count:
        raise RuntimeError(f"index_add_(): Number of indices ({index.size}) should be equal to "
                           f"source.size(dim): ({count}), for dim: {dim}")
    size = self.shape[dim] if self.ndim else 1
    outside = index[(index < 0) | (index >= size)]
    if outside.size:  # torch counts no index from the end here
        raise RuntimeError(f"index {outside.flat[0]} is out of bounds for dimension {dim} with "
                           f"size {size}")
    check_fits(alpha, _opmath(self.dtype))
    result = np.array(self, copy=True)
    source = _as(source, self.dtype)
    if not self.ndim:  # one index, one value
        return result + (source if alpha == 1 else source * alpha).reshape(())
    np.add.at(result, _take(dim, index.reshape(-1)), source if alpha == 1 else source * alpha)
    return result


def _scatter_key(self: np.ndarray, dim: int, index: np.ndarray, op: str) -> tuple:
    """The numpy key for gather/scatter: `index` along `dim`, position elsewhere."""
    _check_index(index, op)
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim] if self.ndim else 1
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(f"index {bad.flat[0]} is out of bounds for dimension {dim} with "
                           f"size {size}")
    grid = list(np.indices(index.shape, sparse=True))
    if not grid:
        return (index,) if self.ndim else ()
    grid[dim] = index
    return tuple(grid)


def gather(self, dim, index, sparse_grad=False):
    if index.ndim != self.ndim and index.size and builtins.max(index.ndim, 1) != builtins.max(
            self.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    if not index.size:  # an empty index gives an empty result of its own shape
        _wrap_dim(dim, self.ndim)
        _check_index(index, "gather")
        return np.empty(index.shape, self.dtype)
    key = _scatter_key(self, dim, index, "gather")
    if not self.ndim:  # a 0-dim self is one element: each (valid) index picks it
        return np.full(index.shape, self, self.dtype)
    return np.array(self[key], copy=True)


@silent
def scatter_add(self, dim, index, src):
    _same_dtype(self, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    if not index.size:  # nothing to add
        _wrap_dim(dim, self.ndim)
        return np.array(self, copy=True)
    if index.ndim != self.ndim and builtins.max(index.ndim, 1) != builtins.max(self.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if not self.ndim:  # one element: every (valid) index adds its value to it
        _scatter_key(self, dim, index, "scatter_add")
        values = _as(src, self.dtype).reshape(-1)[:index.size]
        return np.asarray(self + values.sum(dtype=self.dtype), dtype=self.dtype)
    result = np.array(self, copy=True)
    corner = tuple(slice(0, s) for s in index.shape)
    np.add.at(result, _scatter_key(self, dim, index, "scatter_add"), _as(src, self.dtype)[corner])
    return result


def repeat(self, repeats):
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return np.tile(self, tuple(repeats)) if repeats else np.array(self, copy=True)


def flip(self, dims):
    axes = [_wrap_dim(d, self.ndim) for d in dims]
    for d in axes:
        if axes.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if not self.ndim:  # dim 0 (or -1) of a 0-dim tensor: nothing to flip
        return self.copy()
    return np.flip(self, axis=tuple(axes)).copy()


# -- linear algebra and nn --------------------------------------------------------------------

def _no_bool(kernel: str, *arrays: np.ndarray) -> None:
    """PyTorch's CPU matrix products have no bool kernel."""
    for array in arrays:  # (a loop: cheaper than any() of a generator, on every product)
        if array.dtype.kind == "b":  # (the kind: cheaper than comparing with np.bool_)
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


# The inner size from which a short, wide product is computed transposed (see mm): below
# it, the time saved is small beside the copy.
_LONG_INNER = 256


def mm(self, mat2):
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if self.ndim != 2 else "mat2 must be a matrix")
    (rows, inner), (inner_of_mat2, columns) = self.shape, mat2.shape
    if inner != inner_of_mat2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{inner} and "
                           f"{inner_of_mat2}x{columns})")
    dtype = self.dtype
    if dtype is not mat2.dtype and dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_TYPE_NAMES[dtype.str[1:]]} != "
                           f"{_C_TYPE_NAMES[mat2.dtype.str[1:]]}")
    if dtype.char not in "fd":  # bool, bfloat16 and the rest: their own rules
        return _mm_of_other_dtypes(self, mat2)
    if rows < columns <= inner and inner >= _LONG_INNER:
        # (mat2ᵀ selfᵀ)ᵀ: the same products and sums, but OpenBLAS's kernel runs about twice
        # as fast with the longer side as rows (nn.Linear on a small batch: 16 by 1000
        # times 1000 by 100); the copy to a row-major result is small beside the product.
        # (Which kernel sums them may differ, so the last bit may: as between machines.)
        return np.ascontiguousarray(quietly(np.matmul, mat2.T, self.T).T)
    return quietly(np.matmul, self, mat2)  # (torch's products never warn: nor do these)


def _mm_of_other_dtypes(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """mm of matrices neither float32 nor float64: no bool kernel, bfloat16 accumulated in
    float32 and rounded once, the rest as numpy multiplies them."""
    if self.size and mat2.size:  # an empty product returns before a kernel is picked
        _no_bool("addmm_impl_cpu_", self)
    if self.dtype == _BFLOAT16:
        return _array(quietly(np.matmul, self.astype(np.float32), mat2.astype(np.float32)),
                      self.dtype)
    return quietly(np.matmul, self, mat2)


@silent
def addmm(self, mat1, mat2, beta=1, alpha=1):
    product = mm(mat1, mat2)  # a fresh array: scaled and added to in place
    if alpha != 1 or beta != 1:  # (1 fits every dtype: nn.Linear's call checks nothing)
        _check_fits_all(_opmath(product.dtype), alpha, beta)
    if alpha != 1:
        product *= product.dtype.type(alpha)
    bias = _as(self, product.dtype)
    if beta == 0:
        return product + np.zeros_like(bias)
    bias = bias if beta == 1 else bias * product.dtype.type(beta)
    shape = bias.shape if type(bias) is np.ndarray else np.shape(bias)  # (np.shape: Python)
    if shape != product.shape and shape != product.shape[1:]:  # not nn.Linear's (out,)
        expand(np.asarray(bias), product.shape)  # PyTorch expands self: its errors
    product += bias  # nn.Linear's bias, (out,), added in place
    return product


_C_TYPE_NAMES = {"f4": "float", "f8": "double", "i8": "long int", "i4": "int", "b1": "bool",
                 "i2": "short int", "i1": "signed char",
                 "c8": "c10::complex<float>", "c16": "c10::complex<double>"}


def _check_same_dtype(a: np.ndarray, b: np.ndarray, message: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(message.format(_dtype_name(a), _dtype_name(b)))


def _dtype_name(array: np.ndarray) -> str:
    """`Float`, `Double`, `Long`: PyTorch's short name for a dtype in messages."""
    return {"f4": "Float", "f8": "Double", "i8": "Long", "i4": "Int", "b1": "Bool",
            "i2": "Short", "i1": "Char"}.get(array.dtype.str[1:], str(array.dtype))


def bmm(self, mat2):
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    expected = [self.shape[0], self.shape[2]]
    if list(mat2.shape[:2]) != expected:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {expected} but got: "
            f"{list(mat2.shape[:2])}."
        )
    _check_same_dtype(self, mat2, "expected scalar type {0} but found {1}")
    if self.size and mat2.size:
        _no_bool("bmm", self)
    return quietly(np.matmul, self, mat2)


def dot(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape != tensor.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.size}] and src [{tensor.size}] to "
            f"have the same number of elements, but got {self.size} and {tensor.size} elements "
            "respectively"
        )
    _check_same_dtype(self, tensor, "dot : expected both vectors to have same dtype, but found "
                      "{0} and {1}")
    _no_bool("dot", self)
    return _array(quietly(np.dot, self, tensor), self.dtype)


def mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
            f"vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_dtype_name(vec)}, {_dtype_name(self)}, and {_dtype_name(vec)}")
    return quietly(np.matmul, self, vec)


def _softmax_input(self, dim, half_to_float, name="softmax"):
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    axis = _wrap_dim(dim, self.ndim)
    if self.dtype.kind not in "fV" and self.size:  # the kernel's name says if dim is the last
        where = "lastdim_" if axis == builtins.max(self.ndim, 1) - 1 else ""
        raise NotImplementedError(f'"{name}_{where}kernel_impl" not implemented for '
                                  f"'{_scalar_name(self)}'")
    return axis


@silent
def _softmax(self, dim, half_to_float):
    axis = _softmax_input(self, dim, half_to_float)
    if not self.size:  # (of any dtype: PyTorch returns before it picks a kernel)
        return np.empty(self.shape, self.dtype)
    work = self.astype(_opmath(self.dtype), copy=False)  # halves in float32, rounded once
    shifted = np.exp(work - np.max(work, axis=axis, keepdims=True))
    return _array(shifted / np.sum(shifted, axis=axis, keepdims=True), self.dtype)


@silent
def _log_softmax(self, dim, half_to_float):
    axis = _softmax_input(self, dim, half_to_float, "log_softmax")
    if not self.size:
        return np.empty(self.shape, self.dtype)
    work = self.astype(_opmath(self.dtype), copy=False)  # halves in float32, rounded once
    shifted = work - np.max(work, axis=axis, keepdims=True)
    return _array(shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)),
                  self.dtype)


@silent
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    axis = _wrap_dim(dim, output.ndim)
    inner = np.sum(grad_output * output, axis=axis, keepdims=True)
    return _array(output * (grad_output - inner), input_dtype)


@silent
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    axis = _wrap_dim(dim, output.ndim)
    total = np.sum(grad_output, axis=axis, keepdims=True)
    return _array(grad_output - np.exp(output) * total, input_dtype)


# Loss reductions, PyTorch's at::Reduction enum.
_NONE, _MEAN, _SUM = 0, 1, 2


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == _MEAN:
        return _array(np.mean(loss), loss.dtype)
    if reduction == _SUM:
        return _array(np.sum(loss), loss.dtype)
    return loss


def _per_element(grad_output, loss_shape, reduction) -> Any:
    """The gradient of a reduced loss spread back over its elements."""
    if reduction == _MEAN:
        return grad_output / int(np.prod(loss_shape))
    return grad_output


@silent
def mse_loss(self, target, reduction=_MEAN):
    a, b = _binary(self, target)
    return _reduce(_array((a - b) ** 2, a.dtype), reduction)


@silent
def mse_loss_backward(grad_output, self, target, reduction):
    a, b = _binary(self, target)
    diff = a - b
    # In PyTorch's order, for float32; the mean over no elements has a nan gradient.
    norm = (2.0 / diff.size if diff.size else math.nan) if reduction == _MEAN else 2.0
    return _array(norm * diff * grad_output, diff.dtype)


@silent
def smooth_l1_loss(self, target, reduction=_MEAN, beta=1.0):
    a, b = _binary(self, target)
    distance = np.abs(a - b)
    loss = np.where(distance < beta, 0.5 * distance**2 / (beta or 1.0), distance - 0.5 * beta)
    return _reduce(_array(loss, a.dtype), reduction)


@silent
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    a, b = _binary(self, target)
    diff = a - b
    slope = np.where(np.abs(diff) < beta, diff / (beta or 1.0), np.sign(diff))
    return _array(slope * _per_element(grad_output, diff.shape, reduction), diff.dtype)


def _nll_weights(self, target, weight, ignore_index) -> tuple[np.ndarray, np.ndarray]:
    """The weight of each sample's target class, 0 where the target is ignore_index, and
    the targets with those as 0 (an index to read with)."""
    if target.dtype in _NOT_INDEX_TYPES:  # torch's check for the narrow integer targets
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target)}")
    if target.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected scalar type Long but found {_dtype_name(target)}")
    if self.ndim not in (1, 2):
        raise ValueError(f"Expected 1 or 2 dimensions (got {self.ndim})")
    if self.ndim == 2 and target.shape != self.shape[:1]:
        raise ValueError(
            f"Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}).")
    classes = self.shape[-1]
    kept = target != ignore_index
    checked = target[kept].reshape(-1)
    if checked.size and (checked.min() < 0 or checked.max() >= classes):
        outside = (checked < 0) | (checked >= classes)  # (the first, as torch names it)
        raise IndexError(f"Target {checked[outside.argmax()]} is out of bounds.")
    safe = np.where(kept, target, 0)
    chosen = np.ones(target.shape, self.dtype) if weight is None else weight[safe]
    return np.where(kept, chosen, 0).astype(self.dtype), safe


@silent
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    weights, safe = _nll_weights(self, target, weight, ignore_index)
    picked = self[safe] if self.ndim == 1 else self[np.arange(self.shape[0]), safe]
    loss = -weights * picked
    total = np.sum(weights)
    if reduction == _NONE:
        return loss, _array(total if self.ndim == 1 else 0, self.dtype)
    if reduction == _SUM:
        return _array(np.sum(loss), self.dtype), _array(total, self.dtype)
    return _array(np.sum(loss) / total, self.dtype), _array(total, self.dtype)


@silent
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    weights, safe = _nll_weights(self, target, weight, ignore_index)
    scale = grad_output
    if reduction == _MEAN:
        scale = grad_output / total_weight
    grad_input = np.zeros(self.shape, self.dtype)
    if self.ndim == 1:
        grad_input[safe] = -weights * scale
    else:
        grad_input[np.arange(self.shape[0]), safe] = -weights * scale
    return grad_input


def _spatial_rows(self, target):
    """(N, C, H, W) scores and (N, H, W) targets as nll_loss's (N·H·W, C) and (N·H·W,)."""
    if target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if self.ndim != 4:
        raise RuntimeError("only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {self.ndim}")
    if target.shape != self.shape[:1] + self.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)} , target: "
                           f"{list(target.shape)}")
    return np.moveaxis(self, 1, -1).reshape(-1, self.shape[1]), target.reshape(-1)


@silent
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    rows, targets = _spatial_rows(self, target)
    output, total = nll_loss_forward(rows, targets, weight, reduction, ignore_index)
    return (output.reshape(target.shape) if reduction == _NONE else output), total


@silent
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index,
                        total_weight):
    rows, targets = _spatial_rows(self, target)
    if reduction == _NONE:
        grad_output = grad_output.reshape(-1)
    grad_rows = nll_loss_backward(grad_output, rows, targets, weight, reduction, ignore_index,
                                  total_weight)
    n, classes, *spatial = self.shape
    return np.ascontiguousarray(np.moveaxis(grad_rows.reshape(n, *spatial, classes), -1, 1))


_LOG_CLAMP = -100.0  # PyTorch clamps log(x) at -100 so a 0 or 1 input gives a finite loss
_BCE_EPSILON = 1e-12


def binary_cross_entropy(self, target, weight=None, reduction=_MEAN):
    if np.any((self < 0) | (self > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if np.any((target < 0) | (target > 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(self), _LOG_CLAMP)
        log_1mx = np.maximum(np.log1p(-self), _LOG_CLAMP)
    loss = (target - 1) * log_1mx - target * log_x
    if weight is not None:
        loss = loss * weight
    return _reduce(_array(loss, self.dtype), reduction)


@silent
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=_MEAN):
    slope = (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    if weight is not None:
        slope = slope * weight
    return _array(slope * _per_element(grad_output, self.shape, reduction), self.dtype)


@silent
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None,
                                     reduction=_MEAN):
    softplus_neg = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)  # -log(sigmoid(x))
    if pos_weight is not None:
        loss = (1 - target) * self + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * self + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(_array(loss, result_type(self, target)), reduction)


# Dropout draws from the default generator (runtime.random.Generator), which installs
# itself here when runtime.random is imported: that module sits above the Tensor class,
# which its states are, and this one below.
_generator: list[Any] = [None]


def set_generator(generator: Any) -> None:
    """Use `generator` for the random kernels (dropout masks)."""
    _generator[0] = generator


@silent
def native_dropout(input, p, train):
    """PyTorch's CPU kernel: keep each element with probability 1 - p (a bernoulli_ mask),
    then input * mask * (1 / (1 - p))."""
    if train is False:
        return input.copy(), np.ones(input.shape, np.bool_)
    keep = 1.0 - p
    mask = sampling.place(sampling.bernoulli_scalar(_generator[0], input.size, keep), input,
                          np.bool_)
    scale = 0.0 if keep == 0 else 1.0 / keep
    return _array(input * mask * scale, input.dtype), mask


@silent
def native_dropout_backward(grad_output, mask, scale):
    # An integer or bool grad_output gives the default float dtype, as in PyTorch.
    return _array(grad_output * mask * scale, _float_type(grad_output))


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype.kind not in "iu" or indices.dtype in _NOT_INDEX_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_dtype_name(indices)}Tensor instead (while "
            "checking arguments for embedding)"
        )
    if np.any((indices < 0) | (indices >= weight.shape[0])):
        raise IndexError("index out of range in self")
    return weight[indices]


@silent
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = indices.reshape(-1)
    rows = grad_output.reshape(flat.size, -1)
    keep = flat != padding_idx
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat][:, None]
    grad_weight = np.zeros((num_weights, rows.shape[1]), grad_output.dtype)
    np.add.at(grad_weight, flat[keep], rows[keep])
    return grad_weight


def _layer_norm_axes(input, normalized_shape) -> tuple[int, ...]:
    normalized_shape = tuple(normalized_shape)
    start = input.ndim - len(normalized_shape)
    if start < 0 or input.shape[start:] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}"
        )
    return tuple(range(start, input.ndim))


@silent
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    if not len(normalized_shape):
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and value.shape != tuple(normalized_shape):
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(value.shape)} and normalized_shape "
                               f"= {list(normalized_shape)}")
    axes = _layer_norm_axes(input, normalized_shape)
    mean = np.mean(input, axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(np.var(input, axis=axes, keepdims=True) + eps)
    output = (input - mean) * rstd
    if weight is not None:
        output = output * weight
    if bias is not None:
        output = output + bias
    return _array(output, input.dtype), _array(mean, input.dtype), _array(rstd, input.dtype)


@silent
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """All three gradients; PyTorch skips those output_mask turns off, gradgen's nodes ignore
    them instead."""
    axes = _layer_norm_axes(input, normalized_shape)
    batch_axes = tuple(range(input.ndim - len(axes)))
    normalized = (input - mean) * rstd
    scaled = grad_out if weight is None else grad_out * weight
    count = int(np.prod([input.shape[a] for a in axes]))
    grad_input = rstd / count * (
        count * scaled
        - np.sum(scaled, axis=axes, keepdims=True)
        - normalized * np.sum(scaled * normalized, axis=axes, keepdims=True)
    )
    grad_weight = np.sum(grad_out * normalized, axis=batch_axes)
    grad_bias = np.sum(grad_out, axis=batch_axes)
    return (_array(grad_input, input.dtype), _array(grad_weight, input.dtype),
            _array(grad_bias, input.dtype))


# -- batch norm, activations, losses ----------------------------------------------------------

def _channel_shape(input: np.ndarray) -> tuple[int, ...]:
    """The shape a per-channel vector broadcasts as against (N, C, *): (1, C, 1, ...)."""
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


@silent
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Normalize each channel (dimension 1) over the batch and every other dimension.

    Training uses the batch's mean and biased variance, and blends them into running_mean and
    running_var in place when given (the variance unbiased, as torch keeps it); it returns the
    batch mean and 1/sqrt(var + eps) as save_mean and save_invstd. Eval mode normalizes by
    the running stats and returns those two empty, as torch's CPU kernel does.
    """
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected 2 or more dimensions (got {input.ndim})")
    channels = input.shape[1]
    for name, value in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if value is not None and value.size != channels:
            raise RuntimeError(
                f"{name} should contain {channels} elements not {value.size}")
    shape = _channel_shape(input)
    axes = (0,) + tuple(range(2, input.ndim))
    if training:
        mean = np.mean(input, axis=axes)
        var = np.mean(np.square(input - mean.reshape(shape)), axis=axes)
        invstd = 1.0 / np.sqrt(var + eps)
        count = input.size // channels if channels else 0
        if running_mean is not None:
            running_mean *= 1 - momentum
            running_mean += (momentum * mean).astype(running_mean.dtype)
        if running_var is not None:
            unbiased = var * (count / (count - 1)) if count > 1 else var * math.inf
            running_var *= 1 - momentum
            running_var += (momentum * unbiased).astype(running_var.dtype)
        save_mean, save_invstd = _array(mean, input.dtype), _array(invstd, input.dtype)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        mean, invstd = running_mean, 1.0 / np.sqrt(running_var + eps)
        save_mean = save_invstd = np.empty((0,), input.dtype)
    output = (input - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        output = output * weight.reshape(shape)
    if bias is not None:
        output = output + bias.reshape(shape)
    return _array(output, input.dtype), save_mean, save_invstd


def _floats_only(name: str, self: np.ndarray) -> None:
    """torch's CPU kernels of these activations are compiled for floating types only."""
    if self.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{_dtype_name(self)}'")


def silu(self):
    _floats_only("silu", self)
    return _unary_float(lambda x: x * _sigmoid(x), self)


def mish(self):
    _floats_only("mish", self)
    return _unary_float(lambda x: x * np.tanh(np.logaddexp(0, x)), self)


def elu(self, alpha=1, scale=1, input_scale=1):
    """scale * x above 0, scale * alpha * (exp(input_scale * x) - 1) at or below it."""
    _floats_only("elu", self)
    _check_fits_all(_opmath(self.dtype), alpha, scale, input_scale)

    def function(x):
        return np.where(x > 0, x * scale, np.expm1(x * input_scale) * (alpha * scale))
    return _unary_float(function, self)


def hardtanh(self, min_val=-1, max_val=1):
    if self.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    _check_fits_all(self.dtype, min_val, max_val)
    return _array(np.minimum(np.maximum(self, min_val), max_val), self.dtype)


def _scalar_tail(shape, dtype, vector_bytes=32):
    """Which elements of a contiguous result torch's CPU loop computes one at a time.

    torch runs an elementwise kernel over a contiguous run of n elements in steps of two
    SIMD vectors (2 * vector_bytes bytes; 32-byte vectors for most kernels, 64-byte ones for
    the kernels it also builds for AVX512, on a CPU that has it), then the last n mod step
    elements with the kernel's scalar code. Where the two codes answer a NaN differently (a
    vector comparison with NaN is false; a scalar kernel may test the opposite condition and
    take its other branch), torch's result at a NaN depends on its position; the backward
    kernels of hardtanh, the shrinks and elu follow it, elementwise in C order."""
    count = math.prod(shape)
    step = 2 * vector_bytes // np.dtype(dtype).itemsize
    return (np.arange(count) >= count - count % step).reshape(shape)


def _nan_in_tail(self, grad, vector_bytes=32):
    """Where self is NaN and torch's scalar code computes the element (see _scalar_tail)."""
    shape = np.broadcast_shapes(np.shape(self), np.shape(grad))
    return np.isnan(self) & _scalar_tail(shape, np.result_type(self, grad), vector_bytes)


def hardtanh_backward(grad_output, self, min_val, max_val):
    """hardtanh's gradient: grad_output strictly inside (min_val, max_val), 0 elsewhere
    (at the ends too). At NaN: 0 where torch's vector code runs, grad_output in its scalar
    tail (whose test is `self <= min_val || self >= max_val`)."""
    inside = (self > min_val) & (self < max_val) | _nan_in_tail(self, grad_output)
    return _array(np.where(inside, grad_output, 0), grad_output.dtype)


def hardsigmoid(self):
    _floats_only("hardsigmoid", self)
    return _unary_float(lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6, self)


def hardswish(self):
    _floats_only("hardswish", self)
    return _unary_float(lambda x: x * np.minimum(np.maximum(x + 3, 0), 6) / 6, self)


def log_sigmoid_forward(self):
    """(log(sigmoid(x)), exp(-|x|)): -log(1 + e^-x) computed without overflow."""
    _floats_only("log_sigmoid", self)
    dtype = _float_type(self)
    x = _as(self, dtype)
    buffer = quietly(np.exp, -np.abs(x))
    output = np.minimum(x, 0) - np.log1p(buffer)
    return _array(output, dtype), _array(buffer, dtype)


def glu(self, dim=-1):
    """a * sigmoid(b) for the halves a, b of self along dim."""
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _floats_only("glu", self)
    dim = _glu_dim(self, dim)
    size = self.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {size}")
    first, second = np.split(self, 2, axis=dim)
    return _array(first * _sigmoid(second), self.dtype)


def _glu_dim(self: np.ndarray, dim: int) -> int:
    if not -self.ndim <= dim < self.ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-self.ndim}, "
            f"{self.ndim - 1}], but got {dim})")
    return dim % self.ndim


@silent
def huber_loss(self, target, reduction=1, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    # the result takes self's dtype (a float64 target does not widen a float32 input)
    dtype = result_type(self, target)
    if dtype.kind not in "fV":
        raise NotImplementedError(f"\"huber_cpu\" not implemented for '{_dtype_name(self)}'")
    dtype = self.dtype if self.dtype.kind in "fV" else dtype
    difference = np.abs(_as(self, dtype) - _as(target, dtype))
    loss = np.where(difference < delta, 0.5 * difference * difference,
                    delta * (difference - 0.5 * delta))
    if reduction == 1:
        return _array(np.mean(loss), dtype)
    if reduction == 2:
        return _array(np.sum(loss), dtype)
    return _array(loss, dtype)


# -- nn kernels B: activation and loss backwards, distances, norms (issue 27, helper nnB) ---

def _iterator_dtypes(first: Any, *others: Any) -> None:
    """A TensorIterator that checks all its inputs share the first one's dtype: torch's
    message names the first that does not."""
    for other in others:
        if isinstance(other, np.ndarray) and other.dtype != first.dtype:
            raise RuntimeError(
                f"Found dtype {_dtype_name(other)} but expected {_dtype_name(first)}")


@silent
def glu_backward(grad_output, self, dim):
    """glu's gradient: grad sigmoid(b) for the first half a, grad a s (1 - s) for the
    second half b (s = sigmoid(b)), joined along dim."""
    if self.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _glu_dim(self, dim)
    size = self.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim} is size {size}")
    _iterator_dtypes(self, grad_output)
    first, second = np.split(self, 2, axis=dim)
    _broadcastable(first, grad_output)
    gate = _sigmoid(second)
    grad_first = grad_output * gate
    grad_second = grad_first * first * (1 - gate)
    return _array(np.concatenate(np.broadcast_arrays(grad_first, grad_second), axis=dim),
                  self.dtype)


@silent
def log_sigmoid_backward(grad_output, self, buffer):
    """log_sigmoid's slope from buffer = exp(-|x|) (log_sigmoid_forward's second output):
    1 / (1 + buffer) below 0, buffer / (1 + buffer) from 0 on, times grad_output."""
    _iterator_dtypes(self, buffer, grad_output)
    _floats_only("log_sigmoid_backward", self)
    broadcast_shapes(broadcast_shapes(np.shape(self), np.shape(buffer)), np.shape(grad_output))
    negative = self < 0
    slope = np.where(negative, 1, 0) - np.where(negative, 1, -1) * (buffer / (1 + buffer))
    return _array(slope * grad_output, self.dtype)


@silent
def huber_loss_backward(grad_output, self, target, reduction, delta):
    """huber_loss's gradient: grad_output times self - target clamped to [-delta, delta],
    over the element count for the mean."""
    _iterator_dtypes(self, target, grad_output)
    _floats_only("huber_backward", self)
    shape = broadcast_shapes(np.shape(self), np.shape(target))
    size = int(np.prod(shape))
    norm = (1.0 / size if size else math.nan) if reduction == _MEAN else 1.0
    difference = self - target
    slope = np.where(difference < -delta, -delta, np.where(difference > delta, delta,
                                                           difference))
    result = (norm * slope) * grad_output
    return _array(np.broadcast_to(result, broadcast_shapes(shape, np.shape(result))),
                  self.dtype)


@silent
def _prelu_kernel(self, weight):
    """x above 0, weight * x elsewhere; weight already broadcasts against self."""
    _iterator_dtypes(self, weight)
    _floats_only("prelu", self)
    _broadcastable(self, weight)
    return _array(np.where(self > 0, self, weight * self), self.dtype)


@silent
def _prelu_kernel_backward(grad_output, self, weight):
    """(grad_input, grad_weight), each of the broadcast shape: grad_output above 0 and
    weight * grad_output elsewhere; 0 above 0 and self * grad_output elsewhere."""
    _iterator_dtypes(self, weight, grad_output)
    _floats_only("prelu_backward", self)
    _broadcastable(self, weight)
    shape = broadcast_shapes(broadcast_shapes(self.shape, weight.shape), grad_output.shape)
    above = np.broadcast_to(self > 0, shape)
    grad_input = np.where(above, grad_output, weight * grad_output)
    grad_weight = np.where(above, 0, self * grad_output)
    return _array(grad_input, self.dtype), _array(grad_weight, self.dtype)


def _vector_norm(values: np.ndarray, p: float, axes: tuple[int, ...]) -> np.ndarray:
    """The p-norm over `axes`, kept as size-1 dimensions (p > 0, or inf)."""
    magnitude = np.abs(values)
    if math.isinf(p):
        if not magnitude.size:
            return np.zeros([1 if d in axes else n for d, n in enumerate(values.shape)],
                            values.dtype)
        return np.max(magnitude, axis=axes, keepdims=True)
    if p == 1:
        return np.sum(magnitude, axis=axes, keepdims=True)
    if p == 2:
        return np.sqrt(np.sum(magnitude * magnitude, axis=axes, keepdims=True))
    return np.sum(magnitude ** p, axis=axes, keepdims=True) ** (1.0 / p)


def _cpp_number(value: float) -> str:
    """A double as C++'s ostream prints it (six significant digits: -1, 0.5, 1e+10)."""
    return f"{value:g}"


@silent
def renorm(self, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm, scaled to norm maxnorm (by
    maxnorm / (norm + 1e-7)); float32 computes the norm and the scale in float64."""
    if not float(p) > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not float(maxnorm) >= 0:
        raise RuntimeError(
            f"renorm: expected maxnorm to be >= 0 but got {_cpp_number(float(maxnorm))}")
    if self.ndim < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions")
    dim = _wrap_dim(dim, self.ndim)
    if self.dtype.kind not in "fV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_dtype_name(self)}")
    wide = self.astype(np.float64)
    axes = tuple(d for d in range(self.ndim) if d != dim)
    norm = _vector_norm(wide, float(p), axes)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return _array(wide * factor, self.dtype)


def one_hot(self, num_classes=-1):
    """An int64 array with one more dimension, of length num_classes (one more than the
    largest class by default): 1 at each value's position, 0 elsewhere."""
    if self.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if self.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(self.max()) + 1
    if self.size:
        if self.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if self.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (self[..., None] == np.arange(num_classes, dtype=np.int64)).astype(np.int64)


# Distances between rows: _euclidean_dist and _cdist_forward between two sets of rows (with
# batch dimensions that broadcast), _pdist_forward between the rows of one matrix, and the
# gradients of the last two, made by torch's CPU kernels' rules for each p.

@silent
def _euclidean_dist(x1, x2):
    """sqrt(max(0, |a|^2 - 2 a.b + |b|^2)) between the rows of x1 and of x2, by one matrix
    product of padded rows, as torch computes it (so its rounding too)."""
    for x in (x1, x2):
        if x.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {x.ndim}-D tensor.")
    if x1.dtype.kind not in "fV" or x2.dtype.kind not in "fV":
        raise RuntimeError("result type Float can't be cast to the desired output type Long")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_TYPE_NAMES[x1.dtype.str[1:]]} != "
                           f"{_C_TYPE_NAMES[x2.dtype.str[1:]]}")
    norm1 = np.sum(x1 * x1, axis=-1, keepdims=True)
    norm2 = np.sum(x2 * x2, axis=-1, keepdims=True)
    left = np.concatenate([x1 * -2, norm1, np.ones_like(norm1)], axis=-1)
    right = np.concatenate([x2, np.ones_like(norm2), norm2], axis=-1)
    if left.ndim == 2 and right.ndim == 2 and left.shape[1] != right.shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({left.shape[0]}x"
                           f"{left.shape[1]} and {right.shape[0]}x{right.shape[1]})")
    product = np.matmul(left, np.swapaxes(right, -1, -2))
    return _array(np.sqrt(np.maximum(product, 0)), x1.dtype)


def _distance_checks(x1: np.ndarray, x2: np.ndarray, p: float) -> None:
    """torch's checks of cdist's arguments, in its order."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. "
                           f"X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.kind not in "fV":
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_dtype_name(x)}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _norm_of_differences(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm over the last axis (p >= 0; p == 0 counts the nonzero entries)."""
    magnitude = np.abs(diff)
    if p == 0:
        return np.sum(magnitude != 0, axis=-1).astype(diff.dtype)
    if math.isinf(p):
        if not diff.shape[-1]:
            return np.zeros(diff.shape[:-1], diff.dtype)
        return np.max(magnitude, axis=-1)
    if p == 1:
        return np.sum(magnitude, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(magnitude * magnitude, axis=-1))
    return np.sum(magnitude ** p, axis=-1) ** (1.0 / p)


def _distance_slope(diff: np.ndarray, dist: np.ndarray, grad: np.ndarray,
                    p: float) -> np.ndarray:
    """d dist / d diff times grad, per pair and column (dist and grad have the pair axes,
    diff one more), by torch's CPU kernels' rules: 0 where the distance is 0, and for
    p < 1 where the difference is 0 too."""
    dist = dist[..., None]
    grad = grad[..., None]
    sign = np.sign(diff)
    if p == 0:
        return np.zeros_like(diff)
    if p == 1:
        return grad * sign
    if math.isinf(p):
        return grad * sign * (np.abs(diff) == dist)
    if p == 2:
        return np.where(dist == 0, 0, grad * diff / dist)
    if p < 2:
        zero = (dist == 0) | ((diff == 0) & (p < 1))
        return np.where(zero, 0, sign * np.abs(diff) ** (p - 1) * grad / dist ** (p - 1))
    return np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) * grad / dist ** (p - 1))


def _batch_expanded(x1: np.ndarray, x2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x1 and x2 with their batch dimensions (all but the last two) broadcast."""
    batch = broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    return (np.broadcast_to(x1, batch + x1.shape[-2:]),
            np.broadcast_to(x2, batch + x2.shape[-2:]))


@silent
def _cdist_forward(x1, x2, p, compute_mode):
    """The p-norm distance between each row of x1 and each row of x2: (..., P, R). For p == 2
    with compute_mode 1 (or 0 and more than 25 rows) torch takes the matrix-product path of
    _euclidean_dist, and so does this."""
    _distance_checks(x1, x2, p)
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    a, b = _batch_expanded(x1, x2)
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(a)} but found {_dtype_name(b)}")
    rows1, rows2 = a.shape[-2], b.shape[-2]
    if a.size == 0 or b.size == 0:
        return np.zeros(a.shape[:-1] + (rows2,), a.dtype)
    if p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        return _euclidean_dist(a, b)
    diff = a[..., :, None, :] - b[..., None, :, :]
    return _array(_norm_of_differences(diff, p), a.dtype)


@silent
def _cdist_backward(grad_output, x1, x2, p, cdist):
    """The gradient of _cdist_forward for x1, of x1's batch-broadcast shape (the engine sums
    it back to x1's own)."""
    a, b = _batch_expanded(x1, x2)
    if a.shape[-2] == 0 or b.shape[-2] == 0 or a.shape[-1] == 0 or not a.size:
        return np.zeros(a.shape, x1.dtype)
    diff = a[..., :, None, :] - b[..., None, :, :]
    slope = _distance_slope(diff, np.broadcast_to(cdist, diff.shape[:-1]),
                            np.broadcast_to(grad_output, diff.shape[:-1]), p)
    return _array(np.sum(slope, axis=-2), x1.dtype)


def _pdist_checks(self: np.ndarray, p: float) -> None:
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if self.dtype.kind not in "fV":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")


@silent
def _pdist_forward(self, p=2):
    """The p-norm distance between every pair of rows i < j of an (N, M) array, in order."""
    _pdist_checks(self, p)
    first, second = np.triu_indices(self.shape[0], 1)
    return _array(_norm_of_differences(self[first] - self[second], p), self.dtype)


@silent
def _pdist_backward(grad_output, self, p, pdist):
    """The gradient of _pdist_forward: each pair's slope added to its first row and taken
    from its second."""
    _pdist_checks(self, p)
    first, second = np.triu_indices(self.shape[0], 1)
    result = np.zeros(self.shape, self.dtype)
    if first.size and self.shape[1]:
        slope = _distance_slope(self[first] - self[second], pdist, grad_output, p)
        np.add.at(result, first, slope)
        np.subtract.at(result, second, slope)
    return result


# Batch norm's other ATen forms (torch.export's and torch.compile's decompositions) and its
# two backward ops, on native_batch_norm's kernel.

def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum,
                             eps):
    """native_batch_norm with running statistics (blended in place in training)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training,
                             momentum, eps)


def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    """native_batch_norm without running statistics: the batch's own, in either mode."""
    return native_batch_norm(input, weight, bias, None, None, True, momentum, eps)


def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
                                         momentum, eps):
    """native_batch_norm in eval mode: normalized by the running statistics."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum,
                             eps)


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """Training batch norm that updates the running statistics; a fourth, empty uint8 output
    is the reserve space (cudnn's; none on a CPU)."""
    return (*native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum,
                               eps), np.empty((0,), np.uint8))


def _batch_norm_no_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """Batch norm that leaves the running statistics alone: eval mode with them, the batch's
    own statistics without; and the empty reserve."""
    training = running_mean is None or running_var is None
    return (*native_batch_norm(input, weight, bias, running_mean, running_var, training,
                               momentum, eps), np.empty((0,), np.uint8))


@silent
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """The gradients of (input, weight, bias), from the saved batch statistics in training
    and the running ones in eval; those output_mask turns off are zeros (PyTorch leaves them
    undefined)."""
    shape = _channel_shape(input)
    axes = (0,) + tuple(range(2, input.ndim))
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = running_mean, 1.0 / np.sqrt(running_var + eps)
    mean, invstd = mean.reshape(shape), invstd.reshape(shape)
    normalized = (input - mean) * invstd
    scaled = grad_out if weight is None else grad_out * weight.reshape(shape)
    if train:
        grad_input = invstd * (scaled - np.mean(scaled, axis=axes, keepdims=True) - normalized
                               * np.mean(scaled * normalized, axis=axes, keepdims=True))
    else:
        grad_input = scaled * invstd
    grad_weight = np.sum(grad_out * normalized, axis=axes)
    grad_bias = np.sum(grad_out, axis=axes)
    results = (grad_input, grad_weight, grad_bias)
    return tuple(_array(r if wanted else np.zeros_like(r), input.dtype)
                 for r, wanted in zip(results, output_mask, strict=True))


def batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_var,
                        update, eps, output_mask, reserve):
    """_batch_norm_with_update's and _batch_norm_no_update's backward: native_batch_norm's,
    in training when the statistics were the batch's (update, or none given)."""
    train = update or running_mean is None or running_var is None
    return native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_var, train, eps, output_mask)


@silent
def _safe_softmax(self, dim, dtype=None):
    """softmax (in dtype, when given), with 0 where a whole slice is -inf (torch's softmax
    gives NaN there): attention's rows that mask every position."""
    values = self if dtype is None else _as(self, np.dtype(dtype))
    axis = _softmax_input(values, dim, False)
    if not values.size:
        return np.empty(values.shape, values.dtype)
    top = np.max(values, axis=axis, keepdims=True)
    masked = top == -math.inf
    shifted = np.exp(values - np.where(masked, 0, top))
    result = shifted / np.sum(shifted, axis=axis, keepdims=True)
    return _array(np.where(masked, 0, result), values.dtype)


@silent
def _masked_softmax(self, mask, dim=None, mask_type=None):
    """softmax along dim (the last by default) with the positions mask marks True left out
    (a slice masked throughout is NaN, as torch's CPU kernel gives it). mask has self's
    shape; or, for a 4-d (B, H, L, L) self, mask_type 0 takes an (L, L) mask and 1 a (B, L)
    one."""
    if mask.dtype != np.bool_:
        raise RuntimeError("Mask should be a boolean tensor")
    if self.ndim == 4 and mask.ndim == 2 and mask_type in (0, 1):
        mask = mask[None, None] if mask_type == 0 else mask[:, None, None, :]
        _broadcastable(self, mask)
        mask = np.broadcast_to(mask, self.shape)
    elif mask.shape != self.shape:
        raise RuntimeError("For mask_type == 2 mask shape should match input shape")
    axis = _wrap_dim(-1 if dim is None else dim, self.ndim)
    _floats_only("masked_softmax", self)
    masked = np.where(mask, -math.inf, self)
    shifted = np.exp(masked - np.max(masked, axis=axis, keepdims=True))
    return _array(shifted / np.sum(shifted, axis=axis, keepdims=True), self.dtype)


# segment_reduce: data reduced over consecutive segments along axis, their lengths given
# per leading index (lengths has data's dimensions up to axis, then the segments).

_SEGMENT_REDUCTIONS = ("sum", "prod", "mean", "max", "min")
_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": math.nan, "max": -math.inf,
                  "min": math.inf}


def _segment_lengths(data: np.ndarray, reduce: str, lengths: Any, offsets: Any, axis: int,
                     unsafe: bool) -> tuple[np.ndarray, int]:
    """The segments' lengths as (leading..., S), and axis made non-negative."""
    if reduce not in _SEGMENT_REDUCTIONS and reduce not in ("amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = _wrap_dim(axis, data.ndim)
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    given = lengths if lengths is not None else offsets
    if given.dtype.kind not in "iu":
        kernel = "lengths" if lengths is not None else "offsets"
        raise NotImplementedError(f'"_segment_reduce_{kernel}_cpu_kernel1" not implemented '
                                  f"for '{_dtype_name(given)}'")
    if given.ndim - 1 != axis:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                           f"{'lengths' if lengths is not None else 'offsets'} but got {axis}.")
    lengths = given if lengths is not None else np.diff(given, axis=-1)
    if not unsafe and np.any(np.sum(lengths, axis=-1) != data.shape[axis]):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    return lengths, axis


def _segments(lengths: np.ndarray) -> Any:
    """(leading index, segment index, start, end) of every segment."""
    starts = np.cumsum(lengths, axis=-1) - lengths
    for lead in np.ndindex(*lengths.shape[:-1]):
        for segment in range(lengths.shape[-1]):
            start = int(starts[lead + (segment,)])
            yield lead, segment, start, start + int(lengths[lead + (segment,)])


@silent
def segment_reduce(data, reduce, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Each segment of data along axis reduced to one value: sum, prod, mean, max (amax) or
    min (amin), starting from initial when given (an empty segment gives initial, or the
    reduction's identity; mean's is NaN)."""
    lengths, axis = _segment_lengths(data, reduce, lengths, offsets, axis, unsafe)
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    shape = data.shape[:axis] + (lengths.shape[-1],) + data.shape[axis + 1:]
    result = np.empty(shape, data.dtype)
    for lead, segment, start, end in _segments(lengths):
        piece = data[lead + (slice(start, end),)]
        result[lead + (segment,)] = _segment_value(piece, reduce, initial)
    return result


def _segment_value(piece: np.ndarray, reduce: str, initial: Any) -> Any:
    if not piece.shape[0]:
        return _SEGMENT_EMPTY[reduce] if initial is None else initial
    if reduce == "mean":  # torch divides initial + sum by the length
        return (np.sum(piece, axis=0) + (0 if initial is None else initial)) / piece.shape[0]
    value = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}[reduce](piece, axis=0)
    if initial is None:
        return value
    combine = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
    return combine[reduce](value, initial)


@silent
def _segment_reduce_backward(grad_output, output, data, reduce, lengths=None, offsets=None,
                             axis=0, initial=None):
    """segment_reduce's gradient for data: sum's passes to every element, mean's divided by
    the count, max's and min's shared by the elements equal to the result, prod's the
    product of the segment's other elements (and initial)."""
    lengths, axis = _segment_lengths(data, reduce, lengths, offsets, axis, True)
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    result = np.zeros(data.shape, data.dtype)
    for lead, segment, start, end in _segments(lengths):
        if end == start:
            continue
        piece = data[lead + (slice(start, end),)]
        grad = grad_output[lead + (segment,)]
        result[lead + (slice(start, end),)] = _segment_grad(piece, grad,
                                                            output[lead + (segment,)], reduce,
                                                            initial)
    return result


def _segment_grad(piece: np.ndarray, grad: Any, value: Any, reduce: str, initial: Any) -> Any:
    if reduce == "sum":
        return np.broadcast_to(grad, piece.shape)
    if reduce == "mean":
        return np.broadcast_to(grad / piece.shape[0], piece.shape)
    if reduce in ("max", "min"):
        hits = piece == value
        return np.where(hits, grad / np.maximum(np.sum(hits, axis=0), 1), 0)
    others = np.stack([np.prod(np.delete(piece, i, axis=0), axis=0)
                       for i in range(piece.shape[0])])
    return grad * others * (1 if initial is None else initial)


# The margin losses over class scores: (C) or (N, C) input, int64 class targets.

def _margin_frames(self: np.ndarray) -> tuple[int, int]:
    """(frames, classes) of a (C) or (N, C) input, or torch's error for an empty one."""
    ndim = self.ndim
    if not ((ndim == 2 and self.shape[1] != 0) or (ndim == 1 and self.shape[0] != 0)
            or ndim == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(self.shape)}")
    if ndim <= 1:
        return 1, 1 if ndim == 0 else self.shape[0]
    return self.shape[0], self.shape[1]


def _long_target(target: np.ndarray) -> None:
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dtype_name(target)}")


def _margin_reduce(loss: np.ndarray, reduction: int, shape: tuple, dtype: np.dtype) -> Any:
    if reduction == _NONE:
        return _array(loss.reshape(shape), dtype)
    return _array(np.mean(loss) if reduction == _MEAN else np.sum(loss), dtype)


@silent
def multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=_MEAN):
    """Σ_{j≠y} max(0, margin - x[y] + x[j])^p (times weight[y]) / C per sample."""
    frames, classes = _margin_frames(self)
    _long_target(target)
    if target.ndim > 1 or target.size != frames:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{frames}], but got {list(target.shape)}. Input has shape "
                           f"{list(self.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.size != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    labels = target.reshape(frames)
    if np.any((labels < 0) | (labels >= classes)):
        raise RuntimeError("target out of range")
    scores = self.reshape(frames, classes)
    rows = np.arange(frames)
    hinge = np.maximum(margin - scores[rows, labels][:, None] + scores, 0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[labels][:, None]
    hinge[rows, labels] = 0
    loss = np.sum(hinge, axis=1) / classes
    return _margin_reduce(loss, reduction, target.shape, self.dtype)


def _listed_classes(labels: np.ndarray, classes: int) -> np.ndarray:
    """How often each class is listed in each row's targets, up to the row's first -1."""
    valid = np.cumsum(labels < 0, axis=1) == 0
    counts = np.zeros(labels.shape[:1] + (classes,))
    for column in range(labels.shape[1]):
        listed = valid[:, column]
        counts[np.nonzero(listed)[0], labels[listed, column]] += 1
    return counts


@silent
def multilabel_margin_loss_forward(self, target, reduction):
    """(loss, is_target): Σ_j Σ_i max(0, 1 - (x[j] - x[i])) / C per sample over the target
    classes j (those listed in target up to its first -1) and the others i; is_target marks
    the target classes with 1 (in self's dtype)."""
    frames, classes = _margin_frames(self)
    _long_target(target)
    if self.ndim <= 1:
        if target.ndim > 1 or target.size != classes:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                               f"size: {list(self.shape)}")
    elif target.ndim != 2 or target.shape[0] != frames or target.shape[1] != classes:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(self.shape)}")
    labels = target.reshape(frames, classes)
    if np.any((labels < -1) | (labels >= classes)):
        raise RuntimeError("argument #2 'target' is out of range")
    counts = _listed_classes(labels, classes)
    is_target = (counts > 0).astype(self.dtype)
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]
    scores = self.reshape(frames, classes)
    hinge = np.maximum(1 - scores[:, :, None] + scores[:, None, :], 0)
    loss = np.sum(hinge * pairs, axis=(1, 2)) / classes
    shape = (frames,) if self.ndim > 1 else ()
    return (_margin_reduce(loss, reduction, shape, self.dtype),
            _array(is_target.reshape(target.shape), self.dtype))


@silent
def embedding_renorm_(self, indices, max_norm, norm_type):
    """The rows of self that indices names, each scaled to norm max_norm where its
    norm_type-norm exceeds it (by max_norm / (norm + 1e-7)); a new array, written back into
    self by the caller."""
    if indices.dtype not in (np.int64, np.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"torch.{_TYPE_NAMES.get(indices.dtype.name, 'Bool')}Tensor instead "
                           "(while checking arguments for embedding_renorm_)")
    if self.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {self.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    if self.dtype.kind not in "fV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtype_name(self)} instead.")
    rows = np.unique(indices.reshape(-1))
    bad = rows[(rows < -self.shape[0]) | (rows >= self.shape[0])]
    if bad.size:
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size "
                         f"{list(self.shape)} at dimension 0")
    result = self.copy()
    if rows.size:
        norms = _vector_norm(result[rows], float(norm_type), (1,))
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        result[rows] = result[rows] * scale
    return result


@silent
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):  # noqa: N803
    """(output, mean, rstd): each sample's channels normalized in `group` groups by the
    group's mean and biased variance, then scaled and shifted per channel; mean and rstd
    (1 / sqrt(var + eps)) are (N, group)."""
    if group <= 0 or C % group:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and (parameter.ndim != 1 or parameter.size != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(parameter.shape)} and input of shape "
                               f"{list(input.shape)}")
    if input.size != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    grouped = input.reshape(N, group, C // group * HxW)
    mean = np.mean(grouped, axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(np.mean(np.square(grouped - mean), axis=-1, keepdims=True) + eps)
    output = ((grouped - mean) * rstd).reshape(input.shape)
    channel = (1, C) + (1,) * (input.ndim - 2)
    if weight is not None:
        output = output * weight.reshape(channel)
    if bias is not None:
        output = output + bias.reshape(channel)
    return (_array(output, input.dtype), _array(mean.reshape(N, group), input.dtype),
            _array(rstd.reshape(N, group), input.dtype))


@silent
def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """The product of i1, i2 and i3, each given size-1 dimensions at its expand positions
    (so that the three line up), summed over sumdim: bilinear's kernel."""
    dtype = result_type(i1, i2, i3)
    expanded = [np.expand_dims(x, tuple(sorted(dims))) if dims else x
                for x, dims in ((i1, expand1), (i2, expand2), (i3, expand3))]
    for x in expanded[1:]:
        if x.ndim != expanded[0].ndim:
            raise RuntimeError("number of dimensions of the expanded tensors must match")
    product = expanded[0] * expanded[1] * expanded[2]
    if sumdim:
        product = np.sum(product, axis=tuple(sumdim))
    return _array(product, dtype)


def _pack_padded_sequence(input, lengths, batch_first):
    """(data, batch_sizes): the rows of a padded batch (steps, batch, *) (or (batch, steps,
    *)) that its sequences cover, time step by time step, and how many sequences each step
    has; the lengths sorted longest first."""
    if lengths.dtype != np.int64 or lengths.ndim != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D cpu {_dtype_name(lengths)} tensor")
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{builtins.max(input.ndim, 1)}, {builtins.max(input.ndim, 1) - 1}], "
                         "but got 1)")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if lengths.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.size} (batch_size={batch})")
    if batch and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[:-1] < lengths[1:]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    if batch and lengths[0] > steps:
        raise RuntimeError(f"a sequence length ({int(lengths[0])}) exceeds the padded batch's "
                           f"{steps} steps")
    longest = int(lengths[0]) if batch else 0
    time, sample = np.nonzero(np.arange(longest)[:, None] < lengths[None, :])
    rows = sample * steps + time if batch_first else time * batch + sample
    flat = input.reshape((input.shape[0] * input.shape[1],) + input.shape[2:])
    batch_sizes = np.sum(np.arange(longest)[:, None] < lengths[None, :], axis=1)
    return flat[rows], batch_sizes.astype(np.int64)


# The fused recurrent cells (torch runs them on CUDA only; gradgen on numpy): the gate
# pre-activations come in computed (input @ w_ih.T and hx @ w_hh.T), biases apart.

def _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias, chunks):
    if input_gates.shape != hidden_gates.shape:
        raise RuntimeError(f"_thnn_fused cell: input_gates of shape {list(input_gates.shape)} "
                           f"and hidden_gates of shape {list(hidden_gates.shape)} differ")
    if input_gates.ndim != 2 or input_gates.shape[1] % chunks:
        raise RuntimeError(f"_thnn_fused cell: expected gates of shape (batch, {chunks} * "
                           f"hidden), got {list(input_gates.shape)}")
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    return input_gates, hidden_gates


@silent
def _thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """(hy, cy, workspace): i, f, o = sigmoid and g = tanh of the summed gates' four chunks,
    cy = f cx + i g, hy = o tanh(cy); workspace holds the activated gates."""
    inputs, hidden = _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias, 4)
    ingate, forgetgate, cellgate, outgate = np.split(inputs + hidden, 4, axis=1)
    ingate, forgetgate, outgate = _sigmoid(ingate), _sigmoid(forgetgate), _sigmoid(outgate)
    cellgate = np.tanh(cellgate)
    cy = forgetgate * cx + ingate * cellgate
    hy = outgate * np.tanh(cy)
    workspace = np.concatenate([ingate, forgetgate, cellgate, outgate], axis=1)
    dtype = input_gates.dtype
    return _array(hy, dtype), _array(cy, dtype), _array(workspace, dtype)


@silent
def _thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """(hy, workspace): r = sigmoid(i_r + h_r), z = sigmoid(i_z + h_z),
    n = tanh(i_n + r h_n), hy = n + z (hx - n); workspace holds r, z, n, hx and h_n."""
    inputs, hidden = _cell_gates(input_gates, hidden_gates, input_bias, hidden_bias, 3)
    input_r, input_z, input_n = np.split(inputs, 3, axis=1)
    hidden_r, hidden_z, hidden_n = np.split(hidden, 3, axis=1)
    resetgate = _sigmoid(input_r + hidden_r)
    inputgate = _sigmoid(input_z + hidden_z)
    newgate = np.tanh(input_n + resetgate * hidden_n)
    hy = newgate + inputgate * (hx - newgate)
    workspace = np.concatenate([resetgate, inputgate, newgate, hx, hidden_n], axis=1)
    dtype = input_gates.dtype
    return _array(hy, dtype), _array(workspace, dtype)


def constant_pad_nd(self, pad, value=0):
    """Pad the last len(pad) / 2 dimensions with `value`: pad[0], pad[1] before and after
    the last one, pad[2], pad[3] the one before it, ...; a negative amount crops."""
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(
            # (torch's message lacks the two spaces after the numbers)
            "Length of pad should be no more than twice the number of dimensions of the "
            f"input. Pad length is {len(pad)}while the input has {self.ndim}dimensions.")
    widths = [(0, 0)] * self.ndim
    crops = [slice(None)] * self.ndim
    for i in range(len(pad) // 2):
        dim = self.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        size = self.shape[dim] + before + after
        if size < 0:  # torch crops with narrow, whose check this is
            raise RuntimeError("narrow(): length must be non-negative.")
        crops[dim] = slice(builtins.max(-before, 0), self.shape[dim] - builtins.max(-after, 0))
        widths[dim] = (builtins.max(before, 0), builtins.max(after, 0))
    check_fits(value, self.dtype)
    return np.pad(self[tuple(crops)], widths, constant_values=_as(value, self.dtype))


def elu_(self, alpha=1, scale=1, input_scale=1):
    return elu(self, alpha, scale, input_scale)


def leaky_relu_(self, negative_slope=0.01):
    return leaky_relu(self, negative_slope)


def _pad_positions(reflect: bool, size: int, before: int, after: int) -> np.ndarray:
    """The input position each output position copies along one padded dimension: mirrored
    about the edge elements (reflect, which repeats no edge), or the nearest edge element
    (replicate). A negative amount crops."""
    positions = np.arange(-before, size + after, dtype=np.int64)
    if not reflect:
        return np.clip(positions, 0, size - 1)
    period = 2 * (size - 1)
    if period == 0:
        return np.zeros_like(positions)
    positions = np.abs(positions) % period
    return np.where(positions >= size, period - positions, positions)


def _index_pad(self: np.ndarray, padding: Any, reflect: bool) -> np.ndarray:
    """reflection_pad{1,2,3}d / replication_pad{1,2,3}d: pad the last len(padding) / 2
    dimensions of a batched or unbatched input by copying its own elements."""
    padding = list(padding)
    dims = len(padding) // 2
    name = f"{'reflection' if reflect else 'replication'}_pad{dims}d"
    batched = self.ndim == dims + 2
    if self.ndim not in (dims + 1, dims + 2) or 0 in self.shape[1 if batched else 0:]:
        raise RuntimeError(
            f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly 0 batch "
            "size and other non-zero dimensions for input, but got: "
            f"{list(self.shape)}")
    for i in range(dims):
        dim, (before, after) = self.ndim - 1 - i, padding[2 * i: 2 * i + 2]
        if reflect and (before >= self.shape[dim] or after >= self.shape[dim]):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({before}, {after}) at dimension {dim} "
                f"of input {list(self.shape)}")
    width = self.shape[-1] + padding[0] + padding[1]
    if dims == 1 and width < 1:
        raise RuntimeError(f"input (W: {self.shape[-1]}) is too small. Calculated output W: "
                           f"{width}")
    if self.dtype == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    result = self
    for i in range(dims):
        dim = self.ndim - 1 - i
        positions = _pad_positions(reflect, self.shape[dim], padding[2 * i],
                                   padding[2 * i + 1])
        result = np.take(result, positions, axis=dim)
    return result


def reflection_pad1d(self, padding):
    return _index_pad(self, padding, True)


def reflection_pad2d(self, padding):
    return _index_pad(self, padding, True)


def reflection_pad3d(self, padding):
    return _index_pad(self, padding, True)


def replication_pad1d(self, padding):
    return _index_pad(self, padding, False)


def replication_pad2d(self, padding):
    return _index_pad(self, padding, False)


def replication_pad3d(self, padding):
    return _index_pad(self, padding, False)


def _index_pad_backward(grad_output, self, padding, reflect):
    """The gradient of a reflect or replicate pad: along each padded dimension (the last
    len(padding) // 2), every output position's gradient is added to the input position it
    copied, so an edge element copied three times gets three gradients."""
    grad = np.asarray(grad_output)
    for i in range(len(padding) // 2):
        dim = self.ndim - 1 - i
        positions = _pad_positions(reflect, self.shape[dim], padding[2 * i],
                                   padding[2 * i + 1])
        shape = list(grad.shape)
        shape[dim] = self.shape[dim]
        summed = np.zeros(shape, dtype=grad.dtype)
        np.add.at(np.moveaxis(summed, dim, 0), positions, np.moveaxis(grad, dim, 0))
        grad = summed
    return _array(grad, grad_output.dtype)


@silent
def reflection_pad1d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, True)


@silent
def reflection_pad2d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, True)


@silent
def reflection_pad3d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, True)


@silent
def replication_pad1d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, False)


@silent
def replication_pad2d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, False)


@silent
def replication_pad3d_backward(grad_output, self, padding):
    return _index_pad_backward(grad_output, self, padding, False)
# -- tensor ops: scans, sorting, rounding, linalg ----------------------------------------------
# The kernels of the ops programs reach for once the basics work: running sums, sorting and
# top-k, triangles, rounding, rolling, scatter, lerp, integer division and small linear
# algebra. Each follows torch 2.13 in dtypes (integers stay integers where torch keeps them)
# and in its messages for bad input.

_TYPE_NAMES["float16"] = "Half"  # torch.float16's name in messages
_TYPE_NAMES["bfloat16"] = "BFloat16"


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a singular matrix (a RuntimeError, as PyTorch's is). Its
    class name is PyTorch's too (torch._C._LinAlgError), as tracebacks show it."""


LinAlgError = _LinAlgError


def _dtype_label(array: np.ndarray) -> str:
    """The scalar type name PyTorch's dispatch messages quote: 'Long', 'Float', 'Half'."""
    return {"float16": "Half"}.get(array.dtype.name, _TYPE_NAMES.get(array.dtype.name,
                                                                       array.dtype.name))


def _not_for(kernel: str, array: np.ndarray, kinds: str) -> None:
    """PyTorch's NotImplementedError for a dtype its CPU kernel was not compiled for."""
    if array.dtype.kind not in kinds.replace("f", "fV"):  # (bfloat16's kind is V)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_label(array)}\'')


def _scan_axis(self: np.ndarray, dim: int) -> int:
    """The numpy axis of a scan along `dim`; a 0-dim tensor scans as one element."""
    return _wrap_dim(dim, self.ndim)


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The type a scan adds up in, as PyTorch's CPU kernels do (its `acc_type`): float16 in
    float32 and float32 in float64, each result rounded once; other dtypes in themselves."""
    return {np.dtype(np.float16): np.dtype(np.float32), _BFLOAT16: np.dtype(np.float32),
            np.dtype(np.float32): np.dtype(np.float64)}.get(np.dtype(dtype), np.dtype(dtype))


def _opmath(dtype: np.dtype) -> np.dtype:
    """The type PyTorch's elementwise kernels compute in: float32 for float16 (its
    `opmath_type`), every other dtype itself."""
    return np.dtype(np.float32) if dtype in _HALVES else np.dtype(dtype)


def _fused(a: Any, b: Any, c: Any, dtype: np.dtype) -> np.ndarray:
    """a * b + c rounded once (a fused multiply-add, as PyTorch's vectorised CPU kernels
    compute it), in dtype's opmath type, then rounded to dtype. Where an input is not finite,
    or the float64 emulation's splitting overflows (NaN), it is the plain a * b + c, which
    the hardware's gives there; a product beyond the dtype's range with a finite sum stays
    finite, as the hardware's."""
    work = _opmath(dtype)
    a, b, c = np.broadcast_arrays(*(np.asarray(x).astype(work, copy=False) for x in (a, b, c)))
    with silenced():
        plain = a * b + c
        fused = (cpu_math.fma64 if work == np.float64 else cpu_math.fma32)(a, b, c)
        exact = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & ~np.isnan(fused)
        return _array(np.where(exact, fused, plain), dtype)


@silent
def cumsum(self, dim, dtype=None):
    axis = _scan_axis(self, dim)
    out = _sum_dtype(self, dtype)
    if self.ndim == 0:
        return np.array(self, dtype=out, copy=True)
    return _array(np.cumsum(self, axis=axis, dtype=_accumulator(out)), out)


def logcumsumexp(self, dim):
    """log(cumsum(exp(self))) along dim, without overflow (numpy's logaddexp, accumulated)."""
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}'")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy()
    with silenced():
        return np.logaddexp.accumulate(self, axis=axis)


def cumprod(self, dim, dtype=None):
    axis = _scan_axis(self, dim)
    out = _sum_dtype(self, dtype)
    if self.ndim == 0:
        return np.array(self, dtype=out, copy=True)
    with silenced():
        return _array(np.cumprod(self.astype(out, copy=False), axis=axis,
                                 dtype=_accumulator(out)), out)


# How PyTorch's C++ messages name the element types: `long int`, `float`, `c10::Half`.
_CPP_TYPE_NAMES = {"int64": "long int", "int32": "int", "float32": "float", "float64": "double",
                   "float16": "c10::Half", "bool": "bool", "uint8": "unsigned char",
                   "int16": "short int", "int8": "signed char"}


def _scan_in_place(scan: Any, self: np.ndarray, dim: int, dtype: Any) -> None:
    """cumsum_ / cumprod_: the result is written over self, so a dtype= other than self's
    is refused (before anything is written)."""
    if dtype is not None and np.dtype(dtype) != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype "
                           f"{_CPP_TYPE_NAMES[self.dtype.name]} and output tensor dtype "
                           f"{_CPP_TYPE_NAMES[np.dtype(dtype).name]} should match")
    np.copyto(self, scan(self, dim, dtype), casting="unsafe")


def cumsum_(self, dim, dtype=None):
    _scan_in_place(cumsum, self, dim, dtype)


def cumprod_(self, dim, dtype=None):
    _scan_in_place(cumprod, self, dim, dtype)


def _sort_order(self: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable positions that sort `self` along `axis`; NaN counts as the largest value
    (last ascending, first descending), as PyTorch sorts it."""
    values = self.astype(np.int64) if self.dtype.kind == "b" else self
    if self.dtype.kind in "fV":
        nan = np.isnan(values)
        key = np.where(nan, 0, values)
        if descending:
            # lexsort sorts by its last key first: NaNs ahead, then larger values first.
            return np.lexsort((-key, ~nan), axis=axis)
        return np.lexsort((key, nan), axis=axis)
    if descending:
        return np.lexsort((np.negative(values.astype(np.int64)),), axis=axis)
    return np.argsort(values, axis=axis, kind="stable")


def _sorted_along(self: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    order = _sort_order(self, axis, descending).astype(np.int64)
    return np.take_along_axis(self, order, axis), order


def sort(self, dim=-1, descending=False):
    _no_complex_error(RuntimeError, " Sort does not support complex dtypes on CPU", self)
    return _sorted_along(self, dim, descending)


def sort_stable(self, stable, dim=-1, descending=False):
    return _sorted_along(self, dim, descending)


def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's argument name
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = _sorted_along(self, dim, largest)
    if self.ndim == 0:
        return values, indices
    key = _take(axis, slice(0, k))
    return np.array(values[key], copy=True), np.array(indices[key], copy=True)


def _triangle(self: np.ndarray, diagonal: int, name: str, keep: Any) -> np.ndarray:
    if self.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, columns = self.shape[-2:]
    mask = keep(np.arange(columns)[None, :] - np.arange(rows)[:, None], diagonal)
    return np.where(mask, self, np.zeros((), self.dtype))


def tril(self, diagonal=0):
    return _triangle(self, diagonal, "tril", np.less_equal)


def triu(self, diagonal=0):
    return _triangle(self, diagonal, "triu", np.greater_equal)


def log2(self):
    return _unary_float(np.log2, self)


def log10(self):
    """In float64, rounded back: numpy's float32 log10 is a few ulps off (log10(100) is
    2.0000002), where torch's is exact on powers of ten."""
    dtype = _float_type(self)
    return _array(quietly(np.log10, _as(self, np.float64)), dtype)


def _rounding(function: Any, kernel: str, self: np.ndarray) -> np.ndarray:
    """floor, ceil, round, trunc: integers come back unchanged (a copy), bool is refused."""
    _not_for(kernel, self, "iuf")
    if self.dtype.kind not in "fV":
        return self.copy()
    return _array(function(self), self.dtype)


def floor(self):
    return _rounding(np.floor, "floor_vml_cpu", self)


def ceil(self):
    return _rounding(np.ceil, "ceil_vml_cpu", self)


def trunc(self):
    return _rounding(np.trunc, "trunc_vml_cpu", self)


def round(self):  # noqa: A001 - the op's name
    return _rounding(np.rint, "round_vml_cpu", self)  # halves to even, as PyTorch rounds


def round_decimals(self, decimals):
    # decimals=0 is round's own (vectorized) kernel in torch, named so in its error
    _not_for("round_vml_cpu" if decimals == 0 else "round_cpu", self, "f")
    # PyTorch scales by 10**decimals, rounds half to even and scales back, in self's dtype
    # (dividing for negative decimals, so that 10**-d is never inexact).
    work = self.astype(_opmath(self.dtype), copy=False)  # halves in float32
    scale = work.dtype.type(10.0 ** builtins.abs(decimals))
    with silenced():
        if decimals >= 0:
            return _array(np.rint(work * scale) / scale, self.dtype)
        return _array(np.rint(work / scale) * scale, self.dtype)


@silent
def frac(self):
    _not_for("frac_cpu", self, "f")
    return _array(self - np.trunc(self), self.dtype)


def roll(self, shifts, dims=()):
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    if self.ndim == 0:  # roll wraps its dims without the scalar allowance of other ops
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    axes = tuple(_wrap_dim(d, self.ndim) for d in dims)
    return np.roll(self, tuple(shifts), axis=axes)


def masked_select(self, mask):
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(mask.shape, self.shape)  # PyTorch's order, in its message
    return np.array(np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)], copy=True)


def masked_scatter(self, mask, source):
    """self (broadcast with mask) with the elements where mask is true taken, in order, from
    the first elements of source."""
    if mask.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_dtype_label(mask)}")
    if source.dtype != self.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_dtype_label(self)} and {_dtype_label(source)}")
    shape = broadcast_shapes(self.shape, mask.shape)
    result = np.array(np.broadcast_to(self, shape), copy=True)
    where = np.broadcast_to(mask, shape)
    count = int(np.count_nonzero(where))
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    result[where] = np.asarray(source).reshape(-1)[:count]
    return result


def _scatter_shape_check(self, dim, index, src=None) -> None:
    """PyTorch's shape checks of scatter, before any numpy indexing (whose broadcast
    ValueError would otherwise leak out): index has self's (and src's) number of dimensions,
    and is no larger than self apart from `dim`, nor than src anywhere."""
    if not index.size:
        return
    ndim = builtins.max(self.ndim, 1)
    if builtins.max(index.ndim, 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    dim = _wrap_dim(dim, self.ndim)

    def size(array: np.ndarray, d: int) -> int:
        return array.shape[d] if d < array.ndim else 1

    too_large = builtins.any(size(index, d) > size(self, d) for d in range(ndim) if d != dim)
    if src is None:
        if too_large:
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(self.shape)} apart from dimension {dim}")
        return
    too_large = too_large or builtins.any(size(index, d) > size(src, d) for d in range(ndim))
    if builtins.max(src.ndim, 1) != builtins.max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if too_large:
        raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                           f"{list(self.shape)} apart from dimension {dim} and to be no larger "
                           f"size than src {list(src.shape)}")


def scatter_src(self, dim, index, src):
    _check_index(index, "scatter")
    _same_dtype(self, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _scatter_shape_check(self, dim, index, src)
    if not index.size or not self.ndim:  # nothing written, or one element written to
        return _scatter_one(self, dim, index, _as(src, self.dtype).reshape(-1)[:index.size])
    result = np.array(self, copy=True)
    corner = tuple(slice(0, s) for s in index.shape)
    result[_scatter_key(self, dim, index, "scatter")] = _as(src, self.dtype)[corner]
    return result


def _scatter_one(self, dim, index, values):
    """scatter with an empty index (a copy of self) or into a 0-dim self (its one element
    takes the last value written, after the index is checked)."""
    _wrap_dim(dim, self.ndim)
    if not index.size:
        return np.array(self, copy=True)
    _scatter_key(self, dim, index, "scatter")
    return np.array(np.asarray(values, self.dtype).reshape(-1)[-1], dtype=self.dtype)


def scatter_value(self, dim, index, value):
    _check_index(index, "scatter")
    _scatter_shape_check(self, dim, index)
    check_fits(value, self.dtype)
    if not index.size or not self.ndim:
        return _scatter_one(self, dim, index, value)
    result = np.array(self, copy=True)
    result[_scatter_key(self, dim, index, "scatter")] = value
    return result


def _broadcast_all(*operands: Any) -> None:
    """PyTorch's error when the operands of a ternary op do not broadcast together."""
    shape: tuple[int, ...] = ()
    for operand in operands:
        shape = broadcast_shapes(shape, np.shape(operand))


def _check_lerp(self: np.ndarray, end: np.ndarray, weight: Any, kernel: str) -> None:
    _broadcast_all(self, end, weight)
    _not_for(kernel, self, "f")
    if end.dtype != self.dtype:
        raise RuntimeError(f"expected dtype {_dtype_word(self)} for `end` but got dtype "
                           f"{_dtype_word(end)}")
    if isinstance(weight, np.ndarray) and weight.ndim and weight.dtype != self.dtype:
        # (a 0-dim weight of any dtype is taken as the number it holds)
        raise RuntimeError(f"expected dtype {_dtype_word(self)} for `weight` but got dtype "
                           f"{_dtype_word(weight)}")


def _dtype_word(array: np.ndarray) -> str:
    """How lerp's messages spell a dtype: float, double, half."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long",
            "int32": "int"}.get(array.dtype.name, array.dtype.name)


def _lerp(self: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    """self + weight * (end - self), computed from the nearer end as PyTorch does (exact
    at weight 0 and 1): weight * (end - self) + self for small weights, else
    (weight - 1) * (end - self) + end, each one fused multiply-add."""
    work = _opmath(self.dtype)  # halves in float32, rounded once
    start, end, weight = (np.asarray(v).astype(work, copy=False) for v in (self, end, weight))
    with silenced():
        difference = end - start
        near_start = np.abs(weight) < 0.5
        coefficient = np.where(near_start, weight, weight - work.type(1))
        base = np.where(near_start, start, end)
    return _fused(coefficient, difference, base, self.dtype)


def lerp_Scalar(self, end, weight):
    _check_lerp(self, end, weight, "lerp_kernel_scalar")
    check_fits(weight, _opmath(self.dtype))
    return _lerp(self, end, float(weight))


def lerp_Tensor(self, end, weight):
    _check_lerp(self, end, weight, "lerp_kernel_tensor")
    return _lerp(self, end, weight)


def addcmul(self, tensor1, tensor2, value=1):
    _broadcast_all(self, tensor1, tensor2)
    dtype = result_type(self, tensor1, tensor2)
    work = _opmath(dtype)  # halves in float32, rounded once
    check_fits(value, work)
    if dtype.kind not in "fV":  # value is converted to the integer type first, as in PyTorch
        with silenced():
            return _array(self + dtype.type(value) * tensor1 * tensor2, dtype)
    with silenced():  # PyTorch's order: (value * tensor1) * tensor2 + self, fused
        scaled = _as(tensor1, work) * work.type(value)
    return _fused(scaled, _as(tensor2, work), _as(self, work), dtype)


def addcdiv(self, tensor1, tensor2, value=1):
    _broadcast_all(self, tensor1, tensor2)
    if _category(tensor1) < 2 and _category(tensor2) < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    dtype = result_type(self, tensor1, tensor2)
    work = _opmath(dtype)  # halves in float32, rounded once
    check_fits(value, work)
    with silenced():  # PyTorch's order: self + (value * tensor1) / tensor2
        quotient = _as(tensor1, work) * work.type(value) / _as(tensor2, work)
        return _array(_as(self, work) + quotient, dtype)


def _check_variance_input(self: np.ndarray, name: str) -> None:
    if self.dtype.kind not in "fV":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


@silent
def var_mean_correction(self, dim=None, correction=None, keepdim=False):
    _check_variance_input(self, "var_mean")
    variance = _variance(self, dim, correction, keepdim, "var_mean")
    return variance, _array(np.mean(self, axis=_axes(dim, self.ndim), keepdims=keepdim),
                            self.dtype)


@silent
def std_mean_correction(self, dim=None, correction=None, keepdim=False):
    _check_variance_input(self, "std_mean")
    variance = _variance(self, dim, correction, keepdim, "std_mean")
    return np.sqrt(variance), _array(np.mean(self, axis=_axes(dim, self.ndim),
                                             keepdims=keepdim), self.dtype)


def _integer_divisor(self: Any, other: Any, dtype: np.dtype) -> None:
    """Integer division by zero is an error in PyTorch (floats give inf or nan); checked
    after the shapes, as PyTorch checks them first."""
    broadcast_shapes(np.shape(self), np.shape(other))
    if dtype.kind in "iub" and np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


def floor_divide(self, other):
    dtype = result_type(self, other)
    if dtype.kind == "b":  # torch 2.13 has no bool floor division, whatever the divisor
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    _integer_divisor(self, other, dtype)
    a, b = _binary(self, other, dtype)
    if dtype.kind not in "fV":
        return _array(np.floor_divide(a, b), dtype)
    with silenced():
        # PyTorch's float floor division: the floor of the true quotient, computed from
        # fmod so that it agrees with `a - b * q` (numpy's floor_divide differs at inf).
        remainder = np.fmod(a, b)
        quotient = (a - remainder) / b
        quotient = np.where((remainder != 0) & ((b < 0) != (remainder < 0)), quotient - 1,
                            quotient)
        floored = np.floor(quotient)
        floored = np.where(quotient - floored > 0.5, floored + 1, floored)
        result = np.where(quotient != 0, floored, np.copysign(0, a / b))
        result = np.where(b == 0, a / b, result)
    return _array(result, dtype)


def floor_divide_Scalar(self, other):
    return floor_divide(self, other)


def remainder_Tensor(self, other):
    dtype = result_type(self, other)
    _not_for("remainder_cpu", np.empty(0, dtype), "iuf")  # before the divisor, as torch
    _integer_divisor(self, other, dtype)
    a, b = _binary(self, other, dtype)
    with silenced():
        result = np.fmod(a, b)
        result = np.where((result != 0) & ((result < 0) != (b < 0)), result + b, result)
    return _array(result, dtype)


def remainder_Scalar(self, other):
    return remainder_Tensor(self, other)


def remainder_Scalar_Tensor(self, other):
    return remainder_Tensor(self, other)


def fmod_Tensor(self, other):
    dtype = result_type(self, other)
    _integer_divisor(self, other, dtype)
    _not_for("fmod_cpu", np.empty(0, dtype), "iuf")
    a, b = _binary(self, other, dtype)
    with silenced():
        return _array(np.fmod(a, b), dtype)


def fmod_Scalar(self, other):
    return fmod_Tensor(self, other)


def _square_matrices(A: np.ndarray, name: str) -> None:
    """linalg's checks on A: floats, at least 2 dimensions, square."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.dtype.kind not in "fcV" or A.dtype == np.float16:
        label = _dtype_label(A)
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {label}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _zero_pivots(A: np.ndarray) -> np.ndarray:
    """Per matrix, the 1-based position of the first exactly zero pivot of LU with partial
    pivoting, 0 if none: LAPACK's getrf `info`, which PyTorch's messages quote."""
    count = int(np.prod(A.shape[:-2]))
    work = np.array(A.reshape((count,) + A.shape[-2:]), copy=True)
    info = np.zeros(work.shape[0], np.int32)
    n = A.shape[-1]
    rows = np.arange(work.shape[0])
    with silenced():
        for k in range(n):
            pivot = k + np.argmax(np.abs(work[:, k:, k]), axis=1)
            work[rows, [k] * len(rows)], work[rows, pivot] = \
                work[rows, pivot].copy(), work[rows, [k] * len(rows)].copy()
            diagonal = work[:, k, k]
            zero = diagonal == 0
            info = np.where(zero & (info == 0), k + 1, info)
            factors = np.where(zero[:, None], 0, work[:, k + 1:, k] / np.where(zero, 1, diagonal)
                               [:, None])
            work[:, k + 1:, k + 1:] -= factors[:, :, None] * work[:, k, None, k + 1:]
    return info.reshape(A.shape[:-2])


def _batch_prefix(info: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if info.ndim else ""


def linalg_inv_ex(A, check_errors=False):
    _square_matrices(A, "linalg.inv")
    info = _zero_pivots(A)
    failed = np.flatnonzero(info)
    if failed.size and check_errors:
        index = int(failed[0])
        raise LinAlgError(f"linalg.inv: {_batch_prefix(info, index)}The diagonal element "
                          f"{info.flat[index]} is zero, the inversion could not be completed "
                          "because the input matrix is singular.")
    if A.size == 0:
        return np.array(A, copy=True), info
    if failed.size:  # what is left of a singular matrix is meaningless; PyTorch's too
        with silenced():
            inverse = np.full(A.shape, np.nan, A.dtype)
            good = info == 0
            inverse[good] = np.linalg.inv(A[good])
        return inverse, info
    return _array(np.linalg.inv(A), A.dtype), info


def _solve_vector_case(A: np.ndarray, B: np.ndarray) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D, or has one dimension less
    than A and A's batch shape before its last dimension."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def linalg_solve_ex(A, B, left=True, check_errors=False):
    _square_matrices(A, "linalg.solve")
    if B.dtype != A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_dtype_label(A)} and B of type {_dtype_label(B)} instead")
    vector = _solve_vector_case(A, B)
    matrix_B = B[..., None] if vector else B
    n = A.shape[-1]
    if matrix_B.shape[-2 if left else -1] != n:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
            f"{matrix_B.shape[-2]}x{matrix_B.shape[-1]})")
    if vector and not left:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                           "supported for left=False. In this case linalg.solve is equivalent "
                           "to B / A.squeeze(-1)")
    if not left:  # XA = B is AᵀXᵀ = Bᵀ
        A, matrix_B = np.swapaxes(A, -1, -2), np.swapaxes(matrix_B, -1, -2)
    info = _zero_pivots(A)  # per matrix of A, before A is broadcast against B
    failed = np.flatnonzero(info)
    if failed.size:
        raise LinAlgError(f"torch.linalg.solve: {_batch_prefix(info, int(failed[0]))}The "
                          "solver failed because the input matrix is singular.")
    batch = np.broadcast_shapes(A.shape[:-2], matrix_B.shape[:-2])
    A = np.broadcast_to(A, batch + A.shape[-2:])
    matrix_B = np.broadcast_to(matrix_B, batch + matrix_B.shape[-2:])
    X = np.linalg.solve(A, matrix_B) if A.size and matrix_B.size else \
        np.zeros(matrix_B.shape, A.dtype)
    if not left:
        X = np.swapaxes(X, -1, -2)
    X = X[..., 0] if vector else X
    return _array(np.ascontiguousarray(X), A.dtype), info


def _linalg_solve_ex(A, B, left=True, check_errors=False):
    """(result, LU, pivots, info): linalg_solve_ex's solution and info, with the LU
    factorisation of A (getrf's, 1-based int32 pivots) that torch's solve keeps for its
    derivatives."""
    X, info = linalg_solve_ex(A, B, left, check_errors)
    LU, pivots, _ = _lu_factor(A)
    return X, LU.astype(A.dtype, copy=False), pivots, info


def _scatter_reduce_ufunc(reduce: str) -> np.ufunc:
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    return np.add if reduce == "add" else np.multiply


@silent
def scatter_reduce(self, dim, index, src, reduce):
    """scatter with `reduce=`: src's elements are added to (multiplied into) self's."""
    ufunc = _scatter_reduce_ufunc(reduce)
    _check_index(index, "scatter")
    _same_dtype(self, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _scatter_shape_check(self, dim, index, src)
    warn_at_caller("The reduce argument of torch.scatter with Tensor src is deprecated and "
                   "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                   "instead for more reduction options.")
    result = np.array(self, copy=True)
    corner = tuple(slice(0, s) for s in index.shape)
    ufunc.at(result, _scatter_key(self, dim, index, "scatter"), _as(src, self.dtype)[corner])
    return result


@silent
def scatter_value_reduce(self, dim, index, value, reduce):
    ufunc = _scatter_reduce_ufunc(reduce)
    _check_index(index, "scatter")
    _scatter_shape_check(self, dim, index)
    result = np.array(self, copy=True)
    ufunc.at(result, _scatter_key(self, dim, index, "scatter"), self.dtype.type(value))
    return result
# -- convolution and pooling (conv/pool area) ------------------------------------------------
# Every kernel here works on whole arrays: a convolution is one tensordot over a strided
# "window" view of the padded input (np.lib.stride_tricks.sliding_window_view: im2col
# without the copy), its input gradient one tensordot followed by a scatter-add per kernel
# offset (col2im). The Python loops run over groups and kernel offsets, never over pixels.

def _conv_param(value, count: int, name: str) -> tuple[int, ...]:
    """An int or list argument as `count` ints, PyTorch's way: one value repeats."""
    values = [value] if isinstance(value, int | np.integer) else list(value)
    if len(values) == 1:
        values = values * count
    if len(values) != count:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {count} values to "
            f"match the convolution dimensions, but got {name}={values}")
    return tuple(builtins.int(v) for v in values)


def _windows(padded: np.ndarray, kernel, stride, dilation) -> np.ndarray:
    """A read-only view (N, C, *out, *kernel) of every window of a padded (N, C, *spatial)
    array: window `o` along a dim covers positions o*stride + j*dilation, j < kernel."""
    spatial = tuple(range(2, padded.ndim))
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
    view = np.lib.stride_tricks.sliding_window_view(padded, extent, axis=spatial)
    step = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)
    return view[step + tuple(slice(None, None, d) for d in dilation)]


def _pad_spatial(array: np.ndarray, before, after=None, value=0) -> np.ndarray:
    """`array` with `before[i]` (and `after[i]`, default the same) entries of `value` added
    on each side of spatial dim i (the dims after N and C)."""
    after = before if after is None else after
    if not any(before) and not any(after):
        return array
    widths = [(0, 0), (0, 0)] + list(zip(before, after, strict=True))
    return np.pad(array, widths, constant_values=value)


def _conv_check(input, weight, bias, stride, padding, dilation, transposed, groups,
                output_padding=0):
    """PyTorch's argument checks for convolution, in its order and words; the stride,
    padding and dilation as tuples of one int per spatial dim (and the output_padding, which
    only a transposed convolution reads, checked there)."""
    k = weight.ndim - 2
    if k < 1 or k > 3:
        raise RuntimeError(f"weight should have at least three dimensions, but got "
                           f"{weight.ndim}-dimensional weight")
    stride = _conv_param(stride, k, "stride")
    padding = _conv_param(padding, k, "padding")
    dilation = _conv_param(dilation, k, "dilation")
    if input.ndim != weight.ndim:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead")
    if builtins.any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if builtins.any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if builtins.any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    output_padding = _conv_param(output_padding, k, "output_padding") if transposed else (
        (0,) * k)
    if builtins.any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(weight.shape)}] instead")
    if transposed:
        _conv_transposed_check(input, weight, bias, stride, padding, dilation,
                               output_padding, groups)
    else:
        _conv_direct_check(input, weight, bias, padding, dilation, groups)
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"Input type (torch.{_dtype_name(input)}Tensor) and weight type "
            f"(torch.{_dtype_name(weight)}Tensor) should be the same or input should be a "
            "MKLDNN tensor and weight is a dense tensor")
    if bias is not None and bias.dtype != input.dtype and not transposed:
        raise RuntimeError(f"Input type ({_c_type_name(input)}) and bias type "
                           f"({_c_type_name(bias)}) should be the same")
    return stride, padding, dilation, output_padding


def _conv_direct_check(input, weight, bias, padding, dilation, groups):
    """The checks of a plain (not transposed) convolution: weight (out, in / groups, *k)."""
    if input.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
            f"{input.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
            f"with {weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead")
    padded = [size + 2 * p for size, p in zip(input.shape[2:], padding, strict=True)]
    extent = [d * (size - 1) + 1 for size, d in zip(weight.shape[2:], dilation, strict=True)]
    if builtins.any(p < e for p, e in zip(padded, extent, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, extent))}). Kernel size can't be greater "
            "than actual input size")


def _conv_transposed_check(input, weight, bias, stride, padding, dilation, output_padding,
                           groups):
    """The checks of a transposed convolution: weight (in, out / groups, *k), and an
    output_padding that only chooses among the output sizes a strided (or dilated)
    convolution maps to the same input size."""
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected "
            f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
            f"{input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {out_channels} elements, but got bias of size "
            f"{list(bias.shape)} instead")
    # PyTorch runs a 1-d transposed convolution as a 2-d one of height 1, and its messages
    # show that height: (0 output padding, stride 1, dilation 1, size 1) is put in front.
    flat = len(stride) == 1
    lift = (lambda values, first: (first, *values)) if flat else (lambda values, _: values)
    if builtins.any(p >= s and p >= d
                    for p, s, d in zip(output_padding, stride, dilation, strict=True)):
        names = ["depth", "height", "width"][-len(lift(stride, 1)):]
        parts = [f"output_padding_{n}: {p}"
                 for n, p in zip(names, lift(output_padding, 0), strict=True)]
        parts += [f"stride_{n}: {s}" for n, s in zip(names, lift(stride, 1), strict=True)]
        parts += [f"dilation_{n}: {d}" for n, d in zip(names, lift(dilation, 1), strict=True)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           f"but got {' '.join(parts)}")
    out = _transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                           output_padding)
    if builtins.any(o <= 0 for o in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, lift(input.shape[2:], 1)))})"
            f". Calculated output size per channel: ({' x '.join(map(str, lift(out, 1)))}). "
            "Output size is too small")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input)} but found "
                           f"{_dtype_name(weight)}")


def _transposed_size(spatial, kernel, stride, padding, dilation, output_padding):
    """A transposed convolution's output size per spatial dim: the size of the input a
    plain convolution with these parameters maps to `spatial`, plus output_padding."""
    return tuple((size - 1) * s - 2 * p + d * (k - 1) + op + 1 for size, k, s, p, d, op in
                 zip(spatial, kernel, stride, padding, dilation, output_padding, strict=True))


def _c_type_name(array: np.ndarray) -> str:
    """The C++ name PyTorch's convolution messages give a dtype: float, double, long int."""
    names = {"f4": "float", "f8": "double", "i8": "long int", "i4": "int", "f2": "c10::Half",
             "b1": "bool", "u1": "unsigned char", "i2": "short int", "i1": "signed char"}
    return names.get(array.dtype.str[1:], str(array.dtype))


def _channel_groups(array: np.ndarray, groups: int, axis: int) -> list[np.ndarray]:
    """`array` cut into `groups` equal blocks along `axis` (views)."""
    size = array.shape[axis] // groups
    index = [slice(None)] * array.ndim
    blocks = []
    for g in range(groups):
        index[axis] = slice(g * size, (g + 1) * size)
        blocks.append(array[tuple(index)])
    return blocks


@silent
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """out[n, o, *y] = bias[o] + sum over c, *j of in_padded[n, c, y*stride + j*dilation] *
    weight[o, c, *j], each output channel reading only the input channels of its group.

    Transposed (weight (in, out / groups, *k)), the convolution runs the other way: each
    input position spreads its value, times the weight, over the output window a plain
    convolution would have read it from. That is exactly the input gradient of a plain
    convolution with the same weight, the input playing the output's gradient."""
    stride, padding, dilation, output_padding = _conv_check(
        input, weight, bias, stride, padding, dilation, transposed, groups, output_padding)
    k = weight.ndim - 2
    if transposed:
        shape = input.shape[:1] + (weight.shape[1] * groups,) + _transposed_size(
            input.shape[2:], weight.shape[2:], stride, padding, dilation, output_padding)
        out = _conv_input_grad(input, shape, weight, stride, padding, dilation, groups)
    else:
        out = _conv_forward(input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * k)
    return np.ascontiguousarray(out, dtype=input.dtype)


def _conv_forward(input, weight, stride, padding, dilation, groups, out_size=None):
    """A plain convolution without bias (N, O, *out); `out_size` keeps only the first
    outputs along each dim (a transposed convolution's backward needs no more)."""
    k = weight.ndim - 2
    windows = _windows(_pad_spatial(input, padding), weight.shape[2:], stride, dilation)
    if out_size is not None:
        windows = windows[(slice(None), slice(None)) + tuple(slice(o) for o in out_size)]
    sums = [1] + list(range(2 + k, 2 + 2 * k))  # c and the kernel dims of the windows
    parts = [quietly(np.tensordot, w, g, (list(range(1, 2 + k)), sums))
             for w, g in zip(_channel_groups(weight, groups, 0),
                             _channel_groups(windows, groups, 1), strict=True)]
    out = parts[0] if groups == 1 else np.concatenate(parts, axis=0)  # (O, N, *out)
    return np.moveaxis(out, 0, 1)


def _conv_input_grad(grad_output, input_shape, weight, stride, padding, dilation, groups):
    """col2im: each output position's grad times the weight, added back onto the input
    positions its window read (one strided add per kernel offset)."""
    spatial = tuple(input_shape[2:])
    grad = np.zeros(tuple(input_shape[:2]) + tuple(s + 2 * p for s, p in
                                                   zip(spatial, padding, strict=True)),
                    dtype=np.result_type(grad_output, weight))
    out = grad_output.shape[2:]
    for c_block, w, g in zip(_channel_groups(grad, groups, 1),
                             _channel_groups(weight, groups, 0),
                             _channel_groups(grad_output, groups, 1), strict=True):
        cols = quietly(np.tensordot, w, g, ([0], [1]))  # (Cg, *kernel, N, *out)
        for offset in np.ndindex(*weight.shape[2:]):
            target = tuple(slice(j * d, j * d + s * (o - 1) + 1, s)
                           for j, d, s, o in zip(offset, dilation, stride, out, strict=True))
            c_block[(slice(None), slice(None)) + target] += np.swapaxes(
                cols[(slice(None),) + offset], 0, 1)
    crop = tuple(slice(p, p + s) for p, s in zip(padding, spatial, strict=True))
    return grad[(slice(None), slice(None)) + crop]


def _conv_weight_grad(grad_output, input, weight_shape, stride, padding, dilation, groups):
    """sum over n and the output positions of grad_output times the input window each
    position read: (O, C / groups, *kernel)."""
    k = len(weight_shape) - 2
    windows = _windows(_pad_spatial(input, padding), weight_shape[2:], stride, dilation)
    windows = windows[(slice(None), slice(None))
                      + tuple(slice(o) for o in grad_output.shape[2:])]
    over = [0] + list(range(2, 2 + k))  # n and the output positions
    parts = [quietly(np.tensordot, g, x, (over, over))
             for g, x in zip(_channel_groups(grad_output, groups, 1),
                             _channel_groups(windows, groups, 1), strict=True)]
    return parts[0] if groups == 1 else np.concatenate(parts, axis=0)


@silent
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """The gradients of convolution's input, weight and bias, for those output_mask asks
    for; the others are zeros (PyTorch leaves them undefined; gradgen's nodes drop them).

    A transposed convolution is a plain one's input gradient, so its gradients swap roles:
    its input gets the plain convolution of grad_output, its weight the plain weight
    gradient with grad_output as the input and the input as the output's gradient."""
    stride, padding, dilation, output_padding = _conv_check(
        input, weight, None, stride, padding, dilation, transposed, groups, output_padding)
    k = weight.ndim - 2
    dtype = input.dtype
    if transposed:
        spatial = _transposed_size(input.shape[2:], weight.shape[2:], stride, padding,
                                   dilation, output_padding)
        expected = input.shape[:1] + (weight.shape[1] * groups,) + spatial
    else:
        expected = input.shape[:1] + weight.shape[:1] + tuple(
            (size + 2 * p - d * (kernel - 1) - 1) // s + 1 for size, kernel, s, p, d in
            zip(input.shape[2:], weight.shape[2:], stride, padding, dilation, strict=True))
    for dim, size in enumerate(expected):
        if grad_output.ndim != len(expected) or grad_output.shape[dim] != size:
            got = grad_output.shape[dim] if dim < grad_output.ndim else None
            raise RuntimeError(
                f"Expected a tensor of dimension {len(expected)} and tensor.size[{dim}] == "
                f"{size} but got: dimension {grad_output.ndim} and tensor.size[{dim}] = {got}")
    conv = (stride, padding, dilation, groups)
    if not output_mask[0]:
        grad_input = np.zeros(input.shape, dtype)
    elif transposed:
        grad_input = _conv_forward(grad_output, weight, *conv, out_size=input.shape[2:])
    else:
        grad_input = _conv_input_grad(grad_output, input.shape, weight, *conv)
    if not output_mask[1]:
        grad_weight = np.zeros(weight.shape, dtype)
    elif transposed:
        grad_weight = _conv_weight_grad(input, grad_output, weight.shape, *conv)
    else:
        grad_weight = _conv_weight_grad(grad_output, input, weight.shape, *conv)
    if output_mask[2]:
        grad_bias = grad_output.sum(axis=(0,) + tuple(range(2, 2 + k)))
    else:
        grad_bias = np.zeros(expected[1:2], dtype)
    return (np.ascontiguousarray(grad_input, dtype), np.ascontiguousarray(grad_weight, dtype),
            _array(grad_bias, dtype))


def _pool_param(value, name: str, op: str, allow_empty: bool = False) -> tuple[int, int]:
    """A pooling op's kernel_size / stride / padding / dilation as (h, w), with PyTorch's
    message when it is neither one int nor two."""
    values = [value] if isinstance(value, int | np.integer) else list(value)
    if len(values) == 1:
        values = values * 2
    if len(values) != 2 and not (allow_empty and not values):
        detail = {"kernel_size": "must either be a single int, or a tuple of two ints",
                  "stride": "must either be omitted, a single int, or a tuple of two ints",
                  "padding": "must either be a single int, or a tuple of two ints",
                  "dilation": "must be either a single int, or a tuple of two ints"}[name]
        raise RuntimeError(f"{op}: {name} {detail}")
    return tuple(builtins.int(v) for v in values)


def _pool_output_size(size: int, kernel: int, pad: int, stride: int, dilation: int,
                      ceil_mode: bool) -> int:
    """How many windows fit, PyTorch's way: with ceil_mode a last partial window counts,
    unless it would start in the right padding."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((kernel - 1) * dilation + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={kernel} and dilation={dilation}")
    span = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_setup(self, kernel_size, stride, padding, dilation, ceil_mode, op):
    """Checks and output size for a 2-d pooling of a (C, H, W) or (N, C, H, W) input, in
    PyTorch's order: (kernel, stride, padding, dilation, (out_h, out_w))."""
    kernel = _pool_param(kernel_size, "kernel_size", op)
    stride = _pool_param(stride, "stride", op, allow_empty=True) or kernel
    padding = _pool_param(padding, "padding", op)
    if op == "max_pool2d":
        dilation = _pool_param(dilation, "dilation", op)
        if self.ndim not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    else:
        dilation = (1, 1)
    if self.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-builtins.max(self.ndim, 1)}, {builtins.max(self.ndim, 1) - 1}], "
                         f"but got -3)")
    out = tuple(_pool_output_size(self.shape[-2 + i], kernel[i], padding[i], stride[i],
                                  dilation[i], ceil_mode) for i in range(2))
    if builtins.min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if builtins.min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} "
                           f"dW: {stride[1]}")
    if builtins.min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(self.shape)}")
    if builtins.min(out) < 1:
        raise RuntimeError(
            f"Given input size: ({self.shape[-3]}x{self.shape[-2]}x{self.shape[-1]}). "
            f"Calculated output size: ({self.shape[-3]}x{out[0]}x{out[1]}). "
            "Output size is too small")
    return kernel, stride, padding, dilation, out


def _pool_padded(self, kernel, stride, padding, dilation, out, value):
    """`self` as (N, C, H, W) padded with `value`: `padding` on both sides, and on the right
    as far as ceil_mode's last window reaches."""
    batched = self.reshape((builtins.int(np.prod(self.shape[:-3])),) + self.shape[-3:])
    after = [builtins.max(padding[i], (out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1)
                          + 1 - self.shape[-2 + i] - padding[i]) for i in range(2)]
    return _pad_spatial(batched, padding, after, value)


def _window_argmax(flat: np.ndarray) -> np.ndarray:
    """Where the maximum of each row of the last dim is, PyTorch's way: the first of equal
    maxima, but a NaN over any number and a later NaN over an earlier one."""
    where = np.argmax(flat, axis=-1)
    if flat.dtype.kind in "fV":
        nan = np.isnan(flat)
        if nan.any():
            last_nan = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
            where = np.where(nan.any(axis=-1), last_nan, where)
    return where


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """The largest value of each window, and where it is as an index into H*W (the first
    of equal maxima; NaN counts as largest)."""
    kernel, stride, padding, dilation, out = _pool_setup(
        self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")
    low = -np.inf if self.dtype.kind in "fV" else (
        np.iinfo(self.dtype).min if self.dtype.kind in "iu" else False)
    padded = _pool_padded(self, kernel, stride, padding, dilation, out, low)
    windows = _windows(padded, kernel, stride, dilation)[:, :, :out[0], :out[1]]
    flat = windows.reshape(windows.shape[:4] + (kernel[0] * kernel[1],))
    where = _window_argmax(flat)
    values = np.take_along_axis(flat, where[..., None], axis=-1)[..., 0]
    rows = (np.arange(out[0]) * stride[0] - padding[0])[:, None] + where // kernel[1] * dilation[0]
    cols = (np.arange(out[1]) * stride[1] - padding[1]) + where % kernel[1] * dilation[1]
    indices = rows * self.shape[-1] + cols
    shape = self.shape[:-2] + out
    return (np.ascontiguousarray(values.reshape(shape), self.dtype),
            indices.reshape(shape).astype(np.int64))


@silent
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    """Each window's gradient added to the element its maximum came from."""
    plane = self.shape[-2] * self.shape[-1]
    planes = builtins.int(np.prod(self.shape[:-2], dtype=np.int64))
    flat = indices.reshape(planes, indices.size // builtins.max(planes, 1)) \
        + (np.arange(planes) * plane)[:, None]
    grad = np.bincount(flat.ravel(), weights=grad_output.ravel(), minlength=planes * plane)
    return _array(grad.reshape(self.shape), grad_output.dtype)


def _avg_pool_divisors(self, kernel, stride, padding, out, count_include_pad,
                       divisor_override):
    """What each window's sum is divided by, as an (out_h, out_w) array: the override, the
    window's size clipped to the padded input, or its count of real elements."""
    if divisor_override is not None:
        return np.full(out, divisor_override, dtype=np.int64)
    sizes = []
    for i in range(2):
        size = self.shape[-2 + i]
        start = np.arange(out[i]) * stride[i] - padding[i]
        end = np.minimum(start + kernel[i], size + padding[i])
        if count_include_pad:
            sizes.append(end - start)
        else:
            sizes.append(np.minimum(end, size) - np.maximum(start, 0))
    return sizes[0][:, None] * sizes[1][None, :]


def _avg_pool_setup(self, kernel_size, stride, padding, ceil_mode, divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _pool_setup(self, kernel_size, stride, padding, 1, ceil_mode, "avg_pool2d")


@silent
def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The sum of each window over its divisor (see _avg_pool_divisors); integer inputs
    divide with truncation, as PyTorch's integer kernels do."""
    kernel, stride, padding, dilation, out = _avg_pool_setup(
        self, kernel_size, stride, padding, ceil_mode, divisor_override)
    padded = _pool_padded(self, kernel, stride, padding, dilation, out, 0)
    windows = _windows(padded, kernel, stride, dilation)[:, :, :out[0], :out[1]]
    divisors = _avg_pool_divisors(self, kernel, stride, padding, out, count_include_pad,
                                  divisor_override)
    if self.dtype.kind in "fV":
        result = windows.sum(axis=(-2, -1)) / divisors.astype(self.dtype)
    else:
        result = np.trunc(windows.sum(axis=(-2, -1), dtype=np.int64) / divisors)
    return np.ascontiguousarray(result.reshape(self.shape[:-2] + out), self.dtype)


@silent
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """Each window's gradient over its divisor, spread over the elements the window read
    (one strided add per kernel offset)."""
    kernel, stride, padding, dilation, out = _avg_pool_setup(
        self, kernel_size, stride, padding, ceil_mode, divisor_override)
    divisors = _avg_pool_divisors(self, kernel, stride, padding, out, count_include_pad,
                                  divisor_override)
    share = grad_output.reshape((-1,) + grad_output.shape[-3:]) / divisors.astype(
        grad_output.dtype)
    reach = [builtins.max(padding[i] + self.shape[-2 + i], (out[i] - 1) * stride[i] + kernel[i])
             for i in range(2)]
    padded = np.zeros(share.shape[:2] + tuple(reach), grad_output.dtype)
    for i, j in np.ndindex(*kernel):
        padded[:, :, i:i + stride[0] * (out[0] - 1) + 1:stride[0],
               j:j + stride[1] * (out[1] - 1) + 1:stride[1]] += share
    grad = padded[:, :, padding[0]:padding[0] + self.shape[-2],
                  padding[1]:padding[1] + self.shape[-1]]
    return np.ascontiguousarray(grad.reshape(self.shape), grad_output.dtype)


def _adaptive_matrices(self, output_size):
    """Adaptive pooling as two 0/1 matrices: row o of the H one marks the input rows
    floor(o H / out_h) .. ceil((o+1) H / out_h) - 1 of output row o (and likewise for W);
    with the window areas."""
    if self.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(self.shape)}")
    output_size = list(output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if builtins.min(output_size) < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater "
                           f"than or equal to 0 but received {{{output_size[0]}, "
                           f"{output_size[1]}}}")
    for dim in range(self.ndim - 2, self.ndim):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(self.shape)} with dimension {dim} "
                "being empty")
    if self.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"adaptive_avg_pool2d\" not implemented for '{_dtype_name(self)}'")
    matrices, lengths = [], []
    for size, out in zip(self.shape[-2:], output_size, strict=True):
        o = np.arange(out)
        start, end = (o * size) // out, -((-(o + 1) * size) // out)
        position = np.arange(size)
        matrices.append(((position >= start[:, None]) & (position < end[:, None]))
                        .astype(self.dtype))
        lengths.append(end - start)
    area = (lengths[0][:, None] * lengths[1][None, :]).astype(self.dtype)
    return matrices[0], matrices[1], area


@silent
def _adaptive_avg_pool2d(self, output_size):
    """Each output cell the mean of its window (see _adaptive_matrices): rows @ x @ colsᵀ."""
    rows, cols, area = _adaptive_matrices(self, output_size)
    return np.ascontiguousarray((rows @ self @ cols.T) / area, self.dtype)


def _nonempty_grad(grad_output, op: str) -> None:
    """PyTorch's adaptive pooling backwards refuse a grad_output with an empty H or W."""
    for dim in range(grad_output.ndim - 2, grad_output.ndim):
        if grad_output.shape[dim] == 0:
            raise RuntimeError(
                f"{op}(): Expected grad_output to have non-zero size for non-batch dimensions, "
                f"but grad_output has sizes {list(grad_output.shape)} with dimension {dim} "
                "being empty")


@silent
def _adaptive_avg_pool2d_backward(grad_output, self):
    """Each output cell's gradient over its window's area, spread over the window."""
    _nonempty_grad(grad_output, "adaptive_avg_pool2d_backward")
    rows, cols, area = _adaptive_matrices(self, grad_output.shape[-2:])
    return np.ascontiguousarray(rows.T @ (grad_output / area) @ cols, grad_output.dtype)


def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """Adaptive pooling's windows along one dim: output i reads [floor(i size / out),
    ceil((i + 1) size / out))."""
    o = np.arange(out)
    return (o * size) // out, -((-(o + 1) * size) // out)


def adaptive_max_pool2d(self, output_size):
    """The largest value of each adaptive window (see _adaptive_bounds) and its index into
    H * W. The windows differ in size by at most one, so they are gathered padded to the
    largest with -inf, and searched as max_pool2d's are."""
    if self.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(self.shape)}")
    output_size = tuple(builtins.int(v) for v in output_size)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must "
                           "be 2")
    for dim in range(self.ndim - 2, self.ndim):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(self.shape)} with dimension {dim} "
                "being empty")
    shape = self.shape[:-2] + output_size
    if builtins.min(output_size) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(output_size)}: {list(shape)}")
    if self.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"adaptive_max_pool2d\" not implemented for '{_dtype_name(self)}'")
    if 0 in shape:
        return np.zeros(shape, self.dtype), np.zeros(shape, np.int64)
    positions, valid = [], []
    for size, out in zip(self.shape[-2:], output_size, strict=True):
        start, end = _adaptive_bounds(size, out)
        at = start[:, None] + np.arange(builtins.int((end - start).max()))
        valid.append(at < end[:, None])
        positions.append(np.minimum(at, size - 1))
    rows, cols = positions
    planes = self.reshape((builtins.int(np.prod(self.shape[:-2])),) + self.shape[-2:])
    windows = planes[:, rows[:, :, None, None], cols[None, None, :, :]]  # (P, oh, kh, ow, kw)
    inside = valid[0][:, :, None, None] & valid[1][None, None, :, :]
    windows = np.where(inside, windows, -np.inf).astype(self.dtype)
    flat = windows.transpose(0, 1, 3, 2, 4).reshape(
        windows.shape[:2] + windows.shape[3:4] + (-1,))
    where = _window_argmax(flat)
    values = np.take_along_axis(flat, where[..., None], axis=-1)[..., 0]
    width = cols.shape[1]
    o_h, o_w = np.arange(output_size[0])[:, None], np.arange(output_size[1])[None, :]
    indices = rows[o_h, where // width] * self.shape[-1] + cols[o_w, where % width]
    return (np.ascontiguousarray(values.reshape(shape), self.dtype),
            indices.reshape(shape).astype(np.int64))


@silent
def adaptive_max_pool2d_backward(grad_output, self, indices):
    """Each output's gradient added to the element its maximum came from."""
    _nonempty_grad(grad_output, "adaptive_max_pool2d_backward")
    return max_pool2d_with_indices_backward(grad_output, self, None, None, None, None, None,
                                            indices)


# -- elementwise math and torch.special (torch's spec, family 1) -------------------------------
# (kernels of this family follow; keep this line and the blank ones around it)

# Trigonometric and hyperbolic functions: numpy's ufuncs in float64, rounded to the input's
# float dtype (integers and bools give the default float, as in PyTorch): numpy's own float32
# versions are a unit in the last place off where torch's are not.

def acos(self):
    return _in_float64(np.arccos, self)


def asin(self):
    return _in_float64(np.arcsin, self)


def atan(self):
    return _in_float64(np.arctan, self)


def cosh(self):
    return _in_float64(np.cosh, self)


def sinh(self):
    return _in_float64(np.sinh, self)


def acosh(self):
    return _in_float64(np.arccosh, self)


def asinh(self):
    return _in_float64(np.arcsinh, self)


def atanh(self):
    return _in_float64(np.arctanh, self)


# In place, torch's acosh_, asinh_ and atanh_ are ops of their own (with no derivative).
def acosh_(self):
    return acosh(self)


def asinh_(self):
    return asinh(self)


def atanh_(self):
    return atanh(self)


def exp2(self):
    return _in_float64(np.exp2, self)


def deg2rad(self):
    return _unary_float(lambda x: x * x.dtype.type(math.pi / 180), self)


def rad2deg(self):
    return _unary_float(lambda x: x * x.dtype.type(180 / math.pi), self)


@silent
def sinc(self):
    """sin(pi x) / (pi x), 1 at 0; the product pi * x is taken in the input's float dtype,
    as torch takes it (so sinc(1.) in float32 is -2.78e-08, not 0)."""
    def function(x):
        product = x.dtype.type(math.pi) * x
        return np.where(x == 0, x.dtype.type(1), np.sin(product) / product)
    return _unary_float(function, self)


@silent
def sgn(self):
    """For real tensors torch's sgn is sign (0 at nan and at -0.); for complex ones z / |z|,
    0 at 0."""
    if self.dtype.kind == "c":
        size = np.abs(self)
        return np.where(size == 0, 0, self / np.where(size == 0, 1, size)).astype(self.dtype)
    return sign(self)


# -- complex numbers -------------------------------------------------------------------------

_REAL_PARTS = {np.dtype(np.complex64): np.dtype(np.float32),
               np.dtype(np.complex128): np.dtype(np.float64),
               np.dtype(ml_dtypes.complex32): np.dtype(np.float16)}
_FLOAT_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def _conj_physical(self):
    return np.conjugate(self)


def conj_physical_(self):
    """The conjugate, which the in-place wrapper writes into self (a real self: itself)."""
    return np.conjugate(self) if self.dtype.kind == "c" else self


def view_as_real(self):
    """The complex array's parts as a last dimension of two (real, imaginary): a view."""
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    part = _REAL_PARTS[self.dtype]
    if self.dtype == _COMPLEX32:  # (numpy's .real of ml_dtypes' complex32 is not its part)
        return self[..., None].view(part)
    return np.lib.stride_tricks.as_strided(self.real, (*self.shape, 2),
                                           (*self.strides, part.itemsize))


def view_as_complex(self):
    """A float array whose last dimension holds (real, imaginary) pairs, as complex numbers:
    a view."""
    if self.dtype.kind != "f":
        name = _FLOAT_NAMES.get(self.dtype.name) or _scalar_type_name(self.dtype)
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {name}")
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self.size == 0:  # (numpy's strides of an empty array mean nothing)
        return np.empty(self.shape[:-1], complex_of(self.dtype))
    if self.strides[-1] != self.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if builtins.any(stride % (2 * self.itemsize) for stride in self.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.dtype == np.float16:  # (numpy's as_strided does not know complex32)
        return self.view(_COMPLEX32)[..., 0]
    return np.lib.stride_tricks.as_strided(_complex_start(self), self.shape[:-1],
                                           self.strides[:-1])


def _complex_start(self: np.ndarray) -> np.ndarray:
    """A one-element complex view at the first (real, imaginary) pair of `self`."""
    return self[(0,) * (self.ndim - 1)].view(complex_of(self.dtype)) if self.size \
        else np.empty(0, complex_of(self.dtype))


def _conj(self):
    return np.conjugate(self)


def _neg_view(self):
    return np.negative(self)


# -- the discrete Fourier transforms (torch's _fft_r2c, _fft_c2r, _fft_c2c) ------------------
# Each transforms over `dim`, unnormalised, then scales by torch's `normalization`: 0 none,
# 1 by 1 / sqrt(n), 2 by 1 / n, n the number of points of the (real-side) signal.

def _fft_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    return tuple(_wrap_dim(d, ndim) for d in dim)


def _fft_scaled(result: np.ndarray, normalization: int, points: int,
                dtype: np.dtype) -> np.ndarray:
    if normalization == 1:
        result = result / math.sqrt(points) if points else result
    elif normalization == 2:
        result = result / points if points else result
    return result.astype(dtype, copy=False)


def _fft_points(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    return int(np.prod([shape[d] for d in dims], dtype=np.int64))


@silent
def _fft_r2c(self, dim, normalization, onesided):
    """The transform of a real array; `onesided`: the last of `dim` keeps n // 2 + 1."""
    dims = _fft_dims(dim, self.ndim)
    out = complex_of(self.dtype)
    if onesided:
        result = np.fft.rfftn(self, axes=dims)
    else:
        result = np.fft.fftn(self, axes=dims)
    return _fft_scaled(result, normalization, _fft_points(self.shape, dims), out)


@silent
def _fft_c2r(self, dim, normalization, last_dim_size):
    """The inverse of a onesided transform: a real array whose last of `dim` has
    last_dim_size points (the input's half spectrum, Hermitian-completed)."""
    dims = _fft_dims(dim, self.ndim)
    sizes = [self.shape[d] for d in dims[:-1]] + [last_dim_size]
    result = np.fft.irfftn(self, s=sizes, axes=dims, norm="forward")  # unnormalised
    return _fft_scaled(result, normalization, _fft_points(result.shape, dims),
                       _REAL_PARTS[self.dtype])


@silent
def _fft_c2c(self, dim, normalization, is_forward):
    """The transform (`is_forward`) or the unnormalised inverse of a complex array."""
    dims = _fft_dims(dim, self.ndim)
    if is_forward:
        result = np.fft.fftn(self, axes=dims)
    else:
        result = np.fft.ifftn(self, axes=dims, norm="forward")  # unnormalised
    return _fft_scaled(result, normalization, _fft_points(self.shape, dims), self.dtype)


def complex(real, imag):  # noqa: A001 - the op's name
    """real + i imag, for two float arrays of one dtype (broadcast)."""
    kinds = (real.dtype.kind, imag.dtype.kind)
    if kinds != ("f", "f"):
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_scalar_type_name(real.dtype)} and {_scalar_type_name(imag.dtype)}")
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_FLOAT_NAMES[real.dtype.name]} but "
                           f"got scalar type {_FLOAT_NAMES[imag.dtype.name]} for second argument")
    shape = broadcast_shapes(real.shape, imag.shape)
    result = np.empty(shape, complex_of(real.dtype))
    parts = view_as_real(result)  # (numpy's .real of complex32 is not its part)
    parts[..., 0] = real
    parts[..., 1] = imag
    return result


@silent
def polar(abs, angle):  # noqa: A002 - the schema's names
    """abs (cos angle + i sin angle)."""
    broadcast_shapes(np.shape(abs), np.shape(angle))  # torch's error where they do not
    return complex(abs * np.cos(angle), abs * np.sin(angle))


_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _in_float64(function: Any, self: Any) -> np.ndarray:
    """A float function of one tensor computed in float64 and rounded to the result dtype
    (the default float for integers and bools), silently."""
    dtype = _float_type(self)
    with silenced():
        return _array(function(np.asarray(self, dtype=np.float64)), dtype)


def erfc(self):
    return _in_float64(_erfc, self)


def _lgamma_scalar(x: float) -> float:
    """lgamma, with torch's values at its poles (inf at 0 and the negative integers)."""
    if x == math.inf or x == -math.inf:
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


_lgamma = np.vectorize(_lgamma_scalar, otypes=[np.float64])


def lgamma(self):
    return _in_float64(_lgamma, self)


# The Bernoulli numbers B_2, B_4, ..., B_24, from the recurrence sum_k C(m+1, k) B_k = 0:
# the asymptotic series of digamma, trigamma and the Hurwitz zeta function use them.
def _bernoulli_even(count: int) -> list[Fraction]:
    numbers = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        numbers.append(-builtins.sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return [numbers[2 * k] for k in range(1, count + 1)]


_BERNOULLI = _bernoulli_even(12)


def _whole(value: float) -> bool:
    """value == floor(value), as C compares them (true at the infinities, false at NaN)."""
    return math.isinf(value) or (not math.isnan(value) and value == math.floor(value))


def _power(base: float, exponent: float) -> float:
    """base ** exponent, infinite where it overflows (as C's pow; Python's raises)."""
    try:
        return base ** exponent
    except OverflowError:
        odd = exponent == math.floor(exponent) and exponent % 2 == 1
        return math.copysign(math.inf, base) if odd else math.inf


def _zeta_scalar(s: float, q: float) -> float:
    """The Hurwitz zeta function sum_k (k + q)^-s, s > 1 (inf at s == 1, nan below), by
    Euler-Maclaurin summation: at least nine terms and q past 9, then the tail's integral,
    half its first term and the Bernoulli corrections."""
    if s == 1:  # (torch's order of tests: zeta(nan, -inf) is inf)
        return math.inf
    if s < 1:
        return math.nan
    if q <= 0:
        if _whole(q):
            return math.inf
        if not _whole(s):
            return math.nan  # q^-s is not real
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if math.isinf(q):  # torch's: its summation gives 0 * inf there
        return math.nan
    total = _power(q, -s)
    a, i = q, 0
    while i < 9 or a <= 9:
        i += 1
        a += 1
        term = _power(a, -s)
        total += term
        if builtins.abs(term) < 1.1e-16 * builtins.abs(total):
            return total
    total += term * a / (s - 1) - 0.5 * term
    factor, power = 1.0, term
    for k in range(12):  # + sum_k B_2k / (2k)! s (s+1) ... (s+2k-2) a^-(s+2k-1)
        factor *= s + 2 * k
        power /= a
        correction = factor * power * float(_BERNOULLI[k] / math.factorial(2 * k + 2))
        total += correction
        if builtins.abs(correction) < 1.1e-16 * builtins.abs(total):
            break
        factor *= s + 2 * k + 1
        power /= a
    return total


def _digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx lgamma(x): -inf at +0 (+inf at -0), nan at the negative integers, the
    reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 0, the recurrence psi(x) =
    psi(x + 1) - 1/x up to 10, then its asymptotic series in 1/x^2 (elementwise, in numpy)."""
    x = np.asarray(x, dtype=np.float64)
    reflected = (x < 0) & (x != np.floor(x)) & np.isfinite(x)
    y = np.where(reflected, 1 - x, x)
    y = np.where(np.isfinite(y) & (y > 0), y, 10.0)  # (the others are set below)
    result = np.zeros_like(y)
    for _ in range(10):  # psi(x) = psi(x + 1) - 1/x, up to 10 (x > 0 needs at most ten)
        below = y < 10
        result = np.where(below, result - 1 / y, result)
        y = np.where(below, y + 1, y)
    square = 1 / (y * y)
    series = np.zeros_like(y)
    for k in range(7, 0, -1):
        series = series * square + float(_BERNOULLI[k - 1] / (2 * k))
    result = result + np.log(y) - 0.5 / y - series * square
    # (torch's reflection takes the fractional part with x's sign, modf's: at tiny negative x
    # that keeps pi x, where x - floor(x) rounds to 1)
    result = np.where(reflected, result - math.pi / np.tan(math.pi * np.modf(x)[0]), result)
    result = np.where(x == 0, np.copysign(np.inf, -x), result)
    result = np.where((x < 0) & (x == np.floor(x)), np.nan, result)  # and -inf
    return np.where(np.isnan(x) | (x == np.inf), x, result)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """psi'(x) as torch computes it: the reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
    below 1/2, six steps of the recurrence psi'(x) = psi'(x + 1) + 1/x^2, then the
    asymptotic series to its x^-7 term (torch's truncation: a few 1e-10 off at small x;
    inf at 0, and huge but finite at the negative integers, where sin(pi x) rounds)."""
    x = np.asarray(x, dtype=np.float64)
    reflected = x < 0.5
    sine = np.sin(math.pi * x)
    result = np.where(reflected, -np.where(sine != 0, (math.pi / sine) ** 2, np.inf), 0.0)
    y = np.where(reflected, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    square = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + square * (1 / 6 - square * (1 / 30 - square / 42))) / y
    result = np.where(reflected, -result, result)
    return np.where(np.isnan(x) | np.isinf(x), np.where(x == np.inf, 0.0, np.nan), result)
_zeta_each = np.vectorize(_zeta_scalar, otypes=[np.float64])


def _zeta(s: Any, q: Any) -> np.ndarray:
    """_zeta_scalar on every element: in numpy for s > 1 finite and q > -50 not at a pole
    (the same operations, each element stopping where the scalar code returns), element by
    element for the edges and for q far below 0 (whose summation is long)."""
    s, q = np.broadcast_arrays(np.asarray(s, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with silenced():
        whole = np.floor(q) == q
        regular = ((s > 1) & np.isfinite(s) & np.isfinite(q) & (q > -50)
                   & ~((q <= 0) & (whole | (np.floor(s) != s))))
        out = np.empty(s.shape)
        out[~regular] = _zeta_each(s[~regular], q[~regular])
        out[regular] = _zeta_summed(s[regular], q[regular])
    return out


def _zeta_summed(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """_zeta_scalar's summation and Euler-Maclaurin tail, elementwise (1-d arrays)."""
    total = q ** -s
    a, term = q.copy(), np.zeros_like(q)
    done = np.zeros(q.shape, dtype=bool)
    i = 0
    while True:
        looping = ~done & ((i < 9) | (a <= 9))
        if not looping.any():
            break
        i += 1
        a = np.where(looping, a + 1, a)
        term = np.where(looping, a ** -s, term)
        total = np.where(looping, total + term, total)
        done |= looping & (np.abs(term) < 1.1e-16 * np.abs(total))
    total = np.where(done, total, total + (term * a / (s - 1) - 0.5 * term))
    factor, power = np.ones_like(q), term
    for k in range(12):
        factor = factor * (s + 2 * k)
        power = power / a
        correction = factor * power * float(_BERNOULLI[k] / math.factorial(2 * k + 2))
        total = np.where(done, total, total + correction)
        done |= np.abs(correction) < 1.1e-16 * np.abs(total)
        factor = factor * (s + 2 * k + 1)
        power = power / a
    return total


def digamma(self):
    return _in_float64(_digamma, self)


def polygamma(n, self):
    """The n-th derivative of digamma: digamma, trigamma, then (-1)^(n+1) n! zeta(n+1, x)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(self)
    if n == 1:
        return _in_float64(_trigamma, self)
    sign = 1.0 if n % 2 else -1.0
    return _in_float64(lambda x: sign * math.exp(math.lgamma(n + 1.0)) * _zeta(n + 1.0, x),
                       self)


def polygamma_(self, n):
    return polygamma(n, self)


def mvlgamma(self, p):
    """The multivariate log-gamma of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi),
    summed from i = p - 1 down to 0, as torch sums it."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    dtype = _float_type(self)
    x = _as(np.asarray(self), dtype)
    with silenced():
        offsets = np.arange(-(p - 1) / 2, 0.5, 0.5)[:p].astype(dtype)
        terms = lgamma(x[..., None] + offsets)
        return _array(dtype.type(p * (p - 1) * math.log(math.pi) / 4) + terms.sum(-1), dtype)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _erfinv64(y: np.ndarray) -> np.ndarray:
    """erfinv in float64: Winitzki's closed form to start, then Newton's method on erf for
    |y| <= 1/2 and on log erfc(|x|) = log(1 - |y|) beyond (no cancellation near 1)."""
    a = 0.147
    magnitude = np.abs(y)
    with silenced():
        log_term = np.log1p(-magnitude) + np.log1p(magnitude)  # log(1 - y^2), exactly
        first = 2 / (math.pi * a) + log_term / 2
        x = np.sqrt(np.sqrt(first * first - log_term / a) - first)
        x = np.where(np.isfinite(x), x, 0.0)
        near_zero = magnitude <= 0.5
        tail = np.log1p(-magnitude)
        for _ in range(6):
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
            complement = _erfc(x)
            step = np.where(near_zero, (_erf(x) - magnitude) / slope,
                            -(np.log(complement) - tail) * complement / slope)
            x = np.where(np.isfinite(step), x - step, x)
        x = np.where(magnitude == 1, np.inf, x)
        x = np.where((magnitude > 1) | np.isnan(y), np.nan, x)  # (NaN stays NaN)
        return np.copysign(x, y)


def erfinv(self):
    return _in_float64(_erfinv64, self)


_SQRT_HALF = math.sqrt(0.5)


_ISPI = 0.56418958354775628694807945156  # 1 / sqrt(pi)


def _erfcx64(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x): the product up to 25, beyond it the asymptotic series
    1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k (whose terms shrink well past
    machine precision there); for negative x, 2 exp(x^2) - erfcx(-x)."""
    with silenced():
        magnitude = np.abs(x)
        direct = np.exp(magnitude * magnitude) * _erfc(magnitude)
        large = np.maximum(magnitude, 25.0)
        inverse = 1 / (2 * large * large)
        series, term = np.ones_like(large), np.ones_like(large)
        for k in range(1, 12):
            term = term * -(2 * k - 1) * inverse
            series = series + term
        asymptotic = series / (large * math.sqrt(math.pi))
        # above 50, torch's own: its continued fraction to four terms, and past 5e7 the
        # first term 1 / (x sqrt(pi)) alone (so that 2 x erfcx(x) - 2 / sqrt(pi), erfcx's
        # gradient, cancels far out as torch's does)
        square = large * large
        fraction = _ISPI * (square * (square + 4.5) + 2) / (large * (square * (square + 5) + 3.75))
        far = np.where(large > 5e7, _ISPI / large, fraction)
        positive = np.where(magnitude < 25, direct, np.where(magnitude > 50, far, asymptotic))
        positive = np.where(np.isnan(x), x, positive)
        return np.where(x < 0, 2 * np.exp(x * x) - positive, positive)


def special_erfcx(self):
    return _in_float64(_erfcx64, self)


def _ndtr64(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, 0.5 erfc(-x / sqrt(2)) (no cancellation in the lower tail)."""
    return 0.5 * _erfc(-x * _SQRT_HALF)


def _log_ndtr64(x: np.ndarray) -> np.ndarray:
    """log Phi(x): log1p(-Phi(-x)) above -1, and below it log(erfcx(-x/sqrt(2)) / 2) - x^2/2,
    which stays finite far into the tail where Phi itself underflows."""
    with silenced():
        t = x * _SQRT_HALF  # (torch's t; t * t rounds as its does, which the gradient
        upper = np.log1p(-_erfc(t) / 2)  # exp(-(result + x²/2)) magnifies far in the tail)
        lower = np.log(_erfcx64(-t) / 2) - t * t
        return np.where(x < -1, lower, upper)


def special_log_ndtr(self):
    return _in_float64(_log_ndtr64, self)


def _ndtri64(p: np.ndarray) -> np.ndarray:
    """The inverse of the normal CDF: from erfinv's closed form, Newton's method on
    log Phi(x) = log p for the lower half and on log Phi(-x) = log(1 - p) for the upper."""
    with silenced():
        lower = np.minimum(p, 1 - p)  # solve Phi(-|x|) = lower, then give x its sign
        log_target = np.log(lower)
        log_term = np.log(2 * lower) + np.log(2 - 2 * lower)  # log(1 - (1 - 2 lower)^2)
        a = 0.147
        first = 2 / (math.pi * a) + log_term / 2
        x = -math.sqrt(2) * np.sqrt(np.sqrt(first * first - log_term / a) - first)
        x = np.where(np.isfinite(x), x, 0.0)
        for _ in range(6):
            cdf = _ndtr64(x)
            density = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
            step = (np.log(cdf) - log_target) * cdf / density
            x = np.where(np.isfinite(step), x - step, x)
        x = np.where(lower == 0.5, 0.0, x)
        x = np.where(p > 0.5, -x, x)
        x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
        return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


def special_ndtri(self):
    return _in_float64(_ndtri64, self)


def _bessel_i64(order: int, x: np.ndarray, scaled: bool) -> np.ndarray:
    """The modified Bessel function I_order(x) (order 0 or 1), times exp(-|x|) if `scaled`:
    its power series sum_k (x/2)^(2k+order) / (k! (k+order)!) up to |x| = 30, beyond it the
    asymptotic series e^|x| / sqrt(2 pi |x|) sum_k (-1)^k a_k / |x|^k, with
    a_k = prod_j (4 order^2 - (2j-1)^2) / (k! 8^k)."""
    with silenced():
        magnitude = np.abs(x)
        small = np.minimum(magnitude, 30.0)
        half_square = small * small / 4
        term = (small / 2) ** order
        total = term.copy()
        for k in range(1, 80):
            term = term * half_square / (k * (k + order))
            total = total + term
        if scaled:
            total = total * np.exp(-small)
        large = np.maximum(magnitude, 30.0)
        coefficient, series = np.ones_like(large), np.ones_like(large)
        for k in range(1, 40):
            coefficient = coefficient * -(4 * order * order - (2 * k - 1) ** 2) / (8 * k * large)
            series = series + coefficient
        asymptotic = series / np.sqrt(2 * math.pi * large)
        if not scaled:
            asymptotic = asymptotic * np.exp(large)
        result = np.where(magnitude <= 30, total, asymptotic)
        result = np.where(np.isnan(x), x, result)
        return np.copysign(result, x) if order == 1 else result


def i0(self):
    return _in_float64(lambda x: _bessel_i64(0, x, False), self)


def special_i0e(self):
    return _in_float64(lambda x: _bessel_i64(0, x, True), self)


def special_i1(self):
    return _in_float64(lambda x: _bessel_i64(1, x, False), self)


def special_i1e(self):
    return _in_float64(lambda x: _bessel_i64(1, x, True), self)


@silent
def special_entr(self):
    """-x log x: 0 at 0, -inf below it."""
    dtype = _float_type(self)
    x = _as(np.asarray(self), dtype)
    result = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)), np.where(x == 0, 0, -np.inf))
    return _array(np.where(np.isnan(x), x, result), dtype)


@silent
def logit(self, eps=None):
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given (not negative;
    NaN stays NaN)."""
    dtype = _float_type(self)
    x = _as(np.asarray(self), dtype)
    if eps is not None:
        check_fits(eps, _opmath(dtype))
    if eps is not None and eps >= 0:
        low, high = dtype.type(eps), dtype.type(1 - eps)
        x = np.where(x < low, low, np.where(x > high, high, x))
    return _array(np.log(x / (1 - x)), dtype)


def nan_to_num(self, nan=None, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by `nan` (0), `posinf` and `neginf` (the dtype's largest
    and lowest finite values); integers and bools come back unchanged (a copy)."""
    if self.dtype.kind not in "fV":
        return self.copy()
    info = np.finfo(self.dtype)
    with silenced():
        values = [self.dtype.type(v if v is not None else default)
                  for v, default in ((nan, 0.0), (posinf, info.max), (neginf, info.min))]
    result = np.where(np.isnan(self), values[0], self)
    result = np.where(self == np.inf, values[1], result)
    return _array(np.where(self == -np.inf, values[2], result), self.dtype)


def _float_binary(kernel: str | None, self: Any, other: Any) -> tuple[Any, Any, np.dtype]:
    """The two operands of a float-only binary op in their promoted dtype: integers and
    bools promote to the default float, or (with a `kernel` name) are refused as torch's
    CPU kernel was not compiled for them."""
    dtype = result_type(self, other)
    if kernel is not None:
        _not_for(kernel, np.empty(0, dtype), "f")
    elif dtype.kind not in "fV":
        dtype = np.dtype(_DEFAULT_FLOAT)
    broadcast_shapes(np.shape(self), np.shape(other))
    return _as(np.asarray(self), dtype), _as(np.asarray(other), dtype), dtype


@silent
def atan2(self, other):
    a, b, dtype = _float_binary(None, self, other)
    return _array(np.arctan2(a, b), dtype)


@silent
def hypot(self, other):
    a, b, dtype = _float_binary("hypot_cpu", self, other)
    return _array(np.hypot(a, b), dtype)


@silent
def copysign_Tensor(self, other):
    a, b, dtype = _float_binary(None, self, other)
    return _array(np.copysign(a, b), dtype)


def copysign_Scalar(self, other):
    return copysign_Tensor(self, other)


def _nan_ignoring(function: np.ufunc, self: Any, other: Any) -> np.ndarray:
    """fmax and fmin: maximum and minimum that take the number where one side is NaN."""
    dtype = result_type(self, other)
    a, b = _binary(self, other, dtype)
    broadcast_shapes(np.shape(a), np.shape(b))
    if dtype.kind == "b":
        return _array((np.logical_or if function is np.fmax else np.logical_and)(a, b), dtype)
    return _array(function(a, b), dtype)


def fmax(self, other):
    return _nan_ignoring(np.fmax, self, other)


def fmin(self, other):
    return _nan_ignoring(np.fmin, self, other)


@silent
def logaddexp(self, other):
    a, b, dtype = _float_binary("logaddexp_cpu", self, other)
    return _array(np.logaddexp(a, b), dtype)


@silent
def logaddexp2(self, other):
    a, b, dtype = _float_binary("logaddexp2_cpu", self, other)
    return _array(np.logaddexp2(a, b), dtype)


@silent
def xlogy_Tensor(self, other):
    """x log y, 0 where x == 0 (whatever y is, but NaN where y is NaN)."""
    a, b, dtype = _float_binary(None, self, other)
    result = np.where(a == 0, dtype.type(0), a * np.log(b))
    return _array(np.where(np.isnan(b), b, result), dtype)


def xlogy_Scalar_Self(self, other):
    return xlogy_Tensor(self, other)


def xlogy_Scalar_Other(self, other):
    return xlogy_Tensor(self, other)


@silent
def special_xlog1py(self, other):
    """x log(1 + y), 0 where x == 0 (but NaN where y is NaN)."""
    a, b, dtype = _float_binary(None, self, other)
    result = np.where(a == 0, dtype.type(0), a * np.log1p(b))
    return _array(np.where(np.isnan(b), b, result), dtype)


def special_xlog1py_self_scalar(self, other):
    return special_xlog1py(self, other)


def special_xlog1py_other_scalar(self, other):
    return special_xlog1py(self, other)


def nextafter(self, other):
    a, b, dtype = _float_binary("nextafter_cpu", self, other)
    return _array(np.nextafter(a, b), dtype)


@silent
def ldexp_Tensor(self, other):
    """self * 2^other, as torch computes it (a multiplication by a power of two)."""
    a, b, dtype = _float_binary(None, self, other)
    return _array(a * np.exp2(b), dtype)


def _igamma_series(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) by its series (for x < a + 1)."""
    term = total = 1 / a
    denominator = a
    for _ in range(10000):
        denominator += 1
        term *= x / denominator
        total += term
        if builtins.abs(term) < builtins.abs(total) * 1e-17:
            break
    return total * math.exp(a * math.log(x) - x - math.lgamma(a))


def _igammac_fraction(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) by its continued fraction (for
    x >= a + 1), evaluated by the modified Lentz method."""
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if builtins.abs(d) < tiny else d
        c = b + an / c
        c = tiny if builtins.abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if builtins.abs(delta - 1) < 1e-17:
            break
    return math.exp(a * math.log(x) - x - math.lgamma(a)) * h


# Temme's uniform expansion of Q(a, x) for large a and x near a: the first Taylor
# coefficients in eta of its functions c0, c1, c2 (DLMF 8.12.8 - 8.12.10)
_TEMME = (
    (-1 / 3, 1 / 12, -2 / 135, 1 / 864, 1 / 2835, -139 / 777600, 1 / 25515,
     -571 / 261273600, 281 / 151559100),
    (-1 / 540, -1 / 288, 1 / 378, -77 / 77760, 8 / 25515, -0.00040187757201646,
     0.00018098550334489977),
    (25 / 6048, -139 / 51840, 1 / 1296, 2.0093878600823045e-6, -1.0736653226365161e-4),
)


def _igamma_temme(a: float, x: float, upper: bool) -> float:
    """Q(a, x) (P if not `upper`) by Temme's uniform asymptotic expansion: for a > 200 and
    |x - a| / a < 4.5 / sqrt(a), where torch also leaves the series and the fraction (they
    would need about sqrt(a) terms)."""
    # eta as torch computes it: log1p(sigma) - sigma directly (it loses digits for x very
    # near a, and so do torch's values), pi as a float32
    sigma = (x - a) / a
    eta = math.sqrt(-2 * (math.log1p(sigma) - sigma))
    eta = eta if x > a else -eta if x < a else 0.0
    correction = builtins.sum(builtins.sum(c * eta ** n for n, c in enumerate(row)) * a ** -k
                              for k, row in enumerate(_TEMME))
    remainder = (math.exp(-a * eta * eta / 2) / math.sqrt(2 * 3.1415927410125732 * a)
                 * correction)
    if upper:
        return math.erfc(eta * math.sqrt(a / 2)) / 2 + remainder
    return math.erfc(-eta * math.sqrt(a / 2)) / 2 - remainder


def _igamma_scalar(a: float, x: float, upper: bool) -> float:
    """P(a, x) (or Q(a, x) if `upper`), with torch's values at the edges of the domain, in
    torch's order of tests (so igamma(inf, nan) is 0 and igamma(nan, inf) is 1)."""
    if x < 0 or a < 0:
        return math.nan
    if a == 0:
        return float(not upper) if x > 0 else math.nan
    if x == 0:
        return float(upper)
    if math.isinf(a):
        return math.nan if math.isinf(x) else float(upper)
    if math.isinf(x):
        return float(not upper)
    if math.isnan(a) or math.isnan(x):
        return math.nan
    distance = builtins.abs(x - a) / a
    if a > 200 and (distance < 4.5 / math.sqrt(a) or a > 1e10 and distance < 0.3):
        # (torch's range for the expansion; and for a so large that the series and the
        # fraction would round a * log(x) - x - lgamma(a) past exp's range, near it)
        return _igamma_temme(a, x, upper)
    if x < a + 1:
        lower = _igamma_series(a, x)
        return 1 - lower if upper else lower
    complement = _igammac_fraction(a, x)
    return complement if upper else 1 - complement


_igamma = np.vectorize(_igamma_scalar, otypes=[np.float64])


def igamma(self, other):
    """The regularized lower incomplete gamma function P(self, other)."""
    a, b, dtype = _float_binary("igamma_cpu", self, other)
    with silenced():
        return _array(_igamma(a.astype(np.float64), b.astype(np.float64), False), dtype)


def igammac(self, other):
    """The regularized upper incomplete gamma function Q(self, other) = 1 - P."""
    a, b, dtype = _float_binary("igammac_cpu", self, other)
    with silenced():
        return _array(_igamma(a.astype(np.float64), b.astype(np.float64), True), dtype)


def special_zeta(self, other):
    """The Hurwitz zeta function zeta(self, other) = sum_k (k + other)^-self."""
    a, b, dtype = _float_binary(None, self, other)
    with silenced():
        return _array(_zeta(a.astype(np.float64), b.astype(np.float64)), dtype)


def special_zeta_self_scalar(self, other):
    return special_zeta(self, other)


def special_zeta_other_scalar(self, other):
    return special_zeta(self, other)


def frexp_Tensor(self):
    """The mantissa in [0.5, 1) (by magnitude) and the int32 exponent: self = m * 2^e."""
    if self.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(self)
    return _array(mantissa, self.dtype), exponent.astype(np.int32)



# -- torch.special: orthogonal polynomials and Bessel functions (helper "special") ----------
# Non-differentiable in torch. Each polynomial P_n(x) is computed as torch's CPU kernel does:
# a few closed forms (at the ends of the interval, and cos/sin of n acos(x) inside it for
# large n), else the three-term recurrence up to n, in the result's own float dtype. The
# degree n is a tensor too: truncated to an integer, NaN, infinities and values beyond int64
# count as a negative degree (torch's cast gives the lowest int64 there), which gives 0.

def _degree(n: np.ndarray) -> np.ndarray:
    finite = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(finite, np.trunc(np.where(finite, n, 0)), -1).astype(np.int64)


def _polynomial_operands(x: Any, n: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """x in the result dtype (the promoted float dtype), n as integer degrees, broadcast."""
    a, b, dtype = _float_binary(None, x, n)
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    return a, _degree(b), dtype


def _recurrence(n: np.ndarray, first: np.ndarray, second: np.ndarray, step: Any,
                todo: np.ndarray) -> np.ndarray:
    """P_n where `todo`, from P_0 = first and P_1 = second by P_(k+1) = step(k, P_k, P_(k-1)),
    k = 1, 2, ..., each element stopping at its own n; NaN stays NaN, so the loop ends early
    once every element still going is NaN."""
    previous, current = np.array(first, copy=True), np.array(second, copy=True)
    top = int(n[todo].max()) if todo.any() else 1
    for k in range(1, top):
        going = todo & (n > k)
        following = step(k, current, previous)
        previous = np.where(going, current, previous)
        current = np.where(going, following, current)
        if k % 32 == 0 and np.isnan(current[going]).all():
            break
    return current


def _pick(cases: list[tuple[np.ndarray, Any]], otherwise: Any) -> np.ndarray:
    """np.select, first matching case wins, with every branch computed silently."""
    return np.select([c for c, _ in cases], [v for _, v in cases], otherwise)


# The values at the ends of the interval (x = 1 and x = -1, or 1 and 0 shifted) and, inside it
# for large n, in theta = acos(y): per kind, (top, bottom, trigonometric form) as functions of
# m (the degree as a float), sign ((-1)^n), y and theta.
_CHEBYSHEV = {
    "t": (lambda m, s: 1, lambda m, s: s,
          lambda m, y, t: np.cos(m * t)),
    "u": (lambda m, s: m + 1, lambda m, s: s * (m + 1),
          lambda m, y, t: np.sin((m + 1) * t) / np.sin(t)),
    "v": (lambda m, s: 1, lambda m, s: s * (m + m + 1),
          lambda m, y, t: np.cos((m + 0.5) * t) / np.cos(t / 2)),
    "w": (lambda m, s: m + m + 1, lambda m, s: s,
          lambda m, y, t: np.sin((m + 0.5) * t) / np.sin(t / 2)),
}
# The degree above which torch takes the trigonometric form (of x, of 2x - 1).
_CHEBYSHEV_TRIGONOMETRIC = {"t": (6, 6), "u": (8, 6), "v": (8, 6), "w": (8, 4)}


@silent
def _chebyshev(x: Any, n: Any, kind: str, shifted: bool) -> np.ndarray:
    """Chebyshev polynomials of the first to fourth kinds (T, U, V, W), of x or (shifted)
    of 2x - 1: P_(k+1) = 2y P_k - P_(k-1) from P_0 = 1 and P_1 = y, 2y, 2y - 1, 2y + 1."""
    x, n, dtype = _polynomial_operands(x, n)
    one = dtype.type(1)
    y = x + x - one if shifted else x
    twice = y + y
    first = {"t": y, "u": twice, "v": twice - one, "w": twice + one}[kind]
    sign = np.where(n % 2 == 1, -one, one)
    m = n.astype(dtype)
    top_value, bottom_value, trigonometric = _CHEBYSHEV[kind]
    top, bottom = (x == 1, x == 0) if shifted else (x == 1, x == -1)
    theta = np.arccos(np.where(np.abs(y) < 1, y, 0)).astype(dtype)
    inside = (n > _CHEBYSHEV_TRIGONOMETRIC[kind][shifted]) & (np.abs(y) < 1)
    trig = trigonometric(m, y, theta)
    # where the trigonometric form is 0/0 (theta rounds to 0 or pi), its limit
    if kind == "u":
        trig = np.where(np.sin(theta) != 0, trig, (m + 1) * np.cos((m + 1) * theta) / y)
    elif kind == "v":
        trig = np.where(np.sin(theta / 2) != 1, trig, sign * (m + m + 1))
    elif kind == "w":
        edge = sign if shifted else np.where(x > 0, m + m + 1, sign)
        trig = np.where(np.cos(theta / 2) != 1, trig, edge)
    rest = (n >= 2) & ~top & ~bottom & ~inside
    looped = _recurrence(n, np.ones_like(x), first, lambda k, q, p: twice * q - p, rest)
    return _array(_pick([(n < 0, 0), (top, top_value(m, sign)), (bottom, bottom_value(m, sign)),
                         (inside, trig), (n == 0, one), (n == 1, first), (np.isnan(x), np.nan)],
                        looped), dtype)


def special_chebyshev_polynomial_t(x, n):
    return _chebyshev(x, n, "t", False)


def special_chebyshev_polynomial_u(x, n):
    return _chebyshev(x, n, "u", False)


def special_chebyshev_polynomial_v(x, n):
    return _chebyshev(x, n, "v", False)


def special_chebyshev_polynomial_w(x, n):
    return _chebyshev(x, n, "w", False)


def special_shifted_chebyshev_polynomial_t(x, n):
    return _chebyshev(x, n, "t", True)


def special_shifted_chebyshev_polynomial_u(x, n):
    return _chebyshev(x, n, "u", True)


def special_shifted_chebyshev_polynomial_v(x, n):
    return _chebyshev(x, n, "v", True)


def special_shifted_chebyshev_polynomial_w(x, n):
    return _chebyshev(x, n, "w", True)


def _generic_polynomial(x: np.ndarray, n: np.ndarray, dtype: np.dtype, first: np.ndarray,
                        step: Any, cases: list) -> np.ndarray:
    ones = np.ones_like(x)
    rest = n >= 2
    for condition, _ in cases:
        rest = rest & ~condition
    looped = _recurrence(n, ones, first, step, rest)
    return _array(_pick([(n < 0, 0), *cases, (n == 0, 1), (n == 1, first),
                         (np.isnan(x), np.nan)], looped), dtype)


def _hermite_limit(dtype: np.dtype) -> int:
    """The largest degree torch's Hermite kernels compute (NaN beyond)."""
    return 128 if dtype == np.float32 else 512


@silent
def special_hermite_polynomial_h(x, n):
    """The physicists' Hermite polynomial: H_(k+1) = 2x H_k - 2k H_(k-1)."""
    x, n, dtype = _polynomial_operands(x, n)
    too_high = n > _hermite_limit(dtype)
    return _generic_polynomial(x, n, dtype, x + x, lambda k, q, p: (x + x) * q - (k + k) * p,
                               [(too_high, np.nan)])


@silent
def special_hermite_polynomial_he(x, n):
    """The probabilists' Hermite polynomial: He_(k+1) = x He_k - k He_(k-1)."""
    x, n, dtype = _polynomial_operands(x, n)
    too_high = n > _hermite_limit(dtype)
    return _generic_polynomial(x, n, dtype, x, lambda k, q, p: x * q - k * p,
                               [(too_high, np.nan)])


@silent
def special_laguerre_polynomial_l(x, n):
    """The Laguerre polynomial: (k + 1) L_(k+1) = (2k + 1 - x) L_k - k L_(k-1); 1 at x = 0."""
    x, n, dtype = _polynomial_operands(x, n)
    one = dtype.type(1)
    return _generic_polynomial(x, n, dtype, one - x,
                               lambda k, q, p: ((k + k + (one - x)) * q - k * p)
                               / dtype.type(k + 1), [(np.abs(x) == 0, one)])


@silent
def special_legendre_polynomial_p(x, n):
    """The Legendre polynomial: (k + 1) P_(k+1) = (2k + 1) x P_k - k P_(k-1); +-1 at x = +-1."""
    x, n, dtype = _polynomial_operands(x, n)
    one = dtype.type(1)
    end = np.abs(x) == 1
    value = np.where((x > 0) | (n % 2 == 0), one, -one)
    return _generic_polynomial(x, n, dtype, x,
                               lambda k, q, p: (dtype.type(k + k + 1) * x * q - k * p)
                               / dtype.type(k + 1), [(end, value)])


# Bessel functions of the first and second kinds, J and Y of orders 0 and 1, as torch's CPU
# kernels compute them: the rational approximations of Moshier's Cephes library (j0.c, j1.c;
# 3-clause BSD), its tables below, on [0, 5] in x^2 and beyond 5 in (5/x)^2 inside Hankel's
# expansion. Torch evaluates every denominator as a plain polynomial, where Cephes's are
# monic with the leading 1 left out of the table, so its values differ from the true Bessel
# functions by up to 4e-7 around x = 5 (less further away); gradgen follows torch.

_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)
_TWO_OVER_PI = 0.6366197723675814  # 2 / pi
_SQRT_TWO_OVER_PI = 0.7978845608028654  # sqrt(2 / pi)


def _horner(coefficients: tuple[float, ...], z: np.ndarray) -> np.ndarray:
    """The polynomial with these coefficients, highest power first, at z."""
    total = np.zeros_like(z)
    for coefficient in coefficients:
        total = total * z + coefficient
    return total


def _hankel_cephes(order: int, x: np.ndarray, second_kind: bool) -> np.ndarray:
    """J or Y of order 0 or 1 beyond x = 5: sqrt(2 / (pi x)) (P cos chi -+ (5/x) Q sin chi),
    P and Q rational in (5/x)^2, chi = x - pi/4 (order 0) or x - 3pi/4 (order 1)."""
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else \
        (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    z = 25.0 / (x * x) if order == 0 else 5.0 / x * (5.0 / x)
    p = _horner(pp, z) / _horner(pq, z)
    q = _horner(qp, z) / _horner(qq, z)
    chi = x - (0.7853981633974483 if order == 0 else 2.356194490192345)
    if second_kind:
        value = p * np.sin(chi) + 5.0 / x * q * np.cos(chi)
    else:
        value = p * np.cos(chi) - 5.0 / x * q * np.sin(chi)
    return value * _SQRT_TWO_OVER_PI / np.sqrt(x)


def _j0_cephes(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    square = x * x
    near = (square - 5.78318596294678452118) * (square - 30.4712623436620863991) \
        * _horner(_J0_RP, square) / _horner(_J0_RQ, square)
    near = np.where(x < 1e-5, 1.0 - square / 4.0, near)
    return np.where(x <= 5.0, near, _hankel_cephes(0, np.maximum(x, 5.0), False))


def _j1_cephes(x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    square = magnitude * magnitude
    near = _horner(_J1_RP, square) / _horner(_J1_RQ, square) * magnitude \
        * (square - 14.6819706421238932572) * (square - 49.2184563216946036703)
    value = np.where(magnitude <= 5.0, near, _hankel_cephes(1, np.maximum(magnitude, 5.0), False))
    return np.where(x < 0, -value, value)


def _y0_cephes(x: np.ndarray) -> np.ndarray:
    positive = np.where(x > 0, x, 1.0)
    square = positive * positive
    near = _horner(_Y0_YP, square) / _horner(_Y0_YQ, square) \
        + _TWO_OVER_PI * np.log(positive) * _j0_cephes(positive)
    value = np.where(x <= 5.0, near, _hankel_cephes(0, np.maximum(positive, 5.0), True))
    value = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, value))
    return np.where(np.isnan(x), x, value)


def _y1_cephes(x: np.ndarray) -> np.ndarray:
    positive = np.where(x > 0, x, 1.0)
    square = positive * positive
    near = positive * (_horner(_Y1_YP, square) / _horner(_Y1_YQ, square)) \
        + _TWO_OVER_PI * (_j1_cephes(positive) * np.log(positive) - 1.0 / positive)
    value = np.where(x <= 5.0, near, _hankel_cephes(1, np.maximum(positive, 5.0), True))
    value = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, value))
    return np.where(np.isnan(x), x, value)


def special_bessel_j0(self):
    return _in_float64(_j0_cephes, self)


def special_bessel_j1(self):
    return _in_float64(_j1_cephes, self)


def special_bessel_y0(self):
    return _in_float64(_y0_cephes, self)


def special_bessel_y1(self):
    return _in_float64(_y1_cephes, self)


def special_modified_bessel_i0(self):
    """I_0, as i0 but NaN at the infinities (torch's kernel)."""
    return _in_float64(lambda x: np.where(np.isinf(x), np.nan, _bessel_i64(0, x, False)), self)


def special_modified_bessel_i1(self):
    """I_1, as special_i1 but NaN at the infinities and +0 at -0 (torch's kernel)."""
    return _in_float64(lambda x: np.where(np.isinf(x), np.nan, _bessel_i64(1, x, False) + 0.0),
                       self)


# The modified Bessel functions of the second kind K_0 and K_1 (times e^x when scaled), for
# x > 0: their series in (x/2)^2 up to 1, the integral int_0^inf exp(-x (cosh t - 1)) cosh(nu t)
# dt by the trapezoidal rule up to 25 (its integrand is analytic and decays doubly
# exponentially, so the rule converges geometrically), the asymptotic expansion beyond.

_EULER_GAMMA = 0.5772156649015329
_K_SERIES_END, _K_ASYMPTOTIC_START, _K_STEP = 1.0, 25.0, 0.05


def _k_series(order: int, x: np.ndarray) -> np.ndarray:
    """K_order(x) for small x: -(log(x/2) + gamma) I_0 + sum_k H_k (x^2/4)^k / (k!)^2, or
    1/x + log(x/2) I_1 - (x/4) sum_k (H_k + H_(k+1) - 2 gamma) (x^2/4)^k / (k! (k+1)!)."""
    quarter = x * x / 4
    log_half = np.log(x / 2)
    term, total, harmonic = np.ones_like(x), np.zeros_like(x), 0.0
    for k in range(30):
        if k:
            term = term * quarter / (k * (k + order))
            harmonic += 1 / k
        weight = harmonic if order == 0 else 2 * harmonic + 1 / (k + 1) - 2 * _EULER_GAMMA
        total = total + weight * term
    if order == 0:
        return total - (log_half + _EULER_GAMMA) * _bessel_i64(0, x, False)
    return 1 / x + log_half * _bessel_i64(1, x, False) - x / 4 * total


def _k_integral_scaled(order: int, x: np.ndarray) -> np.ndarray:
    """e^x K_order(x) by the trapezoidal rule on [0, 8] (x >= 1: the integrand is below
    e^-740 past t = 8)."""
    t = np.arange(0.0, 8.0 + _K_STEP / 2, _K_STEP)
    weights = np.exp(-x[..., None] * (np.cosh(t) - 1)) * np.cosh(order * t)
    return _K_STEP * (weights.sum(-1) - weights[..., 0] / 2)


def _k_asymptotic_scaled(order: int, x: np.ndarray) -> np.ndarray:
    """e^x K_order(x) ~ sqrt(pi / 2x) sum_k a_k / x^k (Hankel's a_k, all terms positive in
    sign pattern of the product)."""
    mu = 4 * order * order
    term, total = np.ones_like(x), np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
        total = total + term
    return np.sqrt(math.pi / (2 * x)) * total


def _second_kind_modified(order: int, x: np.ndarray, scaled: bool) -> np.ndarray:
    """K_order(x) (times e^x if scaled): inf at 0, NaN below it, 0 at +inf."""
    positive = np.where(x > 0, x, 1.0)
    low = np.minimum(positive, _K_SERIES_END)
    middle = np.clip(positive, _K_SERIES_END, _K_ASYMPTOTIC_START)
    high = np.maximum(positive, _K_ASYMPTOTIC_START)
    series = _k_series(order, low)
    if scaled:
        series = series * np.exp(low)
    rest = np.where(positive <= _K_ASYMPTOTIC_START, _k_integral_scaled(order, middle),
                    _k_asymptotic_scaled(order, high))
    if not scaled:
        rest = rest * np.exp(-positive)
    value = np.where(positive <= _K_SERIES_END, series, rest)
    value = np.where(x == 0, np.inf, np.where(x < 0, np.nan, value))
    value = np.where(x == np.inf, 0.0, value)
    return np.where(np.isnan(x), x, value)


def special_modified_bessel_k0(self):
    return _in_float64(lambda x: _second_kind_modified(0, x, False), self)


def special_modified_bessel_k1(self):
    return _in_float64(lambda x: _second_kind_modified(1, x, False), self)


def special_scaled_modified_bessel_k0(self):
    return _in_float64(lambda x: _second_kind_modified(0, x, True), self)


def special_scaled_modified_bessel_k1(self):
    return _in_float64(lambda x: _second_kind_modified(1, x, True), self)


def special_spherical_bessel_j0(self):
    """sin(x) / x: its Taylor polynomial to x^12 below |x| = 1/2, 0 at the infinities."""
    def function(x):
        square = x * x
        taylor = np.zeros_like(x)
        for k in range(6, -1, -1):  # sum_k (-x^2)^k / (2k + 1)!
            taylor = taylor * square + (-1) ** k / math.factorial(2 * k + 1)
        value = np.where(np.abs(x) < 0.5, taylor, np.sin(x) / np.where(x == 0, 1.0, x))
        return np.where(np.isinf(x), 0.0, value)
    return _in_float64(function, self)


# The Airy function Ai, as torch's CPU kernel computes it: its Maclaurin series on
# [-2.09, 2.09), and outside Cephes's (airy.c, 3-clause BSD) rational approximations in
# 1/zeta (zeta = 2/3 |x|^(3/2)) inside the asymptotic forms; torch evaluates the
# denominators of the oscillating side as plain polynomials, where Cephes's are monic, and
# gradgen follows it there as for the Bessel functions.

_AIRY_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
            1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
            1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AIRY_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
            1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
            1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AIRY_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01,
             -6.93158036036933542233e-01, -2.79779981545119124951e-01,
             -4.91900132609500318020e-02, -4.06265923594885404393e-03,
             -1.59276496239262096340e-04, -2.77649108155232920844e-06,
             -1.67787698489114633780e-08)
_AIRY_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
             9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
             4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AIRY_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
             9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
             5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
             8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AIRY_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
             5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
             4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
             4.91834570062930015649e-09)
_INVERSE_SQRT_PI = 0.5641895835477563  # 1 / sqrt(pi)
_AIRY_AI_0, _AIRY_AI_PRIME_0 = 0.3550280538878172, -0.2588194037928068  # Ai(0), Ai'(0)


def _airy_series(x: np.ndarray) -> np.ndarray:
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f = sum_k x^3k / (2 3 5 6 ... (3k-1)(3k)) and
    g = sum_k x^(3k+1) / (3 4 6 7 ... (3k)(3k+1)) (converged to double precision for
    |x| < 2.09 well within 16 terms)."""
    cube = x * x * x
    f_term, g_term = np.ones_like(x), x.copy()
    f, g = f_term.copy(), g_term.copy()
    for k in range(1, 16):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f, g = f + f_term, g + g_term
    return _AIRY_AI_0 * f + _AIRY_AI_PRIME_0 * g


def _airy_decaying(x: np.ndarray) -> np.ndarray:
    """Ai(x) for x >= 2.09: e^-zeta / (2 sqrt(pi) x^(1/4)) times a rational function of
    1/zeta."""
    zeta = 2.0 * x * np.sqrt(x) / 3.0
    ratio = _horner(_AIRY_AN, 1.0 / zeta) / _horner(_AIRY_AD, 1.0 / zeta)
    return _INVERSE_SQRT_PI * ratio / (2.0 * np.sqrt(np.sqrt(x)) * np.exp(zeta))


def _airy_oscillating(x: np.ndarray) -> np.ndarray:
    """Ai(x) for x < -2.09: (sin(zeta + pi/4) (1 + z^2 F) - cos(zeta + pi/4) z G) /
    (sqrt(pi) |x|^(1/4)), z = 1/zeta, F and G rational in z^2."""
    zeta = -2.0 * x * np.sqrt(-x) / 3.0
    z = 1.0 / zeta
    square = z * z
    f = _horner(_AIRY_AFN, square) / _horner(_AIRY_AFD, square)
    g = _horner(_AIRY_AGN, square) / _horner(_AIRY_AGD, square)
    t = zeta + 0.7853981633974483
    return _INVERSE_SQRT_PI / np.sqrt(np.sqrt(-x)) * (np.sin(t) * (1.0 + square * f)
                                                      - np.cos(t) * (z * g))


def _airy_ai(x: np.ndarray) -> np.ndarray:
    value = np.select([x < -2.09, x < 2.09],
                      [_airy_oscillating(np.minimum(x, -2.09)),
                       _airy_series(np.clip(x, -2.09, 2.09))],
                      _airy_decaying(np.maximum(x, 2.09)))
    value = np.where(x > 103.892, 0.0, value)
    return np.where(np.isinf(x), np.nan, np.where(np.isnan(x), x, value))


def special_airy_ai(x):
    value = _in_float64(_airy_ai, x)
    if value.dtype == np.float32:
        # torch's float32 denominator 2 x^(1/4) e^zeta overflows from x = 25.78 on: 0 there
        with silenced():
            wide = np.asarray(x, np.float64)
            denominator = 2.0 * np.sqrt(np.sqrt(wide)) * np.exp(2.0 * wide * np.sqrt(wide) / 3.0)
        overflows = np.isfinite(wide) & (denominator > float(np.finfo(np.float32).max))
        value = np.where(overflows, np.float32(0), value)
    return value


# The overloads with a Python number for x or for n.


def special_chebyshev_polynomial_t_x_scalar(x, n):
    return special_chebyshev_polynomial_t(x, n)


def special_chebyshev_polynomial_t_n_scalar(x, n):
    return special_chebyshev_polynomial_t(x, n)


def special_chebyshev_polynomial_u_x_scalar(x, n):
    return special_chebyshev_polynomial_u(x, n)


def special_chebyshev_polynomial_u_n_scalar(x, n):
    return special_chebyshev_polynomial_u(x, n)


def special_chebyshev_polynomial_v_x_scalar(x, n):
    return special_chebyshev_polynomial_v(x, n)


def special_chebyshev_polynomial_v_n_scalar(x, n):
    return special_chebyshev_polynomial_v(x, n)


def special_chebyshev_polynomial_w_x_scalar(x, n):
    return special_chebyshev_polynomial_w(x, n)


def special_chebyshev_polynomial_w_n_scalar(x, n):
    return special_chebyshev_polynomial_w(x, n)


def special_shifted_chebyshev_polynomial_t_x_scalar(x, n):
    return special_shifted_chebyshev_polynomial_t(x, n)


def special_shifted_chebyshev_polynomial_t_n_scalar(x, n):
    return special_shifted_chebyshev_polynomial_t(x, n)


def special_shifted_chebyshev_polynomial_u_x_scalar(x, n):
    return special_shifted_chebyshev_polynomial_u(x, n)


def special_shifted_chebyshev_polynomial_u_n_scalar(x, n):
    return special_shifted_chebyshev_polynomial_u(x, n)


def special_shifted_chebyshev_polynomial_v_x_scalar(x, n):
    return special_shifted_chebyshev_polynomial_v(x, n)


def special_shifted_chebyshev_polynomial_v_n_scalar(x, n):
    return special_shifted_chebyshev_polynomial_v(x, n)


def special_shifted_chebyshev_polynomial_w_x_scalar(x, n):
    return special_shifted_chebyshev_polynomial_w(x, n)


def special_shifted_chebyshev_polynomial_w_n_scalar(x, n):
    return special_shifted_chebyshev_polynomial_w(x, n)


def special_hermite_polynomial_h_x_scalar(x, n):
    return special_hermite_polynomial_h(x, n)


def special_hermite_polynomial_h_n_scalar(x, n):
    return special_hermite_polynomial_h(x, n)


def special_hermite_polynomial_he_x_scalar(x, n):
    return special_hermite_polynomial_he(x, n)


def special_hermite_polynomial_he_n_scalar(x, n):
    return special_hermite_polynomial_he(x, n)


def special_laguerre_polynomial_l_x_scalar(x, n):
    return special_laguerre_polynomial_l(x, n)


def special_laguerre_polynomial_l_n_scalar(x, n):
    return special_laguerre_polynomial_l(x, n)


def special_legendre_polynomial_p_x_scalar(x, n):
    return special_legendre_polynomial_p(x, n)


def special_legendre_polynomial_p_n_scalar(x, n):
    return special_legendre_polynomial_p(x, n)


# -- LDL^T with Bunch-Kaufman pivoting, as LAPACK's sytf2 / sytrs compute it (lower) --------
# (helper "special": torch.linalg.ldl_factor(_ex) and ldl_solve, not ops of the spec)

_BUNCH_KAUFMAN_ALPHA = (1 + math.sqrt(17)) / 8


def _ldl_pivot(A: np.ndarray, k: int) -> tuple[int, int]:
    """(the row to swap with, 1 or 2: the size of the block; 0 for a zero column) for column
    k, by Bunch and Kaufman's rule: a 1x1 pivot when the diagonal is large enough against
    its column, else the largest off-diagonal's row, as a 1x1 or a 2x2 block."""
    n = A.shape[0]
    absakk = builtins.abs(A[k, k])
    imax, colmax = k, 0.0
    if k < n - 1:
        imax = k + 1 + int(np.argmax(np.abs(A[k + 1:, k])))
        colmax = builtins.abs(A[imax, k])
    if builtins.max(absakk, colmax) == 0 or math.isnan(absakk):
        return k, 0
    if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax:
        return k, 1
    rowmax = float(np.max(np.abs(A[imax, k:imax])))
    if imax < n - 1:
        rowmax = builtins.max(rowmax, float(np.max(np.abs(A[imax + 1:, imax]))))
    if absakk >= _BUNCH_KAUFMAN_ALPHA * colmax * (colmax / rowmax):
        return k, 1
    if builtins.abs(A[imax, imax]) >= _BUNCH_KAUFMAN_ALPHA * rowmax:
        return imax, 1
    return imax, 2


def _ldl_swap(A: np.ndarray, k: int, kk: int, kp: int, step: int) -> None:
    """Rows and columns kk and kp of the trailing (lower) block exchanged."""
    A[kp + 1:, [kk, kp]] = A[kp + 1:, [kp, kk]]
    between = A[kk + 1:kp, kk].copy()
    A[kk + 1:kp, kk] = A[kp, kk + 1:kp]
    A[kp, kk + 1:kp] = between
    A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
    if step == 2:
        A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]


def _ldl_eliminate(A: np.ndarray, k: int, step: int) -> None:
    """The trailing block updated by the 1x1 or 2x2 pivot at k, the multipliers stored in its
    column(s)."""
    n = A.shape[0]
    if step == 1:
        if k < n - 1:
            d11 = 1 / A[k, k]
            x = A[k + 1:, k].copy()
            for j in range(k + 1, n):  # the lower triangle, column by column
                A[j:, j] += x[j - k - 1:] * (-d11 * x[j - k - 1])
            A[k + 1:, k] *= d11
        return
    if k < n - 2:
        d21 = A[k + 1, k]
        d11, d22 = A[k + 1, k + 1] / d21, A[k, k] / d21
        d21 = 1 / (d11 * d22 - 1) / d21
        for j in range(k + 2, n):
            wk = d21 * (d11 * A[j, k] - A[j, k + 1])
            wkp1 = d21 * (d22 * A[j, k + 1] - A[j, k])
            A[j:, j] = A[j:, j] - A[j:, k] * wk - A[j:, k + 1] * wkp1
            A[j, k], A[j, k + 1] = wk, wkp1


def ldl_factor_matrix(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(LD, pivots, info) of one symmetric matrix, read from its lower triangle: L (unit,
    below the diagonal) and the 1x1 and 2x2 blocks of D in one matrix, LAPACK's 1-based
    pivots (negative for a 2x2 block) and the first zero pivot (0 if none)."""
    A = np.tril(matrix).astype(matrix.dtype, copy=True)
    n = A.shape[0]
    pivots = np.zeros(n, dtype=np.int32)
    info, k = 0, 0
    with silenced():
        while k < n:
            kp, step = _ldl_pivot(A, k)
            if step == 0:  # a zero column: nothing to eliminate, the first one is info
                info = info or k + 1
                pivots[k] = k + 1
                k += 1
                continue
            kk = k + step - 1
            if kp != kk:
                _ldl_swap(A, k, kk, kp, step)
            _ldl_eliminate(A, k, step)
            pivots[k:k + step] = kp + 1 if step == 1 else -(kp + 1)
            k += step
    return np.tril(A), pivots, info


def ldl_solve_matrix(LD: np.ndarray, pivots: np.ndarray, B: np.ndarray) -> np.ndarray:
    """X with A X = B, A = P L D L^T P^T as ldl_factor_matrix gives it."""
    X = B.astype(LD.dtype, copy=True)
    n = LD.shape[0]
    with silenced():
        k = 0
        while k < n:  # L D Y = P^T B
            if pivots[k] > 0:
                kp = pivots[k] - 1
                X[[k, kp]] = X[[kp, k]]
                X[k + 1:] -= np.outer(LD[k + 1:, k], X[k])
                X[k] *= 1 / LD[k, k]
                k += 1
                continue
            kp = -pivots[k] - 1
            X[[k + 1, kp]] = X[[kp, k + 1]]
            X[k + 2:] -= np.outer(LD[k + 2:, k], X[k])
            X[k + 2:] -= np.outer(LD[k + 2:, k + 1], X[k + 1])
            off = LD[k + 1, k]
            first, second = LD[k, k] / off, LD[k + 1, k + 1] / off
            denominator = first * second - 1
            upper, lower = X[k] / off, X[k + 1] / off
            X[k], X[k + 1] = (second * upper - lower) / denominator, \
                (first * lower - upper) / denominator
            k += 2
        k = n - 1
        while k >= 0:  # L^T P^T X = Y
            if pivots[k] > 0:
                X[k] -= LD[k + 1:, k] @ X[k + 1:]
                kp = pivots[k] - 1
                X[[k, kp]] = X[[kp, k]]
                k -= 1
                continue
            X[k] -= LD[k + 1:, k] @ X[k + 1:]
            X[k - 1] -= LD[k + 1:, k - 1] @ X[k + 1:]
            kp = -pivots[k] - 1
            X[[k, kp]] = X[[kp, k]]
            k -= 2
    return X


# -- reductions, scans, indexing and shape (torch's spec, family 2) ----------------------------
# (kernels of this family follow; keep this line and the blank ones around it)

def _diagonal_view(self: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The (offset) diagonal of the planes (dim1, dim2) as a view that writes through (numpy's
    own is read-only), the diagonal's dimension last, as torch.diagonal lays it out."""
    first, second = _wrap_dim(dim1, self.ndim), _wrap_dim(dim2, self.ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    view = np.diagonal(self, offset, first, second)
    if self.flags.writeable:
        view.flags.writeable = True
    return view


def diagonal(self, offset=0, dim1=0, dim2=1):
    return _diagonal_view(self, offset, dim1, dim2)


def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    result = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    _diagonal_view(result, offset, dim1, dim2)[...] = grad_output
    return result


def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    ndim = self.ndim + 1
    first, second = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = self.shape[-1] + builtins.abs(offset)
    shape = list(self.shape[:-1])
    for axis in sorted((first, second)):
        shape.insert(axis, size)
    result = np.zeros(shape, dtype=self.dtype)
    _diagonal_view(result, offset, first, second)[...] = self
    return result


def _scatter_into(view: np.ndarray, src: np.ndarray) -> None:
    """Write src over a window of a copy (the *_scatter ops), sizes checked as torch's."""
    if view.shape != src.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}")
    np.copyto(view, src, casting="unsafe")


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    result = self.copy()
    _scatter_into(_diagonal_view(result, offset, dim1, dim2), src)
    return result


def select_scatter(self, src, dim, index):
    result = self.copy()
    _scatter_into(select_int(result, dim, index), src)
    return result


def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    result = self.copy()
    _scatter_into(slice_Tensor(result, dim, start, end, step), src)
    return result


@silent
def trace(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dtype = np.dtype(np.int64) if self.dtype.kind in "iu" else self.dtype
    return np.asarray(np.trace(self, dtype=dtype))


def rot90(self, k=1, dims=(0, 1)):
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
    if dims[0] == dims[1] or builtins.abs(dims[0] - dims[1]) == self.ndim:
        raise RuntimeError("expected rotation dims to be different, but got dim0 = "
                           f"{dims[0]} and dim1 = {dims[1]}")
    axes = (_wrap_dim(dims[0], self.ndim), _wrap_dim(dims[1], self.ndim))
    return np.array(np.rot90(self, k % 4, axes), copy=True)


def unfold(self, dimension, size, step):
    dim = _wrap_dim(dimension, self.ndim)
    length = self.shape[dim] if self.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size "
                           f"is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not self.ndim:
        return self.reshape(1)
    shape = (*self.shape[:dim], (length - size) // step + 1, *self.shape[dim + 1:], size)
    strides = (*self.strides[:dim], self.strides[dim] * step, *self.strides[dim + 1:],
               self.strides[dim])
    return np.lib.stride_tricks.as_strided(self, shape, strides,
                                           writeable=self.flags.writeable)


@silent
def unfold_backward(grad_in, input_sizes, dim, size, step):
    sizes = tuple(input_sizes) or (1,)
    dim = _wrap_dim(dim, len(sizes))
    result = np.zeros(sizes, dtype=grad_in.dtype)
    windows = grad_in.reshape(*grad_in.shape[:-1], size) if len(input_sizes) else \
        grad_in.reshape(1, size)
    for window in range(windows.shape[dim]):
        start = window * step
        piece = np.moveaxis(np.take(windows, window, axis=dim), -1, dim)
        result[_take(dim, slice(start, start + size))] += piece
    return result.reshape(tuple(input_sizes))


def narrow_copy(self, dim, start, length):
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= self.ndim:
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
            "(Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)")
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return np.array(self[_take(dim, slice(start, start + length))], copy=True)


def t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return self.T


def transpose_(self, dim0, dim1):
    return transpose_int(self, dim0, dim1)


def unsqueeze_(self, dim):
    return unsqueeze(self, dim)


def _reshape_copy(self, size):
    return np.array(np.reshape(self, _view_shape(size, self.size)), copy=True)


def unsafe_split_Tensor(self, split_size, dim=0):
    return [piece.copy() for piece in split_Tensor(self, split_size, dim)]


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    return [piece.copy() for piece in split_with_sizes(self, split_sizes, dim)]


def _index_positions(self: np.ndarray, dim: int, index: np.ndarray, op: str,
                     allow_negative: bool) -> tuple[int, np.ndarray]:
    """(dim wrapped, the index as non-negative positions) for index_fill / index_copy,
    each with torch's messages for an index out of bounds."""
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim] if self.ndim else 1
    positions = index.reshape(-1).astype(np.int64)
    low = -size if allow_negative else 0
    for value in positions:
        if not low <= value < size:
            raise IndexError(f"{op}index {value} is out of bounds for dimension {dim} with "
                             f"size {size}")
    return dim, positions % builtins.max(size, 1)


def _index_fill(self: np.ndarray, dim: int, index: np.ndarray, value: Any) -> np.ndarray:
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    dim, positions = _index_positions(self, dim, index, "", True)
    check_fits(value, self.dtype)
    result = self.copy()
    if self.ndim:
        result[_take(dim, positions)] = value
    elif positions.size:
        result[()] = value
    return result


def index_fill_int_Scalar(self, dim, index, value):
    return _index_fill(self, dim, index, value)


def index_fill_int_Tensor(self, dim, index, value):
    value = np.asarray(value)
    if value.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return _index_fill(self, dim, index, value[()])


def _check_index_copy(self, dim, index, source) -> None:
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if self.ndim and source.ndim and self.ndim != source.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.ndim}), destination dimensionality "
            f"({self.ndim})")
    count = source.shape[dim] if source.ndim else 1
    if index.size != count:
        raise IndexError(f"index_copy_(): Number of indices ({index.size}) should be equal to "
                         f"source.size(dim) ({count})")
    for axis in range(self.ndim):
        if axis != dim and source.ndim and self.shape[axis] != source.shape[axis]:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {self.shape[axis]} at dimension {axis} and source "
                f"slice shape: {source.shape[axis]} at dimension {axis}.")
    if index.dtype != np.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtype_label(index)}")
    if self.dtype != source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_dtype_label(self)} and (source) {_dtype_label(source)}")


def index_copy(self, dim, index, source):
    dim = _wrap_dim(dim, self.ndim)
    _check_index_copy(self, dim, index, source)
    dim, positions = _index_positions(self, dim, index, "index_copy_(): ", False)
    result = self.copy()
    if not self.ndim:
        result[()] = source.reshape(())
    else:
        result[_take(dim, positions)] = source.reshape(
            source.shape if source.ndim else (1,) * self.ndim)
    return result


def _no_bool_median(self: np.ndarray, kernel: str) -> None:
    if self.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _median_position(count: np.ndarray) -> np.ndarray:
    """The lower median's place among `count` sorted values (torch never averages)."""
    return np.maximum(count - 1, 0) // 2


def median(self):
    _no_bool_median(self, "median_cpu")
    flat = self.reshape(-1)
    if not flat.size or (flat.dtype.kind in "fV" and np.isnan(flat).any()):
        return np.asarray(np.nan if flat.dtype.kind in "fV" or not flat.size else flat[0],
                          dtype=self.dtype)
    return np.asarray(np.sort(flat)[_median_position(flat.size)])


def nanmedian(self):
    _no_bool_median(self, "nanmedian_cpu")
    flat = self.reshape(-1)
    if flat.dtype.kind in "fV":
        flat = flat[~np.isnan(flat)]
    if not flat.size:
        return np.asarray(np.nan, dtype=self.dtype)
    return np.asarray(np.sort(flat)[_median_position(flat.size)])


def _pick_along(self: np.ndarray, dim: int, keepdim: bool, name: str,
                position: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the element at `position(sorted order, nan count)` of each slice
    along dim, its index in the input (median, nanmedian, kthvalue)."""
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim and not self.shape[axis]:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    data = self.reshape(1) if not self.ndim else self
    order = np.argsort(data, axis=axis, kind="stable")
    nans = (np.isnan(data).sum(axis=axis, keepdims=True) if data.dtype.kind in "fV"
            else np.zeros_like(np.take(data, [0], axis=axis), dtype=np.int64))
    place = np.asarray(position(data.shape[axis], nans), dtype=np.int64)
    indices = np.take_along_axis(order, np.broadcast_to(place, nans.shape), axis)
    values = np.take_along_axis(data, indices, axis)
    if not self.ndim:
        return values.reshape(()), indices.reshape(())
    if not keepdim:
        values, indices = np.squeeze(values, axis), np.squeeze(indices, axis)
    return values, indices.astype(np.int64)


def median_dim(self, dim, keepdim=False):
    _no_bool_median(self, "median_out")
    # A slice with NaN: its median is NaN, at the first NaN (sorted last, stably).
    return _pick_along(self, dim, keepdim, "median",
                       lambda n, nans: np.where(nans > 0, n - nans, _median_position(n)))


def nanmedian_dim(self, dim, keepdim=False):
    _no_bool_median(self, "nanmedian_out")
    return _pick_along(self, dim, keepdim, "nanmedian",
                       lambda n, nans: _median_position(np.where(nans == n, 1, n - nans)))


def kthvalue(self, k, dim=-1, keepdim=False):
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis] if self.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    return _pick_along(self, dim, keepdim, "kthvalue", lambda n, nans: np.asarray(k - 1))


def _cumulative_extreme(self: np.ndarray, dim: int, better: Any) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """cummax / cummin: the running extreme and the index it came from; a tie or a NaN
    takes the later index, and a NaN stays, as torch's kernel."""
    if not self.ndim:
        return self.copy(), np.zeros((), dtype=np.int64)
    axis = _wrap_dim(dim, self.ndim)
    data = np.moveaxis(self, axis, 0)
    values = np.array(data, copy=True)
    indices = np.zeros(data.shape, dtype=np.int64)
    for i in range(1, data.shape[0]):
        current, best = data[i], values[i - 1]
        take = better(current, best)
        if data.dtype.kind in "fV":
            take = (np.isnan(current) | take) & ~np.isnan(best) | np.isnan(current)
        values[i] = np.where(take, current, best)
        indices[i] = np.where(take, i, indices[i - 1])
    return np.moveaxis(values, 0, axis), np.moveaxis(indices, 0, axis)


def cummax(self, dim):
    return _cumulative_extreme(self, dim, np.greater_equal)


def cummin(self, dim):
    return _cumulative_extreme(self, dim, np.less_equal)


@silent
def nansum(self, dim=None, keepdim=False, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.nansum(self, axis=_axes(dim, self.ndim), keepdims=keepdim, dtype=out), out)


def count_nonzero(self, dim=None):
    axes = None if dim is None else _wrap_dim(dim, self.ndim)
    return np.asarray(np.count_nonzero(self, axis=axes), dtype=np.int64)


def count_nonzero_dim_IntList(self, dim):
    return np.asarray(np.count_nonzero(self, axis=_axes(dim, self.ndim)), dtype=np.int64)


def _flat_positions(self: np.ndarray, index: np.ndarray, op: str) -> np.ndarray:
    """take / put: index into self as one flat row, negative counting from the end."""
    if index.dtype != np.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{_dtype_label(index)}")
    positions = index.reshape(-1)
    for value in positions:
        if not -self.size <= value < self.size:
            raise IndexError(f"out of range: tried to access index {value} on a tensor of "
                             f"{self.size} elements.")
    return positions % builtins.max(self.size, 1)


def take(self, index):
    positions = _flat_positions(self, index, "take")
    return self.reshape(-1)[positions].reshape(index.shape)


@silent
def put(self, index, source, accumulate=False):
    if index.size != source.size:
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.size}, index.numel() = "
                         f"{index.size}")
    if self.dtype != source.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_dtype_label(self)} and source.dtype = {_dtype_label(source)}")
    positions = _flat_positions(self, index, "put_")
    result = np.array(self, copy=True, order="C")
    flat = result.reshape(-1)
    if accumulate:
        np.add.at(flat, positions, source.reshape(-1))
    else:
        flat[positions] = source.reshape(-1)
    return result


@silent
def dist(self, other, p=2):
    dtype = result_type(self, other)
    if dtype.kind not in "fV":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtype_label(np.empty(0, dtype))} instead.")
    _broadcastable(self, other)
    return norm_Scalar(np.subtract(self, other, dtype=dtype), p)


def _bool_only(self: np.ndarray) -> None:
    if self.dtype != np.bool_:
        raise RuntimeError("self.scalar_type() == at::kBool INTERNAL ASSERT FAILED: the input "
                           "must be a bool tensor")


def _is_all_true(self):
    _bool_only(self)
    return np.asarray(np.all(self))


def _is_any_true(self):
    _bool_only(self)
    return np.asarray(np.any(self))


def nonzero(self):
    if not self.ndim:
        return np.zeros((1 if self.item() else 0, 0), dtype=np.int64)
    return np.argwhere(self).astype(np.int64)


# -- linear algebra (torch's spec, family 3) ---------------------------------------------------
# (kernels of this family follow; keep this line and the blank ones around it)

def _integral_scalars(dtype: np.dtype, **scalars: Any) -> None:
    """PyTorch's checks on beta and alpha for the add-a-product ops."""
    for name, value in scalars.items():
        if dtype.kind in "iub" and isinstance(value, float):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")
        if dtype.kind != "b" and isinstance(value, bool) and name == "alpha":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _add_product(self: np.ndarray, product: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    """beta * self + alpha * product, self broadcast to the product (with expand's error);
    beta == 0 ignores self, NaN and all, as PyTorch's BLAS calls do. The scalars are cast to
    the product's dtype first (for integers, 2.6 is 2)."""
    bias = _broadcast_to(np.asarray(self), product.shape)
    dtype = product.dtype
    _check_fits_all(_opmath(dtype), alpha, beta)
    if dtype == np.bool_:
        return (product & bool(alpha)) | (bias & bool(beta))
    beta, alpha = dtype.type(beta), dtype.type(alpha)
    result = product * alpha if alpha != 1 else np.array(product, copy=True)
    if beta != 0:
        result += bias if beta == 1 else bias * beta
    return result


def _vector_check(name: str, argument: str, vector: np.ndarray) -> None:
    if vector.ndim != 1:
        raise RuntimeError(f"{name}: Expected 1-D argument {argument}, but got {vector.ndim}-D")


@silent
def addmv(self, mat, vec, beta=1, alpha=1):
    """beta * self + alpha * (mat @ vec)."""
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (self.size != mat.shape[0] and self.size != 1):
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.ndim else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    if not self.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_dtype_label(self)}, {_dtype_label(mat)}, and {_dtype_label(vec)}")
    _no_bool("addmv_impl_cpu", self)
    return _add_product(self, np.matmul(mat, vec), beta, alpha)


@silent
def addr(self, vec1, vec2, beta=1, alpha=1):
    """beta * self + alpha * the outer product of vec1 and vec2 (promoted, as PyTorch does;
    for bools: and / or)."""
    _vector_check("addr", "vec1", vec1)
    _vector_check("addr", "vec2", vec2)
    dtype = result_type(self, vec1, vec2)
    _integral_scalars(dtype, beta=beta, alpha=alpha)
    a, b = _as(vec1, dtype), _as(vec2, dtype)
    product = (a[:, None] & b) if dtype == np.bool_ else a[:, None] * b
    return _add_product(_as(self, dtype), product, beta, alpha)


@silent
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    """beta * self + alpha * (batch1 @ batch2), matrix by matrix."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        _broadcast_to(self, (batch1.shape[0], batch1.shape[1], batch2.shape[-1]))
        raise RuntimeError(f"batch{1 if batch1.ndim != 3 else 2} must be a 3D tensor")
    _broadcast_to(self, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    if self.dtype != batch1.dtype:
        raise RuntimeError("Input dtypes must be the same, got: input "
                           f"{_C_TYPE_NAMES.get(self.dtype.str[1:])}, batch1: "
                           f"{_C_TYPE_NAMES.get(batch1.dtype.str[1:])}, batch2: "
                           f"{_C_TYPE_NAMES.get(batch2.dtype.str[1:])}")
    product = bmm(batch1, batch2)
    _no_bool("baddbmm", self)
    return _add_product(self, product, beta, alpha)


@silent
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    """beta * self + alpha * the sum over the batch of batch1 @ batch2."""
    for index, batch in enumerate((batch1, batch2), start=1):
        if batch.ndim != 3:
            raise RuntimeError(f"batch{index} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    _broadcast_to(self, (batch1.shape[1], batch2.shape[2]))
    for first, second in ((batch1, batch2), (self, batch1)):
        if first.dtype != second.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{_dtype_label(first)} and {_dtype_label(second)}")
    _no_bool("addmm_impl_cpu_", self)
    product = np.matmul(batch1, batch2).sum(0) if batch1.shape[0] else \
        np.zeros((batch1.shape[1], batch2.shape[2]), self.dtype)
    return _add_product(self, _array(product, self.dtype), beta, alpha)


def vdot(self, other):
    """The dot product of two vectors (conjugating the first, which real numbers ignore)."""
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
    if self.shape != other.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.size}] and src [{other.size}] to "
            f"have the same number of elements, but got {self.size} and {other.size} elements "
            "respectively")
    _check_same_dtype(self, other, "dot : expected both vectors to have same dtype, but found "
                      "{0} and {1}")
    _no_bool("dot", self)
    return _array(quietly(np.dot, self, other), self.dtype)


# -- LU, determinants, Cholesky and triangular solves ------------------------------------------
# numpy has no LU with LAPACK's pivots, so it is written here: getrf's unblocked algorithm
# (the largest magnitude in the column as the pivot, the first of equal ones), vectorised
# over the batch. Its results agree with LAPACK's to rounding.

def _floating_matrices(A: np.ndarray, name: str, argument: str = "A") -> None:
    """linalg's checks on a matrix argument: at least 2 dimensions, floating point."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {argument} must have at least 2 "
                           "dimensions.")
    if A.dtype.kind not in "fcV":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype_label(A)}")


def _matrices(A: np.ndarray) -> np.ndarray:
    """A batch of matrices as one (count, m, n) C-ordered float copy."""
    count = int(np.prod(A.shape[:-2], dtype=np.int64))
    return np.array(A.reshape((count,) + A.shape[-2:]), copy=True)


@silent
def _lu_factor(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(LU packed as LAPACK's getrf packs it, pivots (1-based int32), info) of an (…, m, n)
    array: P A = L U with L unit lower triangular (below the diagonal of LU) and U upper."""
    m, n = A.shape[-2:]
    work = _matrices(A)
    count, k = work.shape[0], builtins.min(m, n)
    pivots = np.zeros((count, k), np.int32)
    info = np.zeros(count, np.int32)
    rows = np.arange(count)
    for j in range(k):
        pivot = j + np.argmax(np.abs(work[:, j:, j]), axis=1)
        pivots[:, j] = pivot + 1
        top = work[rows, j].copy()
        work[rows, j] = work[rows, pivot]
        work[rows, pivot] = top
        diagonal = work[:, j, j]
        zero = diagonal == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        factors = work[:, j + 1:, j] / np.where(zero, 1, diagonal)[:, None]
        work[:, j + 1:, j] = np.where(zero[:, None], work[:, j + 1:, j], factors)
        work[:, j + 1:, j + 1:] -= work[:, j + 1:, j, None] * work[:, j, None, j + 1:]
    batch = A.shape[:-2]
    return (work.reshape(A.shape).astype(A.dtype, copy=False), pivots.reshape(batch + (k,)),
            info.reshape(batch))


def _permutation_sign(pivots: np.ndarray) -> np.ndarray:
    """+1 or -1 per matrix: the parity of the row swaps getrf's pivots record."""
    swaps = (pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32)).sum(-1)
    return np.where(swaps % 2 == 1, -1, 1)


def _square_float(A: np.ndarray, name: str) -> None:
    _square_matrices(A, name)
    if A.dtype == np.float16:
        raise NotImplementedError("\"lu_cpu\" not implemented for 'Half'")


def _as_factored(A: np.ndarray) -> np.ndarray:
    """What det and slogdet factor: Aᵀ when A is C-contiguous (LAPACK, column-major, reads
    it without a copy; det Aᵀ = det A), A itself otherwise. Their LU outputs are torch's."""
    return np.swapaxes(A, -1, -2) if A.flags.c_contiguous else A


@silent
def _linalg_det(A):
    """(det A, its LU factors, pivots): the product of U's diagonal, signed by the pivots."""
    _square_matrices(A, "linalg.det")
    LU, pivots, _ = _lu_factor(_as_factored(A))
    diagonal = np.diagonal(LU, axis1=-2, axis2=-1)
    det = np.prod(diagonal, axis=-1) * _permutation_sign(pivots)
    return _array(det, A.dtype), LU, pivots


@silent
def _linalg_slogdet(A):
    """(sign, log |det A|, LU, pivots); a singular matrix has sign 0 and -inf."""
    _square_matrices(A, "linalg.slogdet")
    LU, pivots, _ = _lu_factor(_as_factored(A))
    diagonal = np.diagonal(LU, axis1=-2, axis2=-1)
    sign = np.prod(np.sign(diagonal), axis=-1) * _permutation_sign(pivots)
    logabsdet = np.sum(np.log(np.abs(diagonal)), axis=-1)
    return _array(sign, A.dtype), _array(logabsdet, A.dtype), LU, pivots


@silent
def _cholesky_lower(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, info) from A's lower triangle, as LAPACK's potrf: where a leading minor is not
    positive definite, info is its order, L's diagonal there holds the non-positive pivot
    and the columns after it are A's (lower triangle) as they were."""
    try:
        with np.errstate(all="ignore"):
            return np.linalg.cholesky(A), np.zeros(A.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass
    n = A.shape[-1]
    L = np.tril(_matrices(A))
    info = np.zeros(L.shape[0], np.int32)
    for j in range(n):
        going = info == 0
        pivot = L[:, j, j] - np.einsum("bk,bk->b", L[:, j, :j], L[:, j, :j])
        failed = going & ~(pivot > 0)
        info[failed] = j + 1
        going &= ~failed
        L[failed, j, j] = pivot[failed]
        root = np.sqrt(np.where(going, pivot, 1))
        column = (L[:, j + 1:, j] - np.einsum("bik,bk->bi", L[:, j + 1:, :j], L[:, j, :j])) \
            / root[:, None]
        L[going, j, j] = root[going]
        L[going, j + 1:, j] = column[going]
    return L.reshape(A.shape), info.reshape(A.shape[:-2])


def _cholesky(A: np.ndarray, upper: bool, name: str) -> tuple[np.ndarray, np.ndarray]:
    _square_matrices(A, name)
    if upper:  # the upper triangle read as the lower one of Aᵀ, and U = Lᵀ
        L, info = _cholesky_lower(np.swapaxes(A, -1, -2))
        return np.ascontiguousarray(np.swapaxes(L, -1, -2)), info
    L, info = _cholesky_lower(A)
    return np.ascontiguousarray(L), info


def _not_positive_definite(name: str, info: np.ndarray) -> None:
    failed = np.flatnonzero(info)
    if failed.size:
        index = int(failed[0])
        raise LinAlgError(f"{name}: {_batch_prefix(info, index)}The factorization could not be "
                          "completed because the input is not positive-definite (the leading "
                          f"minor of order {info.flat[index]} is not positive-definite).")


def linalg_cholesky_ex(self, upper=False, check_errors=False):
    """(L, info): A = L Lᵀ (U = Lᵀ with upper=True) from A's lower (upper) triangle."""
    L, info = _cholesky(self, upper, "linalg.cholesky")
    if check_errors:
        _not_positive_definite("linalg.cholesky", info)
    return L, info


def cholesky(self, upper=False):
    L, info = _cholesky(self, upper, "cholesky")
    _not_positive_definite("cholesky", info)
    return L


@silent
def _triangular_solve(A: np.ndarray, B: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """X with A X = B, A triangular (its other triangle unread), by substitution row by
    row: a zero on the diagonal gives infinities and NaN, as LAPACK's trsm."""
    n = A.shape[-1]
    X = np.zeros(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:],
                 np.result_type(A, B))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        known = slice(0, i) if lower else slice(i + 1, n)
        row = B[..., i, :] - np.einsum("...k,...kj->...j", A[..., i, known], X[..., known, :])
        X[..., i, :] = row if unit else row / A[..., i, i, None]
    return X


def _solve_triangular_checks(A: np.ndarray, B: np.ndarray, left: bool) -> None:
    name = "linalg.solve_triangular"
    _floating_matrices(A, name)
    _floating_matrices(B, name, "B")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    n = A.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    broadcast_shapes(A.shape[:-2], B.shape[:-2])


def linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    """X with A X = B (X A = B when left=False), A upper or lower triangular."""
    _solve_triangular_checks(self, B, left)
    dtype = np.result_type(self, B)
    A, B = self.astype(dtype, copy=False), B.astype(dtype, copy=False)
    if left:
        return _triangular_solve(A, B, not upper, unitriangular)
    # X A = B is Aᵀ Xᵀ = Bᵀ, with Aᵀ of the other triangle.
    X = _triangular_solve(np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2), upper, unitriangular)
    return np.ascontiguousarray(np.swapaxes(X, -1, -2))


def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    """(X with op(A) X = self, a copy of A): the older form of solve_triangular."""
    if self.ndim < 2:
        raise RuntimeError("torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {self.ndim} dimensions instead")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != self.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{self.shape[-2]} by {self.shape[-1]}")
    if self.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype_label(self)} and A of type {_dtype_label(A)} instead.")
    batch = broadcast_shapes(self.shape[:-2], A.shape[:-2])
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for "
                                  f"'{_dtype_label(self)}'")
    coefficient = np.swapaxes(A, -1, -2) if transpose else A
    X = _triangular_solve(coefficient, self, upper == transpose, unitriangular)
    return X, np.array(np.broadcast_to(A, batch + A.shape[-2:]), copy=True)


def _no_integers(name: str, A: np.ndarray) -> None:
    if A.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype_label(A)}'")


def _symmetric_from(L: np.ndarray, upper: bool) -> np.ndarray:
    """L Lᵀ (Uᵀ U with upper=True), the matrix a Cholesky factor stands for."""
    triangle = np.triu(L) if upper else np.tril(L)
    if upper:
        return np.matmul(np.swapaxes(triangle, -1, -2), triangle)
    return np.matmul(triangle, np.swapaxes(triangle, -1, -2))


@silent
def cholesky_solve(self, input2, upper=False):
    """X with (L Lᵀ) X = self, from the Cholesky factor L = input2 (U with upper=True)."""
    b, L = self, input2
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           "instead")
    if L.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    if b.dtype != L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype_label(b)} and A of type {_dtype_label(L)} instead.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    broadcast_shapes(b.shape[:-2], L.shape[:-2])
    _no_integers("cholesky_solve_cpu", b)
    lower = np.swapaxes(L, -1, -2) if upper else L
    Y = _triangular_solve(lower, b, True, False)
    return _triangular_solve(np.swapaxes(lower, -1, -2), Y, False, False)


@silent
def cholesky_inverse(self, upper=False):
    """(L Lᵀ)⁻¹ from the Cholesky factor L = self (U with upper=True)."""
    if self.ndim >= 2 and self.dtype.kind not in "fV":
        raise NotImplementedError(f'"cholesky_inverse_out_cpu" not implemented for '
                                  f"'{_dtype_name(self)}'")
    _floating_matrices(self, "cholesky_inverse")
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError("cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {self.shape[-2]} by {self.shape[-1]} matrices")
    diagonal = np.diagonal(self, axis1=-2, axis2=-1)
    zero = diagonal == 0
    info = np.where(zero.any(-1), np.argmax(zero, -1) + 1, 0) if diagonal.size else \
        np.zeros(self.shape[:-2], np.int64)
    failed = np.flatnonzero(info)
    if failed.size:
        index = int(failed[0])
        raise LinAlgError(f"cholesky_inverse: {_batch_prefix(info, index)}The diagonal element "
                          f"{info.flat[index]} is zero, the inversion could not be completed "
                          "because the input matrix is singular.")
    identity = np.broadcast_to(np.eye(self.shape[-1], dtype=self.dtype), self.shape)
    return cholesky_solve(identity, self, upper)


def _lu_input(A: np.ndarray, name: str, pivot: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    _no_integers("lu_cpu", A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def linalg_lu_factor_ex(A, pivot=True, check_errors=False):
    """(LU, pivots, info): getrf's packed factors of A (m × n), pivots 1-based int32."""
    _lu_input(A, "torch.lu_factor", pivot)
    LU, pivots, info = _lu_factor(A)
    if check_errors:
        failed = np.flatnonzero(info)
        if failed.size:
            index = int(failed[0])
            raise LinAlgError(f"torch.linalg.lu_factor_ex: {_batch_prefix(info, index)}U["
                              f"{info.flat[index]},{info.flat[index]}] is zero and using it on "
                              "lu_solve would result in a division by zero. If you still want "
                              "to perform the factorization, consider calling linalg.lu(A, "
                              "pivot) or linalg.lu_factor_ex(A, pivot)")
    return LU, pivots, info


def _permutation(pivots: np.ndarray, m: int, dtype: np.dtype) -> np.ndarray:
    """The permutation matrix P with A = P L U, from getrf's row swaps."""
    count = int(np.prod(pivots.shape[:-1]))
    order = np.broadcast_to(np.arange(m), (count, m)).copy()
    flat = pivots.reshape(count, pivots.shape[-1]) - 1
    rows = np.arange(count)
    for j in range(flat.shape[1]):
        other = flat[:, j]
        top = order[rows, j].copy()
        order[rows, j] = order[rows, other]
        order[rows, other] = top
    # Row j of P A is row order[j] of A, so P's column order[j] is the unit vector e_j.
    P = np.zeros((count, m, m), dtype)
    P[rows[:, None], order, np.arange(m)[None, :]] = 1
    return P.reshape(pivots.shape[:-1] + (m, m))


def _unpack(LU: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, U) of packed LU factors of an m × n matrix: L m × k unit lower, U k × n upper."""
    m, n = LU.shape[-2:]
    k = builtins.min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    return L, np.triu(LU[..., :k, :])


def linalg_lu(A, pivot=True):
    """(P, L, U) with A = P L U."""
    _lu_input(A, "linalg.lu", pivot)
    LU, pivots, _ = _lu_factor(A)
    L, U = _unpack(LU)
    return _permutation(pivots, A.shape[-2], A.dtype), L, U


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's results; an empty tensor for what is not asked."""
    if LU_pivots.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    if LU_data.ndim < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m = LU_data.shape[-2]
    empty = np.zeros(0, LU_data.dtype)
    L, U = _unpack(LU_data) if unpack_data else (empty, empty)
    if not unpack_pivots:
        return empty, L, U
    if LU_pivots.size and (LU_pivots.min() < 1 or LU_pivots.max() > m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")
    return _permutation(LU_pivots, m, LU_data.dtype), L, U


@silent
def linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    """X with A X = B (X A = B when left=False; Aᵀ for adjoint=True), A given by its LU
    factors."""
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if LU.ndim < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError("torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU.shape[-2]} by {LU.shape[-1]} matrices")
    n = LU.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if LU.dtype != B.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but found "
                           f"LU of type {_dtype_label(LU)} and B of type {_dtype_label(B)} "
                           "instead")
    if pivots.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if pivots.shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    _no_integers("linalg_lu_solve", LU)
    P = _permutation(pivots, n, LU.dtype)
    L, U = _unpack(LU)
    if not left:  # X A = B is Aᵀ Xᵀ = Bᵀ
        X = linalg_lu_solve(LU, pivots, np.swapaxes(B, -1, -2), True, not adjoint)
        return np.ascontiguousarray(np.swapaxes(X, -1, -2))
    if adjoint:  # Aᵀ = Uᵀ Lᵀ Pᵀ
        Y = _triangular_solve(np.swapaxes(U, -1, -2), B, True, False)
        Z = _triangular_solve(np.swapaxes(L, -1, -2), Y, False, True)
        return np.matmul(P, Z)
    Y = _triangular_solve(L, np.matmul(np.swapaxes(P, -1, -2), B), True, True)
    return _triangular_solve(U, Y, False, False)


# -- decompositions numpy's LAPACK computes: SVD, eigh, QR; and what is built on them ----------

def _nonfinite_svd(A: np.ndarray, name: str) -> None:
    if not np.isfinite(A).all():
        raise LinAlgError(f"{name}: The algorithm failed to converge because the input matrix "
                          "contained non-finite values.")


@silent
def _linalg_svd(A, full_matrices=False, compute_uv=True, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U and Vh empty without compute_uv."""
    _floating_matrices(A, "linalg.svd")
    _nonfinite_svd(A, "linalg.svd")
    m, n = A.shape[-2:]
    k = builtins.min(m, n)
    empty = np.zeros(0, A.dtype)
    if A.size == 0:
        S = np.zeros(A.shape[:-2] + (k,), A.dtype)
        if not compute_uv:
            return empty, S, empty
        rows, columns = (m, n) if full_matrices else (k, k)
        U = np.broadcast_to(np.eye(m, rows, dtype=A.dtype), A.shape[:-2] + (m, rows)).copy()
        Vh = np.broadcast_to(np.eye(columns, n, dtype=A.dtype),
                             A.shape[:-2] + (columns, n)).copy()
        return U, S, Vh
    if not compute_uv:
        return empty, _array(np.linalg.svd(A, compute_uv=False), A.dtype), empty
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return (np.ascontiguousarray(U, A.dtype), _array(S, A.dtype),
            np.ascontiguousarray(Vh, A.dtype))


@silent
def linalg_eig(self):
    """(eigenvalues, eigenvectors as unit columns) of square matrices, both complex (LAPACK's
    geev through numpy, as torch's CPU kernel)."""
    eig_checks("linalg.eig", self)
    values, vectors = quietly(np.linalg.eig, self)
    dtype = self.dtype if self.dtype.kind == "c" else complex_of(self.dtype)
    return values.astype(dtype), vectors.astype(dtype)


def eig_checks(name: str, A: np.ndarray) -> None:
    """torch's errors for linalg.eig and linalg.eigvals."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype.kind not in "fcV":
        raise RuntimeError(f"Unknown Complex ScalarType for {_TYPE_NAMES[A.dtype.name]}")
    if A.dtype == np.float16:
        complex_of(A.dtype)  # refused with gradgen's reason
    if not np.isfinite(A).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


@silent
def _linalg_eigh(A, UPLO="L", compute_v=True):
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric matrix A's UPLO
    triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _square_matrices(A, "linalg.eigh")
    _no_integers("linalg_eigh_cpu", A)
    if A.size == 0:
        values = np.zeros(A.shape[:-1], A.dtype)
        return values, (np.array(A, copy=True) if compute_v else np.zeros(0, A.dtype))
    if not np.isfinite(A).all():
        values = np.full(A.shape[:-1], np.nan, A.dtype)
        return values, (np.full(A.shape, np.nan, A.dtype) if compute_v else np.zeros(0, A.dtype))
    if not compute_v:
        return _array(np.linalg.eigvalsh(A, UPLO), A.dtype), np.zeros(0, A.dtype)
    values, vectors = np.linalg.eigh(A, UPLO)
    return _array(values, A.dtype), np.ascontiguousarray(vectors, A.dtype)


def linalg_qr(A, mode="reduced"):
    """(Q, R) with A = Q R: Q's columns orthonormal, R upper triangular (mode 'r': Q empty;
    'complete': Q square)."""
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    _floating_matrices(A, "linalg.qr")
    m, n = A.shape[-2:]
    k = builtins.min(m, n)
    if A.size == 0:
        columns = m if mode == "complete" else k
        Q = np.broadcast_to(np.eye(m, columns, dtype=A.dtype), A.shape[:-2] + (m, columns))
        R = np.zeros(A.shape[:-2] + (columns, n), A.dtype)
        return (np.zeros(0, A.dtype) if mode == "r" else Q.copy()), R
    with silenced():
        if mode == "r":
            return np.zeros(0, A.dtype), _array(np.linalg.qr(A, mode="r"), A.dtype)
        Q, R = np.linalg.qr(A, mode=mode)
    return np.ascontiguousarray(Q, A.dtype), np.ascontiguousarray(R, A.dtype)


# The Taylor polynomial of degree 18, evaluated on A / 2^s with ‖A / 2^s‖₁ ≤ 1/2, then
# squared s times: exp's truncation error is below float64's rounding there.
_EXP_TERMS = 18


@silent
def linalg_matrix_exp(self):
    """exp(A) = Σ Aᵏ / k!, by scaling and squaring."""
    _square_matrices(self, "linalg.matrix_exp")
    A = _matrices(self).astype(np.float64)
    if A.size == 0:
        return np.array(self, copy=True)
    norms = np.abs(A).sum(-2).max(-1)
    finite = np.isfinite(norms)
    squarings = np.where(finite & (norms > 0.5),
                         np.ceil(np.log2(np.where(finite & (norms > 0.5), norms, 1) / 0.5)),
                         0).astype(np.int64)
    scaled = A / (2.0 ** squarings)[:, None, None]
    identity = np.eye(A.shape[-1])
    result = identity + scaled / _EXP_TERMS
    for k in range(_EXP_TERMS - 1, 0, -1):
        result = identity + np.matmul(scaled, result) / k
    for step in range(int(squarings.max(initial=0))):
        more = squarings > step
        result[more] = np.matmul(result[more], result[more])
    return _array(result.reshape(self.shape), self.dtype)


def linalg_cross(self, other, dim=-1):
    """The cross product of 3-vectors along `dim`, broadcast."""
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    axis = _wrap_dim(dim, self.ndim)
    if self.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self.shape[axis]} and {other.shape[axis]}")
    broadcast_shapes(self.shape, other.shape)
    if self.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_label(self)} but found "
                           f"{_dtype_label(other)}")
    _no_bool("cross", self)
    with silenced():
        return np.ascontiguousarray(np.cross(self, other, axis=axis), self.dtype)


def _pinv_input(A: np.ndarray) -> None:
    if A.ndim < 2 or A.dtype.kind not in "fV":
        kind = _dtype_label(A)
        raise RuntimeError(f"linalg.pinv({kind}{{{list(A.shape)}}}): expected a tensor with 2 "
                           "or more dimensions of float, double, cfloat or cdouble types")


def _tolerance(value: Any, batch: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.broadcast_to(np.asarray(0.0 if value is None else value, dtype), batch)


@silent
def linalg_pinv_atol_rtol_tensor(self, atol=None, rtol=None, hermitian=False):
    """The pseudo-inverse: V diag(1/σ) Uᵀ over the singular values σ above
    max(atol, rtol · σ_max) (rtol defaults to eps · max(m, n) when neither is given)."""
    _pinv_input(self)
    m, n = self.shape[-2:]
    batch = self.shape[:-2]
    if rtol is None:
        rtol = np.finfo(self.dtype).eps * builtins.max(m, n) \
            if atol is None or (np.ndim(atol) == 0 and atol <= 0) else 0.0
    if self.size == 0:
        return np.zeros(batch + (n, m), self.dtype)
    if hermitian:
        values, vectors = np.linalg.eigh(self)
        S, U, Vh = np.abs(values), vectors, np.swapaxes(vectors * np.sign(values)[..., None, :],
                                                        -1, -2)
    else:
        _nonfinite_svd(self, "linalg.pinv")
        U, S, Vh = np.linalg.svd(self, full_matrices=False)
    largest = S.max(-1) if S.shape[-1] else np.zeros(batch)
    cutoff = np.maximum(_tolerance(atol, np.shape(largest), self.dtype),
                        _tolerance(rtol, np.shape(largest), self.dtype) * largest)
    inverted = np.where(S > cutoff[..., None], 1 / np.where(S == 0, 1, S), 0)
    result = np.matmul(np.swapaxes(Vh, -1, -2) * inverted[..., None, :],
                       np.swapaxes(U, -1, -2))
    return _array(np.ascontiguousarray(result), self.dtype)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_checks(A: np.ndarray, B: np.ndarray, driver: Any) -> None:
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_dtype_label(A)} and other's dtype "
                           f"{_dtype_label(B)}")
    vector = B.ndim == A.ndim - 1
    if A.shape[-2] != B.shape[-1 if vector else -2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
                           if not vector else "torch.linalg.lstsq: input.size(-2) should match "
                           "other.size(-1)")
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    _floating_matrices(A, "torch.linalg.lstsq")


@silent
def linalg_lstsq(self, b, rcond=None, driver=None):
    """(solution, residuals, rank, singular_values) of min ‖A X - B‖: what each is filled
    with depends on the LAPACK driver, as in PyTorch (default 'gelsy': rank only)."""
    _lstsq_checks(self, b, driver)
    driver = driver or "gelsy"
    vector = b.ndim == self.ndim - 1
    B = b[..., None] if vector else b
    batch = broadcast_shapes(self.shape[:-2], B.shape[:-2])
    A = np.broadcast_to(self, batch + self.shape[-2:])
    B = np.broadcast_to(B, batch + B.shape[-2:])
    m, n = A.shape[-2:]
    eps = np.finfo(A.dtype).eps
    cutoff = (eps * builtins.max(m, n)) if rcond is None or rcond < 0 else rcond
    U, S, Vh = np.linalg.svd(A, full_matrices=False) if A.size else \
        (np.zeros(batch + (m, 0)), np.zeros(batch + (0,)), np.zeros(batch + (0, n)))
    largest = S.max(-1, keepdims=True) if S.shape[-1] else np.zeros(batch + (1,))
    keep = S > cutoff * largest
    inverted = np.where(keep, 1 / np.where(S == 0, 1, S), 0)
    X = np.matmul(np.swapaxes(Vh, -1, -2) * inverted[..., None, :],
                  np.matmul(np.swapaxes(U, -1, -2), B))
    rank = keep.sum(-1).astype(np.int64)
    full = bool(np.all(rank == n)) if driver != "gels" else True
    empty = np.zeros(0, A.dtype)
    residuals = empty
    if m > n and driver != "gelsy" and full and A.size:
        residuals = _array(np.square(np.matmul(A, X) - B).sum(-2), A.dtype)
    X = X[..., 0] if vector else X
    return (_array(np.ascontiguousarray(X), A.dtype), residuals,
            rank if driver != "gels" else np.zeros(0, np.int64),
            _array(S, A.dtype) if driver in ("gelsd", "gelss") else empty)


@silent
def linalg_householder_product(input, tau):
    """The first n columns of H₁ H₂ … H_k, Hᵢ = I - τᵢ vᵢ vᵢᵀ with vᵢ column i of input
    below the diagonal (and 1 on it), as LAPACK's orgqr forms Q from geqrf's results."""
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if tau.shape[-1] > n:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{name}: tau dtype {_dtype_label(tau)} does not match input dtype "
                           f"{_dtype_label(input)}")
    _lapack_dtype("orgqr_cpu", input)
    k = tau.shape[-1]
    Q = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape).copy()
    for i in range(k - 1, -1, -1):
        v = np.concatenate([np.zeros(input.shape[:-2] + (i,), input.dtype),
                            np.ones(input.shape[:-2] + (1,), input.dtype),
                            input[..., i + 1:, i]], axis=-1)
        Q -= tau[..., i, None, None] * v[..., :, None] * np.matmul(v[..., None, :].conj(), Q)
    return Q



# -- Householder QR pieces and norms with a dtype (helper linalg, breadth 2) ------------------
# (kernels of this block follow; keep this line and the blank ones around it)

def _lapack_dtype(kernel: str, array: np.ndarray) -> None:
    """torch's LAPACK kernels run for float, double and the two complex dtypes only."""
    if array.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_label(array)}\'')


@silent
def geqrf(self):
    """(a, tau): LAPACK's compact QR. R on and above a's diagonal, the Householder vectors
    below it (their leading 1 implied) and their scales in tau: numpy's raw QR, whose h is
    LAPACK's column-major a (so its transpose is torch's a)."""
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _lapack_dtype("geqrf_cpu", self)
    m, n = self.shape[-2:]
    batch = self.shape[:-2]
    if self.size == 0:
        return self.copy(), np.zeros(batch + (builtins.min(m, n),), self.dtype)
    h, tau = np.linalg.qr(self, mode="raw")
    return (np.ascontiguousarray(np.swapaxes(h, -1, -2)).astype(self.dtype, copy=False),
            tau.astype(self.dtype, copy=False))


def _ormqr_checks(input, tau, other, left):
    """torch.ormqr's checks, in its order."""
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if tau.ndim == 0:  # torch reads tau.size(-1) first
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != builtins.min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if input.ndim != other.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.ndim} and input.ndim is "
                           f"equal to {input.ndim}")
    for label, value in (("tau", tau.shape[:-1]), ("other", other.shape[:-2])):
        if tuple(value) != tuple(input.shape[:-2]):
            raise RuntimeError(f"{name}: Expected batch dimensions of {label} to be equal to "
                               f"input.shape[:-2], but got {list(value)}")
    for label, value in (("tau", tau), ("other", other)):
        if value.dtype != input.dtype:
            raise RuntimeError(f"{name}: Expected input and {label} to have the same dtype, but "
                               f"input has dtype{_dtype_label(input)} and {label} has dtype "
                               f"{_dtype_label(value)}")


@silent
def ormqr(self, input2, input3, left=True, transpose=False):
    """Q C, Qᵀ C, C Q or C Qᵀ (left, transpose) for C = input3 and the m x m
    Q = H₁ … H_k of the reflectors geqrf leaves in self (below its diagonal, a 1 on it) and
    input2 (their scales): each reflector applied to C in turn."""
    _ormqr_checks(self, input2, input3, left)
    _lapack_dtype("ormqr_cpu", input3)
    m, k = self.shape[-2], input2.shape[-1]
    C = np.array(input3, copy=True)
    order = range(k) if left == transpose else range(k - 1, -1, -1)
    for i in order:
        v = np.concatenate([np.zeros(self.shape[:-2] + (i,), self.dtype),
                            np.ones(self.shape[:-2] + (1,), self.dtype),
                            self[..., i + 1:m, i]], axis=-1)
        scale = input2[..., i, None, None]
        scale = scale.conj() if transpose else scale  # Hᴴ = I - conj(t) v vᴴ
        if left:  # C <- (I - t v vᴴ) C
            C -= scale * v[..., :, None] * np.matmul(v[..., None, :].conj(), C)
        else:  # C <- C (I - t v vᴴ)
            C -= scale * np.matmul(C, v[..., :, None]) * v[..., None, :].conj()
    return C


def _norm_dtype(self, dtype):
    """norm(..., dtype=): a floating output dtype the input casts to without narrowing."""
    out = np.dtype(dtype)
    if out.kind not in "fcV":
        raise RuntimeError("norm(): the desired output dtype should be either floating point or "
                           f"complex. Got {_scalar_type_name(out)} instead.")
    _check_norm_input(self)
    if np.promote_types(self.dtype, out) != out:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_dtype_label(self)}) "
                           "should be convertible without narrowing to the specified dtype "
                           f"({_scalar_type_name(out)})")
    return out


def norm_ScalarOpt_dtype(self, p, dtype):
    out = _norm_dtype(self, dtype)
    return linalg_vector_norm(self, 2 if p is None else p, None, False, out)


def norm_ScalarOpt_dim_dtype(self, p, dim, keepdim, dtype):
    out = _norm_dtype(self, dtype)
    return linalg_vector_norm(self, 2 if p is None else p, dim, keepdim, out)


# -- nn kernels (torch's spec, family 4) -------------------------------------------------------
# (kernels of this family follow; keep this line and the blank ones around it)

def _cpp_float(value: float) -> str:
    """A number as C++'s default stream prints it (six significant digits), as torch's
    messages show Scalars."""
    return f"{builtins.float(value):g}"


def hardshrink(self, lambd=0.5):
    """x where |x| > lambd, else 0."""
    _floats_only("hardshrink", self)
    check_fits(lambd, _opmath(self.dtype))
    return _array(np.where((self >= -lambd) & (self <= lambd), 0, self), self.dtype)


def _outside(self, lambd, grad):
    """Where the shrinks pass their gradient: |x| > lambd, and at NaN in torch's scalar tail
    (whose test is `self >= -lambd && self <= lambd`; see _scalar_tail)."""
    return (self > lambd) | (self < -lambd) | _nan_in_tail(self, grad)


def hardshrink_backward(grad_out, self, lambd):
    return _array(np.where(_outside(self, lambd, grad_out), grad_out, 0), grad_out.dtype)


def _softshrink_check(self, lambd) -> None:
    if self.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"softshrink_check\" not implemented for '{_dtype_name(self)}'")
    largest = dtype_range(_opmath(self.dtype))[1]
    if not 0 <= lambd <= largest:
        raise RuntimeError(f"lambda must be in range [0, {_cpp_float(largest)}] for input dtype "
                           f"{_dtype_name(self)}, but found {_cpp_float(lambd)}")


@silent
def softshrink(self, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    _softshrink_check(self, lambd)
    # (inside, x * 0: NaN stays NaN, as in torch's kernel)
    return _array(np.where(self > lambd, self - lambd,
                           np.where(self < -lambd, self + lambd, self * 0)), self.dtype)


def softshrink_backward(grad_output, self, lambd):
    return _array(np.where(_outside(self, lambd, grad_output), grad_output, 0),
                  grad_output.dtype)


def _threshold(self, limit, value):
    """x above the limit (and NaN), value at or below it."""
    if self.dtype == np.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    _check_fits_all(_opmath(self.dtype), limit, value)
    return _array(np.where(self <= limit, _as(value, self.dtype), self), self.dtype)


def threshold(self, threshold, value):
    return _threshold(self, threshold, value)


def threshold_(self, threshold, value):
    return _threshold(self, threshold, value)


def _celu_scale(alpha) -> float:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return 1.0 / alpha


def celu(self, alpha=1.0):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)): elu with input_scale 1 / alpha."""
    return elu(self, alpha, 1, _celu_scale(alpha))


def celu_(self, alpha=1.0):
    return celu(self, alpha)


@silent
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """elu's slope times grad_output: scale above 0; at or below it input_scale alpha scale
    exp(input_scale x) from the input, or input_scale (y + alpha scale) from the output y."""
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not "
            "supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead.")
    x = self_or_result
    if is_result:
        negative = grad_output * input_scale * (x + alpha * scale)
    else:
        negative = grad_output * (input_scale * alpha * scale) * np.exp(x * input_scale)
    # At NaN torch's scalar code (`x <= 0 ? ... : grad_output * scale`) takes the positive
    # piece and its vector code (AVX512 on a CPU that has it) the negative one, NaN.
    result = np.where(x <= 0, negative, grad_output * scale)
    result = np.where(np.isnan(x) & ~_nan_in_tail(x, grad_output, 64), np.nan, result)
    return _array(result, np.result_type(grad_output, x))


# Upsampling: each output position reads a few input positions along each spatial dim, with
# weights (nearest: one, weight 1; linear: two; cubic: four), so an upsampling is one such
# gather-and-weigh per dim, the last dim first: the order torch's kernels nest their sums in.
# The backward adds each output's gradient, times the same weights, onto the positions it
# read. The source positions are computed as torch computes them (nearest in float32,
# linear and cubic in the data's own precision), since they decide which element is read.

_UPSAMPLE_DIM_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}
_UPSAMPLE_DTYPE_OP = {
    ("nearest", 1): "compute_indices_weights_nearest",
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest", 3): "compute_indices_weights_nearest",
    ("linear", 1): "compute_indices_weights_linear",
    ("linear", 2): "upsample_bilinear2d_channels_last",
    ("linear", 3): "compute_indices_weights_linear",
    ("cubic", 2): "compute_indices_weights_cubic",
    **{(f"aa-{kind}", 2): "compute_index_ranges_weights"
       for kind in ("linear", "cubic", "lanczos")},
}


def _upsample_check(input_size, output_size, dims: int) -> None:
    """torch's upsample_*_common_check: the sizes' lengths, then positive sizes."""
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size "
                           f"{len(output_size)}")
    if len(input_size) != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size "
                           f"{len(input_size)}")
    spatial = list(input_size[2:])
    if builtins.min(spatial + list(output_size)) <= 0:
        names = _UPSAMPLE_DIM_NAMES[dims]
        shown_in = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial, strict=True))
        shown_out = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size, strict=True))
        joint = " and output" if dims == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({shown_in}){joint} ({shown_out})")


def _upsample_input_check(self, output_size, dims: int, kind: str) -> None:
    _upsample_check(self.shape, output_size, dims)
    if self.ndim != dims + 2 or 0 in self.shape[1:]:
        raise RuntimeError(f"Non-empty {dims + 2}D data tensor expected but got a tensor with "
                           f"sizes {list(self.shape)}")
    allowed = "fu" if (kind, dims) not in (("linear", 1), ("linear", 3)) else "f"
    if self.dtype.kind not in allowed or self.dtype == np.int8:
        raise NotImplementedError(f"\"{_UPSAMPLE_DTYPE_OP[kind, dims]}\" not implemented for "
                                  f"'{_dtype_name(self) if self.dtype != np.uint8 else 'Byte'}'")


def _upsample_scale(in_size: int, out_size: int, scale, align_corners, dtype) -> Any:
    """torch's area_pixel_compute_scale: the step between source positions."""
    if align_corners:
        return dtype.type(in_size - 1) / dtype.type(out_size - 1) if out_size > 1 else (
            dtype.type(0))
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(in_size) / dtype.type(out_size)


def _nearest_taps(in_size: int, out_size: int, scale, exact: bool, shortcuts: bool) -> list:
    """nearest: output o reads floor(o * s) (nearest-exact: floor((o + 0.5) * s)), in float32
    as torch computes it, clipped to the input. torch's 2-d nearest kernel and every nearest
    backward take shortcuts for equal and doubled sizes, whatever the scales say
    (`shortcuts`); its 1-d and 3-d forward kernels do not."""
    o = np.arange(out_size)
    if shortcuts and out_size == in_size:
        return [(o, None)]
    if shortcuts and out_size == 2 * in_size:
        return [(o >> 1, None)]
    s = _upsample_scale(in_size, out_size, scale, False, np.dtype(np.float32))
    position = (o.astype(np.float32) + np.float32(0.5)) * s if exact else o.astype(np.float32) * s
    return [(np.minimum(np.floor(position).astype(np.int64), in_size - 1), None)]


def _linear_taps(in_size: int, out_size: int, scale, align_corners, dtype) -> list:
    """linear: output o at source position x (align_corners: o s; else (o + 0.5) s - 0.5,
    at least 0) reads floor(x) and the next element, weighted 1 - t and t."""
    s = _upsample_scale(in_size, out_size, scale, align_corners, dtype)
    o = np.arange(out_size).astype(dtype)
    x = o * s if align_corners else np.maximum(s * (o + dtype.type(0.5)) - dtype.type(0.5), 0)
    x = x.astype(dtype)
    low = np.minimum(np.floor(x).astype(np.int64), in_size - 1)
    t = np.clip(x - low.astype(dtype), 0, 1).astype(dtype)
    high = low + (low < in_size - 1)
    return [(low, (1 - t).astype(dtype)), (high, t)]


def _cubic_taps(in_size: int, out_size: int, scale, align_corners, dtype) -> list:
    """cubic (Keys, A = -0.75): output o at source position x reads floor(x) - 1 to
    floor(x) + 2, clamped to the input, with the cubic convolution weights of t = x -
    floor(x)."""
    s = _upsample_scale(in_size, out_size, scale, align_corners, dtype)
    o = np.arange(out_size).astype(dtype)
    x = (o * s if align_corners else s * (o + dtype.type(0.5)) - dtype.type(0.5)).astype(dtype)
    floor = np.floor(x)
    t = (x - floor).astype(dtype)
    a = dtype.type(-0.75)

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    start = floor.astype(np.int64) - 1
    return [(np.clip(start + k, 0, in_size - 1), w.astype(dtype)) for k, w in enumerate(weights)]


def _upsample_taps(kind: str, in_sizes, out_sizes, scales, align_corners, dtype,
                   backward: bool = False) -> list:
    taps = []
    for in_size, out_size, scale in zip(in_sizes, out_sizes, scales, strict=True):
        if kind in ("nearest", "nearest-exact"):
            shortcuts = kind == "nearest" and (backward or len(in_sizes) == 2)
            taps.append(_nearest_taps(in_size, out_size, scale, kind == "nearest-exact",
                                      shortcuts))
        elif kind == "linear":
            taps.append(_linear_taps(in_size, out_size, scale, align_corners, dtype))
        elif kind.startswith("aa-"):
            taps.append(_antialias_taps(kind[3:], in_size, out_size, scale, align_corners,
                                        dtype))
        else:
            taps.append(_cubic_taps(in_size, out_size, scale, align_corners, dtype))
    return taps


def _compute_dtype(array: np.ndarray) -> np.dtype:
    """The dtype upsampling weights and sums are in: the data's own, float32 for uint8."""
    return array.dtype if array.dtype.kind in "fV" else np.dtype(np.float32)


@silent
def _upsample(self, output_size, scales, kind: str, align_corners=None):
    dims = len(scales)
    family = {"nearest-exact": "nearest"}.get(kind, kind)
    _upsample_input_check(self, output_size, dims, family)
    dtype = _compute_dtype(self)
    taps = _upsample_taps(kind, self.shape[2:], output_size, scales, align_corners, dtype)
    out = self
    for axis in reversed(range(dims)):
        axis_taps = taps[axis]
        if axis_taps[0][1] is None:
            out = np.take(out, axis_taps[0][0], axis=2 + axis)
            continue
        shape = [1] * out.ndim
        shape[2 + axis] = -1
        total = None
        for index, weight in axis_taps:
            term = np.take(out, index, axis=2 + axis).astype(dtype, copy=False) * \
                weight.reshape(shape)
            total = term if total is None else total + term
        out = total
    if self.dtype.kind not in "fV":
        out = np.clip(np.round(out), 0, 255)
    return np.ascontiguousarray(out, dtype=self.dtype)


@silent
def _upsample_backward(grad_output, output_size, input_size, scales, kind: str,
                       align_corners=None):
    """Each output's gradient, times its weights, added onto the inputs it read."""
    dims = len(scales)
    _upsample_check(input_size, output_size, dims)
    expected = list(input_size[:2]) + list(output_size)
    if list(grad_output.shape) != expected:
        dim = next(i for i, (a, b) in enumerate(zip(grad_output.shape, expected,
                                                       strict=False)) if a != b) \
            if grad_output.ndim == len(expected) else None
        if dim is None:
            raise RuntimeError(f"Expected grad_output to be a tensor of dimension "
                               f"{len(expected)} but got: dimension {grad_output.ndim}")
        raise RuntimeError(f"Expected grad_output to have the same shape as output; output."
                           f"size({dim}) = {expected[dim]} but got grad_output.size({dim}) = "
                           f"{grad_output.shape[dim]}")
    dtype = _compute_dtype(grad_output)
    taps = _upsample_taps(kind, input_size[2:], output_size, scales, align_corners, dtype,
                          backward=True)
    grad = grad_output
    for axis in range(dims):
        moved = np.moveaxis(grad, 2 + axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        total = np.zeros((flat.shape[0], input_size[2 + axis]), dtype)
        for index, weight in taps[axis]:
            np.add.at(total, (slice(None), index), flat if weight is None else flat * weight)
        grad = np.moveaxis(total.reshape(moved.shape[:-1] + (input_size[2 + axis],)), -1,
                           2 + axis)
    return np.ascontiguousarray(grad, dtype=grad_output.dtype)


def upsample_nearest1d(self, output_size, scales=None):
    return _upsample(self, output_size, [scales], "nearest")


def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "nearest")


def upsample_nearest3d(self, output_size, scales_d=None, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_d, scales_h, scales_w], "nearest")


def _upsample_nearest_exact1d(self, output_size, scales=None):
    return _upsample(self, output_size, [scales], "nearest-exact")


def _upsample_nearest_exact2d(self, output_size, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "nearest-exact")


def _upsample_nearest_exact3d(self, output_size, scales_d=None, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_d, scales_h, scales_w], "nearest-exact")


def upsample_linear1d(self, output_size, align_corners, scales=None):
    return _upsample(self, output_size, [scales], "linear", align_corners)


def upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "linear", align_corners)


def upsample_trilinear3d(self, output_size, align_corners, scales_d=None, scales_h=None,
                         scales_w=None):
    return _upsample(self, output_size, [scales_d, scales_h, scales_w], "linear", align_corners)


def upsample_bicubic2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "cubic", align_corners)


def upsample_nearest1d_backward(grad_output, output_size, input_size, scales=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales], "nearest")


def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None,
                                scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "nearest")


def upsample_nearest3d_backward(grad_output, output_size, input_size, scales_d=None,
                                scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size,
                              [scales_d, scales_h, scales_w], "nearest")


def _upsample_nearest_exact1d_backward(grad_output, output_size, input_size, scales=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales], "nearest-exact")


def _upsample_nearest_exact2d_backward(grad_output, output_size, input_size, scales_h=None,
                                       scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "nearest-exact")


def _upsample_nearest_exact3d_backward(grad_output, output_size, input_size, scales_d=None,
                                       scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size,
                              [scales_d, scales_h, scales_w], "nearest-exact")


def upsample_linear1d_backward(grad_output, output_size, input_size, align_corners,
                               scales=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales], "linear",
                              align_corners)


def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners,
                                 scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "linear", align_corners)


def upsample_trilinear3d_backward(grad_output, output_size, input_size, align_corners,
                                  scales_d=None, scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size,
                              [scales_d, scales_h, scales_w], "linear", align_corners)


def upsample_bicubic2d_backward(grad_output, output_size, input_size, align_corners,
                                scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "cubic", align_corners)


def _shuffle_rank_check(self, op: str) -> None:
    if self.ndim < 3:
        raise RuntimeError(f"{op} expects input to have at least 3 dimensions, but got input "
                           f"with {self.ndim} dimension(s)")


def pixel_shuffle(self, upscale_factor):
    """(*, C r², H, W) -> (*, C, H r, W r): channel c r² + i r + j goes to row offset i and
    column offset j."""
    _shuffle_rank_check(self, "pixel_shuffle")
    r = builtins.int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = self.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = self.shape[:-3]
    k = len(lead)
    blocks = self.reshape(lead + (c // (r * r), r, r, h, w))
    order = tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2)
    return np.ascontiguousarray(blocks.transpose(order)).reshape(
        lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(self, downscale_factor):
    """pixel_shuffle undone: (*, C, H r, W r) -> (*, C r², H, W)."""
    _shuffle_rank_check(self, "pixel_unshuffle")
    r = builtins.int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = self.shape[-3:]
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    lead = self.shape[:-3]
    k = len(lead)
    blocks = self.reshape(lead + (c, h // r, r, w // r, r))
    order = tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3)
    return np.ascontiguousarray(blocks.transpose(order)).reshape(
        lead + (c * r * r, h // r, w // r))


def channel_shuffle(self, groups):
    """(N, g C', *) -> (N, C' g, *): the channels read as a g x C' matrix, transposed."""
    if self.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(self.shape)}")
    groups = builtins.int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = self.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    blocks = self.reshape(self.shape[:1] + (groups, c // groups) + self.shape[2:])
    return np.ascontiguousarray(np.swapaxes(blocks, 1, 2)).reshape(self.shape)


@silent
def soft_margin_loss(self, target, reduction=_MEAN):
    """log(1 + exp(-target x)), reduced."""
    a, b = _binary(self, target)
    broadcast_shapes(np.shape(a), np.shape(b))
    return _reduce(_array(np.log1p(np.exp(-a * b)), a.dtype), reduction)


@silent
def soft_margin_loss_backward(grad_output, self, target, reduction):
    """-target exp(-target x) / (1 + exp(-target x)), over the element count for the mean."""
    a, b = _binary(self, target)
    broadcast_shapes(np.shape(a), np.shape(b))
    norm = (1.0 / a.size if a.size else math.nan) if reduction == _MEAN else 1.0
    z = np.exp(-a * b)
    return _array(-b * norm * z / (1 + z) * grad_output, a.dtype)


@silent
def hardswish_backward(grad_output, self):
    """hardswish's slope times grad_output: 0 up to -3, x / 3 + 1/2 strictly inside (-3, 3),
    1 from 3 on (at -3 and 3 the outer pieces, as torch's kernel takes them)."""
    _floats_only("hardswish_backward", self)
    _broadcastable(grad_output, self)
    inside = grad_output * (self / 3 + 0.5)
    return _array(np.where(self <= -3, 0, np.where(self < 3, inside, grad_output)),
                  grad_output.dtype)


# -- weight normalisation (issue 28, helper nnB) ----------------------------------------------

@silent
def _weight_norm_interface(v, g, dim=0):
    """(g * v / ||v||, ||v||): the 2-norm over every dimension but `dim` (0 or the last),
    kept as a size-1 dimension so that it broadcasts against v."""
    if dim not in (0, v.ndim - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    axes = tuple(d for d in range(v.ndim) if d != dim)
    norms = np.sqrt(np.sum(v * v, axis=axes, keepdims=True))
    return _array(v * (g / norms), v.dtype), _array(norms, v.dtype)


# -- nn kernels A: convolution, pooling, grid sampling (issue 27, helper nnA) ----------------
# torch's internal convolution ops (the kernels torch's `convolution` picks per backend) are
# `convolution` with some of its parameters fixed; their checks are the ones that op makes.

def _kernel_size_check(weight, kernel_size, dims: int) -> None:
    """The slow convolutions take the kernel size apart from the weight: they must agree."""
    kernel = list(_conv_param(kernel_size, dims, "kernel_size"))
    if list(weight.shape[2:]) != kernel:
        raise RuntimeError(f"weight[2:] shape {list(weight.shape[2:])} must be equal to "
                           f"kernel_size {kernel}")


def _fixed_rank(input, dims: int) -> None:
    if input.ndim != dims + 2:
        raise RuntimeError(f"Expected {dims + 2}D input tensor, but got: {list(input.shape)}")


@silent
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark, deterministic, cudnn_enabled, allow_tf32):
    """convolution; the backend flags choose nothing on gradgen's one CPU backend."""
    return convolution(input, weight, bias, stride, padding, dilation, transposed,
                       output_padding, groups)


@silent
def slow_conv_transpose2d(self, weight, kernel_size, bias=None, stride=1, padding=0,
                          output_padding=0, dilation=1):
    _fixed_rank(self, 2)
    _kernel_size_check(weight, kernel_size, 2)
    return convolution(self, weight, bias, stride, padding, dilation, True, output_padding, 1)


@silent
def slow_conv_transpose3d(self, weight, kernel_size, bias=None, stride=1, padding=0,
                          output_padding=0, dilation=1):
    _fixed_rank(self, 3)
    _kernel_size_check(weight, kernel_size, 3)
    return convolution(self, weight, bias, stride, padding, dilation, True, output_padding, 1)


@silent
def _slow_conv2d_forward(self, weight, kernel_size, bias, stride, padding):
    _fixed_rank(self, 2)
    _kernel_size_check(weight, kernel_size, 2)
    return convolution(self, weight, bias, stride, padding, 1, False, 0, 1)


@silent
def _slow_conv2d_backward_output_mask(grad_output, self, weight, kernel_size, stride, padding,
                                      output_mask):
    _fixed_rank(self, 2)
    _kernel_size_check(weight, kernel_size, 2)
    return convolution_backward(grad_output, self, weight, None, stride, padding, 1, False, 0,
                                1, output_mask)


def _depthwise_groups(self, weight, dims: int) -> int:
    """A depthwise convolution's groups: one per input channel, each making
    out_channels / in_channels outputs (weight (out, 1, *kernel))."""
    _fixed_rank(self, dims)
    if weight.ndim == dims + 2 and weight.shape[1] != 1:
        raise RuntimeError(f"Expected a depthwise weight of size [out_channels, 1, *kernel], "
                           f"but got {list(weight.shape)}")
    return builtins.max(self.shape[1], 1)


@silent
def _conv_depthwise2d(self, weight, kernel_size, bias, stride, padding, dilation):
    groups = _depthwise_groups(self, weight, 2)
    _kernel_size_check(weight, kernel_size, 2)
    return convolution(self, weight, bias, stride, padding, dilation, False, 0, groups)


@silent
def conv_depthwise3d(self, weight, kernel_size, bias, stride, padding, dilation):
    groups = _depthwise_groups(self, weight, 3)
    _kernel_size_check(weight, kernel_size, 3)
    return convolution(self, weight, bias, stride, padding, dilation, False, 0, groups)


@silent
def slow_conv3d_forward(self, weight, kernel_size, bias, stride, padding):
    if self.ndim != 5:
        raise RuntimeError(f"non-empty 5D input tensor expected but got: {list(self.shape)}")
    _kernel_size_check(weight, kernel_size, 3)
    return convolution(self, weight, bias, stride, padding, 1, False, 0, 1)


@silent
def slow_conv_dilated2d(self, weight, kernel_size, bias=None, stride=1, padding=0, dilation=1):
    _kernel_size_check(weight, kernel_size, 2)
    return _unbatched_conv(self, weight, bias, stride, padding, dilation, 2)


@silent
def slow_conv_dilated3d(self, weight, kernel_size, bias=None, stride=1, padding=0, dilation=1):
    _kernel_size_check(weight, kernel_size, 3)
    return _unbatched_conv(self, weight, bias, stride, padding, dilation, 3)


def _unbatched_conv(self, weight, bias, stride, padding, dilation, dims: int):
    """A plain convolution that also takes an input without its batch dim (the dilated
    kernels do)."""
    if self.ndim == dims + 1:
        return convolution(self[None], weight, bias, stride, padding, dilation, False, 0, 1)[0]
    return convolution(self, weight, bias, stride, padding, dilation, False, 0, 1)


def _tbc_check(self, weight, bias) -> None:
    """conv_tbc's checks, in torch's order and words."""
    if self.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if self.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")


@silent
def conv_tbc(self, weight, bias, pad=0):
    """A 1-d convolution over time-major input (time, batch, in): out[t, b, o] = bias[o] +
    sum over k, c of in_padded[t + k, b, c] * weight[k, c, o]."""
    _tbc_check(self, weight, bias)
    length = self.shape[0] + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                           f"[{length}, {self.shape[1]}, {weight.shape[2]}]")
    out = np.zeros((length, self.shape[1], weight.shape[2]),
                   np.result_type(self, weight, bias)) + bias
    padded = np.pad(self, [(pad, pad), (0, 0), (0, 0)])
    for k in range(weight.shape[0]):
        out = out + quietly(np.tensordot, padded[k:k + length], weight[k], ([2], [0]))
    return np.ascontiguousarray(out, self.dtype)


# im2col / col2im: sliding blocks as columns, and their adjoint.

def _pair_arg(value, name: str) -> tuple[int, int]:
    values = [value] * 2 if isinstance(value, int | np.integer) else list(value)
    if len(values) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(values)}")
    return builtins.int(values[0]), builtins.int(values[1])


def _block_args(kernel_size, dilation, padding, stride):
    """im2col's and col2im's parameters as pairs, with torch's checks in its order."""
    kernel, dilation = _pair_arg(kernel_size, "kernel_size"), _pair_arg(dilation, "dilation")
    padding, stride = _pair_arg(padding, "padding"), _pair_arg(stride, "stride")
    if builtins.min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if builtins.min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if builtins.min(padding) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: "
                           f"{padding[0]} pad_width: {padding[1]}")
    if builtins.min(stride) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")
    return kernel, dilation, padding, stride


def _block_counts(spatial, kernel, dilation, padding, stride) -> tuple[int, int]:
    return tuple((size + 2 * p - d * (k - 1) - 1) // s + 1 for size, k, d, p, s in
                 zip(spatial, kernel, dilation, padding, stride, strict=True))


def _floats_for(op: str, array) -> None:
    if array.dtype.kind not in "fbV":
        raise NotImplementedError(f"\"{op}_out_cpu\" not implemented for '{_dtype_name(array)}'")


def im2col(self, kernel_size, dilation, padding, stride):
    """Every (kh, kw) block of the padded (N, C, H, W) input as a column: (N, C * kh * kw,
    L), L the blocks in row-major order; a (C, H, W) input gives (C * kh * kw, L)."""
    kernel, dilation, padding, stride = _block_args(kernel_size, dilation, padding, stride)
    if 0 < self.ndim < 3:  # torch reads size(ndim) before it checks the rank
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-self.ndim}, {self.ndim - 1}], but got {self.ndim})")
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    outs = _block_counts(self.shape[-2:], kernel, dilation, padding, stride)
    if builtins.min(outs) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({self.shape[-2]}, {self.shape[-1]}), "
            f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), "
            f"padding=({padding[0]}, {padding[1]}), calculated shape of the array of sliding "
            f"blocks as ({outs[0]}, {outs[1]}), but its components must be at least one.")
    _floats_for("im2col", self)
    x = self if self.ndim == 4 else self[None]
    windows = _windows(_pad_spatial(x, padding), kernel, stride, dilation)
    windows = windows[:, :, :outs[0], :outs[1]]  # (N, C, oh, ow, kh, kw)
    n, c = x.shape[:2]
    columns = windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kernel[0] * kernel[1],
                                                          outs[0] * outs[1])
    columns = np.ascontiguousarray(columns, self.dtype)
    return columns if self.ndim == 4 else columns[0]


def _col2im_check(self, output_size, kernel, dilation, padding, stride):
    if self.ndim not in (2, 3) or 0 in self.shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    if self.shape[-2] % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={self.shape[-2]} "
                           f"and kernel_size=({kernel[0]}, {kernel[1]}).")
    outs = _block_counts(output_size, kernel, dilation, padding, stride)
    if outs[0] < 1 or outs[1] < 1 or outs[0] * outs[1] != self.shape[-1]:
        raise RuntimeError(
            f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel[0]}, "
            f"{kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, "
            f"{padding[1]}), stride=({stride[0]}, {stride[1]}), expected size of input's "
            f"dimension 2 to match the calculated number of sliding blocks {outs[0]} * "
            f"{outs[1]} = {outs[0] * outs[1]}, but got input.size(2)={self.shape[-1]}.")
    return outs


@silent
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    """im2col's adjoint: each column's entries added back onto the positions of its block,
    (N, C * kh * kw, L) -> (N, C, *output_size) (one strided add per kernel offset)."""
    kernel, dilation, padding, stride = _block_args(kernel_size, dilation, padding, stride)
    output_size = _pair_arg(output_size, "output_size")
    outs = _col2im_check(self, output_size, kernel, dilation, padding, stride)
    _floats_for("col2im", self)
    x = self if self.ndim == 3 else self[None]
    n, c = x.shape[0], x.shape[1] // (kernel[0] * kernel[1])
    blocks = x.reshape(n, c, kernel[0], kernel[1], outs[0], outs[1])
    reach = [builtins.max(size + 2 * p, k0 * d + s * (o - 1) + 1) for size, p, k0, d, s, o in
             zip(output_size, padding, kernel, dilation, stride, outs, strict=True)]
    out = np.zeros((n, c, reach[0], reach[1]), self.dtype)
    for i, j in np.ndindex(*kernel):
        out[:, :, i * dilation[0]:i * dilation[0] + stride[0] * (outs[0] - 1) + 1:stride[0],
            j * dilation[1]:j * dilation[1] + stride[1] * (outs[1] - 1) + 1:stride[1]] += \
            blocks[:, :, i, j]
    out = np.ascontiguousarray(out[:, :, padding[0]:padding[0] + output_size[0],
                                   padding[1]:padding[1] + output_size[1]])
    return out if self.ndim == 3 else out[0]


# Pooling in any number of spatial dims: the windows of each output cell given per dim as
# positions (cells, window) and whether each position is inside the input; a maximum is
# searched over the gathered windows, an average summed with strided adds.

def _lowest_value(dtype: np.dtype):
    if dtype.kind in "fV":
        return -np.inf
    return np.iinfo(dtype).min if dtype.kind in "iu" else False


def _sliding_table(size: int, out: int, kernel: int, stride: int, padding: int,
                   dilation: int) -> tuple[np.ndarray, np.ndarray]:
    positions = (np.arange(out)[:, None] * stride - padding
                 + np.arange(kernel)[None, :] * dilation)
    return positions, (positions >= 0) & (positions < size)


def _window_index(positions: list, dims: int, count: int):
    """Index arrays that gather `count` planes (P, *spatial) into (P, o0, k0, o1, k1, ...):
    each dim's positions are (P or 1, cells, window)."""
    index = [np.arange(count).reshape((-1,) + (1,) * (2 * dims))]
    for d, at in enumerate(positions):
        shape = [at.shape[0]] + [1] * (2 * dims)
        shape[1 + 2 * d], shape[2 + 2 * d] = at.shape[1], at.shape[2]
        index.append(at.reshape(shape))
    return tuple(index)


def _max_over(self, positions, valid, dims: int):
    """The maximum of each window (torch's: the first of equal maxima, a NaN over any
    number, a later NaN over an earlier one) and its flat index into the last `dims` dims.
    positions / valid: per dim, arrays (P or 1, cells, window)."""
    spatial = self.shape[-dims:]
    outs = tuple(p.shape[1] for p in positions)
    shape = self.shape[:-dims] + outs
    planes = self.reshape((-1,) + spatial)
    if 0 in shape:
        return np.zeros(shape, self.dtype), np.zeros(shape, np.int64)
    clipped = [np.clip(p, 0, size - 1) for p, size in zip(positions, spatial, strict=True)]
    windows = planes[_window_index(clipped, dims, planes.shape[0])]
    inside = np.ones((1,) * (1 + 2 * dims), bool)
    for d, ok in enumerate(valid):
        mask_shape = [ok.shape[0]] + [1] * (2 * dims)
        mask_shape[1 + 2 * d], mask_shape[2 + 2 * d] = ok.shape[1], ok.shape[2]
        inside = inside & ok.reshape(mask_shape)
    inside = np.broadcast_to(inside, windows.shape)
    windows = np.where(inside, windows, _lowest_value(self.dtype)).astype(self.dtype)
    order = [0] + [1 + 2 * d for d in range(dims)] + [2 + 2 * d for d in range(dims)]
    count = planes.shape[0]
    flat = windows.transpose(order).reshape((count,) + outs + (-1,))
    inside = inside.transpose(order).reshape(flat.shape)
    where = _window_argmax(flat)
    first_inside = np.argmax(inside, axis=-1)
    where = np.where(np.take_along_axis(inside, where[..., None], -1)[..., 0], where,
                     first_inside)
    values = np.take_along_axis(flat, where[..., None], axis=-1)[..., 0]
    offsets = np.unravel_index(where, tuple(p.shape[2] for p in positions))
    index = np.zeros(where.shape, np.int64)
    for d, at in enumerate(positions):
        cell = np.arange(outs[d]).reshape([1] * (1 + d) + [-1] + [1] * (dims - 1 - d))
        plane = np.arange(count).reshape((-1,) + (1,) * dims) if at.shape[0] > 1 else 0
        index = index * spatial[d] + at[plane, cell, offsets[d]]
    return (np.ascontiguousarray(values.reshape(shape), self.dtype),
            index.reshape(shape))


@silent
def _max_pool_backward_nd(grad_output, self, indices, dims: int):
    """Each output's gradient added to the element its maximum came from (indices into the
    last `dims` dims)."""
    volume = builtins.int(np.prod(self.shape[-dims:], dtype=np.int64))
    planes = builtins.int(np.prod(self.shape[:-dims], dtype=np.int64))
    if grad_output.shape != indices.shape:
        raise RuntimeError(f"Expected grad_output and indices to have the same shape, but got "
                           f"{list(grad_output.shape)} and {list(indices.shape)}")
    if planes * volume == 0 or indices.size == 0:
        return np.zeros(self.shape, grad_output.dtype)
    flat = indices.reshape(planes, -1) + (np.arange(planes) * volume)[:, None]
    grad = np.bincount(flat.ravel(), weights=grad_output.ravel(), minlength=planes * volume)
    return _array(grad.reshape(self.shape), grad_output.dtype)


def _triple(value, name: str, op: str, allow_empty: bool = False) -> tuple[int, int, int]:
    values = [value] if isinstance(value, int | np.integer) else list(value)
    if not values and allow_empty:
        return ()
    if len(values) == 1:
        values = values * 3
    if len(values) != 3:
        detail = {"kernel_size": "must either be a single int, or a tuple of three ints",
                  "stride": "must either be omitted, a single int, or a tuple of three ints",
                  "padding": "must either be a single int, or a tuple of three ints",
                  "dilation": "must be either a single int, or a tuple of three ints"}[name]
        raise RuntimeError(f"{op}: {name} {detail}")
    return tuple(builtins.int(v) for v in values)


def _pool3d_setup(self, kernel_size, stride, padding, dilation, ceil_mode, op):
    """Checks and output size of a 3-d pooling of (C, D, H, W) or (N, C, D, H, W) input."""
    kernel = _triple(kernel_size, "kernel_size", op)
    stride = _triple(stride, "stride", op, allow_empty=True) or kernel
    padding = _triple(padding, "padding", op)
    dilation = _triple(dilation, "dilation", op) if dilation is not None else (1, 1, 1)
    if builtins.min(kernel) <= 0 or builtins.min(stride) <= 0 or builtins.min(dilation) <= 0:
        raise RuntimeError("kernel_size, stride and dilation should be greater than zero")
    if self.ndim not in (4, 5) or 0 in self.shape[-4:]:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for k, p, d in zip(kernel, padding, dilation, strict=True):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    outs = tuple(_pool_output_size(self.shape[-3 + i], kernel[i], padding[i], stride[i],
                                   dilation[i], ceil_mode) for i in range(3))
    if builtins.min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, self.shape[-4:]))}). "
                           f"Calculated output size: ({self.shape[-4]}x"
                           f"{'x'.join(map(str, outs))}). Output size is too small")
    return kernel, stride, padding, dilation, outs


def max_pool3d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """The largest value of each 3-d window and its index into D * H * W."""
    kernel, stride, padding, dilation, outs = _pool3d_setup(
        self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d")
    tables = [_sliding_table(self.shape[-3 + i], outs[i], kernel[i], stride[i], padding[i],
                             dilation[i]) for i in range(3)]
    return _max_over(self, [t[0][None] for t in tables], [t[1][None] for t in tables], 3)


def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    return _max_pool_backward_nd(grad_output, self, indices, 3)


def _avg_divisors_nd(spatial, kernel, stride, padding, outs, count_include_pad,
                     divisor_override):
    """What each window's sum is divided by, shaped outs (see _avg_pool_divisors)."""
    if divisor_override is not None:
        return np.full(outs, divisor_override, dtype=np.int64)
    total = np.ones((), np.int64)
    for i, size in enumerate(spatial):
        start = np.arange(outs[i]) * stride[i] - padding[i]
        end = np.minimum(start + kernel[i], size + padding[i])
        length = end - start if count_include_pad else \
            np.minimum(end, size) - np.maximum(start, 0)
        total = total[..., None] * length
    return total


def _avg_pool3d_setup(self, kernel_size, stride, padding, ceil_mode, divisor_override):
    kernel, stride, padding, _, outs = _pool3d_setup(self, kernel_size, stride, padding, None,
                                                     ceil_mode, "avg_pool3d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return kernel, stride, padding, outs


@silent
def avg_pool3d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The sum of each 3-d window over its divisor; integer inputs divide with truncation."""
    kernel, stride, padding, outs = _avg_pool3d_setup(self, kernel_size, stride, padding,
                                                      ceil_mode, divisor_override)
    x = self.reshape((-1, 1) + self.shape[-3:])
    after = [builtins.max(padding[i], (outs[i] - 1) * stride[i] + kernel[i]
                          - self.shape[-3 + i] - padding[i]) for i in range(3)]
    windows = _windows(_pad_spatial(x, padding, after, 0), kernel, stride, (1, 1, 1))
    windows = windows[:, :, :outs[0], :outs[1], :outs[2]]
    divisors = _avg_divisors_nd(self.shape[-3:], kernel, stride, padding, outs,
                                count_include_pad, divisor_override)
    if self.dtype.kind in "fV":
        result = windows.sum(axis=(-3, -2, -1)) / divisors.astype(self.dtype)
    else:
        result = np.trunc(windows.sum(axis=(-3, -2, -1), dtype=np.int64) / divisors)
    return np.ascontiguousarray(result.reshape(self.shape[:-3] + outs), self.dtype)


@silent
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """Each window's gradient over its divisor, spread over the elements it read."""
    kernel, stride, padding, outs = _avg_pool3d_setup(self, kernel_size, stride, padding,
                                                      ceil_mode, divisor_override)
    if grad_output.shape != self.shape[:-3] + outs:
        raise RuntimeError(f"Expected grad_output of size {list(self.shape[:-3] + outs)}, but "
                           f"got {list(grad_output.shape)}")
    divisors = _avg_divisors_nd(self.shape[-3:], kernel, stride, padding, outs,
                                count_include_pad, divisor_override)
    share = grad_output.reshape((-1,) + outs) / divisors.astype(grad_output.dtype)
    reach = [builtins.max(padding[i] + self.shape[-3 + i], (outs[i] - 1) * stride[i] + kernel[i])
             for i in range(3)]
    padded = np.zeros(share.shape[:1] + tuple(reach), grad_output.dtype)
    for offset in np.ndindex(*kernel):
        target = tuple(slice(j, j + s * (o - 1) + 1, s)
                       for j, s, o in zip(offset, stride, outs, strict=True))
        padded[(slice(None),) + target] += share
    grad = padded[(slice(None),) + tuple(slice(p, p + size) for p, size in
                                         zip(padding, self.shape[-3:], strict=True))]
    return np.ascontiguousarray(grad.reshape(self.shape), grad_output.dtype)


def _adaptive_3d_check(self, output_size, op: str, message: str):
    if self.ndim not in (4, 5):
        raise RuntimeError(f"{op}(): Expected 4D or 5D tensor, but got{message}"
                           f"{list(self.shape)}")
    output_size = tuple(builtins.int(v) for v in output_size)
    for dim in range(self.ndim - 3, self.ndim):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"{op}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(self.shape)} with dimension {dim} being empty")
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{_dtype_name(self)}'")
    return output_size


def _adaptive_matrix(size: int, out: int, dtype) -> np.ndarray:
    """Row o marks the input positions of adaptive window o (see _adaptive_bounds)."""
    start, end = _adaptive_bounds(size, out)
    position = np.arange(size)
    return ((position >= start[:, None]) & (position < end[:, None])).astype(dtype)


@silent
def _adaptive_avg_pool3d(self, output_size):
    """Each output cell the mean of its adaptive window, one matrix product per dim."""
    output_size = _adaptive_3d_check(self, output_size, "adaptive_avg_pool3d", " ")
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if builtins.min(output_size) < 0:
        raise RuntimeError(f"adaptive_avg_pool3d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{output_size[0]}, {output_size[1]},"
                           f"{output_size[2]}}}")
    out = self
    for d, o in enumerate(output_size):
        matrix = _adaptive_matrix(self.shape[-3 + d], o, self.dtype)
        matrix = matrix / matrix.sum(axis=1, keepdims=True).clip(min=1)
        out = np.moveaxis(np.tensordot(out, matrix, ([out.ndim - 3 + d], [1])), -1,
                          out.ndim - 3 + d)
    return np.ascontiguousarray(out, self.dtype)


@silent
def _adaptive_avg_pool3d_backward(grad_output, self):
    """Each output cell's gradient over its window's volume, spread over the window."""
    if grad_output.ndim < 4:  # torch reads size(-4) first
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(grad_output.ndim, 1)}, {max(grad_output.ndim, 1) - 1}], "
                         "but got -4)")
    _nonempty_grad_3d(grad_output, "adaptive_avg_pool3d_backward")
    _adaptive_3d_check(self, grad_output.shape[-3:], "adaptive_avg_pool3d", " ")
    grad = grad_output
    for d, o in enumerate(grad_output.shape[-3:]):
        matrix = _adaptive_matrix(self.shape[-3 + d], o, grad_output.dtype)
        matrix = matrix / matrix.sum(axis=1, keepdims=True).clip(min=1)
        grad = np.moveaxis(np.tensordot(grad, matrix, ([grad.ndim - 3 + d], [0])), -1,
                           grad.ndim - 3 + d)
    return np.ascontiguousarray(grad.reshape(self.shape), grad_output.dtype)


def _nonempty_grad_3d(grad_output, op: str) -> None:
    for dim in range(grad_output.ndim - 3, grad_output.ndim):
        if grad_output.shape[dim] == 0:
            raise RuntimeError(
                f"{op}(): Expected grad_output to have non-zero size for non-batch dimensions, "
                f"but grad_output has sizes {list(grad_output.shape)} with dimension {dim} "
                "being empty")


def adaptive_max_pool3d(self, output_size):
    """The largest value of each adaptive 3-d window and its index into D * H * W."""
    output_size = _adaptive_3d_check(self, output_size, "adaptive_max_pool3d", ": ")
    if len(output_size) != 3:
        raise RuntimeError("adaptive_max_pool3d(): internal error: output_size.size() must "
                           "be 3")
    if builtins.min(output_size) < 0:
        shape = list(self.shape[:-3] + output_size)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(output_size)}: {shape}")
    positions, valid = [], []
    for size, out in zip(self.shape[-3:], output_size, strict=True):
        start, end = _adaptive_bounds(size, out)
        width = builtins.int((end - start).max()) if out else 1
        at = start[:, None] + np.arange(width)
        positions.append(at[None])
        valid.append((at < end[:, None])[None])
    return _max_over(self, positions, valid, 3)


def adaptive_max_pool3d_backward(grad_output, self, indices):
    _nonempty_grad_3d(grad_output, "adaptive_max_pool3d_backward")
    return _max_pool_backward_nd(grad_output, self, indices, 3)


def _unpool_check(self, indices, output_size, dims: int):
    if indices.dtype != np.int64:  # torch's 3-d message does not name the type
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {_dtype_name(indices)}" if dims == 2 else ""))
    output_size = tuple(builtins.int(v) for v in output_size)
    if len(output_size) != dims:
        raise RuntimeError(f"There should be exactly {dims} elements (depth, height, width) in "
                           f"output_size, but got {len(output_size)} elements." if dims == 3 else
                           f"There should be exactly two elements (height, width) in "
                           f"output_size, but got {len(output_size)} elements.")
    if self.ndim not in (dims + 1, dims + 2) or 0 in self.shape[-dims - 1:]:
        raise RuntimeError(f"Input to max_unpooling{dims}d should be a {dims + 1}d or "
                           f"{dims + 2}d Tensor, but got a tensor with {self.ndim} dimensions.")
    if indices.shape != self.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(self.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    return output_size


def _max_unpool_nd(self, indices, output_size, dims: int):
    """Each value written at its index into a zero output of output_size per plane."""
    volume = builtins.int(np.prod(output_size, dtype=np.int64))
    planes = self.reshape(-1, builtins.int(np.prod(self.shape[-dims:], dtype=np.int64)))
    where = indices.reshape(planes.shape)
    if where.size and (where.min() < 0 or where.max() >= volume):
        bad = where.max() if where.max() >= volume else where.min()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))})")
    out = np.zeros((planes.shape[0], volume), self.dtype)
    np.put_along_axis(out, where, planes, axis=1)
    return out.reshape(self.shape[:-dims] + output_size)


def max_unpool2d(self, indices, output_size):
    output_size = _unpool_check(self, indices, output_size, 2)
    return _max_unpool_nd(self, indices, output_size, 2)


def max_unpool3d(self, indices, output_size, stride, padding):
    output_size = _unpool_check(self, indices, output_size, 3)
    stride, padding = list(stride), list(padding)
    if len(stride) != 3 or len(padding) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in "
                           f"{'stride' if len(stride) != 3 else 'padding'}, but got "
                           f"{len(stride) if len(stride) != 3 else len(padding)} elements.")
    if builtins.min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {stride}")
    return _max_unpool_nd(self, indices, output_size, 3)


def _fractional_positions(samples, size: int, out: int, pool: int, dtype) -> np.ndarray:
    """torch's fractional intervals per plane: start i is floor((i + u) a) - floor(u a),
    a = (size - pool) / (out - 1), in the input's float type; the last window ends at the
    input's end. (P, out, pool) positions."""
    u = samples.astype(dtype)[:, None]
    if out > 1:
        alpha = dtype.type(size - pool) / dtype.type(out - 1)
        i = np.arange(out - 1, dtype=dtype)[None, :]
        starts = (((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64))
        starts = np.concatenate([starts, np.full((u.shape[0], 1), size - pool)], axis=1)
    else:
        starts = np.full((u.shape[0], out), size - pool)
    return starts[:, :, None] + np.arange(pool)[None, None, :]


def _fractional_max(self, kernel_size, output_size, random_samples, dims: int):
    name = f"fractional_max_pool{dims}d"
    pools = tuple(builtins.int(v) for v in kernel_size)
    outs = tuple(builtins.int(v) for v in output_size)
    if self.ndim not in (dims + 1, dims + 2) or 0 in self.shape[-dims - 1:]:
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: "
                           f"{list(self.shape)}")
    names = ("height", "width") if dims == 2 else ("time", "height", "width")
    for d, (size, out, pool) in enumerate(zip(self.shape[-dims:], outs, pools, strict=True)):
        if out + pool - 1 > size:
            op = name if dims == 2 else f"{name}_out"
            raise RuntimeError(f"{op}(): pool {names[d]} {pool} too large relative to input "
                               f"{names[d]} {size}")
    x = self if self.ndim == dims + 2 else self[None]
    n, c = x.shape[:2]
    draws = random_samples[:n].reshape(n * c, dims)
    order = [1, 0] if dims == 2 else [0, 1, 2]  # torch reads (w, h) in 2-d, (t, h, w) in 3-d
    dtype = np.dtype(self.dtype if self.dtype.kind in "fV" else np.float32)
    positions = [_fractional_positions(draws[:, order[d]], x.shape[2 + d], outs[d], pools[d],
                                       dtype) for d in range(dims)]
    valid = [np.ones(p.shape, bool) for p in positions]
    values, indices = _max_over(x, positions, valid, dims)
    return (values, indices) if self.ndim == dims + 2 else (values[0], indices[0])


@silent  # NaN samples: garbage windows, as torch's, with no warning
def fractional_max_pool2d(self, kernel_size, output_size, random_samples):
    """The maximum of windows whose starts are placed by random_samples (N, C, 2)."""
    return _fractional_max(self, kernel_size, output_size, random_samples, 2)


def fractional_max_pool2d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward_nd(grad_output, self, indices, 2)


@silent  # NaN samples: garbage windows, as torch's, with no warning
def fractional_max_pool3d(self, kernel_size, output_size, random_samples):
    """The maximum of windows whose starts are placed by random_samples (N, C, 3)."""
    return _fractional_max(self, kernel_size, output_size, random_samples, 3)


def fractional_max_pool3d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward_nd(grad_output, self, indices, 3)
# -- spec breadth: reductions, indexing, random, linalg (helper misc) -------------------------

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin", "max", "min")


def _reduction_identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a position starts from when include_self=False: nothing reduced yet."""
    if reduce in ("sum", "mean"):
        return dtype.type(0)
    if reduce == "prod":
        return dtype.type(1)
    if dtype == np.bool_:
        return reduce in ("amin", "min")
    info = np.finfo(dtype) if dtype.kind in "fV" else np.iinfo(dtype)
    low, high = (-np.inf, np.inf) if dtype.kind in "fV" else (info.min, info.max)
    return dtype.type(low if reduce in ("amax", "max") else high)


_REDUCE_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                  "max": np.maximum, "amin": np.minimum, "min": np.minimum}


def _mean_count(self: np.ndarray, key: tuple, shape: tuple, include_self: bool) -> np.ndarray:
    count = np.ones(self.shape, np.int64) if include_self else np.zeros(self.shape, np.int64)
    np.add.at(count, key, np.ones(shape, np.int64))
    return np.maximum(count, 1)


def _divide_by_count(result: np.ndarray, count: np.ndarray) -> np.ndarray:
    if result.dtype.kind in "iu":
        return np.floor_divide(result, count.astype(result.dtype))
    return _array(result / count, result.dtype)


@silent
def scatter_reduce_two(self, dim, index, src, reduce, include_self=True):
    """scatter_reduce: each src element reduced into the self position its index names
    (sum, prod, mean, amax, amin); include_self=False leaves self's old values out of the
    positions written to. An integer mean floor-divides, as torch's."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    _check_index(index, "scatter")
    _same_dtype(self, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _scatter_shape_check(self, dim, index, src)
    if reduce == "mean" and self.dtype == np.bool_:
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented '
                                  "for 'Bool'")
    _wrap_dim(dim, self.ndim)
    if not index.size:
        return np.array(self, copy=True)
    flat = self.reshape(-1) if not self.ndim else self
    key = _scatter_key(flat, dim, index.reshape(-1) if not self.ndim else index, "scatter")
    values = src.reshape(-1)[:index.size] if not self.ndim else \
        src[tuple(slice(0, s) for s in index.shape)]
    result = np.array(flat, copy=True)
    if not include_self:
        result[key] = _reduction_identity(reduce, self.dtype)
    _REDUCE_UFUNCS[reduce].at(result, key, values)
    if reduce == "mean":
        result = _divide_by_count(result, _mean_count(flat, key, values.shape, include_self))
    return result.reshape(self.shape)


def _mode_row(row: np.ndarray) -> tuple[Any, int]:
    """The most frequent value of a 1-D row (the smallest of equally frequent ones) and the
    last position it holds, as torch's CPU kernel finds them."""
    values, counts = np.unique(row, return_counts=True)
    value = values[int(np.argmax(counts))]
    return value, int(np.flatnonzero(row == value)[-1])


def mode(self, dim=-1, keepdim=False):
    """(values, indices): the most frequent value along dim and where it last occurs."""
    dim = _wrap_dim(dim, self.ndim)
    if not self.ndim:
        return self.copy(), np.zeros((), np.int64)
    if self.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    moved = np.moveaxis(self, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.shape[-1] else moved.reshape(0, 0)
    found = [_mode_row(row) for row in rows]
    shape = moved.shape[:-1]
    values = np.array([v for v, _ in found], self.dtype).reshape(shape)
    indices = np.array([i for _, i in found], np.int64).reshape(shape)
    if keepdim:
        values, indices = np.expand_dims(values, dim), np.expand_dims(indices, dim)
    return values, indices


def aminmax(self, dim=None, keepdim=False):
    """(min, max) over dim, or over everything (a 0-dim pair, or size-1 dims with keepdim)."""
    if dim is None:
        if not self.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        axes = tuple(range(self.ndim))
    else:
        axes = (_wrap_dim(dim, self.ndim),) if self.ndim else ()
        for axis in axes:
            if self.shape[axis] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero "
                                 "size.")
    keep = keepdim and (dim is None or self.ndim > 0)
    low = np.amin(self, axis=axes, keepdims=keep) if axes else self.copy()
    high = np.amax(self, axis=axes, keepdims=keep) if axes else self.copy()
    return np.asarray(low), np.asarray(high)


def block_diag(tensors):
    """The tensors as the blocks of a block-diagonal matrix (a 0-dim one a 1x1 block, a 1-D
    one a row), in their promoted dtype."""
    for position, tensor in enumerate(tensors):
        if tensor.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {position} has {tensor.ndim} dimensions")
    if not tensors:  # torch's empty result: one row, no columns
        return np.zeros((1, 0), np.float32)
    blocks = [np.reshape(t, (1, -1) if t.ndim < 2 else t.shape) for t in tensors]
    dtype = promote_types([t.dtype for t in tensors])
    rows = builtins.sum(b.shape[0] for b in blocks)
    result = np.zeros((rows, builtins.sum(b.shape[1] for b in blocks)), dtype)
    row = column = 0
    for block in blocks:
        result[row:row + block.shape[0], column:column + block.shape[1]] = block
        row, column = row + block.shape[0], column + block.shape[1]
    return result


def isnan(self):
    return np.isnan(self) if self.dtype.kind in "fV" else np.zeros(self.shape, np.bool_)


def histc(self, bins=100, min=0, max=0):
    """A histogram of `bins` equal bins over [min, max] (the data's range when both are 0);
    values outside are left out, and max falls in the last bin."""
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{_dtype_name(self)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = self.dtype.type(min), self.dtype.type(max)
    if low == high and self.size:
        low, high = self.min(), self.max()
    if low == high:
        low, high = low - 1, high + 1
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    values = self.reshape(-1)
    values = values[(values >= low) & (values <= high)]
    with np.errstate(all="ignore"):
        index = ((values - low) * bins / (high - low)).astype(np.int64)
    index = np.minimum(index, bins - 1)
    return np.bincount(index, minlength=bins).astype(self.dtype)


def sub_Scalar(self, other, alpha=1):
    return sub_Tensor(self, other, alpha)


def div_Scalar_mode(self, other, rounding_mode=None):
    return div_Tensor_mode(self, other, rounding_mode)


def lift(self):
    return self.copy()


def lift_fresh(self):
    return self


def _lazy_clone(self):
    return self.copy()


def _reshape_alias(self, size, stride):
    """A view of self with the given sizes (the strides must be those of a contiguous
    layout of them: gradgen's tensors have no other)."""
    return np.reshape(self, tuple(size))


def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    """The tensor self was sliced from, src's shape: torch reads it from self's storage, where
    src is that tensor; gradgen has no shared storage, so it writes self into src's slice
    (the same values in that case)."""
    return slice_scatter(src, self, dim, start, end, step)


# -- grid sampling and affine grids -----------------------------------------------------------
# grid_sampler reads the input at the points a grid gives (in [-1, 1] per spatial dim, x
# first: width, then height, then depth), each point a weighted sum over "taps": the 2 (or
# 2 x 2 x 2) corners of its cell for bilinear, the nearest element, or 4 x 4 elements for
# bicubic. Each tap is a product of one weight per dim, so the gradients in the grid are
# the weights' derivatives times the coordinate's (the unnormalisation's scale, and 0 or
# +-1 where border or reflection padding clips or folds it).

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2
_CUBIC_A = -0.75


def _unnormalize(coord, size: int, align_corners: bool):
    """A grid coordinate in [-1, 1] as an input position, and d position / d coordinate."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(position, size: int):
    """Border padding: the position clipped into the input, and its derivative (0 where
    clipped, at the bounds too)."""
    inside = (position > 0) & (position < size - 1)
    return np.clip(position, 0, size - 1), inside.astype(position.dtype)


def _reflect(position, twice_low: int, twice_high: int):
    """Reflection padding: the position folded back between low and high, and its
    derivative (+1 or -1)."""
    if twice_low == twice_high:
        return np.zeros_like(position), np.zeros_like(position)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = position - low
    sign = np.where(shifted < 0, -1.0, 1.0)
    distance = np.abs(shifted)
    extra = np.fmod(distance, span)
    flips = np.floor(distance / span)
    even = np.fmod(flips, 2) == 0
    return (np.where(even, extra + low, span - extra + low).astype(position.dtype),
            np.where(even, sign, -sign).astype(position.dtype))


def _pad_position(position, size: int, padding_mode: int, align_corners: bool):
    """torch's compute_coordinates: the position after border or reflection padding, and
    its derivative."""
    if padding_mode == _BORDER:
        return _clip(position, size)
    if padding_mode == _REFLECTION:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        folded, slope = _reflect(position, low, high)
        clipped, inner = _clip(folded, size)
        return clipped, slope * inner
    return position, np.ones_like(position)


def _cubic_weights(t):
    """The 4 cubic convolution weights (A = -0.75) at fraction t, each as its value and
    its first three derivatives in t (a cubic's fourth is zero)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return [((a + 2) * x - (a + 3)) * x * x + 1, (3 * (a + 2) * x - 2 * (a + 3)) * x,
                6 * (a + 2) * x - 2 * (a + 3), 6 * (a + 2) + 0 * x]

    def far(x):  # 1 < |x| < 2
        return [((a * x - 5 * a) * x + 8 * a) * x - 4 * a, (3 * a * x - 10 * a) * x + 8 * a,
                6 * a * x - 10 * a, 6 * a + 0 * x]

    taps = [(far(t + 1), 1), (near(t), 1), (near(1 - t), -1), (far(2 - t), -1)]
    return [[d * sign ** n for n, d in enumerate(values)] for values, sign in taps]


def _dim_taps(coord, size: int, mode: int, padding_mode: int, align_corners: bool):
    """One spatial dim's taps over the grid's points: [(index, valid, [weight and its
    first three derivatives in the position])], and d position / d coordinate."""
    position, scale = _unnormalize(coord, size, align_corners)
    zero = np.zeros_like(position)
    if mode == _BICUBIC:  # the taps are padded one by one, the fraction is not
        base = np.floor(position)
        taps = []
        for j, weights in enumerate(_cubic_weights(position - base)):
            at, _ = _pad_position(base - 1 + j, size, padding_mode, align_corners)
            taps.append((at, weights))
        slope = zero + scale
    else:
        position, padded_slope = _pad_position(position, size, padding_mode, align_corners)
        slope = padded_slope * scale
        if mode == _NEAREST:
            taps = [(np.rint(position), [zero + 1, zero, zero, zero])]
        else:
            base = np.floor(position)
            taps = [(base, [base + 1 - position, zero - 1, zero, zero]),
                    (base + 1, [position - base, zero + 1, zero, zero])]
    out = []
    for at, weights in taps:
        valid = np.isfinite(at) & (at >= 0) & (at < size)
        out.append((np.where(valid, at, 0).astype(np.int64), valid, weights))
    return out, slope


def _grid_check(input, grid, mode: int, dims: int) -> None:
    """torch's checks of grid_sampler_2d / 3d, in its order and words."""
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_dtype_name(input)} but found "
                           f"{_dtype_name(grid)}")
    if input.shape[:1] != grid.shape[:1]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")
    if input.ndim != dims + 2 or grid.ndim != dims + 2:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same "
                           f"number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    if dims == 3 and mode == _BICUBIC:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype.kind not in "fV":
        raise NotImplementedError(f"\"grid_sampler_{dims}d_cpu_kernel_impl\" not implemented "
                                  f"for '{_dtype_name(input)}'")


class _GridTaps:
    """Every tap of every grid point: its index per spatial dim, whether it lies inside the
    input, and its weight: the product of one weight per dim, differentiated `order[k]`
    times in grid coordinate k (the weight's derivatives in the position times the
    position's slope in the coordinate, whose own derivative is zero almost everywhere)."""

    def __init__(self, spatial, grid, mode, padding_mode, align_corners):
        dims = grid.shape[-1]
        per_dim, self.slopes = [], []
        for k in range(dims):  # grid coordinate k reads spatial dim dims - 1 - k
            taps, slope = _dim_taps(grid[..., k], spatial[dims - 1 - k], mode, padding_mode,
                                    align_corners)
            per_dim.append(taps)
            self.slopes.append(slope)
        self.dims = dims
        self.taps = []
        for combo in itertools.product(*per_dim):
            valid = np.logical_and.reduce([t[1] for t in combo])
            index = tuple(combo[k][0] for k in reversed(range(dims)))  # spatial order
            self.taps.append((index, valid, [t[2] for t in combo]))
        self.batch = np.arange(grid.shape[0]).reshape((-1,) + (1,) * (grid.ndim - 2))

    def weight(self, weights, order):
        total = 1
        for k, n in enumerate(order):
            if n > 3:
                return 0 * weights[k][0]
            total = total * weights[k][n] * self.slopes[k] ** n
        return total

    def read(self, array, index, valid):
        """array (N, C, *spatial) at the tap: (N, *grid points, C), zero outside."""
        values = np.moveaxis(array, 1, -1)[(self.batch,) + index]
        return values * valid[..., None]


def _taps_order(order, dims: int) -> list[int]:
    order = [builtins.int(n) for n in order]
    if len(order) != dims or builtins.min(order, default=0) < 0:
        raise RuntimeError(f"_grid_sampler_taps: expected order to hold {dims} counts of "
                           f"derivatives, but got {order}")
    return order


def _sample(taps: _GridTaps, values, order):
    """sum over taps of weight (differentiated by order) times the values read:
    (N, C, *grid points)."""
    out = np.zeros(taps.batch.shape[:1] + taps.slopes[0].shape[1:] + values.shape[1:2],
                   values.dtype)
    for index, valid, weights in taps.taps:
        out = out + taps.read(values, index, valid) * taps.weight(weights, order)[..., None]
    return np.ascontiguousarray(np.moveaxis(out, -1, 1), values.dtype)


def _scatter(taps: _GridTaps, grad, shape, order):
    """_sample's adjoint: grad (N, C, *points) times each tap's weight, summed onto the input
    position the tap reads."""
    g = np.moveaxis(grad, 1, -1)
    moved = np.zeros((shape[0],) + tuple(shape[2:]) + (shape[1],), grad.dtype)
    for index, valid, weights in taps.taps:
        np.add.at(moved, (taps.batch,) + index,
                  g * (taps.weight(weights, order) * valid)[..., None])
    return np.ascontiguousarray(np.moveaxis(moved, -1, 1), grad.dtype)


@silent
def _grid_sampler_taps(input, grid, order, interpolation_mode, padding_mode, align_corners):
    """The input read at the grid's points with the taps' weights differentiated order[k]
    times in grid coordinate k (order zero: grid_sampler itself)."""
    dims = grid.shape[-1]
    _grid_check(input, grid, interpolation_mode, dims)
    taps = _GridTaps(input.shape[2:], grid, interpolation_mode, padding_mode, align_corners)
    return _sample(taps, input, _taps_order(order, dims))


@silent
def _grid_sampler_taps_backward(grad_output, grid, input_size, order, interpolation_mode,
                                padding_mode, align_corners):
    """_grid_sampler_taps' adjoint in its input: grad_output spread back over the taps."""
    dims = grid.shape[-1]
    input_size = tuple(builtins.int(s) for s in input_size)
    taps = _GridTaps(input_size[2:], grid, interpolation_mode, padding_mode, align_corners)
    return _scatter(taps, grad_output, input_size, _taps_order(order, dims))


def _grid_sampler_forward(input, grid, interpolation_mode, padding_mode, align_corners, dims):
    _grid_check(input, grid, interpolation_mode, dims)
    taps = _GridTaps(input.shape[2:], grid, interpolation_mode, padding_mode, align_corners)
    return _sample(taps, input, [0] * dims)


def _grid_sampler_grads(grad_output, input, grid, interpolation_mode, padding_mode,
                        align_corners, output_mask, dims):
    """grid_sampler's gradients: grad_output spread back over the taps (input), and, per
    grid coordinate, the sum over channels of grad_output times the values read with the
    weights differentiated in that coordinate (grid)."""
    _grid_check(input, grid, interpolation_mode, dims)
    taps = _GridTaps(input.shape[2:], grid, interpolation_mode, padding_mode, align_corners)
    grad_input = _scatter(taps, grad_output, input.shape, [0] * dims) if output_mask[0] \
        else np.zeros(input.shape, input.dtype)
    grad_grid = np.zeros(grid.shape, grid.dtype)
    if output_mask[1]:
        for k in range(dims):
            order = [1 if j == k else 0 for j in range(dims)]
            grad_grid[..., k] = (_sample(taps, input, order) * grad_output).sum(axis=1)
    return grad_input, np.ascontiguousarray(grad_grid, grid.dtype)


@silent
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """The input read at the grid's points (N, H_out, W_out, 2): (N, C, H_out, W_out)."""
    return _grid_sampler_forward(input, grid, interpolation_mode, padding_mode, align_corners, 2)


@silent
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """The input read at the grid's points (N, D_out, H_out, W_out, 3)."""
    return _grid_sampler_forward(input, grid, interpolation_mode, padding_mode, align_corners, 3)


@silent
def _grid_sampler_2d_cpu_fallback(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler_forward(input, grid, interpolation_mode, padding_mode, align_corners, 2)


@silent
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _grid_sampler_grads(grad_output, input, grid, interpolation_mode, padding_mode,
                               align_corners, output_mask, 2)


@silent
def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _grid_sampler_grads(grad_output, input, grid, interpolation_mode, padding_mode,
                               align_corners, output_mask, 3)


@silent
def _grid_sampler_2d_cpu_fallback_backward(grad_output, input, grid, interpolation_mode,
                                           padding_mode, align_corners):
    return _grid_sampler_grads(grad_output, input, grid, interpolation_mode, padding_mode,
                               align_corners, (True, True), 2)


def _linspace_from_neg_one(steps: int, align_corners: bool, dtype):
    """torch's affine-grid axis: steps points from -1 to 1 (linspace's two-sided
    arithmetic), scaled by (steps - 1) / steps without align_corners; 0 for one step."""
    if steps <= 1:
        return np.zeros(builtins.max(steps, 0), dtype)
    step = (dtype.type(1) - dtype.type(-1)) / dtype.type(steps - 1)
    i = np.arange(steps)
    values = np.where(i < steps // 2, dtype.type(-1) + step * i.astype(dtype),
                      dtype.type(1) - step * (steps - 1 - i).astype(dtype)).astype(dtype)
    if not align_corners:
        values = (values * dtype.type(steps - 1) / dtype.type(steps)).astype(dtype)
    return values


def _affine_base_grid(size, align_corners: bool, dtype):
    """(prod spatial, dims + 1): each output point's (x, y[, z], 1)."""
    spatial = list(size[2:])
    axes = [_linspace_from_neg_one(s, align_corners, dtype) for s in reversed(spatial)]
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # spatial order
    columns = [m.ravel() for m in reversed(mesh)] + [np.ones(mesh[0].size, dtype)]
    return np.stack(columns, axis=-1).astype(dtype)


def _affine_check(theta, size, points: int) -> None:
    """torch's errors, which come from the batched product base (N, points, dims + 1) @
    thetaᵀ and the view of its result as (N, *spatial, dims)."""
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    dims = len(size) - 2
    if theta.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if theta.shape[0] != size[0] or theta.shape[2] != dims + 1:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {dims + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    if theta.shape[1] != dims:
        raise RuntimeError(f"shape '{[size[0], *size[2:], dims]}' is invalid for input of size "
                           f"{size[0] * points * theta.shape[1]}")


@silent
def affine_grid_generator(theta, size, align_corners):
    """Each output point's (x, y[, z], 1) times thetaᵀ: (N, *spatial, dims)."""
    size = [builtins.int(s) for s in size]
    points = builtins.int(np.prod(size[2:]))
    _affine_check(theta, size, points)
    dtype = theta.dtype if theta.dtype.kind in "fV" else np.dtype(np.float32)
    base = _affine_base_grid(size, align_corners, dtype)
    grid = np.matmul(base[None], np.swapaxes(theta, 1, 2).astype(dtype))
    return np.ascontiguousarray(grid.reshape([size[0], *size[2:], len(size) - 2]), theta.dtype)



# Antialiased resizing (torch's _upsample_*2d_aa, PIL's filters): each output reads every
# input under its filter's support, stretched by the scale when shrinking, with the
# weights normalised to sum to one. Separable, so it runs through _upsample's taps.

def _antialias_filter(kind: str, x):
    x = np.abs(x)
    if kind == "linear":
        return np.where(x < 1, 1 - x, 0)
    if kind == "cubic":  # Keys' cubic with a = -0.5, as PIL
        a = -0.5
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0))
    # Lanczos-3: sinc(x) sinc(x / 3) inside |x| < 3
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)


_ANTIALIAS_SIZE = {"linear": 2, "cubic": 4, "lanczos": 6}


def _antialias_taps(kind: str, in_size: int, out_size: int, scale, align_corners,
                    dtype) -> list:
    """Output i centred at s (i + 0.5) reads the inputs from int(centre - support + 0.5)
    to int(centre + support + 0.5) (clipped to the input), weighted by the filter at
    (j - centre + 0.5) / max(s, 1) and normalised; as taps (index, weight), the unused
    ones with weight zero."""
    s = builtins.float(_upsample_scale(in_size, out_size, scale, align_corners, dtype))
    support = _ANTIALIAS_SIZE[kind] * 0.5 * (s if s >= 1.0 else 1.0)
    width = math.ceil(support) * 2 + 1
    invscale = 1.0 / s if s >= 1.0 else 1.0
    index = np.zeros((width, out_size), np.int64)
    weight = np.zeros((width, out_size), dtype)
    for i in range(out_size):
        centre = s * (i + 0.5)
        low = builtins.max(builtins.int(centre - support + 0.5), 0)
        size = builtins.min(builtins.max(builtins.min(builtins.int(centre + support + 0.5),
                                                      in_size) - low, 0), width)
        values = _antialias_filter(kind, (np.arange(size) + low - centre + 0.5) * invscale)
        total = values.sum()
        if total != 0:
            values = values / total
        index[:size, i] = np.arange(size) + low
        weight[:size, i] = values
    return [(index[j], weight[j]) for j in range(width)]


def _upsample_bilinear2d_aa(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "aa-linear", align_corners)


def _upsample_bicubic2d_aa(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "aa-cubic", align_corners)


def _upsample_lanczos2d_aa(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _upsample(self, output_size, [scales_h, scales_w], "aa-lanczos", align_corners)


def _upsample_bilinear2d_aa_backward(grad_output, output_size, input_size, align_corners,
                                     scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "aa-linear", align_corners)


def _upsample_bicubic2d_aa_backward(grad_output, output_size, input_size, align_corners,
                                    scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "aa-cubic", align_corners)


def _upsample_lanczos2d_aa_backward(grad_output, output_size, input_size, align_corners,
                                    scales_h=None, scales_w=None):
    return _upsample_backward(grad_output, output_size, input_size, [scales_h, scales_w],
                              "aa-lanczos", align_corners)


# max_pool2d without indices (torch's MPS kernel; on the CPU torch records
# max_pool2d_with_indices instead): the values, and a backward that finds the maxima again.

def max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


@silent
def max_pool2d_backward(grad_output, self, kernel_size, stride=(), padding=0, dilation=1,
                        ceil_mode=False):
    """Each window's gradient added to the element its maximum came from (the first of
    equal maxima), found again in self."""
    _, indices = max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
                                         ceil_mode)
    if grad_output.shape != indices.shape:
        raise RuntimeError(f"Expected grad_output of size {list(indices.shape)}, but got "
                           f"{list(grad_output.shape)}")
    return max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding,
                                            dilation, ceil_mode, indices)
# The in-place random ops of torch's spec (uniform_, normal_, bernoulli_, exponential_):
# torch's checks and messages, then the numbers drawn as torch's CPU kernels draw them
# (runtime/sampling.py), placed in self's memory order. `generator` None: the default one.

_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "bool": "bool", "uint8": "unsigned char"}


def _drawing(generator: Any, op: str) -> Any:
    """The generator to draw from; anything but a Generator is torch's TypeError."""
    if generator is None:
        return _generator[0]
    if not hasattr(generator, "draw32"):
        raise TypeError(f"{op}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def _number_text(value: float) -> str:
    """A number as torch's C++ messages print it (`2`, `0.5`)."""
    return format(value, "g")


def _floats_for_random(self: np.ndarray, kernel: str) -> None:
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(self)}'")


def _check_uniform_bounds(self: np.ndarray, from_: float, to: float) -> None:
    _floats_for_random(self, "check_uniform_bounds")
    info = np.finfo(self.dtype)
    lowest, highest = float(info.min), float(info.max)
    for name, value in (("from", from_), ("to", to)):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{name} is out of bounds for {_C_TYPES[self.dtype.name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_number_text(from_)} > to={_number_text(to)}")
    if to - from_ > highest:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_dtype_name(self)}>::max(), "
            f"but found to={_number_text(to)} and from={_number_text(from_)} which result "
            "in to-from to exceed the limit")


def uniform_(self, low=0.0, to=1.0, generator=None):
    """U(low, to) in self's memory order (torch's `from` is `low`: a Python keyword)."""
    _check_uniform_bounds(self, low, to)
    if not self.size:
        return self
    values = sampling.uniform(_drawing(generator, "uniform_"), self.size, self.dtype, low, to)
    return sampling.place(values, self, self.dtype)


def normal_(self, mean=0.0, std=1.0, generator=None):
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_number_text(std)}")
    if not self.size:
        return self
    _floats_for_random(self, "normal_kernel_cpu")
    values = sampling.normal(_drawing(generator, "normal_"), self.size, self.dtype, mean, std,
                             contiguous=self.flags.c_contiguous)
    return sampling.place(values, self, self.dtype)


def bernoulli__float(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_number_text(p)}")
    if not self.size:
        return self
    drawn = sampling.bernoulli_scalar(_drawing(generator, "bernoulli_"), self.size, p)
    return sampling.place(drawn, self, self.dtype)


def bernoulli__Tensor(self, p, generator=None):
    if not self.size:
        return self
    _floats_for_random(p, "bernoulli_tensor_cpu_p_")
    if np.any((p < 0) | (p > 1)):
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")
    try:
        probabilities = np.broadcast_to(p, self.shape)
    except ValueError:
        raise RuntimeError(f"bernoulli_: p of shape {list(p.shape)} does not broadcast to "
                           f"self's shape {list(self.shape)}") from None
    in_order = np.ascontiguousarray(probabilities.transpose(sampling.memory_order(self)))
    drawn = sampling.bernoulli_tensor(_drawing(generator, "bernoulli_"), in_order)
    return sampling.place(drawn, self, self.dtype)


def bernoulli(self, generator=None):
    """0/1 in self's dtype, 1 with probability self[i]: bernoulli_ of a fresh tensor."""
    return bernoulli__Tensor(np.empty(self.shape, self.dtype), self, generator)


def exponential_(self, lambd=1.0, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={_number_text(lambd)}")
    if self.dtype.kind not in "fV":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {_dtype_name(self)}")
    if not self.size:
        return self
    drawn = sampling.exponential(_drawing(generator, "exponential_"), self.size, lambd)
    return sampling.place(drawn, self, self.dtype)


# -- torch.normal with tensor arguments, random_, poisson, _standard_gamma, rrelu (helper
# random): torch's CPU kernels, drawing as they do ----------------------------------------------

# random_'s C type names in messages
_RANDOM_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
                   "bool": "bool", "uint8": "unsigned char", "int16": "short int",
                   "int8": "signed char", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def random__from(self, low, to=None, generator=None):
    """Integers in [low, to) (to None: up to the dtype's largest, or every int64 from
    -2^63), in self's memory order (torch's `from` is `low`: a Python keyword)."""
    drawn = random_values(self.dtype, self.size, (low, to), _drawing(generator, "random_"))
    return self if drawn is None else sampling.place(drawn, self, self.dtype)


def random__to(self, to, generator=None):
    """Integers in [0, to)."""
    drawn = random_values(self.dtype, self.size, (0, to), _drawing(generator, "random_"))
    return self if drawn is None else sampling.place(drawn, self, self.dtype)


def random_(self, generator=None):
    """Integers in [0, 2^mantissa] for a float dtype, [0, its largest] for an integer one."""
    drawn = random_values(self.dtype, self.size, None, _drawing(generator, "random_"))
    return self if drawn is None else sampling.place(drawn, self, self.dtype)


def random_values(dtype: np.dtype, count: int, bounds: tuple[int, int | None] | None,
                   generator: Any) -> np.ndarray | None:
    """random_'s draws for `count` elements of `dtype` (None when there are none), its
    bounds checked first."""
    if bounds is None:
        return sampling.random_default(generator, count, dtype) if count else None
    low, high = bounds
    span, low = _random_span(dtype, int(low), None if high is None else int(high))
    if count == 0:
        return None
    if span is None:  # every int64
        _check_full_range(dtype)
        return sampling.random_full_range(generator, count)
    return sampling.random_from_to(generator, count, span, low)


def _check_full_range(dtype: np.dtype) -> None:
    kernel = "random_full_64_bits_range_kernel_cpu"
    if dtype in (np.bool_, np.float16):
        name = "Bool" if dtype == np.bool_ else "Half"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    if dtype not in (np.int64, np.float32, np.float64, _BFLOAT16):
        raise RuntimeError(f"{kernel} handles only int64, double, float and bfloat16")


def _round_int(value: int, digits: int) -> int:
    """`value` rounded to `digits` significant bits, ties to even (an int64-to-float cast)."""
    magnitude = builtins.abs(value)
    shift = magnitude.bit_length() - digits
    if shift <= 0:
        return value
    quotient, remainder = divmod(magnitude, 1 << shift)
    half = 1 << (shift - 1)
    if remainder > half or (remainder == half and quotient & 1):
        quotient += 1
    return (quotient << shift) * (1 if value >= 0 else -1)


def _highest_bit(value: int) -> int:
    return builtins.max(builtins.abs(value).bit_length() - 1, 0)


def _update_from(low: int, digits: int) -> int:
    """The least `low` that casting to the float dtype cannot move below itself."""
    cast = _round_int(low + 1, digits)
    if cast < low:
        low = cast + (1 << (_highest_bit(low + 1) - digits + 1))
    return low


def _update_to(high: int, digits: int) -> int:
    """The greatest `high` that casting to the float dtype cannot move above itself."""
    cast = _round_int(high - 1, digits)
    if cast >= high:
        high = cast - (1 << (_highest_bit(high - 1) - digits + 1))
    return high


def _check_in_range(dtype: np.dtype, low: int, high_inclusive: int) -> None:
    c_type = _RANDOM_C_TYPES[dtype.name]
    if dtype.kind in "fV":
        info = np.finfo(dtype)
        lowest, highest, digits = float(info.min), float(info.max), info.nmant + 1
    else:
        info = np.iinfo(dtype) if dtype != np.bool_ else None
        lowest, highest = (0, 1) if info is None else (int(info.min), int(info.max))
        digits = None
    for name, value in (("from", low), ("to - 1", high_inclusive)):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{name} is out of bounds for {c_type}")
    if digits is not None:
        for name, value in (("from", low), ("to - 1", high_inclusive)):
            if not -(1 << digits) <= value <= 1 << digits:
                warn_at_caller(
                    f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {c_type} can support discrete uniform distribution only "
                    "within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance", UserWarning)


def _random_span(dtype: np.dtype, low: int, high: int | None) -> tuple[int | None, int]:
    """(span, low) of random_(low, high) on `dtype`, checked as torch checks them; span None
    means all 2^64 int64 values."""
    is_float = dtype.kind in "fV"
    digits = np.finfo(dtype).nmant + 1 if is_float else None
    if high is not None:
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        if is_float:
            low, high = _update_from(low, digits), _update_to(high, digits)
            if not low < high:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to "
                    f"dtype, but got from={low} >= to={high}")
        _check_in_range(dtype, low, high - 1)
        return high - low, low
    if low == -(2**63):
        return None, low
    if is_float:
        high_inclusive = builtins.min(1 << digits, 2**63 - 1)
        low = _update_from(low, digits)
        if not low < high_inclusive:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                f"casted to dtype, but got from={low} > to_inc={high_inclusive}")
    else:
        high_inclusive = 1 if dtype == np.bool_ else int(np.iinfo(dtype).max)
    _check_in_range(dtype, low, high_inclusive)
    return high_inclusive - low + 1, low


def _check_std_tensor(std: np.ndarray) -> None:
    """Every std >= 0 (a NaN fails too: torch compares the least element)."""
    if std.size and not std.min() >= 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _standard_normal_into(result: np.ndarray, generator: Any, std: float = 1.0) -> None:
    """Fill the fresh contiguous `result` as normal_(0, std) does (nothing when empty)."""
    if result.size:
        _floats_for_random(result, "normal_kernel_cpu")
        result[...] = sampling.normal(_drawing(generator, "normal"), result.size, result.dtype,
                                      0.0, std).reshape(result.shape)


def _update_inplace(result: np.ndarray, ufunc: Any, other: np.ndarray) -> None:
    """`result.mul_(other)` / `result.add_(other)`: computed in the promoted dtype, cast back
    (refused, as torch does, when that dtype does not cast to result's)."""
    dtype = result_type(result, other)
    check_inplace_result(result, dtype, result.shape)
    ufunc(result, other, out=result, dtype=dtype, casting="unsafe")


def check_normal_std(std) -> None:
    """torch.normal's check of std, a number or a tensor, made before anything else."""
    if isinstance(std, np.ndarray):
        _check_std_tensor(std)
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_number_text(std)}")


@silent
def normal_into(result, mean, std, generator=None):
    """torch.normal's draws into a fresh `result` (its shape and dtype decided by the caller,
    std checked): N(0, std) draws plus mean (a number std), or N(0, 1) draws times std plus
    mean (a tensor std), each update in place in result's dtype. Returns result."""
    if isinstance(std, np.ndarray):
        _standard_normal_into(result, generator)
        _update_inplace(result, np.multiply, std)
    else:
        _standard_normal_into(result, generator, std)
    _update_inplace(result, np.add, mean if isinstance(mean, np.ndarray)
                    else np.array(mean, result.dtype))
    return result


def normal_Tensor_float(mean, std=1.0, generator=None):
    """N(mean, std²) of mean's shape and dtype: normal_(0, std) draws plus mean."""
    check_normal_std(std)
    return normal_into(np.empty(mean.shape, mean.dtype), mean, std, generator)


def normal_float_Tensor(mean, std, generator=None):
    """N(mean, std²) of std's shape and dtype: N(0, 1) draws times std, plus mean."""
    check_normal_std(std)
    return normal_into(np.empty(std.shape, std.dtype), mean, std, generator)


def normal_Tensor_Tensor(mean, std, generator=None):
    """N(mean, std²), mean and std broadcast, in mean's dtype: N(0, 1) draws times std, plus
    mean."""
    check_normal_std(std)
    return normal_into(np.empty(broadcast_shapes(mean.shape, std.shape), mean.dtype), mean, std,
                       generator)


def _float_or_double_only(self: np.ndarray, kernel: str) -> None:
    """A kernel torch dispatches on float and double only (Half and BFloat16 refused)."""
    if self.dtype not in (np.float32, np.float64):
        name = {"float16": "Half", "bfloat16": "BFloat16"}.get(self.dtype.name)
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{name or _dtype_name(self)}'")


@silent
def poisson(self, generator=None):
    """Poisson samples of rates `self`, element by element in C order (as torch draws)."""
    _floats_for_random(self, "poisson_cpu")
    generator = _drawing(generator, "poisson")
    invalid = ~(self >= 0)
    if invalid.any():  # torch's kernel draws for the rates before the first invalid one
        first = int(np.argmax(invalid.reshape(-1)))
        sampling_serial.poisson(generator, self.reshape(-1)[:first])
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return sampling_serial.poisson(generator, self)


@silent
def _standard_gamma(self, generator=None):
    """Gamma(self, 1) samples, element by element in C order (Marsaglia and Tsang, as torch
    draws); each at least the dtype's smallest normal number."""
    _float_or_double_only(self, "gamma_cpu")
    return sampling_serial.standard_gamma(_drawing(generator, "_standard_gamma"), self)


@silent
def _standard_gamma_grad(self, output):
    """d output / d self for Gamma(self, 1) samples `output`: the implicit
    reparameterisation gradient, self and output broadcast."""
    broadcast_shapes(self.shape, output.shape)
    if output.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {_TYPE_NAMES.get(output.dtype.name, 'Byte')} but "
                           f"expected {_TYPE_NAMES.get(self.dtype.name, 'Byte')}")
    _float_or_double_only(self, "_standard_gamma_grad_cpu")
    return sampling_serial.standard_gamma_grad(self, output)


def _rrelu_noise_draws(self: np.ndarray, noise: np.ndarray, lower: Any, upper: Any,
                       generator: Any) -> np.ndarray:
    """rrelu's training slopes, written into `noise` (in C order, as torch's kernel writes
    it): for each element at or below 0, U(lower, upper) from one 64-bit word in double
    precision, the bounds first held in the op's math type (float below double); 1 for the
    others. Returns self times the slopes, in self's dtype."""
    if self.dtype.kind not in "fV" or self.dtype == np.float16:
        name = "Half" if self.dtype == np.float16 else _dtype_name(self)
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for '{name}'")
    if noise.dtype != self.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE_NAMES.get(self.dtype.name)} but found "
                           f"{_TYPE_NAMES.get(noise.dtype.name, 'Byte')}")
    math_type = np.float64 if self.dtype == np.float64 else np.float32
    low, high = (float(np.asarray(float(bound), math_type)) for bound in (lower, upper))
    negative = np.ascontiguousarray(self) <= 0
    if negative.any() and not low <= high:
        raise RuntimeError("Expected from <= to to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    generator = _drawing(generator, "rrelu_with_noise")
    slopes = np.ones(self.shape, math_type)
    draws = sampling._unit_float64(generator, int(negative.sum())) * (high - low) + low
    slopes[negative] = draws.astype(math_type)
    noise[...] = slopes.astype(noise.dtype)
    return (self * slopes).astype(self.dtype)


def _rrelu_check_noise(self: np.ndarray, noise: np.ndarray) -> None:
    if self.shape != noise.shape:
        raise RuntimeError(f"noise tensor shape must match self tensor shape. Got self.shape = "
                           f"{list(self.shape)} noise.shape = {list(noise.shape)}")


@silent
def rrelu_with_noise(self, noise, lower=0.125, upper=0.3333333333333333, training=False,
                     generator=None):
    """Leaky ReLU with a random slope U(lower, upper) per element at or below 0 in
    training (the slopes written into noise), the mean slope (lower + upper) / 2 in eval
    (noise left alone)."""
    _rrelu_check_noise(self, noise)
    if training:
        return _rrelu_noise_draws(self, noise, lower, upper, generator)
    if self.dtype.kind not in "fV":
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for '{_dtype_name(self)}'")
    slope = (float(lower) + float(upper)) / 2
    if self.dtype.itemsize == 2:  # float16, bfloat16: in float32, as torch's kernel computes
        return leaky_relu(self.astype(np.float32), slope).astype(self.dtype)
    return leaky_relu(self, slope)


def rrelu_with_noise_(self, noise, lower=0.125, upper=0.3333333333333333, training=False,
                      generator=None):
    return rrelu_with_noise(self, noise, lower, upper, training, generator)


def rrelu_with_noise_functional(self, noise, lower=0.125, upper=0.3333333333333333,
                                training=False, generator=None):
    """rrelu_with_noise writing its slopes into a copy of noise, returned beside the result."""
    noise_out = np.array(noise)
    return rrelu_with_noise(self, noise_out, lower, upper, training, generator), noise_out


@silent
def rrelu_with_noise_backward(grad_output, self, noise, lower, upper, training,
                              self_is_result):
    """noise * grad_output in training; leaky_relu's gradient at the mean slope in eval."""
    if training:
        return mul_Tensor(noise, grad_output)
    return leaky_relu_backward(grad_output, self, (float(lower) + float(upper)) / 2,
                               self_is_result)


@silent
def _fused_dropout(self, p, generator=None):
    """Dropout keeping each element with probability p (torch's CUDA op; on a CPU, torch's
    decomposition of it): a uniform per element in self's memory order, kept where below p,
    the kept scaled by 1/p, in float32 for the 2-byte dtypes; the mask is uint8."""
    compute = np.dtype(np.float32) if self.dtype.itemsize == 2 and self.dtype.kind in "fV" \
        else self.dtype
    _check_uniform_bounds(np.empty(0, compute), 0.0, 1.0)
    mask = np.empty(self.shape, np.uint8)
    if self.size:
        drawn = sampling.uniform(_drawing(generator, "_fused_dropout"), self.size, compute)
        mask = (sampling.place(drawn, self, compute) < p).astype(np.uint8)
    scale = np.divide(compute.type(1.0), np.asarray(p, compute), dtype=compute)
    kept = np.multiply(mask.astype(compute), self.astype(compute), dtype=compute)
    return np.multiply(kept, scale, dtype=compute).astype(self.dtype), mask


@silent
def multinomial(self, num_samples, replacement=False, generator=None):
    """Category indices (int64) drawn from each row of probabilities (or weights) `self`,
    as torch's CPU kernel draws them."""
    _check_multinomial(self, num_samples, replacement)
    rows = self.reshape(-1, self.shape[-1])
    if rows.shape[0] == 0:
        return np.empty((*self.shape[:-1], num_samples), np.int64)
    if not replacement or num_samples == 1:
        _check_fast_multinomial(rows)
    else:
        _check_multinomial_rows(rows)
    drawn = sampling.multinomial(_drawing(generator, "multinomial"), rows, num_samples,
                                 replacement)
    return drawn.reshape(*self.shape[:-1], num_samples)


def _check_multinomial(probs: np.ndarray, num_samples: int, replacement: bool) -> None:
    if not 1 <= probs.ndim <= 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if probs.dtype.kind not in "fV":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_TYPE_NAMES.get(probs.dtype.name, 'Byte')}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if probs.shape[-1] > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_fast_multinomial(rows: np.ndarray) -> None:
    if not (np.all(rows >= 0) and np.all(rows < np.inf)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(axis=-1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _check_multinomial_rows(rows: np.ndarray) -> None:
    """The with-replacement kernel's checks, element by element and row by row."""
    for row in rows:
        bad = ~(row >= 0) | ~np.isfinite(row)
        if bad.any():
            if not row[np.argmax(bad)] >= 0:
                raise RuntimeError(
                    "invalid multinomial distribution (encountering probability entry < 0)")
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
        if not np.cumsum(row, dtype=row.dtype)[-1] > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _index_as_scatter(self: np.ndarray, dim: int, index: np.ndarray,
                      source: np.ndarray) -> np.ndarray:
    """index_reduce's checks, then its vector index as the scatter index of source's shape
    (each slice of source along dim goes to the slice of self its index names)."""
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype_name(index)}")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_dtype_name(index)} and size: "
                         f"{list(index.shape)}")
    dim = _wrap_dim(dim, self.ndim)
    if self.ndim != source.ndim or builtins.any(
            a != b for d, (a, b) in enumerate(zip(self.shape, source.shape, strict=True))
            if d != dim):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    count = source.shape[dim] if source.ndim else 1
    if index.size != count:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.size}) should be equal "
                           f"to source.size(dim): ({count}), for dim: {dim}")
    _same_dtype(self, source, "index_reduce_(): self ({self}) and source ({source}) must have "
                "the same scalar type")
    size = self.shape[dim] if self.ndim else 1
    if np.any((index < 0) | (index >= size)):
        raise IndexError("index out of range in self")
    shape = [1] * source.ndim
    if source.ndim:
        shape[dim] = -1
    return np.broadcast_to(index.reshape(shape), source.shape).astype(np.int64)


_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """torch's TORCH_WARN_ONCE: the first call in the process warns, later ones do not."""
    if key not in _WARNED:
        _WARNED.add(key)
        warn_at_caller(message)


def index_reduce(self, dim, index, source, reduce, include_self=True):
    """Each slice of source along dim reduced into the slice of self its index names (prod,
    mean, amax, amin): scatter_reduce with the index spread over the slice."""
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    spread = _index_as_scatter(self, dim, index, source)
    return scatter_reduce_two(self, dim, spread, source, reduce, include_self)


# The unique family: torch's entries have no derivative (not_implemented). NaNs are all
# distinct, as in torch.

_NO_INDICES = np.zeros(0, np.int64)


def _unique_flat(self: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, inverse, counts = np.unique(self.reshape(-1), return_inverse=True,
                                        return_counts=True, equal_nan=False)
    return values, inverse.reshape(self.shape).astype(np.int64), counts.astype(np.int64)


def _unique(self, sorted=True, return_inverse=False):
    """The distinct elements, sorted (torch's CPU kernel sorts whatever `sorted` says), and
    where each element went (empty unless asked)."""
    values, inverse, _ = _unique_flat(self)
    return values, inverse if return_inverse else _NO_INDICES


def _unique2(self, sorted=True, return_inverse=False, return_counts=False):
    values, inverse, counts = _unique_flat(self)
    return (values, inverse if return_inverse else _NO_INDICES,
            counts if return_counts else _NO_INDICES)


def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """The distinct slices along dim, sorted, with where each slice went and how often each
    occurs (torch gives those two whatever the flags say)."""
    axis = _wrap_dim(dim, self.ndim)
    values, inverse, counts = np.unique(self, return_inverse=True, return_counts=True,
                                        axis=axis, equal_nan=False)
    return values, inverse.reshape(-1).astype(np.int64), counts.astype(np.int64)


def _consecutive_runs(self: np.ndarray, axis: int | None) -> tuple:
    """(kept, inverse, counts) of the runs of equal consecutive elements (slices)."""
    rows = self.reshape(-1) if axis is None else np.moveaxis(self, axis, 0)
    if rows.shape[0] == 0:
        return self.reshape(0) if axis is None else self, _NO_INDICES, _NO_INDICES
    flat = rows.reshape(rows.shape[0], -1)
    starts = np.concatenate([[True], np.any(flat[1:] != flat[:-1], axis=1)])
    inverse = (np.cumsum(starts) - 1).astype(np.int64)
    counts = np.diff(np.append(np.flatnonzero(starts), rows.shape[0])).astype(np.int64)
    kept = rows[starts]
    values = kept if axis is None else np.moveaxis(kept, 0, axis)
    return np.ascontiguousarray(values), inverse, counts


def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """Each run of equal consecutive elements (slices along dim) kept once; without dim,
    where each element went and the run lengths are empty unless asked."""
    if dim is not None:
        return unique_dim_consecutive(self, dim, return_inverse, return_counts)
    values, inverse, counts = _consecutive_runs(self, None)
    return (values, inverse.reshape(self.shape) if return_inverse else _NO_INDICES,
            counts if return_counts else _NO_INDICES)


def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    return _consecutive_runs(self, _wrap_dim(dim, self.ndim))


@silent
def masked_scatter_backward(grad_output, mask, sizes):
    """masked_scatter's gradient for source: grad_output where mask is true, in order, then
    zeros for the elements of source that were not used, in source's shape (`sizes`)."""
    grad_output, mask = np.broadcast_arrays(grad_output, mask)
    selected = grad_output[mask]
    total = math.prod(sizes)
    if selected.size > total:  # torch views the selected values as `sizes`
        raise RuntimeError(f"shape '{list(sizes)}' is invalid for input of size "
                           f"{selected.size}")
    result = np.zeros(total, grad_output.dtype)
    result[:selected.size] = selected
    return result.reshape(tuple(sizes))


# The unsafe indexing ops (torch's decompositions of upsampling and padding): index and
# index_put, and their masked forms, where an index that the mask hides may be out of range
# (it is clamped into range and its value not used).

def _unsafe_index_Tensor(self, indices):
    return index_Tensor(self, indices)


def _unsafe_index_put(self, indices, values, accumulate=False):
    return index_put(self, indices, values, accumulate)


def _clamped(self: np.ndarray, indices: list) -> list:
    return [None if index is None else np.clip(index, -self.shape[d], self.shape[d] - 1)
            for d, index in enumerate(indices)]


def _unsafe_masked_index(self, mask, indices, fill):
    """self[indices] where mask is true, fill elsewhere."""
    picked = index_Tensor(self, _clamped(self, indices))
    return np.where(mask, picked, fill).astype(self.dtype)


@silent
def _unsafe_masked_index_put_accumulate(self, mask, indices, values):
    """self with values added at indices, where mask is true."""
    kept = np.where(mask, values, 0).astype(values.dtype)
    return index_put(self, _clamped(self, indices), kept, True)


def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    """median + sigma tan(π (u - 1/2)) for float64 uniforms u, rounded to self's dtype."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_number_text(sigma)}")
    if self.dtype.kind not in "fV":
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_C_TYPES[self.dtype.name]}")
    if not self.size:
        return self
    drawn = sampling.cauchy(_drawing(generator, "cauchy_"), self.size, median, sigma)
    return sampling.place(drawn, self, self.dtype)


def log_normal_(self, mean=1.0, std=2.0, generator=None):
    """exp of N(mean, std²) drawn one by one (torch's serial normal, in float64)."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_number_text(std)}")
    _floats_for_random(self, "log_normal_cpu")
    if not self.size:
        return self
    drawn = sampling.log_normal(_drawing(generator, "log_normal_"), self.size, mean, std)
    return sampling.place(drawn, self, self.dtype)


def geometric_(self, p, generator=None):
    """The number of Bernoulli(p) trials up to the first success: ceil(log u / log(1 - p))
    for float64 uniforms u, in self's dtype (integers too)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_number_text(p)}")
    if self.dtype == np.bool_:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not self.size:
        return self
    drawn = sampling.geometric(_drawing(generator, "geometric_"), self.size, p)
    return sampling.place(drawn, self, self.dtype)


@silent
def matmul(self, other):
    """torch.matmul on arrays: dot, mv, mm, or a batched product broadcasting the batch
    dimensions (a 1-D operand a row or a column, removed again)."""
    if self.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{self.ndim}D and {other.ndim}D")
    if self.ndim == 1 and other.ndim == 1:
        return dot(self, other)
    if self.ndim == 2 and other.ndim == 1:
        return mv(self, other)
    if self.ndim <= 2 and other.ndim == 2:
        product = mm(self.reshape(1, -1) if self.ndim == 1 else self, other)
        return product.reshape(-1) if self.ndim == 1 else product
    a = self.reshape(1, -1) if self.ndim == 1 else self
    b = other.reshape(-1, 1) if other.ndim == 1 else other
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{math.prod(b.shape[:-2]) or 1}, {a.shape[-1]}] but got: "
                           f"[{math.prod(b.shape[:-2]) or 1}, {b.shape[-2]}].")
    broadcast_shapes(a.shape[:-2], b.shape[:-2])
    result = _array(np.matmul(a, b) if a.dtype != _BFLOAT16 else np.matmul(
        a.astype(np.float32), b.astype(np.float32)), result_type(a, b))
    if self.ndim == 1:
        result = result[..., 0, :]
    return result[..., 0] if other.ndim == 1 else result


@silent
def linear(input, weight, bias=None):
    """input @ weightᵀ + bias."""
    result = matmul(input, np.swapaxes(weight, -1, -2) if weight.ndim >= 2 else weight)
    return result if bias is None else add_Tensor(result, bias)


@silent
def linear_backward(self, grad_output, weight, output_mask):
    """linear's gradients for (input, weight, bias), each where output_mask asks (zeros
    elsewhere)."""
    rows = grad_output.reshape(-1, grad_output.shape[-1])
    grad_input = matmul(grad_output, weight) if output_mask[0] else np.zeros(self.shape,
                                                                               self.dtype)
    grad_weight = mm(rows.T, self.reshape(-1, self.shape[-1])) if output_mask[1] else \
        np.zeros(weight.shape, weight.dtype)
    grad_bias = rows.sum(axis=0) if output_mask[2] else np.zeros(weight.shape[:1],
                                                                  grad_output.dtype)
    return grad_input, grad_weight, grad_bias


# -- as_strided: views by storage geometry ------------------------------------------------------
# A tensor's storage is the memory of the numpy array that owns its data (found through
# numpy's views and stride tricks); a geometry (sizes, strides, storage offset, counted in
# elements) picks elements out of it, as torch's as_strided does.

def storage_root(array: ndarray) -> ndarray:
    """The array that owns `array`'s memory: up numpy's views, and through the object numpy's
    stride tricks leave between a view and its base."""
    while True:
        base = array.base
        if isinstance(base, ndarray):
            array = base
        elif base is not None and isinstance(getattr(base, "base", None), ndarray):
            array = base.base
        else:
            return array


def storage_bytes(array: ndarray) -> tuple[ndarray, int]:
    """`array`'s storage as a 1-D uint8 array over the same memory, and the byte at which
    `array`'s first element sits in it."""
    root = storage_root(array)
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        raise RuntimeError("gradgen cannot address the storage of this tensor: its memory "
                           "was not laid out by an array that owns it")
    memory = root.reshape(-1, order="A").view(np.uint8)
    start = array.__array_interface__["data"][0] - memory.__array_interface__["data"][0]
    return memory, start if 0 <= start < builtins.max(memory.size, 1) else 0


def storage_offset(array: ndarray) -> int:
    """Where `array`'s first element sits in its storage, in elements (0 when empty)."""
    return storage_bytes(array)[1] // array.itemsize if array.size else 0


def _check_geometry(size, stride, offset, itemsize, nbytes) -> None:
    """torch's errors for a geometry that does not fit a storage of `nbytes` bytes."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(step < 0 for step in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if builtins.any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if 0 in size:
        return
    steps = zip(size, stride, strict=True)
    needed = offset + 1 + builtins.sum((n - 1) * step for n, step in steps)
    if needed * itemsize > nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out "
            f"of bounds for storage of size {nbytes}")


def _strided_view(memory: ndarray, dtype: np.dtype, size, stride, offset) -> ndarray:
    """The elements of `memory` (a storage's bytes) that the geometry picks, as a view."""
    itemsize = dtype.itemsize
    if 0 in size:  # nothing to read: numpy wants the offset inside the buffer all the same
        offset = 0
        memory = memory if memory.size else np.empty(itemsize, np.uint8)
    return np.ndarray(tuple(size), dtype, buffer=memory, offset=offset * itemsize,
                      strides=tuple(step * itemsize for step in stride))


def as_strided(self, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    memory, start = storage_bytes(self)
    offset = start // self.itemsize if storage_offset is None else storage_offset
    _check_geometry(size, stride, offset, self.itemsize, memory.size)
    return _strided_view(memory, self.dtype, size, stride, offset)


def as_strided_(self, size, stride, storage_offset=None):
    """The view self becomes (recording.restride makes self this view)."""
    return as_strided(self, size, stride, storage_offset)


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    """A copy of self with src written into the elements the geometry picks in the copy's
    storage. As torch's, the copy is of self's whole storage, viewed as self is (an expanded
    self, whose elements share memory, is copied row-major instead)."""
    if builtins.any(n > 1 and step == 0 for n, step in zip(self.shape, self.strides,
                                                             strict=True)):
        result = np.array(self, copy=True, order="C")
    else:
        memory, start = storage_bytes(self)
        result = np.ndarray(self.shape, self.dtype, buffer=memory.copy(), offset=start,
                            strides=self.strides)
    size, stride = tuple(size), tuple(stride)
    memory, start = storage_bytes(result)
    offset = start // result.itemsize if storage_offset is None else storage_offset
    _check_geometry(size, stride, offset, result.itemsize, memory.size)
    region = _strided_view(memory, result.dtype, size, stride, offset)
    if builtins.any(n > 1 and step == 0 for n, step in zip(size, stride, strict=True)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    if region.shape != src.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(region.shape)}")
    np.copyto(region, src, casting="unsafe")
    return result


# -- shape and tensor identity (helper strided) ----------------------------------------------------

def chunk(self, chunks, dim=0):
    """`chunks` pieces of equal size along dim (the last may be smaller), as torch splits."""
    if self.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _wrap_dim(dim, self.ndim)
    split_size = -(-self.shape[dim] // chunks)
    if split_size == 0:  # an empty dimension still gives `chunks` (empty) pieces
        return split_with_sizes(self, [0] * chunks, dim)
    return split_Tensor(self, split_size, dim)


# -- embedding bags: torch's _embedding_bag and its backward ops (helper nnx) -----------------
# The modes as torch numbers them; the auxiliary outputs (offset2bag, bag_size, max_indices)
# are torch's CPU kernel's, shapes and values, since its backward ops read them.
_BAG_SUM, _BAG_MEAN, _BAG_MAX = 0, 1, 2
_BAG_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float16), _BFLOAT16)


def _bag_type_name(array: np.ndarray) -> str:
    """`torch.FloatTensor`, `torch.HalfTensor`: an array's legacy type name in messages."""
    name = {"float16": "Half", "bfloat16": "BFloat16"}.get(str(array.dtype))
    return f"torch.{name or _dtype_name(array)}Tensor"


def _bag_check_types(array: np.ndarray, name: str, allowed: tuple[str, ...]) -> None:
    if _bag_type_name(array)[6:-6] not in allowed:
        raise RuntimeError(
            f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
            f"types: {', '.join(allowed)}; but got {_bag_type_name(array)} instead (while "
            "checking arguments for embedding_bag)")


def _bag_indices(indices: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """indices and offsets checked (Long or Int) and promoted to their common type."""
    _bag_check_types(indices, "indices", ("Long", "Int"))
    _bag_check_types(offsets, "offsets", ("Long", "Int"))
    common = np.promote_types(indices.dtype, offsets.dtype)
    return indices.astype(common, copy=False), offsets.astype(common, copy=False)


def _bag_check_arguments(weight, indices, offsets, mode, per_sample_weights,
                         include_last_offset) -> None:
    _bag_check_types(weight, "weight", ("Half", "BFloat16", "Float", "Double"))
    if offsets.shape[0]:
        if offsets[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {offsets[0]}\n"
                f"[ {_bag_type_name(offsets)}{{}} ]")
        if offsets[-1] > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{indices.shape[0]} but got offsets[-1] of {offsets[-1]}")
    if per_sample_weights is not None:
        if mode != _BAG_SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with "
                               "mode='sum'")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(
                "Expected tensor for argument #1 'weight' to have the same type as tensor for "
                "argument #1 'per_sample_weights'; but type "
                f"{_bag_type_name(weight)} does not equal {_bag_type_name(per_sample_weights)}"
                " (while checking arguments for embedding_bag)")
        for check in ("per_sample_weights.value().dim() == 1",
                      "per_sample_weights.value().numel() == indices.numel()"):
            if not (per_sample_weights.ndim == 1 if "dim" in check
                    else per_sample_weights.size == indices.size):
                raise RuntimeError(
                    f"Expected {check} to be true, but got false.  (Could this error message "
                    "be improved?  If so, please report an enhancement request to PyTorch.)")
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _bag_offset2bag(offsets: np.ndarray, count: int) -> np.ndarray:
    """Each index's bag from the bags' starts (torch's make_offset2bag): a mark at every
    start, summed; a start equal to `count` marks nothing."""
    marks = np.zeros(count + 1, offsets.dtype)
    np.add.at(marks, offsets, 1)
    marks[0] -= 1
    return np.cumsum(marks, dtype=offsets.dtype)[:count]


def _bag_check_index(weight, ids, fast: bool) -> None:
    """An index outside the table, named as torch's fast or slow kernel names it."""
    outside = np.flatnonzero((ids < 0) | (ids >= weight.shape[0]))
    if outside.size:
        first = outside[0]
        if fast:
            raise RuntimeError(f"Index {first} of input takes value {ids[first]} which is not "
                               f"in the valid range [0, {weight.shape[0]})")
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {ids[first]}")


def _bag_summed(owner, offsets, bags: int, fast: bool, include_last_offset):
    """The bag each index adds to in a sum or mean (-1: none): torch's fast kernel ends the
    last bag at the last offset when include_last_offset holds; its others (and offset2bag,
    bag_size, the max mode) run it to the end."""
    if fast and include_last_offset and bags:
        owner = owner.copy()
        owner[offsets[bags]:] = -1
    return owner


@silent
def _bag_max(weight, ids, owner, keep, bags):
    """Each bag's elementwise maximum and the rows it came from, as torch's loop finds them:
    a bag's first row, then a later row wherever it is greater (NaN replaces nothing)."""
    output = np.zeros((bags, weight.shape[1]), weight.dtype)
    arg = np.zeros((bags, weight.shape[1]), np.int64)
    seen = np.zeros(bags, bool)
    for position in np.flatnonzero(keep):
        bag, row = owner[position], ids[position]
        better = slice(None) if not seen[bag] else weight[row] > output[bag]
        output[bag, better] = weight[row, better]
        arg[bag, better] = row
        seen[bag] = True
    return output, arg


@silent
def _bag_sum(weight, ids, owner, keep, per_sample_weights):
    """Each bag's sum of rows (scaled by per_sample_weights), added in index order (in float32
    for a half-precision table, as torch accumulates)."""
    wide = np.float32 if weight.dtype in _BAG_FAST_DTYPES[1:] else weight.dtype
    rows = weight[ids[keep]].astype(wide)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[keep].astype(wide)[:, None]
    return rows, wide


@silent
def _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                        include_last_offset, padding_idx, requires_grad):
    """torch's _embedding_bag_cpu_impl: (output, offset2bag, bag_size, max_indices)."""
    if indices.ndim not in (1, 2):
        raise RuntimeError("input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{indices.ndim}")
    if indices.ndim == 1 and offsets.ndim != 1:
        raise RuntimeError("offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.ndim}")
    indices, offsets = _bag_indices(indices, offsets)
    _bag_check_arguments(weight, indices, offsets, mode, per_sample_weights,
                         include_last_offset)
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.ndim}")
    if mode not in (_BAG_SUM, _BAG_MEAN, _BAG_MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    indices = indices.reshape(-1)  # (a 2-D input reaches torch's kernels as its flat data)
    count = indices.shape[0]
    ids = indices.astype(np.int64)
    bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    fast = weight.dtype in _BAG_FAST_DTYPES and padding_idx < 0
    owner = _bag_offset2bag(offsets[:bags], count).astype(np.int64)
    offset2bag = owner.astype(offsets.dtype) if mode != _BAG_SUM or not fast else \
        np.zeros(0, offsets.dtype)
    _bag_check_index(weight, ids, fast and mode != _BAG_MAX)
    keep = (ids != padding_idx) & (owner >= 0)
    sizes = np.bincount(owner[keep], minlength=bags)[:bags].astype(offsets.dtype)
    if mode == _BAG_MAX:
        output, max_indices = _bag_max(weight, ids, owner, keep, bags)
        return output, offset2bag, sizes, max_indices.astype(offsets.dtype)
    owner = _bag_summed(owner, offsets, bags, fast, include_last_offset)
    keep &= owner >= 0
    rows, wide = _bag_sum(weight, ids, owner, keep, per_sample_weights)
    output = np.zeros((bags, weight.shape[1]), wide)
    np.add.at(output, owner[keep], rows)
    if mode == _BAG_MEAN:
        output /= np.maximum(sizes, 1).astype(wide)[:, None]
    else:
        sizes = np.zeros(bags if requires_grad else offsets.shape[0], offsets.dtype)
    return output.astype(weight.dtype, copy=False), offset2bag, sizes, sizes.copy()


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, True)


def _embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                                sparse=False, per_sample_weights=None,
                                include_last_offset=False, padding_idx=-1):
    """_embedding_bag for a table that needs no gradient (its sum mode's bag_size is shaped
    as offsets)."""
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, False)


def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                            num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights,
                            padding_idx=-1):
    """_embedding_bag's gradient in its table: offset2bag made from offsets where the fast
    sum left it empty, then the dense backward (gradgen has no sparse gradients)."""
    indices, offsets = _bag_indices(indices, offsets)
    if indices.size and not offset2bag.size:
        offset2bag = _bag_offset2bag(offsets, indices.shape[0])
    else:
        _bag_check_types(offset2bag, "offset2bag", ("Long", "Int"))
    if sparse:
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        raise NotImplementedError("gradgen has no sparse gradients (embedding_bag with "
                                  "sparse=True has no backward here)")
    return _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                         num_weights, scale_grad_by_freq, mode,
                                         per_sample_weights, padding_idx)


@silent
def _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                  num_weights, scale_grad_by_freq, mode, per_sample_weights,
                                  padding_idx=-1):
    """The table's gradient: each bag's gradient row added to the rows it used (to its
    maxima's rows in max mode), scaled by the sample's weight, 1 / the bag's size (mean)
    and, with scale_grad_by_freq, 1 / a count."""
    _bag_check_types(grad, "grad_", ("Half", "BFloat16", "Float", "Double"))
    result = np.zeros((num_weights, grad.shape[1]), grad.dtype)
    if mode == _BAG_MAX:
        filled = np.flatnonzero(bag_size)
        columns = np.arange(grad.shape[1])[None, :]
        np.add.at(result, (maximum_indices[filled].astype(np.int64), columns), grad[filled])
        return result
    order = np.argsort(indices, kind="stable")
    ids = indices[order].astype(np.int64)
    owner = offset2bag[order].astype(np.int64)
    scale = np.ones(ids.size) if per_sample_weights is None else \
        per_sample_weights[order].astype(np.float64)
    if scale_grad_by_freq:
        # As torch's CPU loop reads it: the count of the index at the position, in the sorted
        # indices, of the index's group number (the group's own count for the first groups).
        counts = np.bincount(ids, minlength=num_weights)
        group = np.cumsum(np.r_[True, ids[1:] != ids[:-1]]) - 1 if ids.size else ids
        scale = scale / counts[ids[group]]
    if mode == _BAG_MEAN:
        sizes = bag_size[owner].astype(np.float64)
        scale = np.where(sizes != 0, scale / np.where(sizes != 0, sizes, 1), scale)
    keep = (ids != padding_idx) & (owner < grad.shape[0])  # (torch reads past grad there)
    np.add.at(result, ids[keep], scale[keep].astype(grad.dtype)[:, None] * grad[owner[keep]])
    return result


@silent
def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
                                               padding_idx=-1):
    """Each sample weight's gradient: its bag's gradient row · the table row it scaled (0 for
    the padding index)."""
    if mode != _BAG_SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    indices, offsets = _bag_indices(indices, offsets)
    if indices.size and not offset2bag.size:
        offset2bag = _bag_offset2bag(offsets, indices.shape[0])
    ids = indices.astype(np.int64)
    owner = np.minimum(offset2bag.astype(np.int64), grad.shape[0] - 1)
    result = np.einsum("ij,ij->i", grad[owner], weight[ids]) if grad.shape[0] else \
        np.zeros(ids.shape, grad.dtype)
    return np.where(ids != padding_idx, result, 0).astype(grad.dtype)


# -- the CTC loss: torch's _ctc_loss and _ctc_loss_backward (helper nnx) ----------------------
_CTC_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ctc_lengths(value) -> np.ndarray:
    return np.asarray(value, dtype=np.int64).reshape(-1)


def ctc_targets(shape, targets, input_lengths, target_lengths, blank) -> np.ndarray:
    """torch's argument checks of the CTC loss (log_probs of `shape`, (T, N, C)); the targets
    as one padded (N, S) integer array."""
    frames, batch, classes = shape
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.size != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.size != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    labels = targets.astype(np.int64)
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {length}{_CTC_CHECKING}")
    if targets.ndim == 1:
        total = int(target_lengths.sum())
        if labels.size != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {labels.size} for argument #2 'targets'{_CTC_CHECKING}")
        ends = np.cumsum(target_lengths)
        padded = np.zeros((batch, builtins.max(int(target_lengths.max(initial=0)), 1)), np.int64)
        for n, (end, length) in enumerate(zip(ends, target_lengths, strict=True)):
            padded[n, :length] = labels[end - length:end]
        labels = padded
    else:
        longest = int(target_lengths.max(initial=0))
        if labels.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {labels.shape[1]} for argument #2 "
                               f"'targets'{_CTC_CHECKING}")
    for length in input_lengths:
        if length > frames:
            raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but "
                               f"got value {length}{_CTC_CHECKING}")
    return labels


def _ctc_primes(labels: np.ndarray, length: int, blank: int) -> np.ndarray:
    """The blank-interleaved target of one sample: blank, l1, blank, l2, ..., blank."""
    primes = np.full(2 * length + 1, blank, dtype=np.int64)
    primes[1::2] = labels[:length]
    return primes


def _ctc_log_add(*terms: np.ndarray) -> np.ndarray:
    """log Σ exp(terms), elementwise, as torch's loop: shifted by the largest (0 when all are
    -inf, so that no -inf - -inf is taken)."""
    top = np.maximum.reduce(terms)
    top = np.where(top == -np.inf, 0, top)
    return np.log(builtins.sum(np.exp(term - top) for term in terms)) + top


def _ctc_alpha(log_probs, primes, frames: int, log_alpha) -> None:
    """The forward variables of one sample (log_alpha[t, s]) over its frames."""
    width = primes.size
    log_alpha[0, 0] = log_probs[0, primes[0]]
    if width > 1:
        log_alpha[0, 1] = log_probs[0, primes[1]]
    skip = np.zeros(width, bool)
    skip[2:] = primes[2:] != primes[:-2]
    for t in range(1, frames):
        previous = log_alpha[t - 1, :width]
        one_back = np.r_[-np.inf, previous[:-1]]
        two_back = np.where(skip, np.r_[-np.inf, -np.inf, previous[:-2]][:width], -np.inf)
        log_alpha[t, :width] = _ctc_log_add(previous, one_back, two_back) + \
            log_probs[t, primes]


@silent
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """(negative log-likelihood per sample, log_alpha (N, T, 2 S + 1)) of (T, N, C)
    log-probabilities; log_alpha is -inf where torch's kernel leaves it unwritten."""
    input_lengths, target_lengths = _ctc_lengths(input_lengths), _ctc_lengths(target_lengths)
    labels = ctc_targets(log_probs.shape, targets, input_lengths, target_lengths, blank)
    frames, batch, _ = log_probs.shape
    width = 2 * int(target_lengths.max(initial=0)) + 1
    log_alpha = np.full((batch, frames, width), -np.inf, log_probs.dtype)
    nll = np.zeros(batch, log_probs.dtype)
    for n in range(batch):
        length, steps = int(target_lengths[n]), int(input_lengths[n])
        if steps == 0:
            nll[n] = 0 if length == 0 else np.inf
            continue
        primes = _ctc_primes(labels[n], length, blank)
        _ctc_alpha(log_probs[:, n], primes, steps, log_alpha[n])
        last = log_alpha[n, steps - 1]
        nll[n] = -(last[0] if length == 0 else _ctc_log_add(last[2 * length],
                                                             last[2 * length - 1]))
    return nll, log_alpha


@silent
def _ctc_loss_backward(grad_output, log_probs, targets, input_lengths, target_lengths,
                       neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    """torch's CTC gradient in log_probs: exp(log_probs) - exp(log Σ alpha beta + nll -
    log_probs) per frame and class, times the sample's grad (zero past its frames, and for an
    infinite loss with zero_infinity). It assumes log_probs are a log_softmax's (the
    logits' gradient through it is then the derivative); it is not the derivative in
    log_probs themselves."""
    input_lengths, target_lengths = _ctc_lengths(input_lengths), _ctc_lengths(target_lengths)
    labels = ctc_targets(log_probs.shape, targets, input_lengths, target_lengths, blank)
    result = np.zeros_like(log_probs)
    for n in range(log_probs.shape[1]):
        nll = neg_log_likelihood[n]
        steps, length = int(input_lengths[n]), int(target_lengths[n])
        if (zero_infinity and nll == np.inf) or steps == 0:
            continue
        primes = _ctc_primes(labels[n], length, blank)
        collected = _ctc_collected(log_probs[:, n], primes, steps, log_alpha[n])
        lp = log_probs[:steps, n]
        result[:steps, n] = (np.exp(lp) - np.exp(collected + nll - lp)) * grad_output[n]
    return result


def _ctc_collected(log_probs, primes, steps: int, log_alpha) -> np.ndarray:
    """log Σ_s alpha(t, s) beta(t, s) per frame and class (-inf where no state emits it),
    with the backward variables beta computed from the last frame down."""
    width = primes.size
    collected = np.full((steps, log_probs.shape[1]), -np.inf, log_probs.dtype)
    beta = np.full(width, -np.inf, log_probs.dtype)
    beta[-1] = log_probs[steps - 1, primes[-1]]
    if width > 1:
        beta[-2] = log_probs[steps - 1, primes[-2]]
    skip = np.zeros(width, bool)
    skip[:-2] = primes[:-2] != primes[2:]
    for t in range(steps - 1, -1, -1):
        if t < steps - 1:
            one_ahead = np.r_[beta[1:], -np.inf]
            two_ahead = np.where(skip, np.r_[beta[2:], -np.inf, -np.inf][:width], -np.inf)
            beta = _ctc_log_add(beta, one_ahead, two_ahead) + log_probs[t, primes]
        products = log_alpha[t, :width] + beta
        if t == steps - 1:  # torch's last frame holds only the two final states
            products = np.where(np.arange(width) >= width - 2, products, -np.inf)
        for s in range(width - 1, -1, -1):
            collected[t, primes[s]] = _ctc_log_add(collected[t, primes[s]], products[s])
    return collected


def _ctc_loss_Tensor(log_probs, targets, input_lengths, target_lengths, blank=0,
                     zero_infinity=False):
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)


def _ctc_loss_backward_Tensor(grad_output, log_probs, targets, input_lengths, target_lengths,
                              neg_log_likelihood, log_alpha, blank, zero_infinity=False):
    return _ctc_loss_backward(grad_output, log_probs, targets, input_lengths, target_lengths,
                              neg_log_likelihood, log_alpha, blank, zero_infinity)


# -- RMS normalisation: torch's _fused_rms_norm (helper nnx) ----------------------------------

@silent
def _fused_rms_norm(input, normalized_shape, weight, eps):
    """(input * rstd * weight, rstd), rstd = 1 / sqrt(mean(input², normalized dims) + eps),
    kept as (batch..., 1, ...); half-precision input is normalised in float32 (its rstd
    stays float32) and eps defaults to that precision's machine epsilon, as torch's."""
    start = input.ndim - len(normalized_shape)
    if start < 0 or tuple(input.shape[start:]) != tuple(normalized_shape):
        _layer_norm_axes(input, normalized_shape)  # torch's message for a wrong shape
    wide = np.float32 if input.dtype.itemsize < 4 else input.dtype
    x = input.astype(wide)
    eps = np.finfo(wide).eps if eps is None else eps
    rstd = (1 / np.sqrt(np.mean(x * x, axis=tuple(range(start, input.ndim)), keepdims=True)
                        + eps)).astype(wide)
    output = (x * rstd).astype(input.dtype)
    if weight is not None:
        output = (output * weight).astype(np.result_type(output, weight))
    return output, rstd


_VIEW_TYPE_NAMES = {"uint8": "Byte", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                    "complex32": "ComplexHalf"}


def _scalar_type_label(dtype: np.dtype) -> str:
    name = dtype.name
    return _VIEW_TYPE_NAMES.get(name) or _TYPE_NAMES.get(name, name)


def view_dtype(self, dtype):
    """self's bytes read as `dtype`: the last dimension scaled by the ratio of the element
    sizes, with torch's checks (in its order) where they differ."""
    old, new = self.itemsize, dtype.itemsize
    if old == new:
        return self.view(dtype)
    why = (f"to view {_scalar_type_label(self.dtype)} as {_scalar_type_label(dtype)} "
           "(different element sizes)")
    if self.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {why}")
    memory, start = storage_bytes(self)
    strides = [step // old for step in self.strides] if self.size else \
        [math.prod(builtins.max(n, 1) for n in self.shape[d + 1:]) for d in range(self.ndim)]
    if old > new:
        ratio = old // new
        _check_view_stride(self, strides, why)
        shape = (*self.shape[:-1], self.shape[-1] * ratio)
    else:
        ratio = new // old
        _check_view_divisible(self, strides, start // old, ratio, why)
        shape = (*self.shape[:-1], self.shape[-1] // ratio)
    byte_strides = (*self.strides[:-1], new)
    return np.ndarray(shape, dtype, buffer=memory, offset=start, strides=byte_strides) \
        if builtins.all(shape) else np.empty(shape, dtype)


def _check_view_stride(self, strides, why) -> None:
    if self.shape[-1] != 1 and strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {why}, but got {strides[-1]}")


def _check_view_divisible(self, strides, offset, ratio, why) -> None:
    if self.shape[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {why}, but got "
                           f"{self.shape[-1]}")
    if offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {why}, but "
                           f"got {offset}")
    _check_view_stride(self, strides, why)
    for dim, step in enumerate(strides[:-1]):
        if step % ratio:
            raise RuntimeError(f"self.stride({dim}) must be divisible by {ratio} {why}, but "
                               f"got {step}")


@silent
def hash_tensor(self, dim=(), keepdim=False, mode=0):
    """The xor of the elements' 64-bit patterns (floats as float64, integers as int64), as a
    uint64 per reduced slice: torch's mode 0, its only one."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if self.dtype.kind == "c":
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for "
                                  f"'{_scalar_type_label(self.dtype)}'")
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims and self.size == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    axes = _axes(dims, self.ndim)
    for axis in axes:
        if self.ndim and self.shape[axis] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {axis} to have non-zero "
                             "size.")
    floating = self.dtype.kind == "f" or self.dtype == _BFLOAT16
    wide = self.astype(np.float64 if floating else np.int64).view(np.uint64)
    return np.asarray(np.bitwise_xor.reduce(wide, axis=axes, keepdims=keepdim))


def _new_zeros_with_same_feature_meta(self, other, self_num_batch_dims=0):
    """Zeros laid out as `other` is (its sizes, strides, storage offset and storage size),
    behind self's first self_num_batch_dims sizes, each batch slice a storage of its own."""
    memory, start = storage_bytes(other)
    itemsize = other.itemsize
    storage = memory.size // itemsize
    strides = [step // itemsize for step in other.strides]
    batch = list(self.shape[:self_num_batch_dims])
    batch_strides = [0] * len(batch)
    for i in range(len(batch) - 1, -1, -1):
        batch_strides[i] = storage
        storage *= batch[i]
    zeros = np.zeros(builtins.max(storage, 1) * itemsize, np.uint8)
    return np.ndarray((*batch, *other.shape), other.dtype, buffer=zeros, offset=start,
                      strides=tuple(s * itemsize for s in (*batch_strides, *strides)))


def _efficientzerotensor(size, dtype=None):
    """Zeros of `size` (torch's is a ZeroTensor, without memory; gradgen's is plain zeros)."""
    size = tuple(size)
    for length in size:
        if length < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                               f"{list(size)}")
    return np.zeros(size, _DEFAULT_FLOAT if dtype is None else dtype)
