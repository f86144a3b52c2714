"""torch.device, and the one device gradgen computes on: the CPU.

A `device` is a value, as in PyTorch: a type (`"cpu"`, `"cuda"`, ...) and an optional
index, parsed and printed as PyTorch does. Any device may be named; asking to put a tensor
on one other than the CPU is an error (`to_cpu`): PyTorch's own for CUDA, which a build
without CUDA gives, and a plain one for the others.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CUDA_MISSING", "device", "get_default_device", "set_default_device", "to_cpu"]

# Every device type PyTorch parses, in the order its message lists them.
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")

# What a PyTorch built without CUDA says when asked to use it.
CUDA_MISSING = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."

_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")


class device:  # noqa: N801 - PyTorch's name
    """`device("cpu")`, `device("cuda", 1)`, `device("cpu:0")`: where a tensor lives."""

    __slots__ = ("_type", "_index")

    def __init__(self, type: Any = None, index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device) and index is None:
            object.__setattr__(self, "_type", type._type)
            object.__setattr__(self, "_index", type._index)
            return
        if isinstance(type, int) and not isinstance(type, bool) and index is None:
            raise RuntimeError(NO_ACCELERATOR)  # an index alone means the accelerator's
        if not isinstance(type, str):
            got = _type_name(type)
            raise TypeError(
                f"device() received an invalid combination of arguments - got ({got}), but "
                "expected one of:\n * (torch.device device)\n      didn't match because some "
                f"of the arguments have invalid types: (!{got}!)\n * (str type, int index = -1)"
                "\n")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{_type_name(index)}")
        kind, parsed = _parse(type)
        if index is not None and parsed is not None:
            raise RuntimeError(f"type (string) must not include an index because index was "
                               f"passed explicitly: {type}")
        index = parsed if index is None else index
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        object.__setattr__(self, "_type", kind)
        object.__setattr__(self, "_index", index)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self) -> tuple:
        return device, (self._type, self._index)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _parse(text: str) -> tuple[str, int | None]:
    """`"cuda:1"` -> ("cuda", 1), with PyTorch's errors."""
    if not text:
        raise RuntimeError("Device string must not be empty")
    match = _DEVICE_STRING.fullmatch(text)
    if match is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    kind, index = match.groups()
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {kind}")
    return kind, None if index is None else int(index)


CPU = device("cpu")


def to_cpu(where: Any) -> device:
    """The device `where` names (a device, a string or an index), which must be the CPU:
    gradgen has no other."""
    target = where if isinstance(where, device) else device(where)
    if target.type == "cpu":
        return target
    if target.type == "cuda":
        raise AssertionError(CUDA_MISSING)
    raise RuntimeError(f"gradgen computes on the cpu only: it has no {target.type} device")


# -- the default device ------------------------------------------------------------------------

_default_device: device | None = None


def set_default_device(where: Any) -> None:
    """torch.set_default_device: the device factories make tensors on. gradgen computes on
    the CPU only, so any other device is refused here, at once (PyTorch refuses it at the
    first factory call that would use it); None goes back to the CPU."""
    global _default_device
    _default_device = None if where is None else to_cpu(where)


def get_default_device() -> device:
    """torch.get_default_device: the CPU, with the index given to set_default_device."""
    return _default_device if _default_device is not None else device("cpu")
