"""Forward kernels: one function per op overload, on numpy arrays (gradgen's "ATen").

A kernel knows numpy and nothing else: no Tensor, no graph, no grad mode. Arguments that
the schema types as Tensor arrive as numpy arrays, or as Python numbers where a number
stands in for a tensor (`x * 2`). Results follow PyTorch's type promotion: a Python
number or a 0-dim array does not widen a dimensioned array of the same category.
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
    # A C-ordered copy: what `contiguous()` needs (PyTorch's preserve_format would keep a
    # transposed layout; in gradgen strides show only through is_contiguous and view).
    return np.array(self, copy=True, order="C")


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


def _take(dim: int, index: Any) -> tuple:
    """The numpy key that picks `index` (an int, a slice or an array) along `dim`."""
    return (slice(None),) * dim + (index, Ellipsis)


def alias(self):
    return self.view()


def permute(self, dims):
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{self.ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = [_wrap_dim(d, self.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, dims)


def cat(tensors, dim=0):
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    # PyTorch still skips 1-D empty tensors, whatever the shape of the others.
    arrays = [a for a in tensors if a.shape != (0,)] or list(tensors[:1])
    first = arrays[0]
    for position, array in enumerate(tensors):
        if array.ndim == 0:
            raise RuntimeError(
                f"zero-dimensional tensor (at position {position}) cannot be concatenated"
            )
    dim = _wrap_dim(dim, first.ndim)
    for number, array in enumerate(arrays):
        if array.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {array.ndim}"
            )
        for d in range(first.ndim):
            if d != dim and array.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{first.shape[d]} but got size {array.shape[d]} for tensor number {number} "
                    "in the list."
                )
    return np.concatenate(arrays, axis=dim).astype(result_type(*arrays), copy=False)


def stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for entry, array in enumerate(tensors):
        if array.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                f"at entry 0 and {list(array.shape)} at entry {entry}"
            )
    dim = _wrap_dim(dim, tensors[0].ndim + 1)
    return np.stack(tensors, axis=dim).astype(result_type(*tensors), copy=False)


def split_Tensor(self, split_size, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                           f"{split_size}")
    dim = _wrap_dim(dim, self.ndim)
    return split_with_sizes(self, _split_sizes(self.shape[dim], split_size), dim)


def _split_sizes(length: int, split_size: int) -> list[int]:
    """The pieces split.Tensor cuts `length` into: all `split_size`, the last one shorter."""
    if split_size == 0 and length != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {length}")
    count = max(-(-length // split_size), 1) if split_size else 1
    return [split_size] * (count - 1) + [length - split_size * (count - 1)]


def split_with_sizes(self, split_sizes, dim=0):
    if self.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, self.ndim)
    if any(s < 0 for s in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={list(split_sizes)}")
    if builtins.sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {self.shape[dim]} (input "
            f"tensor's size at dimension {dim}), but got split_sizes={list(split_sizes)}"
        )
    starts = np.cumsum([0, *split_sizes])
    return [self[_take(dim, slice(int(a), int(b)))] for a, b in zip(starts, starts[1:],
                                                                     strict=False)]


def unbind_int(self, dim=0):
    if self.ndim == 0:
        raise RuntimeError("Dimension specified as 0 but tensor has no dimensions")
    dim = _wrap_dim(dim, self.ndim)
    return [self[_take(dim, i)] for i in range(self.shape[dim])]


def select_int(self, dim, index):
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {dim}")
    return self[_take(dim, index)]


def select_backward(grad_output, input_sizes, dim, index):
    result = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    result[_take(_wrap_dim(dim, len(input_sizes)), index)] = grad_output
    return result


def slice_Tensor(self, dim=0, start=None, end=None, step=1):
    if self.ndim == 0:
        raise RuntimeError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return self[_take(_wrap_dim(dim, self.ndim), slice(start, end, step))]


def slice_backward(grad_output, input_sizes, dim, start, end, step):
    result = np.zeros(tuple(input_sizes), dtype=grad_output.dtype)
    result[_take(_wrap_dim(dim, len(input_sizes)), slice(start, end, step))] = grad_output
    return result


def _index_key(self: np.ndarray, indices: list) -> tuple:
    """`indices` (index's `Tensor?[]`) as a numpy key: None is a whole dimension, a bool
    mask covers as many dimensions as it has and becomes their nonzero positions."""
    if not indices:
        raise IndexError("at least one index must be provided")
    covered = builtins.sum(1 if i is None or i.dtype.kind != "b" else max(i.ndim, 1)
                           for i in indices)
    if covered > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    key: list = []
    position = 0  # which index tensor, as PyTorch counts them in its messages
    for index in indices:
        dim = len(key)
        if index is None:
            key.append(slice(None))
            continue
        if index.dtype.kind == "b":
            mask_shape = self.shape[dim:dim + index.ndim]
            for k, (size, own) in enumerate(zip(index.shape, mask_shape, strict=True)):
                if size != own:
                    raise IndexError(
                        f"The shape of the mask {list(index.shape)} at index {k} does not match "
                        f"the shape of the indexed tensor {list(self.shape)} at index {dim + k}"
                    )
            key.extend(np.nonzero(index))
        elif index.dtype.kind in "iu":
            size = self.shape[dim]
            bad = index[(index < -size) | (index >= size)]
            if bad.size:
                raise IndexError(f"index {bad.flat[0]} is out of bounds for dimension {position} "
                                 f"with size {size}")
            key.append(index)
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        position += 1
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    return tuple(key)


def index_Tensor(self, indices):
    return np.array(self[_index_key(self, indices)], copy=True)


_TYPE_NAMES = {"float64": "Double", "float32": "Float", "int64": "Long", "int32": "Int",
               "bool": "Bool"}


def _same_dtype(self: np.ndarray, source: Any, message: str) -> None:
    """PyTorch's index and scatter ops write `source` into a copy of `self` without casting."""
    if isinstance(source, np.ndarray) and source.dtype != self.dtype:
        names = {k: _TYPE_NAMES.get(a.dtype.name, a.dtype.name)
                 for k, a in (("self", self), ("source", source))}
        raise RuntimeError(message.format(**names))


def index_put(self, indices, values, accumulate=False):
    _same_dtype(self, values, "Index put requires the source and destination dtypes match, got "
                "{self} for the destination and {source} for the source.")
    key = _index_key(self, indices)
    values = _as(values, self.dtype)
    result = np.array(self, copy=True)
    if accumulate:
        np.add.at(result, key, values)
    else:
        result[key] = values
    return result


def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return index_put(self, indices, values, accumulate)


def _check_index(index: np.ndarray, op: str) -> None:
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


def index_select(self, dim, index):
    _check_index(index, "index_select")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = _wrap_dim(dim, self.ndim)
    if index.size and (index.min() < 0 or index.max() >= max(self.shape[dim:dim + 1] or (1,))):
        raise IndexError("index out of range in self")
    return np.take(self, index.reshape(-1), axis=dim) if self.ndim else self[index.reshape(())]


def index_add(self, dim, index, source, alpha=1):
    _check_index(index, "index_add")
    _same_dtype(self, source, "index_add_(): self ({self}) and source ({source}) must have the "
                "same scalar type")
    dim = _wrap_dim(dim, self.ndim)
    result = np.array(self, copy=True)
    source = _as(source, self.dtype)
    np.add.at(result, _take(dim, index.reshape(-1)), source if alpha == 1 else source * alpha)
    return result


def _scatter_key(self: np.ndarray, dim: int, index: np.ndarray, op: str) -> tuple:
    """The numpy key for gather/scatter: `index` along `dim`, position elsewhere."""
    _check_index(index, op)
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim] if self.ndim else 1
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(f"index {bad.flat[0]} is out of bounds for dimension {dim} with "
                           f"size {size}")
    grid = list(np.indices(index.shape, sparse=True))
    if not grid:
        return (index,) if self.ndim else ()
    grid[dim] = index
    return tuple(grid)


def gather(self, dim, index, sparse_grad=False):
    return np.array(self[_scatter_key(self, dim, index, "gather")], copy=True)


def scatter_add(self, dim, index, src):
    _same_dtype(self, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    result = np.array(self, copy=True)
    corner = tuple(slice(0, s) for s in index.shape)
    np.add.at(result, _scatter_key(self, dim, index, "scatter_add"), _as(src, self.dtype)[corner])
    return result


def repeat(self, repeats):
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return np.tile(self, tuple(repeats)) if repeats else np.array(self, copy=True)


def flip(self, dims):
    axes = [_wrap_dim(d, self.ndim) for d in dims]
    for d in axes:
        if axes.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return np.flip(self, axis=tuple(axes)).copy()


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
