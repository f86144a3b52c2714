"""Storages: the memory under tensors, as torch shows it (`x.untyped_storage()`,
`x.storage()`, `torch.FloatStorage([1, 2])`, `y.set_(x.untyped_storage())`).

A gradgen tensor's data is a numpy array, often a view of another: the storage of a tensor
is the memory of the array its views come from (the root of its `base` chain), seen as
bytes. An UntypedStorage holds that memory as a 1-D uint8 array, so a write through a
storage is seen by every tensor over the same memory, and the reverse. A TypedStorage (and
the legacy FloatStorage & co, which are TypedStorages of one dtype) reads the same bytes
as elements of its dtype; torch deprecates it, and warns once when a tensor's `storage()`
is first asked for, as torch does.

Where gradgen differs: `set_` never grows a storage (torch reallocates a storage too small
for the sizes asked for; gradgen refuses), and storages live on the CPU only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import devices, dtypes, factories, kernels
from runtime import out as _out
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute
from runtime.grad_mode import is_grad_enabled

__all__ = ["StorageBase", "UntypedStorage", "TypedStorage", "Storage", "FloatStorage",
           "DoubleStorage", "HalfStorage", "LongStorage", "IntStorage", "ShortStorage",
           "CharStorage", "ByteStorage", "BoolStorage", "BFloat16Storage",
           "ComplexFloatStorage", "ComplexDoubleStorage"]


def _root(array: np.ndarray) -> np.ndarray:
    return kernels.storage_root(array)  # (through numpy's stride tricks too: unfold's views)


def _bytes_of(array: np.ndarray) -> np.ndarray:
    """The memory of the array `array` comes from, as a 1-D uint8 array over it."""
    root = _root(array)
    if root.flags.c_contiguous or root.flags.f_contiguous:
        return root.reshape(-1, order="A").view(np.uint8)
    return np.ascontiguousarray(root).reshape(-1).view(np.uint8)  # a layout numpy made


class StorageBase:
    """torch._C.StorageBase: the base of UntypedStorage, never made directly."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Cannot directly construct StorageBase; subclass it and then "
                           "construct that")


def _check_index(index: Any, size: int) -> int:
    if not isinstance(index, int | np.integer) or isinstance(index, bool):
        raise TypeError(f"can't index a storage with {type(index).__name__}")
    position = index + size if index < 0 else index
    if not 0 <= position < size:
        raise IndexError(f"index {index} out of range for storage of size {size}")
    return position


class UntypedStorage(StorageBase):
    """Bytes: `UntypedStorage(n)`, `UntypedStorage([0, 255])`, or a tensor's."""

    __slots__ = ("_bytes",)

    def __init__(self, *args: Any, device: Any = None) -> None:
        if device is not None:
            devices.to_cpu(device)
        if not args:
            data = np.zeros(0, np.uint8)
        elif len(args) == 1 and isinstance(args[0], int):
            data = np.zeros(args[0], np.uint8)
        elif len(args) == 1 and isinstance(args[0], Sequence):
            data = np.array([int(v) for v in args[0]], np.int64).astype(np.uint8)
        else:
            raise TypeError(f"UntypedStorage(): invalid arguments {args!r}")
        self._bytes = data

    @classmethod
    def _over(cls, data: np.ndarray) -> UntypedStorage:
        storage = object.__new__(cls)
        storage._bytes = data
        return storage

    # -- facts ----------------------------------------------------------------------------
    def size(self) -> int:
        return self._bytes.size

    def nbytes(self) -> int:
        return self._bytes.size

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return self._bytes.__array_interface__["data"][0] if self._bytes.size else 0

    @property
    def device(self) -> devices.device:
        return devices.device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def untyped(self) -> UntypedStorage:
        return self

    # -- reading and writing --------------------------------------------------------------
    def tolist(self) -> list[int]:
        return self._bytes.tolist()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return UntypedStorage._over(self._bytes[index])
        return int(self._bytes[_check_index(index, self.size())])

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            self._bytes[index] = value
        else:
            self._bytes[_check_index(index, self.size())] = value

    def fill_(self, value: Any) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: Any, non_blocking: bool = False) -> UntypedStorage:
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch, m1: {source.nbytes()}, m2: {self.nbytes()}")
        self._bytes[...] = source.untyped()._bytes
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._over(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def __repr__(self) -> str:
        return _listing(self.tolist(), "torch.storage.UntypedStorage(device=cpu)", self.size())

    __str__ = __repr__


def _listing(values: list, header: str, size: int) -> str:
    lines = "\n".join(f" {v}" for v in values) if values else " "
    return f"{lines}\n[{header} of size {size}]"


def _warn_typed_storage() -> None:
    if not _warned[0]:
        _warned[0] = True
        warn_at_caller(_TYPED_STORAGE_WARNING, UserWarning)


_warned = [False]
_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


def _numpy_of(dtype: dtypes.dtype, owner: str) -> np.dtype:
    """The numpy type of a storage's dtype: a dtype gradgen has no arithmetic for (bfloat16,
    complex) makes no storage either."""
    if dtype is None:
        raise TypeError(f"gradgen has no dtype for {owner}: it has no complex numbers yet")
    return dtype.numpy


class TypedStorage:
    """Elements of one dtype over an UntypedStorage's bytes."""

    __slots__ = ("_untyped_storage", "dtype")
    is_sparse = False

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None,
                 wrap_storage: UntypedStorage | None = None) -> None:
        _warn_typed_storage()
        if device is not None:
            devices.to_cpu(device)
        dtype = dtype or dtypes.get_default_dtype()
        if wrap_storage is not None:
            if args:
                raise TypeError("TypedStorage(): wrap_storage takes no other argument")
            self._set(wrap_storage, dtype)
            return
        numpy = _numpy_of(dtype, type(self).__name__)
        if not args:
            data = np.zeros(0, numpy)
        elif len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            data = np.zeros(args[0], numpy)
        elif len(args) == 1 and isinstance(args[0], Sequence):
            # torch makes the tensor of the sequence (its checks and messages), then takes
            # its storage
            data = factories.tensor(list(args[0]), dtype=dtype)._data
        else:
            raise TypeError(f"TypedStorage(): invalid arguments {args!r}")
        self._set(UntypedStorage._over(data.reshape(-1).view(np.uint8)), dtype)

    def _set(self, untyped: UntypedStorage, dtype: dtypes.dtype) -> None:
        self._untyped_storage = untyped
        self.dtype = dtype

    @classmethod
    def _over(cls, untyped: UntypedStorage, dtype: dtypes.dtype) -> TypedStorage:
        storage = object.__new__(TypedStorage)
        storage._set(untyped, dtype)
        return storage

    @property
    def _elements(self) -> np.ndarray:
        data = self._untyped_storage._bytes
        usable = data.size - data.size % self.dtype.itemsize
        return data[:usable].view(self.dtype.numpy)

    # -- facts ----------------------------------------------------------------------------
    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    @property
    def device(self) -> devices.device:
        return devices.device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def type(self) -> str:
        return f"torch.{_LEGACY_NAMES[self.dtype.name]}"

    # -- reading and writing --------------------------------------------------------------
    def tolist(self) -> list:
        return self._elements.tolist()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._elements[_check_index(index, self.size())].item()

    def __setitem__(self, index: Any, value: Any) -> None:
        elements = self._elements
        if isinstance(index, slice):
            elements[index] = value
        else:
            elements[_check_index(index, self.size())] = value

    def fill_(self, value: Any) -> TypedStorage:
        self._elements[...] = value
        return self

    def copy_(self, source: Any, non_blocking: bool = False) -> TypedStorage:
        values = source._elements if isinstance(source, TypedStorage) else source._bytes
        if values.size != self.size():
            raise RuntimeError(f"size mismatch, m1: {values.size}, m2: {self.size()}")
        self._elements[...] = values
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage._over(self._untyped_storage.clone(), self.dtype)

    def cpu(self) -> TypedStorage:
        return self

    def _to(self, dtype: dtypes.dtype) -> TypedStorage:
        if dtype is self.dtype:
            return self
        data = self._elements.astype(dtype.numpy)
        return TypedStorage._over(UntypedStorage._over(data.view(np.uint8)), dtype)

    def float(self) -> TypedStorage:
        return self._to(dtypes.float32)

    def double(self) -> TypedStorage:
        return self._to(dtypes.float64)

    def half(self) -> TypedStorage:
        return self._to(dtypes.float16)

    def long(self) -> TypedStorage:
        return self._to(dtypes.int64)

    def int(self) -> TypedStorage:
        return self._to(dtypes.int32)

    def byte(self) -> TypedStorage:
        return self._to(dtypes.uint8)

    def bool(self) -> TypedStorage:
        return self._to(dtypes.bool_)

    def __repr__(self) -> str:
        return _listing(self.tolist(), f"torch.storage.TypedStorage(dtype={self.dtype}, "
                        "device=cpu)", self.size())

    __str__ = __repr__


class _LegacyStorageMeta(type):
    """FloatStorage & co: calling one makes a TypedStorage of its dtype (as torch's, whose
    objects are TypedStorages), and `isinstance(x.storage(), torch.FloatStorage)` is true
    for a TypedStorage of that dtype."""

    def __call__(cls, *args: Any, wrap_storage: UntypedStorage | None = None,
                 **kwargs: Any) -> TypedStorage:
        if kwargs:
            name = next(iter(kwargs))
            raise RuntimeError(
                f"{cls}.__new__ received an invalid combination of arguments. Expected one "
                "of:\n * no arguments\n * (int size)\n * (Sequence data)\n * (*, "
                f"UntypedStorage wrap_storage)\nKeyword argument '{name}' cannot be specified")
        _numpy_of(cls._dtype, cls.__name__)
        return TypedStorage(*args, dtype=cls._dtype, wrap_storage=wrap_storage)

    def __instancecheck__(cls, instance: Any) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        return isinstance(instance, TypedStorage) and cls._dtype is not None and \
            instance.dtype is cls._dtype


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    """FloatStorage & co: a TypedStorage whose dtype is its class's."""

    __slots__ = ()
    _dtype: dtypes.dtype | None = None


def _legacy(name: str, dtype: dtypes.dtype | None) -> type:
    cls = _LegacyStorageMeta(name, (_LegacyStorage,), {"__slots__": (), "_dtype": dtype,
                                                        "__module__": "torch"})
    return cls


FloatStorage = _legacy("FloatStorage", dtypes.float32)
DoubleStorage = _legacy("DoubleStorage", dtypes.float64)
HalfStorage = _legacy("HalfStorage", dtypes.float16)
LongStorage = _legacy("LongStorage", dtypes.int64)
IntStorage = _legacy("IntStorage", dtypes.int32)
ShortStorage = _legacy("ShortStorage", getattr(dtypes, "int16", None))
CharStorage = _legacy("CharStorage", getattr(dtypes, "int8", None))
ByteStorage = _legacy("ByteStorage", dtypes.uint8)
BoolStorage = _legacy("BoolStorage", dtypes.bool_)
BFloat16Storage = _legacy("BFloat16Storage", dtypes.bfloat16)  # refuses: bfloat16's message
ComplexFloatStorage = _legacy("ComplexFloatStorage", None)  # refuses: no complex dtype
ComplexDoubleStorage = _legacy("ComplexDoubleStorage", None)
Storage = FloatStorage  # torch.Storage: the legacy storage of the default type, float

_LEGACY = (FloatStorage, DoubleStorage, HalfStorage, LongStorage, IntStorage, ShortStorage,
           CharStorage, ByteStorage, BoolStorage, BFloat16Storage)
_LEGACY_NAMES = {cls._dtype.name: cls.__name__ for cls in _LEGACY if cls._dtype is not None}


def _legacy_class(dtype: dtypes.dtype) -> type:
    return next(cls for cls in _LEGACY if cls._dtype is dtype)


# -- the Tensor methods ------------------------------------------------------------------------
def _check_tensor(name: str, value: Any, argument: str) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


class StorageMethods:
    """untyped_storage, storage, storage_type, set_ and is_set_to, set on Tensor."""

    def untyped_storage(self: Tensor) -> UntypedStorage:
        return UntypedStorage._over(_bytes_of(self._data))

    def storage(self: Tensor) -> TypedStorage:
        _warn_typed_storage()
        return TypedStorage._over(UntypedStorage._over(_bytes_of(self._data)), self.dtype)

    def storage_type(self: Tensor) -> type:
        return _legacy_class(self.dtype)

    def is_set_to(self: Tensor, tensor: Tensor) -> bool:
        """Whether both tensors view the same memory the same way."""
        _check_tensor("is_set_to", tensor, "tensor")
        mine, theirs = self._data, tensor._data
        return (_root(mine) is _root(theirs) or _same_memory(mine, theirs)) and \
            mine.__array_interface__["data"][0] == theirs.__array_interface__["data"][0] and \
            mine.shape == theirs.shape and mine.strides == theirs.strides

    def set_(self: Tensor, source: Any = None, storage_offset: int = 0, size: Any = None,
             stride: Any = None) -> Tensor:
        """Make this tensor a window on another's memory (a tensor or a storage), or empty."""
        _check_set(self)
        if source is None:
            data = np.zeros(0, self._data.dtype)
        elif isinstance(source, Tensor):
            data = source._data.view()
        elif isinstance(source, UntypedStorage | TypedStorage):
            data = _window(self, source, storage_offset, size, stride)
        else:
            raise TypeError(f"set_() received an invalid combination of arguments - got "
                            f"({type(source).__name__}), but expected a Tensor or a Storage")
        self._data = data
        self._version_counter.version += 1
        return self


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    root_a, root_b = _root(a), _root(b)
    return root_a.__array_interface__["data"][0] == root_b.__array_interface__["data"][0] and \
        root_a.nbytes == root_b.nbytes


def _check_set(tensor: Tensor) -> None:
    if tensor.requires_grad and tensor.grad_fn is None and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _window(tensor: Tensor, source: Any, offset: int, size: Any, stride: Any) -> np.ndarray:
    if isinstance(source, TypedStorage) and source.dtype.numpy != tensor._data.dtype:
        raise RuntimeError(f"Expected a Storage of type {_cpp_name(tensor._data.dtype)} or an "
                           f"UntypedStorage, but got type {_scalar_name(source.dtype.numpy)} "
                           "for argument 1 'storage'")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    data = source.untyped()._bytes
    itemsize = tensor._data.dtype.itemsize
    if size is None:
        size = ((data.size // itemsize) - offset,)
    size = tuple(size)
    if stride is None:
        stride = tuple(int(np.prod(size[i + 1:])) for i in range(len(size)))
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) \
        if all(size) else 0
    if needed * itemsize > data.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{data.size} (gradgen does not grow a storage)")
    return np.ndarray(size, tensor._data.dtype, buffer=data, offset=offset * itemsize,
                      strides=tuple(s * itemsize for s in stride))


def _cpp_name(numpy_dtype: np.dtype) -> str:
    return _out._CPP_NAMES.get(numpy_dtype.name, numpy_dtype.name)


def _scalar_name(numpy_dtype: np.dtype) -> str:
    return _out.scalar_type_name(numpy_dtype)


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
