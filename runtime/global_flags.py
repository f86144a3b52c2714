"""Process-wide switches and questions of `torch.*` that have a CPU meaning: anomaly mode's
functional form, warn-always, the float32 matmul precision, denormals, autocast as a
CPU-only torch reports it when it is off, `typename` and `is_storage`; and a few small
factories (scalar_tensor, the deprecated range, empty_strided, empty_permuted,
nonzero_static).

gradgen has no autocast: its getters answer as torch does with autocast off, and asking to
turn it on is refused with a clear error rather than silently ignored.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from runtime import anomaly, devices, dtypes, factories, storage
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.aliases import torch_name

__all__ = ["is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
           "is_warn_always_enabled", "set_warn_always", "get_float32_matmul_precision",
           "set_float32_matmul_precision", "set_flush_denormal", "init_num_threads",
           "typename", "is_storage", "is_autocast_enabled", "is_autocast_cpu_enabled",
           "is_autocast_cache_enabled", "set_autocast_enabled", "set_autocast_cpu_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "get_autocast_dtype",
           "get_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_dtype",
           "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "scalar_tensor", "range",
           "empty_strided", "empty_permuted", "nonzero_static", "set_default_tensor_type"]


# -- anomaly mode, warnings, precision ---------------------------------------------------------

def is_anomaly_enabled() -> bool:
    return anomaly.is_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Anomaly mode on or off for the process (what set_detect_anomaly does on entry)."""
    anomaly.set_detect_anomaly(enabled, check_nan)


_warn_always = [False]


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def set_warn_always(b: bool) -> None:
    """torch's warnings raised once per process would then be raised every time; gradgen
    keeps the flag (its warnings follow Python's filters)."""
    _warn_always[0] = bool(b)


_matmul_precision = ["highest"]


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Recorded only: numpy's float32 matmul is always the full-precision one ('highest')."""
    if precision not in ("highest", "high", "medium"):
        warn_at_caller(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                       "setFloat32MatmulPrecision call has no effect.", UserWarning)
        return
    _matmul_precision[0] = precision


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormals is supported: numpy cannot, so only turning it off
    succeeds."""
    return not mode


def init_num_threads() -> None:
    """Nothing to set up: gradgen's numpy uses its own thread pool."""


def typename(obj: Any) -> str:
    """A tensor's type name (`torch.FloatTensor`), else the object's class path."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "")
    name = type(obj).__qualname__
    module = torch_name(module)  # the name programs know the class by
    if isinstance(obj, dtypes.dtype):
        return "torch.dtype"
    return name if module in ("builtins", "") else f"{module}.{name}"


def is_storage(obj: Any) -> bool:
    """Whether obj is a storage (an UntypedStorage, a TypedStorage, FloatStorage & co)."""
    return isinstance(obj, storage.UntypedStorage | storage.TypedStorage)


_warned: set[str] = set()


def set_default_tensor_type(t: Any) -> None:
    """Deprecated: the default float dtype from a tensor type (`torch.DoubleTensor` or its
    name); warns once a process, as torch does."""
    if "set_default_tensor_type" not in _warned:
        _warned.add("set_default_tensor_type")
        warn_at_caller("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                       "use torch.set_default_dtype() and torch.set_default_device() as "
                       "alternatives.", UserWarning)
    dtype = dtypes.from_type_string(t) if isinstance(t, str) else t.dtype
    dtypes.set_default_dtype(dtype)


# -- autocast, off ------------------------------------------------------------------------------

def _deprecated(old: str, new: str) -> None:
    warn_at_caller(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                   DeprecationWarning)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    return False


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return False


_autocast_cache = [True]


def is_autocast_cache_enabled() -> bool:
    return _autocast_cache[0]


def set_autocast_cache_enabled(enabled: bool) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _autocast_cache[0] = enabled


def clear_autocast_cache() -> None:
    """Nothing is cached: autocast never runs in gradgen."""


def _refuse_autocast(enabled: bool) -> None:
    if enabled:
        raise NotImplementedError("gradgen has no autocast (mixed precision): it computes in "
                                  "the tensors' own dtypes")


def set_autocast_enabled(*args: Any) -> None:
    """`set_autocast_enabled(enabled)` or `set_autocast_enabled(device_type, enabled)`."""
    _refuse_autocast(bool(args[-1]) if args else False)


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _refuse_autocast(enabled)


_autocast_dtypes = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}


def get_autocast_dtype(device_type: str) -> Any:
    kind = _autocast_device("get_autocast_dtype", device_type)
    return _autocast_dtypes.get(kind, dtypes.float16)


def get_autocast_cpu_dtype() -> Any:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _autocast_dtypes["cpu"]


def get_autocast_gpu_dtype() -> Any:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _autocast_dtypes["cuda"]


def _autocast_device(function: str, device_type: Any) -> str:
    """A device type as torch's autocast functions take it (`"cuda:0"` is cuda's)."""
    if not isinstance(device_type, str):
        raise TypeError(f"{function}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    return devices.device(device_type).type


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    kind = _autocast_device("set_autocast_dtype", device_type)
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError("set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _autocast_dtypes[kind] = dtype


def _legacy_autocast_dtype(kind: str, dtype: Any) -> None:
    """set_autocast_cpu_dtype / set_autocast_gpu_dtype: the dtype checked, then the warning."""
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
    device = "gpu" if kind == "cuda" else kind
    _deprecated(f"set_autocast_{device}_dtype(dtype)", f"set_autocast_dtype('{kind}', dtype)")
    _autocast_dtypes[kind] = dtype


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _legacy_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _legacy_autocast_dtype("cuda", dtype)


# -- small factories ---------------------------------------------------------------------------

def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-dim tensor of the default float dtype (or `dtype`) holding s."""
    return factories.full((), s, dtype=dtype or dtypes.get_default_dtype(),
                          requires_grad=requires_grad)


def range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          layout: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None) -> Tensor:
    """Deprecated: start to end *inclusive* by step, in the default float dtype."""
    warn_at_caller("torch.range is deprecated and will be removed in a future release because "
                   "its behavior is inconsistent with Python's range builtin. Instead, use "
                   "torch.arange, which produces values in [start, end).", UserWarning)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    dtype = dtype or dtypes.get_default_dtype()
    values = np.array([start + i * step for i in builtins.range(count)], dtype=np.float64)
    return factories.tensor(values, dtype=dtype, requires_grad=requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor with the given strides (zeros here)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    dtype = dtype or dtypes.get_default_dtype()
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) if all(size) else 0
    storage = np.zeros(extent, dtype=dtype.numpy)
    itemsize = storage.itemsize
    array = np.lib.stride_tricks.as_strided(storage, size, [s * itemsize for s in stride])
    tensor = Tensor._make(array, None)
    return tensor.requires_grad_(requires_grad) if requires_grad else tensor


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor whose dims lie in memory in the order physical_layout."""
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; i.e. len(size) = "
                           f"{len(size)} is not equal to len(physical_layout) = {len(order)}")
    stride = [0] * len(size)
    step = 1
    for dim in reversed(order):
        stride[dim] = step
        step *= size[dim]
    return empty_strided(size, stride, dtype=dtype, requires_grad=requires_grad)


def nonzero_static(input: Any, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero's rows, cut or padded with fill_value to exactly `size` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    rows = np.argwhere(input._data)[:size]
    padded = np.full((size, input.ndim), fill_value, dtype=np.int64)
    padded[:len(rows)] = rows
    return Tensor._make(padded, None)
