"""torch.nn.functional's margin ranking, hinge embedding, cosine embedding, triplet margin
(and with a distance), Poisson and Gaussian NLL, multi-margin, multi-label margin and
multi-label soft margin losses, pairwise_distance and pdist.

Every one is a composite of existing differentiable ops (clamp_min, where, norm, log,
logsigmoid, gather), written as torch's ATen kernels compute it, so autograd flows through
its pieces and the numbers agree with torch's. Made of composite and spec ops only (no
torch.nn.functional import), so that runtime/nn/functional.py can re-export them without an
import cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from generated import ops
from runtime import composite, factories, kernels
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.grad_mode import no_grad

__all__ = [
    "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "pairwise_distance", "pdist", "poisson_nll_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}


def _reduce(loss: Tensor, reduction: int) -> Tensor:
    """at::Reduction applied: 0 none, 1 mean, 2 sum."""
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _sizes(tensor: Tensor) -> str:
    return f"torch.Size({list(tensor.shape)})"


def _list(tensor: Tensor) -> str:
    return str(list(tensor.shape))


# -- pairwise distance ----------------------------------------------------------------------------

def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps over the last dimension (of the broadcast shape)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(pairwise_distance, (x1, x2, p, eps, keepdim), {})
        if heard is not _modes.PASS:
            return heard
    dim = max(x1.dim(), x2.dim()) - 1
    return composite.norm(x1 - x2 + eps, p, dim, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance between every pair of rows i < j of an (N, M) input, in order."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(pdist, (input, p), {})
        if heard is not _modes.PASS:
            return heard
    return ops._pdist_forward(input, p)


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M),
    batch dimensions broadcast. For p = 2 the distances come from one matrix product when
    compute_mode asks for it (or, by default, when either side has more than 25 rows), as
    torch's: _euclidean_dist on the flattened batch, viewed back; else _cdist_forward."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cdist, (x1, x2, p, compute_mode), {})
        if heard is not _modes.PASS:
            return heard
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _CDIST_MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. "
                           f"X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    by_product = p == 2 and (mode == 1 or (mode is None and (rows1 > 25 or rows2 > 25)))
    if x1.numel() == 0 or x2.numel() == 0 or not by_product:
        return ops._cdist_forward(x1, x2, p, mode)
    # torch's cdist_impl: its checks, then the batch flattened for the matrix product
    kernels._distance_checks(x1.detach()._data, x2.detach()._data, p)
    batch = list(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    size = int(np.prod(batch))
    left = x1.expand(*batch, rows1, x1.shape[-1]).reshape(size, rows1, x1.shape[-1])
    right = x2.expand(*batch, rows2, x2.shape[-1]).reshape(size, rows2, x2.shape[-1])
    return ops._euclidean_dist(left, right).view(*batch, rows1, rows2)


# -- margin and embedding losses ------------------------------------------------------------------

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (input1 - input2) + margin): input1 should rank above input2 where
    target is 1, below where it is -1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(margin_ranking_loss, (input1, input2, target, margin, size_average,
                                reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_sizes(input1)}, input2: {_sizes(input2)}, "
                           f"target: {_sizes(target)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hinge_embedding_loss, (input, target, margin, size_average, reduce,
                                reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    zeros = factories.zeros_like(input)
    beyond_margin = ops.where(target != 1, (margin - input).clamp_min(0), zeros)
    itself = ops.where(target != -1, input, zeros)
    return _reduce(beyond_margin + itself, enum)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cosine_embedding_loss, (input1, input2, target, margin,
                                size_average, reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    rank = dim + 1
    if input1.dim() != rank or input2.dim() != rank:
        raise RuntimeError(f"{dim}D target tensor expects {rank}D input tensors, but found "
                           f"inputs with sizes {_list(input1)} and {_list(input2)}.")
    epsilon = 1e-12
    product = (input1 * input2).sum(dim)
    magnitude1 = (input1 * input1).sum(dim) + epsilon
    magnitude2 = (input2 * input2).sum(dim) + epsilon
    cosine = product / (magnitude1 * magnitude2).sqrt()
    zeros = factories.zeros_like(cosine)
    positive = ops.where(target == 1, 1 - cosine, zeros)
    negative = ops.where(target == -1, (cosine - margin).clamp_min(0), zeros)
    return _reduce(positive + negative, enum)


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    dims = anchor.dim(), positive.dim(), negative.dim()
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {dims[0]}D, positive "
                           f"{dims[1]}D, and negative {dims[2]}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance;
    swap takes the smaller of d(anchor, negative) and d(positive, negative)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(triplet_margin_loss, (anchor, positive, negative, margin, p, eps,
                                swap, size_average, reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance_positive = pairwise_distance(anchor, positive, p, eps)
    distance_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        distance_swap = pairwise_distance(positive, negative, p, eps)
        distance_negative = ops.minimum(distance_negative, distance_swap)
    return _reduce((margin + distance_positive - distance_negative).clamp_min(0), enum)


def triplet_margin_with_distance_loss(
        anchor: Tensor, positive: Tensor, negative: Tensor, *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    """The triplet margin loss with any distance function (pairwise_distance by default)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(triplet_margin_with_distance_loss, (anchor, positive, negative),
                                {"distance_function": distance_function, "margin": margin,
                                "swap": swap, "reduction": reduction})
        if heard is not _modes.PASS:
            return heard
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    distance_positive = distance(anchor, positive)
    distance_negative = distance(anchor, negative)
    if swap:
        distance_negative = ops.minimum(distance_negative, distance(positive, negative))
    loss = (margin + distance_positive - distance_negative).clamp_min(0)
    return _reduce(loss, composite._REDUCTIONS[reduction])


# -- likelihood losses ----------------------------------------------------------------------------

def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The Poisson negative log likelihood of target given the rate exp(input) (log_input)
    or input; full adds Stirling's approximation of log(target!) for targets above 1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(poisson_nll_loss, (input, target, log_input, full, size_average,
                                eps, reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        stirling = target * ops.log(target) - target + 0.5 * ops.log(2 * math.pi * target)
        loss = loss + ops.masked_fill(stirling, target <= 1, 0)
    return _reduce(loss, enum)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The Gaussian negative log likelihood, ½ (log var + (input - target)² / var), with
    var clamped to eps (without a gradient through the clamp) and shaped as torch allows."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(gaussian_nll_loss, (input, target, var, full, eps, reduction), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * factories.ones_like(input)
    elif bool(ops.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:  # one variance per sample: broadcast it
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(
                y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (ops.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, composite._REDUCTIONS[reduction])


# -- multi-class and multi-label margin losses ----------------------------------------------------

def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Σ_{i≠y} max(0, margin - x[y] + x[i])^p (times weight[y]) / C per sample: the
    multi-class hinge loss."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(multi_margin_loss, (input, target, p, margin, weight, size_average,
                                reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return ops.multi_margin_loss(input, target, p, margin, weight, enum)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Σ_j Σ_{i not a target} max(0, 1 - (x[j] - x[i])) / C per sample, over the target
    classes j listed in `target` up to its first -1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(multilabel_margin_loss, (input, target, size_average, reduce,
                                reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = composite._reduction(reduction, size_average, reduce)
    return ops.multilabel_margin_loss_forward(input, target, enum)[0]


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """The binary logistic loss of every class, averaged over the classes."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(multilabel_soft_margin_loss, (input, target, weight, size_average,
                                reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    if size_average is not None or reduce is not None:
        reduction = _REDUCTION_NAMES[composite._reduction(reduction, size_average, reduce)]
    loss = -(target * composite.logsigmoid(input) + (1 - target) * composite.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, composite._REDUCTIONS[reduction])
