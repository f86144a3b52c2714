"""The torch.* spellings of the layers' functions (torch.prelu, torch.group_norm,
torch.margin_ranking_loss, ...), with torch's signatures: the losses take at::Reduction's
int (0 none, 1 mean, 2 sum) rather than a string, instance_norm and native_group_norm take
ATen's argument order. Each calls its torch.nn.functional namesake.

torch's Python binding reads the losses' "int reduction = at::Reduction::Mean" default as 0:
called without a reduction, torch.margin_ranking_loss and the others reduce nothing, and
so do these."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import composite, kernels
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn import activation_more, ctc, loss_functions, nonlinear, norm_functions
from runtime.nn.rnn_cells import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell

__all__ = [
    "batch_norm", "bilinear", "cdist", "cosine_embedding_loss", "ctc_loss", "frobenius_norm",
    "group_norm", "gru_cell", "hinge_embedding_loss", "kl_div", "lstm_cell", "rnn_relu_cell",
    "rnn_tanh_cell",
    "instance_norm", "margin_ranking_loss", "native_group_norm", "pairwise_distance", "pdist",
    "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "rrelu_", "selu", "selu_",
    "triplet_margin_loss",
]

_REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}

prelu = activation_more.prelu
bilinear = activation_more.bilinear
pdist = loss_functions.pdist
cdist = loss_functions.cdist
pairwise_distance = loss_functions.pairwise_distance
rms_norm = norm_functions.rms_norm


def _name(reduction: int) -> str:
    """The reduction's name; like ATen, any int but mean's and sum's reduces nothing."""
    return _REDUCTION_NAMES.get(reduction, "none")


def selu(input: Tensor) -> Tensor:
    """scale · elu(x, alpha) with SELU's constants."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(selu, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return nonlinear.selu(input)


def selu_(input: Tensor) -> Tensor:
    """selu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(selu_, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return nonlinear.selu(input, inplace=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Any = None) -> Tensor:
    """Randomized leaky ReLU (the default generator's numbers in training)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rrelu, (input, lower, upper, training, generator), {})
        if heard is not _modes.PASS:
            return heard
    if generator is not None:  # checked as torch's binding checks it, in eval too
        kernels._drawing(generator, "rrelu")
    return activation_more.rrelu(input, lower, upper, training, generator=generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator: Any = None) -> Tensor:
    """rrelu, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rrelu_, (input, lower, upper, training, generator), {})
        if heard is not _modes.PASS:
            return heard
    if generator is not None:
        kernels._drawing(generator, "rrelu_")
    return activation_more.rrelu_(input, lower, upper, training, generator)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    """F.group_norm (cudnn_enabled is accepted and has no effect on a CPU)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(group_norm, (input, num_groups, weight, bias, eps, cudnn_enabled),
                                {})
        if heard is not _modes.PASS:
            return heard
    return norm_functions.group_norm(input, num_groups, weight, bias, eps)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,  # noqa: N803
                      C: int, HxW: int, group: int, eps: float) -> tuple:  # noqa: N803
    """group_norm's output with the per-(sample, group) mean and 1/std it used."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(native_group_norm, (input, weight, bias, N, C, HxW, group, eps), {})
        if heard is not _modes.PASS:
            return heard
    return ops.native_group_norm(input, weight, bias, N, C, HxW, group, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.batch_norm: F.batch_norm in ATen's argument order, without F's Python checks
    (cudnn_enabled is accepted and has no effect on a CPU)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(batch_norm, (input, weight, bias, running_mean, running_var,
                                training, momentum, eps, cudnn_enabled), {})
        if heard is not _modes.PASS:
            return heard
    return composite.aten_batch_norm(input, weight, bias, running_mean, running_var, training,
                                     momentum, eps)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """torch.kl_div: F.kl_div with at::Reduction's int (none by default, as torch's binding
    reads it) and no batchmean."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(kl_div, (input, target, reduction), {"log_target": log_target})
        if heard is not _modes.PASS:
            return heard
    return composite.aten_kl_div(input, target, reduction, log_target)


_FROBENIUS_WARNED = []


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """The 2-norm over at most two dimensions (deprecated in torch, which warns once: use
    linalg.vector_norm); norm.ScalarOpt_dim does the work (NormBackward1, as torch's)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(frobenius_norm, (input, dim, keepdim), {})
        if heard is not _modes.PASS:
            return heard
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    if not _FROBENIUS_WARNED:
        _FROBENIUS_WARNED.append(True)
        warn_at_caller("at::frobenius_norm is deprecated and it is just left for JIT "
                       "compatibility. It will be removed in a future PyTorch release. Please "
                       "use `linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning)
    return ops.OVERLOADS["norm.ScalarOpt_dim"].wrapper(input, 2, dims, keepdim)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """F.instance_norm, in ATen's argument order."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(instance_norm, (input, weight, bias, running_mean, running_var,
                                use_input_stats, momentum, eps, cudnn_enabled), {})
        if heard is not _modes.PASS:
            return heard
    return norm_functions.instance_norm(input, running_mean, running_var, weight, bias,
                               use_input_stats, momentum, eps)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(margin_ranking_loss, (input1, input2, target, margin, reduction),
                                {})
        if heard is not _modes.PASS:
            return heard
    return loss_functions.margin_ranking_loss(input1, input2, target, margin,
                                           reduction=_name(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hinge_embedding_loss, (input, target, margin, reduction), {})
        if heard is not _modes.PASS:
            return heard
    return loss_functions.hinge_embedding_loss(input, target, margin, reduction=_name(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: int = 0) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cosine_embedding_loss, (input1, input2, target, margin, reduction),
                                {})
        if heard is not _modes.PASS:
            return heard
    return loss_functions.cosine_embedding_loss(input1, input2, target, margin,
                                             reduction=_name(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(triplet_margin_loss, (anchor, positive, negative, margin, p, eps,
                                swap, reduction), {})
        if heard is not _modes.PASS:
            return heard
    return loss_functions.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                           reduction=_name(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(poisson_nll_loss, (input, target, log_input, full, eps, reduction),
                                {})
        if heard is not _modes.PASS:
            return heard
    return loss_functions.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                        reduction=_name(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(ctc_loss, (log_probs, targets, input_lengths, target_lengths, blank,
                                reduction, zero_infinity), {})
        if heard is not _modes.PASS:
            return heard
    return ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                        _name(reduction), zero_infinity)
