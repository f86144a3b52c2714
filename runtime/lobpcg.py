"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
generalized problem A x = λ B x, by Knyazev's locally optimal block preconditioned
conjugate gradient method.

Each step runs Rayleigh-Ritz on the span of the current block X, the (preconditioned)
residuals W and the previous directions P, after making that basis B-orthonormal by
Stathopoulos and Wu's SVQB (an eigen-decomposition of its Gram matrix that drops directions
it cannot tell apart). The start block is drawn with torch.randn, as torch draws it, and the
checks of the arguments, the tolerance and the defaults are torch's; the iteration is this
method's textbook form, not a copy of torch's "ortho" variant, so the eigenvalues agree with
torch's to the tolerance and the eigenvectors up to sign and to the tolerance.

Where gradgen differs: torch differentiates lobpcg (through an autograd function for a
symmetric A); gradgen's computes on arrays and refuses an A or B that requires grad rather
than give a wrong gradient. `tracker` and the ortho_* parameters are accepted and unused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes, grad_mode
from runtime._tensor import Tensor
from runtime.random_ops import randn

__all__ = ["lobpcg"]

_EPS = {np.dtype(np.float32): 1.2e-07, np.dtype(np.float64): 2.23e-16}


def _check(A: Tensor, B: Tensor | None, X: Tensor | None, k: Any, n: Any) -> tuple:  # noqa: N803
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    if grad_mode.is_grad_enabled() and any(
            t is not None and t.requires_grad for t in (A, B)):
        raise NotImplementedError("gradgen's lobpcg has no gradient (torch differentiates it "
                                  "for a symmetric A): call it under torch.no_grad() or on "
                                  "A.detach()")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    return m, k, n


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None,  # noqa: N803
           X: Tensor | None = None, n: int | None = None, iK: Tensor | None = None,  # noqa: N803
           niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker: Any = None, ortho_iparams: Any = None,
           ortho_fparams: Any = None, ortho_bparams: Any = None) -> tuple[Tensor, Tensor]:
    """(E, X): the k eigenvalues and eigenvectors, largest first (largest=False: smallest)."""
    m, k, n = _check(A, B, X, k, n)
    dtype = A.dtype if A.is_floating_point() else dtypes.float32
    tol = _EPS[dtype.numpy] ** 0.5 if tol is None else tol
    settings = {"k": k, "niter": 1000 if niter is None else niter, "tol": tol,
                "largest": True if largest is None else largest,
                "iK": None if iK is None else iK._data}
    if A.dim() > 2:
        batch = A.shape[:-2]
        a = A._data.reshape(-1, m, m)
        b = None if B is None else B._data.reshape(-1, m, m)
        x = None if X is None else X._data.reshape(-1, m, n)
        values, vectors = [], []
        for i in range(a.shape[0]):
            start = randn((m, n), dtype=dtype)._data if x is None else x[i]
            e, v = _run(a[i], None if b is None else b[i], _start(start, m, n), settings)
            values.append(e)
            vectors.append(v)
        return (Tensor._make(np.stack(values).reshape(*batch, k), None),
                Tensor._make(np.stack(vectors).reshape(*batch, m, k), None))
    start = randn((m, n), dtype=dtype)._data if X is None else X._data
    e, v = _run(A._data, None if B is None else B._data, _start(start, m, n), settings)
    return Tensor._make(e, None), Tensor._make(v, None)


def _start(x: np.ndarray, m: int, n: int) -> np.ndarray:
    if x.shape != (m, n):
        raise AssertionError(f"X shape mismatch: got torch.Size({list(x.shape)}), expected "
                             f"{(m, n)}")
    return x


def _svqb(basis: np.ndarray, b: np.ndarray | None, tol: float) -> np.ndarray:
    """A B-orthonormal basis of the span of `basis`'s columns, dropping the directions its
    Gram matrix cannot tell apart."""
    gram = basis.T @ (basis if b is None else b @ basis)
    scale = 1 / np.sqrt(np.maximum(np.abs(np.diag(gram)), np.finfo(basis.dtype).tiny))
    values, vectors = np.linalg.eigh(gram * scale[:, None] * scale[None, :])
    keep = values > tol * np.abs(values).max()
    return (basis * scale) @ (vectors[:, keep] / np.sqrt(values[keep]))


def _rayleigh_ritz(a: np.ndarray, basis: np.ndarray, n: int, largest: bool) -> tuple:
    """The n extreme Ritz values of `a` on a B-orthonormal basis, and their coefficients."""
    values, vectors = np.linalg.eigh(basis.T @ a @ basis)
    order = np.argsort(values)[::-1] if largest else np.argsort(values)
    return values[order[:n]], vectors[:, order[:n]]


def _run(a: np.ndarray, b: np.ndarray | None, x: np.ndarray, settings: dict) -> tuple:
    with np.errstate(all="ignore"):  # a zero matrix's 0/0 is no warning in torch either
        return _iterate(a, b, x, settings)


def _iterate(a: np.ndarray, b: np.ndarray | None, x: np.ndarray, settings: dict) -> tuple:
    n, tol, largest = x.shape[1], settings["tol"], settings["largest"]
    eps = _EPS.get(a.dtype, 2.23e-16)
    x = _svqb(x.astype(a.dtype), b, eps)[:, :n]
    values, coefficients = _rayleigh_ritz(a, x, n, largest)
    x = x @ coefficients
    p = None
    norm_a = np.linalg.norm(a)
    norm_b = 1.0 if b is None else np.linalg.norm(b)
    for _ in range(settings["niter"]):
        bx = x if b is None else b @ x
        residual = a @ x - bx * values
        error = np.linalg.norm(residual, axis=0) / (
            (norm_a + np.abs(values) * norm_b) * np.linalg.norm(x, axis=0))
        if (error < tol).sum() >= settings["k"]:
            break
        w = residual if settings["iK"] is None else settings["iK"] @ residual
        blocks = [x, w] if p is None else [x, w, p]
        basis = _svqb(np.concatenate(blocks, axis=1), b, eps)
        values, coefficients = _rayleigh_ritz(a, basis, n, largest)
        new_x = basis @ coefficients
        # the new directions: the part of the step outside the old block
        p = new_x - x @ (x.T @ (new_x if b is None else b @ new_x))
        x = new_x
    return values[:settings["k"]].copy(), np.ascontiguousarray(x[:, :settings["k"]])
