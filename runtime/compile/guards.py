"""A compiled step's guard, written as one Python function that runs before every call, as
torch._dynamo writes its guards: one `if` per object, each field read once and compared with
its traced value (a constant of the function's namespace). A check may be stricter than
needed, never looser: a new trace is never a wrong result. Every check is a place (an
argument, a read of reads.py, a module's or optimizer's field) and what it must hold there:
reads.py's `expected`. The checks of the tensors the step holds and of its modules sit in a
block skipped while runtime/changes.py's count stands (gradgen counts every change it makes to
them); an optimizer's, in a block skipped while changes.OPTIMIZERS stands. Each block reads its
count before its checks. See docs/compile.md."""

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
from runtime.compile.emit import Source, TraceBreak, by_name, define, subscript, var
from runtime.compile.trace import READ
from runtime.dtypes import dtype
from runtime.nn.module_hooks import GLOBAL_CALL_HOOKS

# Set by the tests: a guard that passes runs again in full, and raises if that fails (a change made
# without counting it).
VERIFY = os.environ.get("GRADGEN_VERIFY_GUARDS") == "1"

# What a module holds by name, checked key by key and object by object (with its __dict__).
_REGISTRIES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
               "_parameters", "_buffers", "_modules")

# AccumulateGrad.has_hooks, spelled out, on the tensor `t`.
_HOOKS = "(t._backward_hooks or (a := t._grad_accumulator) is not None and " \
    "(a := a()) is not None and a._hooks is not None)"


class Keywords(dict):
    """A call's keyword arguments, passed as the compiled step's last argument."""


class Guard:
    """A guard as it is written. Begun at a call that no entry's guard passed, before the
    trace: the modes and the arguments as the step found them. Finished after the trace with
    what the step read."""

    def __init__(self, args: tuple, modes: tuple[tuple[Any, str], ...]) -> None:
        self.lines: list[str] = []
        # Its namespace: the fixed names, and the constants (`k0`, `k1`, ...) it compares with.
        self.source = Source(namespace={"Tensor": Tensor, "is_not": operator.is_not,
                                        "ref": weakref.ref})
        self.namespace = self.source.namespace
        self.skips: list[str] = []  # the conditions of the skippable blocks (VERIFY)
        self.arity = len(args)
        self.fail_if(" or ".join(
            f"{self.constant(holder)}.{name} {'is not' if _singleton(value) else '!='} {value!r}"
            for holder, name in modes for value in [getattr(holder, name)]))
        self.tensors: list[tuple[Tensor, ast.expr]] = []  # the arguments' tensors, and where
        for index, value in enumerate(args):
            self.argument(var(f"a{index}"), value)

    def finish(self, tracer: Any) -> tuple[str, Callable[..., bool]]:
        """The source of `guard(a0, a1, ...)` and the function, with the checks of what the
        trace read: its reads (reads.py), each holder before what it holds; the classes'
        `forward`; the tensors the step holds and its modules; its optimizers."""
        self.reads = _reads(tracer)
        for read in self.reads:
            self.check(self.found(read), read.expected)
        # A class's `forward` may be patched, which nothing counts: checked at each call.
        classes = list(dict.fromkeys(type(module) for module in tracer.modules))
        if classes:
            self.fail_if(" or ".join(f"{self.constant(cls)}.forward is not "
                                     f"{self.constant(cls.forward)}" for cls in classes))
        start = len(self.lines)
        for known in tracer.closure:
            if known.how != READ:
                self.tensor(known.tensor)
        for module in tracer.modules:
            self.module(module)
        if len(self.lines) > start:
            self.skip_while_counted(changes.COUNT, start)
        for optimizer in tracer.optimizers:
            self.optimizer(optimizer)
        return self._compile()

    def _compile(self) -> tuple[str, Callable[..., bool]]:
        params = ", ".join(f"a{index}" for index in range(self.arity))
        code = "\n".join([f"def guard({params}):", *self.lines, "    return True", ""])
        define(code, "<gradgen compiled guard>", self.namespace)
        guard = self.namespace["guard"]
        if VERIFY and self.skips:
            guard = _verified(guard, code, self.skips, self.namespace)
        return code, guard

    def constant(self, value: Any) -> str:
        """The namespace's name for `value` (one name per object)."""
        return self.source.constant(value, "k")

    def found(self, read: reads.Read) -> str:
        """Where `read` reads, as source."""
        key = ast.Constant(read.key) if type(read.key) in (str, int) else \
            var(self.constant(read.key))
        return ast.unparse(read.tree(self.constant(read.holder), key,
                                     var(self.constant(reads.MISSING))))

    def check(self, where: str, expected: tuple) -> None:
        """That what `where` reads is `expected`."""
        if expected[0] == "tensor":
            self.tensor(expected[1], where)
        else:
            self.fail_if(self.differs(where, expected))

    def differs(self, where: str, expected: tuple) -> str:
        """The condition that what `where` reads is not `expected` (reads.py's kinds, and
        ("items", a dict or list): the same keys and objects)."""
        kind, value = expected
        if kind == "value" and _singleton(value[1]):
            return f"{where} is not {value[1]!r}"
        if kind == "value":
            return f"(type(v := {where}), v) != {self.constant(value)}"
        if kind == "length":
            return f"{where} != {value}"
        if kind == "same":
            return f"{where} is not {self.found(value)}"
        if kind == "items":
            return self._items(where, value)
        return f"{where} is not {self.constant(value)}"

    def _items(self, where: str, expected: dict | list) -> str:
        """The condition that the dict or list `where` does not hold `expected`'s keys and
        objects."""
        if not expected:
            return where
        if isinstance(expected, dict):
            return f"tuple({where}) != {self.constant(tuple(expected))} or any(map(is_not, " \
                f"{where}.values(), {self.constant(tuple(expected.values()))}))"
        return f"len({where}) != {len(expected)} or " \
            f"any(map(is_not, {where}, {self.constant(tuple(expected))}))"

    def fail_if(self, *conditions: str) -> None:
        """One `if`, a condition a line, tested in order."""
        first, *rest = conditions
        self.lines.append(f"    if ({first}" if rest else f"    if {first}:")
        self.lines += [f"            or {condition}" for condition in rest[:-1]]
        if rest:
            self.lines.append(f"            or {rest[-1]}):")
        self.lines.append("        return False")

    def argument(self, tree: ast.expr, value: Any) -> None:
        """That the argument at `tree` (`a0`, `a1[0]`) is as `value` is now: a Tensor by its
        metadata (and kept in `tensors`), a tuple or list by its type, length and items, a dict
        of str keys (or the keyword arguments) by its keys in order and items, a plain value by
        type and value, a dtype by identity."""
        kind, where = type(value), ast.unparse(tree)
        if isinstance(value, Tensor):
            self.tensors.append((value, tree))
        if isinstance(value, Tensor) or reads.is_plain_value(value) or kind is dtype:
            self.check(where, ("tensor", value) if isinstance(value, Tensor)
                       else reads.expected_of(value))
        elif kind in (tuple, list):  # an RNN's hidden state (h, c), a batch (x, y)
            self.fail_if(f"type({where}) is not {kind.__name__} or len({where}) != {len(value)}")
            for index, item in enumerate(value):
                self.argument(subscript(tree, ast.Constant(index)), item)
        elif kind in (dict, Keywords) and by_name(value):
            self.fail_if(f"type({where}) is not {self.constant(kind)} or tuple({where}) != "
                         f"{self.constant(tuple(value))}")
            for key, item in value.items():
                self.argument(subscript(tree, ast.Constant(key)), item)
        else:
            raise TraceBreak(f"an argument of type {kind.__name__} (compiled steps take "
                             "tensors, Python numbers, dtypes, and tuples, lists and dicts of "
                             "them)")

    def tensor(self, tensor: Tensor, where: str = "") -> None:
        """That the tensor at `where` (source; "" for `tensor` itself, which the step holds)
        has `tensor`'s metadata as now, cheapest field first: its array's layout, requires_grad,
        whether it is a leaf, has hooks, is an inference tensor."""
        self.lines.append(f"    t = {where or self.constant(tensor)}")
        start = len(self.lines)
        if where:
            self.fail_if("type(t) is not Tensor and not isinstance(t, Tensor)")
        self.lines.append("    d = t._data")
        data = tensor._data
        layout = f"(d.shape != {data.shape!r} or d.strides != {data.strides!r} or " \
            f"d.dtype is not {self.constant(np.dtype(data.dtype.str))})"
        if not where:
            # The traced array, while the tensor holds it, keeps its layout (gradgen rebinds
            # `_data` to change one): a weak reference skips the field checks.
            layout = f"d is not {self.constant(weakref.ref(data))}() and {layout}"
        inference = "t._counter is not None and t._counter.inference"
        self.fail_if(layout, f"t._requires_grad is not {tensor._requires_grad!r}",
                     "t.grad_fn is not None" if tensor.grad_fn is None else "t.grad_fn is None",
                     f"not {_HOOKS}" if hooked(tensor) else _HOOKS,
                     f"not ({inference})" if tensor._counter is not None and
                     tensor._counter.inference else inference)
        if where:  # skipped when it is the tensor last passed and the count of changes stands
            self.skip_while_counted(changes.COUNT, start, tensor="t")

    def module(self, module: Any) -> None:
        """A module: its class, and which attributes, hooks, parameters, buffers and submodules
        it holds (by name and identity)."""
        attributes = vars(module)
        self.fail_if(f"type({self.constant(module)}) is not {self.constant(type(module))}")
        self.lines.append(f"    d = {self.constant(module)}.__dict__")
        self.fail_if(self.differs("d", ("items", attributes)), *(
            self.differs(self.constant(attributes[name]), ("items", attributes[name]))
            for name in _REGISTRIES), self.constant(GLOBAL_CALL_HOOKS))  # a global hook since

    def optimizer(self, traced: Any) -> None:
        """An optimizer's groups, keys, hyperparameters (by identity: np.float64(0.9) == 0.9, but
        the update wrote the traced value in; a float learning rate excepted, read at every
        step), parameters, and which have state."""
        optimizer = self.constant(traced)
        whole = len(self.lines)
        self.lines.append(f"    g = {optimizer}.param_groups")
        self.fail_if(f"len(g) != {len(traced.param_groups)}")
        params: list[Any] = []
        for index, group in enumerate(traced.param_groups):
            params += group["params"]
            self._group(index, group)
        # Which parameters have state: gaining state changes what a step does.
        state, held = f"{optimizer}.state", self.constant(tuple(params))
        stateful = tuple(bool(traced.state.get(p)) for p in params)
        self.fail_if(f"tuple(map(bool, map({state}.get, {held}))) != {stateful!r}"
                     if any(stateful) else f"{state} and any(map({state}.get, {held}))")
        self.skip_while_counted(changes.OPTIMIZERS, whole,
                                f"{self.constant(changes.counts_its_writes)}({optimizer})")

    def _group(self, index: int, group: dict) -> None:
        """An optimizer's group `g[index]`: the same dict, parameters, keys and settings."""
        self.lines.append(f"    p = g[{index}]")
        self.fail_if(f"p is not {self.constant(group)}")
        # (The params list is the group's own, but its writes are not counted.)
        self.lines.append("    q = p['params']")
        self.fail_if(self.differs("q", ("items", list(group["params"]))))
        start = len(self.lines)
        self.fail_if(f"tuple(p) != {self.constant(tuple(group))}")
        settings = {key: value for key, value in group.items()
                    if key != "params" and not (key == "lr" and type(value) is float)}
        if settings:
            self.fail_if(f"any(map(is_not, map(p.__getitem__, {self.constant(tuple(settings))}"
                         f"), {self.constant(tuple(settings.values()))}))")
        lr = "p['lr']" if "lr" in group else "p.get('lr')"
        self.fail_if(f"type({lr}) is not {self.constant(type(group.get('lr')))}")
        if type(group) is changes.ParamGroup:  # a group the optimizer made counts its writes
            self.skip_while_counted(changes.OPTIMIZERS, start)

    def skip_while_counted(self, count: changes.Count, start: int, kept_if: str = "",
                           tensor: str = "") -> None:
        """The lines written since `start` as a block skipped while `count` stands where it
        last passed (and, with `kept_if`, found that true; with `tensor`, for the same tensor,
        held by a weak reference)."""
        name, seen = self.constant(count), self.constant(changes.Count(-1))
        local = f"c{len(self.skips)}"
        condition, done = f"({local} := {name}.value) != {seen}.value", f"{seen}.value = {local}"
        if tensor:
            last = self.constant([_nothing])
            condition += f" or {tensor} is not {last}[0]()"
            done = f"{seen}.value, {last}[0] = {local}, ref({tensor})"
        block = self.lines[start:]
        del self.lines[start:]
        self.skips.append(condition)
        self.lines.append(f"    if {condition}:")
        self.lines += [f"    {line}" for line in block]
        self.lines += [f"        {line}" for line in
                       (f"if {kept_if}:\n    {done}" if kept_if else done).split("\n")]


def _reads(tracer: Any) -> list[reads.Read]:
    """What the guard reads: the objects the step names (the holders of its reads first), its
    plain values, its reads, then the tensors it reads anew at each call."""
    found = [*tracer.reads, *reads.method_reads(tracer.modules)]
    bindings = tracer.bindings
    objects = {id(obj): obj for obj in [*tracer.modules, *tracer.optimizers,
                                        *(read.holder for read in found)]}
    return [*(bindings[key] for key in objects if key in bindings),
            *(read for read in bindings.values() if read.expected[0] == "value"), *found,
            *(known.read.expecting(("tensor", known.tensor)) for known in tracer.closure
              if known.how == READ)]


def hooked(tensor: Tensor) -> bool:
    """Whether `tensor` or its AccumulateGrad has hooks."""
    accumulator = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    return bool(tensor._backward_hooks) or accumulator is not None and accumulator.has_hooks()


def _singleton(value: Any) -> bool:
    return value is None or type(value) is bool


def _nothing() -> None:
    return None


def _verified(guard: Callable[..., bool], code: str, skips: list[str],
              namespace: dict[str, Any]) -> Callable[..., bool]:
    """`guard`, also checking (VERIFY) that it never passes with a skipped check that fails: a
    change made without counting it."""
    full_code = code
    for condition in skips:  # (still evaluated: it may name the count it read)
        full_code = full_code.replace(f"    if {condition}:", f"    if ({condition}) or True:", 1)
    full = dict(namespace)
    define(full_code, "<gradgen compiled guard, checked in full>", full)
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
