"""What every benchmark shares: the TinyModel's sizes and the timer."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

DIM_IN, HIDDEN, DIM_OUT, LR = 1000, 100, 10, 1e-3


def median_time(fn: Callable[[], object], repeat: int, warmup: int = 2) -> float:
    """Median wall time of fn() in seconds, garbage collection off while timing."""
    return median_times({"fn": fn}, repeat, rounds=1, warmup=warmup)["fn"]


def repeats(batch: int, repeat: int) -> int:
    """Fewer repetitions for the big batches, at least three."""
    return max(3, repeat if batch < 1024 else repeat // 4)


def median_times(functions: dict[str, Callable[[], object]], repeat: int, rounds: int = 5,
                 warmup: int = 2, by_round: dict[str, list[float]] | None = None,
                 probe: Callable[[], float] | None = None,
                 probes: list[float] | None = None) -> dict[str, float]:
    """median_time of each function over `repeat` calls, made in `rounds` blocks that the
    functions take turns at: each block is calls in a row (a training loop's steady state),
    and a slow spell of this shared machine falls on every function alike. The order of
    turns rotates from round to round, so that no function always follows the same other
    one. With `by_round`, each function's median within each round goes there too (name ->
    one per round); with `probe`, its value at the start of each round goes to `probes`."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    block = max(1, repeat // rounds)
    names = list(functions)
    enabled = gc.isenabled()
    try:
        for turn in range(rounds):
            if probe is not None and probes is not None:
                probes.append(probe())
            for name in names[turn % len(names):] + names[:turn % len(names)]:
                fn = functions[name]
                for _ in range(warmup):
                    fn()
                gc.disable()
                for _ in range(block):
                    start = time.perf_counter()
                    fn()
                    times[name].append(time.perf_counter() - start)
                if by_round is not None:
                    by_round.setdefault(name, []).append(statistics.median(times[name][-block:]))
                if enabled:
                    gc.enable()
    finally:
        if enabled:
            gc.enable()
    return {name: statistics.median(samples) for name, samples in times.items()}
