"""torch.backends.cudnn: cuDNN's flags. A CPU-only torch has no cuDNN: is_available() is
False, version() and benchmark_limit are None, while the other flags keep their defaults
and can be set."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["is_available", "version", "flags", "set_flags", "is_acceptable"]

enabled = True
benchmark = False
benchmark_limit = None  # read from CUDA, which is absent
deterministic = False
allow_tf32 = True
fp32_precision = "none"
depthwise_kernel = "auto"


def is_available() -> bool:
    """Whether torch was built with cuDNN: not on the CPU."""
    return False


def version() -> None:
    """cuDNN's version: None without cuDNN."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN could take this tensor: never without CUDA."""
    return False


def set_flags(_enabled: Any = None, _benchmark: Any = None, _benchmark_limit: Any = None,
              _deterministic: Any = None, _allow_tf32: Any = None,
              _fp32_precision: Any = "none", _depthwise_kernel: Any = None) -> tuple:
    """Set the flags given (not None); returns the old ones in torch's order. The
    benchmark limit is CUDA's, so it stays None."""
    global enabled, benchmark, deterministic, allow_tf32, fp32_precision, depthwise_kernel
    old = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision,
           depthwise_kernel)
    if _enabled is not None:
        enabled = _enabled
    if _benchmark is not None:
        benchmark = _benchmark
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        allow_tf32 = _allow_tf32
    if _fp32_precision is not None:
        fp32_precision = _fp32_precision
    if _depthwise_kernel is not None:
        depthwise_kernel = _depthwise_kernel
    return old


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Iterator[None]:
    """Set the flags for the length of a `with` block, then restore them."""
    old = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                    fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        set_flags(*old)
