"""`runtime.compile(fn)`: a training step traced once, then run as one generated function.

The first call with given guards runs `fn` eagerly under the tracer (trace.py); if nothing
stopped the trace, its lines become one Python function (`compiled.code`), which later calls run
instead, while the entry's guard holds (guards.py: the arguments' metadata, the global modes,
the tensors, modules and optimizers the step reads). A call that matches no entry traces again,
up to `cache_size` entries, then runs eagerly; a trace that stopped leaves an entry that runs
`fn` eagerly, with the reason in `fallback_reason`."""

from __future__ import annotations

import ast
import dataclasses
import functools
import gc
import os
import random
import re
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime import kernels, random_ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.compile import config, guards
from runtime.compile.emit import Source, TraceBreak, call, define, leaves, names_in, var
from runtime.compile.guards import Keywords
from runtime.compile.joint import Joint, computed
from runtime.compile.listen import returned
from runtime.compile.module import OptimizedModule
from runtime.compile.optimize import last_uses, optimize
from runtime.compile.reads import contents, is_plain_value, same_contents
from runtime.compile.trace import MODES, READ, Tracer, current, listening
from runtime.distributions.distribution import Distribution
from runtime.engine import GraphTask
from runtime.namespaces import array_ops
from runtime.nn.module import Module
from runtime.node import Node, SavedValue, SavedVariable, SavedVariableList

# Every compiled step, for torch.compiler.reset().
ALL_STEPS: weakref.WeakSet = weakref.WeakSet()
# Set (to anything) by `python -m runtime.compile`: every trace prints its code.
PRINT_CODE = "GRADGEN_COMPILE_PRINT"
# How many steps printed their code or their reason.
PRINTED = [0]


def accumulate(variable: Tensor, grad: np.ndarray) -> None:
    """AccumulateGrad on arrays: set `.grad`, or add to the one there (the code hands over a
    gradient no other variable holds, else a copy)."""
    if variable._grad is None:
        variable._grad = Tensor._make(grad, None)
    else:
        variable._grad._accumulate_(Tensor._make(grad, None))


def wrap(array: np.ndarray) -> Tensor:
    return Tensor._make(array, None)


class _Entry:
    """One trace: its guard, and its function (None: the step runs eagerly, for `reason`)."""

    guard_code, reads = "", ()

    def __init__(self, function: Callable | None, code: str, reason: str | None,
                 guard: guards.Guard | None = None, tracer: Tracer | None = None) -> None:
        self.function, self.code, self.reason = function, code, reason
        self.arity = guard.arity if guard is not None else -1
        if guard is not None:
            self.guard_code, self._guard = guard.finish(tracer)
            self.reads = guard.reads

    def holds(self, args: tuple = ()) -> bool:
        """Whether a call with `args` finds the world as it was traced."""
        return len(args) == self.arity and self._guard(*args)


class CompiledStep:
    """What `runtime.compile(fn)` returns: call it as `fn`."""

    def __init__(self, fn: Callable, cache_size: int | None = None,
                 optimizations: bool = True, fullgraph: bool = False) -> None:
        self.fn, self.fullgraph = fn, fullgraph  # fullgraph: an eager fallback is an error
        self._cache_size = cache_size  # None: torch._dynamo.config's recompile_limit
        self.optimizations = optimizations
        self.traces = 0  # how many times fn ran under the tracer
        self.reset()
        # The compiled step of each instance's bound method, for a class that compiled `forward`.
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        ALL_STEPS.add(self)
        if isinstance(fn, types.FunctionType | types.MethodType):
            functools.update_wrapper(self, fn)

    @property
    def cache_size(self) -> int:
        """How many traces are kept (torch._dynamo.config.recompile_limit)."""
        return config.recompile_limit if self._cache_size is None else self._cache_size

    def reset(self) -> None:
        """Forget every trace (torch.compiler.reset()): the next call traces again."""
        self._entries: list[_Entry] = []
        self.last: _Entry | None = None  # the entry of the latest call
        self._hot: _Entry | None = None  # the entry the latest call ran, if generated code
        self._passing = 0  # traces stopped for a reason the next call may not have
        self._stopped: str | None = None  # why the latest trace that stopped did

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """`model.forward` where the class compiled `forward`: the instance's own compiled step."""
        if instance is None or not isinstance(self.fn, types.FunctionType):
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = self._bound[instance] = CompiledStep(
                types.MethodType(self.fn, instance), self._cache_size, self.optimizations,
                self.fullgraph)
        return bound

    @property
    def code(self) -> str | None:
        """The generated source of the latest call's trace (None if it runs eagerly)."""
        return None if self.last is None or self.last.function is None else self.last.code

    @property
    def fallback_reason(self) -> str | None:
        """Why the latest call ran eagerly (None if it ran the generated code)."""
        return None if self.last is None else self.last.reason

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The usual call: the entry the previous one ran, whose guard holds again.
        hot = self._hot
        if kwargs:
            args = (*args, Keywords(kwargs))
        if hot is not None and not _modes.active and len(args) == hot.arity and \
                hot._guard(*args):
            return hot.function(*args)
        result = self._call(args)
        if self.fullgraph and self.fallback_reason is not None:
            raise RuntimeError(f"gradgen cannot compile the whole step: {self.fallback_reason}")
        return result

    def _run(self, args: tuple) -> Any:
        """fn, called eagerly as it was called."""
        if args and type(args[-1]) is Keywords:
            return self.fn(*args[:-1], **args[-1])
        return self.fn(*args)

    def _call(self, args: tuple) -> Any:
        """The entry whose keys and guard match, or a new trace. Inside another step's trace the
        call runs eagerly: its ops are that step's."""
        if _modes.active and current() is not None:
            return self._run(args)
        self._hot = None
        for entry in self._entries:
            if entry.holds(args):
                self.last = entry
                if entry.function is None:
                    return self._run(args)
                self._hot = entry
                return entry.function(*args)
        try:
            guard = guards.Guard(args, MODES)  # (the arguments and modes as the step finds them)
        except TraceBreak as stop:
            self.last = _Entry(None, "", stop.reason)
            return self._run(args)
        if len(self._entries) >= self.cache_size:
            stopped = self._stopped and f"; the last trace stopped: {self._stopped}"
            self.last = _Entry(None, "", f"the cache of {self.cache_size} traces is full "
                               f"(guards kept failing{stopped or ''})")
            return self._run(args)
        return self._trace(args, guard)

    def _trace(self, args: tuple, guard: guards.Guard) -> Any:
        """fn, run eagerly under the tracer, and the entry of its trace: the generated code, or
        eager calls for the reason the trace stopped."""
        tracer = Tracer(guard.tensors, self.fn)
        tracer.numpy_forms = self.optimizations
        self.traces += 1
        generators = _watch(tracer, self.fn)
        with listening(tracer):
            result = self._run(args)
        result = returned(tracer, result)
        _check_python(tracer, generators)
        code, function, joint = "", None, None
        if tracer.broken is None:
            try:
                code, function, joint = self._build(tracer, result, len(args))
            except TraceBreak as stop:
                tracer.stop(stop.reason)
        self.last = entry = _Entry(function, code, tracer.broken, guard, tracer)
        self._stopped = tracer.broken or self._stopped
        if tracer.broken is not None and tracer.passing and self._passing < self.cache_size:
            # (`model.train()` after `model.eval()`: the next call may trace; a few times.)
            self._passing += 1
        else:
            # (An eager entry counts too: else a step that changes what its guards read would
            # trace at every call.)
            self._entries.append(entry)
        if os.environ.get(PRINT_CODE):
            PRINTED[0] += 1
            print(code if function else
                  f"# {getattr(self.fn, '__name__', 'step')}: runs eagerly: {entry.reason}")
        # (A joint's traced call returns its outputs with their compiled node, as later calls.)
        return result if joint is None else joint.first

    def _name(self) -> str:
        """The generated function's name: fn's, unless it would shadow a name of the code's
        namespace."""
        name = getattr(self.fn, "__name__", None) or \
            ("forward" if hasattr(self.fn, "forward") else "step")
        if not name.isidentifier() or name in _namespace(Source()) or \
                re.fullmatch(r"[A-Za-z]\d+", name):
            return "step"
        return name

    def _build(self, tracer: Tracer, result: Any, arity: int
               ) -> tuple[str, Callable, Joint | None]:
        """The code of a finished trace and what later calls run: the step's function, or for a
        call that returns a graph and runs no backward, a forward and its backward (joint.py)."""
        name, params, source = self._name(), ", ".join(f"a{i}" for i in range(arity)), \
            tracer.source
        joint = Joint(tracer, result) if not tracer.backwards and _returns_a_graph(result) \
            else None
        functions = joint.functions(name, params, self.optimizations) if joint else \
            [_step_function(tracer, result, name, params, self.optimizations)]
        code = "\n\n".join(_function(source, *function, self.optimizations)
                           for function in functions)
        namespace = _namespace(source)
        define(code, f"<gradgen compiled {name} #{len(self._entries) + 1}>", namespace)
        return code, joint.compiled(namespace) if joint else namespace[name], joint


def _step_function(tracer: Tracer, result: Any, name: str, params: str, optimizations: bool
                   ) -> tuple:
    """The step's one function, as `_function` writes it (optimized first)."""
    tracer.phase = "epilogue"
    returned = _render_result(tracer, result)
    if optimizations:
        optimize(tracer.source, names_in(returned))
    what = "forward from the kernels,\n    backward from each node's formulas, the update " \
        "from its optimizer's own code" if tracer.backwards else "a forward from the kernels"
    return (name, params, f"{name}, compiled by gradgen from one eager run: {what}.",
            tracer.source.lines, returned, names_in(returned))


def _function(source: Source, name: str, params: str, doc: str, lines: list, returned: ast.expr,
              kept: Sequence[str], optimized: bool) -> str:
    """A generated function's source: its docstring, `lines` (optimized: each large array
    deleted after its last use, unless `kept`), and its return."""
    body = _format(dataclasses.replace(source, lines=lines), kept if optimized else None)
    return "\n".join([f"def {name}({params}):", f'    """{doc}"""', *body,
                      f"    return {ast.unparse(returned)}", ""])


def _watch(tracer: Tracer, fn: Callable) -> list[tuple[str, Any]]:
    """Before the trace: the containers of the modules fn is or names (as a global, a free
    variable, its `self`) and of theirs, and those it names itself, watched; the random
    generators' states returned (_check_python compares them after)."""
    roots: list[Any] = [*tracer._named_modules(), fn, getattr(fn, "__self__", None)]
    for module in [m for root in roots if isinstance(root, Module) for m in root.modules()]:
        tracer.watch(module)
    for read in tracer.bindings.values():
        if type(read.value) in (list, dict, set):  # a global or free variable's
            tracer.watch(read.value, str(read.key))
    return _generators()


def _check_python(tracer: Tracer, generators: list[tuple[str, Any]]) -> None:
    """Stop the trace where the step's own Python did what later calls would not repeat: drew
    from a global generator (the numbers would be constants of the trace), rebound where it
    read a tensor (`self.h = h.detach()`), changed a watched container."""
    drawn = (name for (name, before), (_, now) in zip(generators, _generators(), strict=True)
             if before != now)
    rebound = (known.read.path or str(known.read.key) for known in tracer.closure
               if known.how == READ and known.read() is not known.tensor)
    changed = (name for held in tracer.containers.values() for name, value, before in held
               if not same_contents(contents(value), before))
    for found, reason in (
            (drawn, "draws from {} (a trace would keep the numbers it drew, and later calls "
             "would not draw again)"),
            (rebound, "rebinds {}, where it read a tensor (Python that later calls would not "
             "repeat)"),
            (changed, "changes what {} holds (a list, dict or set: Python that later calls "
             "would not repeat)")):
        name = next(found, None)
        if name is not None:
            tracer.stop(f"the step {reason.format(name)}")


def _generators() -> list[tuple[str, Any]]:
    """The states of Python's and numpy's global random generators: a step that draws from
    one would have the numbers it drew baked into its trace."""
    kind, keys, *rest = np.random.get_state()
    return [("Python's random module", random.getstate()),
            ("numpy's global random generator", (kind, keys.tobytes(), *rest))]


def _namespace(source: Source) -> dict[str, Any]:
    """What the generated code runs in: its fixed names, and the trace's constants."""
    namespace: dict[str, Any] = {"np": np, "kernels": kernels, "ops": array_ops,
                                 "accumulate": accumulate, "wrap": wrap, "spent": Tensor._make,
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
    """The body, phase by phase (a title where it changes), each statement with its comment,
    silent lines in blocks with numpy's warnings off; with `returned`, each large array deleted
    after its last use."""
    written = _written(source, returned)
    body: list[str] = []
    phase, quiet = None, False
    for (line, text, freed), silent in zip(written, _silent(written), strict=True):
        if quiet and not silent:
            body += _QUIET_END
        quiet = quiet and silent
        if line.phase != phase:
            phase = line.phase
            body.append(f"{_INDENT[quiet]}{_TITLES.get(phase, '#')}")
        if silent and not quiet and not line.neutral:
            body += _QUIET_START
            quiet = True
        body += _statement(line, text, freed, _INDENT[quiet])
    return body + _QUIET_END if quiet else body


def _written(source: Source, returned: Sequence[str] | None) -> list[tuple]:
    """(line, its text, the arrays freed after it) for each line that writes something, the
    prologue first."""
    ordered = sorted(source.lines, key=lambda line: line.phase != "prologue")  # (stable)
    frees = last_uses(ordered, returned, source) if returned is not None else {}
    frees.pop(len(ordered) - 1, None)  # (after the last line, return frees them)
    return [(line, text, frees.get(index)) for index, line in enumerate(ordered)
            if (text := ast.unparse(line.statement()))]


def _statement(line: Any, text: str, freed: list[str] | None, indent: str) -> list[str]:
    """A line as written: its statement, its comment beside it, the arrays it frees."""
    statement = f"{indent}{text}"
    written = [f"{statement:<60}  # {line.comment}" if line.comment else statement]
    return written + [f"{indent}del {', '.join(freed)}"] if freed else written


def _silent(written: list[tuple]) -> list[bool]:
    """Which lines run with numpy's warnings off: quiet forms and the backward, and a neutral
    line (no numpy arithmetic) as the line after it."""
    silent, following = [], False
    for line, _, _ in reversed(written):
        if not line.neutral:
            following = line.quiet or line.phase == "backward"
        silent.append(following)
    return silent[::-1]


_INDENT = {False: "    ", True: "        "}  # outside and inside a block with warnings off
# Around quiet forms and the backward: numpy's warnings off, and back on whatever happens.
_QUIET_START = ["    q = quiet()                                               "
                "# numpy's warnings off, as eager has them here", "    try:"]
_QUIET_END = ["    finally:", "        loud(q)"]


def _not_spent(tracer: Tracer, node: Any) -> str | None:
    """Why a second backward through `node`'s graph would not raise in eager (None: it would,
    the graph is spent)."""
    task = GraphTask(keep_graph=False, create_graph=False)
    task.compute_dependencies([(node, 0)], with_parents=False)  # (the engine's walk)
    walked = [node for node in task.dependencies if node in tracer.swept]
    if any(_freed_saved(node, set()) for node in walked):
        return None
    if walked:
        return ("the step returns a tensor whose graph held no saved tensors (in eager "
                "another backward through it works; the generated code makes no graph)")
    return ("the step returns a tensor whose graph its backward did not walk (the "
            "generated code makes no graph for a later backward)")


def _freed_saved(node: Any, seen: set[int]) -> bool:
    """Whether `node` (or a node it wraps) holds a freed saved tensor."""
    seen.add(id(node))
    for value in gc.get_referents(node):  # (its slots' values)
        items = value._items if isinstance(value, SavedVariableList) else value
        for item in items if isinstance(items, list | tuple) else (items,):
            if isinstance(item, SavedVariable | SavedValue) and item._freed or \
                    isinstance(item, Node) and id(item) not in seen and _freed_saved(item, seen):
                return True
    return False


def _returns_a_graph(value: Any) -> bool:
    """Whether `value` (what the step returned) holds a tensor that requires grad."""
    return any(isinstance(item, Tensor) and item.requires_grad for item in leaves(value))


def _render_result(tracer: Tracer, value: Any) -> ast.expr:
    """What the generated step returns: Tensors around its arrays, and the floats of `return
    loss.item()`."""
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
    """A returned tensor: one the step computed (with a spent node) or read."""
    name = computed(tracer, value, "the step")
    if name is not None:
        if value.grad_fn is None:
            return call(var("wrap"), [var(name)])
        reason = _not_spent(tracer, value.grad_fn)
        if reason is not None:
            raise TraceBreak(reason)
        # Its node is the traced call's, which that call's backward spent, as eager's is.
        return call(var("spent"), [var(name), var(tracer.source.constant(value.grad_fn))])
    if tracer.of(value).name:
        return tracer.tensor_tree(tracer.of(value).name)
    raise TraceBreak("the step returns a tensor the trace did not compute")


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: Any = None,  # noqa: A001
            backend: Any = "gradgen", mode: Any = None, options: dict | None = None,
            name: str | None = None, disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """torch.compile's signature, as a function or decorator. Only gradgen's backend;
    `fullgraph=True` makes a fallback an error; `dynamic`, `mode`, `name`, the recompile
    options and `shapes_spec` change nothing."""
    if backend not in ("gradgen", "inductor", "eager", "aot_eager"):
        raise ValueError(f"gradgen compiles with its own backend only, not {backend!r}")
    options = dict(options or {})

    def make(fn: Callable) -> Callable:
        if disable:
            return fn
        # As torch's first compile does (its TorchPatcher), distributions stop validating
        # their arguments by default from here on, in the whole process.
        Distribution.set_default_validate_args(False)
        step = CompiledStep(fn, None, options.get("optimizations", True), fullgraph)
        if isinstance(fn, Module):  # a module, as torch.compile's OptimizedModule
            return OptimizedModule(fn, step)
        return step

    return make if model is None else make(model)

