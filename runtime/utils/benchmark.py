"""torch.utils.benchmark's Timer on gradgen: time a statement the way the tutorials do.

Programs that compare two ways of computing something (a loop of per-sample gradients
against `vmap`, a Jacobian by `jacrev` against `jacfwd`) time them with
`Timer(stmt, globals=...).timeit(n)` or `.blocked_autorange()` and print the
`Measurement`. This module gives them the same objects: a Timer that runs `stmt` through
Python's `timeit`, and a Measurement with torch's fields (`times`, `mean`, `median`,
`iqr`) and torch's printed form, so that a tutorial runs unchanged and prints the same
report (with gradgen's times, of course).

Left out: `Compare` (torch's side-by-side table), the fuzzers, and callgrind's
instruction counts (`collect_callgrind`), which need valgrind and torch's C++ build.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Measurement", "TaskSpec", "Timer", "select_unit", "trim_sigfig", "timer"]

timer = _timeit.default_timer

# A measurement whose interquartile range is this share of its median or more is flagged.
IQR_WARN, IQR_GROSS_WARN = 0.1, 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed: the statement, its set-up and the labels shown with the result."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement), with the sub-label after a colon."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup in ("", "pass"):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The lines that head a Measurement's printed form."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections)


@dataclasses.dataclass(repr=False)
class Measurement:
    """One or more timings of a statement: `raw_times` holds each block's total seconds,
    each block running the statement `number_per_run` times."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict | None = None

    def __getattr__(self, name: str) -> Any:
        if name != "task_spec" and name in TaskSpec.__dataclass_fields__:
            return getattr(self.task_spec, name)  # m.stmt, m.label, m.num_threads, ...
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per run of the statement, one entry per block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q: float) -> float:
        """Linear interpolation between the sorted per-run times, as torch.quantile."""
        ordered = sorted(self.times)
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    @property
    def median(self) -> float:
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def iqr(self) -> float:
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def title(self) -> str:
        return self.task_spec.title

    def meets_confidence(self, threshold: float = IQR_WARN) -> bool:
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        return bool(self._warnings())

    def _warnings(self) -> list[str]:
        if self.meets_confidence(IQR_GROSS_WARN):
            if self.meets_confidence(IQR_WARN):
                return []
            why = "This could indicate system fluctuation."
        else:
            why = "This suggests significant environmental influence."
        share = self.iqr / self.median * 100
        return [f"  WARNING: Interquartile range is {share:.1f}% of the median measurement."
                f"\n           {why}"]

    def __repr__(self) -> str:
        n = len(self.raw_times)
        unit, scale = select_unit(self.median)
        lines = [f"<torch.utils.benchmark.utils.common.Measurement object at {id(self):#x}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            p25, p75 = self._quantile(0.25), self._quantile(0.75)
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({p25 / scale:.2f} to {p75 / scale:.2f})")
        runs = "runs per measurement," if n > 1 else "runs ,"
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} {runs} "
                     f"{threads} thread{'s' if threads > 1 else ''}")
        lines += self._warnings()
        return "\n".join(lines)

    @staticmethod
    def merge(measurements: Any) -> list[Measurement]:
        """Replicates of one task as one Measurement each, at one run per time."""
        grouped: dict[TaskSpec, list[float]] = {}
        for m in measurements:
            grouped.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in grouped.items()]


# torch computes these two in float32 (its default dtype); so do they here, so that a
# time at a unit's edge and a trimmed figure come out as torch's. numpy's float32 log10
# can be an ulp off the correctly rounded value torch's gives (log10(1e-6) = -6.0000005):
# taken in float64, then rounded.

def _log10(x: float) -> float:
    return float(np.float32(np.log10(np.float64(np.float32(x)))))


def select_unit(t: float) -> tuple[str, float]:
    """The unit that shows `t` seconds with one to three digits before the point."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def trim_sigfig(x: float, n: int) -> float:
    """`x` rounded to `n` significant figures."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(_log10(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * np.float32(scale))


class Timer:
    """Times `stmt` (after `setup`) in a namespace made of `globals`, as torch's Timer."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Any = "python") -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if str(getattr(language, "name", language)).lower() not in ("python", "py"):
            raise ValueError("gradgen's Timer runs Python statements only")
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label,
                                   description, env, num_threads)
        namespace = dict(globals or {})
        self._timer = _timeit.Timer(stmt=stmt, setup=setup or "pass", timer=timer,
                                    globals=namespace)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement `number` times (after a warm-up of a hundredth of that)."""
        self._timeit(max(number // 100, 2))
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: enough that the timer's own overhead is negligible."""
        overhead = statistics.median(self._timeit(0) for _ in range(5))
        number = 1
        while number * 10 <= 2147483647:
            taken = self._timeit(number)
            if taken > min_run_time or (overhead / taken <= 1e-4
                                        and taken >= min_run_time / 1000):
                break
            number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs until `min_run_time` seconds have been spent timing."""
        number = self._block_size(min_run_time)
        times: list[float] = []
        while sum(times) < min_run_time:
            times.append(self._timeit(number))
            if callback:
                callback(number, times[-1])
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> Measurement:
        """Blocks of runs until the interquartile range is under `threshold` of the median
        (after at least four blocks and `min_run_time` seconds), or `max_run_time`."""
        number = self._block_size(0.05)
        times: list[float] = []
        while True:
            times.append(self._timeit(number))
            if callback:
                callback(number, times[-1])
            measured = Measurement(number, times, self._task_spec)
            enough = len(times) > 3 and sum(times) > min_run_time
            if (enough and measured.meets_confidence(threshold)) or sum(times) > max_run_time:
                return measured
