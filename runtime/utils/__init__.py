"""runtime.utils: torch.utils's data loading (`torch.utils.data`)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.utils import data

__all__ = ["data"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
