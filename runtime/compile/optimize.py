"""Rewrites of the traced lines that keep their meaning, by their kinds and trees, before the
printer: unread backward lines (and unread quiet forward forms) dropped; a gradient handed to
AccumulateGrad without a copy where nothing else holds its memory; an accumulate into a
`.grad` the step emptied written as a plain set, and read back from its variable; Python
numbers beside arrays as named 0-d arrays of numpy's dtype (faster, the same bits, checked on
the traced values). See docs/compile.md."""

from __future__ import annotations

import ast
import copy
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime.compile import forms
from runtime.compile.emit import (
    ACCUMULATE,
    GRAD_NONE,
    GRAD_READ,
    GRAD_STATE,
    SET_GRAD,
    TENSOR,
    VALUE,
    Line,
    Source,
    names_in,
    same_bits,
    var,
)


def optimize(source: Source, returned: Sequence[str]) -> None:
    """Rewrite `source.lines` in place; `returned`: the variables the step returns."""
    readers: dict[str, int] = {}  # variable -> how many lines (and returns) read it
    for name in (*returned, *(name for line in source.lines for name in line.reads)):
        readers[name] = readers.get(name, 0) + 1
    _drop_unread(source, readers)
    made_by = {target: line for line in source.lines for target in line.targets}
    for line in source.lines:
        if line.kind == ACCUMULATE and not _handed_over(line.grad, readers, made_by, source):
            line.copy_grad = True
    _known_grads(source)
    _numbers_as_arrays(source)


def _drop_unread(source: Source, readers: dict[str, int]) -> None:
    """Drop the backward's lines and quiet forms that bind values nothing reads."""
    kept: list[Line] = []
    for line in reversed(source.lines):
        if (line.phase == "backward" or line.quiet) and line.targets and \
                not any(readers.get(t) for t in line.targets):
            for name in line.reads:
                readers[name] -= 1
            continue
        kept.append(line)
    source.lines[:] = reversed(kept)


def _handed_over(name: str | None, readers: dict[str, int], made_by: dict, source: Source
                 ) -> bool:
    """Whether the array of `name` may become a `.grad` without a copy: the backward made it,
    nothing else reads it, and its memory is its own or that of one such array."""
    line, array = made_by.get(name), source.traced.get(name)
    if line is None or line.phase != "backward" or readers.get(name, 0) != 1 or \
            array is None or not array.flags.writeable:
        return False
    base = array.base
    return base is None or base.base is None and \
        _handed_over(source.traced_ids.get(id(base)), readers, made_by, source)


def _known_grads(source: Source) -> None:
    """What the lines show of the `.grad` slots: `accumulate(T, g)` as `T._grad = new(g,
    None)` where `T._grad` is known to be None (zero_grad emptied it, and no line since
    named a .grad), and `r0 = T0._grad._data` then as `r0 = g7` while every line since
    is a value or a tensor read."""
    emptied: set[str] = set()
    known: dict[str, str] = {}  # tensor -> the variable its .grad's array is
    for line in source.lines:
        if line.kind == GRAD_NONE:
            emptied.add(line.tensor)
        elif line.kind == ACCUMULATE:
            if line.tensor in emptied:
                line.kind = SET_GRAD
            emptied.discard(line.tensor)
        elif line.kind in (GRAD_READ, SET_GRAD, GRAD_STATE):  # no longer known
            emptied.clear()
        if line.kind == SET_GRAD:
            known[line.tensor] = line.grad
        elif line.kind == GRAD_READ and line.tensor in known:
            line.kind, line.tree = VALUE, var(known[line.tensor])
            line.reads = (known[line.tensor],)
        elif line.kind not in (VALUE, TENSOR):
            known.clear()


# Smaller arrays are left to the end of the step (a `del` after almost every line).
FREE_BYTES = 1 << 16


def last_uses(lines: list[Line], returned: Sequence[str], source: Source
              ) -> dict[int, list[str]]:
    """Line index -> the large arrays (`vN`, `gN`, FREE_BYTES or more) no later line reads, to
    delete there."""
    last: dict[str, int] = {}
    for index, line in enumerate(lines):
        for name in (*line.targets, *line.reads):
            array = source.traced.get(name)
            if name[:1] in ("v", "g") and isinstance(array, np.ndarray) and \
                    array.base is None and array.nbytes >= FREE_BYTES:
                last[name] = index
    frees: dict[int, list[str]] = {}
    for name in sorted(set(last) - set(returned), key=lambda n: (n[0], int(n[1:]))):
        frees.setdefault(last[name], []).append(name)
    return frees


# The operators whose number operand may become an array (not **: numpy squares `x ** 2` apart).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.BitAnd,
               ast.BitOr, ast.BitXor)
def _numbers_as_arrays(source: Source) -> None:
    """Each forward or backward value's Python numbers beside arrays as named 0-d arrays,
    where the traced values show the same result. The line is evaluated on read-only views
    of the traced arrays, with nothing else in scope but numpy: a line that would write
    into one, or call anything else (a kernel), raises there and stays as it is."""
    arrays = {name: value for name, value in source.namespace.items()
              if type(value) is np.ndarray}
    for line in source.lines:
        if line.kind != VALUE or line.phase not in ("forward", "backward"):
            continue
        scope = _scope(line.tree, source.traced, arrays)
        made: dict[str, np.ndarray] = {}
        rewritten = copy.deepcopy(line.tree)
        for node in ast.walk(rewritten):
            operands = _operands(node)
            if operands is not None:
                _set_operands(node, _paired(*operands, scope, made))
        if made and same_bits(_evaluated(line.tree, scope), _evaluated(rewritten, scope),
                              strides=True):
            line.tree = rewritten
            source.namespace.update(made)
            arrays.update(made)


def _scope(tree: ast.expr, traced: dict[str, Any], arrays: dict[str, np.ndarray]
           ) -> dict[str, Any]:
    """What a line is evaluated with: numpy, and read-only views of the arrays it may read."""
    named = {**arrays, **{name: traced[name] for name in names_in(tree) if name in traced}}
    scope: dict[str, Any] = {"np": np}
    for name, value in named.items():
        if type(value) is np.ndarray and value.flags.writeable:
            value = value.view()
            value.flags.writeable = False
        scope[name] = value
    return scope


def _on_numpy(node: ast.AST) -> bool:
    """Whether `node` is `np.NAME`."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
        node.value.id == "np"


def _operands(node: ast.AST) -> list[ast.expr] | None:
    """The two operands of an arithmetic operation, a comparison or a binary ufunc's call."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return [node.left, node.right]
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return [node.left, node.comparators[0]]
    if isinstance(node, ast.Call) and _on_numpy(node.func) and len(node.args) == 2 and \
            not node.keywords and getattr(getattr(np, node.func.attr, None), "nin", 0) == 2:
        return node.args
    return None


def _set_operands(node: ast.AST, operands: tuple[ast.expr, ast.expr]) -> None:
    if isinstance(node, ast.BinOp):
        node.left, node.right = operands
    elif isinstance(node, ast.Compare):
        node.left, node.comparators[0] = operands
    else:
        node.args[:] = operands


def _paired(left: ast.expr, right: ast.expr, scope: dict[str, Any], made: dict[str, Any]
            ) -> tuple[ast.expr, ast.expr]:
    """The operands, a number beside an array (not beside another number) replaced by the name
    of the 0-d array numpy converts it to (made into `made` and `scope`)."""
    pair = [left, right]
    numbers = [_number(left), _number(right)]
    if (numbers[0] is None) == (numbers[1] is None):
        return left, right
    index = 0 if numbers[0] is not None else 1
    beside = _evaluated(pair[1 - index], scope)
    array = None if beside is None else number_as_array(numbers[index], beside.dtype)
    if array is not None:
        made[array[0]] = scope[array[0]] = array[1]
        pair[index] = var(array[0])
    return pair[0], pair[1]


def _evaluated(tree: ast.expr, scope: dict[str, Any]) -> np.ndarray | None:
    """The line's value on the traced arrays (None: not an array, or it raised)."""
    expression = ast.fix_missing_locations(ast.Expression(copy.deepcopy(tree)))
    value = forms.evaluated(expression, {"__builtins__": {}}, dict(scope))
    return value if type(value) is np.ndarray else None


def number_as_array(number: int | float, beside: np.dtype) -> tuple[str, np.ndarray] | None:
    """`number` as the read-only 0-d array numpy converts it to beside `beside`, and its name
    (`f32_0_5`); None where it cannot be made exactly."""
    try:
        dtype = np.result_type(beside, number)
        if dtype.kind not in "biufV":
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            value = np.array(number, dtype)
    except (Warning, OverflowError, TypeError, ValueError):
        return None
    if value.item() != number and dtype.kind not in "fV" or \
            dtype.kind in "fV" and not np.isfinite(value):
        return None
    value.flags.writeable = False
    return f"{dtype.kind}{dtype.itemsize * 8}_{_spelled(number)}", value


def _number(node: ast.expr) -> int | float | None:
    """A Python int or float literal (`2`, `-1`, `0.5`), not a bool; else None."""
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    inner = node.operand if negative else node
    if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
        return -inner.value if negative else inner.value
    return None


def _spelled(number: int | float) -> str:
    """A number as part of a name: 2 -> 2, -1 -> m1, 0.5 -> 0_5, 1e-05 -> 1em05."""
    return repr(number).replace("-", "m").replace(".", "_").replace("+", "")
