"""torch.distributions.Gamma: Gamma(concentration, rate)."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import factories
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.samplers import _standard_gamma
from runtime.distributions.utils import EMPTY_SHAPE, broadcast_all, is_number
from runtime.legacy import finfo

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution of shape `concentration` and inverse scale `rate`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = is_number(concentration) and is_number(rate)
        batch_shape = Size() if scalar else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_parameters(Gamma, ("concentration", "rate"), batch_shape,
                                       _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # in place, outside the graph
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = factories.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration, self.rate)
                + ops.xlogy(self.concentration - 1, value)
                - self.rate * value - ops.lgamma(self.concentration))

    def entropy(self) -> Tensor:
        return (self.concentration - ops.log(self.rate) + ops.lgamma(self.concentration)
                + (1.0 - self.concentration) * ops.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return ops.lgamma(x + 1) + (x + 1) * ops.log(-y.reciprocal())
