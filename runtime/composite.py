"""Composite ops: plain Python over spec ops, like PyTorch's CompositeImplicitAutograd.

They have no node of their own; the graph shows the ops they are made of, exactly as
PyTorch's does (`linear` on a 2-D input records TBackward0 and AddmmBackward0).
`CompositeMethods` makes them Tensor methods; runtime.tensor.Tensor inherits it.
"""

from __future__ import annotations

import numbers
import operator
import warnings
from typing import Any

import numpy as np

from generated import ops
from runtime import dispatch, dtypes
from runtime import tensor as _tensor
from runtime.dispatch import int_list

__all__: list[str] = []

# -- broadcasting and dtype -------------------------------------------------------------------

__all__ += []


def sum_to_size(self: Any, *size: Any) -> Any:
    """Sum a broadcast tensor back to `size` (PyTorch's at::sum_to)."""
    size = int_list(size)
    shape = self.shape
    if shape == size:
        return self
    lead = len(shape) - len(size)
    result = self
    if lead > 0:
        result = result.sum(tuple(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and result.shape[i] != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


def to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.to(dtype)` (and `x.to(other)`): the same tensor if nothing changes."""
    dtype = kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, _tensor.Tensor):
            dtype = arg.dtype
    if dtype is None or dtype is self.dtype:
        return self
    return ops._to_copy(self, dtype=dtype)


# -- elementwise ------------------------------------------------------------------------------

def rtruediv(self: Any, other: Any) -> Any:
    """`other / self` for a number `other`: self.reciprocal() * other, as PyTorch computes it."""
    return ops.mul(ops.reciprocal(self), other)


# -- reductions -------------------------------------------------------------------------------

__all__ += ["var", "std", "norm"]

_SELF, _DIM = ("self_", "Tensor", False, False), ("dim", "int[1]?", False, False)


def _variance_overloads(name: str, correction_op: Any) -> tuple:
    """PyTorch's Python spellings of var/std, each recorded as `<name>.correction`.

    `unbiased=` is the older spelling of correction=1 (True) or correction=0 (False).
    """

    def unbiased_all(self_: Any, unbiased: bool = True) -> Any:
        return correction_op(self_, None, correction=int(unbiased))

    def unbiased_dim(self_: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
        return correction_op(self_, dim, correction=int(unbiased), keepdim=keepdim)

    unbiased = ("unbiased", "bool", True, False)
    keepdim = ("keepdim", "bool", True, False)
    return (
        (unbiased_all, f"{name}(Tensor self, bool unbiased=True) -> Tensor", (_SELF, unbiased)),
        (unbiased_dim, f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, "
                       "bool keepdim=False) -> Tensor", (_SELF, _DIM, unbiased, keepdim)),
        (correction_op, f"{name}.correction(Tensor self, int[1]? dim=None, *, "
                        "Scalar? correction=None, bool keepdim=False) -> Tensor",
         (_SELF, ("dim", "int[1]?", True, False), ("correction", "Scalar?", True, True),
          ("keepdim", "bool", True, True))),
    )


def var(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.var()`, `x.var(0)`, `x.var(dim=1, unbiased=False)`, `x.var(correction=0)`."""
    overloads = _variance_overloads("var", ops.var_correction)
    return dispatch.call("var", overloads, (input, *args), kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.std()`, `x.std(0)`, `x.std(dim=1, unbiased=False)`, `x.std(correction=0)`."""
    overloads = _variance_overloads("std", ops.std_correction)
    return dispatch.call("std", overloads, (input, *args), kwargs)


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Any:
    """torch.norm: a vector norm, computed as linalg_vector_norm, as PyTorch's Python does.

    "fro" is the 2-norm of the elements; matrix norms ("nuc", "fro" over more than two
    dimensions) are not implemented.
    """
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            raise NotImplementedError(f"norm(p={p!r}) is a matrix norm; gradgen has only "
                                      "vector norms")
        p = 2
    dims = [dim] if isinstance(dim, int) else dim
    return ops.linalg_vector_norm(input, 2 if p is None else p, dims, keepdim,
                                  dtype=dtype)

# -- shape and indexing -----------------------------------------------------------------------

__all__ += ["reshape", "flatten", "chunk", "split"]


def reshape(input: Any, *shape: Any) -> Any:
    """A view when the strides allow one, else a copy (CloneBackward0, UnsafeViewBackward0)."""
    shape = int_list(shape)
    try:
        return ops.view(input, shape)
    except RuntimeError as error:
        if "view size is not compatible" not in str(error):
            raise
    return ops._unsafe_view(ops.clone(input), shape)


def _wrap_dim(dim: int, ndim: int) -> int:
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, "
                         f"{size - 1}], but got {dim})")
    return dim % size


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """Merge dims start_dim..end_dim with reshape; the tensor itself when there is nothing
    to merge (so `x.flatten()` of a 1-D x keeps x's grad_fn, as in PyTorch)."""
    if input.ndim == 0:
        return reshape(input, 1)
    start, end = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    merged = 1
    for size in shape[start:end + 1]:
        merged *= size
    return reshape(input, *shape[:start], merged, *shape[end + 1:])


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple:
    """`chunks` pieces of equal size (the last may be smaller), made by split."""
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    length = input.shape[_wrap_dim(dim, input.ndim)]
    split_size = -(-length // chunks)
    if split_size == 0:  # an empty dimension still gives `chunks` (empty) pieces
        return ops.split_with_sizes(input, [0] * chunks, dim)
    return ops.split(input, split_size, dim)


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """split.Tensor for a size, split_with_sizes for a list of sizes."""
    if isinstance(split_size_or_sections, int):
        return ops.split(tensor, split_size_or_sections, dim)
    return ops.split_with_sizes(tensor, list(split_size_or_sections), dim)


def contiguous(self: Any) -> Any:
    """The tensor itself when it is already contiguous, else a contiguous copy."""
    return self if self.is_contiguous() else ops.clone(self)


# Indexing: `x[...]` decomposed as PyTorch's python_variable_indexing.cpp does.

_SEQUENCE_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result"
)


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def _index_items(index: Any) -> tuple:
    """The index as a tuple: a short list holding slices, None, ... or sequences counts as
    one (NumPy's old rule, which PyTorch keeps with a warning); anything else is one item."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            v is None or v is Ellipsis or isinstance(v, slice | list | tuple | _tensor.Tensor)
            for v in index):
        warnings.warn(_SEQUENCE_AS_TUPLE_WARNING, UserWarning, stacklevel=3)
        return tuple(index)
    return (index,)


def _index_tensor(value: Any) -> Any:
    """A list or array index as a tensor: bool stays a mask, anything else becomes long."""
    from runtime.factories import tensor

    result = tensor(value)
    return result if result.dtype is dtypes.bool_ else tensor(value, dtype=dtypes.int64)


def _specified_dims(items: tuple) -> int:
    """How many dimensions of the tensor the items index (a bool mask: as many as it has)."""
    count = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, bool):
            continue
        if isinstance(item, _tensor.Tensor) and item.dtype is dtypes.bool_:
            count += item.ndim
        else:
            count += 1
    return count


def _select(tensor: Any, dim: int, index: int) -> Any:
    if tensor.ndim == 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    size = tensor.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    return ops.select(tensor, dim, index)


def _slice(tensor: Any, dim: int, item: slice, skip_whole: bool) -> Any:
    """slice.Tensor; inside a tuple, a slice that keeps the whole dimension is skipped."""
    start, stop, step = (None if v is None else operator.index(v)
                         for v in (item.start, item.stop, item.step))
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    if skip_whole and not start and step == 1 and (stop is None or stop >= tensor.shape[dim]):
        return tensor
    return ops.slice(tensor, dim, start, stop, step)


def getitem(self: Any, index: Any) -> Any:
    """`x[index]`: ints select, slices slice, None unsqueezes, `...` skips dimensions, and
    integer or boolean arrays gather through one index.Tensor at the end."""
    if index is None:
        return ops.unsqueeze(self, 0)
    if index is Ellipsis:
        return ops.alias(self)
    if _is_int(index):
        return _select(self, 0, operator.index(index))
    if isinstance(index, slice):
        return _slice(self, 0, index, skip_whole=False)
    items = tuple(_index_tensor(i) if isinstance(i, list | np.ndarray) else i
                  for i in _index_items(index))
    specified = _specified_dims(items)
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    result, dim = self, 0
    recorded: list[tuple[int, Any]] = []  # (dim of result, index tensor) for index.Tensor
    for item in items:
        if isinstance(item, _tensor.Tensor) and item.ndim == 0 and item.dtype is not \
                dtypes.bool_ and not item.is_floating_point():
            item = item.item()
        if isinstance(item, _tensor.Tensor) and item.ndim == 0 and item.dtype is dtypes.bool_:
            item = bool(item.item())
        if item is None:
            result = ops.unsqueeze(result, dim)
            dim += 1
        elif item is Ellipsis:
            dim += self.ndim - specified
        elif isinstance(item, bool):
            result = ops.unsqueeze(result, dim)
            recorded.append((dim, _index_tensor([0] if item else [])))
            dim += 1
        elif _is_int(item):
            result = _select(result, dim, operator.index(item))
        elif isinstance(item, slice):
            result = _slice(result, dim, item, skip_whole=True)
            dim += 1
        elif isinstance(item, _tensor.Tensor):
            recorded.append((dim, item))
            dim += item.ndim if item.dtype is dtypes.bool_ else 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(item).__name__})")
    if not recorded:
        return ops.alias(result) if result is self else result
    indices: list[Any] = []
    covered = 0  # dimensions the indices so far account for
    for position, tensor in recorded:
        indices += [None] * (position - covered)
        indices.append(tensor)
        covered = position + (tensor.ndim if tensor.dtype is dtypes.bool_ else 1)
    return ops.index(result, indices)

# -- linear algebra and nn --------------------------------------------------------------------

__all__ += ["linear", "matmul"]


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """y = x Wᵀ + b; addmm on a 2-D input with a bias, as PyTorch decomposes it."""
    if input.ndim == 2 and bias is not None:
        return ops.addmm(bias, input, weight.t())
    output = matmul(input, weight.t())
    return output if bias is None else output + bias


def matmul(input: Any, other: Any) -> Any:
    if input.ndim == 2 and other.ndim == 2:
        return ops.mm(input, other)
    raise NotImplementedError("matmul is only implemented for 2-D inputs so far")


class CompositeMethods:
    """Tensor methods for the composite ops above."""

    __slots__ = ()

    # -- broadcasting and dtype ---------------------------------------------------------------
    def sum_to_size(self, *size: Any) -> Any:
        return sum_to_size(self, *size)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        return to(self, *args, **kwargs)

    def float(self) -> Any:
        return to(self, dtypes.float32)

    def double(self) -> Any:
        return to(self, dtypes.float64)

    # -- elementwise --------------------------------------------------------------------------
    def __rtruediv__(self, other: Any) -> Any:
        return rtruediv(self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """`x.where(condition, y)` is `where(condition, x, y)`."""
        return ops.where(condition, self, other)

    # -- reductions ---------------------------------------------------------------------------
    def var(self, *args: Any, **kwargs: Any) -> Any:
        return var(self, *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Any:
        return std(self, *args, **kwargs)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Any:
        return norm(self, p, dim, keepdim, dtype)

    # -- shape and indexing -------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Any:
        return reshape(self, *shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        return flatten(self, start_dim, end_dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        return chunk(self, chunks, dim)

    def split(self, split_size: Any, dim: int = 0) -> tuple:
        return split(self, split_size, dim)

    def contiguous(self) -> Any:
        return contiguous(self)

    def expand_as(self, other: Any) -> Any:
        return ops.expand(self, other.shape)

    def view_as(self, other: Any) -> Any:
        return ops.view(self, other.shape)

    def __getitem__(self, index: Any) -> Any:
        return getitem(self, index)

    # -- linear algebra and nn ----------------------------------------------------------------
    def matmul(self, other: Any) -> Any:
        return matmul(self, other)

    __matmul__ = matmul
