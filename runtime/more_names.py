"""Other functions of the torch namespace, as torch 2.13 answers them on the CPU.

- sym_int & co: outside tracing, torch's SymInt-aware helpers work on plain Python numbers;
  so do these, with torch's results and its AssertionErrors.
- memory_format and its four values; torch's error classes (OutOfMemoryError & co).
- asarray, frombuffer, from_file, from_dlpack / to_dlpack: tensors over memory that other
  objects own, shared as torch shares it (a numpy array, a bytearray, a DLPack capsule).
- gradient (numpy.gradient's second-order differences, made of Tensor ops: differentiable).
- dsmm / spmm, which torch runs on dense inputs as mm; hsmm and saddmm, which need a sparse
  input, refuse; the linear algebra torch removed in 1.9 (matrix_rank, solve, lstsq, symeig,
  eig) raises torch's RuntimeError, on torch.* and as Tensor methods.
- dropout_, vmap (torch.func.vmap), get_device_module.
"""

from __future__ import annotations

import builtins
import math
import mmap
import os
from typing import Any

import numpy as np

from generated import ops
from runtime import devices, dtypes, factories, func, linalg
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn import functional as _functional
from runtime.nn.pixelshuffle import native_channel_shuffle  # torch.native_channel_shuffle

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum",
           "sym_ite", "sym_fresh_size", "sym_constrain_range", "sym_constrain_range_for_size",
           "memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d", "AcceleratorError", "OutOfMemoryError", "FatalError",
           "asarray", "frombuffer", "from_file", "from_dlpack", "to_dlpack", "gradient",
           "dsmm", "spmm", "hsmm", "saddmm", "matrix_rank", "solve", "lstsq", "symeig", "eig",
           "dropout_", "vmap", "get_device_module", "chain_matmul", "native_channel_shuffle"]

# -- sym_*: torch's SymInt helpers on Python numbers ----------------------------------------
_ALL_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def sym_int(a: Any) -> int:
    return builtins.int(a)


def sym_float(a: Any) -> float:
    return builtins.float(a)


def _check_number(value: Any) -> None:
    if not isinstance(value, _ALL_TYPES):
        raise AssertionError(f"expected {_ALL_TYPES}, got {type(value)}")


def sym_max(a: Any, b: Any) -> Any:
    """max of two numbers, a float when either is one (max(1, 1.0) is 1.0 either way)."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """min of two numbers, a float when either is one."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a: Any) -> bool:
    return not a


def sym_sqrt(a: Any) -> float:
    return math.sqrt(a)


def sym_sum(*args: Any) -> Any:
    """The sum of the numbers, given as arguments or as one list."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        args = tuple(args[0])
    return builtins.sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """`t if b else f`, for a bool `b` and `t`, `f` of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_fresh_size(expr: Any) -> Any:
    return factories.tensor(expr).item()


def _check_bound(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, builtins.bool) or
                              not isinstance(value, builtins.int | np.integer)):
        raise TypeError(f"sym_constrain_range(): argument '{name}' must be int, not "
                        f"{type(value).__name__}")


def sym_constrain_range(size: Any, *, min: int | None = None,  # noqa: A002 - torch's names
                        max: int | None = None) -> None:
    """Outside tracing, a check that `size` lies in [min, max] (unbounded when None)."""
    _check_bound("min", min)
    _check_bound("max", max)
    low = _INT64_MIN if min is None else min
    high = _INT64_MAX if max is None else max
    value = size.item() if isinstance(size, Tensor) else size
    if not low <= value <= high:
        shown = builtins.int(value) if isinstance(value, builtins.bool) else value
        raise RuntimeError(f"Invalid value range for {shown} between [{low}, {high}].")


def sym_constrain_range_for_size(size: Any, *, min: int | None = None,  # noqa: A002
                                 max: int | None = None) -> None:
    """As sym_constrain_range, for a size: never below 0."""
    sym_constrain_range(size, min=0 if min is None else min, max=max)


# -- memory formats and error classes --------------------------------------------------------
# (defined in runtime/memory_formats.py, with the layouts they ask for)
from runtime.memory_formats import (  # noqa: E402
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)


class AcceleratorError(RuntimeError):
    """torch's error from an accelerator (never raised by gradgen: it has the CPU only)."""


class OutOfMemoryError(RuntimeError):
    """torch's error when a device runs out of memory."""


class FatalError(Exception):
    """torch's error for an unrecoverable failure."""


# -- tensors over other objects' memory --------------------------------------------------------
def _asarray_numpy(obj: np.ndarray, dtype: Any, copy: bool | None) -> Tensor:
    if dtype is not None and dtype.numpy != obj.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_type_name(obj.dtype)}' into "
                             f"dtype '{_type_name(dtype.numpy)}'.")
        return Tensor._make(obj.astype(dtype.numpy), None)
    if copy:
        return Tensor._make(obj.copy(), None)
    return factories.from_numpy(obj)


def _type_name(numpy_dtype: np.dtype) -> str:
    return dtypes.type_string(np.empty(0, numpy_dtype)).removeprefix("torch.") \
        .removesuffix("Tensor")


def _asarray_tensor(obj: Tensor, dtype: Any, copy: bool | None) -> Tensor:
    if dtype is not None and dtype.numpy != obj._data.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_type_name(obj._data.dtype)}' "
                             f"into dtype '{_type_name(dtype.numpy)}'.")
        return obj.to(dtype)
    return obj.clone() if copy else obj


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """`obj` as a tensor, sharing its memory when it can (a tensor, a numpy array, an object
    with the buffer protocol) unless `copy=True`; `copy=False` refuses to copy."""
    if device is not None:
        devices.to_cpu(device)
    if isinstance(obj, Tensor):
        result = _asarray_tensor(obj, dtype, copy)
    elif isinstance(obj, np.ndarray):
        result = _asarray_numpy(obj, dtype, copy)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):
        result = _asarray_tensor(from_dlpack(obj), dtype, copy)
    elif isinstance(obj, bytes | bytearray | memoryview):
        result = frombuffer(obj, dtype=dtype or dtypes.float32)
        result = result.clone() if copy else result
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if isinstance(obj, str):
            raise TypeError("new(): invalid data type 'str'")
        result = factories.tensor(obj, dtype=dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


_warned_read_only = [False]


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over an object's buffer (a bytearray, an array.array...): writes
    through either are seen through the other."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _warned_read_only[0]:
        _warned_read_only[0] = True
        warn_at_caller(_READ_ONLY, UserWarning)
    array = np.frombuffer(view.cast("B"), dtype.numpy, count, offset)
    if view.readonly:
        array = array.view()
        array.flags.writeable = False
    return Tensor._make(array, None, requires_grad)


_READ_ONLY = (
    "The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
    "means you can write to the underlying (supposedly non-writable) buffer using the tensor. "
    "You may want to copy the buffer to protect its data or make it writable before converting "
    "it to a tensor. This type of warning will be suppressed for the rest of this program.")


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """`size` elements read from a file; with shared=True the tensor maps the file, so
    writes to it reach the file."""
    if device is not None:
        devices.to_cpu(device)
    dtype = dtype or dtypes.get_default_dtype()
    nbytes = size * dtype.itemsize
    if size == 0:
        return Tensor._make(np.empty(0, dtype.numpy), None, requires_grad)
    # Mapped either way, as torch maps it: shared, writes reach the file (which grows to the
    # size asked for); private, they stay in the tensor's own copy of a page (and the file's
    # later changes show through until then).
    if shared:
        with open(filename, "ab"):  # made if missing
            pass
        with open(filename, "r+b") as handle:
            if os.path.getsize(filename) < nbytes:
                handle.truncate(nbytes)
            mapped = mmap.mmap(handle.fileno(), nbytes, access=mmap.ACCESS_WRITE)
    else:
        if not os.path.exists(filename):
            raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such "
                               "file or directory (2)")
        available = os.path.getsize(filename)
        if available < nbytes:
            raise RuntimeError(f"file <{filename}> size <{available}> is smaller than the "
                               f"required mapping size <{nbytes}>")
        with open(filename, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), nbytes, access=mmap.ACCESS_COPY)
    return Tensor._make(np.frombuffer(mapped, dtype.numpy, size), None, requires_grad)


class _Capsule:
    """A DLPack capsule as an object numpy's from_dlpack takes (it reads objects, not
    capsules): it hands over the capsule once, as the protocol says."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing the memory of an object that speaks DLPack (a numpy array, torch's
    tensor, ...) or of a DLPack capsule."""
    if isinstance(ext_tensor, Tensor):  # through the protocol, as torch: a new tensor
        ext_tensor = _Capsule(ext_tensor.__dlpack__())
    elif not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
    device = ext_tensor.__dlpack_device__()
    if device[0] != 1:
        raise BufferError(f"gradgen reads DLPack tensors on the CPU only, not on device type "
                          f"{device[0]}")
    array = np.from_dlpack(ext_tensor)
    if not array.flags.writeable:  # numpy reads a legacy capsule as read-only; torch writes
        array = np.asarray(_Writable(array))
    return Tensor._make(array, None)


class _Writable:
    """The memory of a read-only array presented as writable (its owner, the DLPack
    producer, lends it for reading and writing alike), keeping the array alive."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        face = dict(array.__array_interface__)
        face["data"] = (face["data"][0], False)
        self.__array_interface__ = face


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of the tensor's memory (for another library's from_dlpack)."""
    return tensor._data.__dlpack__()


# -- gradient: numpy.gradient over Tensor ops -------------------------------------------------
def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of `input` estimated along each dimension of `dim` (all by default) by
    central differences inside and one-sided ones of order `edge_order` at the ends."""
    dims = list(range(input.dim())) if dim is None else \
        [dim] if isinstance(dim, builtins.int) else list(dim)
    rank = input.dim()
    for d in dims:
        if rank and not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-rank}, {rank - 1}], but got {d})")
    dims = [d % rank if rank else d for d in dims]
    for index, d in enumerate(dims):
        if d in dims[:index]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    spacings = _spacings(spacing, len(dims), dim)
    _check_gradient(input, dims, edge_order)
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, spacings,
                                                                          strict=True))


def _spacings(spacing: Any, count: int, dim: Any) -> list[Any]:
    if spacing is None:  # unspecified: unit spacing, as torch's
        spacing = 1
    if isinstance(spacing, list | tuple):
        if dim is None and len(spacing) != count:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or "
                               f"a list of length equal to 'self.dim() = {count}', since dim "
                               f"argument was not given, but got a list of length "
                               f"{len(spacing)}")
        if len(spacing) != count:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {count}.")
        return list(spacing)
    return [spacing] * count


def _check_gradient(input: Tensor, dims: list[int], edge_order: int) -> None:  # noqa: A002
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")


def _gradient_along(x: Tensor, dim: int, h: Any, edge_order: int) -> Tensor:
    n = x.shape[dim]
    part = lambda a, b: x.narrow(dim, a, b - a)  # noqa: E731
    if isinstance(h, Tensor):
        return _uneven(x, dim, h, edge_order)
    if not x.is_floating_point():
        x = x.to(dtypes.get_default_dtype())
        part = lambda a, b: x.narrow(dim, a, b - a)  # noqa: E731
    inner = (part(2, n) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / h
        last = (part(n - 1, n) - part(n - 2, n - 1)) / h
    else:
        first = (-1.5 * part(0, 1) + 2 * part(1, 2) - 0.5 * part(2, 3)) / h
        last = (0.5 * part(n - 3, n - 2) - 2 * part(n - 2, n - 1) + 1.5 * part(n - 1, n)) / h
    return ops.cat([first, inner, last], dim)


def _uneven(x: Tensor, dim: int, coords: Tensor, edge_order: int) -> Tensor:
    """Second-order differences over coordinates that need not be evenly spaced."""
    n = x.shape[dim]
    shape = [1] * x.dim()
    shape[dim] = n - 2
    dx = coords[1:] - coords[:-1]
    a, b = dx[:-1].reshape(shape), dx[1:].reshape(shape)
    part = lambda i, j: x.narrow(dim, i, j - i)  # noqa: E731
    inner = (a * a * part(2, n) - b * b * part(0, n - 2) + (b * b - a * a) * part(1, n - 1)) \
        / (a * b * (a + b))
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / dx[0]
        last = (part(n - 1, n) - part(n - 2, n - 1)) / dx[-1]
    else:
        h1, h2 = dx[0], dx[1]
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * part(0, 1) + (h1 + h2) / (h1 * h2)
                 * part(1, 2) - h1 / (h2 * (h1 + h2)) * part(2, 3))
        h1, h2 = dx[-2], dx[-1]
        last = (h2 / (h1 * (h1 + h2)) * part(n - 3, n - 2) - (h1 + h2) / (h1 * h2)
                * part(n - 2, n - 1) + (2 * h2 + h1) / (h2 * (h1 + h2)) * part(n - 1, n))
    return ops.cat([first, inner, last], dim)


# -- products torch defines for sparse inputs --------------------------------------------------
def dsmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """A sparse-by-dense product; on dense inputs torch's, as here, is mm."""
    return input.mm(mat2)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    return input.mm(mat2)


def hsmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    raise NotImplementedError(
        "Could not run 'aten::hspmm' with arguments from the 'CPU' backend. This could be "
        "because the operator doesn't exist for this backend (gradgen has no sparse tensors, "
        "and aten::hspmm needs a sparse first argument).")


def saddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,  # noqa: A002
           alpha: Any = 1, out: Any = None) -> Tensor:
    raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")


# -- the linear algebra torch removed in 1.9 -----------------------------------------------
_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_MATRIX_RANK = (f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The "
                "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                "'hermitian'.")
_SOLVE = (f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
          "with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
          "be replaced with:\nX = torch.linalg.solve(A, B)")
_LSTSQ = (f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about "
          "the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
          "residuals are in the field 'residuals' of the returned named tuple.\n\nThe "
          "unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
          "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SYMEIG = (f"{_REMOVED} The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\n"
           "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
           "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
           "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
           "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_EIG = (f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")


def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *,  # noqa: A002
                out: Any = None) -> Tensor:
    raise RuntimeError(_MATRIX_RANK)


def solve(input: Tensor, A: Tensor, *, out: Any = None) -> Any:  # noqa: A002, N803
    raise RuntimeError(_SOLVE)


def lstsq(input: Tensor, A: Tensor, *, out: Any = None) -> Any:  # noqa: A002, N803
    raise RuntimeError(_LSTSQ)


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *,  # noqa: A002
           out: Any = None) -> Any:
    raise RuntimeError(_SYMEIG)


def eig(self: Tensor, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> Any:
    raise RuntimeError(_EIG)


# -- the rest ----------------------------------------------------------------------------------
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place dropout, drawing as torch.dropout does."""
    return _functional.dropout(input, p, train, inplace=True)


vmap = func.vmap


def get_device_module(device: Any = None) -> Any:
    """The module of a device type: torch.cpu for the CPU (and by default), torch.cuda."""
    import importlib

    if isinstance(device, devices.device):
        kind = device.type
    elif isinstance(device, str):
        kind = devices.device(device).type
    elif device is None:
        kind = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    if kind not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered "
                           f"as 'torch.{kind}'.")
    return importlib.import_module(f"runtime.{kind}")


_CHAIN_MATMUL_WARNING = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters.")
_warned_chain_matmul = [False]


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """The product of the matrices (deprecated: torch.linalg.multi_dot)."""
    if not _warned_chain_matmul[0]:  # torch warns once per process
        _warned_chain_matmul[0] = True
        warn_at_caller(_CHAIN_MATMUL_WARNING, UserWarning)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for matrix in matrices:
        if matrix.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrix.dim()}, expected 2 instead.")
    result = matrices[0].clone() if len(matrices) == 1 else linalg.multi_dot(list(matrices))
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\n"
    "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
    "probs = policy_network(state)\naction = probs.multinomial()\n"
    "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\n"
    "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


class NamesMethods:
    """Tensor methods of this module's functions (runtime/methods.py's install sets them)."""

    def solve(self: Tensor, A: Tensor) -> Any:  # noqa: N803 - torch's name
        raise RuntimeError(_SOLVE)

    def lstsq(self: Tensor, A: Tensor) -> Any:  # noqa: N803
        raise RuntimeError(_LSTSQ)

    def symeig(self: Tensor, eigenvectors: bool = False, upper: bool = True) -> Any:
        raise RuntimeError(_SYMEIG)

    def eig(self: Tensor, eigenvectors: bool = False) -> Any:
        raise RuntimeError(_EIG)

    def reinforce(self: Tensor, reward: Any) -> None:
        raise RuntimeError(_REINFORCE)

    def record_stream(self: Tensor, stream: Any) -> None:
        """Streams order work on an accelerator; gradgen has none, and no Stream objects, so
        every argument is refused as torch refuses a value that is not a Stream."""
        raise RuntimeError("unknown parameter type")

    def __dlpack__(self: Tensor, *, stream: Any = None, **kwargs: Any) -> Any:
        """The DLPack protocol: another library (numpy, torch) reads this tensor's memory."""
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self: Tensor) -> tuple[int, int]:
        return (1, 0)  # kDLCPU, device 0

    def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
        """What load_state_dict makes of `other` for this parameter or buffer when swapping
        (torch.__future__'s swap_module_params_on_conversion): a new tensor."""
        return other.detach() if assign else self.copy_(other).detach()
