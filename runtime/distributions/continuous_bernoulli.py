"""torch.distributions.ContinuousBernoulli: the normalised continuous counterpart of the
Bernoulli density on [0, 1] (Loaiza-Ganem and Cunningham, 2019). Near probs = 1/2 the
normaliser is singular, so there (inside `lims`) Taylor expansions stand in for it."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import factories, grad_mode, random_ops
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.bernoulli import expand_probs_or_logits, one_of
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.utils import (
    EMPTY_SHAPE,
    broadcast_all,
    clamp_probs,
    is_number,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from runtime.nn import functional

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Density proportional to probs^x (1 - probs)^(1 - x) on [0, 1]."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(
                    self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_number(given) else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        batch_shape = Size(batch_shape)
        new = expand_probs_or_logits(self, ContinuousBernoulli, batch_shape, batch_shape,
                                     _instance)
        new._lims = self._lims
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self) -> Tensor:
        return ops.le(self.probs, self._lims[0]) | ops.gt(self.probs, self._lims[1])

    def _cut_probs(self) -> Tensor:
        return ops.where(self._outside_unstable_region(), self.probs,
                         self._lims[0] * factories.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """The log of the normalising constant."""
        cut = self._cut_probs()
        below_half = ops.where(ops.le(cut, 0.5), cut, factories.zeros_like(cut))
        above_half = ops.where(ops.ge(cut, 0.5), cut, factories.ones_like(cut))
        log_norm = (ops.log(ops.abs(ops.log1p(-cut) - ops.log(cut)))
                    - ops.where(ops.le(cut, 0.5), ops.log1p(-2.0 * below_half),
                                ops.log(2.0 * above_half - 1.0)))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ops.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (ops.log1p(-cut) - ops.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ops.pow(x, 2)) * x
        return ops.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return ops.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / ops.pow(1.0 - 2.0 * cut, 2)
                     + 1.0 / ops.pow(ops.log1p(-cut) - ops.log(cut), 2))
        x = ops.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ops.where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        u = random_ops.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with grad_mode.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        u = random_ops.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((ops.pow(cut, value) * ops.pow(1.0 - cut, 1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = ops.where(self._outside_unstable_region(), cdfs, value)
        return ops.where(ops.le(value, 0.0), factories.zeros_like(value),
                         ops.where(ops.ge(value, 1.0), factories.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inverse = ((ops.log1p(-cut + value * (2.0 * cut - 1.0)) - ops.log1p(-cut))
                   / (ops.log(cut) - ops.log1p(-cut)))
        return ops.where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Tensor:
        log_probs0 = ops.log1p(-self.probs)
        log_probs1 = ops.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        outside = ops.le(x, self._lims[0] - 0.5) | ops.gt(x, self._lims[1] - 0.5)
        cut = ops.where(outside, x, (self._lims[0] - 0.5) * factories.ones_like(x))
        log_norm = ops.log(ops.abs(ops.expm1(cut))) - ops.log(ops.abs(cut))
        taylor = 0.5 * x + ops.pow(x, 2) / 24.0 - ops.pow(x, 4) / 2880.0
        return ops.where(outside, log_norm, taylor)
