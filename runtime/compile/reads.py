"""What a step reads, as Reads: where a later call finds each value (a global, a free
variable, an attribute, an item) and what it must find there. From the globals and free
variables a step names (and `self`), the walk goes up to DEPTH steps for the attribute names
its code reads: the plain values (`cfg.alpha`, `config["gamma"]`,
`optimizer.param_groups[0]["lr"]`) compare by type and value, other objects by identity, and
the tensors found (`self.x`) are read anew at each call. guards.py writes every Read into the
guard, so that `cfg.alpha = 0.25` between two calls makes a new trace. See docs/compile.md."""

from __future__ import annotations

import ast
import operator
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from runtime._tensor import Tensor
from runtime.changes import Registry
from runtime.compile.emit import attribute, call, subscript, var
from runtime.nn.module import Module

DEPTH = 4  # reads from a name the step binds: `self.opt.param_groups[0]["lr"]` at most
MAX_ITEMS = 64  # a larger dict, list or tuple is not walked (see docs/compile.md)

MISSING = object()  # what a read finds where the traced object had no such attribute/key


def is_plain_value(value: Any) -> bool:
    return value is None or type(value) in (bool, int, float, str)


def _walked(value: Any) -> bool:
    """Whether the values inside `value` are the step's plain data (a small container, a class
    of the program's, a plain object)."""
    if isinstance(value, dict | list | tuple):
        return len(value) <= MAX_ITEMS
    if isinstance(value, type):
        return _own_class(value)
    if isinstance(value, Module | Tensor | types.ModuleType | types.FunctionType |
                  types.BuiltinFunctionType | types.MethodType):
        return False
    try:
        attributes = vars(value)
    except TypeError:
        return False
    return type(attributes) is dict  # (a `__dict__` of another kind is not read)


def _own_class(cls: type) -> bool:
    """A class the program wrote (not Python's, numpy's or gradgen's)."""
    module = getattr(cls, "__module__", None) or "builtins"
    return not module.startswith(("builtins", "runtime", "numpy", "typing", "collections"))


def code_names(functions: list[Any]) -> dict[str, None]:
    """The names the functions' code (or code objects) reads, with the code nested in it,
    in order (a dict's keys)."""
    names: dict[str, None] = {}
    for code in functions:
        code = getattr(code, "__code__", code)
        if isinstance(code, types.CodeType):
            names.update(dict.fromkeys(code.co_names))
            names.update(code_names(list(code.co_consts)))
    return names


class Read:
    """One place a later call reads (an attribute of `holder`, its item, its length, or a free
    variable's cell, `holder`) and what it must find there: `expected` is ("value", (type,
    value)), ("object", obj), ("length", n), ("tensor", the tensor: its metadata as traced) or
    ("same", another Read). Called, it reads; `path` names it (`self.x`)."""

    __slots__ = ("expected", "holder", "key", "kind", "others", "path")

    def __init__(self, holder: Any, kind: str, key: Any, expected: tuple,
                 path: str = "") -> None:
        self.holder, self.kind, self.key, self.expected, self.path = \
            holder, kind, key, expected, path
        self.others: list[Read] = []  # other places the walk found the same tensor or module

    @property
    def value(self) -> Any:
        """What the read found when traced (a value's or an object's)."""
        kind, expected = self.expected
        return expected[1] if kind == "value" else expected

    def expecting(self, expected: tuple) -> Read:
        """The same read, expecting something else."""
        return Read(self.holder, self.kind, self.key, expected, self.path)

    def __call__(self) -> Any:
        if self.kind == "cell":
            return self.holder.cell_contents
        if self.kind == "attribute":
            return vars(self.holder).get(self.key)
        if isinstance(self.holder, dict):
            return self.holder.get(self.key)
        return self.holder[self.key] if self.key < len(self.holder) else None

    def tree(self, holder: str, key: ast.expr | None = None,
             default: ast.expr | None = None) -> ast.expr:
        """The read as an expression: `holder` names the holder, `key` is the key's (a constant
        if not given); `default` is found where the holder has no such attribute or item."""
        if self.kind == "cell":
            return attribute(holder, "cell_contents")
        if self.kind == "length":
            return call(var("len"), [var(holder)])
        key = ast.Constant(self.key) if key is None else key
        if self.kind == "attribute":
            return call(attribute(holder, "__dict__", "get"), [key, *filter(None, [default])])
        if isinstance(self.holder, dict) and default:
            return call(attribute(holder, "get"), [key, default])
        return subscript(holder, key)


def bound(container: Any, key: Any, expected: tuple) -> Read:
    """Where the step finds a global (`container` its globals) or a free variable (a cell)."""
    kind = "item" if isinstance(container, dict) else "cell"
    return Read(container, kind, key, expected,
                f"the step's {'global' if kind == 'item' else 'free variable'} {key}")


def plain_reads(roots: list[Any], functions: list[Callable],
                sources: dict[int, Read] | None = None,
                labels: list[str] | None = None) -> list[Read]:
    """The Reads under `roots`, for the attribute names of `functions` and of the methods found
    on the way; tensors found go into `sources`."""
    classes = [type(root) for root in roots
               if _walked(root) and not isinstance(root, dict | list | tuple)]
    walk = _Walk(_with_methods(classes, set(code_names(functions))),
                 {} if sources is None else sources)
    for index, root in enumerate(roots):
        walk.walk(root, DEPTH, labels[index] if labels else "")
    return walk.found


def method_reads(modules: list[Any]) -> list[Read]:
    """The methods of its own class a module's `forward` calls, found by the names its code
    reads: patched after the trace, each makes a new trace."""
    found: dict[tuple[int, str], Read] = {}
    for cls in {id(type(m)): type(m) for m in modules}.values():
        if _own_class(cls):
            names = sorted(_with_methods([cls], set(code_names([cls.forward]))) - {"forward"})
            for klass, name, method in _methods(cls, names):
                if _own_class(klass):
                    found.setdefault((id(klass), name),
                                     Read(klass, "attribute", name, ("object", method)))
    return list(found.values())


def _with_methods(classes: list[type], names: set[str]) -> set[str]:
    """`names`, with the names read by the classes' methods named there, to a fixed point."""
    while more := code_names([method for cls in classes for _, _, method in _methods(cls, names)
                              if not (method.__module__ or "").startswith("runtime")]
                             ).keys() - names:
        names |= more
    return names


def _methods(cls: type, names: Iterable[str]) -> Iterator[tuple[type, str, Callable]]:
    """(class, name, function) for each function of `cls` (or of the class of its MRO that has
    it) named in `names`."""
    for name in names:
        klass = next((klass for klass in cls.__mro__ if vars(klass).get(name) is not None), None)
        if klass is not None and isinstance(vars(klass)[name], types.FunctionType):
            yield klass, name, vars(klass)[name]


# The containers whose contents a step must leave as they were: a module's, the step's own.
CONTAINERS = (list, dict, set, Registry)


def contents(container: list | dict | set) -> tuple:
    """What a container holds, to compare after the step (items by identity)."""
    if type(container) is list:
        return (), tuple(container)
    if type(container) is dict or type(container) is Registry:
        return tuple(container), tuple(container.values())
    return frozenset(container), ()


def same_contents(now: tuple, before: tuple) -> bool:
    return now[0] == before[0] and len(now[1]) == len(before[1]) and \
        not any(map(operator.is_not, now[1], before[1]))


def expected_of(value: Any) -> tuple:
    return ("value", (type(value), value)) if is_plain_value(value) else ("object", value)


class _Walk:
    """The walk of plain_reads: the Reads found, the objects seen, the tensors' sources."""

    def __init__(self, names: set[str], sources: dict[int, Read]) -> None:
        self.names, self.sources = names, sources
        self.found: list[Read] = []
        self.seen: set[int] = set()

    def walk(self, holder: Any, depth: int, path: str) -> None:
        if depth == 0 or id(holder) in self.seen:
            return
        self.seen.add(id(holder))
        if not _walked(holder):
            return
        if isinstance(holder, list | tuple):
            self.found.append(Read(holder, "length", None, ("length", len(holder))))
        if isinstance(holder, dict | list | tuple):
            items = holder.items() if isinstance(holder, dict) else enumerate(holder)
            for key, value in list(items):
                self.read(holder, "item", key, value, depth, f"{path}[{key!r}]")
            return
        self.attributes(holder, depth, path)

    def attributes(self, holder: Any, depth: int, path: str) -> None:
        """The attributes of `holder` that the step's code names, its own or its class's."""
        attributes = vars(holder)
        for name in sorted(self.names):
            if name in attributes:
                value = attributes[name]
                self.read(holder, "attribute", name, value, depth, f"{path}.{name}")
            elif not isinstance(holder, type):
                self.from_class(holder, name, depth, path)

    def from_class(self, holder: Any, name: str, depth: int, path: str) -> None:
        """A class attribute (`class Config: alpha = 0.5`): the object must go on without its
        own, and the class's value is guarded."""
        for klass in type(holder).__mro__:
            if name in vars(klass):
                if _own_class(klass):
                    self.found.append(Read(holder, "attribute", name, ("object", MISSING)))
                    value = vars(klass)[name]
                    self.read(klass, "attribute", name, value, depth, f"{klass.__name__}.{name}")
                break

    def read(self, holder: Any, kind: str, key: Any, value: Any, depth: int, path: str) -> None:
        """Keep the read of `value` and walk into it. A tensor's read goes into `sources`
        instead (the step reads it anew at each call); a module's goes there too (to name its
        parameters)."""
        read = Read(holder, kind, key, expected_of(value), path)
        if isinstance(value, Tensor | Module):
            first = self.sources.setdefault(id(value), read)
            if first is not read:
                first.others.append(read)
        if isinstance(value, Tensor):
            return
        self.found.append(read)
        if read.expected[0] == "object":
            self.walk(value, depth - 1, path)
