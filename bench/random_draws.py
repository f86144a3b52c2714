"""A million random numbers: gradgen's torch-identical draws beside numpy's own generator
(PCG64) and torch's, as ratios. bench/run.py reports the same table.

    python -m bench.random_draws [--quick]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import runtime
from bench.common import median_times

SIZE = 10**6


def _draws(dtype: str) -> dict[str, dict[str, Callable[[], object]]]:
    """rand and randn of SIZE values of `dtype`, per system."""
    import torch

    rng = np.random.default_rng(0)
    ours, theirs, numpy_dtype = getattr(runtime, dtype), getattr(torch, dtype), np.dtype(dtype)
    return {
        f"rand({SIZE:.0e}), {dtype}": {
            "gradgen": lambda: runtime.rand(SIZE, dtype=ours),
            "numpy": lambda: rng.random(SIZE, dtype=numpy_dtype),
            "torch": lambda: torch.rand(SIZE, dtype=theirs),
        },
        f"randn({SIZE:.0e}), {dtype}": {
            "gradgen": lambda: runtime.randn(SIZE, dtype=ours),
            "numpy": lambda: rng.standard_normal(SIZE, dtype=numpy_dtype),
            "torch": lambda: torch.randn(SIZE, dtype=theirs),
        },
    }


def measure(repeat: int) -> dict[str, dict[str, float]]:
    """Median seconds per draw, per draw and system (the systems taking turns)."""
    results = {}
    for dtype in ("float32", "float64"):
        for name, functions in _draws(dtype).items():
            results[name] = median_times(functions, repeat)
    return results


def table(results: dict[str, dict[str, float]]) -> list[str]:
    lines = [f"## Random draws ({SIZE:,} values; gradgen's are torch's, bit for bit)", "",
             "| draw | gradgen ms | numpy ms | torch ms | gradgen / numpy | gradgen / torch |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, seconds in results.items():
        ours, numpy_s, torch_s = seconds["gradgen"], seconds["numpy"], seconds["torch"]
        lines.append(f"| {name} | {ours * 1e3:.2f} | {numpy_s * 1e3:.2f} | "
                     f"{torch_s * 1e3:.2f} | {ours / numpy_s:.2f}× | {ours / torch_s:.2f}× |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few repetitions")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    print("\n".join(table(measure(3 if args.quick else 30))))


if __name__ == "__main__":
    main()
