"""torch.distributions.NegativeBinomial: failures before `total_count` successes."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import grad_mode
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.bernoulli import expand_probs_or_logits, one_of
from runtime.distributions.distribution import Distribution
from runtime.distributions.gamma import Gamma
from runtime.distributions.samplers import poisson
from runtime.distributions.utils import (
    EMPTY_SHAPE,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from runtime.nn import functional

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Failures of Bernoulli(probs) trials before the total_count-th success (probs being
    the probability of a failure, as in torch); sampled as a gamma-Poisson mixture."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        batch_shape = Size(batch_shape)
        new = expand_probs_or_logits(self, NegativeBinomial, batch_shape, batch_shape,
                                     _instance)
        new.total_count = self.total_count.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ops.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=ops.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        with grad_mode.no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        unnormalized = (self.total_count * functional.logsigmoid(-self.logits)
                        + value * functional.logsigmoid(self.logits))
        normalization = (-ops.lgamma(self.total_count + value) + ops.lgamma(1.0 + value)
                         + ops.lgamma(self.total_count))
        normalization = normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalized - normalization
