"""torch.distributions.MultivariateNormal: the Gaussian over vectors, given by a
covariance matrix, a precision matrix or a lower Cholesky factor of the covariance."""

from __future__ import annotations

import math
from typing import Any

from runtime import composite, factories, linalg
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.distribution import Distribution
from runtime.distributions.utils import (
    EMPTY_SHAPE,
    broadcast_shapes,
    lazy_property,
    standard_normal,
)

__all__ = ["MultivariateNormal"]


def batch_mv(matrices: Tensor, vectors: Tensor) -> Tensor:
    """Matrix times vector, batched (the batch dimensions broadcast)."""
    return composite.matmul(matrices, vectors.unsqueeze(-1)).squeeze(-1)


def batch_mahalanobis(tril: Tensor, x: Tensor) -> Tensor:
    """The squared Mahalanobis distance xᵀ (L Lᵀ)⁻¹ x for lower-triangular L, batched.

    x's batch dimensions may be more than L's: they are rearranged so that one triangular
    solve, against a matrix of stacked right-hand sides per L, does the whole batch.
    """
    n = x.size(-1)
    x_batch_shape = x.shape[:-1]
    l_batch_dims = tril.dim() - 2
    outer = len(x_batch_shape) - l_batch_dims
    old_dims, new_dims = outer + l_batch_dims, outer + 2 * l_batch_dims
    new_shape = tuple(x.shape[:outer])
    for size_l, size_x in zip(tril.shape[:-2], x.shape[outer:-1], strict=True):
        new_shape += (size_x // size_l, size_l)
    x = x.reshape(new_shape + (n,))
    order = (list(range(outer)) + list(range(outer, new_dims, 2))
             + list(range(outer + 1, new_dims, 2)) + [new_dims])
    x = x.permute(order)
    flat_l = tril.reshape(-1, n, n)
    flat_x = x.reshape(-1, flat_l.size(0), n).permute(1, 2, 0)
    m = linalg.solve_triangular(flat_l, flat_x, upper=False).pow(2).sum(-2).t()
    m = m.reshape(x.shape[:-1])
    inverse_order = list(range(outer))
    for i in range(l_batch_dims):
        inverse_order += [outer + i, old_dims + i]
    return m.permute(inverse_order).reshape(x_batch_shape)


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of precision⁻¹, from the Cholesky factor of the
    precision matrix with its rows and columns reversed."""
    flipped = linalg.cholesky(precision.flip((-2, -1)))
    l_inverse = flipped.flip((-2, -1)).transpose(-2, -1)
    identity = factories.eye(precision.shape[-1], dtype=precision.dtype)
    return linalg.solve_triangular(l_inverse, identity, upper=False)


def cholesky_inverse(tril: Tensor) -> Tensor:
    """(L Lᵀ)⁻¹ from the lower Cholesky factor L."""
    identity = factories.eye(tril.shape[-1], dtype=tril.dtype)
    inverse = linalg.solve_triangular(tril, identity, upper=False)
    return composite.matmul(inverse.mT, inverse)


_MATRIX_MESSAGES = {
    "scale_tril": "scale_tril matrix must be at least two-dimensional, ",
    "covariance_matrix": "covariance_matrix must be at least two-dimensional, ",
    "precision_matrix": "precision_matrix must be at least two-dimensional, ",
}


class MultivariateNormal(Distribution):
    """N(loc, Σ) over vectors of loc's last dimension."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {name: value for name, value in (("scale_tril", scale_tril),
                                                 ("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix))
                 if value is not None}
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given.items()
        if matrix.dim() < 2:
            raise ValueError(_MATRIX_MESSAGES[name]
                             + "with optional leading batch dimensions")
        batch_shape = Size(broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> Size:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return composite.matmul(tril, tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        squares = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return squares.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        eps = standard_normal(self._extended_shape(sample_shape), self.loc.dtype)
        return self.loc + batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        constant = self._event_shape[0] * math.log(2 * math.pi)
        return -0.5 * (constant + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
