"""torch._standard_gamma, torch._standard_gamma_grad and torch._sample_dirichlet: the
samplers under Gamma, Chi2, Beta and Dirichlet, drawing torch's numbers.

_standard_gamma is differentiable (its sample moves with alpha at a fixed CDF value: the
implicit reparameterisation gradient, torch's `_standard_gamma_grad`); it records an
autograd Function's node, where torch records StandardGammaBackward0.
"""

from __future__ import annotations

from typing import Any

from runtime import modes as _modes
from runtime import random_ops, sampling_serial
from runtime._tensor import Tensor, _scalar_type_name
from runtime.autograd import Function

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad",
           "poisson", "binomial"]


def _float_input(input: Tensor, kernel: str) -> None:
    if input._data.dtype.kind not in "fV":
        random_ops._require_float(input._data, kernel)


def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """d output / d self for standard gamma samples `output` of concentrations `self`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(_standard_gamma_grad, (self, output), {})
        if heard is not _modes.PASS:
            return heard
    return Tensor._make(sampling_serial.standard_gamma_grad(self._data, output._data), None)


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx: Any, alpha: Tensor, generator: Any) -> Tensor:
        _float_input(alpha, "gamma_cpu")
        drawn = sampling_serial.standard_gamma(random_ops._generator(generator),
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
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(_standard_gamma, (input, generator), {})
        if heard is not _modes.PASS:
            return heard
    return _StandardGamma.apply(input, generator)


def _sample_dirichlet(input: Tensor, generator: Any = None) -> Tensor:
    """Dirichlet samples over the last dimension of the concentrations `input`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(_sample_dirichlet, (input, generator), {})
        if heard is not _modes.PASS:
            return heard
    _float_input(input, "dirichlet")
    drawn = sampling_serial.sample_dirichlet(random_ops._generator(generator),
                                            input.detach()._data)
    return Tensor._make(drawn, None)


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """d x / d alpha for Dirichlet samples x of concentrations alpha summing to total."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(_dirichlet_grad, (x, alpha, total), {})
        if heard is not _modes.PASS:
            return heard
    return Tensor._make(sampling_serial.dirichlet_grad(x._data, alpha._data, total._data), None)


class _Poisson(Function):
    """torch.poisson: no gradient flows back (torch's formula is zeros)."""

    @staticmethod
    def forward(ctx: Any, rates: Tensor, generator: Any) -> Tensor:
        data = rates.detach()._data
        if data.dtype.kind not in "fV":
            random_ops._require_float(data, "poisson_cpu")
        if (data < 0).any():
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        return Tensor._make(sampling_serial.poisson(random_ops._generator(generator), data),
                            None)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        return grad * 0, None


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson samples of rates `input`, as torch.poisson draws them."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(poisson, (input, generator), {})
        if heard is not _modes.PASS:
            return heard
    return _Poisson.apply(input, generator)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial(count, prob) samples (count and prob broadcast), as torch.binomial draws
    them."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(binomial, (count, prob, generator), {})
        if heard is not _modes.PASS:
            return heard
    if count.dtype.is_floating_point is False:
        raise ValueError("binomial only supports floating-point dtypes for count, got: "
                         f"{_scalar_type_name(count._data)}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_scalar_type_name(prob._data)} but "
                           f"expected {_scalar_type_name(count._data)}")
    drawn = sampling_serial.binomial(random_ops._generator(generator),
                                     count.detach()._data, prob.detach()._data)
    return Tensor._make(drawn, None)

