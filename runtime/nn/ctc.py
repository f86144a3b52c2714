"""The connectionist temporal classification loss: F.ctc_loss and CTCLoss.

The loss is -log of the total probability of every alignment of the target (blanks between
and around its labels, each label repeated over consecutive frames) with the input frames,
summed by the forward (alpha) recursion in log space. The recursion is written with
differentiable ops over the whole batch, one step per frame, so autograd gives the
backward (beta) pass.

Unreachable states hold a large negative number instead of -inf, so that no -inf - -inf
reaches the gradient; a sample with no alignment at all (too few frames) gets an infinite
loss as in torch, or zero with zero_infinity.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from generated import ops
from runtime import composite, factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.module import Module

__all__ = ["CTCLoss", "ctc_loss"]

_UNREACHABLE = -1e30  # log(0), kept finite (see the module's docstring)
_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.numpy().astype(np.int64).reshape(-1)
    if isinstance(value, int):
        raise TypeError("ctc_loss() received an invalid combination of arguments: the lengths "
                        "must be tuples of ints or Tensors")
    return np.asarray(list(value), dtype=np.int64).reshape(-1)


def _check(log_probs: Tensor, targets: Tensor, input_lengths: np.ndarray,
           target_lengths: np.ndarray, blank: int) -> np.ndarray:
    """torch's argument checks; the targets as one padded (N, S) integer array."""
    frames, batch, classes = log_probs.shape
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.size != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.size != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    labels = targets.detach().numpy().astype(np.int64)
    for length in target_lengths:
        if length < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {length}{_CHECKING}")
    if targets.dim() == 1:
        total = int(target_lengths.sum())
        if labels.size != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {labels.size} for argument #2 'targets'{_CHECKING}")
        ends = np.cumsum(target_lengths)
        padded = np.zeros((batch, max(int(target_lengths.max(initial=0)), 1)), dtype=np.int64)
        for n, (end, length) in enumerate(zip(ends, target_lengths, strict=True)):
            padded[n, :length] = labels[end - length:end]
        labels = padded
    else:
        longest = int(target_lengths.max(initial=0))
        if labels.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                               f"1, but got size {labels.shape[1]} for argument #2 "
                               f"'targets'{_CHECKING}")
    for length in input_lengths:
        if length > frames:
            raise RuntimeError(f"Expected input_lengths to have value at most {frames}, but "
                               f"got value {length}{_CHECKING}")
    return labels


def _extended(labels: np.ndarray, target_lengths: np.ndarray, blank: int) -> tuple:
    """The blank-interleaved label sequences (N, 2S+1), and where a state may skip the
    state two back (a label that differs from the label before it)."""
    batch = labels.shape[0]
    width = 2 * max(int(target_lengths.max(initial=0)), 0) + 1
    extended = np.full((batch, width), blank, dtype=np.int64)
    skip = np.zeros((batch, width), dtype=bool)
    for n in range(batch):
        length = int(target_lengths[n])
        extended[n, 1:2 * length:2] = labels[n, :length]
        for s in range(3, 2 * length, 2):
            skip[n, s] = extended[n, s] != extended[n, s - 2]
    return extended, skip


def _feasible(labels: np.ndarray, input_lengths: np.ndarray,
              target_lengths: np.ndarray) -> np.ndarray:
    """Whether each sample has an alignment: enough frames for its labels and for a blank
    between each pair of equal neighbours."""
    result = np.zeros(len(input_lengths), dtype=bool)
    for n, (frames, length) in enumerate(zip(input_lengths, target_lengths, strict=True)):
        row = labels[n, :length]
        repeats = int(np.sum(row[1:] == row[:-1])) if length > 1 else 0
        result[n] = frames >= length + repeats and (frames > 0 or length == 0)
    return result


def _shift(alpha: Tensor, by: int) -> Tensor:
    """alpha moved `by` states to the right, unreachable states coming in on the left."""
    pad = factories.full((alpha.shape[0], by), _UNREACHABLE, dtype=alpha.dtype)
    return ops.cat([pad, alpha.narrow(1, 0, alpha.shape[1] - by)], 1)


def _log_sum(terms: list) -> Tensor:
    stacked = ops.stack(terms, 0)
    return ops.logsumexp(stacked, [0], False)


def _negative_log_likelihood(log_probs: Tensor, extended: np.ndarray, skip: np.ndarray,
                             input_lengths: np.ndarray, target_lengths: np.ndarray) -> Tensor:
    """-log p(target | input) per sample, by the alpha recursion over the frames."""
    batch, width = extended.shape
    index = factories.from_numpy(extended)
    emissions = [ops.gather(log_probs[t], 1, index) for t in range(log_probs.shape[0])]
    start = np.full((batch, width), _UNREACHABLE)
    start[:, 0] = 0.0
    start[:, 1:2][target_lengths > 0] = 0.0
    alpha = factories.tensor(start, dtype=log_probs.dtype) + emissions[0]
    skip_mask = factories.from_numpy(skip)
    unreachable = factories.full((batch, width), _UNREACHABLE, dtype=log_probs.dtype)
    for t in range(1, log_probs.shape[0]):
        two_back = ops.where(skip_mask, _shift(alpha, 2), unreachable)
        step = _log_sum([alpha, _shift(alpha, 1), two_back]) + emissions[t]
        running = factories.from_numpy((input_lengths > t).reshape(batch, 1))
        alpha = ops.where(running, step, alpha)
    last = factories.from_numpy((2 * target_lengths).reshape(batch, 1))
    before = factories.from_numpy(np.maximum(2 * target_lengths - 1, 0).reshape(batch, 1))
    end = ops.gather(alpha, 1, last).squeeze(1)
    before_end = ops.gather(alpha, 1, before).squeeze(1)
    only_blank = factories.from_numpy(target_lengths == 0)
    before_end = ops.where(only_blank, factories.full((batch,), _UNREACHABLE,
                                                      dtype=log_probs.dtype), before_end)
    return -_log_sum([end, before_end])


def _torch_gradient_term(log_probs: Tensor, input_lengths: np.ndarray) -> Tensor:
    """Zero per sample, with gradient exp(log_probs) at each sample's frames: torch's
    ctc_loss backward returns exp(log_probs) - (the exact gradient), which is what the
    logits get through a log_softmax in front of the loss; this term gives gradgen the same
    numbers when log_probs come from anything else."""
    frames = np.arange(log_probs.shape[0])[:, None] < input_lengths[None, :]
    mask = factories.tensor(frames[:, :, None].astype(np.float64), dtype=log_probs.dtype)
    total = (ops.exp(log_probs) * mask).sum((0, 2))
    return total - total.detach()


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
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    labels = _check(log_probs, targets, input_lengths, target_lengths, blank)
    extended, skip = _extended(labels, target_lengths, blank)
    losses = _negative_log_likelihood(log_probs, extended, skip, input_lengths, target_lengths)
    losses = losses + _torch_gradient_term(log_probs, input_lengths)
    feasible = factories.from_numpy(_feasible(labels, input_lengths, target_lengths))
    infinite = factories.full(losses.shape, 0.0 if zero_infinity else float("inf"),
                              dtype=losses.dtype)
    losses = ops.where(feasible, losses, infinite)
    if enum == 0:
        return losses if batched else losses.squeeze(0)
    if enum == 2:
        return losses.sum()
    divisors = factories.tensor(np.maximum(target_lengths, 1), dtype=losses.dtype)
    return (losses / divisors).mean()


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

