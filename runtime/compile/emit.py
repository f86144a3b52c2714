"""The generated step as it is being written: typed lines, the names they bind, and the
constants they read. A line is a tree of Python's own ast nodes until the printer (step.py)
unparses it; the passes (optimize.py) read and rewrite the trees and the lines' kinds. Every
name in the code is made here (`v3`, `g7`, `c2`, `T1`) or is a fixed name of the step's
namespace; a value with no exact literal is a namespace constant `cN`."""

from __future__ import annotations

import ast
import linecache
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class TraceBreak(Exception):
    """The step cannot be compiled: it runs eagerly, and `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Python's operators by their dunder names (`__add__`, `__radd__`), as ast nodes.
BINARY = {"add": ast.Add, "sub": ast.Sub, "mul": ast.Mult, "truediv": ast.Div,
          "floordiv": ast.FloorDiv, "pow": ast.Pow, "matmul": ast.MatMult, "mod": ast.Mod,
          "and": ast.BitAnd, "or": ast.BitOr, "xor": ast.BitXor}
COMPARE = {"lt": ast.Lt, "le": ast.LtE, "gt": ast.Gt, "ge": ast.GtE, "eq": ast.Eq,
           "ne": ast.NotEq}

# What a statement is: the passes read and rewrite lines by kind and fields, never text.
VALUE = "value"  # `targets = tree` over arrays and numbers
TENSOR = "tensor"  # the prologue's read of a tensor (`T4 = c0['x']`) or its array (`tensor`)
GRAD_READ = "grad read"  # `r0 = T0._grad._data`: the array of `tensor`'s .grad
GRAD_NONE = "grad none"  # `T0._grad = None`
ACCUMULATE = "accumulate"  # `accumulate(T0, g7)`: AccumulateGrad, `grad` into `tensor`
SET_GRAD = "set grad"  # `T0._grad = new(g7, None)`: an accumulate into an emptied .grad
GRAD_STATE = "grad state"  # a statement that may change a .grad (`O0.zero_grad(True)`)
STATE = "state"  # any other statement (an in-place write, a version counter's move)


def var(identifier: str) -> ast.Name:
    """A read of the variable `identifier`."""
    return ast.Name(identifier, ast.Load())


def attribute(value: ast.expr | str, *names: str) -> ast.expr:
    """`value.a.b`; a str `value` is a variable's name."""
    tree = var(value) if type(value) is str else value
    for attr in names:
        tree = ast.Attribute(tree, attr, ast.Load())
    return tree


def call(function: ast.expr, args: Any = (), keywords: dict | None = None) -> ast.Call:
    return ast.Call(function, list(args),
                    [ast.keyword(k, v) for k, v in (keywords or {}).items()])


def subscript(value: ast.expr | str, key: ast.expr) -> ast.Subscript:
    return ast.Subscript(var(value) if type(value) is str else value, key, ast.Load())


def number(value: int | float) -> ast.expr:
    """A finite number as a literal; a negative one as `-(n)`."""
    if value < 0 or value == 0 and math.copysign(1.0, value) < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def names_in(tree: ast.AST | None) -> list[str]:
    """The variables an expression reads, in the order they are written."""
    if tree is None:
        return []
    if type(tree) is ast.Name:
        return [tree.id]
    return [name for child in ast.iter_child_nodes(tree) for name in names_in(child)]


def reads_of(tree: ast.AST) -> tuple[str, ...]:
    """A line's reads: the variables of `tree`, each once."""
    return tuple(dict.fromkeys(names_in(tree)))


@dataclass
class Line:
    """One statement: `targets = tree`, the statement `tree`, or one built from its fields (a
    kind on a tensor's .grad), with the names it reads and where it came from."""

    targets: tuple[str, ...]  # what it binds (() for a statement that binds nothing)
    tree: ast.AST | None  # a value's expression; a statement (ast.stmt) if nothing is bound
    reads: tuple[str, ...]
    comment: str
    phase: str  # "prologue", "forward", "backward", "update", "epilogue"
    kind: str = VALUE
    tensor: str = ""  # the Tensor's variable, for the kinds on a tensor's state
    grad: str = ""  # the gradient's variable (ACCUMULATE, SET_GRAD)
    copy_grad: bool = False  # ACCUMULATE: hand over a copy of `grad` (optimize.py)
    tensor_tree: ast.expr | None = None  # the Tensor `tensor` names, as an expression
    # A quiet `numpy:` form: run with warnings off, and dropped if nothing reads it.
    quiet: bool = False
    # No numpy arithmetic: a warnings-off block may run on across it.
    neutral: bool = False

    @property
    def target(self) -> str:
        """The one variable the line binds ("" for none, or for several)."""
        return self.targets[0] if len(self.targets) == 1 else ""

    def statement(self) -> ast.stmt:
        """The line as a Python statement, for the printer."""
        tensor = self.tensor_tree if self.tensor_tree is not None else var(self.tensor)
        if self.kind == ACCUMULATE:
            grad = call(attribute(self.grad, "copy")) if self.copy_grad else var(self.grad)
            return ast.Expr(call(var("accumulate"), [tensor, grad]))
        if self.kind == SET_GRAD:
            return _assign(ast.Attribute(tensor, "_grad", ast.Store()),
                           call(var("new"), [var(self.grad), ast.Constant(None)]))
        if self.kind == GRAD_NONE:
            return _assign(ast.Attribute(tensor, "_grad", ast.Store()), ast.Constant(None))
        if self.targets:
            stores = [ast.Name(target, ast.Store()) for target in self.targets]
            return _assign(ast.Tuple(stores, ast.Store()) if len(stores) > 1 else stores[0],
                           self.tree)
        return self.tree


def _assign(target: ast.expr, value: ast.expr) -> ast.Assign:
    return ast.Assign([target], value, lineno=0)


@dataclass
class Source:
    """The lines, the names bound so far and the namespace they run in."""

    lines: list[Line] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    _constant_ids: dict[int, str] = field(default_factory=dict)
    # Each variable's traced value, and each traced array's variable (by id).
    traced: dict[str, Any] = field(default_factory=dict)
    traced_ids: dict[int, str] = field(default_factory=dict)

    def fresh(self, prefix: str) -> str:
        number = self.counters.get(prefix, 0)
        self.counters[prefix] = number + 1
        return f"{prefix}{number}"

    def constant(self, value: Any, prefix: str = "c") -> str:
        """A name in the namespace for `value` (the same object, the same name)."""
        key = self._constant_ids.get(id(value))
        if key is None or self.namespace.get(key) is not value:
            key = self.fresh(prefix)
            self._constant_ids[id(value)] = key
            self.namespace[key] = value
        return key

    def literal(self, value: Any) -> ast.expr | None:
        """`value` as an expression of an equal value and type; None if it has none."""
        kind = type(value)
        if value is None or kind is bool or kind is str or value is Ellipsis:
            return ast.Constant(value)
        if kind is int or kind is float and math.isfinite(value):
            return number(value)
        if kind is slice:  # (when each of its parts has a literal; a tuple: Tracer.render)
            parts = [self.literal(v) for v in (value.start, value.stop, value.step)]
            return None if None in parts else call(var("slice"), parts)
        return None

    def add(self, targets: str | tuple[str, ...], tree: ast.AST, reads: tuple[str, ...],
            comment: str, phase: str, kind: str | None = None, tensor: str = "") -> Line:
        """A line; by default a VALUE when it binds targets, else a STATE."""
        targets = (targets,) if type(targets) is str and targets else tuple(targets)
        line = Line(targets, tree, reads, comment, phase,
                    kind or (VALUE if targets else STATE), tensor)
        self.lines.append(line)
        return line


def same_bits(a: Any, b: Any, strides: bool = False) -> bool:
    """Whether two arrays have one dtype, shape (and strides) and the same bits."""
    return type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and \
        a.shape == b.shape and (not strides or a.strides == b.strides) and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def by_name(value: dict) -> bool:
    """Whether a dict's keys are all str (a batch, a model's outputs, by name)."""
    return all(type(key) is str for key in value)


def walk(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """`value` with `leaf` applied to each item that is not a tuple, a list or a dict of str
    keys (a model's outputs by name)."""
    kind = type(value)
    if kind is tuple or kind is list:
        return kind(walk(item, leaf) for item in value)
    if kind is dict and by_name(value):
        return {key: walk(item, leaf) for key, item in value.items()}
    return leaf(value)


def leaves(value: Any) -> list[Any]:
    """The items `walk` reaches in `value`."""
    found: list[Any] = []
    walk(value, found.append)
    return found


def define(code: str, filename: str, namespace: dict[str, Any]) -> None:
    """Run generated source into `namespace`, kept in linecache for tracebacks."""
    compiled = compile(code, filename, "exec", dont_inherit=True)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compiled, namespace)


def describe_array(array: np.ndarray) -> str:
    """`float32[16, 1000]`, for the comments."""
    return f"{array.dtype}[{', '.join(map(str, array.shape))}]"
