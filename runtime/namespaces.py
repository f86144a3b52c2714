"""The op namespaces that formulas run against: one body of code, several kinds of values.

A node's backward formulas are written once (generated/functions.py) and call every op
through a namespace passed in as `ops`: `ops.mm(grad, ops.t(mat2))`, a helper as
`manual.pow_backward(ops, grad, self_, exponent)`. The namespace decides what the values are:

    tensor_ops   gradgen Tensors. A call is the op's forward wrapper, so under
                 `create_graph=True` the backward is recorded too (double backward).
    array_ops    numpy arrays. A call runs the op's kernel and records nothing: the
                 engine's first-order backward (create_graph off), its fast path.

(`python -m codegen export-torch` binds the same formulas to torch tensors.) Each gives
every op of the spec by its Python name, the Tensor methods the runtime writes by hand
(`size`, `sum_to_size`, `reshape`, ...; codegen.formula.CORE_TENSOR_METHODS), the
factories helpers use (`zeros`, `arange`, ...), and `unpack(saved, node)`: a saved tensor
as a value of the namespace's kind.

This module sits below the ops in the import order: the namespaces exist (the generated
nodes take `tensor_ops` as a default argument) before they are filled, at the end of
`import runtime`, by `install`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from runtime import arguments, dtypes, kernels
from runtime.arguments import Overload, int_list


class TensorOps:
    """Formulas on Tensors: an op is its forward wrapper, a hand-written method its Tensor
    method (called with the tensor first), a factory runtime.factories'. Found on first use."""

    on_arrays = False

    def __init__(self) -> None:
        self._sources: tuple[Any, ...] = ()

    def install(self, ops: ModuleType, tensor_class: type, factories: ModuleType) -> None:
        self._sources = (ops, tensor_class, factories)

    @staticmethod
    def unpack(saved: Any, node: Any) -> Any:
        """A saved tensor (an output comes back with `node` as its grad_fn)."""
        return saved.unpack(node)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            for source in self._sources:
                value = getattr(source, name, None)
                if callable(value):
                    setattr(self, name, value)  # found once; later lookups are plain
                    return value
        raise AttributeError(f"no op {name!r} for Tensors")


class ArrayOps:
    """Formulas on numpy arrays: an op runs its kernel (runtime/kernels.py) directly."""

    on_arrays = True

    def install(self, by_name: dict[str, Sequence[Overload]]) -> None:
        """One function per name Python binds, from generated/ops.py's BY_NAME."""
        for name, overloads in by_name.items():
            runnable = tuple(o._replace(wrapper=_on_arrays(o)) for o in overloads
                             if o.kernel is not None)
            if runnable:
                setattr(self, name, _resolver(name, runnable))

    @staticmethod
    def unpack(saved: Any, node: Any) -> Any:
        """A saved tensor's array, after the same checks as a Tensor unpack."""
        return saved.unpack_data()

    # What the engine's raw backward does to a gradient (engine.validate_outputs): a
    # numpy scalar made an array, a broadcast gradient summed back to its input's shape.
    asarray = staticmethod(np.asarray)
    sum_to = staticmethod(kernels.sum_to)

    # -- Tensor methods the runtime writes by hand ------------------------------------------
    @staticmethod
    def size(self: Any, dim: int | None = None) -> Any:
        return tuple(self.shape) if dim is None else self.shape[dim]

    @staticmethod
    def dim(self: Any) -> int:
        return self.ndim

    @staticmethod
    def numel(self: Any) -> int:
        return self.size

    @staticmethod
    def detach(self: Any) -> Any:
        return self

    @staticmethod
    def conj(self: Any) -> Any:
        """The conjugate of a complex array; a real one (or a real number) is its own."""
        if isinstance(self, np.ndarray):
            return np.conjugate(self) if self.dtype.kind == "c" else self
        return self.conjugate() if isinstance(self, complex) else self

    @staticmethod
    def is_contiguous(self: Any) -> bool:
        return self.flags.c_contiguous

    @staticmethod
    def contiguous(self: Any) -> Any:
        return self if self.flags.c_contiguous else self.copy()

    @staticmethod
    def sum_to_size(self: Any, *size: Any) -> Any:
        size = int_list(size)
        return self if self.shape == size else kernels.sum_to(self, size)

    @staticmethod
    def expand_as(self: Any, other: Any) -> Any:
        return np.broadcast_to(self, other.shape)

    @staticmethod
    def reshape(self: Any, *shape: Any) -> Any:
        return np.reshape(self, int_list(shape))

    @staticmethod
    def view_as(self: Any, other: Any) -> Any:
        return np.reshape(self, other.shape)

    @staticmethod
    def type_as(self: Any, other: Any) -> Any:
        return self.astype(other.dtype, copy=False)

    @staticmethod
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        target = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, dtypes.dtype | np.dtype):
                target = arg
            elif isinstance(arg, np.ndarray):
                target = arg.dtype
        target = numpy_dtype(target)
        return self if target is None or target == self.dtype else self.astype(target)

    @staticmethod
    def matmul(self: Any, other: Any) -> Any:
        return np.matmul(self, other)

    # -- factories ------------------------------------------------------------------------------
    @staticmethod
    def zeros(*size: Any, dtype: Any = None) -> np.ndarray:
        return np.zeros(int_list(size), numpy_dtype(dtype) or np.float32)

    @staticmethod
    def zeros_like(tensor: Any, *, dtype: Any = None) -> np.ndarray:
        return np.zeros_like(tensor, dtype=numpy_dtype(dtype))

    @staticmethod
    def ones_like(tensor: Any, *, dtype: Any = None) -> np.ndarray:
        return np.ones_like(tensor, dtype=numpy_dtype(dtype))

    @staticmethod
    def eye(n: int, m: Any = None, *, dtype: Any = None) -> np.ndarray:
        return np.eye(n, m, dtype=numpy_dtype(dtype) or np.float32)

    @staticmethod
    def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None) -> np.ndarray:
        """As torch.arange: integers give int64, a float anywhere gives float32."""
        if end is None:
            start, end = 0, start
        default = np.int64 if all(isinstance(v, int) for v in (start, end, step)) \
            else np.float32
        return np.arange(start, end, step, dtype=numpy_dtype(dtype) or default)

    @staticmethod
    def tensor(data: Any, dtype: Any = None) -> np.ndarray:
        return np.asarray(data, dtype=numpy_dtype(dtype))


def numpy_dtype(dtype: Any) -> np.dtype | None:
    """A dtype as numpy's: formulas pass gradgen's (a saved `x.dtype`) or numpy's (an
    array's own `.dtype`)."""
    if dtype is None or isinstance(dtype, np.dtype):
        return dtype
    return dtype.numpy if isinstance(dtype, dtypes.dtype) else np.dtype(dtype)


def _as_array(value: Any) -> Any:
    """A numpy scalar (what an operator on 0-d arrays gives) as the 0-d array it stands
    for; a Python number stays one (a wrapped number, as in PyTorch)."""
    return np.asarray(value) if isinstance(value, np.generic) else value


def _on_arrays(overload: Overload) -> Callable:
    """The overload's kernel, called as its wrapper is (same parameters), on arrays."""
    kernel = overload.kernel
    params = overload.params
    dtype_names = {p.name for p in params if p.type.startswith("ScalarType")}
    dtype_positions = [i for i, p in enumerate(params) if p.name in dtype_names]

    def run(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and not dtype_positions:  # the usual call: arrays and numbers
            for arg in args:
                if isinstance(arg, np.generic):
                    break
            else:
                result = kernel(*args)
                return result if type(result) is np.ndarray else _as_result(result)
        args = [_as_array(a) for a in args]
        for i in dtype_positions:
            if i < len(args):
                args[i] = numpy_dtype(args[i])
        if kwargs:
            kwargs = {("self" if k == "self_" else k):  # kernels name it as the schema does
                      numpy_dtype(v) if k in dtype_names else _as_array(v)
                      for k, v in kwargs.items()}
        return _as_result(kernel(*args, **kwargs))

    return run


def _as_result(value: Any) -> Any:
    if type(value) is np.ndarray:
        return value
    if isinstance(value, tuple):
        return tuple(map(_as_result, value))
    if isinstance(value, list):
        return [_as_result(v) for v in value]
    return np.asarray(value)


def _resolver(name: str, overloads: tuple[Overload, ...]) -> Callable:
    """One overload: its function. Several: the one the arguments match, as on Tensors."""
    if len(overloads) == 1:
        return overloads[0].wrapper

    def resolve(*args: Any, **kwargs: Any) -> Any:
        return arguments.call(name, overloads, args, kwargs, arguments.ARRAY_TYPES)

    return resolve


tensor_ops = TensorOps()
array_ops = ArrayOps()


def install(ops: ModuleType, tensor_class: type, factories: ModuleType) -> None:
    """Fill both namespaces, once the ops and the Tensor class exist."""
    tensor_ops.install(ops, tensor_class, factories)
    array_ops.install(ops.BY_NAME)
