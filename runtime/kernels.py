"""Forward kernels: one function per op overload, on numpy arrays (gradgen's "ATen").

A kernel knows numpy and nothing else: no Tensor, no graph, no grad mode. Arguments that
the schema types as Tensor arrive as numpy arrays, or as Python numbers where a number
stands in for a tensor (`x * 2`). Results follow PyTorch's type promotion: a Python
number or a 0-dim array does not widen a dimensioned array of the same category.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_DEFAULT_FLOAT = np.float32
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def default_float(dtype: np.dtype | None = None) -> None:
    """Set the dtype integers promote to in float ops (torch.set_default_dtype)."""
    global _DEFAULT_FLOAT
    _DEFAULT_FLOAT = dtype


def _category(value: Any) -> int:
    if isinstance(value, np.ndarray | np.generic):
        return _CATEGORY[value.dtype.kind]
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return 1
    return 2


def _promote_types(dtypes: list[np.dtype]) -> np.dtype:
    """torch.promote_types: a higher category wins whatever the size (float32 with int64 is
    float32, where numpy says float64); within a category, the wider type."""
    result = dtypes[0]
    for dtype in dtypes[1:]:
        if _CATEGORY[dtype.kind] > _CATEGORY[result.kind]:
            result = dtype
        elif _CATEGORY[dtype.kind] == _CATEGORY[result.kind]:
            result = np.promote_types(result, dtype)
    return result


def result_type(*operands: Any) -> np.dtype:
    """PyTorch's promotion: dimensioned arrays, then 0-dim arrays, then Python numbers.

    A lower tier only matters when it is of a higher category (bool < int < float):
    float32[3] + float64 0-dim -> float32, int64[3] + 2.5 -> float32 (the default).
    """
    tiers: list[list[Any]] = [[], [], []]
    for value in operands:
        if isinstance(value, np.ndarray):
            tiers[0 if value.ndim else 1].append(value.dtype)
        elif value is not None:
            tiers[2].append(value)
    result: np.dtype | None = None
    for tier, values in enumerate(tiers):
        if not values:
            continue
        if tier < 2:
            candidate = _promote_types(values)
        else:
            category = max(_category(v) for v in values)
            candidate = np.dtype([np.bool_, np.int64, _DEFAULT_FLOAT][category])
        if result is None:
            result = candidate
        elif _CATEGORY[candidate.kind] > _CATEGORY[result.kind]:
            result = candidate if tier < 2 or candidate.kind != "f" else np.dtype(_DEFAULT_FLOAT)
    return result if result is not None else np.dtype(_DEFAULT_FLOAT)


def _float_type(*operands: Any) -> np.dtype:
    """The result dtype of an op that always gives floats (exp, div, ...)."""
    dtype = result_type(*operands)
    return dtype if dtype.kind == "f" else np.dtype(_DEFAULT_FLOAT)


def _as(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    return dtype.type(value)


def _binary(a: Any, b: Any, dtype: np.dtype | None = None) -> tuple[Any, Any]:
    dtype = result_type(a, b) if dtype is None else dtype
    return _as(a, dtype), _as(b, dtype)


def _array(value: Any, dtype: np.dtype) -> np.ndarray:
    return np.asarray(value, dtype=dtype)


# -- elementwise ------------------------------------------------------------------------------

def add_Tensor(self, other, alpha=1):
    a, b = _binary(self, other, result_type(self, other, alpha if alpha != 1 else None))
    return _array(a + b if alpha == 1 else a + alpha * b, a.dtype)


def add_Scalar(self, other, alpha=1):
    return add_Tensor(self, other, alpha)


def sub_Tensor(self, other, alpha=1):
    a, b = _binary(self, other, result_type(self, other, alpha if alpha != 1 else None))
    return _array(a - b if alpha == 1 else a - alpha * b, a.dtype)


def mul_Tensor(self, other):
    a, b = _binary(self, other)
    return _array(a * b, a.dtype)


def mul_Scalar(self, other):
    return mul_Tensor(self, other)


def pow_Tensor_Scalar(self, exponent):
    dtype = result_type(self, exponent)
    return _array(np.power(_as(self, dtype), exponent), dtype)


def relu(self):
    return np.maximum(self, 0).astype(self.dtype, copy=False)


def threshold_backward(grad_output, self, threshold):
    return np.where(self <= threshold, 0, grad_output).astype(grad_output.dtype, copy=False)


# -- reductions ---------------------------------------------------------------------------------

def _sum_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    if dtype is not None:
        return dtype
    return np.dtype(np.int64) if array.dtype.kind in "biu" else array.dtype


def sum(self, dtype=None):  # noqa: A001 - the op's name
    return _array(np.sum(self, dtype=_sum_dtype(self, dtype)), _sum_dtype(self, dtype))


def sum_dim_IntList(self, dim, keepdim=False, dtype=None):
    axis = None if dim is None or dim == () else tuple(np.atleast_1d(dim))
    out = _sum_dtype(self, dtype)
    return _array(np.sum(self, axis=axis, keepdims=keepdim, dtype=out), out)


# -- shape and indexing -----------------------------------------------------------------------

def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


def expand(self, size, implicit=False):
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({self.ndim})"
        )
    lead = len(size) - self.ndim
    target = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(size))
    return np.broadcast_to(self, target)


def unsqueeze(self, dim):
    return np.expand_dims(self, _wrap_dim(dim, self.ndim + 1))


def squeeze(self):
    return np.squeeze(self)


def squeeze_dim(self, dim):
    dim = _wrap_dim(dim, self.ndim)
    return np.squeeze(self, dim) if self.ndim and self.shape[dim] == 1 else self.view()


def squeeze_dims(self, dim):
    dims = tuple(d for d in (_wrap_dim(d, self.ndim) for d in dim) if self.shape[d] == 1)
    return np.squeeze(self, dims) if dims else self.view()


def _to_copy(self, dtype=None):
    return np.array(self, dtype=self.dtype if dtype is None else dtype, copy=True)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in [-ndim, ndim), made non-negative, with PyTorch's error."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], "
            f"but got {dim})"
        )
    return dim % size


def clone(self):
    return np.array(self, copy=True)


def transpose_int(self, dim0, dim1):
    return np.swapaxes(self, _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim))


def _view_shape(size, numel: int) -> tuple[int, ...]:
    """`size` with a -1 filled in, or PyTorch's error if it does not fit `numel` elements."""
    size = tuple(size)
    known = int(np.prod([s for s in size if s != -1]))
    if size.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in size:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        size = tuple(numel // known if s == -1 else s for s in size)
    if int(np.prod(size)) != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def view(self, size):
    shape = _view_shape(size, self.size)
    result = self.view()
    try:
        result.shape = shape  # numpy refuses where a view would need a copy, as torch does
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return result


def _unsafe_view(self, size):
    return np.reshape(self, _view_shape(size, self.size))


def zero_(self):
    return np.zeros_like(self)


# -- linear algebra and nn --------------------------------------------------------------------

def mm(self, mat2):
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if self.ndim != 2 else "mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    a, b = _binary(self, mat2)
    return a @ b


def addmm(self, mat1, mat2, beta=1, alpha=1):
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * product.dtype.type(alpha)
    bias = _as(self, product.dtype)
    if beta == 0:
        return product + np.zeros_like(bias)
    return product + (bias if beta == 1 else bias * product.dtype.type(beta))
