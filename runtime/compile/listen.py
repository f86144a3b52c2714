"""The tracer as a mode: how one traced call hears what the step does, with no attribute of
any module replaced.

`listening(tracer)` pushes a `TraceMode` on the calling thread's stack of op modes
(runtime/modes.py), beneath the modes there already, for one eager call of the step: a
runtime mode, it hears the ops of the spec, the public calls no function mode heard
(`.item()`, `torch.zeros`, `loss.backward()`) and the runtime's own steps (RUNTIME:
`recording.write_inplace`, `Module.__call__`, an optimizer's `run_step`...). Another
thread, or this one after the call, finds the stacks as they were and computes as it
always does.

Each call heard runs on with the mode still pushed, so the calls it makes are heard too:

- a call the tracer has something to do with (HANDLERS, by the function heard) goes to
  its handler, which writes lines, stops the trace, or pauses it around the call;
- a call that runs kernels (runtime/kernels.py, which the generated wrappers call by
  module attribute, `kernels.addmm(...)`) runs as a copy of its function whose globals see
  `kernels` as the tracer's listening namespace: each outermost kernel call becomes a line
  (`vN = kernels.NAME(args)`). The copy shares its code, defaults and closure with the
  function; the other functions of its module are copied alike, so that a helper's kernel
  calls are heard too. Nothing of the module changes.

A call's own mode check, when its body starts, finds the call expected (`entering`) and
runs on: the tracer hears each call once.
"""

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
from runtime.optim import optimizer as optimizer_module
from runtime.optim.optimizer import Optimizer

# The phase of the lines after a backward: work on the gradients (clip_grad_norm_), or
# the next forward of a step that has several.
AFTER_BACKWARD = "after backward"

_local = threading.local()  # .tracers: this thread's tracers listening now, innermost last


def current() -> Any:
    """The tracer listening on this thread, if a step is being traced here."""
    tracers = getattr(_local, "tracers", None)
    return tracers[-1] if tracers else None


@contextlib.contextmanager
def listening(tracer: Any) -> Iterator[None]:
    """The tracer's mode pushed on this thread for the duration of one eager call, under the
    modes pushed already (a TorchFunctionMode, the profiler), which hear the step's calls
    first, as they do when it runs eagerly."""
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

    # -- hearing ----------------------------------------------------------------------------
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
            tracer.made.add(id(args[0]))
            tracer.keep.append(args[0])
        elif event == "history":
            tracer.node_made(*args)
        elif event == "version":
            tracer.version_moved(args[0])

    def heard(self, func: Callable, args: tuple, kwargs: dict, facet: Any) -> Any:
        """A call heard as an op (`facet`, the mode, taken off its stack meanwhile) or as a
        runtime step or public call (`facet` None: on the stack still)."""
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
        """What names a heard function in HANDLERS: the function (a copy's original), or a
        property's (property, "__set__")."""
        owner = getattr(func, "__self__", None)
        if type(owner) is property:
            return owner, func.__name__
        return self.originals.get(id(func), func)

    def run(self, func: Callable, key: Any, args: tuple, kwargs: dict, facet: Any) -> Any:
        """Run the call on, with the mode on its stack (the calls it makes are heard): as
        the copy of its function that hears its kernels when the trace records."""
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

    # -- the copies that hear kernels -----------------------------------------------------------
    def copy_of(self, func: Any) -> Any:
        """`func` run with `kernels` heard: a copy of it in its module's copied globals;
        None if its module calls no kernel (or it is not a Python function)."""
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
        """A module's globals as its copies see them: `kernels` the listening namespace,
        each function of the module its copy. None for a module that names no kernels."""
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
    """Whether the function (or a function it defines) rebinds a global of its module
    (`global x; x = ...`): its copy would rebind the copied globals' name instead, so it
    runs as it is."""
    found = _WRITES.get(code)
    if found is None:
        found = any(op in _STORES for op in code.co_code[::2]) or any(
            _writes_globals(const) for const in code.co_consts
            if type(const) is types.CodeType)
        _WRITES[code] = found
    return found


class _Kernels:
    """runtime/kernels.py as a traced call's copies see it: each kernel heard by the
    tracer (`Tracer.kernel_call`), everything else the module's own."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer
        self._listeners: dict[str, Callable] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        # (A copy that sets an attribute of the module sets the module's.)
        if name in ("_tracer", "_listeners"):
            object.__setattr__(self, name, value)
        else:
            setattr(kernels, name, value)

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


# -- the handlers: what the tracer does with the calls it has something to do with -------------
# Each is handler(tracer, proceed, args, kwargs): `proceed(*args, **kwargs)` runs the call.

def _write_inplace(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    if tracer.recording:
        tracer.write_inplace(*args)
    return modes.PASS


def _rebase_history(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    if tracer.recording and id(args[0]) in tracer.tensors:
        tracer.stop("an in-place op recorded in the graph on a tensor the step did not make")
    return modes.PASS


def _paused(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    tracer.paused += 1
    try:
        return proceed(*args, **kwargs)
    finally:
        tracer.paused -= 1


def _stopping(reason: str, passing: bool = False) -> Callable:
    """A handler that stops the trace for `reason` when the step makes the call."""
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        if tracer.recording:
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


def _set_requires_grad(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """A tensor the step did not make, set to require grad or not: the guards would check
    its flag as the step left it, and the generated step would not set it."""
    tensor, value = args
    if tracer.recording and id(tensor) not in tracer.made and \
            bool(value) is not tensor._requires_grad:
        tracer.stop("requires_grad changed in the step on a tensor it did not make",
                    passing=True)
    return proceed(*args, **kwargs)


def _detach_(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    tensor = args[0]
    if tracer.recording and id(tensor) not in tracer.made and \
            (tensor.grad_fn is not None or tensor._requires_grad):
        tracer.stop("detach_() in the step on a tensor it did not make", passing=True)
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
        result = _paused(tracer, proceed, args, kwargs)
        tracer.random_factory(name, args, kwargs, result)
        return result

    return handler


def _random_fill(name: str) -> Callable:
    def handler(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
        given = {k: v for k, v in kwargs.items() if v is not None}  # (the default generator)
        if not tracer.recording or not tracer.random_fill(name, args[0], args[1:], given):
            return proceed(*args, **kwargs)
        return _paused(tracer, proceed, args, kwargs)

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
    """out= (runtime/out.py's `write`): the result copied into a tensor the step made or
    holds (AMSGrad's `torch.maximum(m, v, out=m)`), as an in-place op's is; an out tensor
    resized stops the trace."""
    target, array = args[0], args[1]
    if tracer.recording and target._data.shape != np.shape(array):
        tracer.stop("an out= argument that resizes its tensor")
    elif tracer.recording:
        tracer.write_inplace(target, array)
    return proceed(*args, **kwargs)


_ITEM_CODE = Tensor.__dict__["item"].__code__


def _item(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """`Tensor.item`: a float the step returns at once (`return loss.item()`, or among
    other such values, `return loss.item(), accuracy.item()`) is a line of the step, which
    the generated code returns; Python does nothing else with it; an optimizer's state
    (its step count) is read afresh at every call. Any other use stops the trace."""
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
        # (Read once, into a variable: the update's arithmetic names it many times.)
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
    """Whether `frame` runs the step's own code and, right after the call it is in,
    returns its result: alone, or in tuples or lists with values loaded after it (names,
    constants, their attributes, items and sums, their methods' results without arguments:
    `loss.item(), (h[0].detach(), h[1].detach())`), none of which can reach it (CPython
    3.11's bytecode; on another, False: the trace stops)."""
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
    """The instruction at `index` after the call, as (next index, values loaded after the
    call's result); None for one that could reach that result."""
    instruction = rest[index]
    name = instruction.opname
    if name in ("BUILD_TUPLE", "BUILD_LIST"):
        # Of values loaded after it only: one value for those; or of it too (and maybe
        # of values before it): the container holds it now, and is followed instead.
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
    """`loss.backward()`: traced through the engine's own walk (Tracer.backward), then run
    by the engine, unheard; every `.grad` it wrote is checked against the traced lines."""
    if tracer.recording:
        try:
            tracer.backward(*args, **kwargs)
        except TraceBreak as stop:
            tracer.stop(stop.reason)
        except Exception as error:  # the engine will raise it again, eagerly
            tracer.stop(f"tracing backward raised {type(error).__name__}: {error}")
    try:
        result = _paused(tracer, proceed, args, kwargs)
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
    if tracer.recording and (self._forward_hooks or self._forward_pre_hooks):
        # A hook is Python: what it does besides tensor work (keeping an activation,
        # counting calls) would happen on the traced call only.
        tracer.stop(f"a forward hook on a {type(self).__name__} module (hooks run eagerly)")
    if tracer.recording and all(m is not self for m in tracer.modules):
        tracer.modules.append(self)
        for name, tensor in (*self.named_parameters(), *self.named_buffers()):
            tracer.parameter_names.setdefault(id(tensor), name)
    return proceed(*args, **kwargs)


def _module_write(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """A module's attribute set or deleted in the step (a parameter made anew, a flag
    flipped) is Python the generated step would not replay: the trace stops. Setting an
    attribute to the object it holds already changes nothing (`model.train()`)."""
    self, name, *value = args
    if tracer.recording and not (value and _module_attribute(self, name) is value[0]):
        tracer.stop(f"a module's attribute set or deleted in the step ({name})", passing=True)
    return proceed(*args, **kwargs)


_MISSING = object()


def _module_attribute(module: Module, name: str) -> Any:
    """What `module.name` finds: the instance's attribute, or a parameter, buffer or
    submodule of that name."""
    attributes = vars(module)
    if name in attributes:
        return attributes[name]
    for holder in ("_parameters", "_buffers", "_modules"):
        if name in attributes.get(holder, {}):
            return attributes[holder][name]
    return _MISSING


def _run_step(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    return optim.step_listener(tracer, proceed)(*args)


def _zero_grad(tracer: Any, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    return optim.zero_grad_listener(tracer, proceed)(*args)


# Tensor methods that hand a tensor's values to Python: the step's Python may then depend
# on the data (or print it, which only eager does at every step). Each stops the trace.
DATA_READERS = (
    ("tolist", "tolist()"), ("numpy", "numpy()"),
    ("__bool__", "bool() of a tensor"), ("__float__", "float() of a tensor"),
    ("__int__", "int() of a tensor"), ("__index__", "a tensor as an index"),
    ("__array__", "numpy reading a tensor"), ("__repr__", "printing a tensor"),
)

# Factories whose tensor Python values alone decide (sizes, a fill value, a dtype; a
# `*_like` or `new_*` input's shape and dtype, which the guards fix): made in the step
# (an RNN's first hidden state), each is a line of the step. torch.tensor and from_numpy
# are not among them: the data they read could change behind the trace's back.
CONSTANT_FACTORIES = ("zeros", "ones", "empty", "full", "eye", "arange", "linspace",
                      "logspace", "zeros_like", "ones_like", "empty_like", "full_like")
CONSTANT_FACTORY_METHODS = ("new_zeros", "new_ones", "new_empty", "new_full")
# torch.tensor of a Python number (`x[0] = 2.0` makes one) is a constant factory too.
NUMBER_FACTORIES = ("tensor", "as_tensor")
# The random factories of a size (torch.randn(b, nz) in a GAN's step): each a line of
# the step that calls the factory again, drawing from the same generator in eager's order.
RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm")
# The random in-place fills of Tensor (runtime/random_ops.py) a step may replay.
RANDOM_FILLS = ("uniform_", "normal_", "bernoulli_", "exponential_", "random_")


def _handlers() -> dict[Any, Callable]:
    table: dict[Any, Callable] = {
        recording.write_inplace: _write_inplace,
        recording.rebase_history: _rebase_history,
        (Tensor.__dict__["grad"], "__set__"): _set_grad,
        (Tensor.__dict__["data"], "__set__"): _stopping("`.data =` in the step"),
        (Tensor.__dict__["requires_grad"], "__set__"): _set_requires_grad,
        Tensor.__dict__["detach_"]: _detach_, Tensor.__dict__["item"]: _item,
        random_ops.empty_like_layout: _empty_like_layout, out_module.write: _out_write,
        gradients.backward: _backward,
        gradients.grad: _stopping("autograd.grad in the step (only loss.backward() is "
                                  "compiled)"),
        Module.__dict__["__call__"]: _module_call,
        Module.__dict__["__setattr__"]: _module_write,
        Module.__dict__["__delattr__"]: _module_write,
        optimizer_module.run_step: _run_step,
        Optimizer.__dict__["zero_grad"]: _zero_grad, Module.__dict__["zero_grad"]: _zero_grad,
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
    # Seeding a generator in the step: the generated step would draw on from where the
    # last call left it, where eager starts again from the seed.
    for name in ("manual_seed", "seed", "set_state"):
        table[random_module.Generator.__dict__[name]] = _stopping(
            "the step seeds or sets the state of a random generator")
    return table


# (Made at the first trace: Tensor's methods are all in place by then.)
HANDLERS: dict[Any, Callable] = {}
