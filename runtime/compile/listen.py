"""The tracer as a mode: how one traced call hears what the step does, with no attribute of any
module replaced.

`listening(tracer)` pushes a `TraceMode` on this thread's stack of op modes (runtime/modes.py),
beneath the modes there, for one eager call of the step. A call it has something to do with goes
to its handler (HANDLERS, by the function heard), which writes lines, stops the trace, or pauses
it around the call. A call that runs kernels runs as a copy of its function whose globals see
`kernels` as the tracer's listening namespace, so that each outermost kernel call becomes a
line; nothing of the module changes."""

from __future__ import annotations

import contextlib
import dis
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from runtime import factories, kernels, modes, predicates, random_ops, recording
from runtime import out as out_module
from runtime import random as random_module
from runtime._tensor import Tensor
from runtime.autograd import gradients
from runtime.compile import optim
from runtime.compile.emit import TraceBreak, attribute, call, var
from runtime.compile.numbers import Number
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
        self.overlays: dict[int, dict | None] = {}  # id(a module's globals) -> the copy's
        self.originals: dict[int, Any] = {}  # id(a copied function) -> the function

    def hear(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        return self.heard(func, args, kwargs, self)

    def hear_runtime(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        return self.heard(func, args, kwargs, None)

    def runtime_event(self, event: str, args: tuple) -> None:
        tracer = self.tracer
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

        def proceed(*args: Any, **kwargs: Any) -> Any:
            return self.run(func, key, args, kwargs, facet)

        if handler is None:
            return self.run(func, key, args, kwargs, facet)
        return handler(self.tracer, proceed, args, kwargs)

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
        """`func`'s copy that hears `kernels`; None if its module calls no kernel."""
        if type(func) is not types.FunctionType:
            return None
        original = self.originals.get(id(func), func)
        overlay = self.overlay(original.__globals__)
        if overlay is None:
            return None
        found = overlay.get(original.__name__)
        if found is not None and self.originals.get(id(found)) is original:
            return found
        return None if _writes_globals(original.__code__) else self._copy(original, overlay)

    def overlay(self, namespace: dict) -> dict | None:
        """A module's globals as its copies see them (`kernels` the listening namespace); None
        for a module that names no kernels."""
        key = id(namespace)
        if key in self.overlays:
            return self.overlays[key]
        names = [name for name, value in namespace.items() if value is kernels]
        overlay = None
        if names and namespace is not vars(kernels):
            overlay = dict(namespace)
            for name in names:
                overlay[name] = self.kernels
            for name, value in namespace.items():
                if type(value) is types.FunctionType and value.__globals__ is namespace and \
                        not _writes_globals(value.__code__):
                    overlay[name] = self._copy(value, overlay)
        self.overlays[key] = overlay
        return overlay

    def _copy(self, function: types.FunctionType, namespace: dict) -> types.FunctionType:
        copy = types.FunctionType(function.__code__, namespace, function.__name__,
                                  function.__defaults__, function.__closure__)
        copy.__kwdefaults__ = function.__kwdefaults__
        copy.__qualname__ = function.__qualname__
        copy.__dict__.update(function.__dict__)
        self.originals[id(copy)] = function
        return copy


_STORES = frozenset({dis.opmap["STORE_GLOBAL"], dis.opmap["DELETE_GLOBAL"]})
_WRITES: dict[types.CodeType, bool] = {}


def _writes_globals(code: types.CodeType) -> bool:
    """Whether the code (or code it defines) rebinds a global: its copy would rebind the copied
    globals' name, so it runs as it is."""
    found = _WRITES.get(code)
    if found is None:
        found = any(op in _STORES for op in code.co_code[::2]) or any(
            _writes_globals(const) for const in code.co_consts
            if type(const) is types.CodeType)
        _WRITES[code] = found
    return found


class _Kernels:
    """runtime/kernels.py as the copies see it: each kernel heard by the tracer."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer
        self._listeners: dict[str, Callable] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(kernels, name)
        if not callable(value) or isinstance(value, type) or name.startswith("__") or \
                getattr(value, "__module__", None) != kernels.__name__:
            return value
        listener = self._listeners.get(name)
        if listener is None:
            tracer = self._tracer

            def listener(*args: Any, **kwargs: Any) -> Any:
                return tracer.kernel_call(name, value, args, kwargs)

            listener.__wrapped__ = value
            self._listeners[name] = listener
        return listener


# -- the handlers: handler(tracer, proceed, args, kwargs); `proceed(*args, **kwargs)` runs the call

def _write_inplace(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    if tracer.recording:
        tracer.write_inplace(*args)
    return modes.PASS


def _rebase_history(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    if tracer.recording and tracer.of(args[0]).name:
        tracer.stop("an in-place op recorded in the graph on a tensor the step did not make")
    return modes.PASS


def _stopping(reason: str, passing: bool = False, when: Callable | None = None) -> Callable:
    """A handler that stops the trace for `reason` when the step makes the call (and
    `when(tracer, *args)` holds)."""
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        if tracer.recording and (when is None or when(tracer, *args)):
            tracer.stop(reason, passing)
        return proceed(*args, **kwargs)

    return handler


def _data_reason(what: str) -> str:
    return f"the step reads a tensor's values in Python ({what}): its control flow may " \
        "depend on the data"


def _set_grad(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`.grad = None` is a line of the step (a hand-written zero_grad)."""
    if tracer.recording:
        tracer.grad_set(*args)
    return proceed(*args, **kwargs)


def _factory(name: str) -> Callable:
    """A factory whose tensor Python values alone decide: a line of the step."""
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        values = args[1:] if name.startswith("new_") else args
        recording = tracer.recording and (
            name not in NUMBER_FACTORIES or values and type(values[0]) in (bool, int, float))
        result = proceed(*args, **kwargs)
        if recording and tracer.recording and isinstance(result, Tensor):
            tracer.constant_factory(name, result, kwargs)
        return result

    return handler


def _random_factory(name: str) -> Callable:
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        if not tracer.recording:
            return proceed(*args, **kwargs)
        result = tracer.pause(proceed, *args, **kwargs)
        tracer.random_factory(name, args, kwargs, result)
        return result

    return handler


def _random_fill(name: str) -> Callable:
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        given = {k: v for k, v in kwargs.items() if v is not None}  # (the default generator)
        if not tracer.recording or not tracer.random_fill(name, args[0], args[1:], given):
            return proceed(*args, **kwargs)
        return tracer.pause(proceed, *args, **kwargs)

    return handler


def _empty_like_layout(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    tensor = proceed(*args, **kwargs)
    if tracer.recording:
        input, dtype = args
        try:
            tracer.data_seen(input)
            source = tracer.value_of(input._data, "empty_like's input")
            kind = [] if dtype is None else [var(tracer.source.constant(dtype.numpy))]
            tree = call(attribute("np", "empty_like"), [var(source.name), *kind])
            tracer.factory(tree, tensor._data, (source.name,),
                           f"forward: an uninitialised tensor laid out as {source.name}, "
                           "to fill")
        except TraceBreak as stop:
            tracer.stop(stop.reason)
    return tensor


def _out_write(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """out=: the result copied into a tensor the step made or holds, as an in-place op's; an out
    tensor resized stops the trace."""
    target, array = args[0], args[1]
    if tracer.recording and target._data.shape != np.shape(array):
        tracer.stop("an out= argument that resizes its tensor")
    elif tracer.recording:
        tracer.write_inplace(target, array)
    return proceed(*args, **kwargs)


_ITEM_CODE = Tensor.__dict__["item"].__code__


def _item(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`Tensor.item`: a float the step returns at once (`return loss.item()`) is a line of the
    step; an optimizer's state is read afresh at every call; any other use stops the trace."""
    self = args[0]
    if not tracer.recording or len(args) != 1 or kwargs or not isinstance(self, Tensor):
        return _stopping(_data_reason("item()"))(tracer, proceed, args, kwargs)
    name = tracer.names.get(id(self._data))
    value = proceed(*args, **kwargs)
    if type(value) is float and optim.holds_state(tracer, self):
        try:
            array = tracer.value_of(self._data, "an optimizer's state").name
        except TraceBreak as stop:
            tracer.stop(stop.reason)
            return value
        read = tracer.source.fresh("item")
        tracer.source.add(read, call(attribute(array, "item")), (array,),
                          f"{tracer.where}: a number of its state, read at every call",
                          tracer.phase).neutral = True
        return Number(value, var(read), (read,))
    if type(value) is float and name is not None and \
            _returned_at_once(_caller_of_item(), tracer.code):
        tracer.items[id(value)] = (value, call(attribute(name, "item")))
    else:
        tracer.stop(_data_reason("item()"))
    return value


def _caller_of_item() -> Any:
    """The frame that called `Tensor.item` (the step's own, for `return loss.item()`)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code is not _ITEM_CODE:
        frame = frame.f_back
    return frame.f_back if frame is not None else None


def _returned_at_once(frame: Any, code: Any) -> bool:
    """Whether `frame` runs the step's own code and returns the call's result right after it,
    alone or in tuples and lists of values loaded after it (CPython 3.11's bytecode;
    elsewhere False)."""
    if code is None or frame.f_code is not code:
        return False
    instructions = list(dis.get_instructions(code))
    # (f_lasti may point into the CALL's inline cache: the last instruction at or before.)
    here = max((k for k, i in enumerate(instructions) if i.offset <= frame.f_lasti),
               default=None)
    if here is None or instructions[here].opname != "CALL":
        return False
    rest, pushed, index = instructions[here + 1:], 0, 0
    while index < len(rest):
        if rest[index].opname == "RETURN_VALUE":
            return pushed == 0
        step = _stack_step(rest, index, pushed)
        if step is None:
            return False
        index, pushed = step
    return False


def _stack_step(rest: list, index: int, pushed: int) -> tuple[int, int] | None:
    """The instruction at `index` as (next index, values loaded after the call's result); None
    for one that could reach that result."""
    instruction = rest[index]
    name = instruction.opname
    if name in ("BUILD_TUPLE", "BUILD_LIST"):
        # Of values loaded after it: one value; of it too: the container is followed instead.
        return index + 1, pushed - instruction.arg + 1 if instruction.arg <= pushed else 0
    if name in ("LOAD_FAST", "LOAD_CONST", "LOAD_DEREF") or \
            name == "LOAD_GLOBAL" and not instruction.arg & 1:
        return index + 1, pushed + 1
    if name == "LOAD_METHOD" and pushed and \
            [(i.opname, i.arg) for i in rest[index + 1:index + 3]] == \
            [("PRECALL", 0), ("CALL", 0)]:
        return index + 3, pushed  # `x.item()`, `h.detach()` on a value loaded after
    if name == "LOAD_ATTR" and pushed:
        return index + 1, pushed  # `x.data`: one value for one
    if name in ("BINARY_SUBSCR", "BINARY_OP") and pushed >= 2:
        return index + 1, pushed - 1  # `hidden[0]`, `a + b`: one for two loaded after it
    return None


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
        try:
            tracer.check_grads()
        except TraceBreak as stop:
            tracer.stop(stop.reason)
    return result


def _module_call(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    self = args[0]
    if tracer.recording:
        tracer.watch(self)
    if tracer.recording and (self._forward_hooks or self._forward_pre_hooks
                             or self._backward_hooks or self._backward_pre_hooks
                             or GLOBAL_CALL_HOOKS):
        # A hook's Python side effects would happen on the traced call only.
        tracer.stop(f"a forward hook on a {type(self).__name__} module (hooks run eagerly)")
    if tracer.recording and all(m is not self for m in tracer.modules):
        tracer.modules.append(self)
        for name, tensor in (*self.named_parameters(), *self.named_buffers()):
            tracer.label(tensor, name)
    return proceed(*args, **kwargs)


def _module_write(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """A module's attribute set or deleted in the step stops the trace, unless it sets the
    object held already."""
    self, name, *value = args
    if tracer.recording and not (value and _module_attribute(self, name) is value[0]):
        tracer.stop(f"a module's attribute set or deleted in the step ({name})", passing=True)
    return proceed(*args, **kwargs)


_MISSING = object()


def _module_attribute(module: Module, name: str) -> Any:
    """What `module.name` finds: an attribute, parameter, buffer or submodule."""
    attributes = vars(module)
    if name in attributes:
        return attributes[name]
    for holder in ("_parameters", "_buffers", "_modules"):
        if name in attributes.get(holder, {}):
            return attributes[holder][name]
    return _MISSING


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


def _handlers() -> dict[Any, Callable]:
    table: dict[Any, Callable] = {
        recording.write_inplace: _write_inplace,
        recording.rebase_history: _rebase_history,
        (Tensor.__dict__["grad"], "__set__"): _set_grad,
        (Tensor.__dict__["data"], "__set__"): _stopping("`.data =` in the step"),
        # A tensor the step did not make, changed so: the generated step would not change it.
        (Tensor.__dict__["requires_grad"], "__set__"): _stopping(
            "requires_grad changed in the step on a tensor it did not make", True,
            lambda tracer, t, value: not tracer.of(t).made and bool(value) is not
            t._requires_grad),
        Tensor.__dict__["detach_"]: _stopping(
            "detach_() in the step on a tensor it did not make", True,
            lambda tracer, t, *_: not tracer.of(t).made and
            (t.grad_fn is not None or t._requires_grad)),
        Tensor.__dict__["item"]: _item,
        random_ops.empty_like_layout: _empty_like_layout, out_module.write: _out_write,
        gradients.backward: _backward,
        gradients.grad: _stopping("autograd.grad in the step (only loss.backward() is "
                                  "compiled)"),
        Module.__dict__["__call__"]: _module_call,
        Module.__dict__["__setattr__"]: _module_write,
        Module.__dict__["__delattr__"]: _module_write,
        optimizer_module.run_step: optim.run_step,
        Optimizer.__dict__["zero_grad"]: optim.zero_grad,
        Module.__dict__["zero_grad"]: optim.zero_grad,
    }
    for name, what in DATA_READERS:
        table[Tensor.__dict__[name]] = _stopping(_data_reason(what))
    for name in ("allclose", "equal"):
        stop = _stopping(_data_reason(f"torch.{name}"))
        table[getattr(predicates, name)] = stop
        table[getattr(predicates.PredicateMethods, name)] = stop
    for name in CONSTANT_FACTORIES + NUMBER_FACTORIES:
        table[getattr(factories, name)] = _factory(name)
    for name in CONSTANT_FACTORY_METHODS:
        table[Tensor.__dict__[name]] = _factory(name)
    for name in RANDOM_FACTORIES:
        table[getattr(random_ops, name)] = _random_factory(name)
    for name in RANDOM_FILLS:
        table[getattr(random_ops, name)] = _random_fill(name)
    # Seeding in the step: the generated step would draw on where eager starts again.
    for name in ("manual_seed", "seed", "set_state"):
        table[random_module.Generator.__dict__[name]] = _stopping(
            "the step seeds or sets the state of a random generator")
    return table


HANDLERS: dict[Any, Callable] = {}
