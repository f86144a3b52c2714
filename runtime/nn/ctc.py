"""The connectionist temporal classification loss: F.ctc_loss and CTCLoss, made as torch's
ctc_loss makes them of the spec's _ctc_loss (node CtcLossBackward0): the negative
log-likelihood of each sample's target over all its alignments (blanks between and around
its labels, each label repeated over consecutive frames), by the forward recursion in log
space; zero_infinity replaces an infinite loss (too few frames) by zero; 'mean' divides each
loss by its target length (at least 1) and averages. The gradient is torch's: that of the
logits through a log_softmax in front (runtime/kernels.py, _ctc_loss_backward).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from generated import ops
from runtime import composite, factories, kernels
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.module import Module

__all__ = ["CTCLoss", "ctc_loss"]


def _lengths(value: Any) -> list[int]:
    if isinstance(value, Tensor):
        return [int(v) for v in value.numpy().astype(np.int64).reshape(-1)]
    if isinstance(value, int):
        raise TypeError("ctc_loss() received an invalid combination of arguments: the lengths "
                        "must be tuples of ints or Tensors")
    return [int(v) for v in value]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of (T, N, C) log-probabilities (or (T, C) for one sequence) against the
    targets, with each sample's input and target length. 'mean' divides each loss by its
    target length, then averages over the batch."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(ctc_loss, (log_probs, targets, input_lengths, target_lengths, blank,
                                reduction, zero_infinity), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction)
    batched = log_probs.dim() == 3
    input_lengths, target_lengths = _lengths(input_lengths), _lengths(target_lengths)
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    kernels.ctc_targets(log_probs.shape, targets.numpy(), np.array(input_lengths),
                        np.array(target_lengths), blank)  # torch's checks, before any work
    losses = ops._ctc_loss(log_probs, targets.long(), input_lengths, target_lengths, blank,
                           zero_infinity)[0]
    if zero_infinity:
        losses = ops.where(losses == float("inf"), factories.zeros((), dtype=losses.dtype),
                           losses)
    if enum == 1:
        divisors = factories.tensor(target_lengths, dtype=losses.dtype).clamp_min(1)
        return (losses / divisors).mean()
    if enum == 2:
        return losses.sum()
    return losses if batched else losses.squeeze(0)


class CTCLoss(Module):
    """The connectionist temporal classification loss (see F.ctc_loss)."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__()
        self.reduction = reduction
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any,
                target_lengths: Any) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)

