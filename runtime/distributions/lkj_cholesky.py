"""torch.distributions.LKJCholesky: Cholesky factors of random correlation matrices
(Lewandowski, Kurowicka and Joe), sampled by the onion method."""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import factories, linalg, random_ops
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.beta import Beta
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import EMPTY_SHAPE, broadcast_all
from runtime.legacy import finfo

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """L with L Lᵀ a dim x dim correlation matrix whose density is proportional to
    det(L Lᵀ) ** (concentration - 1)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = factories.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = ops.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = random_ops.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        u_hypersphere = u_normal / linalg.vector_norm(u_normal, dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)
        w = ops.sqrt(y) * u_hypersphere
        tiny = finfo(w.dtype).tiny
        diagonal = ops.clamp(1 - ops.sum(w**2, dim=-1), min=tiny).sqrt()
        w += diagonal.diag_embed()
        return w

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = factories.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = ops.sum(order * diagonal.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = ops.lgamma(alpha) * dm1
        numerator = ops.mvlgamma(alpha - 0.5, dm1)
        return unnormalized - (0.5 * dm1 * math.log(math.pi) + numerator - denominator)
