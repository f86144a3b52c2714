"""The plain values a step reads through the objects it names: `cfg.alpha`, `self.scale`,
`config["gamma"]`, `schedule[epoch]`, `optimizer.param_groups[0]["lr"]`.

A number that reaches a kernel is a constant of the trace: the tracer sees the number, not
where the step found it. The globals and free variables the step names are guarded by
value (step.py's `scalars`), a module's attributes by identity (`_module_key`); this file
guards what the step reaches one to four steps further, through plain objects (an
argparse Namespace, a config class, the `self` of a bound method, an optimizer),
classes, dicts, lists and tuples, so that `cfg.alpha = 0.25` between two calls makes a
new trace instead of a step that still multiplies by 0.5.

Which attributes: those whose names the step's code reads (its `co_names`, with those of
the code nested in it, of the Python functions it names, and of the methods of the plain
objects it reaches), so that a counter the step never reads (`self.global_step`) can
change freely. Which items: all of them (a subscript's key is not a name), for containers
of at most MAX_ITEMS. A plain value (None, bool, int, float, str) is compared by type and
value; anything else by identity, and walked into if plain (a module or a tensor is not:
each is guarded as itself). So an optimizer's learning rates are compared by value when
the step's own code reads `param_groups` (its update reads them afresh at every call, but
the step's own arithmetic would keep the traced one).

The values are taken before the traced call runs: a step that changes one of them itself
traces again at the next call, and runs eagerly once the cache is full: slower, never
wrong.
"""

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
    """One value a later call must find where the traced one found it. `holder` is checked
    before it (a name's object, guarded by identity, or a value an earlier Read checked by
    identity): the read goes through the object itself."""

    holder: Any
    kind: str  # "attribute" (vars(holder).get), "item" (holder.get / holder[i]), "length"
    key: Any
    expected: tuple  # ("value", (type, value)) or ("object", obj) or ("length", n)


def is_plain_value(value: Any) -> bool:
    return value is None or type(value) in (bool, int, float, str)


def _walked(value: Any) -> bool:
    """Whether the values inside `value` are the step's plain data: a container, a class
    of the program's own, or an object with a `__dict__` that is none of the kinds guarded
    elsewhere or not at all (a module, a tensor, a function, a Python module)."""
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


def code_names(functions: list[Callable]) -> set[str]:
    """The names the functions' code reads (globals and attributes alike), with the code
    nested in them (comprehensions, inner functions, lambdas)."""
    names: set[str] = set()
    stack = [f.__code__ for f in functions if isinstance(getattr(f, "__code__", None),
                                                           types.CodeType)]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return names


class Source:
    """Where a later call finds what the step reads: a global or a free variable it names
    (an item of its globals, its cell), or a tensor reached through an object it names
    (`self.x`, `trainer.batch["x"]`, `batches[0]`): one read from `container`, whose
    identity the Reads before it guard (Dynamo's `L['self'].x`). Called, it reads the
    tensor (None where there is none); the generated guard and step write the read out
    (`expression`)."""

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
        """The read as an expression, `container` the name of the holder (a list's length
        is checked before: reads.py's "length" Read)."""
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
    """Two places where the traced call found the same tensor (`self.x` and
    `self.batch[0]`): a later call must find one object at both, or the step, which reads
    the first, would miss a rebinding of the other."""

    first: Source
    other: Source


def plain_reads(roots: list[Any], functions: list[Callable],
                sources: dict[int, Source] | None = None,
                labels: list[str] | None = None) -> list[Read]:
    """The Reads under `roots` (the objects the step names, and a bound method's self),
    for the attribute names of `functions` and of the methods found on the way. The
    tensors found on the way go into `sources` (id -> where it is found), named from
    `labels`, the names of the roots."""
    names = code_names(functions)
    while True:  # a method the step calls on a plain object reads names of its own
        methods = [m for root in roots if _walked(root) and not isinstance(root, dict |
                                                                          list | tuple)
                   for m in _methods(type(root), names)]
        more = code_names(methods) - names
        if not more:
            break
        names |= more
    walk = _Walk(names, {} if sources is None else sources)
    for index, root in enumerate(roots):
        walk.walk(root, DEPTH, labels[index] if labels else "")
    return walk.found


def method_reads(modules: list[Any]) -> list[Read]:
    """The methods a module's `forward` calls on its own class (`self.encode(x)`), found by
    the names its code reads, and theirs in turn: patched on the class after the trace
    (`Model.encode = ...`), each makes a new trace. (`forward` itself is guarded by
    guards.py's module check; an attribute of the instance that hides a method changes
    the instance's attributes, guarded there too.)"""
    found: list[Read] = []
    seen: set[tuple[int, str]] = set()
    for cls in {id(type(m)): type(m) for m in modules}.values():
        if not _own_class(cls):
            continue
        names: set[str] = set()
        more = code_names([cls.forward])
        while more - names:
            names |= more
            more = code_names(list(_methods(cls, names)))
        for name in sorted(names - {"forward"}):
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


def _methods(cls: type, names: set[str]) -> Iterator[Callable]:
    """The user-written functions of `cls` named in `names`, found in the classes' own
    dicts (no descriptor or metaclass code runs)."""
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
        """Not the object's own: its class's (`cfg.alpha` where `class Config: alpha =
        0.5`). The object must go on without one of its own, and the class's value is
        guarded."""
        for klass in type(holder).__mro__:
            if name in vars(klass):
                if _own_class(klass):
                    self.found.append(Read(holder, "attribute", name, ("object", MISSING)))
                    value = vars(klass)[name]
                    self.read(Read(klass, "attribute", name, _expected(value)), value, depth,
                              f"{klass.__name__}.{name}")
                break

    def read(self, read: Read, value: Any, depth: int, path: str) -> None:
        """Keep `read`, and walk into what it found; a tensor is a source instead: found
        anew at each call, and guarded by its metadata (its holder by identity)."""
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
