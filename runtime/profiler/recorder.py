"""What the profilers record, and how: one event per op and per backward node, timed, with
their input shapes, FLOPs and the bytes they allocate; then averaged into torch's table.

torch's profiler hears of every op through the dispatcher's RecordFunction callbacks. Here
the recorder is an op mode on runtime/modes.py's stack, pushed while a profiler is on (in
its thread), and hears three things; nothing of any module is replaced:

- forward ops: every generated wrapper hands its call to the op modes, so each op of the
  spec is timed as `aten::addmm` (its wrapper's work, the graph's recording included, as
  torch's RecordFunction includes an op's autograd kernel). An op run inside another op
  (an out= call running the op itself) is one op, as in torch.
- the ops a backward formula runs on arrays (the engine's first-order backward): the
  engine asks the modes for the namespace its formulas call (`array_ops`), and gets one
  whose ops are timed, so `aten::mm` shows up inside `AddmmBackward0`, as in torch. A
  backward on Tensors (create_graph, hooks) runs the forward wrappers, heard already.
- backward nodes: the engine asks the modes for its `evaluate` once per backward call and
  gets it wrapped, recording `autograd::engine::evaluate_function: AddmmBackward0` around
  each node.

A composite op (linear, matmul) records the ops it is made of, not itself: in torch,
`aten::linear` would hold `aten::t` and `aten::addmm`.

Memory: an op's "self" bytes are those of the arrays it returned that are not views of its
inputs (torch also subtracts what an op frees; gradgen cannot see numpy free memory).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from generated import ops as generated_ops
from runtime import modes

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "Recorder", "active",
           "record_function", "format_time", "format_memory", "op_name"]

# Ops whose FLOPs are 2·M·N·K (a multiply and an add per term of each dot product).
MATMUL_LIKE = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::mv",
                         "aten::dot", "aten::addmv"})
# Pointwise arithmetic: one FLOP per element of the result. (torch's own counter counts only
# add and mul among these.)
ELEMENTWISE = frozenset(f"aten::{name}" for name in (
    "add", "add_", "sub", "sub_", "rsub", "mul", "mul_", "div", "div_", "neg", "pow", "pow_",
    "reciprocal", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "threshold_backward",
    "sigmoid_backward", "tanh_backward", "abs", "sin", "cos", "clamp", "clamp_min",
    "clamp_max", "where", "maximum", "minimum"))

KERNEL = "cpu_op"  # torch's trace categories
ANNOTATION = "user_annotation"


class FunctionEvent:
    """One recorded call: an op, a backward node or a record_function block. Times are
    kept in nanoseconds and shown in microseconds, as torch's."""

    def __init__(self, id: int, name: str, category: str, parent: FunctionEvent | None,
                 thread: int) -> None:
        self.id = id
        self.name = name
        self.category = category
        self.cpu_parent = parent
        self.cpu_children: list[FunctionEvent] = []
        self.thread = thread
        self.start_ns = time.perf_counter_ns()
        self.end_ns = self.start_ns
        self.input_shapes: list = []
        self.flops = 0
        self.self_cpu_memory_usage = 0
        if parent is not None:
            parent.cpu_children.append(self)

    key = property(lambda self: self.name)
    count = 1

    @property
    def cpu_time_total(self) -> float:
        """Microseconds from start to end, the time of the calls inside included."""
        return (self.end_ns - self.start_ns) / 1000

    @property
    def self_cpu_time_total(self) -> float:
        """Microseconds spent in this call itself, not in the calls it made."""
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes allocated by this call and the calls inside it."""
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def time_range(self) -> tuple[float, float]:
        return self.start_ns / 1000, self.end_ns / 1000

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time="
                f"{format_time(self.cpu_time_total)} start_us={self.start_ns / 1000:.3f} "
                f"end_us={self.end_ns / 1000:.3f} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, if grouped so) added up."""

    def __init__(self, key: str, input_shapes: list) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0

    def add(self, event: FunctionEvent) -> FunctionEventAvg:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.flops += event.flops
        return self

    @property
    def cpu_time(self) -> float:
        """The average total time of a call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{format_time(self.self_cpu_time_total)} cpu_time="
                f"{format_time(self.cpu_time_total)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """Events, or their averages, with torch's table and averaging."""

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """One row per op name (per name and input shapes with `group_by_input_shape`), in
        the order the names first occur."""
        rows: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            key = (event.name, str(event.input_shapes)) if group_by_input_shape \
                else (event.name,)
            row = rows.get(key)
            if row is None:
                shapes = event.input_shapes if group_by_input_shape else []
                row = rows[key] = FunctionEventAvg(event.name, shapes)
            row.add(event)
        return EventList(rows.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", [])
        for event in self:
            total.add(event)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """torch's table: one row per entry, sorted by the attribute `sort_by` (largest
        first: `cpu_time_total`, `self_cpu_time_total`, `count`, `cpu_memory_usage`,
        `flops`, ...), at most `row_limit` rows."""
        return build_table(self, sort_by, row_limit, max_name_column_width, header,
                           top_level_events_only)


def format_time(microseconds: float) -> str:
    """As torch prints a time: `81.340us`, `1.234ms`, `2.000s`."""
    if abs(microseconds) >= 1e6:
        return f"{microseconds / 1e6:.3f}s"
    if abs(microseconds) >= 1e3:
        return f"{microseconds / 1e3:.3f}ms"
    return f"{microseconds:.3f}us"


def format_memory(nbytes: int) -> str:
    """As torch prints bytes: `444 B`, `6.25 KB`, `1.50 MB`."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _flops_unit(events: Iterable) -> tuple[str, float]:
    """The unit of the FLOPs column, from the smallest non-zero count (torch's choice)."""
    counts = [event.flops for event in events if event.flops > 0]
    if not counts:
        return "FLOPs", 1.0
    units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    power = max(0, min(int(math.log10(min(counts)) // 3), len(units) - 1))
    return units[power], 10.0 ** (3 * power)


def _selected_rows(events: list, sort_by: str | None, row_limit: int | None,
                   top_level_only: bool) -> list:
    """The rows a table shows: top-level ones only if asked, sorted by the attribute
    `sort_by` (largest first), at most `row_limit` of them (all when negative or None)."""
    rows = [e for e in events if not top_level_only or getattr(e, "cpu_parent", None) is None]
    if sort_by is not None:
        rows = sorted(rows, key=lambda event: getattr(event, sort_by), reverse=True)
    return rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows


class _Layout:
    """A table's columns: those torch always shows, then memory columns if any memory was
    recorded, input shapes for averages grouped by them, FLOPs if any were counted."""

    def __init__(self, events: list, rows: list, name_width: int) -> None:
        # Percentages are of the whole recording, not of the rows shown.
        self.total = sum(event.self_cpu_time_total for event in events) or 1.0
        self.memory = any(event.cpu_memory_usage for event in events)
        self.shapes = any(event.input_shapes for event in events) and \
            all(isinstance(event, FunctionEventAvg) for event in events)
        self.flops = any(event.flops for event in events)
        flops_name, self.flops_scale = _flops_unit(events)
        self.width = min(max([len(e.key) for e in rows] + [4]) + 4, name_width)
        self.columns = [("Name", self.width), ("Self CPU %", 12), ("Self CPU", 12),
                        ("CPU total %", 12), ("CPU total", 12), ("CPU time avg", 12)]
        self.columns += [("CPU Mem", 12), ("Self CPU Mem", 12)] if self.memory else []
        self.columns += [("# of Calls", 12)]
        self.columns += [("Input Shapes", 45)] if self.shapes else []
        self.columns += [(f"Total {flops_name}", 12)] if self.flops else []
        self.rule = "".join("-" * w + "  " for _, w in self.columns)

    def line(self, values: list[str]) -> str:
        return "".join(f"{v:>{w}}  " for v, (_, w) in zip(values, self.columns, strict=True))

    def header(self) -> list[str]:
        return [self.rule, self.line([name for name, _ in self.columns]), self.rule]

    def row(self, event: Any) -> str:
        name = event.key if len(event.key) <= self.width else event.key[:self.width - 3] + "..."
        count = getattr(event, "count", 1)
        values = [name, f"{100 * event.self_cpu_time_total / self.total:.2f}%",
                  format_time(event.self_cpu_time_total),
                  f"{100 * event.cpu_time_total / self.total:.2f}%",
                  format_time(event.cpu_time_total),
                  format_time(event.cpu_time_total / count if count else 0.0)]
        if self.memory:
            values += [format_memory(event.cpu_memory_usage),
                       format_memory(event.self_cpu_memory_usage)]
        values += [str(count)]
        if self.shapes:
            text = str(event.input_shapes)
            values += [text if len(text) <= 45 else text[:42] + "..."]
        if self.flops:
            values += [f"{event.flops / self.flops_scale:8.3f}" if event.flops else "--"]
        return self.line(values)


def build_table(events: list, sort_by: str | None, row_limit: int, name_width: int,
                header: str | None, top_level_only: bool) -> str:
    """Lay the events out as torch's profiler tables do: right-aligned columns of width
    12 (45 for input shapes), the name column as wide as the longest name plus 4, at most
    `name_width`; memory columns if any memory was recorded, FLOPs if any were counted."""
    rows = _selected_rows(events, sort_by, row_limit, top_level_only)
    layout = _Layout(events, rows, name_width)
    out = [header] if header else []
    out += [*layout.header(), *(layout.row(event) for event in rows), layout.rule,
            f"Self CPU time total: {format_time(layout.total if events else 0.0)}", ""]
    return "\n".join(out)


# -- recording ------------------------------------------------------------------------------

def _shape(value: Any) -> list:
    """An input's shape as torch's `Input Shapes` shows it: [] for a non-tensor."""
    if isinstance(value, np.ndarray | np.generic):
        return list(np.shape(value))
    return []


def _flops(name: str, args: tuple, result: Any) -> int:
    """2·M·N·K for a matrix product (the last two arguments are the matrices, whose
    shapes give M×K and K×N), the number of elements of the result for pointwise
    arithmetic, 0 otherwise."""
    if name in MATMUL_LIKE:
        matrices = [a for a in args if isinstance(a, np.ndarray)][-2:]
        if len(matrices) == 2:
            first, second = matrices
            batch = first.shape[0] if first.ndim == 3 else 1
            k = first.shape[-1]
            n = second.shape[-1] if second.ndim >= 2 else 1
            m = first.shape[-2] if first.ndim >= 2 else 1
            return 2 * batch * m * n * k
        return 0
    if name in ELEMENTWISE and isinstance(result, np.ndarray | np.generic):
        return int(np.size(result))
    return 0


def _allocated(args: tuple, result: Any) -> int:
    """Bytes of the result arrays that are new memory, not views of an input."""
    outputs = result if isinstance(result, tuple | list) else (result,)
    inputs = [a for a in args if isinstance(a, np.ndarray)]
    total = 0
    for output in outputs:
        if not isinstance(output, np.ndarray):
            continue
        if any(np.may_share_memory(output, a) for a in inputs):  # a view, or written in place
            continue
        total += output.nbytes
    return total


def _array(value: Any) -> Any:
    """A Tensor's array (an op mode hears the wrappers, on Tensors); anything else as it is."""
    data = getattr(value, "_data", None)
    return data if isinstance(data, np.ndarray | np.generic) else value


def _arrays(values: Any) -> Any:
    if isinstance(values, tuple | list):
        return tuple(_array(v) for v in values)
    return _array(values)


class Recorder:
    """The state of one recording: its options, its events, and the stack of calls that
    have begun and not ended (the parent of the next event)."""

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.events = EventList()
        self.stack: list[FunctionEvent] = []
        self.thread = threading.get_ident()
        self.pid = os.getpid()
        self.start_ns = time.perf_counter_ns()
        self.mode = _RecordingMode(self)

    def begin(self, name: str, category: str) -> FunctionEvent:
        parent = self.stack[-1] if self.stack else None
        event = FunctionEvent(len(self.events) + 1, name, category, parent, self.thread)
        self.events.append(event)
        self.stack.append(event)
        return event

    def end(self, event: FunctionEvent) -> None:
        event.end_ns = time.perf_counter_ns()
        if self.stack and self.stack[-1] is event:
            self.stack.pop()

    def timed(self, name: str, function: Callable, args: tuple, kwargs: dict) -> Any:
        """`function(*args, **kwargs)`, an op, recorded as an `aten::` event, unless it is
        called from inside another op."""
        stack = self.stack
        if stack and stack[-1].category == KERNEL and stack[-1].name.startswith("aten::"):
            return function(*args, **kwargs)
        event = self.begin(name, KERNEL)
        try:
            result = function(*args, **kwargs)
        finally:
            self.end(event)
        inputs = (*args, *(v for k, v in kwargs.items() if k != "out" or v is not None))
        if self.record_shapes:
            event.input_shapes = [_shape(_array(a)) for a in inputs]
        if self.with_flops:
            event.flops = _flops(name, _arrays(inputs), _arrays(result))
        if self.profile_memory:
            event.self_cpu_memory_usage = _allocated(_arrays(inputs), _arrays(result))
        return result

    def timed_op(self, name: str, function: Callable) -> Callable:
        """`function` (an op on arrays) recording an `aten::` event per call."""
        recorder = self

        def run(*args: Any, **kwargs: Any) -> Any:
            return recorder.timed(name, function, args, kwargs)

        run.__wrapped__ = function
        return run

    def timed_evaluate(self, evaluate: Callable) -> Callable:
        """The engine's `evaluate(node, grads)`, recording torch's evaluate_function event."""
        recorder = self

        def run(node: Any, grads: list) -> Any:
            event = recorder.begin(f"autograd::engine::evaluate_function: {node.name()}", KERNEL)
            try:
                return evaluate(node, grads)
            finally:
                recorder.end(event)

        return run

    def finish(self) -> None:
        """Close the blocks still open when recording stopped."""
        now = time.perf_counter_ns()
        for event in self.stack:
            event.end_ns = now
        self.stack.clear()


class _TimedArrayOps:
    """The first-order backward's op namespace (runtime/namespaces.py's array_ops) with each
    op of the spec timed, so `aten::mm` shows up inside `AddmmBackward0` as in torch."""

    def __init__(self, recorder: Recorder, namespace: Any) -> None:
        self._namespace = namespace
        for attribute, value in vars(namespace).items():
            if callable(value) and attribute in generated_ops.BY_NAME:
                setattr(self, attribute, recorder.timed_op(f"aten::{attribute}", value))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._namespace, name)


class _RecordingMode(modes.OpMode):
    """How a recorder hears the runtime: an op mode on runtime/modes.py's stack. Each op of
    the spec is timed as it runs (its wrapper, the graph's recording included, as torch's
    RecordFunction times an op's autograd kernel); a backward's nodes and the ops of its
    first-order formulas are timed through the engine's questions to the modes."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def __torch_dispatch__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return self.recorder.timed(op_name(func), func, args, kwargs or {})

    def wrap_evaluate(self, task: Any, evaluate: Callable) -> Callable:
        return self.recorder.timed_evaluate(evaluate)

    def array_ops(self, namespace: Any) -> Any:
        return _TimedArrayOps(self.recorder, namespace)


_NAMES: dict[Callable, str] = {}


def op_name(wrapper: Callable) -> str:
    """torch's name of the op a generated wrapper runs: `ops.add_Tensor` -> `aten::add`,
    its in-place form `ops.add_Tensor_` -> `aten::add_`."""
    if not _NAMES:
        for key, overload in generated_ops.OVERLOADS.items():
            _NAMES.setdefault(overload.wrapper, "aten::" + key.split(".")[0])
        for name, overloads in generated_ops.BY_NAME.items():
            for overload in overloads:
                _NAMES.setdefault(overload.wrapper, f"aten::{name}")
    return _NAMES.get(wrapper) or f"aten::{getattr(wrapper, '__name__', 'unknown')}"


def active() -> Recorder | None:
    """The recorder of the profiler that is on in this thread, if any."""
    for mode in modes.op_modes():
        if isinstance(mode, _RecordingMode):
            return mode.recorder
    return None


def start(recorder: Recorder) -> None:
    if active() is not None:
        raise RuntimeError("Profiler is already enabled on this thread")
    modes.push(recorder.mode)


def stop(recorder: Recorder) -> None:
    if recorder.mode in modes.op_modes():
        modes.pop(recorder.mode)
        recorder.finish()


class record_function:  # noqa: N801 - torch's name
    """A named block in the profile (`with record_function("step"):`), or a decorator.
    Outside a profiler it records nothing."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._event: FunctionEvent | None = None
        self._recorder: Recorder | None = None

    def __enter__(self) -> record_function:
        recorder = active()
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, ANNOTATION)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._recorder is not None and self._event is not None:
            self._recorder.end(self._event)
        self._event = self._recorder = None

    def __call__(self, function: Callable) -> Callable:
        def run(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return function(*args, **kwargs)

        run.__name__ = getattr(function, "__name__", "run")
        run.__doc__ = function.__doc__
        return run


def chrome_trace(recorder: Recorder) -> dict:
    """The recording in the Trace Event format that chrome://tracing and Perfetto open: one
    complete ("X") event per call, times in microseconds from the start of the recording."""
    events = []
    for event in recorder.events:
        args: dict[str, Any] = {"External id": event.id}
        if recorder.record_shapes and event.category == KERNEL:
            args["Input Dims"] = event.input_shapes
        if event.flops:
            args["flops"] = event.flops
        events.append({"ph": "X", "cat": event.category, "name": event.name,
                       "pid": recorder.pid, "tid": recorder.thread,
                       "ts": (event.start_ns - recorder.start_ns) / 1000,
                       "dur": (event.end_ns - event.start_ns) / 1000, "args": args})
    return {"schemaVersion": 1, "displayTimeUnit": "ms", "traceName": "gradgen",
            "profile_memory": int(recorder.profile_memory),
            "record_shapes": int(recorder.record_shapes),
            "with_flops": int(recorder.with_flops), "traceEvents": events}
