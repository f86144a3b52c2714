"""Values of the traced backward: an array that also knows its name in the generated step.

Each node's own `apply` runs with `SymbolicOps` in place of `array_ops`: every op and operator a
formula applies runs on the real arrays and writes one line. A helper's branches on sizes and
constants are taken at trace time (the guards keep them valid); a branch on the values
themselves stops the trace."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from generated import ops as generated_ops
from runtime import arguments, kernels
from runtime.compile import forms
from runtime.compile.emit import BINARY, COMPARE, TraceBreak, attribute, same_bits, subscript, var
from runtime.namespaces import array_ops, numpy_dtype

if TYPE_CHECKING:
    from runtime.compile.trace import Tracer

# Array attributes a formula may read: sizes, fixed by the guards.
_SIZE_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "itemsize", "strides"})


class Value:
    """A traced array: `array` is its value in the tracing step, `name` its variable."""

    __slots__ = ("name", "array", "tracer")
    # numpy defers to Value's reflected operators (np.float32(2) * v -> v.__rmul__).
    __array_ufunc__ = None

    def __init__(self, name: str, array: Any, tracer: Tracer) -> None:
        self.name, self.array, self.tracer = name, array, tracer

    def __repr__(self) -> str:
        return f"<traced {self.name}>"

    def __bool__(self) -> bool:
        raise TraceBreak("a formula branches on the values of a tensor")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TraceBreak("a formula calls numpy on a gradient directly, outside the op namespace")

    def __float__(self) -> float:
        raise TraceBreak("a formula reads a tensor's value as a Python number")

    __int__ = __index__ = __float__

    def __len__(self) -> int:
        return len(self.array)

    def __iter__(self):
        raise TraceBreak("a formula iterates over a tensor")

    def __getattr__(self, name: str) -> Any:
        if name in _SIZE_ATTRIBUTES:
            return getattr(self.array, name)
        if name == "T":
            return self.tracer.line(attribute(self.name, "T"), self.array.T)
        function = getattr(self.array, name)
        if not callable(function):
            raise TraceBreak(f"a formula reads the array attribute {name!r}")

        def method(*args: Any, **kwargs: Any) -> Any:  # (the call is traced)
            result = function(*unwrap(args), **unwrap(kwargs))
            return self.tracer.call(attribute(self.name, name), args, kwargs, result)

        return method

    def __getitem__(self, key: Any) -> Value:
        tree = subscript(self.name, self.tracer.render(key, in_subscript=True))
        return self.tracer.line(tree, self.array[unwrap(key)])


def _binary(symbol: type[ast.AST], function: Callable, reflected: bool = False) -> Callable:
    def method(self: Value, other: Any) -> Any:
        left, right = (other, self) if reflected else (self, other)
        result = function(unwrap(left), unwrap(right))
        kept = _times_ones(self.tracer, left, right, result) if symbol is ast.Mult else None
        if kept is not None:  # (a Value's truth is refused)
            return kept
        operands = self.tracer.render(left), self.tracer.render(right)
        tree = ast.Compare(operands[0], [symbol()], [operands[1]]) \
            if issubclass(symbol, ast.cmpop) else ast.BinOp(operands[0], symbol(), operands[1])
        return self.tracer.line(tree, result)

    return method


def _times_ones(tracer: Tracer, left: Any, right: Any, result: Any) -> Value | None:
    """`ones * x` (the expanded seed times a factor) is x, when it has x's shape and dtype."""
    for ones, other in ((left, right), (right, left)):
        if type(ones) is Value and ones.name in tracer.ones and type(other) is Value and \
                type(result) is np.ndarray and type(other.array) is np.ndarray and \
                result.shape == other.array.shape and result.dtype == other.array.dtype:
            return other
    return None


def _unary(symbol: type[ast.unaryop], function: Callable) -> Callable:
    def method(self: Value) -> Any:
        return self.tracer.line(ast.UnaryOp(symbol(), var(self.name)), function(self.array))

    return method


for _name, _symbol in (*BINARY.items(), *COMPARE.items()):
    setattr(Value, f"__{_name}__", _binary(_symbol, getattr(operator, f"__{_name}__")))
    if _name in BINARY:
        setattr(Value, f"__r{_name}__", _binary(_symbol, getattr(operator, f"__{_name}__"), True))
for _name, _symbol in (("neg", ast.USub), ("pos", ast.UAdd), ("invert", ast.Invert)):
    setattr(Value, f"__{_name}__", _unary(_symbol, getattr(operator, _name)))
Value.__abs__ = lambda self: self.tracer.call(var("abs"), (self,), {}, abs(self.array))
Value.__hash__ = object.__hash__


def unwrap(value: Any) -> Any:
    """The real arrays inside `value` (a Value, or a list, tuple or slice holding some)."""
    kind = type(value)
    if kind is Value:
        return value.array
    if kind is tuple or kind is list:
        return kind(unwrap(v) for v in value)
    if kind is slice:
        return slice(unwrap(value.start), unwrap(value.stop), unwrap(value.step))
    if kind is dict:
        return {k: unwrap(v) for k, v in value.items()}
    return value


class SymbolicOps:
    """`array_ops` for the traced backward: each op runs for real and is written down."""

    on_arrays = True

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def unpack(self, saved: Any, node: Any) -> Any:
        """A saved tensor: the forward variable that holds its array."""
        data = saved.unpack_data()
        if data is None or type(data) in (int, float, bool):
            # Not saved (no formula that runs reads it), or a number standing for a Tensor
            # (`x * 2`): a constant of the trace.
            return data
        if isinstance(data, list):
            return [self._tracer.value_of(item, "a saved tensor") for item in data]
        return self._tracer.value_of(data, "a saved tensor")

    def asarray(self, value: Any) -> Any:
        """A numpy scalar made an array (a Value that holds an array is one already)."""
        if type(value) is Value and type(value.array) is np.ndarray:
            return value
        return self._tracer.call(attribute("np", "asarray"), (value,), {},
                                 np.asarray(unwrap(value)))

    def sum_to(self, grad: Value, shape: tuple[int, ...]) -> Value:
        """kernels.sum_to, written down; a bias's gradient as `c @ g`, a ones vector made once,
        where that gives the kernel's bits."""
        tracer, array = self._tracer, grad.array
        node = tracer.comment  # (the node whose gradients the engine checks: _evaluate)
        tracer.comment = f"engine: {node}'s gradient summed back to {list(shape)}"
        result = kernels.sum_to(array, shape)
        try:
            if type(array) is np.ndarray and array.ndim == 2 and array.shape[1:] == shape:
                ones = np.ones(array.shape[0], array.dtype)
                ones.setflags(write=False)
                with forms.quiet():
                    product = ones @ array
                if same_bits(product, result):
                    tree = ast.BinOp(var(tracer.source.constant(ones)), ast.MatMult(),
                                     var(grad.name))
                    return tracer.line(tree, result)
            return tracer.call(attribute("kernels", "sum_to"), (grad, shape), {}, result)
        finally:
            tracer.comment = node

    def __getattr__(self, name: str) -> Any:
        function = getattr(array_ops, name)
        if not callable(function):
            return function
        tracer = self._tracer

        def traced(*args: Any, **kwargs: Any) -> Any:
            result = function(*unwrap(args), **unwrap(kwargs))
            if name == "t" and len(args) == 1 and type(args[0]) is Value:
                original = tracer.transposed.get(args[0].name)
                if original is not None:  # t(t(x)) is x, laid out as x is
                    return original
            callee, args = kernel_for(name, args, kwargs, result) or \
                (attribute("ops", name), args)
            value = tracer.call(callee, args, kwargs, result)
            if name == "expand" and type(value) is Value and type(args[0]) is Value \
                    and args[0].name in tracer.ones:
                tracer.ones.add(value.name)
            if name == "t" and type(value) is Value and type(args[0]) is Value:
                tracer.transposed[value.name] = args[0]
            return value

        return traced


def kernel_for(name: str, args: tuple, kwargs: dict, result: Any
               ) -> tuple[ast.expr, tuple] | None:
    """`kernels.KERNEL` and its arguments where calling the kernel `array_ops.NAME` runs is the
    same call: overload resolution done once, at trace time."""
    if kwargs or type(result) is not np.ndarray or result.ndim == 0:
        # (A 0-d result: the kernel's may be a numpy scalar, which array_ops makes an array.)
        return None
    values = unwrap(args)
    if any(isinstance(v, np.generic) for v in values):
        return None
    for strict in (True, False):
        for overload in generated_ops.BY_NAME.get(name, ()):
            if overload.kernel is None or \
                    arguments._bind(overload.params, values, {}, strict, arguments.ARRAY_TYPES) \
                    is None:
                continue
            kernel = getattr(kernels, overload.kernel.__name__, None)
            if kernel is not overload.kernel:
                return None
            args = tuple(numpy_dtype(arg) if param.type.startswith("ScalarType") else arg
                         for param, arg in zip(overload.params, args, strict=False))
            return attribute("kernels", overload.kernel.__name__), args
    return None
