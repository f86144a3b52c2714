"""The plain values a step reads through the objects it names (`cfg.alpha`, `self.scale`,
`config["gamma"]`, `optimizer.param_groups[0]["lr"]`), and where it finds the tensors it
reaches so (`self.x`): walked up to DEPTH steps from its globals, free variables and `self`,
for the attribute names its code reads, and guarded (guards.py) so that `cfg.alpha = 0.25`
between two calls makes a new trace. Plain values compare by type and value, other objects by
identity; modules and tensors are guarded as themselves. See docs/compile.md."""

from __future__ import annotations

import ast
import types
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from runtime._tensor import Tensor
from runtime.compile.emit import attribute, call, subscript
from runtime.nn.module import Module

DEPTH = 4  # reads from a name the step binds: `self.opt.param_groups[0]["lr"]` at most
MAX_ITEMS = 64  # a larger dict, list or tuple is not walked (see docs/compile.md)

MISSING = object()  # what a read finds where the traced object had no such attribute/key


class Read(NamedTuple):
    """One value a later call must find where the traced one did, through `holder` (checked
    before it)."""

    holder: Any
    kind: str  # "attribute" (vars(holder).get), "item" (holder.get / holder[i]), "length"
    key: Any
    expected: tuple  # ("value", (type, value)) or ("object", obj) or ("length", n)


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


class Source:
    """Where a later call finds what the step reads: one read from `container` (a global, a free
    variable's cell, `self.x`). Called, it reads; `tree` and `expression` write the read out."""

    __slots__ = ("container", "key", "kind", "others", "path")

    def __init__(self, container: Any, kind: str, key: Any, path: str) -> None:
        self.container, self.kind, self.key, self.path = container, kind, key, path
        self.others: list[Source] = []  # other places the walk found the same tensor

    def __call__(self) -> Any:
        if self.kind == "cell":  # a free variable's
            return self.container.cell_contents
        if self.kind == "attribute":
            return vars(self.container).get(self.key)
        if isinstance(self.container, dict):
            return self.container.get(self.key)
        return self.container[self.key] if self.key < len(self.container) else None

    def tree(self, container: str) -> ast.expr:
        """The read as an expression, `container` the name of the holder."""
        if self.kind == "cell":
            return attribute(container, "cell_contents")
        key = ast.Constant(self.key)
        if self.kind == "attribute":
            return call(attribute(container, "__dict__", "get"), [key])
        if isinstance(self.container, dict):
            return call(attribute(container, "get"), [key])
        return subscript(container, key)

    def expression(self, container: str) -> str:
        """The read as source, for the generated guard."""
        return ast.unparse(self.tree(container))


class Alias(NamedTuple):
    """Two places where the trace found the same tensor: a later call must find one object at
    both."""

    first: Source
    other: Source


def plain_reads(roots: list[Any], functions: list[Callable],
                sources: dict[int, Source] | None = None,
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
    found: list[Read] = []
    seen: set[tuple[int, str]] = set()
    for cls in {id(type(m)): type(m) for m in modules}.values():
        if not _own_class(cls):
            continue
        for name in sorted(_with_methods([cls], set(code_names([cls.forward]))) - {"forward"}):
            for klass in cls.__mro__:
                value = vars(klass).get(name)
                if value is None:
                    continue
                if isinstance(value, types.FunctionType) and _own_class(klass) and \
                        (id(klass), name) not in seen:
                    seen.add((id(klass), name))
                    found.append(Read(klass, "attribute", name, ("object", value)))
                break
    return found


def _with_methods(classes: list[type], names: set[str]) -> set[str]:
    """`names`, with the names read by the classes' methods named there, to a fixed point."""
    while more := code_names([m for cls in classes for m in _methods(cls, names)]).keys() - names:
        names |= more
    return names


def _methods(cls: type, names: set[str]) -> Iterator[Callable]:
    """The user-written functions of `cls` named in `names`, from the classes' dicts."""
    for name in names:
        for klass in cls.__mro__:
            method = vars(klass).get(name)
            if method is not None:
                if isinstance(method, types.FunctionType) and \
                        not (method.__module__ or "").startswith("runtime"):
                    yield method
                break


def _expected(value: Any) -> tuple:
    return ("value", (type(value), value)) if is_plain_value(value) else ("object", value)


class _Walk:
    """The walk of plain_reads: the Reads found, the objects seen, the tensors' sources."""

    def __init__(self, names: set[str], sources: dict[int, Source]) -> None:
        self.names, self.sources = names, sources
        self.found: list[Read] = []
        self.seen: set[int] = set()

    def walk(self, holder: Any, depth: int, path: str) -> None:
        if depth == 0 or id(holder) in self.seen:
            return
        self.seen.add(id(holder))
        if not _walked(holder):
            return
        if isinstance(holder, dict):
            for key, value in list(holder.items()):
                self.read(Read(holder, "item", key, _expected(value)), value, depth,
                          f"{path}[{key!r}]")
            return
        if isinstance(holder, list | tuple):
            self.found.append(Read(holder, "length", None, ("length", len(holder))))
            for key, value in enumerate(holder):
                self.read(Read(holder, "item", key, _expected(value)), value, depth,
                          f"{path}[{key}]")
            return
        attributes = vars(holder)
        for name in sorted(self.names):
            if name in attributes:
                value = attributes[name]
                self.read(Read(holder, "attribute", name, _expected(value)), value, depth,
                          f"{path}.{name}")
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
                    self.read(Read(klass, "attribute", name, _expected(value)), value, depth,
                              f"{klass.__name__}.{name}")
                break

    def read(self, read: Read, value: Any, depth: int, path: str) -> None:
        """Keep `read` and walk into what it found; a tensor is a Source instead, found anew at
        each call."""
        if isinstance(value, Tensor | Module):  # (a module's: to name its parameters)
            found = Source(read.holder, read.kind, read.key, path)
            first = self.sources.setdefault(id(value), found)
            if first is not found:
                first.others.append(found)
        if isinstance(value, Tensor):
            return
        self.found.append(read)
        if read.expected[0] == "object":
            self.walk(value, depth - 1, path)
