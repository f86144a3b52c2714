"""torch.svd_lowrank and torch.pca_lowrank: a rank-q approximation of a matrix (or a batch)
from a randomized range finder (Halko, Martinsson and Tropp, 2009, algorithm 5.1 with
`niter` subspace iterations), made of Tensor ops, so gradients flow as in torch. The random
matrix is drawn with torch.randn from the global generator, as torch draws it, so a seeded
call gives torch's numbers."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import dtypes, linalg
from runtime._tensor import Tensor
from runtime.composite import matmul
from runtime.random_ops import randn

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A: Tensor) -> Any:  # noqa: N803 - the papers' and torch's name
    return A.dtype if A.is_floating_point() else dtypes.float32


def _minus_product(A: Tensor, M: Tensor | None, R: Tensor) -> Tensor:  # noqa: N803
    """(A - M) R, computed as torch computes it."""
    X = matmul(A, R)  # noqa: N806
    return X if M is None else X - matmul(M, R)


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:  # noqa: N803
    """An orthonormal basis Q (n x q) whose span approximates the range of A - M."""
    R = randn(A.shape[-1], q, dtype=_floating(A))  # noqa: N806
    Q = linalg.qr(_minus_product(A, M, R)).Q  # noqa: N806
    for _ in range(niter):
        Q = linalg.qr(_minus_product(A.mH, None if M is None else M.mH, Q)).Q  # noqa: N806
        Q = linalg.qr(_minus_product(A, M, Q)).Q  # noqa: N806
    return Q


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None) -> tuple:  # noqa: N803
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())  # noqa: N806
    if m < n:  # the algorithm wants a tall matrix: work on the adjoint
        A = A.mH  # noqa: N806
        M = None if M is None else M.mH  # noqa: N806
    Q = _approximate_basis(A, q, niter, M)  # noqa: N806
    B = matmul(Q.mH, A)  # noqa: N806
    if M is not None:
        B = B - matmul(Q.mH, M)  # noqa: N806
    U, S, Vh = linalg.svd(B, full_matrices=False)  # noqa: N806
    V = Vh.mH  # noqa: N806
    U = Q.matmul(U)  # noqa: N806
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """(U, S, V) with A - M ≈ U diag(S) V^H, of rank q."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """svd_lowrank of A with its column means taken off (center=True): principal
    components."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - ops.mean(A, (-2,), True), q, niter, None)
