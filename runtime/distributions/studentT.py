"""torch.distributions.StudentT: Student's t distribution."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.chi2 import Chi2
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import EMPTY_SHAPE, broadcast_all, standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t of `df` degrees of freedom, shifted by loc and scaled by scale."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        for name in ("df", "loc", "scale"):
            setattr(new, name, getattr(self, name).expand(batch_shape))
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.df.clone()
        above_2 = self.df > 2
        m[above_2] = self.scale[above_2].pow(2) * self.df[above_2] / (self.df[above_2] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        x = standard_normal(self._extended_shape(sample_shape), self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * ops.rsqrt(z / self.df))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + ops.lgamma(0.5 * self.df) - ops.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ops.log1p(y**2.0 / self.df) - z

    def entropy(self) -> Tensor:
        lbeta = ops.lgamma(0.5 * self.df) + math.lgamma(0.5) - ops.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ops.digamma(0.5 * (self.df + 1))
                                         - ops.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
