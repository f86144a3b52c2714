"""A count of the changes to modules and tensors, so that a compiled step's guards can skip
what has not changed since they last checked it.

A compiled step's guard (runtime/compile/guards.py) checks, at every call, that the
modules the step calls and the tensors it holds (their parameters and buffers) are as they
were traced: the same attributes, submodules, parameters, buffers and hooks, the same
training flag, each tensor's layout, `requires_grad`, leaf-ness and hooks. Between two
training steps these almost never change, yet checking them cost most of the guard's time.

So every way gradgen offers to change one of them adds one to `COUNT.value`, and a guard
that found them as traced keeps the count it saw: while the count is the same, nothing it
checked can have changed, and it skips those checks (torch._dynamo skips a dict's guards
the same way while the dict's version tag is unchanged, PEP 509). The ways counted:

- a Module's attributes set or deleted (`__setattr__`, `__delattr__`: `model.eval()`, a
  layer or parameter replaced);
- its registries (`_parameters`, `_buffers`, `_modules`, its forward hooks) written, even
  directly (`model._modules["0"] = layer`): they are `Registry` dicts, which count;
- a hook added or removed, on a module, a tensor or a node;
- a tensor's `requires_grad` set, its `.data` replaced, an in-place op that changes its
  shape (`squeeze_`) or gives a leaf a history, `detach_()`, a resize of an `out=` tensor,
  `torch.func.functional_call`'s swaps.

What bypasses gradgen's own code is not counted: `module.__dict__[name] = value` or
`object.__setattr__(module, ...)`. Tests run every guard both ways and check that skipping
never changes its answer (guards.VERIFY).

An optimizer's own containers have a count of their own, `OPTIMIZERS`: its list of groups
and each group's list of parameters (`CountedList`), a group it made itself
(`SGD(model.parameters())`: a `ParamGroup`), its `state` and each parameter's entry there
(`State`, `StateEntry`), and its attributes (`optimizer.state = ...`). While that count
stands, a guard skips the optimizer's checks whole. A learning-rate scheduler writes
`group["lr"]` at every step; counted in `COUNT`, it would make every guard check its
modules again. A group the user gave as a dict stays that dict, as in torch
(`optimizer.param_groups[0] is group`), and its guard checks it at every call; so does a
state entry the user set as a dict of their own (`optimizer.state[p] = {...}`).
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from typing import Any


class Count:
    """A number that generated code reads and sets as `.value`."""

    __slots__ = ("value",)

    def __init__(self, value: int = 0) -> None:
        self.value = value


COUNT = Count()
OPTIMIZERS = Count()  # the writes to optimizers' own groups, lists and state


def changed() -> None:
    """Count one change (call it before or after the change: a guard reads the count only
    between two calls of its step)."""
    COUNT.value += 1


class _CountsWrites:
    """The writes of a dict (or a dict subclass: defaultdict), each counted in `_count`
    before it is made. Reads cost what the dict's do."""

    __slots__ = ()
    _count = COUNT  # where its writes are counted

    def __setitem__(self, key: Any, value: Any) -> None:
        self._count.value += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._count.value += 1
        super().__delitem__(key)

    def __ior__(self, other: Any) -> Any:
        self._count.value += 1
        dict.update(self, other)
        return self

    def pop(self, *args: Any) -> Any:
        self._count.value += 1
        return super().pop(*args)

    def popitem(self) -> tuple:
        self._count.value += 1
        return super().popitem()

    def clear(self) -> None:
        self._count.value += 1
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._count.value += 1
        dict.update(self, *args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._count.value += 1
        return super().setdefault(key, default)


class Registry(_CountsWrites, dict):
    """A dict that counts every change to it: a module's parameters, buffers, submodules
    and forward hooks."""

    __slots__ = ()


class Hooks(Registry):
    """A module's forward hooks (or pre-hooks), shown as torch shows them, an
    OrderedDict."""

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(OrderedDict(self))


class ParamGroup(Registry):
    """A parameter group an optimizer made (`{"params": [...], "lr": ...}`): a dict that
    counts its writes in OPTIMIZERS."""

    __slots__ = ()
    _count = OPTIMIZERS


class StateEntry(Registry):
    """One parameter's entry in an optimizer's `state` (`{"step": ..., "exp_avg": ...}`):
    a dict that counts its writes in OPTIMIZERS."""

    __slots__ = ()
    _count = OPTIMIZERS


class State(_CountsWrites, defaultdict):
    """An optimizer's `state`, torch's `defaultdict(dict)`, whose writes count in
    OPTIMIZERS, and whose entries made on first read (`state[p]`) are StateEntry dicts.
    (defaultdict makes a missing entry through `__setitem__`: that counts too.)"""

    __slots__ = ()
    _count = OPTIMIZERS

    def __init__(self, default_factory: Any = StateEntry, *args: Any) -> None:
        # (`copy.copy` and pickle call the class with the factory, then set the items.)
        super().__init__(default_factory, *args)


def _counted(name: str) -> Any:
    method = getattr(list, name)

    def counted(self: list, *args: Any) -> Any:
        OPTIMIZERS.value += 1
        return method(self, *args)

    counted.__name__ = counted.__qualname__ = name
    counted.__doc__ = method.__doc__
    return counted


class CountedList(list):
    """A list that counts its writes in OPTIMIZERS: an optimizer's `param_groups`, and
    each group's `params`. Reads cost what a list's do."""

    __slots__ = ()


for _name in ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend",
              "insert", "pop", "remove", "clear", "sort", "reverse"):
    setattr(CountedList, _name, _counted(_name))
del _name


def counts_its_writes(optimizer: Any) -> bool:
    """Whether every container of `optimizer` that a guard reads counts its writes in
    OPTIMIZERS: its groups (ParamGroup, not a dict the user gave), the lists of groups and
    of parameters, its state and every entry there."""
    attributes = vars(optimizer)
    groups, state = attributes.get("param_groups"), attributes.get("state")
    if type(groups) is not CountedList or type(state) is not State:
        return False
    return all(type(group) is ParamGroup and type(group.get("params")) is CountedList
               for group in groups) and \
        all(type(entry) is StateEntry for entry in dict.values(state))
