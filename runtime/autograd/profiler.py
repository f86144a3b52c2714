"""`runtime.autograd.profiler`, as torch.autograd.profiler: the older profiler API.

    with torch.autograd.profiler.profile(with_flops=True) as prof:
        loss.backward()
    print(prof.table(sort_by="self_cpu_time_total"))

It records what runtime.profiler records (runtime/profiler/recorder.py); its results are
`function_events` and the `table` method, besides key_averages and the chrome trace.
"""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.profiler import _Profiling
from runtime.profiler.recorder import EventList, FunctionEventAvg, record_function

__all__ = ["profile", "record_function"]


class profile(_Profiling):  # noqa: N801 - torch's name
    """torch.autograd.profiler.profile: a context manager; `enabled=False` records nothing."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: Any = None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None,
                 post_processing_timeout_s: float | None = None,
                 activity_filters: Any = None) -> None:
        super().__init__(enabled, record_shapes, profile_memory, with_flops)
        self.entered = False

    def __enter__(self) -> profile:
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    @property
    def function_events(self) -> EventList | None:
        return None if self._recorder is None else self._recorder.events

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The table of every event (not averaged), as torch's legacy profiler prints it."""
        return self._events().table(sort_by, row_limit, max_name_column_width, header,
                                    top_level_events_only)

    def total_average(self) -> FunctionEventAvg:
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
