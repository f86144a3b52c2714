"""torch.distributions.ExponentialFamily: the base class of the exponential families."""

from __future__ import annotations

from typing import Any

from runtime import autograd
from runtime._tensor import Tensor
from runtime.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the exponential family, p(x; θ) = exp(<t(x), θ> - F(θ) + k(x)):
    its entropy comes from the log normalizer F by automatic differentiation (Bregman
    divergence), and so does the KL divergence between two members of one family."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        result: Any = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*params)
        gradients = autograd.grad(log_normalizer.sum(), params, create_graph=True)
        result += log_normalizer
        for param, gradient in zip(params, gradients, strict=True):
            result -= (param * gradient).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
