"""dtype objects with PyTorch's names (`torch.float32`), mapped to numpy dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from runtime import kernels


class dtype:  # noqa: N801 - PyTorch's name
    __slots__ = ("name", "numpy", "is_floating_point", "is_complex", "itemsize", "_type_string")

    def __init__(self, name: str, numpy_dtype: type, is_floating_point: bool, type_string: str):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.is_floating_point = is_floating_point
        self.is_complex = self.numpy.kind == "c"
        self.itemsize = self.numpy.itemsize
        self._type_string = type_string

    @property
    def is_signed(self) -> bool:
        return self.name not in ("bool", "uint8", "uint64")

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (complex64 -> float32); a real dtype
        gives itself."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype with parts of this float dtype (float32 -> complex64)."""
        if self.is_complex:
            return self
        if self.name not in _COMPLEX_OF:
            name = _SCALAR_NAMES.get(self.name, self.name)
            raise RuntimeError(f"Unknown Complex ScalarType for {name}")
        return _COMPLEX_OF[self.name]

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


float32 = dtype("float32", np.float32, True, "torch.FloatTensor")
float64 = dtype("float64", np.float64, True, "torch.DoubleTensor")
int64 = dtype("int64", np.int64, False, "torch.LongTensor")
int32 = dtype("int32", np.int32, False, "torch.IntTensor")
bool_ = dtype("bool", np.bool_, False, "torch.BoolTensor")
uint8 = dtype("uint8", np.uint8, False, "torch.ByteTensor")  # generator states are bytes
int8 = dtype("int8", np.int8, False, "torch.CharTensor")
int16 = dtype("int16", np.int16, False, "torch.ShortTensor")
short = int16
# uint64: the dtype of hash_tensor's result (torch's support for it is as limited: it has no
# arithmetic kernels for it, and neither has gradgen).
uint64 = dtype("uint64", np.uint64, False, "torch.UInt64Tensor")
float = float32  # noqa: A001 - torch.float
double = float64
long = int64
int = int32  # noqa: A001 - torch.int
# Half precision: numpy's float16 is IEEE binary16, as torch's is. Elementwise results round
# as torch's do (both compute a float16 op in float32 and round once); reductions accumulate
# differently (numpy in float16, torch in float32), so sums of many halves may differ.
float16 = dtype("float16", np.float16, True, "torch.HalfTensor")
half = float16
# Complex numbers: numpy's complex64 and complex128 hold two float32 / float64 parts, as
# torch's do.
complex64 = dtype("complex64", np.complex64, False, "torch.ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, False, "torch.ComplexDoubleTensor")
cfloat = complex64
cdouble = complex128


# bfloat16 (8 exponent bits, 7 fraction bits): numpy's bfloat16 from the ml_dtypes package.
# Its numpy kind is "V" (a numpy extension type), not "f": kernels ask `is_float(dtype)`.
# Elementwise arithmetic rounds as torch's CPU kernels do (both compute each op in float32
# and round its result once); a cast from float64 goes through float32, as torch's does.
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, True, "torch.BFloat16Tensor")

# complex32 (torch's ComplexHalf, two float16 parts): numpy's complex32 from ml_dtypes (0.7 or
# later). numpy's `.real` and `.imag` of it are wrong (the array itself, and zeros): gradgen
# reads its parts through view_as_real (a float16 view), as torch does.
complex32 = dtype("complex32", ml_dtypes.complex32, False, "torch.ComplexHalfTensor")
chalf = complex32

_BY_NUMPY = {d.numpy: d for d in (float32, float64, float16, bfloat16, int64, int32, bool_,
                                   uint8, int8, int16, complex64, complex128, complex32, uint64)}
# gradgen's dtype of each numpy dtype it has: from_numpy, and the recording's hot path
# (recording.scalar_type) without the call.
BY_NUMPY = _BY_NUMPY
_REAL_OF = {"complex64": float32, "complex128": float64, "complex32": float16}
_COMPLEX_OF = {"float32": complex64, "float64": complex128, "float16": complex32}
_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte",
                 "int8": "Char", "int16": "Short", "bfloat16": "BFloat16", "uint64": "UInt64"}

_default_float = [float32]


def from_numpy(numpy_dtype: np.dtype) -> dtype:
    try:
        return _BY_NUMPY[numpy_dtype]
    except KeyError:
        raise TypeError(f"gradgen has no dtype for numpy {numpy_dtype}") from None


def get_default_dtype() -> dtype:
    return _default_float[0]


def get_default_complex_dtype() -> dtype:
    """The complex dtype of Python complex numbers: complex64 under the default float32,
    complex128 under float64."""
    return _COMPLEX_OF[_default_float[0].name]


def set_default_dtype(d: dtype) -> None:
    """The float dtype of new tensors and of float results of integer inputs (`ints / 2`)."""
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d
    kernels.default_float(d.numpy)


def type_string(array: np.ndarray) -> str:
    """`torch.FloatTensor`, as PyTorch names a tensor's type in messages."""
    return from_numpy(array.dtype)._type_string


# Tensor type names of dtypes gradgen lacks: `x.type("torch.HalfTensor")` names one.
_OTHER_TYPE_STRINGS = ("torch.ByteTensor",)


def from_type_string(name: str) -> dtype:
    """The dtype of a tensor type name, `torch.FloatTensor` -> float32 (for Tensor.type)."""
    for candidate in _BY_NUMPY.values():
        if candidate._type_string == name:
            return candidate
    if name.startswith("torch.cuda."):
        raise AssertionError("Torch not compiled with CUDA enabled")
    if name in _OTHER_TYPE_STRINGS:
        raise TypeError(f"gradgen has no dtype for {name}")
    raise ValueError(f"invalid type: '{name}'")
