"""torch.distributions.Cauchy: the Lorentz distribution."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import factories, random_ops, sampling_serial
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import EMPTY_SHAPE, broadcast_all, is_number

__all__ = ["Cauchy"]


def standard_cauchy(shape: Any, dtype: Any) -> Tensor:
    """Cauchy(0, 1) values of `shape`, as torch's `empty(shape).cauchy_()` draws them."""
    count = math.prod(shape)
    values = sampling_serial.cauchy(random_ops._generator(None), count)
    return factories.tensor(values.reshape(tuple(shape)), dtype=dtype)


class Cauchy(Distribution):
    """Cauchy(loc, scale): the ratio of two independent standard normals, shifted and
    scaled; no mean, infinite variance."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if is_number(loc) and is_number(scale) else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return self._expand_parameters(Cauchy, ("loc", "scale"), batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return factories.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return factories.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        eps = standard_cauchy(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
