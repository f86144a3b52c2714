"""The legacy surface old programs still reach for: `torch.FloatTensor` and its kin (as
constructors and as `isinstance` targets), `torch.autograd.Variable`, `torch.finfo` and
`torch.iinfo`, and the thread-count functions.

In PyTorch, `torch.FloatTensor` is not a subclass of `torch.Tensor`: it is an instance of
the metaclass `torch.tensortype`, whose `__instancecheck__` compares the dtype. So is it here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import devices, dtypes, factories
from runtime._tensor import Size, Tensor
from runtime._warn import warn_at_caller

__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
           "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "Variable",
           "VariableMeta", "finfo", "get_num_interop_threads", "get_num_threads", "iinfo",
           "set_num_interop_threads", "set_num_threads", "tensortype"]


class tensortype(type):  # noqa: N801 - torch.tensortype
    """The class of `torch.FloatTensor` & co: calling one makes a tensor of its dtype;
    `isinstance(x, torch.FloatTensor)` is true for a float32 CPU tensor."""

    dtype: dtypes.dtype
    is_cuda = False
    is_sparse = False

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        if device is not None and devices.device(device).type != "cpu":
            raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                               f"{devices.device(device).type} was passed")
        if not args:
            return factories.empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            return _same_data(cls.dtype, args[0])
        if all(isinstance(arg, int) and not isinstance(arg, bool) for arg in args) \
                or (len(args) == 1 and isinstance(args[0], Size)):
            size = tuple(args[0]) if isinstance(args[0], Size) else args
            return factories.zeros(*size, dtype=cls.dtype)  # torch leaves them uninitialised
        if len(args) == 1 and isinstance(args[0], list | tuple | np.ndarray):
            return factories.tensor(args[0], dtype=cls.dtype)
        raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")


def _same_data(dtype: dtypes.dtype, other: Tensor) -> Tensor:
    if other.dtype is not dtype:
        raise TypeError(f"expected {dtype._type_string} (got {other.dtype._type_string})")
    return other.detach()


def _legacy(name: str, dtype: dtypes.dtype) -> tensortype:
    return tensortype(name, (), {"dtype": dtype, "__module__": "torch"})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
BoolTensor = _legacy("BoolTensor", dtypes.bool_)
CharTensor = _legacy("CharTensor", dtypes.int8)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtypes.bfloat16)


# -- Variable ---------------------------------------------------------------------------------

class VariableMeta(type):
    """Every Tensor is a Variable (since PyTorch 0.4 they are one thing)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=VariableMeta):
    """`Variable(tensor, requires_grad=False)`: a new tensor sharing `tensor`'s data, a leaf
    that requires grad if asked. Kept for old programs; a Tensor does all of it now."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False,
                **kwargs: Any) -> Any:
        if volatile:
            warn_at_caller("volatile was removed and now has no effect. Use `with "
                           "torch.no_grad():` instead.", UserWarning)
        if data is None:
            return factories.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


# -- finfo and iinfo --------------------------------------------------------------------------

# bfloat16 has no numpy type: its limits, by its format (8 exponent bits, 7 fraction bits).
_BFLOAT16 = {"bits": 16, "eps": 2.0**-7, "max": float.fromhex("0x1.fep127"),
             "min": -float.fromhex("0x1.fep127"), "smallest_normal": 2.0**-126,
             "tiny": 2.0**-126, "resolution": 0.01}


class finfo:  # noqa: N801 - torch.finfo
    """The limits of a floating-point dtype, as torch.finfo gives them (float32 by default,
    or the default dtype)."""

    def __init__(self, type: dtypes.dtype | None = None) -> None:  # noqa: A002 - torch's name
        dtype = dtypes.get_default_dtype() if type is None else type
        if not isinstance(dtype, dtypes.dtype) or not dtype.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if dtype is dtypes.bfloat16:
            values = _BFLOAT16
        else:
            info = np.finfo(dtype.numpy)
            values = {"bits": info.bits, "eps": float(info.eps), "max": float(info.max),
                      "min": float(info.min), "smallest_normal": float(info.smallest_normal),
                      "tiny": float(info.tiny), "resolution": 10.0 ** -info.precision}
        self.__dict__.update(values)
        self.dtype = str(dtype).removeprefix("torch.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None  # type: ignore[assignment] - unhashable, as torch's

    def __repr__(self) -> str:
        fields = ("resolution", "min", "max", "eps", "smallest_normal", "tiny")
        text = ", ".join(f"{name}={getattr(self, name):g}" for name in fields)
        return f"finfo({text}, dtype={self.dtype})"


class iinfo:  # noqa: N801 - torch.iinfo
    """The limits of an integer dtype, as torch.iinfo gives them."""

    def __init__(self, type: dtypes.dtype) -> None:  # noqa: A002 - torch's name
        if type is dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtypes.dtype) or type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = str(type).removeprefix("torch.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


# -- threads ----------------------------------------------------------------------------------

# gradgen computes in one Python thread (numpy's BLAS may use its own); these keep what a
# program sets, so that it reads back what it set, as in torch.
_THREADS = {"intra": 1, "interop": 1}


def get_num_threads() -> int:
    return _THREADS["intra"]


def set_num_threads(num: int) -> None:
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _THREADS["intra"] = num


def get_num_interop_threads() -> int:
    return _THREADS["interop"]


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _THREADS["interop"] = num
