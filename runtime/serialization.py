"""torch.save and torch.load in torch's own file format, read without running any code.

The format (chosen so that files move between torch and gradgen both ways): a zip
archive whose records sit under one folder (`archive/`):

    data.pkl     the object, pickled (protocol 2), with each tensor's bytes left out
    data/<key>   the raw little-endian bytes of one storage (a tensor's memory)
    byteorder    "little";   version   "3";   .format_version   "1"

In data.pkl a tensor is a call `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)` and a Parameter wraps one in
`torch._utils._rebuild_parameter(tensor, requires_grad, hooks)`; `storage` is a
*persistent id*, the tuple ('storage', torch.FloatStorage, key, 'cpu', numel), which the
loader resolves to the bytes of `data/<key>`.

Safety. A pickle is a small program: an ordinary unpickler imports and calls whatever
the file names, so loading an untrusted file can run any code. gradgen's loader is a
restricted unpickler, as torch's `weights_only=True`: the only globals it resolves are
the few above (OrderedDict, the two rebuild functions, the storage types, torch.Size,
dtypes and devices), each mapped to gradgen's own harmless stand-in, and nothing else is
ever imported or called; the opcode that sets attributes (BUILD) works on dicts only, and
a tensor's layout is checked against its storage. Anything else in a file is an
UnpicklingError that names it. This is how gradgen loads by default and with
`weights_only=True`; the globals a caller trusts can be added to the list
(`torch.serialization.add_safe_globals`, `safe_globals`), as in torch: numpy arrays load
once numpy's reconstruct function, ndarray and dtype are allowed. `weights_only=False` is
the caller's explicit choice for a file they trust: Python's own unpickling, which imports
and calls what the file names (torch's names resolve to gradgen's objects of that name).

The writer emits the pickle opcodes of what the safe loader accepts (tensors, Parameters,
dicts, OrderedDicts, lists, tuples, strings, numbers, None, torch.Size, dtypes, devices)
itself, because a pickler would want to import `torch._utils` to name the rebuild
functions; anything else (a set, bytes, a numpy array, an object of the caller's) it hands
to Python's pure pickler, as torch.save pickles it: the file then loads as torch's would,
with weights_only=True for the plain containers and values torch allows, and otherwise
with the globals allowed or weights_only=False.

Differences from torch, by design: every tensor is saved with its own storage, as a
contiguous copy (torch saves a view's whole base storage once and keeps its strides);
so after loading, values, dtypes, shapes and requires_grad match, but two views saved
together no longer share memory.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import importlib
import io
import os
import pickle
import pickletools
import struct
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from runtime import changes, dtypes
from runtime._tensor import Size, Tensor
from runtime.aliases import TORCH_MODULES
from runtime.devices import device as Device
from runtime.nn.parameter import Parameter

__all__ = ["DEFAULT_PROTOCOL", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "get_unsafe_globals_in_checkpoint", "load", "safe_globals", "save"]

DEFAULT_PROTOCOL = 2

# torch's storage class for each element type (numpy's name on the right).
_STORAGES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "UntypedStorage": "uint8",
}
_STORAGE_OF = {np.dtype(name): storage for storage, name in _STORAGES.items()
               if storage != "UntypedStorage"}


# -- loading --------------------------------------------------------------------------------

class _StorageType:
    """What the loader gives for `torch.FloatStorage` and its kin: just the element type."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = np.dtype(_STORAGES[name])


def _gradgen_dtype(array: np.ndarray) -> dtypes.dtype:
    try:
        return dtypes.from_numpy(array.dtype)
    except TypeError:
        raise pickle.UnpicklingError(
            f"gradgen has no dtype for the {array.dtype} tensors in this file") from None


def _check_layout(storage: Any, storage_offset: Any, size: Any, stride: Any) -> None:
    """The arguments of a tensor in a file are what torch writes (a file may say anything)."""
    def is_int(value: Any) -> bool:
        return type(value) is int

    if not (isinstance(storage, np.ndarray) and is_int(storage_offset)
            and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride) and all(map(is_int, size + stride))
            and all(n >= 0 for n in size)):
        raise pickle.UnpicklingError("a tensor in this file is not laid out as torch writes one")


def _rebuild_tensor_v2(storage: np.ndarray, storage_offset: int, size: tuple, stride: tuple,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """A tensor over `storage` (a flat array) as torch lays it out, copied to its own memory."""
    size, stride = tuple(size), tuple(stride)
    _check_layout(storage, storage_offset, size, stride)
    dtype = _gradgen_dtype(storage)
    needed = 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) if all(size) else 0
    if storage_offset < 0 or any(s < 0 for s in stride) or \
            storage_offset + needed > storage.size:
        raise pickle.UnpicklingError("a tensor in this file reaches outside its storage")
    view = np.lib.stride_tricks.as_strided(
        storage[storage_offset:], shape=size,
        strides=tuple(s * storage.itemsize for s in stride), writeable=False)
    if requires_grad and not dtype.is_floating_point:
        raise pickle.UnpicklingError(f"a {dtype.name} tensor in this file requires grad: only "
                                     "floating-point tensors can")
    return Tensor._make(np.array(view, dtype=dtype.numpy), None, bool(requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("a Parameter in this file does not hold a tensor")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any,
                                  state: Any) -> Parameter:
    """A Parameter saved with extra attributes: the attributes are not restored."""
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _allowed_globals() -> dict[tuple[str, str], Any]:
    """The only names a file may use, each resolved to gradgen's own object."""
    allowed: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch", "Size"): Size,
        ("torch", "device"): Device,
        # plain containers and values torch's weights_only loader takes
        ("collections", "Counter"): Counter,
        ("builtins", "set"): set,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("_codecs", "encode"): codecs.encode,  # how protocol 2 writes bytes
    }
    for name in _STORAGES:
        allowed["torch", name] = _StorageType(name)
        allowed["torch.storage", name] = allowed["torch", name]
    for name in dir(dtypes):
        value = getattr(dtypes, name)
        if isinstance(value, dtypes.dtype):
            allowed["torch", value.name] = value
    return allowed


class _SafeUnpickler(pickle._Unpickler):
    """An unpickler that resolves only _allowed_globals() and storages of the archive.

    It is Python's own unpickler (pickle._Unpickler, whose opcodes can be overridden) with
    two changes: find_class answers from the allow-list, and BUILD (which sets attributes on
    the object below it) applies only to dicts, such as a state_dict's `_metadata`, so that
    a file cannot change the attributes of gradgen's classes or dtypes. The pickle is small
    (tensors' bytes are separate records), so the pure-Python unpickler costs little.
    """

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str,
                 byteorder: str) -> None:
        super().__init__(io.BytesIO(data))
        self._archive = archive
        self._prefix = prefix
        self._byteorder = byteorder
        self._storages: dict[str, np.ndarray] = {}
        self._allowed = _allowed_globals()

    def find_class(self, module: str, name: str) -> Any:
        module, name = _python3_name(module, name)
        found = self._allowed.get((module, name), _user_globals().get((module, name), _NONE))
        if found is not _NONE:
            return found
        if module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(
                f"gradgen has no dtype for the tensors of torch.{name} in this file")
        raise pickle.UnpicklingError(
            f"gradgen's torch.load refuses the global {module}.{name}: it loads only "
            "tensors, Parameters, numbers, strings, None and dicts, lists and tuples of "
            "them (what torch.load loads with weights_only=True), and never runs code "
            "named by a file. If you trust the file, allow the global with "
            "torch.serialization.add_safe_globals or load with weights_only=False")

    def load_build(self) -> None:
        target = self.stack[-2]
        if type(target) not in (dict, OrderedDict, Counter) and \
                type(target) not in _user_globals().values():
            raise pickle.UnpicklingError("gradgen's torch.load refuses to set the attributes "
                                         f"of a {type(target).__name__} (a BUILD in the file)")
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = load_build

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str)
                and type(pid[4]) is int and pid[4] >= 0):
            raise pickle.UnpicklingError(f"unknown persistent id in this file: {pid!r}")
        # The location (e.g. 'cuda:0') is ignored: everything loads to the CPU, as torch
        # does with map_location='cpu'.
        _, storage_type, key, _location, numel = pid
        if key not in self._storages:
            try:
                raw = self._archive.read(f"{self._prefix}data/{key}")
            except KeyError:
                raise pickle.UnpicklingError(f"this file has no record data/{key}") from None
            dtype = storage_type.dtype.newbyteorder(self._byteorder)
            if len(raw) < numel * dtype.itemsize:
                raise pickle.UnpicklingError(f"record data/{key} is shorter than its storage")
            array = np.frombuffer(raw, dtype=dtype, count=numel)
            self._storages[key] = array.astype(storage_type.dtype)
        return self._storages[key]


def _check_map_location(map_location: Any) -> None:
    """gradgen has only the CPU: accept what means it (None, 'cpu', device('cpu'), a dict
    sending locations to 'cpu'), and refuse the rest."""
    if map_location is None:
        return
    if isinstance(map_location, dict):
        targets = list(map_location.values())
    elif callable(map_location) and not isinstance(map_location, Device):
        raise RuntimeError("gradgen's torch.load takes map_location as None, 'cpu', "
                           "torch.device('cpu') or a dict; not a function")
    else:
        targets = [map_location]
    for target in targets:
        if str(target).split(":")[0] != "cpu":
            raise RuntimeError(f"gradgen has only the CPU: cannot load to map_location={target!r}")


def _read_archive(archive: zipfile.ZipFile, unpickler: type) -> Any:
    names = archive.namelist()
    pickles = [name for name in names if name.endswith("data.pkl")
               and name.count("/") == 1]
    if not pickles:
        raise pickle.UnpicklingError("this zip file was not written by torch.save: it has no "
                                     "<folder>/data.pkl record")
    prefix = pickles[0][:-len("data.pkl")]
    order = "little"  # files without the record are little-endian
    if f"{prefix}byteorder" in names:
        order = archive.read(f"{prefix}byteorder").decode("ascii", "replace")
        if order not in ("little", "big"):
            raise pickle.UnpicklingError(f"unknown byteorder {order!r} in this file")
    byteorder = "<" if order == "little" else ">"
    return unpickler(archive.read(pickles[0]), archive, prefix, byteorder).load()


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved by torch.save (torch's or gradgen's) from a path or a binary
    file object. By default (and with weights_only=True) without running code: see the
    module docstring; weights_only=False, the caller's explicit choice, unpickles as Python
    does, for a file from a source they trust."""
    unpickler = _FullUnpickler if weights_only is False else _SafeUnpickler
    _check_map_location(map_location)
    if pickle_module is not None:
        raise TypeError("gradgen's torch.load uses its own restricted unpickler; "
                        "pickle_module cannot be set")
    if mmap:
        raise RuntimeError("gradgen's torch.load does not memory-map files (mmap=True)")
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as file:
            return _load_file(file, unpickler)
    return _load_file(f, unpickler)


def _load_file(file: Any, unpickler: type) -> Any:
    start = file.tell() if hasattr(file, "tell") else 0
    magic = file.read(4)
    file.seek(start)
    if magic != b"PK\x03\x04":
        raise pickle.UnpicklingError(
            "not a file written by torch.save in its zip format (torch >= 1.6): gradgen "
            "reads only that format, never a bare pickle")
    try:
        with zipfile.ZipFile(file) as archive:
            return _read_archive(archive, unpickler)
    except zipfile.BadZipFile as error:
        raise pickle.UnpicklingError(f"not a readable torch.save file: {error}") from None


# -- saving ---------------------------------------------------------------------------------

class _Writer(pickle._Pickler):
    """Pickle opcodes (protocol 2) with every tensor's bytes set aside as a storage record.

    What torch's weights_only loader reads (tensors, Parameters, numbers, strings, dtypes,
    torch.Size, devices and the plain containers) is written here as torch writes it;
    anything else, as Python's own pickler writes it (Python's pure pickler, whose `save`
    this class extends, so that a tensor inside any object is still written as torch's): such
    a file loads with weights_only=False, or with the object's globals allowed, as torch's.
    """

    def __init__(self) -> None:
        self.out = io.BytesIO()
        super().__init__(self.out, protocol=2)
        self.storages: list[bytes] = []

    def remember(self, obj: Any) -> None:
        """Remember the object just built, so a second reference is a memo get."""
        self.memoize(obj)

    def recall(self, obj: Any) -> bool:
        found = self.memo.get(id(obj))
        if found is None:
            return False
        self.write(self.get(found[0]))
        return True

    def global_(self, module: str, name: str) -> None:
        self.write(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def dump(self, obj: Any) -> bytes:
        super().dump(obj)
        return self.out.getvalue()

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if obj is None:
            self.write(b"N")
        elif obj is True or obj is False:
            self.write(b"\x88" if obj else b"\x89")
        elif isinstance(obj, int) and type(obj) is int:
            self.save_int(obj)
        elif type(obj) is float:
            self.write(b"G" + struct.pack(">d", obj))
        elif type(obj) is str:
            data = obj.encode("utf-8", "surrogatepass")
            self.write(b"X" + struct.pack("<I", len(data)) + data)
        elif self.recall(obj):
            return
        else:
            self.save_object(obj)

    def save_int(self, value: int) -> None:
        if 0 <= value < 256:
            self.write(b"K" + bytes([value]))
        elif 0 <= value < 65536:
            self.write(b"M" + struct.pack("<H", value))
        elif -(2**31) <= value < 2**31:
            self.write(b"J" + struct.pack("<i", value))
        else:
            data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            if len(data) < 256:
                self.write(b"\x8a" + bytes([len(data)]) + data)  # LONG1
            else:
                self.write(b"\x8b" + struct.pack("<I", len(data)) + data)  # LONG4

    def save_object(self, obj: Any) -> None:
        if isinstance(obj, Tensor):
            self.save_tensor(obj)
        elif isinstance(obj, dtypes.dtype):
            self.global_("torch", obj.name)
        elif isinstance(obj, Size):
            self.global_("torch", "Size")
            self.save_tuple(tuple(obj))
            self.write(b"\x85R")
        elif type(obj) is tuple:
            self.save_tuple(obj)
        elif type(obj) in (list, changes.CountedList):
            # (An optimizer's own lists and dicts count their writes for runtime.compile's
            # guards; saved, they are the plain list and dict torch saves.)
            self.write(b"]")
            self.remember(obj)
            self.save_items(obj)
        elif type(obj) in (dict, OrderedDict) or isinstance(obj, changes.Registry):
            self.save_dict(obj)
        elif isinstance(obj, Device):
            self.global_("torch", "device")
            self.save_tuple((obj.type,) if obj.index is None else (obj.type, obj.index))
            self.write(b"R")
            self.remember(obj)
        else:
            pickle._Pickler.save(self, obj)  # any other object, as Python pickles it

    def save_tuple(self, items: tuple) -> None:
        if not items:
            self.write(b")")
            return
        self.write(b"(")
        for item in items:
            self.save(item)
        self.write(b"t")

    def save_items(self, items: list) -> None:
        """APPENDS batches of a list's items (after its EMPTY_LIST and memo put)."""
        if items:
            self.write(b"(")
            for item in items:
                self.save(item)
            self.write(b"e")

    def save_dict(self, obj: dict) -> None:
        if type(obj) is OrderedDict:
            self.global_("collections", "OrderedDict")
            self.write(b")R")
        else:
            self.write(b"}")
        self.remember(obj)
        if obj:
            self.write(b"(")
            for key, value in obj.items():
                self.save(key)
                self.save(value)
            self.write(b"u")
        state = getattr(obj, "__dict__", None)
        if state:  # e.g. a module state_dict's _metadata, as torch writes it
            self.save(dict(state))
            self.write(b"b")

    def save_tensor(self, tensor: Tensor) -> None:
        is_parameter = isinstance(tensor, Parameter)
        if is_parameter:
            self.global_("torch._utils", "_rebuild_parameter")
            self.write(b"(")
        array = np.array(tensor._data, order="C")  # a contiguous copy, 0-d staying 0-d
        if array.dtype not in _STORAGE_OF:
            raise TypeError(f"gradgen's torch.save cannot save {array.dtype} tensors")
        key = str(len(self.storages))
        self.storages.append(array.astype(array.dtype.newbyteorder("<")).tobytes())
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.write(b"(")
        self.write(b"(")
        self.save("storage")
        self.global_("torch", _STORAGE_OF[array.dtype])
        self.save(key)
        self.save("cpu")
        self.save(array.size)
        self.write(b"tQ")
        self.save(0)
        self.save_tuple(tuple(array.shape))
        strides = tuple(s // array.itemsize for s in array.strides) if array.size else \
            _contiguous_strides(array.shape)
        self.save_tuple(strides)
        self.save(bool(tensor.requires_grad) and not is_parameter)
        self.global_("collections", "OrderedDict")
        self.write(b")R")
        self.write(b"tR")
        if is_parameter:
            self.save(bool(tensor.requires_grad))
            self.global_("collections", "OrderedDict")
            self.write(b")R")
            self.write(b"tR")
        self.remember(tensor)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for length in reversed(shape):
        strides.append(step)
        step *= max(length, 1)
    return tuple(reversed(strides))


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save `obj` (tensors, state_dicts and plain containers of them) to a path or a binary
    file object, in torch's zip format: see the module docstring."""
    if pickle_module is not None:
        raise TypeError("gradgen's torch.save writes its own pickle; pickle_module cannot be set")
    if not _use_new_zipfile_serialization:
        raise RuntimeError("gradgen's torch.save writes only torch's zip format "
                           "(_use_new_zipfile_serialization=True)")
    writer = _Writer()
    data = writer.dump(obj)
    if isinstance(f, str | os.PathLike):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as file:
            _write_archive(file, name, data, writer.storages)
    else:
        _write_archive(f, "archive", data, writer.storages)


def _write_archive(file: Any, folder: str, data: bytes, storages: list[bytes]) -> None:
    records = [("data.pkl", data), (".format_version", b"1"),
               (".storage_alignment", b"64"), ("byteorder", b"little")]
    records += [(f"data/{key}", raw) for key, raw in enumerate(storages)]
    records += [("version", b"3\n")]
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, raw in records:
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, raw)


# -- the caller's choices: safe globals, weights_only=False ---------------------------------
_NONE = object()
_safe_globals: list[Any] = []


def _python3_name(module: str, name: str) -> tuple[str, str]:
    """A protocol-2 pickle's Python 2 name (`__builtin__.set`) as Python 3 spells it."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[module, name]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _user_globals() -> dict[tuple[str, str], Any]:
    """The globals the caller allowed (add_safe_globals, safe_globals), by their names."""
    named: dict[tuple[str, str], Any] = {}
    for entry in _safe_globals:
        if isinstance(entry, tuple):
            value, full_name = entry
            module, _, name = full_name.rpartition(".")
        else:
            value, module, name = entry, entry.__module__, entry.__qualname__
        named[module, name] = value
    return named


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Let torch.load with weights_only=True rebuild these classes and call these functions
    (each given as itself, or as (itself, "module.name") when a file names it otherwise):
    for files from a source you trust, e.g. numpy arrays' reconstruct, ndarray and dtype."""
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    return list(_safe_globals)


def clear_safe_globals() -> None:
    _safe_globals.clear()


class safe_globals:  # noqa: N801 - torch's name
    """add_safe_globals for the duration of a `with` block."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        self._before = list(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _safe_globals[:] = self._before


class _FullUnpickler(_SafeUnpickler):
    """weights_only=False, the caller's explicit choice for a file they trust: Python's own
    unpickling, which imports and calls what the file names. torch's names resolve to
    gradgen's objects of the same torch name (runtime/aliases.py); a torch object gradgen
    has no counterpart for is an UnpicklingError that names it."""

    dispatch = dict(pickle._Unpickler.dispatch)  # BUILD as Python's: any object

    def find_class(self, module: str, name: str) -> Any:
        module, name = _python3_name(module, name)
        found = self._allowed.get((module, name), _user_globals().get((module, name), _NONE))
        if found is not _NONE:
            return found
        if module == "torch" or module.startswith("torch."):
            return _torch_name(module, name)
        return pickle._Unpickler.find_class(self, module, name)


def _torch_name(module: str, name: str) -> Any:
    ours = TORCH_MODULES.get(module)
    value = getattr(importlib.import_module(ours), name, None) if ours else None
    if value is None:
        raise pickle.UnpicklingError(
            f"gradgen cannot rebuild {module}.{name} from this file: it has no object of that "
            "torch name (save the object's state_dict() instead)")
    return value


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The globals a torch.save file names that torch.load with weights_only=True would
    refuse (not allowed by default nor by add_safe_globals), as "module.name", read from
    its pickle without loading it."""
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as file:
            return get_unsafe_globals_in_checkpoint(file)
    with zipfile.ZipFile(f) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not pickles:
            raise pickle.UnpicklingError("this zip file was not written by torch.save: it has "
                                         "no <folder>/data.pkl record")
        data = archive.read(pickles[0])
    allowed = {**_allowed_globals(), **_user_globals()}
    return sorted({f"{module}.{name}" for module, name in _globals_named(data)
                   if (module, name) not in allowed})


def _globals_named(data: bytes) -> list[tuple[str, str]]:
    """Every (module, name) a pickle's GLOBAL and STACK_GLOBAL opcodes name."""
    found, strings = [], []
    for opcode, argument, _ in pickletools.genops(data):
        if opcode.name == "GLOBAL":
            module, name = argument.split(" ", 1)
            found.append(_python3_name(module, name))
        elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(_python3_name(strings[-2], strings[-1]))
        elif isinstance(argument, str):
            strings.append(argument)
    return found
