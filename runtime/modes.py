"""The mode stack: the one place where a call into the runtime can be heard, and answered.

Every public function and Tensor method (generated/ops.py, generated/tensor_methods.py,
the hand-written ones) and every op of the spec opens with one check,

    if _modes.active:
        heard = _modes.dispatch(mm, (self_, mat2), {"out": out}, _modes.PUBLIC_OP)
        if heard is not _modes.PASS:
            return heard

so a program with no mode pushed pays one global read per call. With a mode pushed (in any
thread) `dispatch` looks at the calling thread's two stacks:

- function modes (`runtime.overrides.TorchFunctionMode`, torch's): they hear the public
  calls a program makes (`torch.add`, `Tensor.add`, `F.linear`...). While a mode's
  `__torch_function__(func, types, args, kwargs)` runs, that mode is off the stack, so the
  `func(*args, **kwargs)` it calls runs on (to the next mode down, or to the op itself)
  instead of coming back to it. The ops a public function is made of are not heard: the
  function runs with the mode off, as torch's C++ ops run unseen.
- op modes (`OpMode` below): they hear every op of the spec as it runs, the ops that
  composite functions (`linear` -> `t`, `addmm`) and backward formulas on Tensors are made
  of included, each with its generated wrapper as `func`: `ops.addmm`, `ops.add_Tensor`,
  `ops.add_Tensor_` (in place). These are torch's dispatch level: the profiler is one; a
  tracer is one. An op mode is also off its stack while its `__torch_dispatch__` runs.
  During a backward the engine asks the op modes for its evaluator (`wrap_evaluate`), for
  the namespace the first-order formulas run their ops on (`array_ops`), and tells them of
  each gradient it sums back to its input's shape (`summed_to_shape`). The profiler and
  the explorer's recording are op modes.

- runtime modes (an op mode with `hears_runtime`, runtime.compile's tracer): they also
  hear the public calls that are not ops and that no function mode heard, and the
  runtime's own steps that no public call or op makes, through the same check with the
  flag RUNTIME (`recording.write_inplace`, `Module.__call__`, an optimizer's `run_step`,
  `out.write`...), and, through `notify`, what just happened (`recording.wrap` made a
  Tensor of a kernel's result, `set_history` gave it a node). The innermost such mode
  hears them, and stays on its stack meanwhile.

Each call that no mode of the thread hears gets PASS back and runs as usual.

How a tool uses it (a tracer, say):

    class Tracer(OpMode):
        def __torch_dispatch__(self, func, types, args, kwargs):
            # func: a generated wrapper; args: its positional parameters as it received
            # them, kwargs: its keyword-only ones (out= included)
            result = func(*args, **kwargs)      # run it (this mode is off meanwhile)...
            self.record(func, args, kwargs, result)
            return result                       # ...or return any value instead

    with Tracer():      # pushed for the block, on this thread only
        step()

Which overload a wrapper runs: generated/ops.py's OVERLOADS and BY_NAME name each overload's
wrapper (`runtime.utils._python_dispatch.overload_of(func)` gives torch's OpOverload,
`aten.addmm.default`). While the tracer handles an op it is off the stack, so what the op
runs inside (its forward-mode tangents, an out= call running the op again) is not heard.
A backward's nodes are heard through `wrap_evaluate(task, evaluate)`; with
`tensor_backward = True` every backward runs its formulas on Tensors, so their ops come
through `__torch_dispatch__` too (as they do for a TorchDispatchMode).

`push` / `pop` do the same as `with`. Nothing here replaces an attribute of any module.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["active", "dispatch", "PASS", "PUBLIC", "OP", "PUBLIC_OP", "OpMode", "push", "pop",
           "function_modes", "op_modes", "wrap_evaluate", "array_ops", "tensor_backward",
           "summed_to_shape", "consults", "RUNTIME", "notify", "heard"]

# How many modes are pushed, over all threads: the one value every wrapper reads.
active = 0

# Who may hear a call, a flag of `dispatch`: function modes (a public function or method),
# op modes (an op of the spec), or both (`torch.mm` is public and an op).
PUBLIC = 1
OP = 2
PUBLIC_OP = PUBLIC | OP
# A step of the runtime itself, heard by runtime modes only (an op mode with hears_runtime).
RUNTIME = 4


class _Pass:
    """What `dispatch` returns when no mode hears the call: run it as usual."""

    def __repr__(self) -> str:
        return "PASS"


PASS = _Pass()

_lock = threading.Lock()


class _Stacks(threading.local):
    """This thread's modes, innermost last."""

    def __init__(self) -> None:
        self.function: list = []
        self.op: list = []


_stacks = _Stacks()


def function_modes() -> list:
    """The calling thread's function modes, innermost last (a copy)."""
    return list(_stacks.function)


def op_modes() -> list:
    """The calling thread's op modes, innermost last (a copy)."""
    return list(_stacks.op)


def _count(change: int) -> None:
    global active
    with _lock:
        active += change


def push(mode: Any, outermost: bool = False) -> None:
    """Put `mode` on top of this thread's stack of its kind (an `OpMode`, or a function mode);
    `outermost`: at the bottom, under the modes pushed already, which hear calls first (a
    tool that watches a call from beneath the user's modes: runtime.compile's tracer)."""
    stack = _stacks.op if isinstance(mode, OpMode) else _stacks.function
    stack.insert(0, mode) if outermost else stack.append(mode)
    _count(1)


def pop(mode: Any, outermost: bool = False) -> None:
    """Take `mode` off this thread's stack; it must be the innermost of its kind (the
    outermost, with `outermost`)."""
    stack = _stacks.op if isinstance(mode, OpMode) else _stacks.function
    if not stack or stack[0 if outermost else -1] is not mode:
        raise RuntimeError("a mode was exited that is not the innermost one of this thread")
    stack.pop(0 if outermost else -1)
    _count(-1)


def _types(args: tuple, kwargs: dict) -> tuple:
    """torch's `types`: the classes among the arguments that define `__torch_function__`
    (gradgen's Tensor does not, so for plain tensors this is empty)."""
    seen: list[type] = []
    for value in (*args, *kwargs.values()):
        kind = type(value)
        if kind not in seen and getattr(kind, "__torch_function__", None) is not None:
            seen.append(kind)
    return tuple(seen)


def dispatch(func: Callable, args: tuple, kwargs: dict, heard_by: int = PUBLIC) -> Any:
    """Hand the call `func(*args, **kwargs)` to this thread's innermost mode that hears it
    (`heard_by`: PUBLIC, OP or both), with that mode off its stack while it handles the
    call; PASS if no mode does."""
    if heard_by & PUBLIC and _stacks.function:
        stack = _stacks.function
        mode = stack.pop()
        try:
            return mode.__torch_function__(func, _types(args, kwargs), args, kwargs)
        finally:
            stack.append(mode)
    if heard_by & OP and _stacks.op:
        stack = _stacks.op
        mode = stack.pop()
        try:
            return mode.hear(func, args, kwargs)
        finally:
            stack.append(mode)
    if heard_by & RUNTIME or heard_by == PUBLIC:  # (a public call no function mode heard)
        for mode in reversed(_stacks.op):
            if mode.hears_runtime:
                return mode.hear_runtime(func, args, kwargs)
    return PASS


def heard(function: Callable | None = None, *, by: int = PUBLIC) -> Callable:
    """The check above, written once: `@heard` (or `@heard(by=RUNTIME)`) on a hand-written
    function or method gives it the four lines' behaviour, the decorated function itself
    being the `func` a mode hears and the call's own arguments its `args` and `kwargs`.

    It costs one Python call more than the check written in line, with no mode pushed
    (about 0.1 µs a call): what a training step calls on every op (Module.__call__, linear,
    the optimizers' steps, the Tensor properties) keeps the lines; the rest may take this.
    """
    if function is None:
        return lambda decorated: heard(decorated, by=by)

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if active:
            answer = dispatch(checked, args, kwargs, by)
            if answer is not PASS:
                return answer
        return function(*args, **kwargs)

    checked.__heard__ = True  # what `consults` reads
    return checked


def notify(event: str, *args: Any) -> None:
    """Tell this thread's innermost runtime mode what the runtime just did (`event`: "made"
    for a new Tensor, "wrapped", "history", "version")."""
    for mode in reversed(_stacks.op):
        if mode.hears_runtime:
            mode.runtime_event(event, args)
            return


class OpMode:
    """A mode that hears every op of the spec as it runs (torch's TorchDispatchMode level).
    Subclasses write `__torch_dispatch__`; `wrap_evaluate` and `array_ops` let them see a
    backward's nodes and the ops its first-order formulas run on arrays, or, with
    `tensor_backward`, have every backward run its formulas on Tensors, through the ops."""

    tensor_backward = False
    # Whether the mode hears the runtime's own steps too (RUNTIME, `notify`).
    hears_runtime = False

    def hear(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """An op's call, handed to `__torch_dispatch__` (a subclass may present `func`
        otherwise: runtime.utils._python_dispatch gives torch's OpOverload)."""
        return self.__torch_dispatch__(func, _types(args, kwargs), args, kwargs)

    def __torch_dispatch__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return func(*args, **(kwargs or {}))

    def hear_runtime(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """A step of the runtime (RUNTIME): PASS to let it run as usual, or its result."""
        return PASS

    def runtime_event(self, event: str, args: tuple) -> None:
        """What the runtime just did (`notify`)."""

    def wrap_evaluate(self, task: Any, evaluate: Callable) -> Callable:
        """The engine's `evaluate(node, grads)` for one backward (`task`, the engine's
        GraphTask), as this mode wants it run."""
        return evaluate

    def summed_to_shape(self, node: Any, index: int, grad: Any, shape: tuple) -> None:
        """Hears of a gradient the engine is about to sum back to its input's shape."""

    def array_ops(self, namespace: Any) -> Any:
        """The namespace a first-order backward runs its formulas' ops on (arrays)."""
        return namespace

    def __enter__(self) -> OpMode:
        push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        pop(self)


def wrap_evaluate(task: Any, evaluate: Callable) -> Callable:
    """The engine's evaluator as this thread's op modes want it: each mode's wrapper around
    those of the modes pushed after it, as `with` blocks nest."""
    for mode in reversed(_stacks.op):
        evaluate = mode.wrap_evaluate(task, evaluate)
    return evaluate


def summed_to_shape(node: Any, index: int, grad: Any, shape: tuple) -> None:
    """Tell this thread's op modes of a gradient the engine sums back to `shape`."""
    for mode in _stacks.op:
        mode.summed_to_shape(node, index, grad, shape)


def array_ops(namespace: Any) -> Any:
    """The array op namespace as this thread's op modes want it."""
    for mode in _stacks.op:
        namespace = mode.array_ops(namespace)
    return namespace


def tensor_backward() -> bool:
    """Whether an op mode of this thread wants backward's formulas run on Tensors."""
    return any(mode.tensor_backward for mode in _stacks.op)


def consults(function: Any) -> bool:
    """Whether `function` (or the function it wraps) opens with the mode check: its code
    calls `dispatch` on this module, or `heard` made it."""
    while function is not None:
        if getattr(function, "__heard__", False):
            return True
        names = getattr(getattr(function, "__code__", None), "co_names", ())
        if "dispatch" in names and ("_modes" in names or "modes" in names):
            return True
        function = getattr(function, "__wrapped__", None)
    return False
