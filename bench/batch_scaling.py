"""How forward and backward time grow with the batch: the seed's claim 8, measured.

    python -m bench.batch_scaling                 batches 1 ... 4096; prints the fit, writes
                                                  batch-scaling.svg in the current directory
                                                  (never over a tracked file: the docs'
                                                  picture is --out docs/batch-scaling.svg)
    python -m bench.batch_scaling --quick         three batches, a few repeats: seconds
    python -m bench.batch_scaling --out p.png     the plot elsewhere (any matplotlib format)
    python -m bench.batch_scaling --no-plot       the table only

For the seed's TinyModel (1000 -> 100 -> ReLU -> 10, squared error summed), it times
forward and backward apart, for gradgen and for torch when it is installed, at each batch
size, and fits each as `fixed + per_sample * batch` (see `fit`). The fixed part is
what a step costs whatever the batch: one Python call per op and per node, the weights'
gradients (whose size does not depend on the batch). The per-sample part is the
arithmetic that grows with the batch: the matrix products and elementwise ops on
activations. The "fixed share" columns say how much of backward is the fixed part at a
small and at a large batch.

The plot (matplotlib, the `plot` extra) shows the measured times and the fitted lines on
log-log axes; without matplotlib the table is printed and the plot is skipped, with a
message saying so. BLAS runs on one thread (set before numpy is imported), as in
bench/run.py, so that the per-sample cost is not the thread pool's.
"""

from __future__ import annotations

import os
import sys

# The thread counts take effect only if numpy is not loaded yet; imported by a test (numpy
# already loaded), this module leaves the environment as it is, for the test's subprocesses.
if "numpy" not in sys.modules:
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import runtime  # noqa: E402
from bench import systems  # noqa: E402

FULL_BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
QUICK_BATCHES = [1, 16, 256]
DEFAULT_PLOT = Path("batch-scaling.svg")  # in the current directory
SMALL, LARGE = 16, 4096  # the batches the fixed share is reported at


def _libraries() -> dict[str, ModuleType]:
    """gradgen, and torch if it is installed (on one thread, as numpy's BLAS)."""
    libraries: dict[str, ModuleType] = {"gradgen": runtime}
    try:
        import torch
    except ImportError:
        return libraries
    torch.set_num_threads(1)
    libraries["torch"] = torch
    return libraries


def forward_backward(lib: ModuleType, batch: int) -> tuple[Callable, Callable]:
    """The TinyModel's forward (returns the loss) and backward at `batch`, in `lib`, with
    the weights and data every system shares (bench/systems.py)."""
    weights, x, y = systems.tinymodel_inputs(batch)
    params = [lib.tensor(w, requires_grad=True) for w in weights]
    inputs, target = lib.tensor(x), lib.tensor(y)
    linear = lib.nn.functional.linear

    def forward():
        for p in params:
            p.grad = None
        w1, b1, w2, b2 = params
        prediction = linear(linear(inputs, w1, b1).relu(), w2, b2)
        return (target - prediction).pow(2).sum()

    def backward(loss) -> None:
        loss.backward()

    return forward, backward


def time_batch(lib: ModuleType, batch: int, repeat: int) -> tuple[float, float]:
    """Median seconds of forward and of backward at `batch`, garbage collection off."""
    forward, backward = forward_backward(lib, batch)
    for _ in range(5):  # warm up: the first calls of a fresh graph are slower
        backward(forward())
    forwards, backwards = [], []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            loss = forward()
            middle = time.perf_counter()
            backward(loss)
            end = time.perf_counter()
            forwards.append(middle - start)
            backwards.append(end - middle)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(forwards), statistics.median(backwards)


def fit(batches: list[int], seconds: list[float]) -> tuple[float, float]:
    """`seconds = fixed + per_sample * batch` by least squares on the *relative* error:
    (fixed, per_sample), in seconds. Batches from 1 to 4096 span three orders of magnitude
    of time; plain least squares would fit the large batches alone (their errors are the
    largest in absolute terms) and leave the fixed part, which only the small batches
    show, to chance, even negative."""
    times = np.array(seconds)
    per_sample, fixed = np.polyfit(np.array(batches, dtype=float), times, 1, w=1 / times)
    return float(fixed), float(per_sample)


def measure(batches: list[int], repeat: int, libraries: dict[str, ModuleType]) -> dict:
    """{system: {"forward": [s per batch], "backward": [...], fits}} over `batches`."""
    results = {}
    for name, lib in libraries.items():
        times = [time_batch(lib, batch, max(3, repeat if batch < 1024 else repeat // 4))
                 for batch in batches]
        row: dict = {"forward": [t[0] for t in times], "backward": [t[1] for t in times]}
        for part in ("forward", "backward"):
            row[part + "_fit"] = fit(batches, row[part])
        results[name] = row
    return results


def fixed_share(fixed: float, per_sample: float, batch: int) -> float:
    """The fixed part's share of the fitted time at `batch`."""
    total = fixed + per_sample * batch
    return fixed / total if total > 0 else 0.0


def table(batches: list[int], results: dict) -> str:
    """The measured times (µs) per batch, then the fits."""
    names = list(results)
    head = "batch" + "".join(f"  {n + ' ' + p:>16}" for n in names for p in ("fwd", "bwd"))
    lines = [head]
    for index, batch in enumerate(batches):
        cells = "".join(f"  {results[n][p][index] * 1e6:>16.1f}" for n in names
                        for p in ("forward", "backward"))
        lines.append(f"{batch:>5}{cells}")
    lines.append("")
    lines.append(f"{'fit (µs)':<18}{'fixed':>10}{'per sample':>12}"
                 f"{f'fixed @{SMALL}':>12}{f'fixed @{LARGE}':>14}")
    for name in names:
        for part in ("forward", "backward"):
            fixed, per_sample = results[name][part + "_fit"]
            lines.append(f"{name + ' ' + part:<18}{fixed * 1e6:>10.1f}{per_sample * 1e6:>12.3f}"
                         f"{fixed_share(fixed, per_sample, SMALL):>12.0%}"
                         f"{fixed_share(fixed, per_sample, LARGE):>14.0%}")
    return "\n".join(lines)


def plot(batches: list[int], results: dict, path: Path) -> bool:
    """Measured backward and forward times and their fits, log-log; False (with a
    message) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'gradgen[plot]'): no plot written",
              file=sys.stderr)
        return False
    figure, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    line = np.geomspace(min(batches), max(batches), 100)
    for axis, part in zip(axes, ("backward", "forward"), strict=True):
        for name, colour in zip(results, ("tab:blue", "tab:orange"), strict=False):
            fixed, per_sample = results[name][part + "_fit"]
            axis.loglog(batches, [t * 1e6 for t in results[name][part]], "o", color=colour,
                        label=f"{name} measured")
            axis.loglog(line, (fixed + per_sample * line) * 1e6, "-", color=colour, alpha=0.6,
                        label=f"{name}: {fixed * 1e6:.0f} µs + {per_sample * 1e6:.2f} µs/sample")
        axis.set_title(f"TinyModel {part}")
        axis.set_xlabel("batch size")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    axes[0].set_ylabel("time (µs)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No date in the SVG's metadata: the committed picture changes only when the numbers do.
    figure.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(figure)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_scaling",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="three batches, a few repeats")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"the plot (default ./{DEFAULT_PLOT}; --quick: none)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--repeat", type=int, default=None)
    options = parser.parse_args(argv)
    batches = QUICK_BATCHES if options.quick else FULL_BATCHES
    repeat = options.repeat or (5 if options.quick else 40)
    results = measure(batches, repeat, _libraries())
    print(table(batches, results))
    out = options.out or (None if options.quick else DEFAULT_PLOT)
    if out is not None and not options.no_plot and plot(batches, results, out):
        print(f"plot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
