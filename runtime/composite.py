"""Composite ops: plain Python over spec ops, like PyTorch's CompositeImplicitAutograd.

They have no node of their own; the graph shows the ops they are made of, exactly as
PyTorch's does (`linear` on a 2-D input records TBackward0 and AddmmBackward0).
`CompositeMethods` holds their Tensor methods, which runtime/methods.py sets on Tensor.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np

from generated import ops
from generated.tensor_methods import TensorMethods
from runtime import (
    arguments,
    devices,
    dtypes,
    factories,
    grad_mode,
    kernels,
    memory_formats,
    random_ops,
)
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.arguments import int_list

__all__: list[str] = []

# -- broadcasting and dtype -------------------------------------------------------------------

__all__ += []


def sum_to_size(self: Any, *size: Any) -> Any:
    """Sum a broadcast tensor back to `size` (PyTorch's at::sum_to)."""
    size = int_list(size)
    shape = self.shape
    if shape == size:  # a bool tensor is summed all the same: its result is int64
        return self.long() if self.dtype is dtypes.bool_ else self
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    lead = len(shape) - len(size)
    result = self
    if lead > 0:
        result = result.sum(tuple(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and result.shape[i] != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


_TO_SIGNATURES = (
    "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)",
    "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
    "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
)


def _python_type_name(value: Any) -> str:
    """How PyTorch's argument errors name a value's type."""
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, dtypes.dtype | devices.device):
        return f"torch.{type(value).__name__}"
    return type(value).__name__


def _to_arguments(args: tuple, kwargs: dict) -> tuple[Any, dtypes.dtype | None, bool]:
    """(device, dtype, copy) from the arguments of `Tensor.to`, by its three signatures:
    `to(device=None, dtype=None, non_blocking, copy)`, `to(dtype, non_blocking, copy)` and
    `to(tensor, non_blocking, copy)`."""
    def is_device(value: Any) -> bool:
        return value is None or isinstance(value, str | devices.device) or \
            isinstance(value, int) and not isinstance(value, bool)

    names = ("non_blocking", "copy")
    if args and isinstance(args[0], Tensor):
        signature, first = ("tensor", *names), args[0]
        bound = dict(zip(signature, args, strict=False))
        device, dtype = first.device, first.dtype
    elif args and isinstance(args[0], dtypes.dtype):
        signature = ("dtype", *names)
        bound = dict(zip(signature, args, strict=False))
        device, dtype = None, args[0]
    else:
        signature = ("device", "dtype", *names)
        bound = dict(zip(signature, args, strict=False))
        device, dtype = bound.get("device"), bound.get("dtype")
    valid = len(args) <= len(signature)
    for key, value in kwargs.items():
        if key in bound or key not in (*signature, "memory_format"):
            valid = False
        bound[key] = value
    device, dtype = bound.get("device", device), bound.get("dtype", dtype)
    valid = valid and is_device(device) and (dtype is None or isinstance(dtype, dtypes.dtype)) \
        and all(isinstance(bound.get(name, False), bool) for name in names)
    if not valid:
        got = [_python_type_name(a) for a in args]
        if kwargs:
            got.append("".join(f"{k}={_python_type_name(v)}, " for k, v in kwargs.items()))
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n"
                        + "".join(f" * {s}\n" for s in _TO_SIGNATURES))
    return device, dtype, bound.get("copy", False)


def to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.to(dtype)`, `x.to(device)`, `x.to(device, dtype)`, `x.to(other)`: the tensor itself
    if nothing changes (and no `copy=True`), else a copy (ToCopyBackward0). A result of an
    integer or bool dtype has no history, as in PyTorch: it is not differentiable."""
    memory_format = None
    if len(args) == 1 and not kwargs and isinstance(args[0], dtypes.dtype):
        device, dtype, copy = None, args[0], False  # the usual call, and the formulas'
    else:
        device, dtype, copy = _to_arguments(args, kwargs)
        memory_format = kwargs.get("memory_format")
    if device is not None and devices.to_cpu(device) != devices.CPU:
        copy = True  # "cpu:0" is another device than "cpu" to PyTorch, which copies there
    if memory_format is not None:
        memory_formats.check_rank(memory_format, self.ndim)
    if (dtype is None or dtype is self.dtype) and not copy and (
            memory_format in (None, memory_formats.preserve_format)
            or memory_formats.is_contiguous(self._data, memory_format)):
        return self
    dtype = self.dtype if dtype is None else dtype
    source = self if dtype.is_floating_point or dtype.is_complex else self.detach()
    return _laid_out(ops._to_copy(source, dtype=dtype), self, memory_format)


def _laid_out(result: Any, source: Any, memory_format: Any) -> Any:
    """A fresh copy `result` of `source`, given the strides torch gives a copy in
    `memory_format` (None: gradgen's row-major copy, as before)."""
    if memory_format is not None:
        result._data = memory_formats.laid_out(
            result._data, memory_formats.strides_for(memory_format, source._data))
    return result


def clone(input: Any, *, memory_format: Any = None) -> Any:
    """`torch.clone(x)`, `x.clone(memory_format=torch.channels_last)`: the spec's clone
    (CloneBackward0), its copy in the memory format asked for."""
    if memory_format is None:
        return ops.clone(input)
    if not isinstance(memory_format, memory_formats.memory_format):
        raise TypeError(f"clone(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    if isinstance(input, Tensor):
        memory_formats.check_rank(memory_format, input.ndim)
    return _laid_out(ops.clone(input), input, memory_format)


__all__ += ["clone"]


def clone_method(self: Any, *, memory_format: Any = None) -> Any:
    """Tensor.clone: the spec's method, or with a memory format `clone` above."""
    if memory_format is None:
        return ops.clone(self) if not _modes.active else TensorMethods.clone(self)
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(clone_method, (self,), {"memory_format": memory_format})
        if heard is not _modes.PASS:
            return heard
    return clone(self, memory_format=memory_format)


def _as_dtype(self: Any, dtype: Any, memory_format: Any = None) -> Any:
    """`x.float()`, `x.half(memory_format=torch.channels_last)` & co: x.to(dtype)."""
    if memory_format is None:
        return to(self, dtype)
    return to(self, dtype, memory_format=memory_format)


def _conversion(name: str, dtype: dtypes.dtype) -> Any:
    """The Tensor method `name` that converts to `dtype` (`x.byte()`: x.to(torch.uint8)),
    heard by a mode as itself (runtime/modes.py's `heard`)."""
    def convert(self: Tensor, memory_format: Any = None) -> Any:
        return _as_dtype(self, dtype, memory_format)

    convert.__name__ = name
    convert.__qualname__ = f"CompositeMethods.{name}"
    convert.__doc__ = f"x.to({dtype})"
    return _modes.heard(convert)


def _tensor_type(self: Any, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """`x.type()` is the tensor's type name (`torch.FloatTensor`); `x.type(dtype)` converts,
    taking a dtype, such a name or the legacy class of that name."""
    if dtype is None:
        return self.dtype._type_string
    if isinstance(dtype, str):
        dtype = dtypes.from_type_string(dtype)
    elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), dtypes.dtype):
        dtype = dtype.dtype  # a legacy tensor type, torch.DoubleTensor (runtime/legacy.py)
    elif not isinstance(dtype, dtypes.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return to(self, dtype)


# -- elementwise ------------------------------------------------------------------------------

def rtruediv(self: Any, other: Any) -> Any:
    """`other / self` for a number `other`: self.reciprocal() * other, as PyTorch computes it."""
    return ops.mul(ops.reciprocal(self), other)


# -- reductions -------------------------------------------------------------------------------

__all__ += ["var", "std", "norm"]

_SELF = arguments.Param("self_", "Tensor")
_DIM = arguments.Param("dim", "int[1]?")


def _variance_overloads(name: str, correction_op: Any) -> tuple:
    """PyTorch's Python spellings of var/std, each recorded as `<name>.correction`.

    `unbiased=` is the older spelling of correction=1 (True) or correction=0 (False).
    """

    def unbiased_all(self_: Any, unbiased: bool = True) -> Any:
        return correction_op(self_, None, correction=int(unbiased))

    def unbiased_dim(self_: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
        return correction_op(self_, dim, correction=int(unbiased), keepdim=keepdim)

    unbiased = arguments.Param("unbiased", "bool", has_default=True)
    keepdim = arguments.Param("keepdim", "bool", has_default=True)
    no_kernel = None  # composites: only their wrappers are ever called
    return (
        arguments.Overload(unbiased_all, no_kernel, f"{name}(Tensor self, bool unbiased=True) "
                          "-> Tensor", (_SELF, unbiased)),
        arguments.Overload(unbiased_dim, no_kernel, f"{name}.dim(Tensor self, int[1]? dim, "
                          "bool unbiased=True, bool keepdim=False) -> Tensor",
                          (_SELF, _DIM, unbiased, keepdim)),
        arguments.Overload(correction_op, no_kernel, f"{name}.correction(Tensor self, int[1]? "
                          "dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
                          (_SELF, _DIM._replace(has_default=True),
                           arguments.Param("correction", "Scalar?", True, True),
                           arguments.Param("keepdim", "bool", True, True))),
    )


def var(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.var()`, `x.var(0)`, `x.var(dim=1, unbiased=False)`, `x.var(correction=0)`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(var, (input, *args), {**kwargs})
        if heard is not _modes.PASS:
            return heard
    overloads = _variance_overloads("var", ops.var_correction)
    return arguments.call("var", overloads, (input, *args), kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.std()`, `x.std(0)`, `x.std(dim=1, unbiased=False)`, `x.std(correction=0)`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(std, (input, *args), {**kwargs})
        if heard is not _modes.PASS:
            return heard
    overloads = _variance_overloads("std", ops.std_correction)
    return arguments.call("std", overloads, (input, *args), kwargs)


# -- issue 16 (edge cases): binary max and min --------------------------------------------
# `torch.max(a, b)` and `torch.min(a, b)` (max.other, min.other) are composites in PyTorch:
# they are maximum and minimum (whose nodes, MaximumBackward0 and MinimumBackward0, they
# record). They join the overloads that `max` and `min` resolve among, after the spec's.
for _name, _wrapper, _kernel in (("max", ops.maximum, kernels.maximum),
                                 ("min", ops.minimum, kernels.minimum)):
    ops.BY_NAME[_name] = (*ops.BY_NAME[_name], arguments.Overload(
        _wrapper, _kernel, f"{_name}.other(Tensor self, Tensor other) -> Tensor",
        (_SELF, arguments.Param("other", "Tensor"))))


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


def matrix_norm_of(A: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """torch.linalg.matrix_norm once its arguments are checked (torch.norm's matrix norms
    come here too)."""
    if ord not in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):  # (checked first)
        shown = f"{ord:g}" if isinstance(ord, int | float) else ord  # C++'s way: 3, not 3.0
        raise RuntimeError(f"linalg.matrix_norm: Order {shown} not supported.")
    rows, columns = _two_dims(A, tuple(dim), "matrix_norm")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):  # before any order's own check
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {kernels._scalar_type_name(A._data.dtype)}")
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, [rows, columns], keepdim, dtype=dtype)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(A, ord, rows, columns, keepdim, dtype)
    # |A| summed along one dim, then the largest (or smallest) of those sums along the other.
    summed, picked = (rows, columns) if abs(ord) == 1 else (columns, rows)
    sums = ops.linalg_vector_norm(A, 1, [summed], keepdim, dtype=dtype)
    if not keepdim and picked > summed:
        picked -= 1  # the summed dimension is gone
    return _extreme(sums, ord > 0, picked, keepdim)


def _extreme(values: Any, largest: bool, dim: int, keepdim: bool) -> Any:
    """The largest (smallest) of the non-negative values along dim. torch's largest over an
    empty dim is 0 (their sum, which keeps the gradient's path); its smallest raises."""
    if largest and values.shape[dim] == 0:
        return ops.sum(values, [dim], keepdim)
    return (ops.amax if largest else ops.amin)(values, [dim], keepdim)


def _singular_value_norm(A: Any, ord: Any, rows: int, columns: int, keepdim: bool,
                         dtype: Any) -> Any:
    """The norms of the singular values: their sum ('nuc'), largest (2) or smallest (-2)."""
    if dtype is not None:
        A = A.to(dtype)
    moved = A.movedim((rows, columns), (-2, -1)) if (rows, columns) != (A.ndim - 2, A.ndim - 1) \
        else A
    S = ops._linalg_svd(moved, False, True)[1]  # U and Vh too: the derivatives need them
    value = S.sum(-1) if ord == "nuc" else _extreme(S, ord == 2, -1, False)
    if keepdim:  # as torch: two size-1 dims at the end, permuted back (PermuteBackward0)
        order = [d for d in range(A.ndim) if d not in (rows, columns)] + [rows, columns]
        value = value.unsqueeze(-1).unsqueeze(-1).permute(
            [order.index(d) for d in range(A.ndim)])
    return value


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Any:
    """torch.norm as PyTorch's Python computes it: a vector norm (linalg_vector_norm), "fro"
    over at most two dims included; the other string orders ("nuc", "fro" over more dims)
    are linalg.matrix_norm's, over the given dims or all of them."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(norm, (input, p, dim, keepdim, dtype), {})
        if heard is not _modes.PASS:
            return heard
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return matrix_norm_of(input, p, list(range(input.ndim)) if dims is None else dims,
                                  keepdim, dtype)
        p = 2
    return ops.linalg_vector_norm(input, 2 if p is None else p, dims, keepdim,
                                  dtype=dtype)

# -- shape and indexing -----------------------------------------------------------------------

__all__ += ["reshape", "flatten", "unflatten", "chunk", "split"]


def reshape(input: Any, *shape: Any) -> Any:
    """A view when the strides allow one, else a copy (CloneBackward0, UnsafeViewBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(reshape, (input, *shape), {})
        if heard is not _modes.PASS:
            return heard
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
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(flatten, (input, start_dim, end_dim), {})
        if heard is not _modes.PASS:
            return heard
    start, end = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if input.ndim == 0:  # after the dims are checked, as in PyTorch
        return reshape(input, 1)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input.shape
    merged = 1
    for size in shape[start:end + 1]:
        merged *= size
    return reshape(input, *shape[:start], merged, *shape[end + 1:])


def unflatten(input: Any, dim: int, sizes: Any) -> Any:
    """Split dimension `dim` into `sizes` (one of which may be -1, inferred), as a view
    when the strides allow one (ViewBackward0), else a copy."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(unflatten, (input, dim, sizes), {})
        if heard is not _modes.PASS:
            return heard
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    dim = _wrap_dim(dim, input.ndim)
    length = input.shape[dim] if input.ndim else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten: only one dimension can be inferred")
    known = _product(s for s in sizes if s != -1)
    if -1 in sizes and known and length % known == 0:
        sizes = tuple(length // known if s == -1 else s for s in sizes)
    if -1 in sizes or _product(sizes) != length:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({length}) in the input tensor")
    return reshape(input, *input.shape[:dim], *sizes, *input.shape[dim + 1:])


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple:
    """`chunks` pieces of equal size (the last may be smaller), made by split."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(chunk, (input, chunks, dim), {})
        if heard is not _modes.PASS:
            return heard
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
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(split, (tensor, split_size_or_sections, dim), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(split_size_or_sections, int):
        return ops.split(tensor, split_size_or_sections, dim)
    return ops.split_with_sizes(tensor, list(split_size_or_sections), dim)


def contiguous(self: Any, memory_format: Any = None) -> Any:
    """The tensor itself when it is already contiguous (in `memory_format`, row-major by
    default), else a copy that is."""
    if memory_format is None or memory_format is memory_formats.contiguous_format:
        return self if self.is_contiguous() else ops.clone(self)
    if memory_format is memory_formats.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if memory_formats.is_contiguous(self._data, memory_format):
        return self
    return clone(self, memory_format=memory_format)


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
            v is None or v is Ellipsis or isinstance(v, slice | list | tuple | Tensor)
            for v in index):
        warn_at_caller(_SEQUENCE_AS_TUPLE_WARNING, UserWarning)
        return tuple(index)
    return (index,)


def _index_tensor(value: Any) -> Any:
    """A list or array index as a tensor: bool stays a mask, anything else becomes long."""
    result = factories.tensor(value)
    return result if result.dtype is dtypes.bool_ else factories.tensor(value, dtype=dtypes.int64)


def _specified_dims(items: tuple) -> int:
    """How many dimensions of the tensor the items index (a bool mask: as many as it has)."""
    count = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, bool):
            continue
        if isinstance(item, Tensor) and item.dtype is dtypes.bool_:
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
    result, indices = _decompose_index(self, index, lone_slice_is_view=True)
    if indices is None:
        return ops.alias(result) if result is self else result
    return ops.index(result, indices)


def setitem(self: Any, index: Any, value: Any) -> None:
    """`x[index] = value`, as PyTorch does it: through the view that basic indexing gives
    (`copy_`), or with index_put_ where integer or boolean arrays index."""
    if not isinstance(value, Tensor):
        if type(value) is int or type(value) is float:  # a Scalar: converted as fill_ does
            kernels.check_fits(value, self._data.dtype)
        value = factories.tensor(value, dtype=self.dtype)
    target, indices = _decompose_index(self, index, lone_slice_is_view=False)
    if indices is None:
        # PyTorch's copy_to: the value loses its leading 1s (so `x[0] = row[None]` fits),
        # then is expanded to the target, with expand's message where it does not fit.
        sizes = value.shape
        first = next((i for i, size in enumerate(sizes) if size != 1), len(sizes))
        value = value.view(sizes[first:])
        if value.shape != target.shape:
            value = value.expand(target.shape)
        target.copy_(value)
    else:
        ops.index_put_(target, indices, value)


def _decompose_index(self: Any, index: Any, lone_slice_is_view: bool
                     ) -> tuple[Any, list | None]:
    """The view that the basic part of `index` gives (ints, slices, None, `...`), and the
    index.Tensor indices (`Tensor?[]`) its integer and boolean arrays make, if any.

    A slice over a whole dimension is skipped, as PyTorch skips it, except a lone one when
    reading (`x[:]` records SliceBackward0 there)."""
    if index is None:
        return ops.unsqueeze(self, 0), None
    if index is Ellipsis:
        return self, None
    if _is_int(index):
        return _select(self, 0, operator.index(index)), None
    if isinstance(index, slice):
        return _slice(self, 0, index, skip_whole=not lone_slice_is_view), None
    items = _gathering_items(index)
    specified = _specified_dims(items)
    if specified > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    result, dim = self, 0
    recorded: list[tuple[int, Any]] = []  # (dim of result, index tensor) for index.Tensor
    for item in items:
        if item is Ellipsis:
            dim += self.ndim - specified
        else:
            result, dim = _apply_index_item(result, dim, _read_0_dim(item), recorded)
    if not recorded:
        return result, None
    return result, _index_tensor_list(recorded)


def _gathering_items(index: Any) -> tuple:
    """The items of an index, each sequence inside it (a list, an array, a range, a tuple)
    made an index Tensor that gathers, as in PyTorch."""
    return tuple(factories.arange(i.start, i.stop, i.step) if isinstance(i, range) else
                 _index_tensor(list(i) if isinstance(i, tuple) else i)
                 if isinstance(i, list | np.ndarray | tuple) else i
                 for i in _index_items(index))


def _read_0_dim(item: Any) -> Any:
    """A 0-dim integer Tensor indexes as its int, a 0-dim bool one as its bool."""
    if isinstance(item, Tensor) and item.ndim == 0 and not item.is_floating_point():
        return bool(item.item()) if item.dtype is dtypes.bool_ else item.item()
    return item


def _apply_index_item(result: Any, dim: int, item: Any, recorded: list) -> tuple[Any, int]:
    """One basic item of an index applied to `result` at `dim` (an index Tensor, or a bool's
    one-element or empty one, appended to `recorded` instead); the next dim."""
    if item is None:
        return ops.unsqueeze(result, dim), dim + 1
    if isinstance(item, bool):
        recorded.append((dim, _index_tensor([0] if item else [])))
        return ops.unsqueeze(result, dim), dim + 1
    if _is_int(item):
        return _select(result, dim, operator.index(item)), dim
    if isinstance(item, slice):
        return _slice(result, dim, item, skip_whole=True), dim + 1
    if isinstance(item, Tensor):
        recorded.append((dim, item))
        return result, dim + (item.ndim if item.dtype is dtypes.bool_ else 1)
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                     f"byte Variables are valid indices (got {type(item).__name__})")


def _index_tensor_list(recorded: list[tuple[int, Any]]) -> list[Any]:
    """index.Tensor's `Tensor?[]` from the index tensors and the dims they stand at."""
    indices: list[Any] = []
    covered = 0  # dimensions the indices so far account for
    for position, tensor in recorded:
        indices += [None] * (position - covered)
        indices.append(tensor)
        covered = position + (tensor.ndim if tensor.dtype is dtypes.bool_ else 1)
    return indices


# -- linear algebra and nn --------------------------------------------------------------------
# The torch.nn.functional-level ops below take torch.nn.functional's signatures. Those whose
# name torch's namespace uses for something else (embedding, binary_cross_entropy_with_logits
# are aten ops there) or does not have are left out of __all__: runtime.nn imports them.

__all__ += ["linear", "matmul", "outer", "ger", "softmax", "log_softmax", "dropout", "layer_norm"]


def _product(sizes: Any) -> int:
    result = 1
    for size in sizes:
        result *= size
    return result


def _is_contiguous(tensor: Any) -> bool:
    return tensor._data.flags.c_contiguous


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """y = x Wᵀ + b, decomposed as PyTorch does: addmm on 2-D input with a bias, addmm on the
    input flattened to 2-D (then a view back) for a contiguous N-D input with a 1-D bias,
    else matmul and an in-place add."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(linear, (input, weight, bias), {})
        if heard is not _modes.PASS:
            return heard
    if bias is not None and type(input) is Tensor and input._data.ndim == 2 \
            and isinstance(weight, Tensor) and weight._data.ndim:
        # nn.Linear's usual call, with the op called directly rather than through the method
        # (and the checks of _linear_other passed without the ndim properties' calls)
        return ops.addmm(bias, input, ops.t(weight))
    return _linear_other(input, weight, bias)


def _linear_other(input: Any, weight: Any, bias: Any) -> Any:
    """linear's calls other than nn.Linear's usual one."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is not None and type(input) is Tensor and input._data.ndim == 2:
        return ops.addmm(bias, input, ops.t(weight))
    if bias is not None and _is_contiguous(input) and (input.ndim == 3 or bias.ndim == 1):
        flat = reshape(input, _product(input.shape[:-1]), input.shape[-1])
        output = ops.addmm(bias, flat, weight.t())
        return ops.view(output, (*input.shape[:-1], output.shape[1]))
    output = matmul(input, weight.t())
    return output if bias is None else output.add_(bias)


def matmul(input: Any, other: Any, *, out: Tensor | None = None) -> Any:
    """torch.matmul, folded into dot / mv / mm / bmm as PyTorch folds it, so the graph
    records the same nodes (MmBackward0 under UnsafeViewBackward0 for a batch times a matrix).
    With out=, the product is written into out (runtime/out.py), of the product's own dtype."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(matmul, (input, other), {"out": out})
        if heard is not _modes.PASS:
            return heard
    if out is not None:
        return _out.call("matmul", matmul, (input, other), {}, out, dtype_rule="same")
    dim1, dim2 = input.ndim, other.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    if dim1 == 1 and dim2 == 1:
        return ops.dot(input, other)
    if dim1 == 2 and dim2 == 1:
        return ops.mv(input, other)
    if dim1 == 1 and dim2 == 2:
        return ops.squeeze_(ops.mm(input.unsqueeze(0), other), 0)  # in place, as torch does
    if dim1 == 2 and dim2 == 2:
        return ops.mm(input, other)
    if _should_fold(input, other):
        return _matmul_folded(input, other)
    return _matmul_batched(input, other)


def _should_fold(input: Any, other: Any) -> bool:
    """PyTorch's choice: fold a batch times a matrix (or vector) into one mm (or mv) when an
    input requires grad (cheaper gradients), else only when the fold is a view."""
    larger = input.ndim >= other.ndim
    folded = input if larger else other.transpose(-1, -2)
    if folded.ndim < 3 or (other.ndim if larger else input.ndim) > 2:
        return False
    if input.requires_grad or other.requires_grad:
        return True
    if input.ndim == 2:
        return False
    if folded.numel() == 0:
        return True
    shape, strides = folded.shape, folded._data.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(folded.ndim - 2))


def _matmul_folded(input: Any, other: Any) -> Any:
    """A batch of matrices times a matrix or a vector: one mm / mv on the batch flattened to
    rows. With the batch on the right, work on the transposes and transpose back."""
    transpose = other.ndim > input.ndim
    if transpose:
        left = other.transpose(-1, -2)
        right = input.t() if input.ndim == 2 else input
    else:
        left, right = input, other
    output_shape = left.shape[:-1] + (right.shape[1:] if right.ndim == 2 else ())
    folded = reshape(left, _product(left.shape[:-1]), left.shape[-1])
    if right.ndim == 1:
        return ops._unsafe_view(ops.mv(folded, right), output_shape)
    output = ops._unsafe_view(ops.mm(folded, right), output_shape)
    return ops.clone(output.transpose(-1, -2)) if transpose else output


def _matmul_batched(input: Any, other: Any) -> Any:
    """Broadcast the batch dimensions, flatten them into one, bmm; a vector on either side
    takes part as a matrix of one row (left) or one column (right)."""
    rows = input.shape[-2] if input.ndim > 1 else 1
    inner = input.shape[-1]
    inner_other = other.shape[-2] if other.ndim > 1 else other.shape[0]
    columns = other.shape[-1] if other.ndim > 1 else 1
    batch = kernels.broadcast_shapes(input.shape[:-2], other.shape[:-2])
    count = _product(batch)
    left = reshape(input.expand(*batch, rows, inner), count, rows, inner)
    if other.ndim == 1:
        right = reshape(other.expand(*batch, inner_other), count, inner_other).unsqueeze(2)
    else:
        right = reshape(other.expand(*batch, inner_other, columns), count, inner_other,
                        columns)
    output_shape = batch + ((rows,) if input.ndim > 1 else ()) + \
        ((columns,) if other.ndim > 1 else ())
    output = ops.bmm(left, right)
    if other.ndim == 1:
        output = ops.squeeze(output, -1)
    return ops._unsafe_view(output, output_shape)


def outer(input: Any, vec2: Any, *, out: Tensor | None = None) -> Any:
    """The outer product, as PyTorch computes it: input as a column times vec2. With out=,
    it is written into out (runtime/out.py) as a product is: any dtype it casts to."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(outer, (input, vec2), {"out": out})
        if heard is not _modes.PASS:
            return heard
    if out is not None:
        return _out.call("outer", outer, (input, vec2), {}, out)
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return reshape(input, input.shape[0], 1) * vec2


ger = outer


def _softmax_dim(name: str, ndim: int) -> int:
    """torch.nn.functional's implicit dim for softmax without `dim` (deprecated there too)."""
    warn_at_caller(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                   "to include dim=X as an argument.")
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x), dim): _softmax, after a cast to `dtype` if one is given."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(softmax, (input, dim, _stacklevel, dtype), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(_stacklevel, dtypes.dtype):  # torch.softmax(x, dim, dtype)
        dtype = _stacklevel
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return ops._softmax(to(input, dtype), dim, False)


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Any:
    """x - log(sum(exp(x), dim)): _log_softmax, after a cast to `dtype` if one is given."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(log_softmax, (input, dim, _stacklevel, dtype), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(_stacklevel, dtypes.dtype):  # torch.log_softmax(x, dim, dtype)
        dtype = _stacklevel
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return ops._log_softmax(to(input, dtype), dim, False)


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str, size_average: bool | None = None,
               reduce: bool | None = None) -> int:
    """A reduction string as at::Reduction's int; the legacy size_average/reduce win."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warn_at_caller("size_average and reduce args will be deprecated, please use "
                       f"reduction='{reduction}' instead.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _warn_target_size(input: Any, target: Any) -> None:
    if target.shape != input.shape:
        warn_at_caller(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.")


def _size(tensor: Any) -> str:
    return f"torch.Size({list(tensor.shape)})"


def _broadcast_pair(input: Any, target: Any) -> tuple[Any, Any]:
    """torch.broadcast_tensors for two tensors: an input already of the shape stays itself."""
    shape = kernels.broadcast_shapes(input.shape, target.shape)
    return (input if input.shape == shape else input.expand(*shape),
            target if target.shape == shape else target.expand(*shape))


def _weighted_loss(errors: Any, weight: Any, reduction: int) -> Any:
    """torch.nn.functional's weighted mse/l1: weighted errors, a weighted mean."""
    if weight.shape != errors.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == 0:
        return weighted
    if reduction == 2:
        return weighted.sum()
    return weighted.sum() / weight.sum()


def mse_loss(input: Any, target: Any, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Any:
    """Mean squared error: mse_loss (MseLossBackward0), or by hand with a weight."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(mse_loss, (input, target, size_average, reduce, reduction, weight),
            {})
        if heard is not _modes.PASS:
            return heard
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss((input - target).pow(2), weight, enum)
    return ops.mse_loss(input, target, enum)


def l1_loss(input: Any, target: Any, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Any:
    """Mean absolute error, made of sub, abs and mean / sum as PyTorch makes it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(l1_loss, (input, target, size_average, reduce, reduction, weight),
            {})
        if heard is not _modes.PASS:
            return heard
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss((input - target).abs(), weight, enum)
    return _l1_loss(input, target, enum)


def _l1_loss(input: Any, target: Any, reduction: int) -> Any:
    errors = (input - target).abs()
    return errors if reduction == 0 else errors.sum() if reduction == 2 else errors.mean()


def smooth_l1_loss(input: Any, target: Any, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Any:
    """Huber-like loss: quadratic below beta, linear above (l1_loss when beta is 0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(smooth_l1_loss, (input, target, size_average, reduce, reduction,
            beta), {})
        if heard is not _modes.PASS:
            return heard
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _l1_loss(input, target, enum)
    return ops.smooth_l1_loss(input, target, enum, beta)


def nll_loss(input: Any, target: Any, weight: Any = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Any:
    """Negative log likelihood of class indices: nll_loss_forward's output."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(nll_loss, (input, target, weight, size_average, ignore_index,
            reduce, reduction), {})
        if heard is not _modes.PASS:
            return heard
    return _nll_loss(input, target, weight, _reduction(reduction, size_average, reduce),
                     ignore_index)


def _nll_loss(input: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    """PyTorch's nll_loss_nd: nll_loss for (C) and (N, C) scores, nll_loss2d for (N, C, H, W),
    and nll_loss2d on a (N, C, 1, L) reshape for any other number of dimensions."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim >= 2 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}).")
    if input.ndim <= 2:
        return ops.nll_loss_forward(input, target, weight, reduction, ignore_index)[0]
    expected = input.shape[:1] + input.shape[2:]
    if target.shape != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    if input.ndim == 4:
        return ops.nll_loss2d_forward(input, target, weight, reduction, ignore_index)[0]
    n, classes = input.shape[:2]
    output = ops.nll_loss2d_forward(reshape(input, n, classes, 1, -1),
                                    target.contiguous().view(n, 1, -1), weight, reduction,
                                    ignore_index)[0]
    return output.view(expected) if reduction == _NONE else output


def cross_entropy(input: Any, target: Any, weight: Any = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """log_softmax over the classes, then nll_loss for class-index targets (or the cross
    entropy with probability targets), blended with the uniform distribution by
    `label_smoothing`, in the ops PyTorch's cross_entropy is made of."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cross_entropy, (input, target, weight, size_average, ignore_index,
            reduce, reduction, label_smoothing), {})
        if heard is not _modes.PASS:
            return heard
    enum = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if target.dtype.is_floating_point and ignore_index >= 0:
        # Probabilities have no class index to ignore (a negative one is never a class).
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    log_probabilities = log_softmax(input, class_dim, dtype=input.dtype)
    if target.dtype.is_floating_point:
        return _cross_entropy_probabilities(log_probabilities, target, weight, enum,
                                            label_smoothing, class_dim)
    loss = _nll_loss(log_probabilities, target, weight, enum, ignore_index)
    if label_smoothing == 0.0:
        return loss
    n_classes = log_probabilities.shape[class_dim]
    ignore = target == ignore_index
    weighted = log_probabilities if weight is None else \
        log_probabilities * weight.view(_class_shape(log_probabilities, class_dim))
    smooth = (-weighted.sum(class_dim)).masked_fill(ignore, 0.0)
    if enum == _MEAN:
        kept = (~ignore).reshape(-1)
        count = kept.sum() if weight is None else weight.gather(0, target.reshape(-1)[kept]).sum()
        smooth = smooth.sum() / count
    elif enum == _SUM:
        smooth = smooth.sum()
    return ops.mul_Scalar(loss, 1 - label_smoothing) + \
        ops.mul_Scalar(smooth, label_smoothing / n_classes)


_NONE, _MEAN, _SUM = 0, 1, 2  # PyTorch's reduction enum


def _class_shape(input: Any, class_dim: int) -> list[int]:
    """The shape that broadcasts a per-class weight along `class_dim`."""
    shape = [1] * input.ndim
    shape[class_dim] = input.shape[class_dim]
    return shape


def _cross_entropy_probabilities(log_probabilities: Any, target: Any, weight: Any,
                                 reduction: int, label_smoothing: float,
                                 class_dim: int) -> Any:
    """-Σ target · log p, for a target that gives each class a probability."""
    if target.shape != log_probabilities.shape:
        raise RuntimeError(
            "Expected target size to be the same as input size when target contains class "
            f"probabilities, got target size {list(target.shape)} and input size "
            f"{list(log_probabilities.shape)}")
    n_classes = log_probabilities.shape[class_dim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    product = log_probabilities * target
    if weight is not None:
        product = product * weight.view(_class_shape(log_probabilities, class_dim))
    if reduction == _MEAN:
        return ops.div_Scalar(-product.sum(), log_probabilities.numel() / n_classes)
    if reduction == _SUM:
        return -product.sum()
    return -product.sum(class_dim)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Any:
    """-(t log x + (1 - t) log(1 - x)) for probabilities x, weighted."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(binary_cross_entropy, (input, target, weight, size_average, reduce,
            reduction), {})
        if heard is not _modes.PASS:
            return heard
    enum = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(*kernels.broadcast_shapes(target.shape, weight.shape))
    return ops.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """binary_cross_entropy of sigmoid(input), computed stably from the logits."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(binary_cross_entropy_with_logits, (input, target, weight,
            size_average, reduce, reduction, pos_weight), {})
        if heard is not _modes.PASS:
            return heard
    enum = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, enum)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    """Zero each element with probability p and scale the rest by 1/(1-p), as PyTorch's CPU
    path does: a noise tensor laid out as the input, bernoulli_(1 - p) then div_(1 - p),
    times the input (MulBackward0); the input itself when not training or p is 0."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dropout, (input, p, training, inplace), {})
        if heard is not _modes.PASS:
            return heard
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        noise = factories.zeros((), dtype=input.dtype)
    else:
        noise = random_ops.empty_like_layout(input).bernoulli_(1 - p).div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def embedding(input: Any, weight: Any, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """Rows of `weight` looked up by the indices in `input`; padding_idx's row gets no
    gradient."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(embedding, (input, weight, padding_idx, max_norm, norm_type,
            scale_grad_by_freq, sparse), {})
        if heard is not _modes.PASS:
            return heard
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx > 0:
        if padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = weight.shape[0] + padding_idx
    if max_norm is not None:  # the rows looked up are renormalized in place first
        with grad_mode.no_grad():
            ops.embedding_renorm_(weight, input, max_norm, norm_type)
    return ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)




def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Normalize over the last len(normalized_shape) dimensions, then scale and shift."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(layer_norm, (input, normalized_shape, weight, bias, eps), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return ops.native_layer_norm(input, tuple(normalized_shape), weight, bias, eps)[0]


class CompositeMethods:
    """Tensor methods for the composite ops above."""

    __slots__ = ()

    # -- broadcasting and dtype ---------------------------------------------------------------
    def sum_to_size(self, *size: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.sum_to_size, (self, *size), {})
            if heard is not _modes.PASS:
                return heard
        return sum_to_size(self, *size)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.to, (self, *args), {**kwargs})
            if heard is not _modes.PASS:
                return heard
        return to(self, *args, **kwargs)

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.type, (self, dtype, non_blocking), {**kwargs})
            if heard is not _modes.PASS:
                return heard
        return _tensor_type(self, dtype, non_blocking, **kwargs)

    # x.float(), x.half(), x.byte(), ...: x.to(dtype), with torch's memory_format=
    float = _conversion("float", dtypes.float32)  # noqa: A003 - torch's method names
    double = _conversion("double", dtypes.float64)
    half = _conversion("half", dtypes.float16)
    bfloat16 = _conversion("bfloat16", dtypes.bfloat16)
    long = _conversion("long", dtypes.int64)
    int = _conversion("int", dtypes.int32)  # noqa: A003
    short = _conversion("short", dtypes.int16)
    char = _conversion("char", dtypes.int8)
    byte = _conversion("byte", dtypes.uint8)
    bool = _conversion("bool", dtypes.bool_)  # noqa: A003
    cfloat = _conversion("cfloat", dtypes.complex64)
    cdouble = _conversion("cdouble", dtypes.complex128)
    chalf = _conversion("chalf", dtypes.complex32)

    # -- elementwise --------------------------------------------------------------------------
    def __rtruediv__(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.__rtruediv__, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return rtruediv(self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """`x.where(condition, y)` is `where(condition, x, y)`; an argument error worded for
        the method, as torch words it."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.where, (self, condition, other), {})
            if heard is not _modes.PASS:
                return heard
        try:
            return ops.where(condition, self, other)
        except TypeError as error:
            arguments.reword_for_method(error, "where")
            raise

    # -- reductions ---------------------------------------------------------------------------
    def var(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.var, (self, *args), {**kwargs})
            if heard is not _modes.PASS:
                return heard
        return var(self, *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.std, (self, *args), {**kwargs})
            if heard is not _modes.PASS:
                return heard
        return std(self, *args, **kwargs)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.norm, (self, p, dim, keepdim, dtype), {})
            if heard is not _modes.PASS:
                return heard
        return norm(self, p, dim, keepdim, dtype)

    @property
    def T(self) -> Any:  # noqa: N802 - torch's name
        """All dimensions reversed (PermuteBackward0, as torch records it)."""
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.T.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return ops.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    def __format__(self, spec: str) -> str:
        """A 0-dim tensor formats as its number (`f"{loss:.3f}"`), others as their repr."""
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    # -- shape and indexing -------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.reshape, (self, *shape), {})
            if heard is not _modes.PASS:
                return heard
        return reshape(self, *shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.flatten, (self, start_dim, end_dim), {})
            if heard is not _modes.PASS:
                return heard
        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.unflatten, (self, dim, sizes), {})
            if heard is not _modes.PASS:
                return heard
        return unflatten(self, dim, sizes)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.chunk, (self, chunks, dim), {})
            if heard is not _modes.PASS:
                return heard
        return chunk(self, chunks, dim)

    def split(self, split_size: Any, dim: int = 0) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.split, (self, split_size, dim), {})
            if heard is not _modes.PASS:
                return heard
        return split(self, split_size, dim)

    def contiguous(self, memory_format: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.contiguous, (self,), {} if memory_format
                                    is None else {"memory_format": memory_format})
            if heard is not _modes.PASS:
                return heard
        return contiguous(self, memory_format)

    def expand_as(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.expand_as, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return ops.expand(self, other.shape)

    def view_as(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.view_as, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return ops.view(self, other.shape)

    def type_as(self, other: Any) -> Any:
        """This tensor in `other`'s dtype (itself when it already is)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.type_as, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return self.to(other.dtype)

    def __getitem__(self, index: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.__getitem__, (self, index), {})
            if heard is not _modes.PASS:
                return heard
        return getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.__setitem__, (self, index, value), {})
            if heard is not _modes.PASS:
                return heard
        setitem(self, index, value)

    # -- linear algebra and nn ----------------------------------------------------------------
    def matmul(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.matmul, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return matmul(self, other)

    __matmul__ = matmul

    def outer(self, vec2: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.outer, (self, vec2), {})
            if heard is not _modes.PASS:
                return heard
        return outer(self, vec2)

    ger = outer

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.softmax, (self, dim, dtype), {})
            if heard is not _modes.PASS:
                return heard
        return softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(CompositeMethods.log_softmax, (self, dim, dtype), {})
            if heard is not _modes.PASS:
                return heard
        return log_softmax(self, dim, dtype=dtype)


# -- batch norm, activations, losses ----------------------------------------------------------
# torch.nn.functional's batch norm, activations, losses and helpers, each made of spec ops
# as PyTorch makes it (or calling the spec op that has its own node, as silu's SiluBackward0).

__all__ += ["cosine_similarity"]  # the rest are torch.nn.functional's only


def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Any:
    """Normalize each channel (dimension 1) by its mean and variance: the batch's in
    training (blending them into running_mean / running_var in place, when given), the
    running stats in eval. native_batch_norm (NativeBatchNormBackward0) does the work."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(batch_norm, (input, running_mean, running_var, weight, bias,
            training, momentum, eps), {})
        if heard is not _modes.PASS:
            return heard
    if training:
        size = list(input.shape)
        count = size[0] if size else 1
        for extent in size[2:]:
            count *= extent
        if count == 1:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {_size(input)}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def aten_batch_norm(input: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                    training: bool, momentum: float, eps: float) -> Any:
    """ATen's batch_norm (torch.batch_norm): F.batch_norm without its Python checks."""
    if input.numel() == 0:
        # torch returns early for an empty input, before it checks any shapes: a copy (not
        # a view, so the graph still reaches input), scaled and shifted by channel 0's
        # weight and bias so they stay in the graph too.
        out = input.clone()
        if weight is not None:
            out = out * weight.select(0, 0)
        if bias is not None:
            out = out + bias.select(0, 0)
        return out
    if input.ndim < 2:  # torch reads the channel count as input.size(1)
        low = -max(input.ndim, 1)
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[{low}, {-low - 1}], but got 1)")
    return ops.native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                 momentum, eps)[0]


def relu(input: Any, inplace: bool = False) -> Any:
    """F.relu: max(0, x), in place with `inplace` (torch.relu_, ReluBackward0 either way);
    torch.relu itself takes no `inplace`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(relu, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.relu_(input) if inplace else ops.relu(input)


def silu(input: Any, inplace: bool = False) -> Any:
    """x sigmoid(x) (SiluBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(silu, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.silu_(input) if inplace else ops.silu(input)


def mish(input: Any, inplace: bool = False) -> Any:
    """x tanh(softplus(x)) (MishBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(mish, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.mish_(input) if inplace else ops.mish(input)


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x relu6(x + 3) / 6 (HardswishBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hardswish, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.hardswish_(input) if inplace else ops.hardswish(input)


def hardsigmoid(input: Any, inplace: bool = False) -> Any:
    """relu6(x + 3) / 6 (HardsigmoidBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hardsigmoid, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.hardsigmoid_(input) if inplace else ops.hardsigmoid(input)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Any:
    """x clamped to [min_val, max_val] (HardtanhBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hardtanh, (input, min_val, max_val, inplace), {})
        if heard is not _modes.PASS:
            return heard
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return ops.hardtanh_(input, min_val, max_val) if inplace else \
        ops.hardtanh(input, min_val, max_val)


def relu6(input: Any, inplace: bool = False) -> Any:
    """min(max(0, x), 6): hardtanh(x, 0, 6), as PyTorch computes it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(relu6, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x above 0, alpha (exp(x) - 1) below (EluBackward0; in place EluBackward1, whose
    formula reads the result, as the input is overwritten)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(elu, (input, alpha, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.elu_(input, alpha) if inplace else ops.elu(input, alpha)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """x above 0, negative_slope x below (LeakyReluBackward0; in place LeakyReluBackward1)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(leaky_relu, (input, negative_slope, inplace), {})
        if heard is not _modes.PASS:
            return heard
    if input.dtype.is_floating_point:
        return ops.leaky_relu_(input, negative_slope) if inplace else \
            ops.leaky_relu(input, negative_slope)
    raise NotImplementedError(  # (the leaky_relu op itself lets integers through)
        f'"leaky_relu_cpu" not implemented for \'{_type_name(input)}\'')


def _type_name(tensor: Any) -> str:
    """`Long`, `Int`, `Bool`: how torch's kernel messages name a dtype."""
    return kernels._dtype_name(tensor._data)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """log(1 + exp(beta x)) / beta, x itself above the threshold (SoftplusBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(softplus, (input, beta, threshold), {})
        if heard is not _modes.PASS:
            return heard
    if not input.dtype.is_floating_point:  # (the softplus op itself lets integers through)
        raise NotImplementedError(
            f'"softplus_cpu" not implemented for \'{_type_name(input)}\'')
    return ops.softplus(input, beta, threshold)


def logsigmoid(input: Any) -> Any:
    """log(sigmoid(x)): log_sigmoid_forward's output (LogSigmoidBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(logsigmoid, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return ops.log_sigmoid_forward(input)[0]


def glu(input: Any, dim: int = -1) -> Any:
    """a sigmoid(b) for the halves a, b of input along dim (GluBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(glu, (input, dim), {})
        if heard is not _modes.PASS:
            return heard
    return ops.glu(input, dim)


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Any:
    """softmax(-x): small values get the large weights."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(softmin, (input, dim, _stacklevel, dtype), {})
        if heard is not _modes.PASS:
            return heard
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim)
    return ops._softmax(to(-input, dtype), dim, False)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Any:
    """Squared error below delta, linear above (HuberLossBackward0); with a weight, the
    unreduced loss times it, then reduced (as PyTorch does)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(huber_loss, (input, target, reduction, delta, weight), {})
        if heard is not _modes.PASS:
            return heard
    _warn_target_size(input, target)
    input, target = _broadcast_pair(input, target)
    if weight is None:
        return ops.huber_loss(input, target, _reduction(reduction), delta)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = ops.huber_loss(input, target, 0, delta) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def kl_div(input: Any, target: Any, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Any:
    """KL(target || exp(input)) per element, reduced: input holds log-probabilities, target
    probabilities (log-probabilities with log_target). 'batchmean' divides the sum by the
    batch size, the true KL divergence; 'mean' divides by every element (and warns)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(kl_div, (input, target, size_average, reduce, reduction,
            log_target), {})
        if heard is not _modes.PASS:
            return heard
    if size_average is not None or reduce is not None:
        enum = _reduction(reduction, size_average, reduce)
    else:
        if reduction == "mean":
            warn_at_caller(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.")
        enum = _reduction("sum" if reduction == "batchmean" else reduction)
    loss = aten_kl_div(input, target, enum, log_target)
    if reduction == "batchmean" and input.ndim != 0:
        loss = loss / input.shape[0]
    return loss


def aten_kl_div(input: Any, target: Any, reduction: int, log_target: bool) -> Any:
    """ATen's kl_div (torch.kl_div): the loss per element, reduced by at::Reduction's int."""
    enum = reduction
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        # xlogy(target, target): 0 where target is 0 (the limit of t log t)
        entropy = ops.where(target == 0, 0, target * ops.log(target))
        loss = entropy - target * input
    if enum == 1:
        loss = loss.mean()
    elif enum == 2:
        loss = loss.sum()
    return loss


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """sum(x1/|x1| * x2/|x2|) along dim, each norm at least eps.

    As PyTorch: both are broadcast, divided by their own norm first (which keeps the result
    in [-1, 1]), and the norms are raised to eps in place without recording it, so the
    gradient flows as if they were not clamped."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cosine_similarity, (x1, x2, dim, eps), {})
        if heard is not _modes.PASS:
            return heard
    x1, x2 = _float_operands(x1, x2)
    x1, x2 = _broadcast_pair(x1, x2)
    norm1 = ops.linalg_vector_norm(x1, 2, [dim], True).clone()
    norm2 = ops.linalg_vector_norm(x2, 2, [dim], True).clone()
    with grad_mode.no_grad():
        norm1.clamp_min_(eps)
        norm2.clamp_min_(eps)
    return ((x1 / norm1) * (x2 / norm2)).sum(dim)


def _float_operands(x1: Any, x2: Any) -> tuple[Any, Any]:
    """x1 and x2 in their common dtype, which must be a floating one."""
    common = dtypes.from_numpy(kernels.result_type(x1._data, x2._data))
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{kernels._dtype_name(np.empty(0, common.numpy))}")
    return to(x1, common), to(x2, common)


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Any:
    """input / max(norm(input, p, dim), eps): unit vectors along dim."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(normalize, (input, p, dim, eps, out), {})
        if heard is not _modes.PASS:
            return heard
    denominator = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    result = input / denominator
    return result if out is None else out.copy_(result)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Any:
    """Pad the last len(pad) / 2 dimensions: pad = (left, right) for the last one, then
    (top, bottom) for the one before, ... 'constant' fills with value (constant_pad_nd:
    any number of dimensions, negative amounts crop); 'reflect' mirrors without repeating
    the edge, 'replicate' repeats the edge (reflection_pad{1,2,3}d, replication_pad...d),
    'circular' wraps around, for the last 1, 2 or 3 dimensions of a batched or unbatched
    input, as torch's at::pad dispatches."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        # (`pad` here is the argument: the function is the module's)
        heard = _modes.dispatch(globals()["pad"], (input, pad, mode, value), {})
        if heard is not _modes.PASS:
            return heard
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = int_list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return ops.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    kind = "reflection" if mode == "reflect" else "replication"
    return getattr(ops, f"{kind}_pad{dims}d")(input, pad)


def _pad_circular(input: Any, pad: list[int]) -> Any:
    """Wrap around: the elements past one end continue from the other. Built as PyTorch
    builds it (so the graph ends in CopySlices): an empty result, the input copied into its
    middle, then, dimension by dimension, each padded border copied from the far side of
    the result itself (corners are written again by later dimensions, from rows that are
    already complete)."""
    dims = len(pad) // 2
    shape = list(input.shape)
    for i in range(dims):
        dim, (before, after) = input.ndim - 1 - i, pad[2 * i: 2 * i + 2]
        if before > shape[dim] or after > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[dim] += before + after
        if shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    result = factories.empty(shape, dtype=input.dtype)
    middle, source = result, input
    for i in range(dims):
        dim, (before, after) = input.ndim - 1 - i, pad[2 * i: 2 * i + 2]
        middle = ops.slice(middle, dim, max(before, 0), shape[dim] - max(after, 0), 1)
        source = ops.slice(source, dim, max(-before, 0), input.shape[dim] - max(-after, 0), 1)
    middle.copy_(source)
    for i in range(dims):
        dim, (before, after) = input.ndim - 1 - i, pad[2 * i: 2 * i + 2]
        size = shape[dim]
        if before > 0:
            ops.slice(result, dim, 0, before, 1).copy_(
                ops.slice(result, dim, size - before - max(after, 0), size - max(after, 0), 1))
        if after > 0:
            ops.slice(result, dim, size - after, size, 1).copy_(
                ops.slice(result, dim, max(before, 0), max(before, 0) + after, 1))
    return result


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """An int64 tensor with one more dimension, of length num_classes (one more than the
    largest class by default): 1 at each value's position, 0 elsewhere. No gradient."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(one_hot, (tensor, num_classes), {})
        if heard is not _modes.PASS:
            return heard
    return ops.one_hot(tensor, num_classes)


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Any:
    """softmax(q kᵀ · scale + mask) v over the last two dimensions, made of matmul, softmax
    and masking as PyTorch's math path makes it: q and k each scaled by √scale
    (scale = 1/√E unless given); a bool mask keeps the True positions, a float mask is
    added; is_causal keeps j <= i; a row with every position masked gives zeros, not NaN."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(scaled_dot_product_attention, (query, key, value, attn_mask,
            dropout_p, is_causal, scale, enable_gqa), {})
        if heard is not _modes.PASS:
            return heard
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    factor = (1.0 / query.shape[-1] ** 0.5 if scale is None else scale) ** 0.5
    scores = matmul(query * factor, ops.transpose(key, -2, -1) * factor)
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = factories.from_numpy(np.tril(np.ones((length, source), dtype=bool)))
    if attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = ops.masked_fill(scores, attn_mask.logical_not(), -float("inf"))
        else:
            scores = scores + attn_mask
    # PyTorch's _safe_softmax: a row with every score -inf weighs nothing (not NaN). Its
    # scores are replaced before the softmax, so no -inf - -inf is ever computed.
    masked_rows = ops.all(scores == -float("inf"), -1, True)
    weights = ops.where(masked_rows, 0.0, ops._softmax(ops.where(masked_rows, 0.0, scores),
                                                       -1, False))
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return matmul(weights, value)


def _repeat_heads(tensor: Any, heads: int) -> Any:
    """Each key/value head repeated for the query heads that share it (grouped-query
    attention): head h serves query heads h * r ... h * r + r - 1."""
    repeats = heads // tensor.shape[-3]
    index = np.repeat(np.arange(tensor.shape[-3], dtype=np.int64), repeats)
    return ops.index_select(tensor, tensor.ndim - 3, factories.from_numpy(index))
# -- tensor ops: scans, sorting, rounding, linalg ----------------------------------------------
# Python spellings over the spec's ops (argsort, narrow, movedim, broadcast_to, var_mean, the
# `//` and `%` operators, mT) and einsum, which PyTorch too builds from permute, reshape, sum
# and bmm: its backward is that of the ops it is made of.

__all__ += ["argsort", "narrow", "movedim", "moveaxis", "broadcast_to", "var_mean", "std_mean",
            "einsum", "inverse", "nonzero"]


def nonzero(input: Any, *, as_tuple: bool = False, out: Tensor | None = None) -> Any:
    """The indices of the nonzero elements, one row each (the spec's op); `as_tuple=True`
    gives one index tensor per dimension instead, as torch's Python binding does."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(nonzero, (input,), {"as_tuple": as_tuple, "out": out})
        if heard is not _modes.PASS:
            return heard
    if out is not None:
        return _out.call("nonzero", ops.nonzero, (input,), {}, out, dtype_rule="nonzero")
    if not as_tuple:
        return ops.nonzero(input)
    rows = ops.nonzero(input)
    if input.ndim == 0:
        return (rows.sum(1),)  # one index 0 per nonzero (none, or the one element)
    return tuple(ops.select(rows, 1, d) for d in range(input.ndim))


def _fits(param: str, value: Any) -> bool:
    """Whether `value` suits a parameter written as PyTorch lists it (`int dim`,
    `Tensor start`, `tuple of ints source`)."""
    if param.startswith("Tensor "):
        return isinstance(value, Tensor)
    if param.startswith("int "):
        return _is_int(value)
    return isinstance(value, list | tuple) and all(_is_int(v) for v in value)


def _check_arguments(name: str, method: bool, args: tuple, overloads: tuple) -> None:
    """PyTorch's TypeError when no overload takes the arguments' types: each overload is
    listed with the arguments it refused marked `!type!`. A method's list leaves out self."""
    if any(all(_fits(p, a) for p, a in zip(params, args, strict=True))
           for params in overloads):
        return
    lead, self_type = ([], []) if method else (["Tensor input"], ["Tensor"])
    types = [_python_type_name(a) for a in args]
    got = ", ".join(self_type + types)
    lines = [f"{name}() received an invalid combination of arguments - got ({got}), but "
             "expected one of:"]
    for params in overloads:
        marked = [t if _fits(p, a) else f"!{t}!"
                  for p, a, t in zip(params, args, types, strict=True)]
        lines.append(f" * ({', '.join(lead + list(params))})")
        lines.append("      didn't match because some of the arguments have invalid types: "
                     f"({', '.join(self_type + marked)})")
    raise TypeError("\n".join(lines) + "\n")


_NARROW = (("int dim", "Tensor start", "int length"), ("int dim", "int start", "int length"))
_MOVEDIM = (("int source", "int destination"),
            ("tuple of ints source", "tuple of ints destination"))


def argsort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """The indices of sort (`torch.argsort(x, dim, descending, stable=...)`); no gradient."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(argsort, (input, dim, descending, stable), {})
        if heard is not _modes.PASS:
            return heard
    return ops.sort(input, stable=stable, dim=dim, descending=descending).indices


def narrow(input: Any, dim: int, start: Any, length: int, *, _method: bool = False) -> Any:
    """`length` elements from `start` along `dim`: a view (SliceBackward0, as in PyTorch)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(narrow, (input, dim, start, length), {"_method": _method})
        if heard is not _modes.PASS:
            return heard
    _check_arguments("narrow", _method, (dim, start, length), _NARROW)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor):
        if start.ndim != 0 or start.dtype.is_floating_point or start.dtype == dtypes.bool_:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return ops.slice(input, dim, start, start + length)


def _dim_list(dims: Any) -> list[int]:
    return [int(dims)] if _is_int(dims) else [int(d) for d in dims]


def movedim(input: Any, source: Any, destination: Any, *, _method: bool = False,
            _name: str = "movedim") -> Any:
    """Move dims `source` to positions `destination`, the others keeping their order: a
    permute (PermuteBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(movedim, (input, source, destination), {"_method": _method,
            "_name": _name})
        if heard is not _modes.PASS:
            return heard
    _check_arguments(_name, _method, (source, destination), _MOVEDIM)
    source, destination = _dim_list(source), _dim_list(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({source} dims) should "
            f"contain the same number of dims as destination ({destination} dims)")
    ndim = input.ndim
    wrapped_source = [_wrap_dim(d, ndim) for d in source]
    wrapped_destination = [_wrap_dim(d, ndim) for d in destination]
    for name, dims, wrapped in (("source", source, wrapped_source),
                                ("destination", destination, wrapped_destination)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order: list[int | None] = [None] * ndim
    for s, d in zip(wrapped_source, wrapped_destination, strict=True):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in wrapped_source)
    order = [next(rest) if d is None else d for d in order]
    return ops.permute(input, order)


def moveaxis(input: Any, source: Any, destination: Any) -> Any:
    """movedim under NumPy's name."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(moveaxis, (input, source, destination), {})
        if heard is not _modes.PASS:
            return heard
    return movedim(input, source, destination, _name="moveaxis")


def broadcast_to(input: Any, *size: Any) -> Any:
    """expand under NumPy's name (ExpandBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(broadcast_to, (input, *size), {})
        if heard is not _modes.PASS:
            return heard
    return ops.expand(input, int_list(size))


def var_mean(input: Any, *args: Any, **kwargs: Any) -> Any:
    """(variance, mean) in one op (VarMeanBackward0): `torch.var_mean(x, dim, unbiased)`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(var_mean, (input, *args), {**kwargs})
        if heard is not _modes.PASS:
            return heard
    overloads = _variance_overloads("var_mean", ops.var_mean_correction)
    return arguments.call("var_mean", overloads, (input, *args), kwargs)


def std_mean(input: Any, *args: Any, **kwargs: Any) -> Any:
    """(standard deviation, mean) in one op (StdMeanBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(std_mean, (input, *args), {**kwargs})
        if heard is not _modes.PASS:
            return heard
    overloads = _variance_overloads("std_mean", ops.std_mean_correction)
    return arguments.call("std_mean", overloads, (input, *args), kwargs)


def inverse(input: Any, *, out: Tensor | None = None) -> Any:
    """torch.inverse: linalg.inv under its older name (LinalgInvExBackward0); with out=,
    written into out (runtime/out.py), which must have the inverse's dtype."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(inverse, (input,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    if out is not None:
        return _out.call("inverse", inverse, (input,), {}, out, dtype_rule="same")
    return ops.linalg_inv_ex(input, check_errors=True).inverse


def _matrix_transpose(self: Any, name: str, hint: str) -> Any:
    """mT / mH: a 0-dim tensor is returned as it is (deprecated, with PyTorch's warning)."""
    if self.ndim == 0:
        warn_at_caller(f"Tensor.{name} is deprecated on 0-D tensors. {hint}", UserWarning)
        return self
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return ops.transpose(self, -2, -1)


def _wrapped_number(value: Any, other: Tensor) -> Any:
    """A Python number on the left of `//` or `%` as a 0-dim tensor of the dtype the
    operation computes in, as torch's wrapped number: it promotes as the number it is
    (`3 // int32_tensor` stays int32, `2.5 // int32_tensor` is float32) and keeps its double
    value where the other operand is float64 (`2.9999999999 // float64_tensor` is 2)."""
    if isinstance(value, Tensor):
        return value
    if not isinstance(value, numbers.Number) or isinstance(value, complex):
        raise TypeError
    computed = kernels.result_type(np.empty(0, other.dtype.numpy), value)
    return factories.tensor(value, dtype=dtypes.from_numpy(computed))


def _reflected(function: Any, self: Any, other: Any) -> Any:
    try:
        return function(_wrapped_number(other, self), self)
    except TypeError:
        return NotImplemented


def _forward(function: Any, self: Any, other: Any) -> Any:
    try:
        return function(self, other)
    except TypeError:  # an operand the op does not take: Python decides
        return NotImplemented


# einsum: the equation is parsed into labels per operand (a letter, or ("...", k) for the
# k-th dimension of the ellipsis, counted from the right), then the operands are contracted
# two at a time with bmm, each summing away the labels no later operand and no output needs.

def _einsum_labels(term: str, offset: int, operand: int | None) -> list:
    """The labels of one term (of operand number `operand`, or of the output for None):
    letters, and a single "..." marker for the ellipsis. `offset` is where the term starts
    in the equation, for the message about a bad character."""
    owner = "output" if operand is None else f"operand {operand}"
    labels: list = []
    i = 0
    while i < len(term):
        char = term[i]
        if char == "." and "..." in labels:
            raise RuntimeError(
                "einsum(): found '.' for output but an ellipsis (...) was already found"
                if operand is None else f"einsum(): found '.' for {owner} for which an "
                "ellipsis was already found")
        if term.startswith("...", i):
            labels.append("...")
            i += 3
            continue
        if char == ".":
            raise RuntimeError(f"einsum(): found '.' for {owner} that is not part of any "
                               f"ellipsis{' (...)' if operand is None else ''}")
        if not ("a" <= char <= "z" or "A" <= char <= "Z"):
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        labels.append(char)
        i += 1
    return labels


def _expand_ellipsis(labels: list, ndim: int, index: int) -> list:
    """Replace "..." by one label per dimension it covers, numbered from the right."""
    named = len(labels) - ("..." in labels)
    if "..." not in labels:
        if named != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match "
                f"the number of dimensions ({ndim}) for operand {index} and no ellipsis was "
                "given")
        return labels
    if named > ndim:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({named}) is more than the "
            f"number of dimensions ({ndim}) for operand {index}")
    at = labels.index("...")
    covered = ndim - named
    return labels[:at] + [("...", covered - k) for k in range(covered)] + labels[at + 1:]


def _einsum_output(equation: str, arrow: int, inputs: list[list]) -> list:
    """The output labels: those after '->', else every letter seen once, in alphabetical
    order (capitals first), after the ellipsis dimensions."""
    ellipsis = sorted({label for labels in inputs for label in labels
                       if isinstance(label, tuple)}, key=lambda label: -label[1])
    if arrow < 0:
        letters = [label for labels in inputs for label in labels if isinstance(label, str)]
        return ellipsis + sorted(c for c in set(letters) if letters.count(c) == 1)
    output: list = []
    for label in _einsum_labels(equation[arrow + 2:], arrow + 2, None):
        if label == "...":
            output.extend(ellipsis)
            continue
        if label in output:
            raise RuntimeError(f"einsum(): output subscript {label} appears more than once in "
                               "the output")
        if not any(label in labels for labels in inputs):
            raise RuntimeError(f"einsum(): output subscript {label} does not appear in the "
                               "equation for any input operand")
        output.append(label)
    return output


def _diagonal(operand: Any, labels: list) -> tuple[Any, list]:
    """A label repeated within one operand (`ii->i`) takes the diagonal: the entries off it
    are masked to zero and one of the two dimensions is summed away."""
    for first, label in enumerate(labels):
        if label in labels[first + 1:]:
            second = labels.index(label, first + 1)
            n = operand.shape[first]
            shape = [1] * operand.ndim
            shape[first], shape[second] = n, n
            mask = reshape(factories.eye(n, dtype=operand.dtype), *shape)
            operand = ops.sum(operand * mask, [second])
            return _diagonal(operand, labels[:second] + labels[second + 1:])
    return operand, labels


def _sum_labels(operand: Any, labels: list, drop: set) -> tuple[Any, list]:
    dims = [i for i, label in enumerate(labels) if label in drop]
    if not dims:
        return operand, labels
    return ops.sum(operand, dims), [label for label in labels if label not in drop]


def _contract(a: Any, a_labels: list, b: Any, b_labels: list, keep: set,
              sizes: dict) -> tuple[Any, list]:
    """a and b contracted with one bmm: batch labels (in both, kept), a's own, b's own, and
    the contracted ones (in both, not kept) that the product sums over."""
    a, a_labels = _sum_labels(a, a_labels, set(a_labels) - set(b_labels) - keep)
    b, b_labels = _sum_labels(b, b_labels, set(b_labels) - set(a_labels) - keep)
    batch = [label for label in a_labels if label in b_labels and label in keep]
    summed = [label for label in a_labels if label in b_labels and label not in keep]
    a_only = [label for label in a_labels if label not in b_labels]
    b_only = [label for label in b_labels if label not in a_labels]

    def arrange(operand: Any, labels: list, order: list, groups: list) -> Any:
        operand = ops.permute(operand, [labels.index(label) for label in order])
        operand = ops.expand(operand, [sizes[label] for label in order])
        return reshape(operand, *(_product(sizes[label] for label in g) for g in groups))

    left = arrange(a, a_labels, batch + a_only + summed, [batch, a_only, summed])
    right = arrange(b, b_labels, batch + summed + b_only, [batch, summed, b_only])
    product = ops.bmm(left, right)
    labels = batch + a_only + b_only
    return reshape(product, *(sizes[label] for label in labels)), labels


def _einsum_sizes(operands: Any, inputs: list[list]) -> dict:
    """Each label's size; sizes of 1 broadcast, any other disagreement is an error."""
    sizes: dict = {}
    for index, (operand, labels) in enumerate(zip(operands, inputs, strict=True)):
        for position, (label, size) in enumerate(zip(labels, operand.shape, strict=True)):
            seen = sizes.get(label, 1)
            if size == seen or size == 1 or seen == 1:
                sizes[label] = max(seen, size) if size and seen else 0
            elif isinstance(label, tuple):  # PyTorch's message, its missing space and all
                raise RuntimeError(
                    f"einsum(): dimension {position} covered by ellipsis in operand {index}has "
                    f"size {size} which does not broadcast with previously seen ellipsis with "
                    f"size {seen} for the respective dimension")
            else:
                raise RuntimeError(
                    f"einsum(): subscript {label} has size {size} for operand {index} which "
                    f"does not broadcast with previously seen size {seen}")
    return sizes


def _sublist_equation(arguments: tuple) -> tuple[str, tuple]:
    """einsum's other spelling, `einsum(a, [0, 1], b, [1, 2], [0, 2])`: operands each
    followed by its subscripts as numbers 0-51 (or Ellipsis), then the output's, if given,
    written as the equation they stand for."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sublist: Any) -> str:
        text = ""
        for item in sublist:
            if item is Ellipsis:
                text += "..."
            elif isinstance(item, int) and 0 <= item < len(letters):
                text += letters[item]
            else:
                raise ValueError("einsum(): expected subscript to be within the range [0, 52) "
                                 f"but got {item}")
        return text

    operands = arguments[0::2]
    terms = [term(sublist) for sublist in arguments[1::2]]
    equation = ",".join(terms[:len(operands)])
    if len(arguments) % 2:  # an output sublist closes the arguments
        operands, equation = operands[:-1], ",".join(terms) + "->" + term(arguments[-1])
    return equation, operands


def einsum(*arguments: Any) -> Any:
    """Einstein summation: `einsum("ij,jk->ik", a, b)` is a @ b; operands may also come as
    one list, or in the sublist format. Built from sum, permute, expand, reshape and bmm
    (their nodes record it)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(einsum, (*arguments,), {})
        if heard is not _modes.PASS:
            return heard
    if len(arguments) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(arguments[0], Tensor):
        equation, operands = _sublist_equation(arguments)
    else:
        equation, operands = arguments[0], arguments[1:]
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    arrow = equation.find("->")
    terms = (equation if arrow < 0 else equation[:arrow]).split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    inputs, offset = [], 0
    for index, (term, operand) in enumerate(zip(terms, operands, strict=True)):
        labels = _einsum_labels(term, offset, index)
        inputs.append(_expand_ellipsis(labels, operand.ndim, index))
        offset += len(term) + 1
    output = _einsum_output(equation, arrow, inputs)
    sizes = _einsum_sizes(operands, inputs)
    pending = [_diagonal(operand, labels) for operand, labels in zip(operands, inputs,
                                                                      strict=True)]
    result, labels = pending[0]
    for position in range(1, len(pending)):
        keep = set(output).union(*(set(later) for _, later in pending[position + 1:]))
        result, labels = _contract(result, labels, *pending[position], keep, sizes)
    result, labels = _sum_labels(result, labels, set(labels) - set(output))
    # Always a permute at the end, as PyTorch's einsum has: even `einsum("ij", x)` is a new
    # tensor (a view), never x itself.
    return ops.permute(result, [labels.index(label) for label in output])


class TensorOpsMethods:
    """Tensor methods of the composites above, and the `//` and `%` operators."""

    __slots__ = ()

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.argsort, (self, dim, descending, stable), {})
            if heard is not _modes.PASS:
                return heard
        return argsort(self, dim, descending, stable)

    def narrow(self, dim: int, start: Any, length: int) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.narrow, (self, dim, start, length), {})
            if heard is not _modes.PASS:
                return heard
        return narrow(self, dim, start, length, _method=True)

    def movedim(self, source: Any, destination: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.movedim, (self, source, destination), {})
            if heard is not _modes.PASS:
                return heard
        return movedim(self, source, destination, _method=True)

    def moveaxis(self, source: Any, destination: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.moveaxis, (self, source, destination), {})
            if heard is not _modes.PASS:
                return heard
        return movedim(self, source, destination, _method=True, _name="moveaxis")

    def broadcast_to(self, *size: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.broadcast_to, (self, *size), {})
            if heard is not _modes.PASS:
                return heard
        return broadcast_to(self, *size)

    def inverse(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.inverse, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return inverse(self)

    # new_tensor: a new leaf of this tensor's dtype (unless given). new_zeros / new_ones /
    # new_empty / new_full are runtime/factories.py's FactoryMethods, with torch's parser.
    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.new_tensor, (self, data, dtype, device,
                requires_grad), {})
            if heard is not _modes.PASS:
                return heard
        if isinstance(data, Tensor):
            warn_at_caller("To copy construct from a tensor, it is recommended to use "
                           "sourceTensor.detach().clone() or "
                           "sourceTensor.detach().clone().requires_grad_(True), rather than "
                           "tensor.new_tensor(sourceTensor).")
        return factories.tensor(data, dtype=dtype or self.dtype, device=device,
                                requires_grad=requires_grad)

    @property
    def mT(self) -> Any:  # noqa: N802 - torch's name
        """The last two dimensions swapped (TransposeBackward0)."""
        return _matrix_transpose(self, "mT", "This function is the identity in these cases.")

    @property
    def mH(self) -> Any:  # noqa: N802 - torch's name
        """The conjugate transpose; gradgen's tensors are real, so it is mT."""
        return _matrix_transpose(self, "mH", "Consider using x.conj().")

    def __floordiv__(self, other: Any) -> Any:
        return _forward(ops.floor_divide, self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _reflected(ops.floor_divide, self, other)

    def __ifloordiv__(self, other: Any) -> Any:
        return self.floor_divide_(other)

    def __mod__(self, other: Any) -> Any:
        return _forward(ops.remainder, self, other)

    def __rmod__(self, other: Any) -> Any:
        return _reflected(ops.remainder, self, other)

    def __imod__(self, other: Any) -> Any:
        return self.remainder_(other)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(TensorOpsMethods.nonzero, (self,), {"as_tuple": as_tuple})
            if heard is not _modes.PASS:
                return heard
        return nonzero(self, as_tuple=as_tuple)
