"""`runtime.compile(fn)`: a training step traced once, then run as one generated function.

The first call with given guards runs `fn` eagerly under the tracer (trace.py); if nothing
stopped the trace, its lines become one Python function (`compiled.code`), which later calls run
instead, while the entry's guard holds (guards.py: the arguments' metadata, the global modes,
the tensors, modules and optimizers the step reads). A call that matches no entry traces again,
up to `cache_size` entries, then runs eagerly; a trace that stopped leaves an entry that runs
`fn` eagerly, with the reason in `fallback_reason`."""

from __future__ import annotations

import ast
import functools
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
from runtime.compile import config, guards
from runtime.compile.emit import Source, TraceBreak, call, define, names_in, var
from runtime.compile.guards import Keywords
from runtime.compile.joint import Joint
from runtime.compile.listen import returned
from runtime.compile.module import OptimizedModule
from runtime.compile.optimize import last_uses, optimize
from runtime.compile.reads import is_plain_value, method_reads
from runtime.compile.trace import MODES, Tracer, current, grad_state, listening
from runtime.distributions.distribution import Distribution
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


class SpentBackward(Node):
    """The grad_fn of a returned tensor whose graph the step's backward freed (named as eager's
    node): another backward raises eager's error."""

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


_NO_TRACE = types.SimpleNamespace(closure_tensors=(), sources={}, reads=(), modules=(),
                                  optimizers=(), bindings={})


class _Entry:
    """One trace: its guard, and its function (None: the step runs eagerly, for `reason`)."""

    def __init__(self, function: Callable | None, code: str, reason: str | None,
                 tracer: Tracer | None, key: tuple = ((), ())) -> None:
        self.function, self.code, self.reason = function, code, reason
        arguments, modes = key
        self.arity = len(arguments)
        self.keywords = bool(arguments) and arguments[-1][0] == "keywords"
        tracer = tracer or _NO_TRACE
        reads = [*tracer.reads, *method_reads(tracer.modules)]
        bindings, sources = tracer.bindings, tracer.sources
        # The objects the step names (the holders of its reads first), its plain values, its
        # reads, then the tensors read anew at each call; the tensors it holds apart.
        objects = {id(obj): obj for obj in [*tracer.modules, *tracer.optimizers,
                                            *(read.holder for read in reads)]}
        self.reads = [bindings[key] for key in objects if key in bindings]
        self.reads += [read for read in bindings.values() if read.expected[0] == "value"]
        self.reads += reads + [sources[id(t)].expecting(("tensor", _tensor_key(t)))
                               for t in tracer.closure_tensors if id(t) in sources]
        held = [(t, _tensor_key(t)) for t in tracer.closure_tensors if id(t) not in sources]
        self.guard_code, self._guard = guards.build(
            arguments, [(*mode, value) for mode, value in zip(MODES, modes, strict=False)],
            self.reads, held, list(tracer.modules), list(tracer.optimizers))

    def holds(self, args: tuple = ()) -> bool:
        """Whether a call with `args` (as many as traced) finds the world as it was traced."""
        return self._guard(*args)


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
        self._entries: dict[tuple, list[_Entry]] = {}
        self._count = 0
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
                (not kwargs or hot.keywords) and hot._guard(*args):
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
        for read in tracer.bindings.values():
            if type(read.value) in (list, dict, set):  # a global or free variable's
                tracer.watch(read.value, str(read.key))
        with listening(tracer):
            result = self._run(args)
        result = returned(tracer, result)
        _check_python(tracer, drawn)
        built = joint = None
        if tracer.broken is None:
            try:
                if not tracer.backwards and _returns_a_graph(result):
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
                # The traced call's outputs, with their compiled node as every later call's.
                result = joint.first_result(function)
        self.last = entry
        return result

    def _stopped_entry(self, entries: list[_Entry], tracer: Tracer, key: tuple) -> _Entry:
        """The entry of a trace that stopped: it runs the step eagerly."""
        entry = _Entry(None, "", tracer.broken, tracer, key)
        self._stopped = tracer.broken
        if tracer.passing and self._passing < self.cache_size:
            # (`model.train()` after `model.eval()`: the next call may trace; a few times.)
            self._passing += 1
        else:
            # (An eager entry counts too: else a step that changes what its guards read would trace
            # at every call.)
            self._count += 1
            entries.append(entry)
        if os.environ.get(PRINT_CODE):
            PRINTED[0] += 1
            print(f"# {getattr(self.fn, '__name__', 'step')}: runs eagerly: {entry.reason}")
        return entry

    def _name(self) -> str:
        """The generated function's name: fn's, unless it would shadow a name of the code's
        namespace."""
        name = getattr(self.fn, "__name__", None) or \
            ("forward" if hasattr(self.fn, "forward") else "step")
        if not name.isidentifier() or name in _namespace(Source()) or \
                re.fullmatch(r"[A-Za-z]\d+", name):
            return "step"
        return name

    def _build_joint(self, joint: Joint, arity: int) -> tuple[str, Callable]:
        name = self._name()
        return joint.build(name, arity, f"<gradgen compiled {name} #{self._count + 1}>",
                           self.optimizations, _namespace(joint.tracer.source), _function)

    def _build(self, tracer: Tracer, arity: int, returned: ast.expr) -> tuple[str, Callable]:
        source = tracer.source
        kept = names_in(returned)
        if self.optimizations:
            optimize(source, kept)
        name = self._name()
        what = "forward from the kernels,\n    backward from each node's formulas, the update " \
            "from its optimizer's own code" if tracer.backwards else "a forward from the kernels"
        code = _function(name, ", ".join(f"a{i}" for i in range(arity)),
                         f"{name}, compiled by gradgen from one eager run: {what}.", source,
                         returned, kept if self.optimizations else None)
        namespace = _namespace(source)
        define(code, f"<gradgen compiled {name} #{self._count + 1}>", namespace)
        return code, namespace[name]


def _function(name: str, params: str, doc: str, source: Source, returned: ast.expr,
              kept: Sequence[str] | None) -> str:
    """A generated function's source: its docstring, `source`'s lines (with `kept`, each large
    array deleted after its last use), and its return."""
    return "\n".join([f"def {name}({params}):", f'    """{doc}"""', *_format(source, kept),
                      f"    return {ast.unparse(returned)}", ""])


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
    """The first tensor the step read where it names it and rebinds there itself (`self.h =
    h.detach()`); None if none."""
    for tensor in tracer.closure_tensors:
        find = tracer.sources.get(id(tensor))
        if find is not None and find() is not tensor:
            return getattr(find, "path", None) or str(find.key)
    return None


def _python_draws() -> Callable[[], str | None]:
    """A function naming the Python or numpy random generator that has drawn since now (None if
    neither): those draws would be baked into the trace."""
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
    """The body, phase by phase, each statement with its comment; with `returned`, each large
    array deleted after its last use."""
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
    """Which lines run with numpy's warnings off: quiet forms and the backward, and the neutral
    lines between them."""
    silent = [line.quiet or line.phase == "backward" for line in ordered]
    following = False
    for index in reversed(range(len(ordered))):
        if texts[index] and not ordered[index].neutral:
            following = silent[index]
        elif texts[index]:
            silent[index] = following
    return silent


class _Body:
    """The body's lines as written: a title where the phase changes, warnings-off blocks around
    silent lines."""

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


# Around quiet forms and the backward: numpy's warnings off, and back on whatever happens.
_QUIET_START = ["    q = quiet()                                               "
                "# numpy's warnings off, as eager has them here", "    try:"]
_QUIET_END = ["    finally:", "        loud(q)"]


def _not_spent(tracer: Tracer, node: Any) -> str | None:
    """Why a second backward through `node`'s graph would not raise in eager (None: it would,
    the graph is spent)."""
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
    """Whether `node` (or a node it wraps) holds a freed saved tensor."""
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
        node_class = spent_node_class(value.grad_fn.name())
        return call(var("spent"), [var(name), var(tracer.source.constant(node_class))])
    if id(value) in tracer.tensors:
        return tracer.tensor_tree(tracer.tensors[id(value)])
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

