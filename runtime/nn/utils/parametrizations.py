"""torch.nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal written as
parametrizations (runtime/nn/utils/parametrize.py), with torch's modules, state-dict keys
and random draws.

orthogonal's maps: "matrix_exp" (the default for square matrices) and "cayley" turn a
skew-symmetric matrix into an orthogonal one; "householder" (the default otherwise) is a
product of reflections. With use_trivialization (the default) the result is multiplied by
a fixed orthogonal `base`, which assigning to the weight sets. The QR that makes a matrix
orthogonal is numpy's where torch calls geqrf + householder_product: the same
factorisation, equal to rounding.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

import numpy as np

from generated import ops
from runtime import factories, linalg, random_ops
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute
from runtime.composite import normalize
from runtime.grad_mode import no_grad
from runtime.nn.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from runtime.nn.module import Module
from runtime.nn.utils import parametrize
from runtime.nn.utils.weight_norm import _weight_norm, norm_except_dim
from runtime.predicates import allclose

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _householder_product(reflectors: Tensor, tau: Tensor) -> Tensor:
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_iᵀ, v_i column i of
    `reflectors` below the diagonal with a one on it (torch.linalg.householder_product),
    written with differentiable ops."""
    n, k = reflectors.shape[-2], reflectors.shape[-1]
    q = factories.eye(n, dtype=reflectors.dtype).expand(*reflectors.shape[:-2], n, n)
    rows = factories.arange(n)
    for i in range(k):
        below = (rows > i).to(reflectors.dtype)
        unit = (rows == i).to(reflectors.dtype)
        v = reflectors[..., :, i] * below + unit
        qv = q @ v.unsqueeze(-1)
        q = q - tau[..., i, None, None] * qv * v.unsqueeze(-2)
    return q[..., :, :k]


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    identity = factories.eye(k, dtype=q.dtype)
    eps = 10.0 * n * float(np.finfo(q.detach()._data.dtype).eps)
    return allclose(q.mT @ q, identity, atol=eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a QR of `a`, its columns' signs those of R's diagonal."""
    q, r = linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _householder_inverse(Q: Tensor, transpose: bool) -> Tensor:
    """The reflectors whose householder map gives Q: Q's geqrf (numpy's raw QR, LAPACK's
    layout) with the diagonal replaced by the signs the map multiplies by (flipped where a
    reflector is the identity, tau = 0)."""
    reflectors, tau = np.linalg.qr(Q.detach()._data, mode="raw")
    A = np.ascontiguousarray(np.swapaxes(reflectors, -1, -2))
    diagonal = np.sign(np.diagonal(A, axis1=-2, axis2=-1))
    diagonal = np.where(tau == 0.0, -diagonal, diagonal)
    rows = np.arange(diagonal.shape[-1])
    A[..., rows, rows] = diagonal
    result = factories.tensor(A, dtype=Q.dtype)
    return result.mT if transpose else result


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps a matrix (or batch) to an orthogonal one of the same shape."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                identity = factories.eye(n, dtype=A.dtype)
                Q = linalg.solve(ops.add(identity, A, alpha=-0.5),
                                 ops.add(identity, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            return _householder_inverse(Q, transpose)
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = random_ops.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
            Q = _make_orthogonal(ops.cat([Q, N], dim=-1))
        self.base = Q
        neg_identity = factories.zeros_like(Q_init)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep `module.name` an orthogonal matrix (or batch of them) through training."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """weight = g * v / ||v|| from (g, v), the parametrization's two originals."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise `module.name` by its direction and magnitude (original0 = g,
    original1 = v)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """weight / sigma, sigma its largest singular value by power iteration on buffers
    _u and _v (15 iterations when made, n_power_iterations per training forward)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            rows, cols = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty(rows).normal_(0, 1)
                v = weight_mat.new_empty(cols).normal_(0, 1)
                self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():  # the buffers are refined in place, as torch's out= does
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(ops.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(ops.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = ops.dot(self._u.clone(), ops.mv(weight_mat, self._v.clone()))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide `module.name` by its spectral norm at every read."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
