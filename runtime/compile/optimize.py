"""Rewrites of the traced lines that keep their meaning, before the source is written.

- A line of the backward whose value no line reads is dropped (the formulas' ops are pure:
  a `t(t(x))` cancelled, or `ones * x` folded, leaves the inner line unread), and so is a
  line of the forward written as a `quiet` numpy form (pure, and silent as its kernel is):
  the loss of a step that returns nothing, say.
- A copy read by the next line only, which makes a new array of it, is not made
  (`g2 = v5.copy()`, `g3 = 2 * g2`: `g3 = 2 * v5`).
- (At formatting, step.py) each array variable is deleted after its last use.
- A gradient handed to `accumulate` (AccumulateGrad) becomes the parameter's `.grad`: it
  goes over as it is when no other line reads it and only it holds its storage (as the
  engine's `_unshared_array` decides by reference counts), else as a copy, so that `.grad`
  never shares memory with a forward value or a broadcast view.
- An `accumulate` into a `.grad` that this step's `zero_grad()` emptied (`T0._grad = None`
  earlier in the step, and no accumulate into it since) sets the slot directly:
  `T0._grad = new(g7, None)`, what `accumulate` does when it finds None, without the call.
- The update's read of a `.grad` the step set so (`d0 = T0._grad._data`, no line since
  naming a `.grad`) reads the variable it was set from: `d0 = g7`, the same array.
- Those `T0._grad = new(g7, None)` lines then move to the end of the update, where no line
  after them names a `.grad`: nothing in the step reads them, and nothing outside it runs
  before it returns. Made there, next to the version counters' moves on the same tensors,
  they cost less than amid the backward's matrix products, which leave the caches cold.
"""

from __future__ import annotations

import re

import numpy as np

from runtime.compile.emit import Line, Source


def optimize(source: Source, returned: str) -> None:
    """Rewrite `source.lines` in place (the `text` of each line)."""
    _drop_unread(source, returned)
    _fold_copies(source, returned)
    readers = _readers(source.lines, returned)
    made_by = {}
    for line in source.lines:
        for target in _targets(line):
            made_by[target] = line
    for line in source.lines:
        if line.expression.startswith("accumulate(") and line.reads:
            grad = line.reads[0]
            if not _handed_over(grad, readers, made_by, source):
                line.text = line.expression.replace(f", {grad})", f", {grad}.copy())")
    _set_emptied_grads(source)
    _read_set_grads(source)
    _set_grads_last(source)


_COPY = re.compile(r"(\w+)\.copy\(\)")


def _fold_copies(source: Source, returned: str) -> None:
    """`g2 = v5.copy()` then `g3 = 2 * g2`, g2 read nowhere else: `g3 = 2 * v5`. The copy
    (pow's `pow(x, 1)`, say) only guards its values against a later write to v5, and the
    next line reads them before any; its result is a new array, not a view of g2 (the
    traced arrays show it), so nothing can come to share v5's memory through it."""
    readers = _readers(source.lines, returned)
    lines = source.lines
    kept: list[Line] = []
    index = 0
    while index < len(lines):
        line, after = lines[index], lines[index + 1] if index + 1 < len(lines) else None
        copied = _COPY.fullmatch(line.text or line.expression)
        if copied and after is not None and line.target and readers.get(line.target) == 1 \
                and line.target in after.reads and after.target and not after.text \
                and after.phase == line.phase and not line.quiet \
                and _fresh(source, after.target, line.target):
            name = re.compile(rf"\b{line.target}\b")
            after.expression = name.sub(copied.group(1), after.expression)
            after.reads = tuple(copied.group(1) if r == line.target else r
                                for r in after.reads)
            index += 1
            continue
        kept.append(line)
        index += 1
    lines[:] = kept


def _fresh(source: Source, result: str, operand: str) -> bool:
    """Whether the traced array of `result` shares no memory with that of `operand`."""
    made, read = source.traced.get(result), source.traced.get(operand)
    return isinstance(made, np.ndarray) and isinstance(read, np.ndarray) and \
        not np.may_share_memory(made, read)


def _set_emptied_grads(source: Source) -> None:
    """`accumulate(T, g)` as `T._grad = new(g, None)` where `T._grad` is known to be None."""
    emptied: set[str] = set()
    for line in source.lines:
        expression = line.expression
        if not line.target and expression.endswith("._grad = None"):
            emptied.add(expression[:-len("._grad = None")])
        elif expression.startswith("accumulate("):
            tensor, _, grad = (line.text or expression)[len("accumulate("):-1].partition(", ")
            if tensor in emptied:
                line.text = f"{tensor}._grad = new({grad}, None)"
            emptied.discard(tensor)
        elif "grad" in expression:  # another zero_grad, a read: no longer known
            emptied.clear()


_SET_GRAD = re.compile(r"(\w+)\._grad = new\((\w+), None\)")
_GRAD_DATA = re.compile(r"(\w+)\._grad\._data")


def _read_set_grads(source: Source) -> None:
    """`d0 = T0._grad._data` as `d0 = g7` where the step set `T0._grad = new(g7, None)`
    (the Tensor wraps g7 itself, not a copy) and every line since binds a variable to an
    expression that names no `.grad` and no `accumulate`. Any other line may have replaced
    the `.grad` (a second accumulate, a zero_grad, an in-place kernel given the Tensor):
    from there nothing is known. (A write into g7's memory through another name is seen
    through g7 too.)"""
    known: dict[str, str] = {}  # tensor -> the variable its .grad's array is
    for line in source.lines:
        if (set_grad := _SET_GRAD.fullmatch(line.text)) is not None:
            known[set_grad.group(1)] = set_grad.group(2)
            continue
        plain = line.target and not line.text
        read = _GRAD_DATA.fullmatch(line.expression) if plain else None
        if read is not None and read.group(1) in known:
            line.expression = known[read.group(1)]
            line.reads = (line.expression,)
        elif not plain or "grad" in line.expression or "accumulate" in line.expression:
            known.clear()


def _set_grads_last(source: Source) -> None:
    """Each `T._grad = new(g, None)` after which no other line names a `.grad` or an
    accumulate moved, in order, before the epilogue (phase "gradients")."""
    lines = source.lines
    moved: list[Line] = []
    clear = True  # no line after this one names a .grad (the moved ones aside)
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        statement = line.text or line.expression
        if _SET_GRAD.fullmatch(line.text) is not None and clear:
            moved.append(lines.pop(index))
        elif "grad" in statement or "accumulate" in statement:
            clear = False
    if not moved:
        return
    for line in moved:
        line.phase = "gradients"
    end = next((i for i, line in enumerate(lines) if line.phase == "epilogue"), len(lines))
    lines[end:end] = reversed(moved)


def _targets(line: Line) -> list[str]:
    return [t.strip() for t in line.target.split(",") if t.strip()]


def _readers(lines: list[Line], returned: str) -> dict[str, int]:
    count: dict[str, int] = {}
    for line in lines:
        for name in line.reads:
            count[name] = count.get(name, 0) + 1
    for name in returned.replace("(", " ").replace(")", " ").replace(",", " ").split():
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


def _drop_unread(source: Source, returned: str) -> None:
    """Drop the backward's lines, and the forward's quiet forms, that bind values nothing
    reads, last line first."""
    readers = _readers(source.lines, returned)
    kept: list[Line] = []
    for line in reversed(source.lines):
        targets = _targets(line)
        if (line.phase == "backward" or line.quiet) and targets and \
                not any(readers.get(t) for t in targets):
            for name in line.reads:
                readers[name] -= 1
            continue
        kept.append(line)
    source.lines[:] = reversed(kept)


# Arrays smaller than this are left to the end of the step: deleting them saves little
# and would put a `del` after almost every line.
FREE_BYTES = 1 << 16


def last_uses(lines: list[Line], returned: str, source: Source) -> dict[int, list[str]]:
    """Line index -> the large arrays of the step (`vN`, `gN`, owning at least FREE_BYTES
    in the trace) that no later line reads, to delete there: the step then holds no more memory
    than the engine, which frees saved tensors as it goes."""
    kept = set(_readers([], returned))
    last: dict[str, int] = {}
    for index, line in enumerate(lines):
        for name in (*_targets(line), *line.reads):
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
