"""torch._standard_gamma, torch._standard_gamma_grad and torch._sample_dirichlet: the
samplers under Gamma, Chi2, Beta and Dirichlet, drawing torch's numbers.

_standard_gamma is differentiable (its sample moves with alpha at a fixed CDF value: the
implicit reparameterisation gradient, torch's `_standard_gamma_grad`); it records an
autograd Function's node, where torch records StandardGammaBackward0.
"""

from __future__ import annotations

from typing import Any

from runtime import random_ops, sampling_gamma
from runtime._tensor import Tensor
from runtime.autograd import Function

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"]


def _float_input(input: Tensor, kernel: str) -> None:
    if input._data.dtype.kind != "f":
        random_ops._require_float(input._data, kernel)


def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """d output / d self for standard gamma samples `output` of concentrations `self`."""
    return Tensor._make(sampling_gamma.standard_gamma_grad(self._data, output._data), None)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx: Any, alpha: Tensor, generator: Any) -> Tensor:
        _float_input(alpha, "gamma_cpu")
        drawn = sampling_gamma.standard_gamma(random_ops._generator(generator),
                                              alpha.detach()._data)
        result = Tensor._make(drawn, None)
        ctx.save_for_backward(alpha, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        alpha, result = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, result), None


def _standard_gamma(input: Tensor, generator: Any = None) -> Tensor:
    """Gamma(input, 1) samples, one per element of `input` (the concentrations)."""
    return _StandardGamma.apply(input, generator)


def _sample_dirichlet(input: Tensor, generator: Any = None) -> Tensor:
    """Dirichlet samples over the last dimension of the concentrations `input`."""
    _float_input(input, "dirichlet")
    drawn = sampling_gamma.sample_dirichlet(random_ops._generator(generator),
                                            input.detach()._data)
    return Tensor._make(drawn, None)


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """d x / d alpha for Dirichlet samples x of concentrations alpha summing to total."""
    return Tensor._make(sampling_gamma.dirichlet_grad(x._data, alpha._data, total._data), None)
