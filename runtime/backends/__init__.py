"""torch.backends: the flags and questions about compute backends, answered as a CPU-only
torch answers them (no CUDA, cuDNN or MPS; oneDNN, OpenMP and MKL reported as present, as
in torch's CPU wheels). The flags are plain attributes a program may set; gradgen's numpy
kernels do not read them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from runtime.aliases import missing_attribute
from runtime.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum",
           "flags_frozen", "disable_global_flags"]

_flags_frozen = False


def disable_global_flags() -> None:
    """Forbid changing the backends' global flags (torch's test harness uses it)."""
    global _flags_frozen
    _flags_frozen = True


def flags_frozen() -> bool:
    return _flags_frozen


@contextlib.contextmanager
def __allow_nonbracketed_mutation() -> Iterator[None]:
    global _flags_frozen
    old, _flags_frozen = _flags_frozen, False
    try:
        yield
    finally:
        _flags_frozen = old


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
