"""Tensor factories with PyTorch's names and defaults (float32 unless told otherwise).

A `device=` must name the CPU, the only device gradgen has (runtime/devices.py).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from generated.signatures import SIGNATURES
from runtime import cpu_math, devices, dtypes, memory_formats
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Size, Tensor
from runtime.arguments import Parser, is_index, type_name
from runtime.kernels import cast, check_fits, dtype_range, quietly

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye", "arange",
    "linspace", "logspace", "zeros_like", "ones_like", "full_like", "empty_like",
]


def _numpy_dtype(dtype: dtypes.dtype | None) -> np.dtype:
    return (dtype or dtypes.get_default_dtype()).numpy


def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    result = Tensor._make(array, None)
    if requires_grad:
        if array.dtype.kind not in "fcV":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        result.requires_grad_(True)
    return result


# -- reading the arguments a factory's parser bound (runtime/arguments.py) ---------------------

# Python's own types that torch accepts as a dtype: the dtype each one means.
_PYTHON_DTYPES = {int: dtypes.int64, float: dtypes.float64, bool: dtypes.bool_}
def _unpack_int(function: str, param: str, value: Any, position: int) -> int:
    """One item of an int list: an int (a bool counts, after the first), a numpy integer,
    an integer tensor of one element, or anything with __index__."""
    if type(value) is int:
        number = value
    elif isinstance(value, Tensor) and value._data.dtype.kind in "iu" and value._data.size == 1:
        number = int(value._data.item())
    elif isinstance(value, Tensor) and value._data.dtype.kind == "b":
        raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    elif isinstance(value, int) or (is_index(value) and not isinstance(value, Tensor)):
        number = operator.index(value)
    else:
        raise TypeError(f"{function}(): argument '{param}' failed to unpack the object at pos "
                        f"{position} with error \"type must be tuple of ints,but got "
                        f"{type_name(value)}\"")
    if not -(2**63) <= number < 2**63:
        raise TypeError(f"{function}(): argument '{param}' failed to unpack the object at pos "
                        f"{position} with error \"Overflow when unpacking long long\"")
    return number


def bound_symint(value: Any) -> int:
    """A bound SymInt (eye's n, randint's high) as a Python int."""
    if isinstance(value, Tensor):
        return int(value._data.item())
    return operator.index(value)


def bound_int64(value: Any) -> int:
    """A bound int64_t (linspace's steps) as a Python int."""
    return int(value._data.item()) if isinstance(value, Tensor) else int(value)


def bound_int_list(function: str, param: str, values: Any) -> tuple[int, ...]:
    """A bound int list as a tuple of Python ints."""
    return tuple(_unpack_int(function, param, v, i + 1) for i, v in enumerate(values))


def bound_shape(function: str, values: Any, message: str = "negative", out: Any = None
          ) -> tuple[int, ...]:
    """A bound `size` as a shape, each length checked non-negative with the message of
    the factory's kernel: "negative" (empty's, which most factories share) or "zeros".
    With out=, most factories resize out first, whose element count overflows then
    (torch's message; "numel")."""
    sizes = bound_int_list(function, "size", values)
    for length in sizes:
        if length < 0:
            if message == "numel" and out is not None:
                raise RuntimeError("numel: integer multiplication overflow")
            if message == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {length}: {list(sizes)}")
    return sizes


def quick_shape(size: tuple) -> tuple[int, ...] | None:
    """The shape of `zeros(2, 3)` or `zeros((2, 3))` when every length is a plain
    non-negative int (the common call, checked here without the parser), else None."""
    if len(size) == 1 and type(size[0]) in (tuple, list, Size):
        size = size[0]
    for length in size:
        if type(length) is not int or length < 0:
            return None
    return tuple(size)


def bound_scalar(value: Any) -> Any:
    """A bound Scalar as a Python number: a 0-dim tensor gives its value, a numpy integer
    an int, another numpy scalar a float (torch reads those as double)."""
    if isinstance(value, Tensor):
        return value._data.item()
    if isinstance(value, np.generic):
        if isinstance(value, np.integer):
            return int(value)
        return complex(value) if isinstance(value, np.complexfloating) else float(value)
    return value


def dtype_of(value: Any) -> dtypes.dtype | None:
    """A bound dtype: a torch.dtype, or the one Python's int, float or bool stands for."""
    if value is None or isinstance(value, dtypes.dtype):
        return value
    if value is complex:
        return dtypes.complex128
    return _PYTHON_DTYPES[value]


def device_of(value: Any) -> None:
    """A bound device: it must be the CPU (runtime/devices.py raises torch's error)."""
    if value is not None:
        devices.to_cpu(value)


_QUICK_OPTIONS = frozenset(("dtype", "requires_grad", "device"))
def quick_options(options: dict) -> tuple[dtypes.dtype | None, bool] | None:
    """(dtype, requires_grad) of the usual keywords when each has its usual type, checked
    here without the parser (the device checked too: it must be the CPU); else None."""
    if not options:
        return None, False
    if len(options) == 1 and type(options.get("dtype")) is dtypes.dtype:  # the usual one
        return options["dtype"], False
    if not options.keys() <= _QUICK_OPTIONS:
        return None
    dtype = options.get("dtype")
    requires_grad = options.get("requires_grad", False)
    device = options.get("device")
    if (dtype is not None and type(dtype) is not dtypes.dtype or type(requires_grad) is not bool
            or device is not None and type(device) not in (str, devices.device)):
        return None
    if device is not None:
        devices.to_cpu(device)
    return dtype, requires_grad


def options_of(bound: dict) -> tuple[dtypes.dtype | None, bool]:
    """(dtype, requires_grad) of a parsed call, its device checked to be the CPU."""
    device_of(bound.get("device"))
    return dtype_of(bound.get("dtype")), bool(bound.get("requires_grad"))


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def checked_fill_value(value: Any, numpy_dtype: np.dtype) -> Any:
    """A fill value (full's, full_like's, new_full's) converted to the dtype as torch's
    checked conversion does (kernels.check_fits: a value the dtype cannot hold is an error):
    a negative integer wraps around into an unsigned dtype (-1 is 255 in uint8), and an
    infinity or NaN stays one in a floating dtype."""
    if type(value) is float and numpy_dtype.itemsize >= 4 and numpy_dtype.kind in "fV" and \
            abs(value) <= _FLOAT32_MAX:  # the usual call: fits float32 and float64
        return value
    check_fits(value, numpy_dtype)
    if isinstance(value, bool) or numpy_dtype.kind in "bc":
        return value
    if numpy_dtype.kind == "u" and isinstance(value, int) and value < 0:
        return value % (dtype_range(numpy_dtype)[1] + 1)
    if numpy_dtype.itemsize == 2 and numpy_dtype.kind in "fV":  # float16, bfloat16: torch
        return quietly(cast, np.array(value, np.float64), numpy_dtype)[()]  # rounds twice
    return value


# -- torch.tensor, torch.as_tensor ----------------------------------------------------------------

_NO_OPTIONS = (None, False)  # (dtype, requires_grad) of a call with no keywords
_TENSOR = Parser(SIGNATURES["tensor"])
_AS_TENSOR = Parser(SIGNATURES["as_tensor"])


def _infer(data: Any, dtype: dtypes.dtype | None = None) -> np.ndarray:
    """The numpy array of `data`, with torch's dtype inference.

    Python floats become `dtype` when one is asked for (so float64 data keeps its
    precision), else the default dtype. Data numpy cannot make a number array of (ragged
    lists, None, strings) gets torch's own message (`_check_data`)."""
    if isinstance(data, np.generic) and data.dtype.kind in "biufcV":
        data = np.asarray(data)  # a numpy scalar keeps its dtype, as an array does
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "fcV" and data.dtype.itemsize > 8 * (1 + (data.dtype.kind == "c")):
            raise TypeError(f"gradgen has no dtype for numpy {data.dtype}")
        return np.array(data, dtype=np.int64 if data.dtype.kind in "iu" and data.dtype not in (
            np.int32, np.int64, np.uint8, np.int8, np.int16) else data.dtype)
    try:
        array = np.array(data)
    except ValueError:  # ragged: numpy refuses it
        array = None
    if array is None or array.dtype.kind not in "biufcV" or array.dtype == _UINT64:
        _refuse(data, dtype)
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind in "fV":
        if dtype is not None and dtype.numpy.kind not in "fV":
            return array  # as doubles: tensor() casts them to the dtype, checked
        # (quietly: 1e40 in float32 is inf, as in torch, without numpy's overflow warning)
        return quietly(cast, array,
                       (dtype if dtype is not None else dtypes.get_default_dtype()).numpy)
    if array.dtype.kind == "c":  # Python complex numbers: the default complex dtype
        _check_complex_fits(data, dtype)
        if dtype is not None:
            return array  # as complex128: tensor() casts them to the dtype
        return array.astype(dtypes.get_default_complex_dtype().numpy)
    raise TypeError(f"tensor(): unsupported data of numpy dtype {array.dtype}")


_UINT64 = np.dtype(np.uint64)


def _is_sequence(data: Any) -> bool:
    return isinstance(data, Sequence | np.ndarray | Tensor) and not isinstance(data, str)


def _data_shape(data: Any) -> list[int]:
    """The shape torch infers for nested data: the lengths along the first items."""
    sizes = []
    while _is_sequence(data):
        sizes.append(len(data))
        if not len(data):
            break
        data = data[0]
    return sizes


def _check_items(data: Any) -> None:
    """torch's first pass over nested data, inferring its dtype: a string, or an item that
    is neither a number nor a sequence, stops it."""
    if isinstance(data, str | bytes):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if _is_sequence(data):
        for item in data:
            _check_items(item)
    elif not isinstance(data, int | float | complex | np.generic):
        raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _check_complex_fits(data: Any, dtype: dtypes.dtype | None) -> None:
    """Python complex numbers for a real dtype asked for: torch refuses them."""
    if dtype is not None and dtype.numpy.kind != "c":
        _check_data(data, _data_shape(data), 0, dtype)


def _refuse(data: Any, dtype: dtypes.dtype | None) -> None:
    """Data numpy made no number array of: torch's error, in the order of its passes
    (the shape, the dtype inferred when none is asked for, the items written)."""
    _check_first_items(data)
    if dtype is None:
        _check_items(data)
    _check_data(data, _data_shape(data), 0, dtype)
    raise ValueError("Overflow when unpacking long long")  # ints beyond int64: numpy
    # made them uint64 or Python objects


def _check_first_items(data: Any) -> None:
    """torch infers the shape along the first items; a string there is a sequence of
    strings without end."""
    depth = 0
    while _is_sequence(data) and len(data):
        data, depth = data[0], depth + 1
    if depth and isinstance(data, str):
        raise ValueError("too many dimensions 'str'")


def _check_item(item: Any, dtype: dtypes.dtype) -> None:
    """An item torch cannot write into a tensor of `dtype` (asked for: nothing inferred)."""
    kind = dtype.numpy.kind
    if isinstance(item, bool | int | float | np.generic) or kind in "bc" and isinstance(
            item, complex):
        return  # (a bool tensor takes a complex number too: its truth; numpy's scalars
        # are converted as numpy converts them)
    if kind in "fV":
        raise TypeError(f"must be real number, not {type(item).__name__}")
    if kind != "c":
        raise TypeError(f"'{type(item).__name__}' object cannot be interpreted as an integer")


def _check_data(data: Any, sizes: list[int], dim: int, dtype: Any = None) -> None:
    """torch's second pass, filling the tensor from nested data of a known dtype: it
    stops at a sequence of another length than the first one there, where the nesting
    differs, or at an item the dtype asked for cannot hold."""
    if dim == len(sizes):
        if _is_sequence(data):
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an "
                            "integer")
        if dtype is not None:
            _check_item(data, dtype)
        return
    if not _is_sequence(data):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(data)})")
    for item in data:
        _check_data(item, sizes, dim + 1, dtype)


def tensor(*args: Any, **options: Any) -> Tensor:
    """torch.tensor(data, *, dtype=None, device=None, requires_grad=False): a new leaf
    holding a copy of `data` (nested lists, numbers, arrays or a Tensor)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tensor, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    quick = (_NO_OPTIONS if not options else quick_options(options)) if len(args) == 1 \
        else None
    if quick is None:
        _, bound = _TENSOR.parse(args, options)
        data, (dtype, requires_grad) = bound["data"], options_of(bound)
    else:
        data, (dtype, requires_grad) = args[0], quick
    if isinstance(data, Tensor):
        array = data._data.copy()
    elif isinstance(data, list | tuple) and data and builtins.any(
            isinstance(d, Tensor) for d in data):
        array = np.array([d._data if isinstance(d, Tensor) else d for d in data])
        array = _infer(array, dtype)
    else:
        array = _infer(data, dtype)
    if dtype is not None:
        array = _checked_cast(array, dtype.numpy)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    return _finish(array, requires_grad)


def _checked_cast(array: np.ndarray, numpy_dtype: np.dtype) -> np.ndarray:
    """tensor()'s data cast to an integer dtype as torch casts each item: a value the dtype
    cannot hold is an error (a negative integer wraps around into uint8); a floating
    dtype takes anything (an overflow becomes an infinity)."""
    if numpy_dtype.kind in "iu" and array.size and array.dtype.kind in "iufV":
        info = np.iinfo(numpy_dtype)
        lowest = -int(info.max) if numpy_dtype.kind == "u" and array.dtype.kind not in "fV" \
            else int(info.min)
        if not (np.all(array >= lowest) and np.all(array <= info.max)):  # NaN fails too
            raise RuntimeError(f"value cannot be converted to type {numpy_dtype.name} "
                               "without overflow")
    return cast(array, numpy_dtype)


def as_tensor(*args: Any, **options: Any) -> Tensor:
    """torch.as_tensor(data, *, dtype=None, device=None): `data` itself when it is a
    Tensor of that dtype, else a new tensor of it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(as_tensor, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    quick = quick_options(options) if len(args) == 1 and "requires_grad" not in options \
        else None
    if quick is None:
        _, bound = _AS_TENSOR.parse(args, options)
        data, (dtype, _) = bound["data"], options_of(bound)
    else:
        data, (dtype, _) = args[0], quick
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing `array`'s memory."""
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array, None)


# -- zeros, ones, empty, full -----------------------------------------------------------------

_ZEROS = Parser(SIGNATURES["zeros"])
_ONES = Parser(SIGNATURES["ones"])
_EMPTY = Parser(SIGNATURES["empty"])
_FULL = Parser(SIGNATURES["full"])


def _sized(parser: Parser, size: tuple, options: dict, message: str = "negative"
           ) -> tuple[tuple[int, ...], dtypes.dtype | None, bool, Any]:
    """(shape, dtype, requires_grad, out) of a factory called with a size: the usual
    call checked quickly, any other through the parser, then the lengths checked with the
    message of the factory's kernel (see bound_shape)."""
    shape = quick_shape(size) if size else None
    if shape is not None:
        quick = quick_options(options)
        if quick is not None:
            return shape, quick[0], quick[1], None
    _, bound = parser.parse(size, options)
    dtype, requires_grad = options_of(bound)
    if bound["out"] is not None and parser.name != "empty":
        message = "numel"
    return (bound_shape(parser.name, bound["size"], message, bound["out"]), dtype,
            requires_grad, bound["out"])


def zeros(*size: Any, **options: Any) -> Tensor:
    """torch.zeros(*size, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(zeros, (*size,), {**options})
        if heard is not _modes.PASS:
            return heard
    shape, dtype, requires_grad, out = _sized(_ZEROS, size, options, "zeros")
    if out is not None:  # torch's out= form (runtime/out.py)
        return _out.factory("zeros", zeros, (shape,), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    return _finish(np.zeros(shape, _numpy_dtype(dtype)), requires_grad)


def ones(*size: Any, **options: Any) -> Tensor:
    """torch.ones(*size, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(ones, (*size,), {**options})
        if heard is not _modes.PASS:
            return heard
    shape, dtype, requires_grad, out = _sized(_ONES, size, options)
    if out is not None:
        return _out.factory("ones", ones, (shape,), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    return _finish(np.ones(shape, _numpy_dtype(dtype)), requires_grad)


def empty(*size: Any, **options: Any) -> Tensor:
    """torch.empty(*size, *, memory_format=None, out=None, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(empty, (*size,), {**options})
        if heard is not _modes.PASS:
            return heard
    shape, dtype, requires_grad, out = _sized(_EMPTY, size, options)
    if out is not None:
        return _out.factory("empty", empty, (shape,), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    return _finish(np.empty(shape, _numpy_dtype(dtype)), requires_grad)


def _fill_dtype(value: Any, dtype: dtypes.dtype | None) -> np.dtype:
    """full's dtype: the one asked for, else the fill value's kind (bool, int64, or the
    default floating dtype)."""
    if dtype is not None:
        return dtype.numpy
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, complex):
        return dtypes.get_default_complex_dtype().numpy
    return dtypes.get_default_dtype().numpy


_PLAIN_SIZES = (tuple, list, Size)
_PLAIN_NUMBERS = (float, int, bool)


def _full_arguments(parser: Parser, args: tuple, options: dict
                    ) -> tuple[tuple[int, ...], Any, dtypes.dtype | None, bool, Any]:
    """(shape, fill value, dtype, requires_grad, out) of full(size, fill_value, ...) or
    new_full: the usual call checked quickly, any other through the parser."""
    if len(args) == 2 and type(args[0]) in _PLAIN_SIZES and type(args[1]) in _PLAIN_NUMBERS:
        shape = quick_shape(args[:1])
        quick = (_NO_OPTIONS if not options else quick_options(options)) if shape is not None \
            else None
        if quick is not None:
            return shape, args[1], quick[0], quick[1], None
    _, bound = parser.parse(args, options)
    dtype, requires_grad = options_of(bound)
    return (bound_shape(parser.name, bound["size"], "numel", bound["out"]),
            bound_scalar(bound["fill_value"]), dtype, requires_grad, bound["out"])


def full(*args: Any, **options: Any) -> Tensor:
    """torch.full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(full, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    shape, value, dtype, requires_grad, out = _full_arguments(_FULL, args, options)
    if out is not None:
        return _out.factory("full", full, (shape, value), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    numpy_dtype = _fill_dtype(value, dtype)
    return _finish(np.full(shape, checked_fill_value(value, numpy_dtype), numpy_dtype),
                   requires_grad)


# -- eye, arange, linspace, logspace ----------------------------------------------------------

_EYE = Parser(SIGNATURES["eye"])


def eye(*args: Any, **options: Any) -> Tensor:
    """torch.eye(n, m=n, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False): ones on the diagonal of an n x m matrix."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(eye, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    quick = (_NO_OPTIONS if not options else quick_options(options)) if 1 <= len(args) <= 2 \
        and type(args[0]) is int and type(args[-1]) is int else None
    if quick is not None:
        (dtype, requires_grad), out = quick, None
        n, m = args[0], args[-1]
    else:
        _, bound = _EYE.parse(args, options)
        dtype, requires_grad = options_of(bound)
        n, out = bound_symint(bound["n"]), bound["out"]
        m = n if bound.get("m") is None else bound_symint(bound["m"])
    if n < 0 or m < 0:
        name, value = ("n", n) if n < 0 else ("m", m)
        raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    if out is not None:
        return _out.factory("eye", eye, (n, m), {"dtype": dtype,
                                                 "requires_grad": requires_grad}, out)
    return _finish(np.eye(n, m, dtype=_numpy_dtype(dtype)), requires_grad)


def _truncate(value: Any) -> int:
    """C's conversion of a double to int64: toward zero."""
    return int(value)


_ARANGE = Parser(SIGNATURES["arange"])


def _all_plain(args: tuple) -> bool:
    """Whether every argument is a plain Python number (arange's and linspace's usual call)."""
    for value in args:
        if type(value) not in _PLAIN_NUMBERS:
            return False
    return True


def _not_for_bool(kernel: str, dtype: dtypes.dtype | None) -> None:
    if dtype is dtypes.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def arange(*args: Any, **options: Any) -> Tensor:
    """torch.arange(end), arange(start, end, step=1), each with *, out=None, dtype=None,
    layout=None, device=None, pin_memory=False, requires_grad=False: the values
    start + i * step below `end` (see _arange_values)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(arange, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    count = len(args)
    quick = quick_options(options) if count == 1 and type(args[0]) in _PLAIN_NUMBERS or \
        1 < count <= 3 and _all_plain(args) else None
    if quick is not None:
        (dtype, requires_grad), out = quick, None
        start, end, step = (0, args[0], 1) if count == 1 else (*args, 1)[:3]
    else:
        _, bound = _ARANGE.parse(args, options)
        dtype, requires_grad = options_of(bound)
        start, end, step = (bound_scalar(bound.get(name, default)) for name, default in
                            (("start", 0), ("end", None), ("step", 1)))
        out = bound.get("out")
    if out is not None:
        return _out.factory("arange", _arange_values, (start, end, step), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    _not_for_bool("arange_cpu", dtype)
    return _arange_values(start, end, step, dtype=dtype, requires_grad=requires_grad)


def _real(value: Any) -> Any:
    """A range bound as torch reads it: a bool is an int; a complex one has no double."""
    if isinstance(value, complex):
        raise RuntimeError("value cannot be converted to type double without overflow")
    return int(value) if isinstance(value, bool) else value


def _arange_values(start: Any, end: Any, step: Any, *, dtype: dtypes.dtype | None,
                   requires_grad: bool) -> Tensor:
    """arange's values, as torch's kernel counts them.

    For int64 the bounds and step are first cut to integers (toward zero) and the length is
    counted in integers; otherwise it is ceil((end - start) / step) in double. Integer
    values are trunc(start) + i * trunc(step); floating ones start + i * step in double,
    then rounded to the dtype (torch's vectorised kernel splits the fused multiply-add per
    SIMD lane, so a float32 value can differ from it in the last place)."""
    if type(start) is not int or type(end) is not int or type(step) is not int:
        start, end, step = (_real(v) for v in (start, end, step))
        integral = isinstance(start, int) and isinstance(end, int) and isinstance(step, int)
    else:
        integral = True
    numpy_dtype = dtype.numpy if dtype is not None else (
        np.dtype(np.int64) if integral else dtypes.get_default_dtype().numpy)
    start, end, step = _arange_bounds(start, end, step, numpy_dtype == np.int64)
    if numpy_dtype == np.int64:
        values = start + step * np.arange(_int64_count(start, end, step), dtype=np.int64)
    else:
        size = builtins.max(math.ceil((float(end) - float(start)) / float(step)), 0)
        if numpy_dtype.kind in "iub":  # the other integer dtypes count in int64
            values = _truncate(start) + _truncate(step) * np.arange(size, dtype=np.int64)
        else:  # start + step * i as one fused multiply-add, in double
            values = cpu_math.fma64(float(step), np.arange(size, dtype=np.float64),
                                    float(start))
    return _finish(values.astype(numpy_dtype), requires_grad)


def _arange_bounds(start: Any, end: Any, step: Any, int64: bool) -> tuple[Any, Any, Any]:
    """arange's bounds and step checked as torch checks them; for int64 (which counts in
    int64) first cut to integers toward zero."""
    if int64:
        if step != 0 and np.isfinite(step) and _truncate(step) == 0:
            raise ValueError("step must be nonzero")  # PyTorch's Python binding says so
        start, end, step = (_truncate(v) if np.isfinite(v) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step > 0 and end < start or step < 0 and end > start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return start, end, step


def _int64_count(start: int, end: int, step: int) -> int:
    """How many int64 values arange(start, end, step) has, counted in integers."""
    sign = 1 if step > 0 else -1
    span = end - start + step - sign
    size = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    return builtins.max(size, 0)


# linspace's and logspace's four signatures: start and end each a Tensor or a Number.
_LINSPACE = Parser(SIGNATURES["linspace"])
_LOGSPACE = Parser(SIGNATURES["logspace"])


def _spaced_arguments(parser: Parser, args: tuple, options: dict, most: int) -> tuple:
    """(start, end, steps, base, dtype, requires_grad, out) of linspace or logspace (which
    take at most `most` positional arguments), the steps checked and 0-dim Tensor bounds
    read as numbers."""
    quick = quick_options(options) if 3 <= len(args) <= most and type(args[2]) is int and \
        _all_plain(args) else None
    if quick is not None:
        (dtype, requires_grad), out = quick, None
        start, end, steps, base = (*args, 10.0)[:4]
    else:
        index, bound = parser.parse(args, options)
        start, end = bound["start"], bound["end"]
        _check_0_dim(parser.name, index, start, end)
        dtype, requires_grad = options_of(bound)
        start, end, steps = bound_scalar(start), bound_scalar(end), bound_int64(bound["steps"])
        base, out = bound_scalar(bound.get("base", 10.0)), bound["out"]
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if isinstance(start, complex) or isinstance(end, complex):
        raise TypeError("gradgen has no complex dtypes: complex bounds need one")
    return start, end, steps, base, dtype, requires_grad, out


def _check_0_dim(name: str, overload: int, start: Any, end: Any) -> None:
    """The Tensor bounds of linspace / logspace must be 0-dim; the message names those the
    overload takes as Tensors (0: both, 1: end, 2: start)."""
    bounds = [("start", start), ("end", end)][{0: 0, 1: 1, 2: 0, 3: 2}[overload]:
                                             {0: 2, 1: 2, 2: 1, 3: 2}[overload]]
    if builtins.any(value.ndim != 0 for _, value in bounds):
        got = " and ".join(f"{which} with {value.ndim} dimension(s)" for which, value in bounds)
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but "
                           f"got {got}.")


def linspace(*args: Any, **options: Any) -> Tensor:
    """torch.linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False) (see _linspace_values)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(linspace, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    start, end, steps, _, dtype, requires_grad, out = _spaced_arguments(
        _LINSPACE, args, options, 3)
    if out is not None:
        return _out.factory("linspace", _linspace_values, (start, end, steps), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    _not_for_bool("linspace_cpu", dtype)
    return _linspace_values(start, end, steps, dtype=dtype, requires_grad=requires_grad)


def _linspace_values(start: Any, end: Any, steps: int, *, dtype: dtypes.dtype | None,
                     requires_grad: bool) -> Tensor:
    """linspace as torch's CPU kernel computes it: the bounds cast to the dtype, the
    step (end - start) / (steps - 1) in that dtype (double for integers), the first half
    counted up from start and the second half down from end, each value one fused
    multiply-add."""
    numpy_dtype = _numpy_dtype(dtype)
    if isinstance(start, bool | complex) or isinstance(end, bool | complex):
        start, end = _real(start), _real(end)
    integral = numpy_dtype.kind in "iub"
    if not integral:
        check_fits(start, numpy_dtype)
        check_fits(end, numpy_dtype)
    work = np.dtype(np.float64) if integral else numpy_dtype
    first = np.array(_truncate(start) if integral else start).astype(work)
    last = np.array(_truncate(end) if integral else end).astype(work)
    if steps == 1:
        return _finish(first.reshape(1).astype(numpy_dtype), requires_grad)
    step = ((last - first) / work.type(steps - 1)).astype(work) if steps > 1 else work.type(0)
    index = np.arange(steps).astype(work)
    halfway = steps // 2
    fma = cpu_math.fma32 if work == np.float32 else cpu_math.fma64
    values = np.where(np.arange(steps) < halfway, fma(step, index, first),
                      fma(-step, work.type(steps - 1) - index, last)).astype(work)
    if integral:
        values = np.trunc(values)
    return _finish(values.astype(numpy_dtype), requires_grad)


def logspace(*args: Any, **options: Any) -> Tensor:
    """torch.logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False): base ** linspace(start, end, steps),
    as torch's kernel computes it (see _logspace_values)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(logspace, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    start, end, steps, base, dtype, requires_grad, out = _spaced_arguments(
        _LOGSPACE, args, options, 4)
    if out is not None:
        return _out.factory("logspace", _logspace_values, (start, end, steps, base), {
            "dtype": dtype, "requires_grad": requires_grad}, out)
    _not_for_bool("logspace_cpu", dtype)
    return _logspace_values(start, end, steps, base, dtype=dtype, requires_grad=requires_grad)


def _logspace_values(start: Any, end: Any, steps: int, base: float, *,
                     dtype: dtypes.dtype | None, requires_grad: bool) -> Tensor:
    """torch's CPU logspace: the bounds cast to the dtype, the step (end - start) /
    (steps - 1) in double, the exponents of the first half counted up from start and of
    the second half down from end, each power taken in double, then cast to the dtype."""
    numpy_dtype = _numpy_dtype(dtype)
    if isinstance(start, bool | complex) or isinstance(end, bool | complex):
        start, end = _real(start), _real(end)
    integral = numpy_dtype.kind in "iub"
    if not integral:
        check_fits(start, numpy_dtype)
        check_fits(end, numpy_dtype)
    first = float(np.array(_truncate(start) if integral else start).astype(numpy_dtype))
    last = float(np.array(_truncate(end) if integral else end).astype(numpy_dtype))
    index = np.arange(steps, dtype=np.float64)
    if steps == 1:
        exponents = np.array([first])
    else:
        step = float(np.array(last - first).astype(numpy_dtype)) / (steps - 1)
        exponents = np.where(index < steps // 2, cpu_math.fma64(step, index, first),
                             cpu_math.fma64(-step, steps - 1 - index, last))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        values = np.power(float(base), exponents)
        return _finish(values.astype(numpy_dtype), requires_grad)


# -- *_like --------------------------------------------------------------------------------------

_ZEROS_LIKE = Parser(SIGNATURES["zeros_like"])
_ONES_LIKE = Parser(SIGNATURES["ones_like"])
_EMPTY_LIKE = Parser(SIGNATURES["empty_like"])
_FULL_LIKE = Parser(SIGNATURES["full_like"])


_NOTHING: dict = {}  # no other arguments (never written to)


def like_arguments(parser: Parser, args: tuple, options: dict
                   ) -> tuple[Tensor, dtypes.dtype | None, bool, dict]:
    """(input, dtype, requires_grad, the other arguments by name) of a `*_like` factory:
    `f(input)` with the usual keywords checked quickly, any other call through the
    parser (random_ops uses it too)."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        if not options:
            return args[0], None, False, _NOTHING
        quick = quick_options(options)
        if quick is not None:
            return args[0], quick[0], quick[1], _NOTHING
    _, bound = parser.parse(args, options)
    dtype, requires_grad = options_of(bound)
    return bound["input"], dtype, requires_grad, bound


def _like_call(parser: Any, args: tuple, options: dict) -> tuple[Tensor, Any, bool]:
    """(input, dtype, requires_grad) of a `*_like` call: the usual one (`zeros_like(x)`)
    without the parser, any other through it."""
    if len(args) == 1 and not options and isinstance(args[0], Tensor):
        return args[0], None, False
    return like_arguments(parser, args, options)[:3]


def _like(input: Tensor, dtype: dtypes.dtype | None) -> tuple[tuple[int, ...], np.dtype]:
    return input.shape, (dtype.numpy if dtype is not None else input._data.dtype)


def _formatted(array: np.ndarray, input: Tensor, options: dict) -> np.ndarray:
    """A `*_like` result in the memory format asked for (memory_format=channels_last & co;
    without one, gradgen's row-major array)."""
    format_ = options.get("memory_format") if options else None
    if format_ is None:
        return array
    memory_formats.check_rank(format_, input.ndim)
    return memory_formats.laid_out(array, memory_formats.strides_for(format_, input._data))


def zeros_like(*args: Any, **options: Any) -> Tensor:
    """torch.zeros_like(input, *, memory_format=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(zeros_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    input, dtype, requires_grad = _like_call(_ZEROS_LIKE, args, options)
    return _finish(_formatted(np.zeros(*_like(input, dtype)), input, options), requires_grad)


def ones_like(*args: Any, **options: Any) -> Tensor:
    """torch.ones_like(input, *, memory_format=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(ones_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    input, dtype, requires_grad = _like_call(_ONES_LIKE, args, options)
    return _finish(_formatted(np.ones(*_like(input, dtype)), input, options), requires_grad)


def empty_like(*args: Any, **options: Any) -> Tensor:
    """torch.empty_like(input, *, memory_format=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(empty_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    input, dtype, requires_grad = _like_call(_EMPTY_LIKE, args, options)
    return _finish(_formatted(np.empty(*_like(input, dtype)), input, options), requires_grad)


def full_like(*args: Any, **options: Any) -> Tensor:
    """torch.full_like(input, fill_value, *, memory_format=None, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(full_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    if len(args) == 2 and isinstance(args[0], Tensor) and type(args[1]) in _PLAIN_NUMBERS \
            and (quick := quick_options(options)) is not None:
        input, value, (dtype, requires_grad) = args[0], args[1], quick
    else:
        _, bound = _FULL_LIKE.parse(args, options)
        dtype, requires_grad = options_of(bound)
        input, value = bound["input"], bound_scalar(bound["fill_value"])
    shape, numpy_dtype = _like(input, dtype)
    filled = np.full(shape, checked_fill_value(value, numpy_dtype), numpy_dtype)
    return _finish(_formatted(filled, input, options), requires_grad)


# -- Tensor.new_zeros, new_ones, new_empty, new_full --------------------------------------------

_NEW_ZEROS = Parser(SIGNATURES["new_zeros"])
_NEW_ONES = Parser(SIGNATURES["new_ones"])
_NEW_EMPTY = Parser(SIGNATURES["new_empty"])
_NEW_FULL = Parser(SIGNATURES["new_full"])


class FactoryMethods:
    """The `new_*` Tensor methods (runtime/methods.py sets them on Tensor): a new leaf of
    this tensor's dtype unless told otherwise, as RNN code makes its first hidden state
    from a parameter. Their arguments are parsed as the factories' are, under their own
    names (torch's messages say `new_zeros()`)."""

    __slots__ = ()

    def new_zeros(self, *size: Any, **options: Any) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FactoryMethods.new_zeros, (self, *size), {**options})
            if heard is not _modes.PASS:
                return heard
        shape, dtype, requires_grad, _ = _sized(_NEW_ZEROS, size, options)
        return _finish(np.zeros(shape, (dtype or self.dtype).numpy), requires_grad)

    def new_ones(self, *size: Any, **options: Any) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FactoryMethods.new_ones, (self, *size), {**options})
            if heard is not _modes.PASS:
                return heard
        shape, dtype, requires_grad, _ = _sized(_NEW_ONES, size, options)
        return _finish(np.ones(shape, (dtype or self.dtype).numpy), requires_grad)

    def new_empty(self, *size: Any, **options: Any) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FactoryMethods.new_empty, (self, *size), {**options})
            if heard is not _modes.PASS:
                return heard
        shape, dtype, requires_grad, _ = _sized(_NEW_EMPTY, size, options)
        return _finish(np.empty(shape, (dtype or self.dtype).numpy), requires_grad)

    def new_full(self, *args: Any, **options: Any) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FactoryMethods.new_full, (self, *args), {**options})
            if heard is not _modes.PASS:
                return heard
        shape, value, dtype, requires_grad, _ = _full_arguments(_NEW_FULL, args, options)
        numpy_dtype = (dtype or self.dtype).numpy
        return _finish(np.full(shape, checked_fill_value(value, numpy_dtype), numpy_dtype),
                       requires_grad)


# -- torch.Tensor(...), the legacy constructor ------------------------------------------------

def legacy_new(cls: type, *args: Any, device: Any = None) -> Tensor:
    """`torch.Tensor(...)`, as old programs still write it (methods.py makes it Tensor's
    `__new__`): no arguments give an empty tensor, integers or a Size a tensor of that
    shape (zeros here; PyTorch leaves the memory uninitialised), a sequence or array a
    default-dtype copy. (A Tensor gives its alias: methods.py sees to that, with the op.)"""
    if device is not None and devices.device(device).type != "cpu":
        raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                           f"{devices.device(device).type} was passed")
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if len(args) == 1 and isinstance(args[0], str):
        raise TypeError("new(): invalid data type 'str'")
    if not args or builtins.all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return Tensor._make(np.zeros(args or (0,), dtype=_numpy_dtype(None)), None)
    if len(args) == 1 and isinstance(args[0], Sequence | np.ndarray):
        return tensor(args[0], dtype=dtypes.get_default_dtype())
    if len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    bad = next(a for a in args if not isinstance(a, int))
    raise TypeError(f"new(): argument 'size' failed to unpack the object at pos "
                    f"{args.index(bad) + 1} with error \"type must be tuple of ints,but got "
                    f"{type(bad).__name__}\"")
