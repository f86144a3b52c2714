"""Forward kernels: one function per op overload, on numpy arrays (gradgen's "ATen").

A kernel knows numpy and nothing else: no Tensor, no graph, no grad mode. Arguments that
the schema types as Tensor arrive as numpy arrays, or as Python numbers where a number
stands in for a tensor (`x * 2`). Results follow PyTorch's type promotion: a Python
number or a 0-dim array does not widen a dimensioned array of the same category.
Kernels named after ops shadow builtins (`sum`, `max`, `abs`): other code here says
`builtins.max`.
"""

from __future__ import annotations

import builtins
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
            candidate = np.result_type(*values)
        else:
            category = builtins.max(_category(v) for v in values)
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

def _axes(dim: Any, ndim: int) -> tuple[int, ...]:
    """The numpy axes of a reduction over `dim`: every axis for None or [] (as in PyTorch).

    `dim` is an int or a list of ints (int[1] takes both); a 0-dim tensor accepts 0 and -1.
    """
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    axes = tuple(_wrap_dim(d, ndim) for d in dims)
    for d, axis in zip(dims, axes, strict=True):
        if axes.count(axis) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return axes if ndim else ()


def _sum_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    """sum and prod accumulate bool and integers as int64 unless told otherwise."""
    if dtype is not None:
        return dtype
    return np.dtype(np.int64) if array.dtype.kind in "biu" else array.dtype


def _mean_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    out = array.dtype if dtype is None else np.dtype(dtype)
    if out.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_scalar_type_name(out)}"
        )
    return out


def _scalar_type_name(dtype: np.dtype) -> str:
    return {"f4": "Float", "f8": "Double", "i8": "Long", "i4": "Int", "b1": "Bool"}[
        np.dtype(dtype).str[1:]]


def _float_input(array: np.ndarray) -> np.ndarray:
    """logsumexp makes sense only on floats: it takes integers as the default float dtype."""
    return array if array.dtype.kind == "f" else array.astype(_DEFAULT_FLOAT)


def sum(self, dtype=None):  # noqa: A001 - the op's name
    return _array(np.sum(self, dtype=_sum_dtype(self, dtype)), _sum_dtype(self, dtype))


def sum_dim_IntList(self, dim, keepdim=False, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.sum(self, axis=_axes(dim, self.ndim), keepdims=keepdim, dtype=out), out)


def mean(self, dtype=None):
    out = _mean_dtype(self, dtype)
    return _array(np.mean(self, dtype=out), out)


def mean_dim(self, dim, keepdim=False, dtype=None):
    out = _mean_dtype(self, dtype)
    return _array(np.mean(self, axis=_axes(dim, self.ndim), keepdims=keepdim, dtype=out), out)


def _check_nonempty(self: np.ndarray, axes: tuple[int, ...], name: str, hint: str = "") -> None:
    """max-like reductions have no identity: an empty slice is PyTorch's error."""
    if self.size:
        return
    if len(axes) == self.ndim:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{hint}"
        )
    for axis in axes:
        if self.shape[axis] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


_DIM_HINT = " Specify the reduction dim with the 'dim' argument."


def amax(self, dim=(), keepdim=False):
    axes = _axes(dim, self.ndim)
    _check_nonempty(self, axes, "amax", _DIM_HINT)
    return np.amax(self, axis=axes, keepdims=keepdim)


def amin(self, dim=(), keepdim=False):
    axes = _axes(dim, self.ndim)
    _check_nonempty(self, axes, "amin", _DIM_HINT)
    return np.amin(self, axis=axes, keepdims=keepdim)


def _select(self: np.ndarray, dim: int, keepdim: bool, pick,
            name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of max.dim / min.dim; ties pick the first index, NaN wins."""
    axis = _axes(dim, self.ndim)
    _check_nonempty(self, axis, name)
    if not axis:  # a 0-dim tensor: the value itself, at index 0
        return self.copy(), np.zeros((), dtype=np.int64)
    indices = np.expand_dims(pick(self, axis=axis[0]), axis[0])
    values = np.take_along_axis(self, indices, axis[0])
    if not keepdim:
        values, indices = np.squeeze(values, axis[0]), np.squeeze(indices, axis[0])
    return values, indices.astype(np.int64)


def max_dim(self, dim, keepdim=False):
    return _select(self, dim, keepdim, np.argmax, "max")


def max(self):  # noqa: A001 - the op's name
    _check_nonempty(self, _axes(None, self.ndim), "max", _DIM_HINT)
    return np.asarray(np.max(self))


def min_dim(self, dim, keepdim=False):
    return _select(self, dim, keepdim, np.argmin, "min")


def min(self):  # noqa: A001 - the op's name
    _check_nonempty(self, _axes(None, self.ndim), "min", _DIM_HINT)
    return np.asarray(np.min(self))


def argmax(self, dim=None, keepdim=False):
    if dim is None:
        _check_nonempty(self, _axes(None, self.ndim), "argmax")
        index = np.asarray(np.argmax(self), dtype=np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    return _select(self, dim, keepdim, np.argmax, "argmax")[1]


def argmin(self, dim=None, keepdim=False):
    if dim is None:
        _check_nonempty(self, _axes(None, self.ndim), "argmin")
        index = np.asarray(np.argmin(self), dtype=np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    return _select(self, dim, keepdim, np.argmin, "argmin")[1]


def prod(self, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.prod(self, dtype=out), out)


def prod_dim_int(self, dim, keepdim=False, dtype=None):
    out = _sum_dtype(self, dtype)
    return _array(np.prod(self, axis=_axes(dim, self.ndim), keepdims=keepdim, dtype=out), out)


def var_correction(self, dim=None, correction=None, keepdim=False):
    if self.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ddof = 1 if correction is None else correction
    with np.errstate(divide="ignore", invalid="ignore"):  # N <= correction gives inf or nan
        result = np.var(self, axis=_axes(dim, self.ndim), ddof=ddof,
                        keepdims=keepdim)
    return np.asarray(result)


def std_correction(self, dim=None, correction=None, keepdim=False):
    return np.sqrt(var_correction(self, dim, correction, keepdim))


def logsumexp(self, dim, keepdim=False):
    self = _float_input(self)
    axes = _axes(dim, self.ndim)
    if self.size == 0:
        return np.log(np.sum(np.exp(self), axis=axes, keepdims=keepdim))
    # Shift by the maximum so exp cannot overflow; an infinite maximum is not shifted by.
    shift = np.amax(self, axis=axes, keepdims=True)
    shift = np.where(np.isinf(shift), 0, shift)
    with np.errstate(divide="ignore"):
        result = np.log(np.sum(np.exp(self - shift), axis=axes, keepdims=True)) + shift
    return result if keepdim else np.squeeze(result, axes)


def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    if self.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_scalar_type_name(self.dtype)}")
    x = np.abs(self if dtype is None else self.astype(dtype))
    axes = _axes(dim, self.ndim)
    if ord == float("inf"):
        result = np.amax(x, axis=axes, keepdims=keepdim, initial=0)
    elif ord == -float("inf"):
        result = np.amin(x, axis=axes, keepdims=keepdim)
    elif ord == 0:
        result = np.sum(x != 0, axis=axes, keepdims=keepdim).astype(x.dtype)
    elif ord == 1:
        result = np.sum(x, axis=axes, keepdims=keepdim)
    elif ord == 2:
        result = np.sqrt(np.sum(x * x, axis=axes, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore"):
            result = np.sum(x ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(result, dtype=x.dtype)


def _check_norm_input(self: np.ndarray) -> None:
    if self.dtype.kind != "f":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_type_name(self.dtype)} instead.")


def norm_Scalar(self, p=2):
    _check_norm_input(self)
    return linalg_vector_norm(self, p)


def norm_ScalarOpt_dim(self, p, dim, keepdim=False):
    _check_norm_input(self)
    return linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)


# Elementwise ops the reductions' formulas need (see derivatives.yaml).

def neg(self):
    return np.negative(self)


def eq_Tensor(self, other):
    a, b = _binary(self, other)
    return np.asarray(a == b)


def div_Tensor(self, other):
    dtype = _float_type(self, other)
    a, b = _binary(self, other, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _array(a / b, dtype)


def exp(self):
    dtype = _float_type(self)
    return _array(np.exp(_as(self, dtype)), dtype)


def abs(self):  # noqa: A001 - the op's name
    return np.abs(self)


def sign(self):
    return np.sign(self) if self.dtype != np.bool_ else self.copy()


def where_self(condition, self, other):
    dtype = result_type(self, other)
    return _array(np.where(condition, _as(self, dtype), _as(other, dtype)), dtype)


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
    size = builtins.max(ndim, 1)
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
