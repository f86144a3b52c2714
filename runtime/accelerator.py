"""`torch.accelerator` on a machine without one: gradgen computes on the CPU only."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.devices import device

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> device | None:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    return 0


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
