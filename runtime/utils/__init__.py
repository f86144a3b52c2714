"""runtime.utils: torch.utils's data loading (`torch.utils.data`), activation
checkpointing (`torch.utils.checkpoint`) and TorchDispatchMode
(`torch.utils._python_dispatch`)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.utils import _python_dispatch, checkpoint, data

__all__ = ["checkpoint", "data", "_python_dispatch"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
