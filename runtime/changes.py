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

An optimizer's parameter groups have a count of their own, `GROUPS`: a group the optimizer
made itself (`SGD(model.parameters())`) is a `ParamGroup`, a dict that counts its writes
there, so that a guard skips its keys and hyperparameters while that count stands. A
learning-rate scheduler writes `group["lr"]` at every step; counted in `COUNT`, it would
make every guard check its modules again. A group the user gave as a dict stays that dict,
as in torch (`optimizer.param_groups[0] is group`), and its guard checks it at every call.
"""

from __future__ import annotations

from typing import Any


class Count:
    """A number that generated code reads and sets as `.value`."""

    __slots__ = ("value",)

    def __init__(self, value: int = 0) -> None:
        self.value = value


COUNT = Count()
GROUPS = Count()  # the writes to optimizers' ParamGroups


def changed() -> None:
    """Count one change (call it before or after the change: a guard reads the count only
    between two calls of its step)."""
    COUNT.value += 1


class Registry(dict):
    """A dict that counts every change to it: a module's parameters, buffers, submodules
    and forward hooks. Reads cost what a dict's do."""

    __slots__ = ()
    _count = COUNT  # where its writes are counted

    def __setitem__(self, key: Any, value: Any) -> None:
        self._count.value += 1
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self._count.value += 1
        dict.__delitem__(self, key)

    def __ior__(self, other: Any) -> Registry:
        self._count.value += 1
        dict.update(self, other)
        return self

    def pop(self, *args: Any) -> Any:
        self._count.value += 1
        return dict.pop(self, *args)

    def popitem(self) -> tuple:
        self._count.value += 1
        return dict.popitem(self)

    def clear(self) -> None:
        self._count.value += 1
        dict.clear(self)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._count.value += 1
        dict.update(self, *args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._count.value += 1
        return dict.setdefault(self, key, default)


class ParamGroup(Registry):
    """A parameter group an optimizer made (`{"params": [...], "lr": ...}`): a dict that
    counts its writes in GROUPS."""

    __slots__ = ()
    _count = GROUPS
