"""The tracer as a mode: how one traced call hears what the step does, with no attribute of any
module replaced.

`listening(tracer)` pushes a `TraceMode` on this thread's stack of op modes (runtime/modes.py),
beneath the modes there, for one eager call of the step. A call it has something to do with has
a row in HANDLERS (by the function heard): most rows stop the trace or write a line, a few are
handlers of their own (a TraceBreak one raises stops the trace; the call runs on eagerly). A
call that runs kernels runs as a copy of its function whose globals see `kernels` as the
tracer's listening namespace, so that each outermost kernel call becomes a line; nothing of
the module changes."""

from __future__ import annotations

import ast
import contextlib
import dis
import functools
import gc
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime import factories, kernels, modes, predicates, random_ops, recording
from runtime import out as out_module
from runtime import random as random_module
from runtime._tensor import Tensor
from runtime.autograd import gradients
from runtime.compile import optim
from runtime.compile.emit import TraceBreak, attribute, call, describe_array, leaves, var
from runtime.compile.numbers import Item, data_reason
from runtime.nn.module import Module
from runtime.nn.module_hooks import GLOBAL_CALL_HOOKS
from runtime.optim import optimizer as optimizer_module
from runtime.optim.optimizer import Optimizer

# The phase of the lines after a backward (clip_grad_norm_, or a step's next forward).
AFTER_BACKWARD = "after backward"

_local = threading.local()  # .tracers: this thread's tracers listening now, innermost last


def current() -> Any:
    """The tracer listening on this thread, if a step is being traced here."""
    tracers = getattr(_local, "tracers", None)
    return tracers[-1] if tracers else None


@contextlib.contextmanager
def listening(tracer: Any) -> Iterator[None]:
    """The tracer's mode pushed on this thread for one eager call, under the modes pushed
    already, which hear the step's calls first."""
    mode = TraceMode(tracer)
    tracers = _local.__dict__.setdefault("tracers", [])
    tracers.append(tracer)
    modes.push(mode, outermost=True)
    try:
        yield
    finally:
        modes.pop(mode, outermost=True)
        tracers.pop()


class TraceMode(modes.OpMode):
    hears_runtime = True

    def __init__(self, tracer: Any) -> None:
        if not HANDLERS:
            HANDLERS.update(_handlers())
        self.tracer = tracer
        self.entering: Any = None  # the key of the call whose body is about to start
        self.kernels = _Kernels(tracer)
        self.overlays: dict[int, _Overlay | None] = {}  # id(a module's globals) -> the copies'
        self.copies: dict[int, tuple] = {}  # id(a function) -> (the function, its copy)
        self.originals: dict[int, Any] = {}  # id(a copy) -> the function

    def hear(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        return self.heard(func, args, kwargs, self)

    def hear_runtime(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        return self.heard(func, args, kwargs, None)

    def runtime_event(self, event: str, args: tuple) -> None:
        tracer = self.tracer
        try:
            if event == "wrapped":
                array, tensor = args
                tracer.wrapped(array, tensor._data)
            elif not tracer.recording:
                return
            elif event == "made":
                tracer.of(args[0]).made = True
            elif event == "history":
                tracer.node_made(*args)
            elif event == "version":
                tracer.version_moved(args[0])
        except TraceBreak as stop:
            tracer.stop(stop.reason)

    def heard(self, func: Callable, args: tuple, kwargs: dict, facet: Any) -> Any:
        """A call heard as an op (`facet`, the mode, off its stack meanwhile) or as a runtime
        step or public call (`facet` None)."""
        key = self.key(func)
        if self.entering is not None and key == self.entering:
            self.entering = None  # the call's own check: its body runs on
            return modes.PASS
        tracer = self.tracer
        if tracer.recording:  # (which Tensor each array it may meet belongs to)
            for value in (*args, *kwargs.values()):
                tracer.data_seen(value)
        handler = HANDLERS.get(key) if tracer.broken is None else None
        if handler is None:
            return self.run(func, key, args, kwargs, facet)
        ran: list[Any] = []  # what the call returned, once the handler ran it

        def proceed(*args: Any, **kwargs: Any) -> Any:
            ran.append(self.run(func, key, args, kwargs, facet))
            return ran[-1]

        try:
            return handler(tracer, proceed, args, kwargs)
        except TraceBreak as stop:  # (the handler's own: the trace stops, the call runs on)
            tracer.stop(stop.reason)
            return ran[-1] if ran else modes.PASS

    def key(self, func: Any) -> Any:
        """A heard function's key in HANDLERS: the function (a copy's original), or (property,
        name)."""
        owner = getattr(func, "__self__", None)
        if type(owner) is property:
            return owner, func.__name__
        return self.originals.get(id(func), func)

    def run(self, func: Callable, key: Any, args: tuple, kwargs: dict, facet: Any) -> Any:
        """Run the call on, with the mode on its stack: as the copy that hears its kernels while
        the trace records."""
        target = self.copy_of(func) if self.tracer.recording else None
        entering, self.entering = self.entering, key
        if facet is not None:
            modes.push(facet)
        try:
            return (func if target is None else target)(*args, **kwargs)
        finally:
            if facet is not None:
                modes.pop(facet)
            self.entering = entering

    def copy_of(self, func: Any) -> Any:
        """`func`'s copy that hears `kernels`; None where its module names no kernel, or where
        it rebinds a global (its copy would rebind the copied globals' name)."""
        if type(func) is not types.FunctionType:
            return None
        function = self.originals.get(id(func), func)
        known = self.copies.get(id(function))
        if known is not None and known[0] is function:
            return known[1]
        namespace = function.__globals__
        if id(namespace) not in self.overlays:
            names_kernels = namespace is not vars(kernels) and \
                any(value is kernels for value in namespace.values())
            self.overlays[id(namespace)] = _Overlay(self, namespace) if names_kernels else None
        overlay = self.overlays[id(namespace)]
        copy = None
        if overlay is not None and not _writes_globals(function.__code__):
            copy = types.FunctionType(function.__code__, overlay, function.__name__,
                                      function.__defaults__, function.__closure__)
            copy.__kwdefaults__ = function.__kwdefaults__
            copy.__qualname__ = function.__qualname__
            copy.__dict__.update(function.__dict__)
            self.originals[id(copy)] = function
        self.copies[id(function)] = (function, copy)
        return copy


class _Overlay(dict):
    """A module's globals as its copies see them, filled as they are read: `kernels` is the
    listening namespace and each function of the module its copy (so that a helper's kernel
    calls are heard too); any other name is the module's value."""

    def __init__(self, mode: TraceMode, namespace: dict) -> None:
        super().__init__()
        self.mode, self.namespace = mode, namespace

    def __missing__(self, name: str) -> Any:
        value = self.namespace[name]  # (a KeyError: the builtins are looked up next)
        if value is kernels:
            value = self.mode.kernels
        elif type(value) is types.FunctionType and value.__globals__ is self.namespace:
            value = self.mode.copy_of(value) or value
        self[name] = value
        return value


_STORES = frozenset({dis.opmap["STORE_GLOBAL"], dis.opmap["DELETE_GLOBAL"]})


@functools.cache
def _writes_globals(code: types.CodeType) -> bool:
    """Whether the code (or code it defines) rebinds a global."""
    return any(op in _STORES for op in code.co_code[::2]) or any(
        _writes_globals(const) for const in code.co_consts if type(const) is types.CodeType)


class _Kernels:
    """runtime/kernels.py as the copies see it: each kernel heard by the tracer."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer

    def __getattr__(self, name: str) -> Any:
        value = getattr(kernels, name)
        if not callable(value) or isinstance(value, type) or name.startswith("__") or \
                getattr(value, "__module__", None) != kernels.__name__:
            return value
        tracer = self._tracer

        def listener(*args: Any, **kwargs: Any) -> Any:
            return tracer.kernel_call(name, value, args, kwargs)

        listener.__wrapped__ = value
        setattr(self, name, listener)  # (found without __getattr__ from now on)
        return listener


# -- what the heard calls do: a row of HANDLERS, or a handler(tracer, proceed, args, kwargs)
# (`proceed(*args, **kwargs)` runs the call)

@dataclass(frozen=True)
class _Row:
    """What a call does to a recording trace: stop it for `reason` (where `when(tracer, *args)`
    holds; `passing`: the next call may trace again; `{1}` in the reason: the call's second
    argument), else write a line (`line(tracer, *args)`). Then the call runs on, or (`runs`
    False) the runtime runs it itself."""

    reason: str = ""
    when: Callable | None = None
    passing: bool = False
    line: Callable | None = None
    runs: bool = True

    def __call__(self, tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        if tracer.recording:
            if self.reason and (self.when is None or self.when(tracer, *args)):
                tracer.stop(self.reason.format(*args), self.passing)
            elif self.line is not None:
                self.line(tracer, *args)
        return proceed(*args, **kwargs) if self.runs else modes.PASS


# (The handlers of several functions take the function's name first: functools.partial.)

def _factory(name: str, tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """A factory whose tensor Python values alone decide: a line that makes it anew at each
    step."""
    values = args[1:] if name.startswith("new_") else args
    recording = tracer.recording and (
        name not in NUMBER_FACTORIES or values and type(values[0]) in (bool, int, float))
    result = proceed(*args, **kwargs)
    if not (recording and tracer.recording and isinstance(result, Tensor)):
        return result
    if kwargs.get("out") is not None or result._requires_grad:
        raise TraceBreak(f"{name} with out= or requires_grad=True in the step (make the "
                         "tensor outside the step and pass it in)")
    array, fresh = result._data, name.removeprefix("new_").removesuffix("_like")
    if fresh in ("zeros", "ones", "empty"):
        tree = call(attribute("np", fresh), [tracer.render(array.shape),
                                             var(tracer.source.constant(array.dtype))])
    else:  # made once, at trace time: a copy at each step
        tree = call(attribute(tracer.source.constant(array.copy()), "copy"))
    tracer.comment = f"{tracer.phase}: {name}, {describe_array(array)}"
    tracer.line(tree, array)
    return result


def _random_factory(name: str, tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`torch.randn(16, 4)` in the step: a line that calls the factory again, drawing in
    eager's order."""
    if not tracer.recording:
        return proceed(*args, **kwargs)
    result = tracer.pause(proceed, *args, **kwargs)
    if any(isinstance(item, Tensor) for item in leaves((args, kwargs))) or \
            kwargs.get("out") is not None or result._requires_grad:
        raise TraceBreak(f"{name} with tensor arguments, out= or requires_grad=True in the step")
    tree = tracer.render_call(attribute("random_ops", name), args, kwargs)
    tracer.comment = f"{tracer.phase}: {name}, fresh draws in eager's order"
    tracer.line(attribute(tree, "_data"), result._data)
    return result


def _random_fill(name: str, tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`t.bernoulli_(p)` and the other random fills on a tensor the step made: replayed,
    drawing in eager's order."""
    if not tracer.recording:
        return proceed(*args, **kwargs)
    given = {k: v for k, v in kwargs.items() if v is not None}  # (the default generator)
    target = tracer.local(args[0]._data)
    if target is None or any(isinstance(item, Tensor) for item in leaves((args[1:], given))):
        raise TraceBreak(f"{name} on a tensor the step did not make, or with tensor arguments")
    fill = tracer.render_call(attribute("random_ops", name), args[1:], given)
    fill.args.insert(0, call(var("wrap"), [var(target)]))
    tracer.source.add((), ast.Expr(fill), (target,),
                      f"{tracer.phase}: {name}, fresh draws in eager's order", tracer.phase)
    return tracer.pause(proceed, *args, **kwargs)


def _empty_like_layout(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    tensor = proceed(*args, **kwargs)
    if tracer.recording:
        input, dtype = args
        tracer.data_seen(input)
        source = tracer.value_of(input._data, "empty_like's input")
        kind = [] if dtype is None else [var(tracer.source.constant(dtype.numpy))]
        tree = call(attribute("np", "empty_like"), [var(source.name), *kind])
        tracer.comment = f"forward: an uninitialised tensor laid out as {source.name}, to fill"
        tracer.line(tree, tensor._data)
    return tensor


def _item(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`Tensor.item`: a number of the state of the optimizer being traced is read afresh at
    every call (optim.py); any other float is an Item, a line of the step if the step returns
    it untouched (`returned`); anything else stops the trace."""
    tensor = args[0]
    name = tracer.names.get(id(tensor._data)) if isinstance(tensor, Tensor) else None
    value = proceed(*args, **kwargs)
    if not tracer.recording:
        return value
    plain_call = type(value) is float and isinstance(tensor, Tensor) and len(args) == 1 and \
        not kwargs
    state = optim.state_item(tracer, tensor, value) if plain_call else None
    if state is not None:
        return state
    if not plain_call or name is None:
        tracer.stop(data_reason("item()"))
        return value
    item = Item(value)
    tracer.items[id(item)] = (item, call(attribute(name, "item")), _step_frame(tracer))
    return item


def _step_frame(tracer: Any) -> Any:
    """The frame running the step's own code (None if there is none)."""
    frame = sys._getframe()
    while frame is not None and frame.f_code is not tracer.code:
        frame = frame.f_back
    return frame


def returned(tracer: Any, result: Any) -> Any:
    """What the traced call returns, each Item in it a float. An Item the step returns (in
    tuples, lists and dicts) and holds nowhere else, in a variable or a container (the
    garbage collector's referrers say), is a line of the step (`return vN.item()`); any other
    Item made stops the trace, as Python may have done anything with it."""
    made, tracer.items = tracer.items, {}
    items: list[Item] = []
    numbers: list[float] = []
    containers: list[Any] = []
    plain = _without_items(result, items, numbers, containers)
    if tracer.broken is None:
        known = [items, *containers, *made.values(), *_running_frames()]
        held = any(all(holder is not k for k in known) for holder in gc.get_referrers(*items))
        entries = [made.pop(id(item), None) for item in items]  # (None: returned twice)
        if held or made or None in entries:
            tracer.stop(data_reason("item()"))
        else:
            tracer.items = {id(number): (number, entry[1])
                            for number, entry in zip(numbers, entries, strict=True)}
    return plain


def _running_frames() -> list[Any]:
    frames = [sys._getframe()]
    while frames[-1].f_back is not None:
        frames.append(frames[-1].f_back)
    return frames


def _without_items(value: Any, items: list, numbers: list, containers: list) -> Any:
    """`value` with each Item in it (in tuples, lists and dicts) as its float."""
    kind = type(value)
    if kind is Item:
        items.append(value)
        numbers.append(float.__float__(value))
        return numbers[-1]
    if kind not in (tuple, list, dict):
        return value
    containers.append(value)
    keys = list(value) if kind is dict else range(len(value))
    parts = [_without_items(value[key], items, numbers, containers) for key in keys]
    if all(part is value[key] for part, key in zip(parts, keys, strict=True)):
        return value
    return dict(zip(keys, parts, strict=True)) if kind is dict else kind(parts)


def _backward(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`loss.backward()`: traced through the engine's own walk, then run by the engine; every
    `.grad` it wrote is checked against the lines."""
    if tracer.recording:
        try:
            tracer.backward(*args, **kwargs)
        except TraceBreak as stop:
            tracer.stop(stop.reason)
        except Exception as error:  # the engine will raise it again, eagerly
            tracer.stop(f"tracing backward raised {type(error).__name__}: {error}")
    try:
        result = tracer.pause(proceed, *args, **kwargs)
    finally:
        tracer.phase = AFTER_BACKWARD
    if tracer.broken is None:
        tracer.check_grads()
    return result


def _module_call(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if tracer.recording:
        tracer.watch(self)
        if _hooked(self):  # (a hook's Python side effects would happen on the traced call only)
            tracer.stop(f"a forward hook on a {type(self).__name__} module (hooks run eagerly)")
    if tracer.recording and tracer.guard(self):
        for name, tensor in (*self.named_parameters(), *self.named_buffers()):
            tracer.label(tensor, name)
    return proceed(*args, **kwargs)


def _hooked(module: Module) -> bool:
    return bool(module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
                or module._backward_pre_hooks or GLOBAL_CALL_HOOKS)


def _rebinds(tracer: Any, module: Module, name: str, *value: Any) -> bool:
    """Whether `module.name = value` (or `del module.name`) changes what `module.name` finds
    (an attribute, parameter, buffer or submodule)."""
    attributes = vars(module)
    held = [attributes[name]] if name in attributes else [
        attributes[holder][name] for holder in ("_parameters", "_buffers", "_modules")
        if name in attributes.get(holder, {})]
    return not value or not held or held[0] is not value[0]


# Tensor methods that hand a tensor's values to Python: each stops the trace.
DATA_READERS = (
    ("tolist", "tolist()"), ("numpy", "numpy()"),
    ("__bool__", "bool() of a tensor"), ("__float__", "float() of a tensor"),
    ("__int__", "int() of a tensor"), ("__index__", "a tensor as an index"),
    ("__array__", "numpy reading a tensor"), ("__repr__", "printing a tensor"),
)

# Factories whose tensor Python values alone decide (sizes, a fill value, a `*_like` input's shape
# and dtype, which the guards fix): a line of the step.
CONSTANT_FACTORIES = ("zeros", "ones", "empty", "full", "eye", "arange", "linspace",
                      "logspace", "zeros_like", "ones_like", "empty_like", "full_like")
CONSTANT_FACTORY_METHODS = ("new_zeros", "new_ones", "new_empty", "new_full")
# torch.tensor of a Python number (`x[0] = 2.0` makes one) too.
NUMBER_FACTORIES = ("tensor", "as_tensor")
# Random factories and fills, replayed: the same generator draws in eager's order.
RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm")
RANDOM_FILLS = ("uniform_", "normal_", "bernoulli_", "exponential_", "random_")


def _handlers() -> dict[Any, Callable | _Row]:
    table: dict[Any, Callable | _Row] = {
        recording.write_inplace: _Row(line=lambda t, *args: t.write_inplace(*args),
                                      runs=False),
        recording.rebase_history: _Row(
            "an in-place op recorded in the graph on a tensor the step did not make",
            lambda t, tensor, *_: bool(t.of(tensor).name), runs=False),
        out_module.write: _Row(  # out=: the result copied in, as an in-place op's
            "an out= argument that resizes its tensor",
            lambda t, target, array, *_: target._data.shape != np.shape(array),
            line=lambda t, target, array, *_: t.write_inplace(target, array)),
        (Tensor.__dict__["grad"], "__set__"): _Row(  # `x.grad = None`: a line
            "a tensor assigned to a .grad in the step", lambda t, x, value: value is not None,
            line=lambda t, x, value: t.grad_emptied(x, t.phase, t.phase)),
        (Tensor.__dict__["data"], "__set__"): _Row("`.data =` in the step"),
        # A tensor the step did not make, changed so: the generated step would not change it.
        (Tensor.__dict__["requires_grad"], "__set__"): _Row(
            "requires_grad changed in the step on a tensor it did not make",
            lambda t, x, value: not t.of(x).made and bool(value) is not x._requires_grad,
            passing=True),
        Tensor.__dict__["detach_"]: _Row(
            "detach_() in the step on a tensor it did not make",
            lambda t, x, *_: not t.of(x).made and (x.grad_fn is not None or x._requires_grad),
            passing=True),
        gradients.grad: _Row("autograd.grad in the step (only loss.backward() is compiled)"),
        Module.__dict__["__setattr__"]: _Row(
            "a module's attribute set or deleted in the step ({1})", _rebinds, passing=True),
        Tensor.__dict__["item"]: _item,
        random_ops.empty_like_layout: _empty_like_layout,
        gradients.backward: _backward,
        Module.__dict__["__call__"]: _module_call,
        optimizer_module.run_step: optim.run_step,
        Optimizer.__dict__["zero_grad"]: optim.zero_grad,
        Module.__dict__["zero_grad"]: optim.zero_grad,
    }
    table[Module.__dict__["__delattr__"]] = table[Module.__dict__["__setattr__"]]
    return {**table, **_handlers_by_name()}


def _handlers_by_name() -> dict[Any, Callable | _Row]:
    """The handlers of the functions named in the lists above."""
    table: dict[Any, Callable | _Row] = {}
    for name, what in DATA_READERS:
        table[Tensor.__dict__[name]] = _Row(data_reason(what))
    for name in ("allclose", "equal"):
        table[getattr(predicates, name)] = table[getattr(predicates.PredicateMethods, name)] = \
            _Row(data_reason(f"torch.{name}"))
    for name in CONSTANT_FACTORIES + NUMBER_FACTORIES:
        table[getattr(factories, name)] = functools.partial(_factory, name)
    for name in CONSTANT_FACTORY_METHODS:
        table[Tensor.__dict__[name]] = functools.partial(_factory, name)
    for name in RANDOM_FACTORIES:
        table[getattr(random_ops, name)] = functools.partial(_random_factory, name)
    for name in RANDOM_FILLS:
        table[getattr(random_ops, name)] = functools.partial(_random_fill, name)
    # Seeding in the step: the generated step would draw on where eager starts again.
    for name in ("manual_seed", "seed", "set_state"):
        table[random_module.Generator.__dict__[name]] = _Row(
            "the step seeds or sets the state of a random generator")
    return table


HANDLERS: dict[Any, Callable | _Row] = {}
