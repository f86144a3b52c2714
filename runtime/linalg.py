"""torch.linalg: norms, inverse and solve, over the spec's ops.

`inv` and `solve` are the spec's linalg_inv_ex and linalg_solve_ex asked to check for a
singular matrix (their nodes are LinalgInvExBackward0 and LinalgSolveExBackward0, as in
PyTorch); the norms are linalg_vector_norm, with amax/amin for the matrix 1- and inf-norms,
as PyTorch composes them. Norms that need singular values (ord 2, -2, 'nuc') and the
determinant are not in gradgen.
"""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute
from runtime.kernels import LinAlgError

__all__ = ["LinAlgError", "inv", "inv_ex", "matrix_norm", "norm", "solve", "solve_ex",
           "vector_norm"]


def _tensors(function: str, **arguments: Any) -> None:
    """PyTorch's TypeError for a non-Tensor where a function takes a Tensor."""
    for position, (name, value) in enumerate(arguments.items(), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{function}(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """The `ord`-norm of the elements (over `dim`, else all of them)."""
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
    _tensors("linalg_matrix_norm", input=A)
    rows, columns = _two_dims(A, tuple(dim), "matrix_norm")
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, [rows, columns], keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(f"linalg.matrix_norm(ord={ord!r}) needs singular values, "
                                  "which gradgen does not have")
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    # |A| summed along one dim, then the largest (or smallest) of those sums along the other.
    summed, picked = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = ops.linalg_vector_norm(A, 1, [summed], keepdim, dtype=dtype)
    if not keepdim and picked > summed:
        picked -= 1  # the summed dimension is gone
    return (ops.amax if ord > 0 else ops.amin)(sums, [picked], keepdim)


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Any:
    """A vector norm over one dim (or all of them when neither ord nor dim is given), a
    matrix norm over two (or of a 2-D tensor when ord is given without dim)."""
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
    _tensors("linalg_inv_ex", A=A)
    return ops.linalg_inv_ex(A, check_errors=check_errors)


def inv(A: Any) -> Any:
    """A⁻¹, or LinAlgError for a singular matrix."""
    _tensors("linalg_inv", A=A)
    return ops.linalg_inv_ex(A, check_errors=True).inverse


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False) -> Any:
    _tensors("linalg_solve_ex", A=A, B=B)
    return ops.linalg_solve_ex(A, B, left=left, check_errors=check_errors)


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """X with AX = B (or XA = B when left=False); B may be a vector or a batch of them."""
    _tensors("linalg_solve", A=A, B=B)
    return ops.linalg_solve_ex(A, B, left=left, check_errors=True).result


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
