"""A compiled step's guards as one generated function: every call runs it before the step.

The guards (step.py's `_Entry`) say what the world looked like when the step was traced:
the tensors it reads (shape, dtype, strides, requires_grad, leaf, hooks, inference), the
objects and plain values its names are bound to, the values it reads through those
(reads.py: `cfg.alpha`), the modules it called (training mode,
hooks, parameters, buffers, plain attributes) and its optimizers. Checked by walking those
lists, building a key per tensor and per module and comparing it, the guards cost a small
step more than a tenth of its time (about 18 µs of a 220 µs TinyModel step at batch 16).

Here they are written out as Python source instead, as torch._dynamo writes its guards:
one `if` per object, reading each field once and comparing it with the traced value, a
constant of the function's namespace. The checks are step.py's `_tensor_key` and
`_module_key`, spelled out; `guard_code` keeps the source for a reader. A check may be
stricter than the key's comparison, never looser: a new trace is never a wrong result.

The checks of the modules and of the tensors the step holds (their parameters and
buffers) sit in one block, which runs only when runtime/changes.py's count has moved since
the guard last passed it: gradgen counts every change it makes to those, so while the count
stands they are as the guard last found them. That block was three quarters of the guard's
time (3.8 of 4.5 µs for the TinyModel step); the arguments, the names the step reads, the
modes and a module class's `forward` are checked at every call; a tensor found anew at each
call (an argument, a global) is checked at every call unless it is the one last passed and
the count stands. An optimizer's checks (its groups, their keys, hyperparameters and
parameters, which parameters have state) sit in a block of their own, skipped while
changes.OPTIMIZERS stands, where every container they read counts its writes there (the
optimizer made them: changes.counts_its_writes); else they run at every call, but for the
keys and hyperparameters of each group the optimizer made (changes.ParamGroup), in a block
skipped while that count stands. Each block reads its count before its checks, so that a
change made while they run (by another thread) is not taken as seen.
"""

from __future__ import annotations

import operator
import os
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import changes
from runtime._tensor import Tensor
from runtime.compile import reads

# The tests set this (through the environment, so that the programs they run as scripts do
# too): a guard that passes runs again with its counted block checked, and raises if that
# fails (a change gradgen made without counting it).
VERIFY = os.environ.get("GRADGEN_VERIFY_GUARDS") == "1"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {"Tensor": Tensor, "is_not": operator.is_not,
                                          "ref": weakref.ref}
        # The condition under which a block of checks runs, skipped while nothing it reads
        # has changed (runtime/changes.py): VERIFY runs the block at every call as well.
        self.skips: list[str] = []
        self._names: dict[int, str] = {}  # id of a constant -> its name (held: ids stay)

    def skipping(self, condition: str, start: int, done: str) -> None:
        """The lines written since `start` as a block that runs only if `condition`, and
        ends with `done` (which keeps what it saw)."""
        block = self.lines[start:]
        del self.lines[start:]
        self.skips.append(condition)
        self.lines.append(f"    if {condition}:")
        self.lines += [f"    {line}" for line in block]
        self.lines += [f"        {line}" for line in done.split("\n")]

    def skip_while_counted(self, count: changes.Count, start: int, kept_if: str = "") -> None:
        """The lines written since `start` as a block skipped while `count` stands where the
        block last passed (and, with `kept_if`, found that condition true). The count is
        read before the checks, so a change made while they run is not taken as seen."""
        name, seen = self.constant(count), self.constant(changes.Count(-1))
        local = f"c{len(self.skips)}"
        done = f"{seen}.value = {local}"
        self.skipping(f"({local} := {name}.value) != {seen}.value", start,
                      f"if {kept_if}:\n    {done}" if kept_if else done)

    def constant(self, value: Any) -> str:
        """The namespace's name for `value` (one name per object)."""
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"k{len(self.namespace)}"
            self.namespace[name] = value
        return name

    def fail_if(self, condition: str) -> None:
        self.lines += [f"    if {condition}:", "        return False"]

    def fail_if_any(self, conditions: list[str]) -> None:
        """One `if`, a condition a line, tested in order."""
        first, *rest = conditions
        self.lines.append(f"    if ({first}" if rest else f"    if {first}:")
        self.lines += [f"            or {condition}" for condition in rest[:-1]]
        if rest:
            self.lines.append(f"            or {rest[-1]}):")
        self.lines.append("        return False")


class Keywords(dict):
    """A call's keyword arguments, passed on as the compiled step's last argument (the
    generated code reads `a1['targets']`): `model(x, targets=y)`."""


def build(arguments: tuple, modes: list[tuple[Any, str, Any]],
          tensors: list[Callable[[], Any] | Tensor], tensor_keys: list[tuple],
          named: list[tuple[Callable[[], Any], Any]],
          scalars: list[tuple[Callable[[], Any], tuple]], reads: list[Any],
          modules: list[Any], optimizers: list[Any]) -> tuple[str, Callable[..., bool]]:
    """The source of `guard(a0, a1, ...)` and the function: True when it is called with
    arguments like the traced ones and the world is as traced.

    `arguments` holds step.py's key of each argument; `modes` each global mode as
    (holder, attribute, traced value). `tensors` holds, for each tensor the step reads,
    where the next call finds it (a getter), or the Tensor itself when the step holds it
    (a module's parameter)."""
    write = _Writer()
    _modes_and_arguments(write, modes, arguments)
    _names(write, named, scalars, reads)
    # Found anew at each call (after the reads, which guard their holders and a list's
    # length): checked at each call.
    for find, key in zip(tensors, tensor_keys, strict=True):
        if not isinstance(find, Tensor):
            _tensor(write, find, key)
    # A module's class is its own (a class assigned to it is counted), but its `forward`
    # may be patched on the class, which nothing counts: checked at each call.
    classes = list(dict.fromkeys(type(module) for module in modules))
    if classes:
        write.fail_if(" or ".join(f"{write.constant(cls)}.forward is not "
                                  f"{write.constant(cls.forward)}" for cls in classes))
    _counted(write, [(find, key) for find, key in zip(tensors, tensor_keys, strict=True)
                     if isinstance(find, Tensor)], modules)
    for guard in optimizers:
        _optimizer(write, guard)
    params = ", ".join(f"a{index}" for index in range(len(arguments)))
    code = "\n".join([f"def guard({params}):", *write.lines, "    return True", ""])
    exec(compile(code, "<gradgen compiled guard>", "exec", dont_inherit=True), write.namespace)
    guard = write.namespace["guard"]
    if VERIFY and write.skips:
        guard = _verified(guard, code, write.skips, write.namespace)
    return code, guard


def _modes_and_arguments(write: _Writer, modes: list[tuple[Any, str, Any]],
                         arguments: tuple) -> None:
    """The global modes' checks, then each argument's."""
    if modes:
        write.fail_if(" or ".join(
            f"{write.constant(holder)}.{name} {'is not' if _singleton(value) else '!='} "
            f"{value!r}" for holder, name, value in modes))
    for index, key in enumerate(arguments):
        _argument(write, f"a{index}", key)


def _names(write: _Writer, named: list, scalars: list, reads: list) -> None:
    """The objects fn names by identity, its plain values by type and value, and what it
    reads through them (reads.py)."""
    for find, expected in named:
        write.fail_if(f"{_read(write, find)} is not {write.constant(expected)}")
    for find, key in scalars:
        # (type, value), compared as step.py's `_scalar_key` compares them.
        write.fail_if(f"(type(v := {_read(write, find)}), v) != {write.constant(key)}")
    for read in reads:
        _read_value(write, read)


def _counted(write: _Writer, held: list[tuple[Tensor, tuple]], modules: list[Any]) -> None:
    """The checks of the tensors the step holds and of its modules, in a block that runs only
    when runtime/changes.py's count has moved since it last passed (it then keeps the
    count it saw)."""
    if not held and not modules:
        return
    start = len(write.lines)
    for tensor, key in held:
        _tensor(write, tensor, key)
    for module in modules:
        _module(write, module)
    # (The count the block last passed with: none yet, -1.)
    write.skip_while_counted(changes.COUNT, start)


def _verified(guard: Callable[..., bool], code: str, skips: list[str],
              namespace: dict[str, Any]) -> Callable[..., bool]:
    """`guard`, which also checks (VERIFY) that whenever it passes, it passes with none of
    its checks skipped: else something changed what a skipped check reads without counting
    the change."""
    full_code = code
    for condition in skips:  # (still evaluated: it may name the count it read)
        full_code = full_code.replace(f"    if {condition}:", f"    if ({condition}) or True:", 1)
    full: dict[str, Any] = dict(namespace)
    exec(compile(full_code, "<gradgen compiled guard, checked in full>", "exec",
                 dont_inherit=True), full)
    check = full["guard"]

    def verified(*args: Any) -> bool:
        answer = guard(*args)
        if answer and not check(*args):
            raise AssertionError(
                "a compiled step's guard skipped checks that fail now: something changed "
                "what they read without counting the change (runtime/changes.py). The "
                f"guard:\n{code}")
        return answer

    return verified


def _read(write: _Writer, find: Callable[[], Any]) -> str:
    """`find()` as source: written out where the getter can say how (reads.py's Source:
    a global's or a free variable's read, without a call), else a call."""
    expression = getattr(find, "expression", None)
    if expression is not None:
        return expression(write.constant(find.container))
    return f"{write.constant(find)}()"


def _singleton(value: Any) -> bool:
    return value is None or type(value) is bool


def _argument(write: _Writer, name: str, key: tuple) -> None:
    """step.py's `_argument_key(argument) == key`: a tensor's checks, a plain value's type
    and value (1, 1.0 and True are each their own trace), a tuple's or list's length and
    items, a dict's keys and items."""
    kind, value = key
    if kind == "tensor":
        _tensor(write, name, value)
    elif kind in ("tuple", "list"):
        write.fail_if(f"type({name}) is not {kind} or len({name}) != {len(value)}")
        for index, item in enumerate(value):
            _argument(write, f"{name}[{index}]", item)
    elif kind in ("dict", "keywords"):  # its keys in their order, then each item
        keys = tuple(key for key, _ in value)
        kind = "dict" if kind == "dict" else write.constant(Keywords)
        write.fail_if(f"type({name}) is not {kind} or tuple({name}) != "
                      f"{write.constant(keys)}")
        for key, item in value:
            _argument(write, f"{name}[{write.constant(key)}]", item)
    elif kind == "dtype":
        write.fail_if(f"{name} is not {write.constant(value)}")
    elif _singleton(value):
        write.fail_if(f"{name} is not {value!r}")
    else:
        kind = write.constant({"int": int, "float": float, "str": str}[kind])
        write.fail_if(f"type({name}) is not {kind} or {name} != {write.constant(value)}")


def _tensor(write: _Writer, find: Callable[[], Any] | Tensor | str, key: tuple) -> None:
    """step.py's `_tensor_key(t) == key`, field by field, cheapest first, in one `if`.
    `find` is the Tensor the step holds, a getter of the tensor, or an argument's name."""
    shape, dtype, strides, requires_grad, leaf, hooked, inference = key
    held = isinstance(find, Tensor)
    if held:  # held by the step: the same object at every call
        write.lines.append(f"    t = {write.constant(find)}")
    else:
        write.lines.append(f"    t = {find}" if isinstance(find, str) else
                           f"    t = {_read(write, find)}")
    start = len(write.lines)
    if not held:
        write.fail_if("type(t) is not Tensor and not isinstance(t, Tensor)")
    write.lines.append("    d = t._data")
    # (AccumulateGrad.has_hooks, spelled out: its variable's hooks are t's own, tested first.)
    hooks = "(t._backward_hooks or (a := t._grad_accumulator) is not None and " \
        "(a := a()) is not None and a._hooks is not None)"
    # The array traced, if the tensor still holds it, has its shape, strides and dtype:
    # gradgen rebinds `_data` to change them and never sets them on the array, which it
    # hands to no one (`numpy()` and `np.asarray` give views). A weak reference, so that a
    # replaced array is not kept alive; another array is checked field by field (numpy's
    # built-in dtypes are singletons: `is` is the cheap test, and a dtype equal but not
    # identical only makes a new trace).
    array = find._data if held else None
    layout = f"(d.shape != {shape!r} or d.strides != {strides!r} or " \
        f"d.dtype is not {write.constant(np.dtype(dtype))})"
    conditions = [f"d is not {write.constant(weakref.ref(array))}() and {layout}"
                  if array is not None else layout,
                  f"t._requires_grad is not {requires_grad!r}",
                  "t.grad_fn is not None" if leaf else "t.grad_fn is None",
                  hooks if not hooked else f"not {hooks}",
                  "t._counter is not None and t._counter.inference" if not inference else
                  "t._counter is None or not t._counter.inference"]
    write.fail_if_any(conditions)
    if not held:
        # Found anew at each call (an argument, a global, a free variable): the checks
        # above are skipped when it is the tensor they last passed (a weak reference) and
        # the count of changes (runtime/changes.py) has not moved since, for every change
        # to what they read (its array's layout, requires_grad, history, hooks) is counted.
        passed, count = write.constant(_Passed()), write.constant(changes.COUNT)
        local = f"c{len(write.skips)}"
        write.skipping(f"({local} := {count}.value) != {passed}.count or "
                       f"t is not {passed}.tensor()",
                       start, f"{passed}.tensor, {passed}.count = ref(t), {local}")


class _Passed:
    """The tensor one input's checks last passed (a weak reference; at first, none) and
    the count of changes then."""

    __slots__ = ("count", "tensor")

    def __init__(self) -> None:
        self.tensor: Callable[[], Any] = _nothing
        self.count = -1


def _nothing() -> None:
    return None


def _read_value(write: _Writer, read: Any) -> None:
    """A reads.py Read: a plain value by type and value, an object by identity,
    a container's length. The holder is a constant: checked by identity before."""
    if isinstance(read, reads.Alias):
        first, other = read.first, read.other
        write.fail_if(f"{other.expression(write.constant(other.container))} is not "
                      f"{first.expression(write.constant(first.container))}")
        return
    holder = write.constant(read.holder)
    kind, expected = read.expected
    if kind == "length":
        write.fail_if(f"len({holder}) != {expected}")
        return
    if read.kind == "attribute":
        found = f"{holder}.__dict__.get({read.key!r}, {write.constant(reads.MISSING)})"
    elif isinstance(read.holder, dict):
        found = f"{holder}.get({write.constant(read.key)}, {write.constant(reads.MISSING)})"
    else:
        found = f"{holder}[{read.key}]"
    write.fail_if(f"(type(v := {found}), v) != {write.constant(expected)}" if kind == "value"
                  else f"{found} is not {write.constant(expected)}")


def _module(write: _Writer, module: Any) -> None:
    """step.py's `_module_key` but the class's forward (build checks it at every call): the
    class, the attributes, by name and by identity (a value set again, a function swapped, the
    training flag flipped: each a new trace), the hooks, and which parameters, buffers and
    submodules it holds (`model[2] = nn.Linear(...)` swaps an object inside `_modules`,
    which keeps its identity). The objects compared are held in
    the guard's namespace (so that no other can take their address) and compared with
    `is`, element by element in C (`any(map(is_not, ...))`): building tuples of their ids
    cost a microsecond a module."""
    attributes = vars(module)
    write.fail_if(f"type({write.constant(module)}) is not {write.constant(type(module))}")
    write.lines.append(f"    d = {write.constant(module)}.__dict__")
    write.fail_if(f"tuple(d) != {write.constant(tuple(attributes))} or "
                  f"{_not_the_same('d.values()', tuple(attributes.values()), write)}")
    # The values are the traced objects now: the hooks and holders are read through
    # constants (no lookups in `d`), all in one `if`.
    conditions = []
    for hooks in ("_forward_hooks", "_forward_pre_hooks"):
        held = write.constant(attributes[hooks])
        conditions.append(f"not {held}" if attributes[hooks] else held)
    for holder in ("_parameters", "_buffers", "_modules"):
        held = tuple(attributes[holder].values())
        name = write.constant(attributes[holder])
        conditions.append(f"len({name}) != {len(held)} or "
                          f"{_not_the_same(f'{name}.values()', held, write)}" if held else name)
    write.fail_if_any(conditions)


def _not_the_same(values: str, expected: tuple, write: _Writer) -> str:
    """The condition that `values` (as many as `expected`, the caller checks the count, or
    the keys) are not, one by one, the objects of `expected`."""
    return f"any(map(is_not, {values}, {write.constant(expected)}))"


def _optimizer(write: _Writer, guard: Any) -> None:
    """optim.py's Guard: the same groups, keys, hyperparameters (the learning rate
    excepted), parameters, and which parameters have state. All in a block skipped while
    changes.OPTIMIZERS stands, when the block last found that every container it read
    counts its writes there (`changes.counts_its_writes`: not so where the user gave a
    group as a dict of their own)."""
    optimizer = write.constant(guard.optimizer)
    whole = len(write.lines)
    write.lines.append(f"    g = {optimizer}.param_groups")
    write.fail_if(f"len(g) != {len(guard.groups)}")
    params: list[Any] = []
    for index, (group, keys, settings, group_params) in enumerate(guard.groups):
        write.lines.append(f"    p = g[{index}]")
        write.fail_if(f"p is not {write.constant(group)}")
        # (The list of parameters is the group's own, but a list: its writes are not
        # counted.)
        write.fail_if(f"len(q := p['params']) != {len(group_params)} or "
                      f"{_not_the_same('q', tuple(group_params), write)}")
        start = len(write.lines)
        write.fail_if(f"tuple(p) != {write.constant(keys)}")
        if settings:
            # By identity: an equal value of another type (np.float64(0.9) for 0.9) would
            # pass `==`, and the update's lines wrote the traced value in.
            read = write.constant(operator.itemgetter(*(key for key, _ in settings)))
            values = tuple(v for _, v in settings)
            read = f"({read}(p),)" if len(values) == 1 else f"{read}(p)"  # (one: no tuple)
            write.fail_if(f"any(map(is_not, {read}, {write.constant(values)}))")
        lr = "p['lr']" if "lr" in group else "p.get('lr')"
        write.fail_if(f"type({lr}) is not {write.constant(guard.lr_types[index])}")
        if type(group) is changes.ParamGroup:  # a group the optimizer made counts its writes
            write.skip_while_counted(changes.OPTIMIZERS, start)
        params += group_params
    # Which parameters have state (Adam's moments, SGD's momentum buffers): a parameter
    # gaining state changes what its step does.
    state = f"{optimizer}.state"
    held = write.constant(tuple(params))
    if any(guard.stateful):
        write.fail_if(f"tuple(map(bool, map({state}.get, {held}))) != "
                      f"{tuple(guard.stateful)!r}")
    else:
        write.fail_if(f"{state} and any(map({state}.get, {held}))")
    write.skip_while_counted(changes.OPTIMIZERS, whole,
                             f"{write.constant(changes.counts_its_writes)}({optimizer})")
