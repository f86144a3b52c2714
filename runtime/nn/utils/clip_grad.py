"""Gradient clipping, as torch.nn.utils: scale gradients down to a norm, or clamp them."""

from __future__ import annotations

import math
import types
from collections.abc import Iterable

from generated import ops
from runtime import factories
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import no_grad

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]

Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: Tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@no_grad()
def get_total_norm(tensors: Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The `norm_type`-norm of all the tensors' elements together: the norm of their norms."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return factories.tensor(0.0)
    norms = [ops.linalg_vector_norm(t, norm_type) for t in tensors]
    total_norm = ops.linalg_vector_norm(ops.stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


@no_grad()
def clip_grads_with_norm_(parameters: Tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    clip_coef_clamped = ops.clamp(clip_coef, max=1.0)
    for grad in grads:
        grad.mul_(clip_coef_clamped)


@no_grad()
def clip_grad_norm_(parameters: Tensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the parameters' gradients in place so that their total norm is at most
    `max_norm`; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warn_at_caller("`parameters` is an empty generator, no gradient clipping will occur.")
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


@no_grad()
def clip_grad_value_(parameters: Tensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp the parameters' gradients in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    for parameter in _as_list(parameters):
        if parameter.grad is not None:
            parameter.grad.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters: Tensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """clip_grad_norm_ under its deprecated name, with torch's FutureWarning."""
    warn_at_caller("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                   "`torch.nn.utils.clip_grad_norm_`.", FutureWarning)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
