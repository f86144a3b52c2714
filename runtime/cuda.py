"""`torch.cuda` as a build of PyTorch without CUDA has it: no device, and the same errors."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.devices import CUDA_MISSING

__all__ = ["current_device", "device_count", "is_available", "is_initialized"]


def is_available() -> bool:
    """False: gradgen computes on the CPU only."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def current_device() -> int:
    raise AssertionError(CUDA_MISSING)


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
