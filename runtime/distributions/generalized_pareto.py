"""torch.distributions.GeneralizedPareto: the peaks-over-threshold distribution."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import factories, predicates, random_ops
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import EMPTY_SHAPE, broadcast_all, is_number

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc, scale, concentration); concentration 0 is the exponential distribution.

    As torch's, log_prob and the survival functions compare the concentration with a
    float32 zero, so they work on float32 parameters only (isclose refuses the mix)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = is_number(loc) and is_number(scale) and is_number(concentration)
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expand_parameters(GeneralizedPareto, ("loc", "scale", "concentration"),
                                       batch_shape, _instance)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        u = random_ops.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def _safe_concentration(self, zero: Any) -> tuple[Tensor, Tensor]:
        eq_zero = predicates.isclose(self.concentration, zero)
        safe = ops.where(eq_zero, factories.ones_like(self.concentration), self.concentration)
        return eq_zero, safe

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration(factories.tensor(0.0))
        y = 1 / safe + factories.ones_like(z)
        where_nonzero = ops.where(y == 0, y, y * ops.log1p(safe * z))
        return -self.scale.log() - ops.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._safe_concentration(factories.tensor(0.0))
        return ops.where(eq_zero, -z, -ops.log1p(safe * z) / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return ops.log1p(-ops.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return ops.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, safe = self._safe_concentration(factories.zeros_like(self.concentration))
        logu = ops.log1p(-value)
        where_nonzero = self.loc + self.scale / safe * ops.expm1(-safe * logu)
        return ops.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = ops.where(valid, self.concentration, 0.5)
        return ops.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = ops.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return ops.where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        return (ops.log(self.scale) + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = ops.where(self.concentration < 0, lower - self.scale / self.concentration,
                          math.inf)
        return constraints.interval(lower, upper)
