"""The arguments of the tensor factories, read as PyTorch's Python argument parser reads them.

`torch.zeros`, `torch.full`, `torch.eye`, ... are C++ functions behind one parser
(torch/csrc/utils/python_arg_parser.cpp). Each function declares its Python signature(s);
a call binds to the first signature its arguments fit, every argument checked against its
declared type (`int[] size` takes a tuple or list whose first item is an int, `Scalar` a
Python number or a 0-dim tensor, `ScalarType? dtype` a torch.dtype or one of Python's
int / float / bool types, ...). When none fits, the parser explains why in one of a few fixed
forms, which users see and search for:

    zeros(): argument 'size' (position 1) must be tuple of ints, not float
    eye(): argument 'n' (position 1) must be int, not float
    zeros() takes 1 positional argument but 2 were given
    full() missing 1 required positional arguments: "fill_value"
    zeros() got an unexpected keyword argument 'foo'
    eye() received an invalid combination of arguments - got (int, NoneType), but ...

With several signatures, the specific message comes only when exactly one signature could
take that many arguments; otherwise the "invalid combination" message lists them all.
This module is that parser, small, for the factories (runtime/factories.py,
runtime/random_ops.py): `Parser(SIGNATURES["zeros"])` takes a function's signatures, which
the generator parsed from torch's text (codegen/python_signatures.py, emitted as records in
generated/signatures.py: no signature text is read while a program runs), and
`parser.parse(args, kwargs)` returns the signature that matched and the arguments by name.

The parser only checks types, as torch's does; the values (a negative size, eye's `n`,
linspace's `steps`) are checked afterwards by each factory, with its kernel's message.
A call with plain arguments never comes here: each factory first tests its usual argument
types itself (a few `type(x) is int` tests), so the common path stays cheap.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from runtime import devices, dtypes
from runtime._tensor import Size, Tensor
from runtime.dispatch import PYTHON_ALIASES
from runtime.random import Generator

__all__ = ["Parser", "int_list", "shape", "scalar", "symint", "int64", "dtype_of", "device_of",
           "type_name", "quick_shape", "quick_options", "options_of", "fill_value"]

_MISSING: Any = object()  # an argument not given

# What torch's messages call each parameter type (FunctionParameter::type_name).
_TYPE_NAMES = {
    "int[]": "tuple of ints", "SymInt": "int", "int": "int", "Scalar": "Number",
    "float": "float", "Tensor": "Tensor", "ScalarType": "torch.dtype",
    "Layout": "torch.layout", "MemoryFormat": "torch.memory_format", "Device": "torch.device",
    "bool": "bool", "Generator": "torch.Generator", "object": "object",
}

# Python's own types that torch accepts as a dtype: the dtype each one means.
_PYTHON_DTYPES = {int: dtypes.int64, float: dtypes.float64, bool: dtypes.bool_}

# The names Python would print for gradgen's own classes, as torch's C types print theirs.
_GRADGEN_NAMES = {Tensor: "Tensor", Size: "torch.Size", dtypes.dtype: "torch.dtype",
                  devices.device: "torch.device", Generator: "torch._C.Generator"}


def type_name(value: Any) -> str:
    """The type of `value` as torch's messages name it (CPython's tp_name): `float`,
    `NoneType`, `numpy.float64`, `torch.Size`, `Tensor`."""
    kind = type(value)
    name = _GRADGEN_NAMES.get(kind)
    if name is not None:
        return name
    if isinstance(value, dtypes.dtype):  # bfloat16 is a dtype of a class of its own
        return "torch.dtype"
    if kind.__module__ == "numpy":
        return f"numpy.{kind.__name__}"
    return kind.__name__


# -- the type checks, one per parameter type ----------------------------------------------------

def _is_long(value: Any) -> bool:
    """A Python int that is not a bool, or a numpy integer (THPUtils_checkLong)."""
    kind = type(value)
    return kind is int or (isinstance(value, int | np.integer) and kind is not bool)


def _is_index(value: Any) -> bool:
    """Anything but a bool that converts to an index: an int, a numpy integer, a 0-dim
    integer array or tensor (THPUtils_checkIndex)."""
    if isinstance(value, bool | np.bool_):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _is_symint(value: Any) -> bool:
    """An int, a one-element integer (or bool) tensor, or anything with __index__."""
    if _is_long(value):
        return True
    if isinstance(value, Tensor):
        return value._data.size == 1 and value._data.dtype.kind in "iub"
    return _is_index(value)


def _is_number(value: Any) -> bool:
    """A Python number (bool, int, float, complex) or a numpy scalar number."""
    return isinstance(value, int | float | complex) or (
        isinstance(value, np.generic) and value.dtype.kind in "biufc")


def _is_int_list(value: Any) -> tuple[bool, int]:
    """(fits, index of the item that does not): a tuple or list whose first item is an int;
    torch checks only the first here, and each later one as it unpacks them."""
    if not isinstance(value, tuple | list):
        return False, -1
    if not value or _is_symint(value[0]):
        return True, -1
    return False, 0


def _check(kind: str, value: Any) -> bool:
    """Whether `value` fits a parameter of type `kind` (FunctionParameter::check)."""
    if kind == "SymInt":
        return _is_symint(value)
    if kind == "int":  # int64_t: an int, or a 0-dim integer tensor that needs no gradient
        if isinstance(value, Tensor):
            return (value._data.ndim == 0 and value._data.dtype.kind in "iu"
                    and not value.requires_grad)
        return _is_long(value)
    if kind in ("Scalar", "float"):
        if isinstance(value, Tensor):
            return value._data.ndim == 0 and not value.requires_grad
        return _is_number(value) if kind == "Scalar" else (
            _is_number(value) and not isinstance(value, complex | np.complexfloating))
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "ScalarType":
        return isinstance(value, dtypes.dtype) or value in (int, float, bool, complex)
    if kind == "Device":
        return _is_long(value) or isinstance(value, str | devices.device)
    if kind == "bool":
        return type(value) is bool
    if kind == "Generator":
        return isinstance(value, Generator)
    if kind == "object":  # torch.tensor's data: anything, looked at later
        return True
    return False  # Layout, MemoryFormat: gradgen has no such objects; only None is taken


def _keyword(kwargs: dict, name: str) -> Any:
    """A keyword argument by the parameter's name or, as torch's parser looks, by one of its
    numpy-style aliases (`zeros_like(x=t)`); _MISSING if none was given."""
    value = kwargs.get(name, _MISSING)
    if value is _MISSING and kwargs:
        for alias in PYTHON_ALIASES.get(name, ()):
            value = kwargs.get(alias, _MISSING)
            if value is not _MISSING:
                break
    return value


# -- signatures ------------------------------------------------------------------------------------

class Parameter(NamedTuple):
    """One parameter of a signature: `int[] size`, `Scalar step=1`, `ScalarType? dtype=None`
    (`?`: None is allowed; a default: it may be left out, and takes it). The generator
    parses torch's signature text (codegen/python_signatures.py) into these records, in
    generated/signatures.py."""

    name: str
    kind: str  # the type without its `?`
    allow_none: bool
    optional: bool
    default: Any
    keyword_only: bool

    def __str__(self) -> str:
        text = f"{_TYPE_NAMES[self.kind]} {self.name}"
        return f"{text} = {self.default!r}" if self.optional else text


class Signature:
    """One Python signature of a factory, as torch declares it:
    `eye(SymInt n, SymInt m, *, Tensor? out=None, ScalarType? dtype=None, ...)`."""

    def __init__(self, name: str, params: tuple[Parameter, ...]) -> None:
        self.name = name
        self.params = params
        self.by_name = {p.name: p for p in params}
        self.min_args = sum(not p.optional for p in params)
        self.max_args = len(params)
        self.max_pos_args = sum(not p.keyword_only for p in params)

    def __str__(self) -> str:
        parts, starred = [], False
        for p in self.params:
            if p.keyword_only and not starred:
                parts.append("*")
                starred = True
            parts.append(str(p))
        return f"({', '.join(parts)})"

    def parse(self, args: tuple, kwargs: dict, raise_error: bool) -> dict | None:
        """The arguments by name if they fit (defaults filled in), else None; with
        `raise_error`, the TypeError that says why instead (FunctionSignature::parse)."""
        nargs = len(args)
        # One positional int list takes varargs too: zeros(2, 3) is zeros((2, 3)).
        varargs = (self.max_pos_args == 1 and self.params[0].kind == "int[]"
                   and _is_int_list(args)[0])
        if nargs > self.max_pos_args and not varargs:
            return self._extra_args(nargs) if raise_error else None
        bound, arg_pos, used_kwargs = {}, 0, 0
        for param in self.params:
            if arg_pos < nargs:
                if param.keyword_only:  # more positional arguments than the varargs took
                    return self._extra_args(nargs) if raise_error else None
                value, is_kwd = args[arg_pos], False
            else:
                value, is_kwd = _keyword(kwargs, param.name), True
            if value is _MISSING and param.optional or value is None and param.allow_none:
                bound[param.name] = param.default
            elif value is _MISSING:
                return self._missing(param) if raise_error else None
            else:
                fits, failed = _is_int_list(value) if param.kind == "int[]" else \
                    (_check(param.kind, value), -1)
                if fits:
                    bound[param.name] = value
                elif varargs and arg_pos == 0 and not is_kwd:  # every positional argument
                    bound[param.name] = args
                    arg_pos = nargs
                    continue
                elif raise_error:
                    self._wrong_type(param, value, is_kwd, arg_pos, failed)
                else:
                    return None
            if not is_kwd:
                arg_pos += 1
            elif value is not _MISSING:
                used_kwargs += 1
        if used_kwargs < len(kwargs):
            return self._extra_kwargs(kwargs, nargs) if raise_error else None
        return bound

    def _extra_args(self, nargs: int) -> None:
        if self.min_args != self.max_pos_args:
            raise TypeError(f"{self.name}() takes from {self.min_args} to {self.max_pos_args} "
                            f"positional arguments but {nargs} were given")
        plural = "" if self.max_pos_args == 1 else "s"
        raise TypeError(f"{self.name}() takes {self.max_pos_args} positional argument{plural} "
                        f"but {nargs} {'was' if nargs == 1 else 'were'} given")

    def _missing(self, param: Parameter) -> None:
        names = [f'"{p.name}"' for p in self.params[self.params.index(param):]
                 if not p.optional]
        # (torch's message says "arguments" for one and "argument" for more: its own slip)
        raise TypeError(f"{self.name}() missing {len(names)} required positional argument"
                        f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")

    def _wrong_type(self, param: Parameter, value: Any, is_kwd: bool, arg_pos: int,
                    failed: int) -> None:
        expected = _TYPE_NAMES[param.kind]
        if is_kwd:
            raise TypeError(f"{self.name}(): argument '{param.name}' must be {expected}, "
                            f"not {type_name(value)}")
        where = f"{self.name}(): argument '{param.name}' (position {arg_pos + 1})"
        if failed >= 0:
            raise TypeError(f"{where} must be {expected}, but found element of type "
                            f"{type_name(value[failed])} at pos {failed}")
        raise TypeError(f"{where} must be {expected}, not {type_name(value)}")

    def _extra_kwargs(self, kwargs: dict, nargs: int) -> None:
        for key in kwargs:
            if key not in self.by_name:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if self.params.index(self.by_name[key]) < nargs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
        raise TypeError("invalid keyword arguments")


class Parser:
    """A factory's signatures, tried in order (PythonArgParser)."""

    def __init__(self, signatures: tuple[Signature, ...]) -> None:
        self.signatures = signatures
        self.name = signatures[0].name

    def parse(self, args: tuple, kwargs: dict) -> tuple[int, dict]:
        """(index of the signature the call fits, its arguments by name), or torch's
        TypeError. `kwargs` holds only the keywords the caller gave."""
        if len(self.signatures) == 1:
            return 0, self.signatures[0].parse(args, kwargs, True)
        for index, signature in enumerate(self.signatures):
            bound = signature.parse(args, kwargs, False)
            if bound is not None:
                return index, bound
        count = len(args) + len(kwargs)
        plausible = [s for s in self.signatures if s.min_args <= count <= s.max_args]
        if len(plausible) == 1:  # the one signature that could take this many arguments
            plausible[0].parse(args, kwargs, True)
        # The keywords come last, in reverse order, each followed by ", " when no
        # positional argument came first (torch's format_invalid_args does so).
        keywords = [f"{k}={type_name(v)}" for k, v in reversed(kwargs.items())]
        got = ", ".join([type_name(a) for a in args] + keywords) if args else \
            "".join(f"{k}, " for k in keywords)
        options = "".join(f" * {s}\n" for s in self.signatures)
        raise TypeError(f"{self.name}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n{options}")


# -- unpacking a bound argument ------------------------------------------------------------------

def _unpack_int(function: str, param: str, value: Any, position: int) -> int:
    """One item of an int list: an int (a bool counts, after the first), a numpy integer,
    an integer tensor of one element, or anything with __index__."""
    if type(value) is int:
        number = value
    elif isinstance(value, Tensor) and value._data.dtype.kind in "iu" and value._data.size == 1:
        number = int(value._data.item())
    elif isinstance(value, Tensor) and value._data.dtype.kind == "b":
        raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    elif isinstance(value, int) or (_is_index(value) and not isinstance(value, Tensor)):
        number = operator.index(value)
    else:
        raise TypeError(f"{function}(): argument '{param}' failed to unpack the object at pos "
                        f"{position} with error \"type must be tuple of ints,but got "
                        f"{type_name(value)}\"")
    if not -(2**63) <= number < 2**63:
        raise TypeError(f"{function}(): argument '{param}' failed to unpack the object at pos "
                        f"{position} with error \"Overflow when unpacking long long\"")
    return number


def symint(value: Any) -> int:
    """A bound SymInt (eye's n, randint's high) as a Python int."""
    if isinstance(value, Tensor):
        return int(value._data.item())
    return operator.index(value)


def int64(value: Any) -> int:
    """A bound int64_t (linspace's steps) as a Python int."""
    return int(value._data.item()) if isinstance(value, Tensor) else int(value)


def int_list(function: str, param: str, values: Any) -> tuple[int, ...]:
    """A bound int list as a tuple of Python ints."""
    return tuple(_unpack_int(function, param, v, i + 1) for i, v in enumerate(values))


def shape(function: str, values: Any, message: str = "negative", out: Any = None
          ) -> tuple[int, ...]:
    """A bound `size` as a shape, each length checked non-negative with the message of
    the factory's kernel: "negative" (empty's, which most factories share) or "zeros".
    With out=, most factories resize out first, whose element count overflows then
    (torch's message; "numel")."""
    sizes = int_list(function, "size", values)
    for length in sizes:
        if length < 0:
            if message == "numel" and out is not None:
                raise RuntimeError("numel: integer multiplication overflow")
            if message == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {length}: {list(sizes)}")
    return sizes


def quick_shape(size: tuple) -> tuple[int, ...] | None:
    """The shape of `zeros(2, 3)` or `zeros((2, 3))` when every length is a plain
    non-negative int (the common call, checked here without the parser), else None."""
    if len(size) == 1 and type(size[0]) in (tuple, list, Size):
        size = size[0]
    for length in size:
        if type(length) is not int or length < 0:
            return None
    return tuple(size)


def scalar(value: Any) -> Any:
    """A bound Scalar as a Python number: a 0-dim tensor gives its value, a numpy integer
    an int, another numpy scalar a float (torch reads those as double)."""
    if isinstance(value, Tensor):
        return value._data.item()
    if isinstance(value, np.generic):
        if isinstance(value, np.integer):
            return int(value)
        return complex(value) if isinstance(value, np.complexfloating) else float(value)
    return value


def dtype_of(value: Any) -> dtypes.dtype | None:
    """A bound dtype: a torch.dtype, or the one Python's int, float or bool stands for."""
    if value is None or isinstance(value, dtypes.dtype):
        return value
    if value is complex:
        raise TypeError("gradgen has no complex dtypes (torch.complex128)")
    return _PYTHON_DTYPES[value]


def device_of(value: Any) -> None:
    """A bound device: it must be the CPU (runtime/devices.py raises torch's error)."""
    if value is not None:
        devices.to_cpu(value)


_QUICK_OPTIONS = frozenset(("dtype", "requires_grad", "device"))


def quick_options(options: dict) -> tuple[dtypes.dtype | None, bool] | None:
    """(dtype, requires_grad) of the usual keywords when each has its usual type, checked
    here without the parser (the device checked too: it must be the CPU); else None."""
    if not options:
        return None, False
    if len(options) == 1 and type(options.get("dtype")) is dtypes.dtype:  # the usual one
        return options["dtype"], False
    if not options.keys() <= _QUICK_OPTIONS:
        return None
    dtype = options.get("dtype")
    requires_grad = options.get("requires_grad", False)
    device = options.get("device")
    if (dtype is not None and type(dtype) is not dtypes.dtype or type(requires_grad) is not bool
            or device is not None and type(device) not in (str, devices.device)):
        return None
    if device is not None:
        devices.to_cpu(device)
    return dtype, requires_grad


def options_of(bound: dict) -> tuple[dtypes.dtype | None, bool]:
    """(dtype, requires_grad) of a parsed call, its device checked to be the CPU."""
    device_of(bound.get("device"))
    return dtype_of(bound.get("dtype")), bool(bound.get("requires_grad"))


# The C++ type names torch's overflow message uses for each dtype.
_CHECKED_NAMES = {"uint8": "uint8_t", "int32": "int", "int64": "int64_t", "float16": "c10::Half",
                  "float32": "float", "float64": "double"}
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# The range of each dtype (looked up once: np.iinfo and np.finfo are slow to ask).
_RANGES = {np.dtype(kind): (int(np.iinfo(kind).min), int(np.iinfo(kind).max))
           for kind in (np.uint8, np.int32, np.int64)} | {
    np.dtype(kind): (-float(np.finfo(kind).max), float(np.finfo(kind).max))
    for kind in (np.float16, np.float32, np.float64)}


def fill_value(value: Any, numpy_dtype: np.dtype) -> Any:
    """A fill value (full's, full_like's, new_full's) converted to the dtype as torch's
    checked conversion does: a value the dtype cannot hold is an error, except that a
    negative integer wraps around into an unsigned dtype (-1 is 255 in uint8), and an
    infinity or NaN stays one in a floating dtype."""
    if type(value) is float and numpy_dtype.itemsize >= 4 and numpy_dtype.kind == "f" and \
            abs(value) <= _FLOAT32_MAX:  # the usual call: fits float32 and float64
        return value
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        raise OverflowError("int too big to convert")  # beyond any C integer Scalar
    if isinstance(value, bool) or numpy_dtype.kind == "b":
        return value
    lowest, highest = _RANGES[numpy_dtype]
    if numpy_dtype.kind in "iu":
        if isinstance(value, int):
            wraps = numpy_dtype.kind == "u" and value < 0
            overflow = -value > highest if wraps else not lowest <= value <= highest
            value = value % (highest + 1) if wraps and not overflow else value
        else:
            overflow = not float(lowest) <= value <= float(highest)  # NaN fails too
    else:
        overflow = math.isfinite(value) and abs(value) > highest
    if overflow:
        raise RuntimeError(f"value cannot be converted to type {_CHECKED_NAMES[numpy_dtype.name]}"
                           " without overflow")
    return value
