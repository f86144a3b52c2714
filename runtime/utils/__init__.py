"""runtime.utils: torch.utils's data loading (`torch.utils.data`) and activation
checkpointing (`torch.utils.checkpoint`)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.utils import checkpoint, data

__all__ = ["checkpoint", "data"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
