"""runtime.nn.utils: gradient clipping, as torch.nn.utils."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.nn.utils import clip_grad
from runtime.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)

__all__ = ["clip_grad", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
