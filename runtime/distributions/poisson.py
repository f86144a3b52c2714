"""torch.distributions.Poisson: counts of events at a rate."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import grad_mode
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.samplers import poisson
from runtime.distributions.utils import (
    EMPTY_SHAPE,
    broadcast_all,
    is_number,
)

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson(rate): counts of events at `rate` per unit."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if is_number(rate) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expand_parameters(Poisson, ("rate",), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with grad_mode.no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (ops.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return ops.exp(x)
