"""Tensor: numpy data plus the autograd fields PyTorch keeps (grad, grad_fn, version, ...).

This file holds what every tensor has whatever ops the spec declares; it sits below the
nodes (runtime/node.py), which make Tensors, and imports none of them. The op methods
(`add`, `sum`, `__mul__`, ...) and `backward` are set on the class by runtime/methods.py,
once the modules they call exist (PyTorch keeps this class in torch/_tensor.py too, so
that `torch.tensor` names only the factory).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime import changes, devices, dtypes, memory_formats
from runtime import modes as _modes
from runtime._tensor_str import format_tensor
from runtime._warn import warn_at_caller
from runtime.dtypes import type_string
from runtime.grad_mode import INFERENCE_BLOCKS, is_inference_mode_enabled
from runtime.grad_mode import _state as _grad_state
from runtime.hooks import RemovableHandle, add_hook

if TYPE_CHECKING:
    from runtime.node import Node

__all__ = ["Size", "Tensor", "VersionCounter"]


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as `torch.Size([2, 3])`."""

    __slots__ = ()

    def __new__(cls, sizes: Any = ()) -> Size:
        result = tuple.__new__(cls, sizes)
        for position, size in enumerate(result):
            if type(size) is not int:
                return tuple.__new__(cls, [_size_item(position, s) for position, s
                                           in enumerate(result)])
        return result

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: tuple) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, times: int) -> Size:
        return Size(tuple(self) * times)

    __rmul__ = __mul__

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


def _size_item(position: int, size: Any) -> int:
    """One size of a Size: an int, or anything with __index__ (a 0-dim integer tensor)."""
    if isinstance(size, bool) or not hasattr(type(size), "__index__"):
        raise TypeError(f"torch.Size() takes an iterable of 'int' (item {position} is "
                        f"'{type(size).__name__}')")
    return size.__index__()


class VersionCounter:
    """Bumped by every in-place write; views share their base's counter.

    It also says whether its storage was made in inference_mode: like PyTorch's inference
    tensors, which have no version counter, such tensors may never be saved for backward.
    """

    __slots__ = ("version", "inference")

    def __init__(self, inference: bool = False) -> None:
        self.version = 0
        self.inference = inference


def _requires_grad_leaf_error(requires_grad: bool) -> str:
    if requires_grad:
        return "you can only change requires_grad flags of leaf variables."
    return (
        "you can only change requires_grad flags of leaf variables. If you want to use a "
        "computed variable in a subgraph that doesn't require differentiation use "
        "var_no_grad = var.detach()."
    )


# The dtypes whose tensors torch's .numpy() refuses (numpy has no such type of its own).
_NOT_NUMPY = {"bfloat16": "BFloat16", "complex32": "ComplexHalf"}

# How PyTorch's messages name a dtype by its C type (typeMetaToScalarType's name()).
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
                 "bool": "bool", "uint8": "unsigned char", "int16": "short int",
                 "int8": "signed char"}

_warned_scalar_of_requires_grad = False  # PyTorch gives that warning once per process

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information."
)


class Tensor:
    """A numpy array with autograd's fields; its op methods come from runtime/methods.py."""

    __slots__ = (
        "_data", "_requires_grad", "grad_fn", "_output_nr", "_grad", "_counter", "_base",
        "_base_grad_fn", "__dict__", "__weakref__",
    )
    # What few tensors have: these defaults, until a tensor gets its own value, kept in its
    # __dict__ (made then; it also takes a program's own attributes, `t.note = 1`, as torch's
    # tensors do). A result Tensor sets only the slots above.
    _grad_accumulator = None  # a leaf's AccumulateGrad, weakly (runtime/node.py)
    _backward_hooks = None  # register_hook's
    _retains_grad = False
    _fw_grad = None  # the tangent, in forward AD (runtime/forward_grad.py)
    _post_accumulate_grad_hooks = None  # a leaf's, run after its .grad is set
    # numpy defers to Tensor's reflected operators (np.float64(2) * t -> t.__rmul__).
    __array_ufunc__ = None

    @classmethod
    def _make(cls, data: np.ndarray, grad_fn: Node | None, requires_grad: bool = False) -> Tensor:
        tensor = object.__new__(cls)
        tensor._data = data
        tensor._requires_grad = requires_grad
        tensor.grad_fn = grad_fn
        tensor._output_nr = 0
        tensor._grad = None
        # Most results are never written in place, viewed or saved: their counter is made
        # when first asked for (an inference tensor's at once, to remember where it was made;
        # this thread's flag is read only while some thread is in inference mode).
        tensor._counter = VersionCounter(True) \
            if INFERENCE_BLOCKS.value and _grad_state.inference else None
        tensor._base = None
        tensor._base_grad_fn = None  # a view's: its base's grad_fn when the view was made
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            _modes.notify("made", tensor)
        return tensor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to do: `Tensor(...)` is the legacy constructor, all in `__new__`
        (runtime/factories.py's legacy_new, set by runtime/methods.py)."""

    # -- autograd state ---------------------------------------------------------------------
    @property
    def _version_counter(self) -> VersionCounter:
        """Shared by every view of one storage; bumped by each in-place write."""
        counter = self._counter
        if counter is None:
            counter = self._counter = VersionCounter()
        return counter

    @_version_counter.setter
    def _version_counter(self, counter: VersionCounter) -> None:
        self._counter = counter

    @property
    def requires_grad(self) -> bool:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.requires_grad.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self.grad_fn is not None or self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if _modes.active:  # a mode may hear the write (runtime/modes.py)
            heard = _modes.dispatch(Tensor.requires_grad.__set__, (self, value), {})
            if heard is not _modes.PASS:
                return
        if self.grad_fn is not None:
            raise RuntimeError(_requires_grad_leaf_error(value))
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if value and self._version_counter.inference and not is_inference_mode_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        changes.changed()  # (a compiled step's guards read it: runtime/changes.py)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Like setting `requires_grad`, but a no-op on a non-leaf asked to require grad."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.requires_grad_, (self, requires_grad), {})
            if heard is not _modes.PASS:
                return heard
        if self.grad_fn is not None and requires_grad:
            return self
        self.requires_grad = requires_grad
        return self

    def _is_view(self) -> bool:
        """Whether this tensor is a view of another (its `_base`), as torch's private method
        that torchviz's make_dot asks of every tensor it draws."""
        return self._base is not None

    @property
    def is_leaf(self) -> bool:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.is_leaf.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.grad.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            warn_at_caller(_NON_LEAF_GRAD_WARNING, UserWarning)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if _modes.active:  # a mode may hear the write (runtime/modes.py)
            heard = _modes.dispatch(Tensor.grad.__set__, (self, value), {})
            if heard is not _modes.PASS:
                return
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the tensor "
                    "are the same size"
                )
            if value.dtype is not self.dtype:
                given = _C_TYPE_NAMES[value.dtype.name]
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{given}' to a "
                    f"tensor with grad_dtype '{_scalar_type_name(self._data)}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match."
                )
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        if self._version_counter.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._version_counter.version

    def is_inference(self) -> bool:
        """Whether the tensor was made in inference_mode (it may never be saved for backward)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.is_inference, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._version_counter.inference

    @property
    def data(self) -> Tensor:
        """The same storage, detached, with a version counter of its own (as in PyTorch)."""
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.data.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        tensor = Tensor._make(self._data, None)
        tensor._version_counter.inference = self._version_counter.inference
        return tensor

    @data.setter
    def data(self, value: Tensor) -> None:
        if _modes.active:  # a mode may hear the write (runtime/modes.py)
            heard = _modes.dispatch(Tensor.data.__set__, (self, value), {})
            if heard is not _modes.PASS:
                return
        changes.changed()
        self._data = value._data

    def detach(self) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.detach, (self,), {})
            if heard is not _modes.PASS:
                return heard
        tensor = Tensor._make(self._data, None)
        tensor._version_counter = self._version_counter
        return tensor

    def detach_(self) -> Tensor:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.detach_, (self,), {})
            if heard is not _modes.PASS:
                return heard
        changes.changed()
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep `.grad` for a non-leaf tensor too (a no-op on leaves)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.retain_grad, (self,), {})
            if heard is not _modes.PASS:
                return heard
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        node = self.grad_fn
        ref = weakref.ref(self)

        def retain(grad: Tensor) -> None:
            # Out of place and, with create_graph, recorded (CloneBackward0, AddBackward0).
            tensor = ref()
            if tensor is None or grad is None:
                return
            tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad

        node.add_retains_grad_hook(self._output_nr, retain)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> RemovableHandle:
        """`hook(tensor)` after backward has accumulated into this leaf's .grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = {}
        return add_hook(self._post_accumulate_grad_hooks, hook)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """`hook(grad)` runs when this tensor's gradient is computed; it may return a new one."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.register_hook, (self, hook), {})
            if heard is not _modes.PASS:
                return heard
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._backward_hooks is None:
                self._backward_hooks = {}
            return add_hook(self._backward_hooks, hook)
        return self.grad_fn.add_tensor_pre_hook(self._output_nr, hook)

    def _accumulate_(self, other: Tensor) -> None:
        """`self += other` on the data, for gradient accumulation outside any graph."""
        self._data += other._data
        self._version_counter.version += 1

    # -- shape and data ---------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.shape.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return tuple.__new__(Size, self._data.shape)  # numpy's sizes are ints: no checks

    @property
    def dtype(self) -> dtypes.dtype:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.dtype.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return dtypes.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.ndim.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.ndim

    @property
    def device(self) -> devices.device:
        """Always the CPU: gradgen has no other device."""
        if _modes.active:  # a mode may hear the read (runtime/modes.py)
            heard = _modes.dispatch(Tensor.device.__get__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return devices.CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    def cpu(self) -> Tensor:
        """The tensor itself: it is on the CPU already."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.cpu, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """Fails as PyTorch built without CUDA fails: there is no CUDA device."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.cuda, (self, device, non_blocking), {})
            if heard is not _modes.PASS:
                return heard
        if isinstance(device, int) and not isinstance(device, bool):
            raise RuntimeError(devices.NO_ACCELERATOR)
        raise AssertionError(devices.CUDA_MISSING)

    def size(self, dim: int | None = None) -> Size | int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.size, (self, dim), {})
            if heard is not _modes.PASS:
                return heard
        return tuple.__new__(Size, self._data.shape) if dim is None else self._data.shape[dim]

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Steps between elements, in elements, along each dimension (or along `dim`)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.stride, (self, dim), {})
            if heard is not _modes.PASS:
                return heard
        itemsize = self._data.itemsize
        steps = tuple([step // itemsize for step in self._data.strides])
        return steps if dim is None else steps[dim]

    def dim(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.dim, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.ndim

    def numel(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.numel, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.size

    def nelement(self) -> int:
        """numel's older name."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.nelement, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.size

    def element_size(self) -> int:
        """Bytes per element."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.element_size, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.itemsize

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the elements lie in row-major order with no gaps (numpy's C order), or
        in the order of another memory format (`torch.channels_last`)."""
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.is_contiguous, (self,), {} if memory_format is None
                                    else {"memory_format": memory_format})
            if heard is not _modes.PASS:
                return heard
        if memory_format is None:
            return self._data.flags.c_contiguous
        return memory_formats.is_contiguous(self._data, memory_format)

    def is_floating_point(self) -> bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.is_floating_point, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self.dtype.is_floating_point

    def item(self) -> float | int | bool:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.item, (self,), {})
            if heard is not _modes.PASS:
                return heard
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.tolist, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.numpy, (self,), {})
            if heard is not _modes.PASS:
                return heard
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if self.dtype.name in _NOT_NUMPY:  # numpy itself has no bfloat16: torch refuses
            raise TypeError(f"Got unsupported ScalarType {_NOT_NUMPY[self.dtype.name]}")
        # A new ndarray on the tensor's memory at every call, as torch's: reshaping it in
        # place (`a.shape = ...`) or reinterpreting its dtype leaves the tensor as it is.
        return self._data.view()

    def __repr__(self) -> str:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__repr__, (self,), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        suffixes = []
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        if self._fw_grad is not None:
            suffixes.append("tangent=" + repr(self._fw_grad).replace("\n", "\n" + " " * 15))
        return format_tensor(
            self._data, dtype_name=self.dtype.name,
            default_float_dtype=dtypes.get_default_dtype().name, suffixes=suffixes,
        )

    def __len__(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__len__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__bool__, (self,), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        if self._data.size != 1:
            amount = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {amount} is ambiguous")
        return bool(self._data.item())

    def _number(self) -> Any:
        """The single value, for float() and int(): PyTorch warns (once) if it requires grad
        and grad mode is on (under no_grad it is silent, as LBFGS's float(loss) relies on)."""
        global _warned_scalar_of_requires_grad
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self.requires_grad and _grad_state.enabled and not _warned_scalar_of_requires_grad:
            _warned_scalar_of_requires_grad = True
            warn_at_caller(
                "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                "behavior.\nConsider using tensor.detach() first.",
                UserWarning,
            )
        return self._data.item()

    def __float__(self) -> float:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__float__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return float(_real_number(self._number(), "double"))

    def __complex__(self) -> complex:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__complex__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return complex(self._number())

    def __int__(self) -> int:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__int__, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return int(_real_number(self._number(), "int64_t"))

    def __index__(self) -> int:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__index__, (self,), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        if self._data.dtype.kind in "fcV" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    __hash__ = object.__hash__

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """`np.asarray(t)`: `t.numpy()` (its checks, a new ndarray on the tensor's memory),
        as torch's; `np.array(t)` (copy=True) or another dtype: a copy, never an alias."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Tensor.__array__, (self,),
                                             {"dtype": dtype, "copy": copy}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:
                raise ValueError(f"converting a {array.dtype} tensor to {np.dtype(dtype)} "
                                 "needs a copy, and copy=False was asked")
            return array.astype(dtype)
        return array.copy() if copy else array


def _real_number(value: Any, c_type: str) -> Any:
    """A complex element given to float() or int(): its real part when its imaginary part
    is zero, else torch's error."""
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return value.real
    return value


def _scalar_type_name(array: np.ndarray) -> str:
    """`Float`, `Long`: PyTorch's name for a dtype in messages."""
    return type_string(array).removeprefix("torch.").removesuffix("Tensor")
