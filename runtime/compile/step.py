"""`runtime.compile(fn)`: a training step traced once, then run as one generated function.

The first call with given guards runs `fn` eagerly while the tracer (trace.py) listens;
if nothing stopped the trace, the lines it wrote become the source of one Python
function (`compiled.code`), which later calls run instead of `fn`. Each cache entry is
kept under its guards:

- the arguments: for a Tensor its shape, dtype, strides, requires_grad, whether it is a
  leaf and has hooks; any other argument by value (it was a constant of the trace);
- the global modes: grad mode, anomaly mode, the forward-AD level, tensor_backward();
- the tensors the step reads that are not arguments (parameters, closure tensors): the
  same checks as an argument's, on the same Tensor objects;
- every module called: its training mode and whether it has forward hooks;
- every optimizer stepped: its parameters, their state, its hyperparameters (the
  learning rate excepted: the update reads it at every step).

A call whose guards match no entry traces again (a small cache, `cache_size` entries),
and past that runs eagerly. A trace that stopped leaves an entry that runs `fn` eagerly,
with the reason in `fallback_reason`. Either way the result is eager gradgen's.
"""

from __future__ import annotations

import ast
import builtins
import functools
import linecache
import os
import random
import re
import sys
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime import kernels, random_ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.compile import config, guards, optim
from runtime.compile.emit import Source, TraceBreak, call, names_in, var
from runtime.compile.guards import Keywords
from runtime.compile.joint import Joint
from runtime.compile.module import OptimizedModule
from runtime.compile.optimize import last_uses, optimize
from runtime.compile.reads import Alias, is_plain_value, method_reads
from runtime.compile.trace import MODES, Tracer, _getter, current, grad_state, listening
from runtime.dtypes import dtype
from runtime.namespaces import array_ops
from runtime.nn.module import Module
from runtime.node import (
    ERR_BACKWARD_TWICE,
    Node,
    SavedValue,
    SavedVariable,
    SavedVariableList,
)

# Every compiled step, for torch.compiler.reset().
ALL_STEPS: weakref.WeakSet = weakref.WeakSet()
# Set (to anything) by `python -m runtime.compile`: every trace prints its code.
PRINT_CODE = "GRADGEN_COMPILE_PRINT"
# How many steps printed their code or their reason (python -m runtime.compile says so
# when none did).
PRINTED = [0]


def accumulate(variable: Tensor, grad: np.ndarray) -> None:
    """AccumulateGrad on arrays (runtime/node.py): set `.grad`, or add to the one there.

    The generated code hands over a gradient that no other variable of the step holds,
    and a copy of any other (a broadcast view, a forward value).
    """
    if variable._grad is None:
        variable._grad = Tensor._make(grad, None)
    else:
        variable._grad._accumulate_(Tensor._make(grad, None))


def wrap(array: np.ndarray) -> Tensor:
    return Tensor._make(array, None)


class SpentBackward(Node):
    """The grad_fn of a tensor a compiled step returns that has one in eager (the loss),
    a subclass named as eager's node is (`SumBackward0`: spent_node_class): its graph was
    walked by the step's backward and freed, so another backward raises eager's error."""

    __slots__ = ()

    def apply(self, grads: list, ops: Any = None) -> list:
        raise RuntimeError(ERR_BACKWARD_TWICE)


@functools.cache
def spent_node_class(name: str) -> type[SpentBackward]:
    return type(name, (SpentBackward,), {"__slots__": ()})


def spent(array: np.ndarray, node_class: type[SpentBackward]) -> Tensor:
    """`array` as a tensor whose grad_fn is a spent node of `node_class`."""
    node = node_class()
    node._input_metadata = ((array.shape, array.dtype),)
    return Tensor._make(array, node)


def _tensor_key(tensor: Tensor) -> tuple:
    data = tensor._data
    accumulator = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    hooked = bool(tensor._backward_hooks) or (accumulator is not None
                                              and accumulator.has_hooks())
    return (data.shape, data.dtype.str, data.strides, tensor._requires_grad,
            tensor.grad_fn is None, hooked, tensor._counter is not None and
            tensor._counter.inference)


def _argument_key(value: Any) -> Any:
    if isinstance(value, Tensor):
        return ("tensor", _tensor_key(value))
    if is_plain_value(value):
        return (type(value).__name__, value)
    if type(value) is dtype:  # `x.to(torch.float64)`: one object per dtype
        return ("dtype", value)
    if type(value) in (tuple, list):  # an RNN's hidden state (h, c), a batch (x, y)
        return (type(value).__name__, tuple(map(_argument_key, value)))
    if type(value) in (dict, Keywords) and all(type(key) is str for key in value):
        # a batch by name; or the call's keyword arguments
        kind = "dict" if type(value) is dict else "keywords"
        return (kind, tuple((key, _argument_key(item)) for key, item in value.items()))
    raise TraceBreak(f"an argument of type {type(value).__name__} (compiled steps take "
                     "tensors, Python numbers, dtypes, and tuples, lists and dicts of them)")


# What an entry made without a trace (a call that runs eagerly) guards: nothing.
_NO_TRACE = types.SimpleNamespace(closure_tensors=(), sources={}, reads=(), modules=(),
                                  optimizers=(), bindings={})


class _Entry:
    """One trace: its guards on the world outside the arguments, and its function (None:
    the step runs eagerly, for `reason`)."""

    def __init__(self, function: Callable | None, code: str, reason: str | None,
                 tracer: Tracer | None, key: tuple = ((), ())) -> None:
        self.function = function
        self.code = code
        self.reason = reason
        # What the call that traced it was given: its arguments' keys, the global modes.
        self.arguments, self.modes = key
        self.arity = len(self.arguments)
        self.keywords = bool(self.arguments) and self.arguments[-1][0] == "keywords"
        tracer = tracer or _NO_TRACE
        tensors = list(tracer.closure_tensors)
        # Each tensor as the next call finds it: where fn names it, or the one held.
        self.tensors = [tracer.sources.get(id(t), _held(t)) for t in tensors]
        self.tensor_keys = [_tensor_key(t) for t in tensors]
        # The modules and optimizers fn names must still be the ones traced.
        # (And the objects the step reads plain values through: reads.py.)
        self.reads = [*tracer.reads, *method_reads(tracer.modules)]
        self.named, self.scalars = _named_and_scalars(tracer, self.reads)
        self.modules = list(tracer.modules)
        self.optimizers = [optim.Guard(o) for o in tracer.optimizers]
        # The checks above as one generated function (guards.py).
        held = [t if id(t) not in tracer.sources else find
                for t, find in zip(tensors, self.tensors, strict=True)]
        # (No modes for an entry made without a call: it is never looked up.)
        modes = [(holder, name, value)
                 for (holder, name), value in zip(MODES, self.modes, strict=False)]
        self.guard_code, self._guard = guards.build(
            self.arguments, modes, held, self.tensor_keys, self.named, self.scalars,
            self.reads, self.modules, self.optimizers)

    def holds(self, args: tuple = ()) -> bool:
        """Whether a call with `args` (as many as traced) finds the world as it was traced."""
        return self._guard(*args)


def _named_and_scalars(tracer: Any, reads: list) -> tuple[list, list]:
    """The objects fn names that must still be the ones traced (the modules, optimizers
    and holders of reads among its globals and free variables), each with where fn finds
    it; and the plain values (numbers, strings, None) it names so, by value: the trace
    baked them in as constants, so another value needs another trace."""
    objects = {id(obj): obj for obj in [*tracer.modules, *tracer.optimizers,
                                        *(read.holder for read in reads
                                          if type(read) is not Alias)]}
    named = [(_getter_of(tracer, obj), obj) for obj in objects.values()
             if id(obj) in tracer.bindings]
    scalars = [(_getter(container, key), _scalar_key(value))
               for container, key, value in tracer.bindings.values() if is_plain_value(value)]
    return named, scalars


def _scalar_key(value: Any) -> tuple:
    """A plain value with its type (1 == 1.0 == True, but each traces differently)."""
    return (type(value), value) if is_plain_value(value) else (object, id(value))


def _held(tensor: Tensor) -> Callable[[], Tensor]:
    return lambda: tensor


def _getter_of(tracer: Tracer, obj: Any) -> Callable[[], Any]:
    container, key, _ = tracer.bindings[id(obj)]
    return _getter(container, key)


class CompiledStep:
    """What `runtime.compile(fn)` returns: call it as `fn`."""

    def __init__(self, fn: Callable, cache_size: int | None = None,
                 optimizations: bool = True) -> None:
        self.fn = fn
        self._cache_size = cache_size  # None: torch._dynamo.config's recompile_limit
        self.optimizations = optimizations
        self.traces = 0  # how many times fn ran under the tracer
        self.reset()
        # A function compiled in a class body (`@torch.compile` on `forward`): the compiled
        # step of each instance's bound method (__get__).
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        ALL_STEPS.add(self)
        if isinstance(fn, types.FunctionType | types.MethodType):
            functools.update_wrapper(self, fn)

    @property
    def cache_size(self) -> int:
        """How many traces are kept before the step runs eagerly (torch._dynamo.config's
        recompile_limit, 8, unless given)."""
        return config.recompile_limit if self._cache_size is None else self._cache_size

    def reset(self) -> None:
        """Forget every trace (torch.compiler.reset()): the next call traces again."""
        self._entries: dict[tuple, list[_Entry]] = {}
        self._count = 0
        self.last: _Entry | None = None  # the entry of the latest call
        self._hot: _Entry | None = None  # the entry the latest call ran, if generated code
        self._passing = 0  # traces stopped for a reason the next call may not have
        self._stopped: str | None = None  # why the latest trace that stopped did

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """`model.forward` where the class compiled its `forward`: the instance's own
        compiled step of the bound method, kept as long as the instance is."""
        if instance is None or not isinstance(self.fn, types.FunctionType):
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = self._bound[instance] = CompiledStep(
                types.MethodType(self.fn, instance), self._cache_size, self.optimizations)
        return bound

    # -- what the user reads ---------------------------------------------------------------
    @property
    def code(self) -> str | None:
        """The generated source of the latest call's trace (None if it runs eagerly)."""
        return None if self.last is None or self.last.function is None else self.last.code

    @property
    def fallback_reason(self) -> str | None:
        """Why the latest call ran eagerly (None if it ran the generated code)."""
        return None if self.last is None else self.last.reason

    # -- calls -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The usual call: the entry the previous one ran, whose guard (arguments and modes
        # included) holds again. Keyword arguments come as one last argument, a dict.
        # (`self.last` is that entry already: `_call` sets `_hot` only with it.)
        hot = self._hot
        if hot is not None and not _modes.active:
            if kwargs:
                if hot.keywords:
                    args = (*args, Keywords(kwargs))
                    if len(args) == hot.arity and hot._guard(*args):
                        return hot.function(*args)
                    return self._call(args)
            elif len(args) == hot.arity and hot._guard(*args):
                return hot.function(*args)
        return self._call((*args, Keywords(kwargs)) if kwargs else args)

    def _run(self, args: tuple) -> Any:
        """fn, called eagerly as it was called."""
        if args and type(args[-1]) is Keywords:
            return self.fn(*args[:-1], **args[-1])
        return self.fn(*args)

    def _call(self, args: tuple) -> Any:
        """Find the entry by the arguments' keys and the modes, and the first of those
        whose guard holds; or trace. Inside another step's trace (a compiled model called
        by a compiled step), it runs eagerly: its ops are that step's."""
        if _modes.active and current() is not None:
            return self._run(args)
        self._hot = None
        try:
            key = (tuple(_argument_key(a) for a in args), grad_state())
        except TraceBreak as stop:
            self.last = _Entry(None, "", stop.reason, None)
            return self._run(args)
        entries = self._entries.setdefault(key, [])
        for entry in entries:
            if entry.holds(args):
                self.last = entry
                if entry.function is None:
                    return self._run(args)
                self._hot = entry
                return entry.function(*args)
        if self._count >= self.cache_size:
            stopped = self._stopped and f"; the last trace stopped: {self._stopped}"
            self.last = _Entry(None, "", f"the cache of {self.cache_size} traces is full "
                               f"(guards kept failing{stopped or ''})", None)
            return self._run(args)
        return self._trace(entries, args, key)

    def _trace(self, entries: list[_Entry], args: tuple, key: tuple) -> Any:
        tracer = Tracer(args, self.fn)
        tracer.numpy_forms = self.optimizations
        self.traces += 1
        drawn = _python_draws()
        for module in _named_modules(tracer, self.fn):
            tracer.watch(module)
        for _, name, value in tracer.bindings.values():
            if type(value) in (list, dict, set):  # a global or free variable's
                tracer.watch(value, str(name))
        with listening(tracer):
            result = self._run(args)
        _check_python(tracer, drawn)
        built = joint = None
        if tracer.broken is None:
            try:
                if not tracer.backwards and _returns_a_graph(result):
                    # A forward whose backward runs later (a model compiled on its own):
                    # a generated forward and backward, joined by one node (joint.py).
                    joint = Joint(tracer, result)
                    built = self._build_joint(joint, len(args))
                else:
                    tracer.phase = "epilogue"
                    built = self._build(tracer, len(args), _render_result(tracer, result))
            except TraceBreak as stop:
                tracer.stop(stop.reason)
        if tracer.broken is not None:
            entry = self._stopped_entry(entries, tracer, key)
        else:
            self._count += 1
            code, function = built
            entry = _Entry(function, code, None, tracer, key)
            entries.append(entry)
            if os.environ.get(PRINT_CODE):
                PRINTED[0] += 1
                print(code, file=sys.stdout)
            if joint is not None:
                # The traced call's outputs, from its own values, with their compiled node
                # (as every later call's): the eager graph is dropped.
                result = joint.first_result(function)
        self.last = entry
        return result

    def _stopped_entry(self, entries: list[_Entry], tracer: Tracer, key: tuple) -> _Entry:
        """The entry of a trace that stopped: it runs the step eagerly."""
        entry = _Entry(None, "", tracer.broken, tracer, key)
        self._stopped = tracer.broken
        if tracer.passing and self._passing < self.cache_size:
            # (`model.train()` in a step called after `model.eval()`: the next call
            # finds the flag set and may trace; a few times, then the entry stays.)
            self._passing += 1
        else:
            # (An entry that runs eagerly counts too: a step that changes what its
            # guards read, `history.append(...)`, would otherwise trace at every call.)
            self._count += 1
            entries.append(entry)
        if os.environ.get(PRINT_CODE):
            PRINTED[0] += 1
            print(f"# {getattr(self.fn, '__name__', 'step')}: runs eagerly: {entry.reason}")
        return entry

    def _name(self) -> str:
        """The generated function's name: fn's (a module's: `forward`), unless it would
        shadow a name of the code's namespace (`np`, `kernels`, a variable `v0`, `c1`)."""
        name = getattr(self.fn, "__name__", None) or \
            ("forward" if hasattr(self.fn, "forward") else "step")
        if not name.isidentifier() or name in _namespace(Source()) or \
                re.fullmatch(r"[A-Za-z]\d+", name):
            return "step"
        return name

    def _build_joint(self, joint: Joint, arity: int) -> tuple[str, Callable]:
        name = self._name()
        return joint.build(name, arity, f"<gradgen compiled {name} #{self._count + 1}>",
                           self.optimizations, _namespace(joint.tracer.source), _format)

    def _build(self, tracer: Tracer, arity: int, returned: ast.expr) -> tuple[str, Callable]:
        source = tracer.source
        kept = names_in(returned)
        if self.optimizations:
            optimize(source, kept)
        name = self._name()
        filename = f"<gradgen compiled {name} #{self._count + 1}>"
        params = ", ".join(f"a{i}" for i in range(arity))
        body = _format(source, kept if self.optimizations else None)
        if tracer.backwards:
            header = [f"def {name}({params}):",
                      f'    """{name}, compiled by gradgen from one eager run: forward from '
                      'the kernels,',
                      "    backward from each node's formulas, the update from its "
                      'optimizer\'s own code."""']
        else:  # a forward alone (inference: nothing it returns requires grad)
            header = [f"def {name}({params}):",
                      f'    """{name}, compiled by gradgen from one eager run: a forward from '
                      'the kernels."""']
        code = "\n".join(header + body + [f"    return {ast.unparse(returned)}", ""])
        namespace = _namespace(source)
        compiled = builtins.compile(code, filename, "exec", dont_inherit=True)
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        exec(compiled, namespace)
        return code, namespace[name]


def _named_modules(tracer: Tracer, fn: Callable) -> list[Module]:
    """The modules fn is or names (as a global, a free variable, its `self`), and theirs."""
    roots: list[Any] = [*tracer._named_modules(), fn, getattr(fn, "__self__", None)]
    return [module for root in roots if isinstance(root, Module) for module in root.modules()]


def _check_python(tracer: Tracer, drawn: Callable[[], str | None]) -> None:
    """Stop the trace where the step's own Python did what later calls would not repeat."""
    if drawn():  # (a number drawn in Python is a constant of the trace, as any is)
        tracer.stop(f"the step draws from {drawn()} (a trace would keep the numbers it "
                    "drew, and later calls would not draw again)")
    rebound = _rebound(tracer)
    if rebound:
        tracer.stop(f"the step rebinds {rebound}, where it read a tensor (Python that "
                    "later calls would not repeat)")
    changed = tracer.changed_container()
    if changed:
        tracer.stop(f"the step changes what {changed} holds (a list, dict or set: Python "
                    "that later calls would not repeat)")


def _rebound(tracer: Tracer) -> str | None:
    """The first tensor the step found where it names it (a global, `self.x`) and which it
    rebinds there itself (`self.h = h.detach()`): Python that later calls would not
    repeat. None if none."""
    for tensor in tracer.closure_tensors:
        find = tracer.sources.get(id(tensor))
        if find is not None and find() is not tensor:
            return getattr(find, "path", None) or str(find.key)
    return None


def _python_draws() -> Callable[[], str | None]:
    """The states of Python's random module and numpy's global generator now; the function
    returned names the one that has moved since (None if neither has): a step that draws
    from them (`random.randint`, `random.shuffle`, `np.random.rand`) gets numbers the
    trace would bake in, and the draws would not happen again at later calls."""
    python_state = random.getstate()
    numpy_state = np.random.get_state()

    def moved() -> str | None:
        if random.getstate() != python_state:
            return "Python's random module"
        now = np.random.get_state()
        if now[0] != numpy_state[0] or now[2:] != numpy_state[2:] or \
                not np.array_equal(now[1], numpy_state[1]):
            return "numpy's global random generator"
        return None

    return moved


def _namespace(source: Source) -> dict[str, Any]:
    """What the generated code runs in: its fixed names, and the trace's constants."""
    namespace: dict[str, Any] = {"np": np, "kernels": kernels, "ops": array_ops,
                                 "accumulate": accumulate, "wrap": wrap, "spent": spent,
                                 "random_ops": random_ops,
                                 "quiet": functools.partial(kernels._set_state, kernels._QUIET),
                                 "loud": kernels._reset_state,
                                 "new": Tensor._make}
    namespace.update(source.namespace)
    return namespace


_TITLES = {"prologue": "# the tensors the step reads", "forward": "# forward",
           "backward": "# backward", "after backward": "# after backward", "update": "# update",
           "gradients": "# the gradients as .grad (made last: no line of the step reads them)",
           "epilogue": "# after"}


def _format(source: Source, returned: Sequence[str] | None) -> list[str]:
    """The body: each statement with its comment, phase by phase; with `returned` (the
    optimisations on), each array variable deleted after its last use, so that the step
    holds no more memory than the engine would (which frees saved tensors as it goes)."""
    # The reads of the tensors' arrays go first: nothing in the step rebinds them.
    ordered = [line for line in source.lines if line.phase == "prologue"]
    ordered += [line for line in source.lines if line.phase != "prologue"]
    frees = last_uses(ordered, returned, source) if returned is not None else {}
    frees.pop(len(ordered) - 1, None)  # (after the last line, return frees them)
    texts = [ast.unparse(line.statement()) for line in ordered]
    silent = _silent(ordered, texts)
    body = _Body()
    for index, line in enumerate(ordered):
        if texts[index]:
            body.add(line, texts[index], silent[index], frees.get(index))
    return body.finish()


def _silent(ordered: list, texts: list[str]) -> list[bool]:
    """Which lines run with numpy's warnings off. A quiet form's kernel silences them, and
    the engine runs a backward such as a compiled step's (no hooks, no create_graph) with
    them off. A neutral line (it cannot warn) stays in a block that the next line that can
    warn continues."""
    silent = [line.quiet or line.phase == "backward" for line in ordered]
    following = False
    for index in reversed(range(len(ordered))):
        if texts[index] and not ordered[index].neutral:
            following = silent[index]
        elif texts[index]:
            silent[index] = following
    return silent


class _Body:
    """The body's lines as they are written: a title where the phase changes, the
    warnings-off blocks opened and closed around silent lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.phase: str | None = None
        self.quiet = False  # inside a block with numpy's warnings off

    @property
    def indent(self) -> str:
        return "        " if self.quiet else "    "

    def add(self, line: Any, text: str, silent: bool, frees: list[str] | None) -> None:
        if self.quiet and not silent:
            self.lines += _QUIET_END
            self.quiet = False
        if line.phase != self.phase:
            self.phase = line.phase
            self.lines.append(f"{self.indent}{_TITLES.get(self.phase, '#')}")
        if silent and not self.quiet and not line.neutral:
            self.lines += _QUIET_START
            self.quiet = True
        statement = f"{self.indent}{text}"
        self.lines.append(f"{statement:<60}  # {line.comment}" if line.comment else statement)
        if frees:
            self.lines.append(f"{self.indent}del {', '.join(frees)}")

    def finish(self) -> list[str]:
        if self.quiet:
            self.lines += _QUIET_END
        return self.lines


# Around lines whose kernels compute them with numpy's warnings off (the spec's `quiet`
# forms), and around the backward, which the engine runs so: the warnings off, and back on
# whatever happens.
_QUIET_START = ["    q = quiet()                                               "
                "# numpy's warnings off, as eager has them here", "    try:"]
_QUIET_END = ["    finally:", "        loud(q)"]


def _not_spent(tracer: Tracer, node: Any) -> str | None:
    """Why the graph from `node` is not spent, as another backward through it would find it
    in eager (None: it is): it reaches no node the step's backward walked, or none of those
    held a saved tensor, which that backward freed (`(w + 1).sum()`: a second backward
    works in eager, and in torch)."""
    stack, seen, walked = [node], {node}, False
    while stack:
        node = stack.pop()
        if node in tracer.swept:
            if _freed_saved(node, set()):
                return None
            walked = True
        for following, _ in node.next_functions:
            if following is not None and following not in seen:
                seen.add(following)
                stack.append(following)
    if walked:
        return ("the step returns a tensor whose graph held no saved tensors (in eager "
                "another backward through it works; the generated code makes no graph)")
    return ("the step returns a tensor whose graph its backward did not walk (the "
            "generated code makes no graph for a later backward)")


def _freed_saved(node: Any, seen: set[int]) -> bool:
    """Whether `node` holds a saved tensor (or a number saved in a tensor's place) that was
    freed: in its slots, a saved list (cat's), or the node it wraps (CopySlices' `fn`)."""
    seen.add(id(node))
    for cls in type(node).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            value = getattr(node, slot, None)
            if isinstance(value, SavedVariableList):
                value = value._items
            for item in value if isinstance(value, list | tuple) else (value,):
                if isinstance(item, SavedVariable | SavedValue) and item._freed:
                    return True
                if isinstance(item, Node) and id(item) not in seen and \
                        _freed_saved(item, seen):
                    return True
    return False


def _returns_a_graph(value: Any) -> bool:
    """Whether `value` (what the step returned) holds a tensor that requires grad."""
    if isinstance(value, Tensor):
        return value.requires_grad
    if isinstance(value, tuple | list):
        return any(map(_returns_a_graph, value))
    if type(value) is dict:  # a model's outputs by name (`{"logits": ..., "loss": ...}`)
        return any(map(_returns_a_graph, value.values()))
    return False


def _render_result(tracer: Tracer, value: Any) -> ast.expr:
    """What the generated step returns: new Tensors around this step's arrays, and the
    floats of `return loss.item()` (trace.py's `_item_listener`)."""
    found = tracer.items.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    if is_plain_value(value):
        literal = tracer.source.literal(value)
        if literal is not None:
            return literal
    if isinstance(value, Tensor):
        return _render_tensor(tracer, value)
    if isinstance(value, tuple | list):
        items = [_render_result(tracer, v) for v in value]
        return (ast.List if isinstance(value, list) else ast.Tuple)(items, ast.Load())
    raise TraceBreak(f"the step returns a {type(value).__name__}")


def _render_tensor(tracer: Tracer, value: Tensor) -> ast.expr:
    """A tensor the step returns: one it computed, around its array (with a spent node if
    its backward walked its graph, as in eager), or one it read (a name of the step)."""
    if value._counter is not None and value._counter.inference:
        raise TraceBreak("the step returns an inference tensor (made under "
                         "torch.inference_mode())")
    name = tracer.names.get(id(value._data))
    if name is not None and id(value) not in tracer.tensors:
        if value.grad_fn is None:
            return call(var("wrap"), [var(name)])
        reason = _not_spent(tracer, value.grad_fn)
        if reason is not None:
            raise TraceBreak(reason)
        # (The loss, or a sum of losses: a graph its backward spent, as in eager.)
        node_class = spent_node_class(value.grad_fn.name())
        return call(var("spent"), [var(name), var(tracer.source.constant(node_class))])
    if id(value) in tracer.tensors:
        return tracer.tensor_tree(tracer.tensors[id(value)])
    raise TraceBreak("the step returns a tensor the trace did not compute")


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: Any = None,  # noqa: A001
            backend: Any = "gradgen", mode: Any = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """torch.compile's signature: `compile(fn)` or `@compile` / `@compile(...)`.

    Only gradgen's own backend exists; `fullgraph=True` makes a step that cannot be
    compiled an error instead of an eager fallback. `dynamic` and `mode` are accepted and
    change nothing (every new shape is a new trace).
    """
    if backend not in ("gradgen", "inductor", "eager", "aot_eager"):
        raise ValueError(f"gradgen compiles with its own backend only, not {backend!r}")
    options = dict(options or {})

    def make(fn: Callable) -> Callable:
        if disable:
            return fn
        step = CompiledStep(fn, optimizations=options.get("optimizations", True))
        compiled = _FullGraph(step) if fullgraph else step
        if isinstance(fn, Module):  # a module, as torch.compile's OptimizedModule
            return OptimizedModule(fn, compiled)
        return compiled

    return make if model is None else make(model)


class _FullGraph:
    """fullgraph=True: an eager fallback is an error (after the eager call ran)."""

    def __init__(self, step: CompiledStep) -> None:
        self.step = step
        functools.update_wrapper(self, step.fn)

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self if instance is None else _FullGraph(self.step.__get__(instance, owner))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.step, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self.step(*args, **kwargs)
        if self.step.fallback_reason is not None:
            raise RuntimeError(f"gradgen cannot compile the whole step: "
                               f"{self.step.fallback_reason}")
        return result
