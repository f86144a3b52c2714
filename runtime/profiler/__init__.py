"""`runtime.profiler`, as torch.profiler: where forward and backward spend their time.

    with torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                                profile_memory=True, with_flops=True) as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")     # open in Perfetto or chrome://tracing

Forward ops are recorded under torch's names (`aten::addmm`), backward nodes as torch's
engine names them (`autograd::engine::evaluate_function: AddmmBackward0`), with the ops
their formulas run inside them; `record_function("name")` adds a block of your own. The
recording itself is runtime/profiler/recorder.py. gradgen runs on the CPU only: another
activity is switched off with torch's warning, and a profiler with none is an error.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterable
from typing import Any

from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute
from runtime.profiler.recorder import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    Recorder,
    chrome_trace,
    record_function,
    start,
    stop,
)

__all__ = ["profile", "ProfilerActivity", "record_function", "supported_activities",
           "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    """The devices a profiler may watch; gradgen has only the CPU."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    return {ProfilerActivity.CPU}


class _Profiling:
    """What both profilers share: a recorder started and stopped around a block, and its
    events, tables and trace."""

    def __init__(self, enabled: bool, record_shapes: bool, profile_memory: bool,
                 with_flops: bool) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self._recorder: Recorder | None = None

    def _start(self) -> None:
        if self.enabled:
            self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_flops)
            start(self._recorder)

    def _stop(self) -> None:
        if self._recorder is not None:
            stop(self._recorder)

    def _events(self) -> EventList:
        if self._recorder is None:
            raise RuntimeError("Profiler didn't finish running")  # as torch, before a run
        return self._recorder.events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One row per op name (and input shapes with `group_by_input_shape`): calls,
        self and total time, memory and FLOPs added up; `.table()` prints them."""
        return self._events().key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Write the trace as JSON for chrome://tracing or Perfetto: one event per call."""
        self._events()
        with open(path, "w", encoding="utf-8") as file:
            json.dump(chrome_trace(self._recorder), file)


class profile(_Profiling):  # noqa: N801 - torch's name
    """torch.profiler.profile: a context manager (or `start()` / `stop()`) recording every
    op and backward node run inside. `on_trace_ready(prof)` is called when it stops."""

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable | None = None, on_trace_ready: Callable | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        if schedule is not None:
            raise NotImplementedError("gradgen's profiler has no schedule: it records from "
                                      "start() to stop()")
        if with_stack or with_modules:
            warn_at_caller("gradgen's profiler records no Python stacks or modules: "
                           "with_stack and with_modules are ignored")
        chosen = set(supported_activities() if activities is None else activities)
        for activity in sorted(chosen - supported_activities(), key=lambda a: a.value):
            warn_at_caller(f"{activity.name} is not available, disabling {activity.name} "
                           "profiling")
        self.activities = chosen & supported_activities()
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        super().__init__(True, record_shapes, profile_memory, with_flops)

    def start(self) -> None:
        if not self.activities:
            raise AssertionError("No activities specified for the profiler")
        self._start()

    def stop(self) -> None:
        self._stop()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Count a training step (gradgen has no schedule to advance)."""
        self.step_num += 1

    def events(self) -> EventList:
        """Every recorded call, in the order they began."""
        return self._events()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
