"""torch.utils.benchmark's Timer and Measurement (runtime/utils/benchmark.py) against torch's.

Times differ from run to run, so the printed reports are compared on Measurements built
from the same raw times in both libraries (exactly, the object address aside), and the
Timer itself on what does not depend on the clock: how many runs and blocks it made,
the labels, the errors.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.utils.benchmark as torch_benchmark

import runtime
from runtime.utils import benchmark

ADDRESS = re.compile(r"0x[0-9a-f]+")

SPECS = [
    {"stmt": "x + 1", "setup": "pass"},
    {"stmt": "x + 1", "setup": "y = 2", "label": "add", "sub_label": "small",
     "description": "ones(3)"},
    {"stmt": "a = x * 2\nb = a + 1", "setup": "import math\nk = 3", "sub_label": "two lines"},
    {"stmt": "f(x)", "setup": "", "description": "a call", "num_threads": 4},
]

RAW_TIMES = [
    ([2.5e-5], 10),  # one measurement: no IQR line
    ([1.0e-3, 1.1e-3, 0.9e-3], 1000),  # three: a median, no IQR
    ([2.0e-2, 2.1e-2, 2.05e-2, 1.98e-2, 2.3e-2], 10000),  # steady: no warning
    ([1.0, 1.4, 0.8, 2.0, 1.1, 0.9], 100),  # spread: a gross warning
    ([3.0, 3.3, 2.95, 3.2, 3.05], 7),  # between the two thresholds
]


def _both(spec: dict, raw: list[float], number: int) -> tuple:
    theirs = torch_benchmark.Measurement(number, list(raw), torch_benchmark.TaskSpec(**spec))
    ours = benchmark.Measurement(number, list(raw), benchmark.TaskSpec(**spec))
    return theirs, ours


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize(("raw", "number"), RAW_TIMES)
def test_measurement_prints_and_reads_as_torch(spec: dict, raw: list, number: int) -> None:
    theirs, ours = _both(spec, raw, number)
    assert ADDRESS.sub("0x", repr(ours)) == ADDRESS.sub("0x", repr(theirs))
    for field in ("median", "mean", "iqr"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-12)
    assert ours.times == pytest.approx(theirs.times, rel=1e-15)
    assert ours.title == theirs.title
    assert ours.has_warnings == theirs.has_warnings
    assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)
    assert (ours.stmt, ours.label, ours.num_threads) == (theirs.stmt, theirs.label,
                                                          theirs.num_threads)


def test_merge_joins_replicates_of_one_task() -> None:
    spec = SPECS[1]
    pairs = [_both(spec, raw, number) for raw, number in RAW_TIMES[2:4]]
    theirs = torch_benchmark.Measurement.merge([t for t, _ in pairs])
    ours = benchmark.Measurement.merge([o for _, o in pairs])
    assert len(ours) == len(theirs) == 1
    assert ADDRESS.sub("0x", repr(ours[0])) == ADDRESS.sub("0x", repr(theirs[0]))


@pytest.mark.parametrize("seconds", [3.2e-9, 4.5e-7, 2.0e-5, 0.0123, 1.5, 42.0])
def test_units_and_significant_figures(seconds: float) -> None:
    assert benchmark.select_unit(seconds) == torch_benchmark.select_unit(seconds)
    for figures in (1, 2, 3):
        assert benchmark.trim_sigfig(seconds, figures) == pytest.approx(
            torch_benchmark.trim_sigfig(seconds, figures), rel=1e-12)


def test_timeit_runs_the_statement_number_times() -> None:
    counts = {}
    for library in (torch, runtime):
        calls = []
        namespace = {"x": library.ones(3), "calls": calls}
        measured = library.utils.benchmark.Timer(
            stmt="calls.append(x + 1)", globals=namespace, label="count").timeit(200)
        counts[library.__name__] = (len(calls), measured.number_per_run,
                                    len(measured.raw_times), measured.title)
        assert measured.median > 0
    # 200 timed runs after a warm-up of max(200 // 100, 2) = 2
    assert counts["runtime"] == counts["torch"] == (202, 200, 1, "count")


def test_autoranges_spend_at_least_the_minimum_time() -> None:
    timer = benchmark.Timer(stmt="sum(range(50))")
    blocked = timer.blocked_autorange(min_run_time=0.05)
    assert sum(blocked.raw_times) >= 0.05 and blocked.number_per_run >= 1
    seen = []
    adaptive = timer.adaptive_autorange(min_run_time=0.01, max_run_time=0.5,
                                        callback=lambda n, t: seen.append((n, t)))
    assert len(seen) == len(adaptive.raw_times) >= 1
    assert "measurement" in repr(adaptive)


def test_errors_as_torch() -> None:
    for library in (torch, runtime):
        with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
            library.utils.benchmark.Timer(stmt=lambda: 1)
        with pytest.raises(NameError, match="name 'undefined_name' is not defined"):
            library.utils.benchmark.Timer(stmt="undefined_name + 1").timeit(2)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _both(SPECS[0], [1.0], 1)[1].nothing  # noqa: B018


def test_a_tutorial_imports_it_under_python_m_runtime() -> None:
    import runtime.aliases

    assert runtime.aliases.TORCH_MODULES["torch.utils.benchmark"] == "runtime.utils.benchmark"
