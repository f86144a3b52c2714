"""Dropout: zeroes elements at random while training, the identity in eval mode."""

from __future__ import annotations

from runtime._tensor import Tensor
from runtime.nn import functional as F
from runtime.nn.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability `p` and scale the rest by 1/(1-p), in training."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
