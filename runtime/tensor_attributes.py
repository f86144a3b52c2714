"""Tensor attributes that describe a tensor or give it again another way: predicates
(`is_signed`, `is_nonzero`, `is_same_size`...), memory facts (`itemsize`, `nbytes`,
`data_ptr`, `storage_offset`, `dim_order`), the identities of a real tensor (`conj`,
`resolve_neg`, `real`), `positive`, `square`, `ravel`, `msort`, `adjoint`/`H`, `byte()`, the
element-wise Python callbacks (`apply_`, `map_`, `map2_`) and `as_subclass`, with their
`torch.*` functions where torch has them.

gradgen's tensors are real and live on the CPU, so the complex and device predicates answer
as a CPU tensor of a real dtype does in torch. `AttributeMethods` holds the Tensor methods,
set on Tensor by runtime/methods.py.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from generated import ops
from runtime import arguments, dtypes, factories, grad_mode, kernels, recording
from runtime import modes as _modes
from runtime._tensor import Size, Tensor
from runtime._warn import warn_at_caller

__all__ = ["is_signed", "is_nonzero", "is_same_size", "is_complex", "is_conj", "is_neg",
           "is_inference", "get_device", "positive", "conj", "conj_physical",
           "resolve_conj", "resolve_neg", "adjoint", "ravel", "square", "square_", "msort",
           "real", "imag", "unsafe_chunk", "unsafe_split", "detach", "detach_", "index_put_",
           "resize_as_"]


def _check_tensor(name: str, value: Any, argument: str = "input", position: int = 1) -> None:
    """torch's TypeError for a function of one Tensor given something else."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {arguments.type_name(value)}")


# -- predicates --------------------------------------------------------------------------------

def is_signed(input: Any) -> bool:
    """Whether the dtype holds negative numbers: every dtype but bool and the unsigned ones."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_signed, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_signed", input)
    return input.dtype.is_signed


def is_nonzero(input: Any) -> bool:
    """The truth of a one-element tensor (NaN is true); more or fewer elements are an error."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_nonzero, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_nonzero", input)
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_same_size(input: Any, other: Any) -> bool:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_same_size, (input, other), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_same_size", input)
    _check_tensor("is_same_size", other, "other", 2)
    return input.shape == other.shape


def is_complex(input: Any) -> bool:
    """Whether the dtype is complex64 or complex128."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_complex, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_complex", input)
    return input.dtype.is_complex


def is_conj(input: Any) -> bool:
    """Whether the tensor is a lazily conjugated view: never, for a real tensor."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_conj, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_conj", input)
    return _marked(input)


def is_neg(input: Any) -> bool:
    """Whether the tensor is a lazily negated view (torch's, of conjugated imaginary parts)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_neg, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_neg", input)
    return False


def is_inference(input: Any) -> bool:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(is_inference, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("is_inference", input)
    return input.is_inference()


def get_device(input: Any) -> int:
    """The CUDA device index; -1 for a CPU tensor, as every gradgen tensor is."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(get_device, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("get_device", input)
    return -1


# -- a real tensor, given again; a complex one conjugated --------------------------------------

# The tensors torch would mark with its lazy conjugate bit (x.conj() of a complex x). numpy has
# no lazy conjugate: such a tensor holds its conjugated values, and only its `is_conj()` says
# it was made so (a write into it does not reach the tensor it conjugates, where torch's does).
# Kept by id (a Tensor's == is elementwise), each with a weak reference that drops it.
_CONJUGATED: dict[int, weakref.ref] = {}


def _marked(tensor: Any) -> bool:
    ref = _CONJUGATED.get(id(tensor))
    return ref is not None and ref() is tensor


def _mark(tensor: Any) -> None:
    key = id(tensor)
    _CONJUGATED[key] = weakref.ref(tensor, lambda _: _CONJUGATED.pop(key, None))


def _conjugated(input: Any, marked: bool) -> Any:
    """The conjugate of a complex tensor, with its gradient (the gradient's conjugate),
    marked as torch's lazy conjugate when `marked`."""
    result = ops._conj(input) if marked else ops._conj_physical(input)
    if marked and not _marked(input):
        _mark(result)
    return result


def conj(input: Any) -> Any:
    """The conjugate: a real tensor is its own, the tensor itself; a complex one's is marked
    (`is_conj()`) as torch's lazy conjugate is."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conj, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("conj", input)
    return _conjugated(input, True) if input.dtype.is_complex else input


def resolve_conj(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(resolve_conj, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("resolve_conj", input)
    return input.clone() if _marked(input) else input


def resolve_neg(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(resolve_neg, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("resolve_neg", input)
    return input


def conj_physical(input: Any) -> Any:
    """The conjugate, computed: of a real tensor, the tensor itself, as in torch."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conj_physical, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("conj_physical", input)
    return _conjugated(input, False) if input.dtype.is_complex else input


def real(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(real, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("real", input)
    return ops.select(ops.view_as_real(input), -1, 0) if input.dtype.is_complex else input


def imag(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(imag, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("imag", input)
    if input.dtype.is_complex:
        return ops.select(ops.view_as_real(input), -1, 1)
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def positive(input: Any) -> Any:
    """`+x`: the tensor itself, refused for bool as torch's unary plus is."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(positive, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("positive", input)
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# -- composites --------------------------------------------------------------------------------

def square(input: Any, *, out: Any = None) -> Any:
    """x ** 2 (PowBackward0, as torch's); a bool tensor squares as int64."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(square, (input,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("square", input)
    source = input.long() if input.dtype is dtypes.bool_ else input
    return ops.pow(source, 2) if out is None else ops.pow(source, 2, out=out)


def square_(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(square_, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("square_", input)
    return input.pow_(2)


def ravel(input: Any) -> Any:
    """The elements as one dimension: a view of the contiguous tensor (ViewBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(ravel, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("ravel", input)
    return input.contiguous().view(-1)


def msort(input: Any) -> Any:
    """Sorted along the first dimension (SortBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(msort, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("msort", input)
    return ops.sort(input, 0).values


def unsafe_chunk(input: Any, chunks: int, dim: int = 0) -> tuple:
    """chunk, whose views torch lets be written in place without checks (gradgen records
    SplitBackward0 where torch has UnsafeSplitBackward0)."""
    _check_tensor("unsafe_chunk", input)
    return input.chunk(chunks, dim)


def unsafe_split(input: Any, split_size: Any, dim: int = 0) -> tuple:
    _check_tensor("unsafe_split", input)
    return input.split(split_size, dim)


def detach(input: Any) -> Any:
    """Tensor.detach as a function."""
    _check_tensor("detach", input)
    return input.detach()


def detach_(input: Any) -> Any:
    _check_tensor("detach_", input)
    return input.detach_()


def index_put_(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    _check_tensor("index_put_", input)
    return input.index_put_(indices, values, accumulate)


def resize_as_(input: Any, the_template: Any, *, memory_format: Any = None) -> Any:
    _check_tensor("resize_as_", input)
    return input.resize_as_(the_template)


def adjoint(input: Any) -> Any:
    """The last two dimensions swapped (the conjugate is the tensor itself)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adjoint, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("adjoint", input)
    if input.ndim == 0:
        warn_at_caller("adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
                       UserWarning)
        return input
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return ops.transpose(input, -2, -1)


# -- memory ------------------------------------------------------------------------------------

def _storage_root(array: np.ndarray) -> np.ndarray:
    return kernels.storage_root(array)  # (through numpy's stride tricks too: unfold's views)


def _dim_order(tensor: Any) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory: sorted by stride, ties and
    zero strides keeping their order (torch's elementwise-output permutation)."""
    ndim, shape, strides = tensor.ndim, tensor.shape, tensor.stride()
    if ndim <= 1 or tensor.is_contiguous():
        return tuple(range(ndim))

    def at_least(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def order(a: int, b: int) -> int:  # > 0: a is inner to b (the scan runs innermost first)
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] == strides[b]:
            return 0 if at_least(shape[b], shape[a]) else 1
        return -1 if at_least(strides[b], strides[a]) else 1

    dims = list(reversed(range(ndim)))  # innermost first, sorted by insertion
    for i in range(1, ndim):
        moving = i
        for j in reversed(range(i)):
            comparison = order(dims[j], dims[moving])
            if comparison > 0:
                dims[j], dims[moving] = dims[moving], dims[j]
                moving = j
            elif comparison < 0:
                break
    return tuple(reversed(dims))


# -- Python callbacks --------------------------------------------------------------------------

def _resized(tensor: Any, sizes: tuple) -> Any:
    """torch's autograd Resize: the sizes' product must be the tensor's element count (sizes
    are multiplied as given: one list or Size argument is its own product, and refused, as
    torch's are)."""
    count: Any = 1
    for size in sizes:
        count = count * size
    if count != tensor.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, sizes))} ({count} elements in total), "
            f"but the given tensor has a size of {'x'.join(map(str, tensor.shape))} "
            f"({tensor.numel()} elements). autograd's resize can only change the shape of a "
            "given tensor, while preserving the number of elements. ")
    return tensor.reshape(sizes).clone() if tensor.requires_grad else \
        tensor.detach().clone().reshape(sizes)


def _diagonal_mask(data: np.ndarray, wrap: bool) -> np.ndarray:
    """The cells fill_diagonal_ writes: the main diagonal; a tall contiguous matrix's starts
    again one row below its end when wrap is set."""
    mask = np.zeros(data.shape, dtype=bool)
    if data.ndim > 2:
        mask[(np.arange(data.shape[0]),) * data.ndim] = True
        return mask
    rows, columns = data.shape
    step = columns + 1  # along the flattened matrix, from one diagonal cell to the next
    end = rows * columns if wrap and rows > columns else min(rows, columns) * columns
    if data.flags.c_contiguous:
        mask.reshape(-1)[:end:step] = True
    else:  # a strided view: its diagonal cell by cell (without wrapping)
        index = np.arange(min(rows, columns))
        mask[index, index] = True
    return mask


def _check_dim_order_ambiguity(tensor: Any, ambiguity_check: Any) -> None:
    """torch's first ambiguity check of dim_order: a tensor with a size-1 dimension or two
    equal strides has several dim orders, and is refused unless exactly one of the memory
    formats listed is contiguous for it."""
    from runtime.memory_formats import memory_format  # (a sibling module: no cycle)

    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list)
            and all(isinstance(m, memory_format) for m in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    if ambiguity_check is False:
        return
    strides = tensor.stride()
    several = (any(a == b for a, b in zip(strides, strides[1:], strict=False))
               or 1 in tuple(tensor.shape))
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    fitting = sum(1 for m in formats if tensor.is_contiguous(memory_format=m))
    if several and fitting != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")


def _callback_target(self: Any, name: str) -> None:
    if self.requires_grad:  # even under no_grad
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _write_elements(self: Any, function: Callable, *others: np.ndarray) -> Any:
    """Each element of self replaced by function(element, others' elements), in place, as
    Python numbers of self's type."""
    data = self._data
    kind = bool if data.dtype == np.bool_ else int if data.dtype.kind in "iu" else float
    flat = [function(*(kind(v) if i == 0 else v for i, v in enumerate(values)))
            for values in zip(data.reshape(-1).tolist(),
                              *(o.reshape(-1).tolist() for o in others), strict=True)]
    converted = [kind(v) if kind is not float else float(v) for v in flat]
    data[...] = np.array(converted, dtype=data.dtype).reshape(data.shape)
    self._version_counter.version += 1
    return self


def _mapped_operand(self: Any, other: Any, name: str, argument: str, position: int) -> np.ndarray:
    _check_tensor(name, other, argument, position)
    if other.dtype is not self.dtype:
        # (torch words map_'s and map2_'s messages a little differently)
        where = f"'{argument}'" if name == "map_" else f"argument '{argument}'"
        raise TypeError(f"{name}: expected {self.type()} for {where} (got {other.type()})")
    if other.shape != self.shape:
        self_dims, other_dims = self.ndim, other.ndim
        if other_dims > self_dims:
            raise RuntimeError(
                f"expand({other.type()}{{{list(other.shape)}}}, size={list(self.shape)}): the "
                f"number of sizes provided ({self_dims}) must be greater or equal to the number "
                f"of dimensions in the tensor ({other_dims})")
        try:
            return np.broadcast_to(other._data, self.shape)
        except ValueError:  # torch's expand message
            other.expand(self.shape)
            raise
    return other._data


class AttributeMethods:
    """The Tensor methods and properties of this module, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def is_signed(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_signed, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return is_signed(self)

    def is_nonzero(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_nonzero, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return is_nonzero(self)

    def is_same_size(self, other: Any) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_same_size, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        _check_tensor("is_same_size", other, "other", 1)
        return is_same_size(self, other)

    def is_complex(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_complex, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self.dtype.is_complex

    def is_conj(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_conj, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return _marked(self)

    def is_neg(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.is_neg, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def is_maia(self) -> bool:
        return False

    def get_device(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.get_device, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return -1

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (0 for a tensor without elements, as torch's)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.data_ptr, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.__array_interface__["data"][0] if self._data.size else 0

    def const_data_ptr(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.const_data_ptr, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return AttributeMethods.data_ptr(self)

    def storage_offset(self) -> int:
        """Where the first element sits in the storage, counted in elements."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.storage_offset, (self,), {})
            if heard is not _modes.PASS:
                return heard
        root = _storage_root(self._data)
        if not self._data.size:
            return 0
        start = self._data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return start // self._data.itemsize

    def dim_order(self, *, ambiguity_check: Any = False) -> tuple[int, ...]:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.dim_order, (self,),
                {"ambiguity_check": ambiguity_check})
            if heard is not _modes.PASS:
                return heard
        _check_dim_order_ambiguity(self, ambiguity_check)
        return _dim_order(self)

    def ndimension(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.ndimension, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self.ndim

    def reshape_as(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.reshape_as, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return self.reshape(other.shape)

    def positive(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.positive, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return positive(self)

    def conj(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.conj, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return conj(self)

    def conj_physical(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.conj_physical, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return conj_physical(self)

    def resolve_conj(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.resolve_conj, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return resolve_conj(self)

    def resolve_neg(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.resolve_neg, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self

    @property
    def real(self) -> Any:
        return real(self)

    @property
    def imag(self) -> Any:
        return imag(self)

    def adjoint(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.adjoint, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return adjoint(self)

    @property
    def H(self) -> Any:  # noqa: N802 - torch's name
        """The conjugate transpose of a matrix (of a real one, its transpose)."""
        if self.ndim not in (0, 2):
            batches = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 \
                else ""
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.ndim}-D tensor.{batches}")
        if self.ndim == 0:
            warn_at_caller("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                           UserWarning)
            return self
        return ops.transpose(self, 0, 1)

    def ravel(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.ravel, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return ravel(self)

    def square(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.square, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return square(self)

    def square_(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.square_, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return square_(self)

    def msort(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.msort, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return msort(self)

    @property
    def name(self) -> None:
        """A tensor's dimension-name tuple is `names`; `name` is None, as torch's."""
        return None

    @property
    def volatile(self) -> bool:
        warn_at_caller("volatile was removed (Variable.volatile is always False)")
        return False

    @property
    def grad_dtype(self) -> Any:
        if self.grad_fn is not None:
            raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
        return self.dtype

    def apply_(self, callable: Callable) -> Any:
        """Each element replaced by callable(element), in place (CPU tensors only)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.apply_, (self, callable), {})
            if heard is not _modes.PASS:
                return heard
        _callback_target(self, "apply_")
        return _write_elements(self, callable)

    def map_(self, tensor: Any, callable: Callable) -> Any:
        """Each element replaced by callable(element, tensor's element), in place."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.map_, (self, tensor, callable), {})
            if heard is not _modes.PASS:
                return heard
        _callback_target(self, "map_")
        return _write_elements(self, callable, _mapped_operand(self, tensor, "map_", "other", 1))

    def map2_(self, x: Any, y: Any, callable: Callable) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(AttributeMethods.map2_, (self, x, y, callable), {})
            if heard is not _modes.PASS:
                return heard
        _callback_target(self, "map2_")
        return _write_elements(self, callable, _mapped_operand(self, x, "map2_", "x", 1),
                               _mapped_operand(self, y, "map2_", "y", 2))

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Any:
        """The main diagonal set to fill_value, in place; a tall matrix's diagonal starts
        again one row below its end when wrap is set."""
        if self.ndim < 2:
            raise RuntimeError("dimensions must larger than 1")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        if self.requires_grad and self.grad_fn is None and grad_mode.is_grad_enabled():
            # torch writes through a diagonal view of self
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        recording.check_inplace(self)
        kernels.check_fits(fill_value, self._data.dtype)
        mask = _diagonal_mask(self._data, wrap)
        if self.requires_grad and grad_mode.is_grad_enabled() or self._fw_grad is not None:
            # recorded (torch records it through a diagonal view: CopySlices); the same
            # gradient, zero on the cells written
            return self.masked_fill_(Tensor._make(mask, None, False), fill_value)
        self._data[mask] = fill_value
        self._version_counter.version += 1
        return self

    def new(self, *args: Any, **kwargs: Any) -> Any:
        """The legacy constructor in this tensor's dtype: a size gives an uninitialised
        tensor (zeros here), a sequence its data."""
        if len(args) == 1 and isinstance(args[0], Tensor):
            raise TypeError(f"expected TensorOptions(dtype={self.dtype.name.replace('32', '')}"
                            ", device=cpu, layout=Strided, requires_grad=false (default), "
                            "pinned_memory=false (default), memory_format=(nullopt)) (got "
                            f"TensorOptions(dtype={args[0].dtype.name}, device=cpu, "
                            "layout=Strided, requires_grad=false (default), pinned_memory=false "
                            "(default), memory_format=(nullopt)))")
        if len(args) == 1 and isinstance(args[0], list | tuple) and not isinstance(args[0], Size):
            return factories.tensor(args[0], dtype=self.dtype)
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        return factories.zeros(*shape, dtype=self.dtype) if shape else \
            factories.empty(0, dtype=self.dtype)

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                          requires_grad: bool = False, layout: Any = None,
                          pin_memory: bool = False) -> Any:
        from runtime.global_flags import empty_strided  # (a sibling module: no cycle)

        return empty_strided(size, stride, dtype=dtype or self.dtype,
                             requires_grad=requires_grad)

    def resize_(self, *sizes: Any, memory_format: Any = None) -> Any:
        """This tensor with a new shape, its first elements kept (new ones are zeros here,
        uninitialised in torch)."""
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        shape = arguments.int_list(sizes)
        count = int(np.prod(shape, dtype=np.int64))
        flat = self._data.reshape(-1)
        data = np.zeros(count, dtype=self._data.dtype)
        data[:min(count, flat.size)] = flat[:count]
        self._data = data.reshape(shape)
        self._version_counter.version += 1
        return self

    def resize_as_(self, the_template: Any, *, memory_format: Any = None) -> Any:
        return AttributeMethods.resize_(self, *the_template.shape)

    def resize(self, *sizes: Any) -> Any:
        """Deprecated: a copy of another shape, of the same number of elements."""
        warn_at_caller("non-inplace resize is deprecated", UserWarning)
        return _resized(self, sizes)

    def resize_as(self, tensor: Any) -> Any:
        """Deprecated: a copy shaped as tensor, of the same number of elements."""
        warn_at_caller("non-inplace resize_as is deprecated", UserWarning)
        return _resized(self, tuple(tensor.shape))

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Any:
        from runtime.global_flags import nonzero_static  # (a sibling module: no cycle)

        return nonzero_static(self, size=size, fill_value=fill_value)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple:
        return unsafe_chunk(self, chunks, dim)

    def unsafe_split(self, split_size: Any, dim: int = 0) -> tuple:
        return unsafe_split(self, split_size, dim)

    def as_subclass(self, cls: type) -> Any:
        """The same data as an instance of a Tensor subclass, attached to the graph."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit "
                            "from Tensor is not possible. Make sure your class inherits from "
                            "Tensor.")
        alias = ops.alias(self)
        result = object.__new__(cls)
        for slot in _TENSOR_SLOTS:
            setattr(result, slot, getattr(alias, slot))
        result.__dict__.update(alias.__dict__)
        return result


_TENSOR_SLOTS = tuple(slot for klass in Tensor.__mro__ for slot in getattr(klass, "__slots__", ())
                      if slot not in ("__weakref__", "__dict__"))
