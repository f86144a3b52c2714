"""torch.distributions.Bernoulli: 1 with probability `probs`, else 0."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import factories, grad_mode, random_ops
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.utils import (
    EMPTY_SHAPE,
    broadcast_all,
    is_number,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from runtime.nn import functional

__all__ = ["Bernoulli"]


def one_of(probs: Any, logits: Any) -> None:
    """torch's check that exactly one of the two parametrisations was given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def expand_probs_or_logits(self: Any, cls: type, batch_shape: Any, param_shape: Any,
                           _instance: Any) -> Any:
    """`expand` for a distribution given by probs or logits: each of the two it has
    computed so far is expanded to `param_shape`."""
    new = self._get_checked_instance(cls, _instance)
    for name in ("probs", "logits"):
        if name in self.__dict__:
            setattr(new, name, getattr(self, name).expand(param_shape))
            new._param = getattr(new, name)
    return new


class Bernoulli(ExponentialFamily):
    """A coin that falls on 1 with probability `probs` (or sigmoid(`logits`))."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_number(given) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        batch_shape = Size(batch_shape)
        new = expand_probs_or_logits(self, Bernoulli, batch_shape, batch_shape, _instance)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with grad_mode.no_grad():
            return random_ops.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return functional.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                           reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = factories.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (ops.log(self.probs / (1 - self.probs)),)  # logit(probs)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return ops.log1p(ops.exp(x))
