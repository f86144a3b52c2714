"""Parameter: the Tensor a Module registers as one of its parameters."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from runtime import dtypes
from runtime._tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter",
           "UninitializedTensorMixin"]


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default; assigning one to a Module registers it.

    It shares the storage of the tensor it is made from, as PyTorch's does. Ops on a
    Parameter give plain Tensors.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        array = np.empty(0, dtypes.get_default_dtype().numpy) if data is None else data._data
        parameter = cls._make(array, None)
        parameter.requires_grad_(requires_grad)
        return parameter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Everything happens in __new__ (Tensor.__init__ refuses direct construction)."""

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


# -- issue 28, helper nnB: nn.Buffer and the uninitialised tensors of lazy modules ----------

# id(tensor) -> persistent, for the tensors nn.Buffer marked (removed when they go).
_BUFFER_MARKS: dict[int, bool] = {}


def buffer_persistence(value: Any) -> bool | None:
    """For a tensor nn.Buffer made: whether it is persistent; None for any other value."""
    return _BUFFER_MARKS.get(id(value)) if isinstance(value, Tensor) else None


class _BufferMeta(type):
    """isinstance(t, nn.Buffer) holds for the tensors nn.Buffer returned."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return buffer_persistence(instance) is not None


class Buffer(metaclass=_BufferMeta):
    """`nn.Buffer(tensor)`: a detached tensor that a Module registers as a buffer when it is
    assigned as an attribute (persistent=False keeps it out of state_dict). As torch's, the
    value is a plain Tensor, only marked."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = Tensor._make(np.empty(0, dtypes.get_default_dtype().numpy), None)
        tensor = data.detach().requires_grad_(data.requires_grad)
        _BUFFER_MARKS[id(tensor)] = persistent
        weakref.finalize(tensor, _BUFFER_MARKS.pop, id(tensor), None)
        return tensor


_UNINITIALIZED_SHAPE = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually "
    "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
    "initialized one. Call `forward` to initialize the parameters before accessing their "
    "attributes.")


class UninitializedTensorMixin:
    """A tensor without a shape yet: a lazy module gives it one (materialize) at its first
    forward, and the tensor then becomes a plain Parameter or Tensor."""

    __slots__ = ()
    _is_uninitialized = True
    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become an (uninitialised) tensor of `shape`, of this one's dtype unless given."""
        self.data = Tensor._make(np.empty(tuple(shape), (dtype or self.dtype).numpy), None)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(_UNINITIALIZED_SHAPE)

    def share_memory_(self) -> Any:
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module, before the first forward gives it a shape."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        array = np.empty(0, (dtype or dtypes.get_default_dtype()).numpy)
        parameter = cls._make(array, None)
        parameter.requires_grad_(requires_grad)
        return parameter


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module (running_mean, ...) before the first forward."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        array = np.empty(0, (dtype or dtypes.get_default_dtype()).numpy)
        buffer = cls._make(array, None)
        buffer.requires_grad_(requires_grad)
        return buffer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Everything happens in __new__ (Tensor.__init__ refuses direct construction)."""
# -- end of nnB's block -------------------------------------------------------------------
