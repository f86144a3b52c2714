"""A compiled step's guard, written as one Python function that runs before every call, as
torch._dynamo writes its guards: one `if` per object, each field read once and compared with
its traced value (a constant of the function's namespace). A check may be stricter than
needed, never looser: a new trace is never a wrong result. The checks of the tensors the step
holds and of its modules sit in a block skipped while runtime/changes.py's count stands
(gradgen counts every change it makes to them); an optimizer's, in a block skipped while
changes.OPTIMIZERS stands. Each block reads its count before its checks. See docs/compile.md."""

from __future__ import annotations

import ast
import operator
import os
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import changes
from runtime._tensor import Tensor
from runtime.compile import reads
from runtime.compile.emit import var
from runtime.nn.module_hooks import GLOBAL_CALL_HOOKS

# Set by the tests: a guard that passes runs again in full, and raises if that fails (a change made
# without counting it).
VERIFY = os.environ.get("GRADGEN_VERIFY_GUARDS") == "1"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {"Tensor": Tensor, "is_not": operator.is_not,
                                          "ref": weakref.ref}
        # The conditions of the skippable blocks (VERIFY runs them in full too).
        self.skips: list[str] = []
        self._names: dict[int, str] = {}  # id of a constant -> its name (held: ids stay)

    def skipping(self, condition: str, start: int, done: str) -> None:
        """The lines written since `start` as a block run only if `condition`, ending with
        `done`."""
        block = self.lines[start:]
        del self.lines[start:]
        self.skips.append(condition)
        self.lines.append(f"    if {condition}:")
        self.lines += [f"    {line}" for line in block]
        self.lines += [f"        {line}" for line in done.split("\n")]

    def skip_while_counted(self, count: changes.Count, start: int, kept_if: str = "",
                           tensor: str = "") -> None:
        """The lines since `start` as a block skipped while `count` stands where it last passed
        (and, with `kept_if`, found that true; with `tensor`, for the same tensor, held by a
        weak reference)."""
        name, seen = self.constant(count), self.constant(changes.Count(-1))
        local = f"c{len(self.skips)}"
        condition, done = f"({local} := {name}.value) != {seen}.value", f"{seen}.value = {local}"
        if tensor:
            last = self.constant([_nothing])
            condition += f" or {tensor} is not {last}[0]()"
            done = f"{seen}.value, {last}[0] = {local}, ref({tensor})"
        self.skipping(condition, start, f"if {kept_if}:\n    {done}" if kept_if else done)

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
    """A call's keyword arguments, passed as the compiled step's last argument."""


def build(arguments: tuple, modes: list[tuple[Any, str, Any]], found: list[reads.Read],
          held: list[tuple[Tensor, tuple]], modules: list[Any],
          optimizers: list[Any]) -> tuple[str, Callable[..., bool]]:
    """The source of `guard(a0, a1, ...)` and the function: True when the arguments and the
    world are as traced. `found` are the reads a later call makes (reads.py), in order, each
    holder guarded before what it holds; `held` the tensors the step holds, with their keys."""
    write = _Writer()
    if modes:
        write.fail_if(" or ".join(
            f"{write.constant(holder)}.{name} {'is not' if _singleton(value) else '!='} "
            f"{value!r}" for holder, name, value in modes))
    for index, key in enumerate(arguments):
        _argument(write, f"a{index}", key)
    for read in found:
        _read(write, read)
    # A class's `forward` may be patched, which nothing counts: checked at each call.
    classes = list(dict.fromkeys(type(module) for module in modules))
    if classes:
        write.fail_if(" or ".join(f"{write.constant(cls)}.forward is not "
                                  f"{write.constant(cls.forward)}" for cls in classes))
    _counted(write, held, modules)
    for guard in optimizers:
        _optimizer(write, guard)
    params = ", ".join(f"a{index}" for index in range(len(arguments)))
    code = "\n".join([f"def guard({params}):", *write.lines, "    return True", ""])
    exec(compile(code, "<gradgen compiled guard>", "exec", dont_inherit=True), write.namespace)
    guard = write.namespace["guard"]
    if VERIFY and write.skips:
        guard = _verified(guard, code, write.skips, write.namespace)
    return code, guard


def _counted(write: _Writer, held: list[tuple[Tensor, tuple]], modules: list[Any]) -> None:
    """The held tensors' and the modules' checks, in a block skipped while the count of changes
    stands."""
    if not held and not modules:
        return
    start = len(write.lines)
    for tensor, key in held:
        _tensor(write, tensor, key)
    for module in modules:
        _module(write, module)
    write.skip_while_counted(changes.COUNT, start)


def _verified(guard: Callable[..., bool], code: str, skips: list[str],
              namespace: dict[str, Any]) -> Callable[..., bool]:
    """`guard`, also checking (VERIFY) that it never passes with a skipped check that fails: a
    change made without counting it."""
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


def _singleton(value: Any) -> bool:
    return value is None or type(value) is bool


def _argument(write: _Writer, name: str, key: tuple) -> None:
    """step.py's `_argument_key(argument) == key`, written out."""
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


def _tensor(write: _Writer, find: Tensor | str, key: tuple) -> None:
    """step.py's `_tensor_key(t) == key`, cheapest field first, in one `if`; `find` is a
    Tensor the step holds (the same object at every call) or where to find one, as source."""
    shape, dtype, strides, requires_grad, leaf, hooked, inference = key
    held = isinstance(find, Tensor)
    write.lines.append(f"    t = {write.constant(find) if held else find}")
    start = len(write.lines)
    if not held:
        write.fail_if("type(t) is not Tensor and not isinstance(t, Tensor)")
    write.lines.append("    d = t._data")
    # (AccumulateGrad.has_hooks, spelled out.)
    hooks = "(t._backward_hooks or (a := t._grad_accumulator) is not None and " \
        "(a := a()) is not None and a._hooks is not None)"
    # The traced array, while the tensor holds it, keeps its layout (gradgen rebinds `_data` to
    # change one): a weak reference skips the field checks.
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
    if not held:  # skipped when it is the tensor last passed and the count of changes stands
        write.skip_while_counted(changes.COUNT, start, tensor="t")


def _nothing() -> None:
    return None


def _read(write: _Writer, read: reads.Read) -> None:
    """What `read` finds now against what it found when traced."""
    kind, expected = read.expected
    found = _found(write, read)
    if kind == "tensor":
        _tensor(write, found, expected)
    elif kind == "value":
        write.fail_if(f"(type(v := {found}), v) != {write.constant(expected)}")
    elif kind == "length":
        write.fail_if(f"{found} != {expected}")
    else:  # ("object", obj) or ("same", another read)
        write.fail_if(f"{found} is not "
                      f"{_found(write, expected) if kind == 'same' else write.constant(expected)}")


def _found(write: _Writer, read: reads.Read) -> str:
    key = ast.Constant(read.key) if type(read.key) in (str, int) else \
        var(write.constant(read.key))
    return ast.unparse(read.tree(write.constant(read.holder), key,
                                 var(write.constant(reads.MISSING))))


def _module(write: _Writer, module: Any) -> None:
    """A module: its class, and which attributes, hooks, parameters, buffers and submodules it
    holds (by name and identity)."""
    attributes = vars(module)
    write.fail_if(f"type({write.constant(module)}) is not {write.constant(type(module))}")
    write.lines.append(f"    d = {write.constant(module)}.__dict__")
    write.fail_if_any([_not_the_same(write, "d", attributes)] + [
        _not_the_same(write, write.constant(attributes[name]), attributes[name])
        for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                     "_backward_pre_hooks", "_parameters", "_buffers", "_modules")]
        + [write.constant(GLOBAL_CALL_HOOKS)])  # a global module hook registered since


def _not_the_same(write: _Writer, name: str, expected: dict | list) -> str:
    """The condition that the dict or list `name` does not hold `expected`'s keys and objects."""
    if not expected:
        return name
    if isinstance(expected, dict):
        return f"tuple({name}) != {write.constant(tuple(expected))} or any(map(is_not, " \
            f"{name}.values(), {write.constant(tuple(expected.values()))}))"
    return f"len({name}) != {len(expected)} or " \
        f"any(map(is_not, {name}, {write.constant(tuple(expected))}))"


def _optimizer(write: _Writer, traced: Any) -> None:
    """An optimizer's groups, keys, hyperparameters (a float learning rate excepted: read at
    every step), parameters and which have state."""
    optimizer = write.constant(traced)
    whole = len(write.lines)
    write.lines.append(f"    g = {optimizer}.param_groups")
    write.fail_if(f"len(g) != {len(traced.param_groups)}")
    params: list[Any] = []
    for index, group in enumerate(traced.param_groups):
        group_params = list(group["params"])
        settings = [(k, v) for k, v in group.items()
                    if k != "params" and not (k == "lr" and type(v) is float)]
        write.lines.append(f"    p = g[{index}]")
        write.fail_if(f"p is not {write.constant(group)}")
        # (The params list is the group's own, but its writes are not counted.)
        write.lines.append("    q = p['params']")
        write.fail_if(_not_the_same(write, "q", group_params))
        start = len(write.lines)
        write.fail_if(f"tuple(p) != {write.constant(tuple(group))}")
        if settings:
            # By identity: np.float64(0.9) == 0.9, but the update wrote the traced value in.
            read = write.constant(operator.itemgetter(*(key for key, _ in settings)))
            values = tuple(v for _, v in settings)
            read = f"({read}(p),)" if len(values) == 1 else f"{read}(p)"  # (one: no tuple)
            write.fail_if(f"any(map(is_not, {read}, {write.constant(values)}))")
        lr = "p['lr']" if "lr" in group else "p.get('lr')"
        write.fail_if(f"type({lr}) is not {write.constant(type(group.get('lr')))}")
        if type(group) is changes.ParamGroup:  # a group the optimizer made counts its writes
            write.skip_while_counted(changes.OPTIMIZERS, start)
        params += group_params
    # Which parameters have state: gaining state changes what a step does.
    state = f"{optimizer}.state"
    held = write.constant(tuple(params))
    stateful = tuple(bool(traced.state.get(p)) for p in params)
    if any(stateful):
        write.fail_if(f"tuple(map(bool, map({state}.get, {held}))) != {stateful!r}")
    else:
        write.fail_if(f"{state} and any(map({state}.get, {held}))")
    write.skip_while_counted(changes.OPTIMIZERS, whole,
                             f"{write.constant(changes.counts_its_writes)}({optimizer})")
