"""torch._standard_gamma, torch._standard_gamma_grad, torch._sample_dirichlet, torch.poisson
and torch.binomial: the samplers under Gamma, Chi2, Beta, Dirichlet, Poisson and Binomial,
drawing torch's numbers.

_standard_gamma is differentiable (its sample moves with alpha at a fixed CDF value: the
implicit reparameterisation gradient, torch's `_standard_gamma_grad`); it and poisson are
the spec's ops, which record torch's nodes (StandardGammaBackward0, PoissonBackward0).
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime import random_ops, sampling_serial
from runtime._tensor import Tensor, _scalar_type_name

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad",
           "poisson", "binomial"]


def _float_input(input: Tensor, kernel: str) -> None:
    if input._data.dtype.kind not in "fV":
        random_ops._require_float(input._data, kernel)


# torch._standard_gamma_grad and torch._standard_gamma are the spec's ops (its kernels draw
# as torch's; _standard_gamma records StandardGammaBackward0).
_standard_gamma_grad = ops._standard_gamma_grad
_standard_gamma = ops._standard_gamma


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


# torch.poisson is the spec's op (PoissonBackward0: no gradient flows back).
poisson = ops.poisson


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

