"""runtime.utils: torch.utils's data loading (`torch.utils.data`), activation
checkpointing (`torch.utils.checkpoint`), TorchDispatchMode
(`torch.utils._python_dispatch`) and the statement timer (`torch.utils.benchmark`)."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.utils import _python_dispatch, benchmark, checkpoint, data

__all__ = ["benchmark", "checkpoint", "data", "_python_dispatch"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
