"""torch.linalg: norms, inverse and solve, over the spec's ops.

`inv` and `solve` are the spec's linalg_inv_ex and _linalg_solve_ex asked to check for a
singular matrix (their nodes are LinalgInvExBackward0 and LinalgSolveExBackward0, as in
PyTorch); the norms are linalg_vector_norm, with amax/amin for the matrix 1- and inf-norms,
as PyTorch composes them. Norms that need singular values (ord 2, -2, 'nuc') and the
determinant are not in gradgen.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from generated import ops
from runtime import composite, dtypes, factories, kernels
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute
from runtime.kernels import LinAlgError

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "eig", "eigvals", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex",
           "ldl_solve", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
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
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(vector_norm, (x, ord, dim, keepdim), {"dtype": dtype})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_vector_norm", input=x)
    dims = [dim] if isinstance(dim, int) else dim
    return ops.linalg_vector_norm(x, ord, dims, keepdim, dtype=dtype)


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Any:
    """'fro' (the 2-norm of the entries), or 1 / -1 (largest / smallest column sum of |A|)
    and inf / -inf (the same for rows)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(matrix_norm, (A, ord, dim, keepdim), {"dtype": dtype})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_matrix_norm", input=A)
    return composite.matrix_norm_of(A, ord, dim, keepdim, dtype)


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
    result, _, _, info = ops._linalg_solve_ex(A, B, left=left, check_errors=check_errors)
    return _SolveExResult(result, info)


def solve(A: Any, B: Any, *, left: bool = True) -> Any:
    """X with AX = B (or XA = B when left=False); B may be a vector or a batch of them."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(solve, (A, B), {"left": left})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_solve", A=A, B=B)
    return ops._linalg_solve_ex(A, B, left=left, check_errors=True).result


_SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
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


def eig(A: Any) -> Any:
    """The eigenvalues and eigenvectors (unit columns) of square matrices, complex."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(eig, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_eig", A=A)
    return ops.linalg_eig(A)


def eigvals(A: Any) -> Any:
    """The eigenvalues of square matrices, complex."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(eigvals, (A,), {})
        if heard is not _modes.PASS:
            return heard
    _tensors("linalg_eigvals", A=A)
    kernels.eig_checks("linalg.eigvals", A._data)
    return ops.linalg_eig(A)[0]


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



# -- the rest of torch.linalg, composed of ops as torch composes them (helper "special") ------

def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    """The diagonals of the matrices (DiagonalBackward0), a view as torch.diagonal's."""
    _tensors("linalg_diagonal", A=A)
    return ops.diagonal(A, offset, dim1, dim2)


def matmul(input: Any, other: Any, *, out: Any = None) -> Any:
    """torch.matmul under its linalg name."""
    _tensors("linalg_matmul", input=input, other=other)
    return composite.matmul(input, other, out=out)


def _square(A: Any, name: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def matrix_power(A: Any, n: int, *, out: Any = None) -> Any:
    """A^n by repeated squaring (A^-n = (A^-1)^n; A^0 the identity, written into a copy of A
    as torch writes it, so its node is CopyBackwards)."""
    _tensors("linalg_matrix_power", input=A)
    if out is not None:
        return _out.call("linalg_matrix_power", matrix_power, (A, n), {}, out)
    _square(A, "linalg.matrix_power")
    if n == 0:
        identity = factories.eye(A.shape[-1], dtype=A.dtype).expand_as(A)
        return A.clone().copy_(identity)
    if n == 1:
        return A.clone()
    if n < 0:
        A, n = inv(A), -n
        if n == 1:
            return A
    if n in (2, 3):
        square = composite.matmul(A, A)
        return square if n == 2 else composite.matmul(square, A)
    result = power = None
    while n > 0:  # the bits of n, lowest first: power is A^(2^i)
        n, bit = divmod(n, 2)
        power = A if power is None else composite.matmul(power, power)
        if bit:
            result = power if result is None else composite.matmul(result, power)
    return result


def _tolerances(A: Any, atol: Any, rtol: Any) -> tuple[Any, Any]:
    """(atol, rtol) as tensors: atol defaults to 0, rtol to eps * max(m, n), or to 0 where
    a positive atol was given."""
    def as_tensor(value: Any) -> Any:
        return value if isinstance(value, Tensor) else factories.tensor(float(value),
                                                                       dtype=A.dtype)
    given = atol is not None
    atol = as_tensor(0.0 if atol is None else atol)
    if rtol is None:
        default = as_tensor(float(np.finfo(A.dtype.numpy).eps) * max(A.shape[-2:]))
        return atol, ops.where(atol > 0, 0.0, default) if given else default
    return atol, as_tensor(rtol)


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None, out: Any = None) -> Any:
    """The number of singular values (absolute eigenvalues if hermitian) above
    max(atol, rtol * the largest), as int64; `tol` is the older name of atol (rtol 0)."""
    _tensors("linalg_matrix_rank", input=A)
    if out is not None:
        return _out.call("linalg_matrix_rank", matrix_rank, (A, tol, hermitian),
                         {"atol": atol, "rtol": rtol}, out)
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if not A.dtype.is_floating_point:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    S = ops.abs(eigvalsh(A)) if hermitian else svdvals(A)
    largest = ops.amax(S, [-1], True) if S.shape[-1] else factories.zeros(
        S.shape[:-1] + (1,), dtype=S.dtype)
    threshold = ops.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * largest)
    return ops.sum((S > threshold).to(dtypes.int64), [-1])


def _check_multi_dot(tensors: list) -> None:
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    last = len(tensors) - 1
    for index, tensor in enumerate(tensors):
        if index == 0 and tensor.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                               f"{tensor.ndim}D")
        if index == last and tensor.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                               f"{tensor.ndim}D")
        if 0 < index < last and tensor.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {index} must be 2D but got {tensor.ndim}D")
        if tensor.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_c_name(tensors[0].dtype)} and tensor {index} "
                               f"{_c_name(tensor.dtype)}")


def _c_name(dtype: Any) -> str:
    """A dtype as torch's C++ prints it in multi_dot's message (float, double, long...)."""
    return {"float32": "float", "float64": "double", "int64": "long", "int32": "int",
            "bool": "bool", "float16": "c10::Half", "uint8": "unsigned char",
            "int16": "short int", "int8": "signed char"}.get(
                str(dtype).split(".")[-1], str(dtype).split(".")[-1])


def _chain_order(sizes: list[int]) -> list[list[int]]:
    """The cheapest parenthesization of a chain of matrices with these sizes (matrix i is
    sizes[i] x sizes[i+1]): split[i][j] is where (i .. j) splits, the first best as torch's
    dynamic programme finds it."""
    count = len(sizes) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def multi_dot(tensors: Any, *, out: Any = None) -> Any:
    """The product of a chain of matrices (the first and last may be vectors) in the order
    that costs the fewest multiplications."""
    tensors = list(tensors)
    if out is not None:
        return _out.call("linalg_multi_dot", multi_dot, (tensors,), {}, out)
    _check_multi_dot(tensors)
    first, last = tensors[0], tensors[-1]
    shape = ([first.shape[0]] if first.ndim == 2 else []) + \
        ([last.shape[1]] if last.ndim == 2 else [])
    matrices = [first.unsqueeze(0) if first.ndim == 1 else first, *tensors[1:-1],
                last.unsqueeze(-1) if last.ndim == 1 else last]
    for index in range(len(matrices) - 1):
        left, right = matrices[index], matrices[index + 1]
        if left.shape[1] != right.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {index} and {index + 1} with shapes "
                               f"{list(tensors[index].shape)} and "
                               f"{list(tensors[index + 1].shape)} cannot be multiplied")
    if len(matrices) == 2:
        result = ops.mm(*matrices)
    elif len(matrices) == 3:
        a, b, c, d = (matrices[0].shape[0], matrices[1].shape[0], matrices[2].shape[0],
                      matrices[2].shape[1])
        A, B, C = matrices
        result = ops.mm(A, ops.mm(B, C)) if a * c * (b + d) > b * d * (a + c) \
            else ops.mm(ops.mm(A, B), C)
    else:
        split = _chain_order([m.shape[0] for m in matrices] + [matrices[-1].shape[1]])

        def product(i: int, j: int) -> Any:
            if i == j:
                return matrices[i]
            return ops.mm(product(i, split[i][j]), product(split[i][j] + 1, j))
        result = product(0, len(matrices) - 1)
    return result.view(shape)


def tensorinv(A: Any, ind: int = 2, *, out: Any = None) -> Any:
    """The inverse of A read as a matrix (the product of its first `ind` dims by that of the
    rest), shaped A.shape[ind:] + A.shape[:ind]."""
    _tensors("linalg_tensorinv", input=A)
    if out is not None:
        return _out.call("linalg_tensorinv", tensorinv, (A, ind), {}, out)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, columns = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != columns:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {columns} != {rows}")
    inverse, info = ops.linalg_inv_ex(A.reshape(columns, columns))
    if int(info.item()) > 0:
        raise LinAlgError(f"inv: The diagonal element {int(info.item())} is zero, the inversion "
                          "could not be completed because the input matrix is singular.")
    return inverse.reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A: Any, B: Any, dims: Any = None, *, out: Any = None) -> Any:
    """X with tensordot(A, X, X.ndim) = B: A's `dims` moved last, then a matrix solve."""
    _tensors("linalg_tensorsolve", input=A, other=B)
    if out is not None:
        return _out.call("linalg_tensorsolve", tensorsolve, (A, B, dims), {}, out)
    if dims is not None:
        dims = list(dims)
        A = composite.movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim:])
    size, other = math.prod(shape), math.prod(B.shape)
    if size != other:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {size} != {other}")
    return solve(A.reshape(size, size), B.flatten()).reshape(shape)


def vander(x: Any, N: Any = None) -> Any:
    """The Vandermonde matrix: columns x^0, x^1, ..., x^(N-1) (a column of ones, then the
    running product of x)."""
    _tensors("linalg_vander", x=x)
    if x.ndim == 0:
        x = x.unsqueeze(0)  # as torch reads it: one point
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype == dtypes.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    powers = ops.cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)
    ones = factories.ones(*x.shape, 1, dtype=powers.dtype)
    return ops.cat([ones, powers], -1)


def vecdot(x: Any, y: Any, *, dim: int = -1, out: Any = None) -> Any:
    """sum(x * y, dim) (vdot for two vectors)."""
    _tensors("linalg_vecdot", x=x, y=y)
    if out is not None:
        return _out.call("linalg_vecdot", vecdot, (x, y), {"dim": dim}, out)
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_dtype_name(x.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_dtype_name(x.dtype)} and y of type "
                           f"{_dtype_name(y.dtype)} instead")
    if x.ndim == 1 and y.ndim == 1 and dim in (0, -1):
        return ops.vdot(x, y)
    return ops.sum(x * y, [dim])


def _dtype_name(dtype: Any) -> str:
    """A dtype as torch's messages name it (Float, Double, Long...)."""
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "bool": "Bool", "float16": "Half", "uint8": "Byte", "bfloat16": "BFloat16",
            "int16": "Short", "int8": "Char"}[
                str(dtype).split(".")[-1]]


def cond(A: Any, p: Any = None, *, out: Any = None) -> Any:
    """The condition number: the ratio of the extreme singular values (p None, 2, -2), else
    norm(A, p) * norm(A^-1, p) (inf where A is singular)."""
    _tensors("linalg_cond", input=A)
    if out is not None:
        return _out.call("linalg_cond", cond, (A, p), {}, out)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord_ = 2 if p is None else p
    if ord_ not in (2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc") or isinstance(ord_, bool):
        shown = ord_ if isinstance(ord_, str) else float(ord_) if float(ord_) != int(ord_) \
            else int(ord_)
        raise RuntimeError(f"linalg.cond got an invalid norm type: {shown}")
    if ord_ not in (2, -2) and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={ord_}): A must be batches of square matrices, "
                           f"but they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if A.numel() == 0:
        return factories.zeros(*A.shape[:-2], dtype=A.dtype)
    if ord_ in (2, -2):
        S = svdvals(A)
        largest, smallest = S.narrow(-1, 0, 1), S.narrow(-1, S.shape[-1] - 1, 1)
        ratio = smallest / largest if ord_ == -2 else largest / smallest
        return ratio.squeeze(-1)
    if ord_ == "nuc":
        S = svdvals(A)
        return S.sum(-1) * S.reciprocal().sum(-1)
    # Written in place as torch writes it: the inverse that linalg_inv_ex saved for its
    # backward is modified, so, as in torch, these orders have no gradient (backward raises).
    inverse, info = ops.linalg_inv_ex(A)
    inverse.masked_fill_((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    result = matrix_norm(A, ord_) * matrix_norm(inverse, ord_)
    return result.nan_to_num_(math.inf, math.inf, -math.inf)


def householder_product(A: Any, tau: Any, *, out: Any = None) -> Any:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column
    of A below the diagonal with a 1 on it: the spec's linalg_householder_product
    (LinalgHouseholderProductBackward0, torch's formulas)."""
    _tensors("linalg_householder_product", input=A, tau=tau)
    if out is not None:
        return _out.call("linalg_householder_product", householder_product, (A, tau), {}, out)
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim == 0:  # torch reads tau.size(-1) here
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    return ops.linalg_householder_product(A, tau)



# -- LDL^T (kernels.ldl_factor_matrix / ldl_solve_matrix: LAPACK's sytf2 and sytrs) ------------
# torch gives these no derivative (its node is NotImplemented): gradgen's results are plain
# tensors, not recorded.

_LdlFactorResult = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
_LdlFactorExResult = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _ldl_error(name: str, code: int) -> RuntimeError:
    """torch's own message for a singular input (an internal assertion of its, as it is)."""
    return RuntimeError('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/'
                        'native/BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. '
                        f"torch.linalg.{name}: Unknown error code: {code}.")


def ldl_factor_ex(A: Any, *, hermitian: bool = False, check_errors: bool = False,
                  out: Any = None) -> Any:
    """(LD, pivots, info): L and the blocks of D in one lower triangle, Bunch-Kaufman's
    pivots (LAPACK's, 1-based, negative for a 2x2 block), info > 0 at a zero pivot."""
    _tensors("linalg_ldl_factor_ex", A=A)
    if out is not None:
        return _out.call("linalg_ldl_factor_ex", ldl_factor_ex, (A,),
                         {"hermitian": hermitian, "check_errors": check_errors}, out, outputs=3)
    name = "torch.linalg.ldl_factor_ex"
    _square(A, name)
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype_name(A.dtype)}")
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    matrices = A.detach()._data.reshape((math.prod(batch), n, n))
    factors = [kernels.ldl_factor_matrix(matrix) for matrix in matrices]
    LD = np.stack([f[0] for f in factors]) if factors else np.zeros(matrices.shape, A.dtype.numpy)
    pivots = np.stack([f[1] for f in factors]) if factors else np.zeros(matrices.shape[:-1],
                                                                        np.int32)
    info = np.array([f[2] for f in factors], dtype=np.int32)
    if check_errors and info.any():
        raise _ldl_error("ldl_factor_ex", int(info[info.nonzero()[0][0]]))
    return _LdlFactorExResult(factories.tensor(LD.reshape(A.shape)),
                              factories.tensor(pivots.reshape(batch + A.shape[-1:])),
                              factories.tensor(info.reshape(batch)))


def ldl_factor(A: Any, *, hermitian: bool = False, out: Any = None) -> Any:
    """(LD, pivots), raising for a singular input as torch does."""
    _tensors("linalg_ldl_factor", A=A)
    if out is not None:
        return _out.call("linalg_ldl_factor", ldl_factor, (A,), {"hermitian": hermitian}, out,
                         outputs=2)
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    failed = info.numpy().reshape(-1).nonzero()[0]
    if failed.size:
        raise _ldl_error("ldl_factor", int(info.numpy().reshape(-1)[failed[0]]))
    return _LdlFactorResult(LD, pivots)


def ldl_solve(LD: Any, pivots: Any, B: Any, *, hermitian: bool = False, out: Any = None) -> Any:
    """X with A X = B, from ldl_factor's (LD, pivots) of A."""
    _tensors("linalg_ldl_solve", LD=LD, pivots=pivots, B=B)
    if out is not None:
        return _out.call("linalg_ldl_solve", ldl_solve, (LD, pivots, B),
                         {"hermitian": hermitian}, out)
    name = "torch.linalg.ldl_solve"
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(B.ndim, 1)},"
                         f" {max(B.ndim, 1) - 1}], but got -2)")
    _square(LD, name)
    if pivots.dtype.is_floating_point or pivots.dtype == dtypes.bool_:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{_dtype_name(pivots.dtype)}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype_name(B.dtype)} and A of type {_dtype_name(LD.dtype)} "
                           "instead.")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{LD.shape[-1]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    batch = np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2]))
    n, columns = LD.shape[-1], B.shape[-1]
    count = math.prod(batch)
    factors = np.broadcast_to(LD.detach().numpy(), batch + (n, n)).reshape(count, n, n)
    pivot_rows = np.broadcast_to(pivots.numpy(), batch + (n,)).reshape(count, n)
    rights = np.broadcast_to(B.detach().numpy(), batch + (n, columns)).reshape(count, n, columns)
    solved = [kernels.ldl_solve_matrix(f, p, b) for f, p, b in zip(factors, pivot_rows, rights,
                                                                    strict=True)]
    result = np.stack(solved) if solved else np.zeros(rights.shape, LD.dtype.numpy)
    return factories.tensor(result.reshape(batch + (n, columns)))


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
