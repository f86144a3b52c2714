"""torch.backends.mkldnn: oneDNN, which torch's CPU wheels include (gradgen's kernels are
numpy's; the flags are kept for programs that read or set them)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from runtime._warn import warn_at_caller

__all__ = ["is_available", "flags", "set_flags"]

enabled = True
deterministic = False
allow_tf32 = None  # oneDNN's TF32 is for Intel GPUs: unset on the CPU
fp32_precision = "none"


def is_available() -> bool:
    return True


def set_flags(_enabled: Any = None, _deterministic: Any = None, _allow_tf32: Any = None,
              _fp32_precision: Any = "none") -> tuple:
    """Set the flags given (not None); returns the old ones in torch's order."""
    global enabled, deterministic, fp32_precision
    old = (enabled, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        enabled = _enabled
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        warn_at_caller("TF32 acceleration on top of oneDNN is available for Intel GPUs. The "
                       "current Torch version does not have Intel GPU Support.")
    if _fp32_precision is not None:
        fp32_precision = _fp32_precision
    return old


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    old = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*old)
