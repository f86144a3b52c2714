"""Rewrites of the traced lines that keep their meaning, by their kinds and trees, before the
printer: unread backward lines (and unread quiet forward forms) dropped; a copy read once
folded into its reader; a gradient handed to AccumulateGrad without a copy where nothing else
holds its memory; an accumulate into a `.grad` the step emptied written as a plain set, read
back from its variable, and moved to the end of the update; Python numbers beside arrays as
named 0-d arrays of numpy's dtype (faster, the same bits, checked on the traced values). See
docs/compile.md."""

from __future__ import annotations

import ast
import copy
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime.compile.emit import (
    ACCUMULATE,
    GRAD_NONE,
    GRAD_READ,
    SET_GRAD,
    TENSOR,
    VALUE,
    Line,
    Source,
    same_bits,
    var,
)

# The kinds that read or write a .grad: what is known of the .grad slots ends there.
_ON_GRADS = frozenset({GRAD_READ, GRAD_NONE, ACCUMULATE, SET_GRAD, "grad state"})


def optimize(source: Source, returned: Sequence[str]) -> None:
    """Rewrite `source.lines` in place; `returned`: the variables the step returns."""
    _drop_unread(source, returned)
    _fold_copies(source, returned)
    readers = _readers(source.lines, returned)
    made_by = {}
    for line in source.lines:
        for target in line.targets:
            made_by[target] = line
    for line in source.lines:
        if line.kind == ACCUMULATE and not _handed_over(line.grad, readers, made_by, source):
            line.copy_grad = True
    _set_emptied_grads(source)
    _read_set_grads(source)
    _set_grads_last(source)
    _numbers_as_arrays(source)


def _fold_copies(source: Source, returned: Sequence[str]) -> None:
    """`g2 = v5.copy()` then `g3 = 2 * g2`, g2 read nowhere else: `g3 = 2 * v5` (the next line
    makes a new array of it before any write)."""
    readers = _readers(source.lines, returned)
    lines = source.lines
    kept: list[Line] = []
    index = 0
    while index < len(lines):
        line, after = lines[index], lines[index + 1] if index + 1 < len(lines) else None
        copied = _foldable_copy(source, line, after, readers)
        if copied is not None:
            after.tree = _Rename(line.target, copied).visit(copy.deepcopy(after.tree))
            after.reads = tuple(copied if r == line.target else r for r in after.reads)
            index += 1
            continue
        kept.append(line)
        index += 1
    lines[:] = kept


def _copied(line: Line) -> str | None:
    """The variable a VALUE line copies (`v5.copy()`), or None."""
    body = line.tree if line.kind == VALUE else None
    if type(body) is ast.Call and not body.args and not body.keywords and \
            type(body.func) is ast.Attribute and body.func.attr == "copy" and \
            type(body.func.value) is ast.Name:
        return body.func.value.id
    return None


class _Rename(ast.NodeTransformer):
    """Each read of one variable as a read of another."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:  # noqa: N802 - ast's visitor names
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


def _foldable_copy(source: Source, line: Line, after: Line | None,
                   readers: dict[str, int]) -> str | None:
    """The variable `line` copies, when `after` alone reads the copy."""
    copied = _copied(line)
    if copied and after is not None and line.target and readers.get(line.target) == 1 \
            and line.target in after.reads and after.kind == VALUE \
            and after.phase == line.phase and not line.quiet \
            and _fresh(source, after.target, line.target):
        return copied
    return None


def _fresh(source: Source, result: str, operand: str) -> bool:
    """Whether the traced array of `result` shares no memory with that of `operand`."""
    made, read = source.traced.get(result), source.traced.get(operand)
    return isinstance(made, np.ndarray) and isinstance(read, np.ndarray) and \
        not np.may_share_memory(made, read)


def _set_emptied_grads(source: Source) -> None:
    """`accumulate(T, g)` as `T._grad = new(g, None)` where `T._grad` is known to be None."""
    emptied: set[str] = set()
    for line in source.lines:
        if line.kind == GRAD_NONE:
            emptied.add(line.tensor)
        elif line.kind == ACCUMULATE:
            if line.tensor in emptied:
                line.kind = SET_GRAD
            emptied.discard(line.tensor)
        elif line.kind in _ON_GRADS:  # another zero_grad, a read: no longer known
            emptied.clear()


def _read_set_grads(source: Source) -> None:
    """`d0 = T0._grad._data` as `d0 = g7` where the step set `T0._grad = new(g7, None)` and
    every line since is a value or a tensor read."""
    known: dict[str, str] = {}  # tensor -> the variable its .grad's array is
    for line in source.lines:
        if line.kind == SET_GRAD:
            known[line.tensor] = line.grad
        elif line.kind == GRAD_READ and line.tensor in known:
            line.kind = VALUE
            line.tree = var(known[line.tensor])
            line.reads = (known[line.tensor],)
        elif line.kind not in (VALUE, TENSOR):
            known.clear()


def _set_grads_last(source: Source) -> None:
    """Each `T._grad = new(g, None)` after which no line names a `.grad` moved before the
    epilogue (phase "gradients")."""
    lines = source.lines
    moved: list[Line] = []
    clear = True  # no line after this one names a .grad (the moved ones aside)
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if line.kind == SET_GRAD and clear:
            moved.append(lines.pop(index))
        elif line.kind in _ON_GRADS:
            clear = False
    if not moved:
        return
    for line in moved:
        line.phase = "gradients"
    end = next((i for i, line in enumerate(lines) if line.phase == "epilogue"), len(lines))
    lines[end:end] = reversed(moved)


def _readers(lines: list[Line], returned: Sequence[str]) -> dict[str, int]:
    count: dict[str, int] = {}
    for line in lines:
        for name in line.reads:
            count[name] = count.get(name, 0) + 1
    for name in returned:
        count[name] = count.get(name, 0) + 1
    return count


def _handed_over(name: str, readers: dict[str, int], made_by: dict, source: Source) -> bool:
    """Whether the array of `name` may become a `.grad` without a copy."""
    line = made_by.get(name)
    if line is None or line.phase != "backward" or readers.get(name, 0) != 1:
        return False
    array = source.traced.get(name)
    if array is None or not array.flags.writeable:
        return False
    base = array.base
    if base is None:
        return True
    if base.base is not None:
        return False
    owner = source.traced_ids.get(id(base))
    return (owner is not None and made_by.get(owner) is not None
            and made_by[owner].phase == "backward" and readers.get(owner, 0) == 1)


def _drop_unread(source: Source, returned: Sequence[str]) -> None:
    """Drop the backward's lines and quiet forms that bind values nothing reads."""
    readers = _readers(source.lines, returned)
    kept: list[Line] = []
    for line in reversed(source.lines):
        targets = line.targets
        if (line.phase == "backward" or line.quiet) and targets and \
                not any(readers.get(t) for t in targets):
            for name in line.reads:
                readers[name] -= 1
            continue
        kept.append(line)
    source.lines[:] = reversed(kept)


# Smaller arrays are left to the end of the step (a `del` after almost every line).
FREE_BYTES = 1 << 16


def last_uses(lines: list[Line], returned: Sequence[str], source: Source
              ) -> dict[int, list[str]]:
    """Line index -> the large arrays (`vN`, `gN`, FREE_BYTES or more) no later line reads, to
    delete there."""
    kept = set(returned)
    last: dict[str, int] = {}
    for index, line in enumerate(lines):
        for name in (*line.targets, *line.reads):
            array = source.traced.get(name)
            if name[:1] in ("v", "g") and isinstance(array, np.ndarray) and \
                    array.base is None and array.nbytes >= FREE_BYTES:
                last[name] = index
    frees: dict[int, list[str]] = {}
    for name, index in last.items():
        if name not in kept:
            frees.setdefault(index, []).append(name)
    return {index: sorted(names, key=lambda n: (n[0], int(n[1:])))
            for index, names in frees.items()}



# The operators whose number operand may become an array (not **: numpy squares `x ** 2` apart).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.BitAnd,
               ast.BitOr, ast.BitXor)
# What a line may hold to be evaluated on the traced values (it writes no array).
_PURE_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Attribute,
               ast.Name, ast.Constant, ast.Load, ast.Tuple, ast.Subscript, ast.Slice,
               ast.keyword, ast.operator, ast.unaryop, ast.cmpop)
_PURE_METHODS = frozenset({"T", "mT", "view", "reshape", "transpose", "astype", "sum", "copy",
                           "ravel", "dtype", "__iadd__"})


def _numbers_as_arrays(source: Source) -> None:
    """Each forward or backward line's Python numbers beside arrays as named 0-d arrays, where
    the traced values show the same result."""
    arrays = {name: value for name, value in source.namespace.items()
              if type(value) is np.ndarray}
    for line in source.lines:
        tree = _pure_tree(line, source, arrays)
        if tree is None:
            continue
        scope: dict[str, Any] = {"np": np, **arrays, **{
            node.id: source.traced[node.id] for node in ast.walk(tree)
            if isinstance(node, ast.Name) and node.id in source.traced}}
        numbers = _Numbers(scope)
        rewritten = numbers.visit(copy.deepcopy(tree))
        if not numbers.made:
            continue
        scope.update(numbers.made)
        if not same_bits(_evaluated(tree, scope), _evaluated(rewritten, scope), strides=True):
            continue
        line.tree = rewritten
        for name, value in numbers.made.items():
            source.namespace[name] = arrays[name] = value


def _pure_tree(line: Line, source: Source, arrays: dict[str, np.ndarray]
               ) -> ast.expr | None:
    """The line's expression when it may be evaluated on the traced values; else None."""
    if line.kind != VALUE or line.phase not in ("forward", "backward"):
        return None
    return line.tree if _pure(line.tree, source, arrays) else None


def _pure(tree: ast.expr, source: Source, arrays: dict[str, np.ndarray]) -> bool:
    return all(_pure_node(node, source, arrays) for node in ast.walk(tree))


def _pure_node(node: ast.AST, source: Source, arrays: dict[str, np.ndarray]) -> bool:
    if not isinstance(node, _PURE_NODES):
        return False
    if isinstance(node, ast.Name):
        return node.id == "np" or node.id in source.traced or node.id in arrays
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute)
    if isinstance(node, ast.keyword):
        return node.arg != "out"
    if isinstance(node, ast.Attribute):
        on_numpy = isinstance(node.value, ast.Name) and node.value.id == "np"
        if on_numpy:
            return isinstance(getattr(np, node.attr, None), np.ufunc)
        return node.attr in _PURE_METHODS and not (node.attr == "__iadd__" and
                                                   isinstance(node.value, ast.Name))
    return True


def _evaluated(tree: ast.expr, scope: dict[str, Any]) -> np.ndarray | None:
    """The line's value on the traced arrays (None: not an array, or it raised)."""
    expression = ast.fix_missing_locations(ast.Expression(copy.deepcopy(tree)))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = eval(compile(expression, "<line>", "eval"),  # noqa: S307
                         {"__builtins__": {}}, dict(scope))
    except Exception:  # noqa: BLE001 - a line that cannot run here is left as it is
        return None
    return value if type(value) is np.ndarray else None


class _Numbers(ast.NodeTransformer):
    """Numbers beside arrays replaced by the names of 0-d arrays, which it makes."""

    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.made: dict[str, np.ndarray] = {}

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:  # noqa: N802 - ast's visitor names
        self.generic_visit(node)
        if isinstance(node.op, _ARITHMETIC):
            node.left, node.right = self._pair(node.left, node.right)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:  # noqa: N802
        self.generic_visit(node)
        if len(node.comparators) == 1:
            node.left, node.comparators[0] = self._pair(node.left, node.comparators[0])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802
        self.generic_visit(node)
        function = node.func
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and \
                function.value.id == "np" and len(node.args) == 2 and not node.keywords and \
                getattr(getattr(np, function.attr, None), "nin", 0) == 2:
            node.args[0], node.args[1] = self._pair(node.args[0], node.args[1])
        return node

    def _pair(self, left: ast.expr, right: ast.expr) -> tuple[ast.expr, ast.expr]:
        number = _number(right)
        if number is not None and _number(left) is None:
            return left, self._array(number, left) or right
        number = _number(left)
        if number is not None and _number(right) is None:
            return self._array(number, right) or left, right
        return left, right

    def _array(self, number: int | float, beside: ast.expr) -> ast.Name | None:
        """`number` as a named 0-d array of the dtype numpy gives it beside `beside`."""
        other = _evaluated(beside, self.scope)
        made = None if other is None else number_as_array(number, other.dtype)
        if made is None:
            return None
        name, value = made
        self.made[name] = value
        self.scope[name] = value
        return ast.Name(name, ast.Load())


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
