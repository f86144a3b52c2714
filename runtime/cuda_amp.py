"""`torch.cuda.amp`: the deprecated spellings of autocast("cuda") and GradScaler("cuda"),
which a machine without CUDA turns off (runtime/amp.py)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.amp import CudaAutocast as autocast
from runtime.amp import CudaGradScaler as GradScaler

__all__ = ["GradScaler", "autocast"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
