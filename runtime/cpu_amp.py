"""`torch.cpu.amp`: the deprecated spelling of autocast("cpu") (runtime/amp.py)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.amp import CpuAutocast as autocast
from runtime.amp import GradScaler

__all__ = ["GradScaler", "autocast"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
