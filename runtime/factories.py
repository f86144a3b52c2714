"""Tensor factories with PyTorch's names and defaults (float32 unless told otherwise).

A `device=` must name the CPU, the only device gradgen has (runtime/devices.py).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import cpu_math, devices, dtypes
from runtime import out as _out
from runtime._tensor import Size, Tensor
from runtime.dispatch import int_list

__all__ = [
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye", "arange",
    "linspace", "zeros_like", "ones_like", "full_like", "empty_like",
]


def _numpy_dtype(dtype: dtypes.dtype | None) -> np.dtype:
    return (dtype or dtypes.get_default_dtype()).numpy


def _finish(array: np.ndarray, requires_grad: bool) -> Tensor:
    result = Tensor._make(array, None)
    if requires_grad:
        if array.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        result.requires_grad_(True)
    return result


def _infer(data: Any, dtype: dtypes.dtype | None = None) -> np.ndarray:
    """The numpy array of `data`, with torch's dtype inference.

    Python floats become `dtype` when one is asked for (so float64 data keeps its
    precision), else the default dtype.
    """
    if isinstance(data, np.ndarray):
        if data.dtype.kind == "f" and data.dtype.itemsize > 8:
            raise TypeError(f"gradgen has no dtype for numpy {data.dtype}")
        return np.array(data, dtype=np.int64 if data.dtype.kind in "iu" and data.dtype not in (
            np.int32, np.int64, np.uint8) else data.dtype)
    array = np.array(data)
    if array.dtype == np.bool_:
        return array
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind == "f":
        return array.astype((dtype if dtype is not None else dtypes.get_default_dtype()).numpy)
    if array.dtype == object:
        raise TypeError("tensor(): could not infer a dtype from the data (ragged or mixed)")
    raise TypeError(f"tensor(): unsupported data of numpy dtype {array.dtype}")


def tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """A new leaf holding a copy of `data` (nested lists, numbers, arrays or a Tensor)."""
    if device is not None:
        devices.to_cpu(device)
    if isinstance(data, Tensor):
        array = data._data.copy()
    elif isinstance(data, list | tuple) and data and builtins.any(
            isinstance(d, Tensor) for d in data):
        array = np.array([d._data if isinstance(d, Tensor) else d for d in data])
        array = _infer(array, dtype)
    else:
        array = _infer(data, dtype)
    if dtype is not None:
        array = array.astype(dtype.numpy)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    return _finish(array, requires_grad)


def as_tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None) -> Tensor:
    if device is not None:
        devices.to_cpu(device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    return tensor(data, dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing `array`'s memory."""
    dtypes.from_numpy(array.dtype)
    return Tensor._make(array, None)


def _shape(size: Sequence[Any]) -> tuple[int, ...]:
    return int_list(size)


def zeros(*size: Any, dtype: dtypes.dtype | None = None, requires_grad: bool = False,
          device: Any = None, out: Tensor | None = None) -> Tensor:
    if out is not None:  # torch's out= form (runtime/out.py)
        return _out.factory("zeros", zeros, size, {"dtype": dtype, "device": device,
                                                   "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.zeros(_shape(size), _numpy_dtype(dtype)), requires_grad)


def ones(*size: Any, dtype: dtypes.dtype | None = None, requires_grad: bool = False,
         device: Any = None, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return _out.factory("ones", ones, size, {"dtype": dtype, "device": device,
                                                 "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.ones(_shape(size), _numpy_dtype(dtype)), requires_grad)


def empty(*size: Any, dtype: dtypes.dtype | None = None, requires_grad: bool = False,
          device: Any = None, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return _out.factory("empty", empty, size, {"dtype": dtype, "device": device,
                                                   "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.empty(_shape(size), _numpy_dtype(dtype)), requires_grad)


def _fill_dtype(value: Any, dtype: dtypes.dtype | None) -> np.dtype:
    if dtype is not None:
        return dtype.numpy
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, int):
        return np.dtype(np.int64)
    return dtypes.get_default_dtype().numpy


def full(size: Sequence[int], fill_value: Any, *, dtype: dtypes.dtype | None = None,
         requires_grad: bool = False, device: Any = None, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return _out.factory("full", full, (size, fill_value), {
            "dtype": dtype, "device": device, "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.full(_shape((size,)), fill_value, _fill_dtype(fill_value, dtype)),
                   requires_grad)


def eye(n: int, m: int | None = None, *, dtype: dtypes.dtype | None = None,
        requires_grad: bool = False, device: Any = None, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return _out.factory("eye", eye, (n, m), {"dtype": dtype, "device": device,
                                                 "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.eye(n, m, dtype=_numpy_dtype(dtype)), requires_grad)


def _range_scalar(value: Any) -> Any:
    """A bound or step as torch's Scalar holds it: a 0-dim tensor gives its Python value
    (a float32 one as the double it is), a bool an int."""
    if isinstance(value, Tensor):
        value = value._data.item()
    return int(value) if isinstance(value, bool) else value


def _truncate(value: Any) -> int:
    """C's conversion of a double to int64: toward zero."""
    return int(value)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: dtypes.dtype | None = None,
           requires_grad: bool = False, device: Any = None, out: Tensor | None = None
           ) -> Tensor:
    """torch.arange: the values start + i * step below `end`, as torch's kernel counts them.

    For int64 the bounds and step are first cut to integers (toward zero) and the length is
    counted in integers; otherwise it is ceil((end - start) / step) in double. Integer
    values are trunc(start) + i * trunc(step); floating ones start + i * step in double,
    then rounded to the dtype (torch's vectorised kernel splits the fused multiply-add per
    SIMD lane, so a float32 value can differ from it in the last place)."""
    if out is not None:
        return _out.factory("arange", arange, (start, end, step), {
            "dtype": dtype, "device": device, "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    if end is None:
        start, end = 0, start
    start, end, step = (_range_scalar(v) for v in (start, end, step))
    integral = builtins.all(isinstance(v, int) for v in (start, end, step))
    numpy_dtype = dtype.numpy if dtype is not None else (
        np.dtype(np.int64) if integral else dtypes.get_default_dtype().numpy)
    if numpy_dtype == np.int64:  # int64 counts in int64: bounds and step cut first
        if step != 0 and np.isfinite(step) and _truncate(step) == 0:
            raise ValueError("step must be nonzero")  # PyTorch's Python binding says so
        start, end, step = (_truncate(v) if np.isfinite(v) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(start) and np.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if step > 0 and end < start or step < 0 and end > start:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if numpy_dtype == np.int64:
        sign = 1 if step > 0 else -1
        span = end - start + step - sign
        size = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
        values = start + step * np.arange(builtins.max(size, 0), dtype=np.int64)
    else:
        size = builtins.max(math.ceil((float(end) - float(start)) / float(step)), 0)
        if numpy_dtype.kind in "iub":  # the other integer dtypes count in int64
            values = _truncate(start) + _truncate(step) * np.arange(size, dtype=np.int64)
        else:  # start + step * i as one fused multiply-add, in double
            values = cpu_math.fma64(float(step), np.arange(size, dtype=np.float64),
                                    float(start))
    return _finish(values.astype(numpy_dtype), requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: dtypes.dtype | None = None,
             requires_grad: bool = False, device: Any = None, out: Tensor | None = None
             ) -> Tensor:
    """torch.linspace as torch's CPU kernel computes it: the bounds cast to the dtype, the
    step (end - start) / (steps - 1) in that dtype (double for integers), the first half
    counted up from start and the second half down from end, each value one fused
    multiply-add."""
    if out is not None:
        return _out.factory("linspace", linspace, (start, end, steps), {
            "dtype": dtype, "device": device, "requires_grad": requires_grad}, out)
    if device is not None:
        devices.to_cpu(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    numpy_dtype = _numpy_dtype(dtype)
    start, end = (_range_scalar(v) for v in (start, end))
    integral = numpy_dtype.kind in "iub"
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


def _like(input: Tensor, dtype: dtypes.dtype | None) -> tuple[tuple[int, ...], np.dtype]:
    return input.shape, (dtype.numpy if dtype is not None else input._data.dtype)


def zeros_like(input: Tensor, *, dtype: dtypes.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.zeros(*_like(input, dtype)), requires_grad)


def ones_like(input: Tensor, *, dtype: dtypes.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.ones(*_like(input, dtype)), requires_grad)


def empty_like(input: Tensor, *, dtype: dtypes.dtype | None = None,
               requires_grad: bool = False, device: Any = None) -> Tensor:
    if device is not None:
        devices.to_cpu(device)
    return _finish(np.empty(*_like(input, dtype)), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: dtypes.dtype | None = None,
              requires_grad: bool = False, device: Any = None) -> Tensor:
    if device is not None:
        devices.to_cpu(device)
    shape, numpy_dtype = _like(input, dtype)
    return _finish(np.full(shape, fill_value, numpy_dtype), requires_grad)


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
