"""runtime.optim: SGD, Adam and AdamW, as in torch.optim."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.optim.adam import Adam
from runtime.optim.adamw import AdamW
from runtime.optim.optimizer import Optimizer
from runtime.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
