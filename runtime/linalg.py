"""torch.linalg: norms, inverse and solve, over the spec's ops.

`inv` and `solve` are the spec's linalg_inv_ex and linalg_solve_ex asked to check for a
singular matrix (their nodes are LinalgInvExBackward0 and LinalgSolveExBackward0, as in
PyTorch); the norms are linalg_vector_norm, with amax/amin for the matrix 1- and inf-norms,
as PyTorch composes them. Norms that need singular values (ord 2, -2, 'nuc') and the
determinant are not in gradgen.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute
from runtime.kernels import LinAlgError

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "eigvalsh", "inv",
           "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matrix_exp",
           "matrix_norm", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "vector_norm"]


def _tensors(function: str, **arguments: Any) -> None:
    """PyTorch's TypeError for a non-Tensor where a function takes a Tensor."""
    for position, (name, value) in enumerate(arguments.items(), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{function}(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """The `ord`-norm of the elements (over `dim`, else all of them)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(vector_norm, (x, ord, dim, keepdim), {"dtype": dtype})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_vector_norm", input=x)
    dims = [dim] if isinstance(dim, int) else dim
    return ops.linalg_vector_norm(x, ord, dims, keepdim, dtype=dtype)


def _two_dims(A: Any, dim: Any, name: str) -> tuple[int, int]:
    """matrix_norm's two dims, made non-negative, with PyTorch's checks."""
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    for d in dim:
        if not -A.ndim <= d < A.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-A.ndim}, {A.ndim - 1}], but got {d})")
    first, second = (d % A.ndim for d in dim)
    if first == second:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return first, second


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """'fro' (the 2-norm of the entries), or 1 / -1 (largest / smallest column sum of |A|)
    and inf / -inf (the same for rows)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(matrix_norm, (A, ord, dim, keepdim), {"dtype": dtype})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_matrix_norm", input=A)
    rows, columns = _two_dims(A, tuple(dim), "matrix_norm")
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, [rows, columns], keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, rows, columns, keepdim, dtype)
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # |A| summed along one dim, then the largest (or smallest) of those sums along the other.
    summed, picked = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = ops.linalg_vector_norm(A, 1, [summed], keepdim, dtype=dtype)
    if not keepdim and picked > summed:
        picked -= 1  # the summed dimension is gone
    return (ops.amax if ord > 0 else ops.amin)(sums, [picked], keepdim)


def _singular_value_norm(A: Any, ord: Any, rows: int, columns: int, keepdim: bool,
                         dtype: Any) -> Any:
    """The norms of the singular values: their sum ('nuc'), largest (2) or smallest (-2)."""
    if dtype is not None:
        A = A.to(dtype)
    moved = A.movedim((rows, columns), (-2, -1)) if (rows, columns) != (A.ndim - 2, A.ndim - 1) \
        else A
    S = ops._linalg_svd(moved, False, True)[1]  # U and Vh too: the derivatives need them
    value = S.sum(-1) if ord == "nuc" else (ops.amax if ord == 2 else ops.amin)(S, [-1])
    if keepdim:
        for dim in sorted((rows, columns)):
            value = value.unsqueeze(dim)
    return value


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Any:
    """A vector norm over one dim (or all of them when neither ord nor dim is given), a
    matrix norm over two (or of a 2-D tensor when ord is given without dim)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(norm, (A, ord, dim, keepdim), {"dtype": dtype})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_norm", input=A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or (dim is not None and len(dim) == 2):
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def inv_ex(A: Any, *, check_errors: bool = False) -> Any:
    """(inverse, info): info is 0, or where elimination met a zero pivot (then the inverse
    is meaningless) unless check_errors raises instead."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(inv_ex, (A,), {"check_errors": check_errors})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_inv_ex", A=A)
    return ops.linalg_inv_ex(A, check_errors=check_errors)


def inv(A: Any) -> Any:
    """A⁻¹, or LinAlgError for a singular matrix."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(inv, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_inv", A=A)
    return ops.linalg_inv_ex(A, check_errors=True).inverse


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(solve_ex, (A, B), {"left": left, "check_errors": check_errors})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_solve_ex", A=A, B=B)
    return ops.linalg_solve_ex(A, B, left=left, check_errors=check_errors)


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """X with AX = B (or XA = B when left=False); B may be a vector or a batch of them."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(solve, (A, B), {"left": left})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_solve", A=A, B=B)
    return ops.linalg_solve_ex(A, B, left=left, check_errors=True).result


_SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_LuFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
_SvdResult = namedtuple("linalg_svd", ["U", "S", "Vh"])


def det(A: Any) -> Any:
    """det A (LinalgDetBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(det, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_det", A=A)
    return ops._linalg_det(A)[0]


def slogdet(A: Any) -> Any:
    """(sign, log |det A|)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(slogdet, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_slogdet", A=A)
    sign_, logabsdet = ops._linalg_slogdet(A)[:2]
    return _SlogdetResult(sign_, logabsdet)


def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cholesky_ex, (A,), {"upper": upper, "check_errors": check_errors})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_cholesky_ex", A=A)
    return ops.linalg_cholesky_ex(A, upper=upper, check_errors=check_errors)


def cholesky(A: Any, *, upper: bool = False) -> Any:
    """L with A = L Lᵀ (U = Lᵀ with upper=True), or LinAlgError if A is not positive
    definite."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cholesky, (A,), {"upper": upper})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_cholesky", A=A)
    return ops.linalg_cholesky_ex(A, upper=upper, check_errors=True)[0]


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(solve_triangular, (A, B), {"upper": upper, "left": left,
            "unitriangular": unitriangular})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_solve_triangular", A=A, B=B)
    return ops.linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lu_factor_ex, (A,), {"pivot": pivot, "check_errors": check_errors})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_lu_factor_ex", A=A)
    return ops.linalg_lu_factor_ex(A, pivot=pivot, check_errors=check_errors)


def lu_factor(A: Any, *, pivot: bool = True) -> Any:
    """(LU, pivots), with torch's error for a zero pivot."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lu_factor, (A,), {"pivot": pivot})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_lu_factor", A=A)
    LU, pivots, info = ops.linalg_lu_factor_ex(A, pivot=pivot)
    failed = info.detach().numpy().reshape(-1).nonzero()[0]
    if failed.size:
        index = int(failed[0])
        where = f"(Batch element {index}): " if info.ndim else ""
        k = int(info.detach().numpy().reshape(-1)[index])
        raise LinAlgError(f"torch.linalg.lu_factor: {where}U[{k},{k}] is zero and using it on "
                          "lu_solve would result in a division by zero. If you still want to "
                          "perform the factorization, consider calling linalg.lu(A, pivot) or "
                          "linalg.lu_factor_ex(A, pivot)")
    return _LuFactorResult(LU, pivots)


def lu(A: Any, *, pivot: bool = True) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lu, (A,), {"pivot": pivot})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_lu", A=A)
    return ops.linalg_lu(A, pivot=pivot)


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lu_solve, (LU, pivots, B), {"left": left, "adjoint": adjoint})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_lu_solve", LU=LU, pivots=pivots, B=B)
    return ops.linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def svd(A: Any, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """(U, S, Vh) with A = U diag(S) Vh."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(svd, (A, full_matrices), {"driver": driver})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_svd", A=A)
    return _SvdResult(*ops._linalg_svd(A, full_matrices, True, driver=driver))


def svdvals(A: Any, *, driver: Any = None) -> Any:
    """The singular values, descending (U and Vh are computed too: the derivatives need
    them)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(svdvals, (A,), {"driver": driver})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_svdvals", A=A)
    return ops._linalg_svd(A, False, True, driver=driver)[1]


def eigh(A: Any, UPLO: str = "L") -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(eigh, (A, UPLO), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_eigh", A=A)
    return ops._linalg_eigh(A, UPLO)


def eigvalsh(A: Any, UPLO: str = "L") -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(eigvalsh, (A, UPLO), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_eigvalsh", A=A)
    return ops._linalg_eigh(A, UPLO, True)[0]


def qr(A: Any, mode: str = "reduced") -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(qr, (A, mode), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_qr", A=A)
    return ops.linalg_qr(A, mode)


def matrix_exp(A: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(matrix_exp, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_matrix_exp", A=A)
    return ops.linalg_matrix_exp(A)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cross, (input, other), {"dim": dim})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_cross", input=input, other=other)
    return ops.linalg_cross(input, other, dim=dim)


def pinv(A: Any, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
         rtol: Any = None) -> Any:
    """The pseudo-inverse; rcond is the older name of rtol."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(pinv, (A, rcond, hermitian), {"atol": atol, "rtol": rtol})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_pinv", A=A)
    if rcond is not None:
        rtol = rcond
    return ops.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lstsq, (A, B, rcond), {"driver": driver})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_lstsq", A=A, B=B)
    return ops.linalg_lstsq(A, B, rcond, driver=driver)


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
