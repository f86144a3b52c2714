"""The generated step as it is being written: lines of Python, the names they bind, and
the constants and tensors they read.

Every name in the generated source is made here (`v3`, `g7`, `c2`, `T1`) or is one of the
fixed names of the step's namespace (`np`, `kernels`, `ops`, `accumulate`, ...). A value
that has no exact literal (a numpy dtype, a numpy scalar, an infinity, an object the step
calls) goes into the namespace as a constant `cN`; only Python's own literals are written
out, with `repr`, which reads back exactly. Text from the spec reaches the source only in
comments, as generated/spec_data.py holds it: escaped for a comment by the generator.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class TraceBreak(Exception):
    """The step cannot be compiled: it runs eagerly, and `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# What a statement is: the passes (optimize.py) read and rewrite a line by its kind and
# fields, never by its text.
VALUE = "value"  # `target = expression` over arrays and numbers: its `tree` is the expression
TENSOR = "tensor"  # the prologue's read of a tensor (`T4 = c0['x']`) or its array (`tensor`)
GRAD_READ = "grad read"  # `r0 = T0._grad._data`: the array of `tensor`'s .grad
GRAD_NONE = "grad none"  # `T0._grad = None`
ACCUMULATE = "accumulate"  # `accumulate(T0, g7)`: AccumulateGrad, `grad` into `tensor`
SET_GRAD = "set grad"  # `T0._grad = new(g7, None)`: an accumulate into an emptied .grad
GRAD_STATE = "grad state"  # a statement that may change a .grad (`O0.zero_grad(True)`)
STATE = "state"  # any other statement (an in-place write, a version counter's move)


@dataclass
class Line:
    """One statement: `target = expression`, the names it reads, where it came from, and
    what it is (`kind` and its fields), which the passes rewrite and `statement` prints."""

    target: str  # what it binds ("" for a statement that binds nothing)
    expression: str
    reads: tuple[str, ...]
    comment: str
    phase: str  # "prologue", "forward", "backward", "update", "epilogue"
    kind: str = VALUE
    tensor: str = ""  # the Tensor's variable, for the kinds on a tensor's state
    grad: str = ""  # the gradient's variable (ACCUMULATE, SET_GRAD)
    copy_grad: bool = False  # ACCUMULATE: hand over a copy of `grad` (optimize.py)
    tree: ast.Expression | None = None  # VALUE: `expression`, parsed
    # Where a line comes from: the kernel or op it calls, and for a backward line the
    # node whose formula wrote it and that formula, as the spec writes it.
    op: str = ""
    node: str = ""
    formula: str = ""
    # A spec's `numpy:` form that its kernel computes with numpy's warnings off: written
    # where they are off (step.py), and, being pure and silent, dropped if nothing reads it.
    quiet: bool = False
    # No numpy arithmetic (a read, a version counter's move, Python floats): it cannot
    # raise numpy's warnings, so a block where they are off may run on across it.
    neutral: bool = False

    def __post_init__(self) -> None:
        if self.kind == VALUE and self.tree is None:
            self.tree = ast.parse(self.expression, mode="eval")

    def statement(self) -> str:
        """The line as Python source."""
        if self.kind == ACCUMULATE:
            grad = f"{self.grad}.copy()" if self.copy_grad else self.grad
            return f"accumulate({self.tensor}, {grad})"
        if self.kind == SET_GRAD:
            return f"{self.tensor}._grad = new({self.grad}, None)"
        return f"{self.target} = {self.expression}" if self.target else self.expression

    def rewrite(self, tree: ast.Expression) -> None:
        """A VALUE line's expression replaced by `tree`."""
        self.tree = tree
        self.expression = ast.unparse(tree)


@dataclass
class Source:
    """The lines, the names bound so far and the namespace they run in."""

    lines: list[Line] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    _constant_ids: dict[int, str] = field(default_factory=dict)
    # The traced value of each variable, and the variable of each traced array (by id),
    # for the optimisations that look at layouts (optimize.py).
    traced: dict[str, Any] = field(default_factory=dict)
    traced_ids: dict[int, str] = field(default_factory=dict)

    def fresh(self, prefix: str) -> str:
        number = self.counters.get(prefix, 0)
        self.counters[prefix] = number + 1
        return f"{prefix}{number}"

    def constant(self, value: Any, prefix: str = "c") -> str:
        """A name in the namespace for `value` (the same object, the same name)."""
        name = self._constant_ids.get(id(value))
        if name is None or self.namespace.get(name) is not value:
            name = self.fresh(prefix)
            self._constant_ids[id(value)] = name
            self.namespace[name] = value
        return name

    def literal(self, value: Any) -> str | None:
        """`value` as Python source that evaluates to an equal value of the same type, or
        None when it has no such literal."""
        kind = type(value)
        if value is None or kind is bool or kind is int or kind is str:
            return repr(value)
        if kind is float:
            return repr(value) if math.isfinite(value) else None
        if kind is tuple or kind is list or kind is slice:
            return self._sequence_literal(value)
        return "..." if value is Ellipsis else None

    def _sequence_literal(self, value: tuple | list | slice) -> str | None:
        """A tuple, list or slice as a literal, when each of its items has one."""
        kind = type(value)
        parts = (value.start, value.stop, value.step) if kind is slice else value
        items = [self.literal(v) for v in parts]
        if any(item is None for item in items):
            return None
        inner = ", ".join(items)
        if kind is slice:
            return f"slice({inner})"
        if kind is tuple:
            return f"({inner},)" if len(items) == 1 else f"({inner})"
        return f"[{inner}]"

    def add(self, target: str, expression: str, reads: tuple[str, ...], comment: str,
            phase: str, kind: str | None = None, tensor: str = "") -> Line:
        """A line; by default a VALUE when it binds a target (its expression parsed), else
        a STATE."""
        line = Line(target, expression, reads, comment, phase,
                    kind or (VALUE if target else STATE), tensor)
        self.lines.append(line)
        return line


def describe_array(array: np.ndarray) -> str:
    """`float32[16, 1000]`, for the comments."""
    return f"{array.dtype}[{', '.join(map(str, array.shape))}]"
