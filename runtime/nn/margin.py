"""The soft margin loss: F.soft_margin_loss and SoftMarginLoss, on the spec op
soft_margin_loss (SoftMarginLossBackward0 in the graph, as in PyTorch)."""

from __future__ import annotations

from generated import ops
from runtime import composite
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.module import Module

__all__ = ["SoftMarginLoss", "soft_margin_loss"]


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target input)) for targets of 1 or -1, reduced."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(soft_margin_loss, (input, target, size_average, reduce, reduction),
            {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    return ops.soft_margin_loss(input, target, enum)


class SoftMarginLoss(Module):
    """The two-class logistic loss, log(1 + exp(-target input)), reduced."""

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = {0: "none", 1: "mean", 2: "sum"}[
                composite._reduction(reduction, size_average, reduce)]
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)
