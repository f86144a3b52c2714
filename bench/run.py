"""Benchmarks: gradgen beside PyTorch, HIPS autograd and hand-written numpy, as ratios.

    python bench/run.py            the full run (a few minutes); writes BENCHMARKS.md
    python bench/run.py --quick    a few seconds, to check that every benchmark runs

In-process comparisons pin every BLAS to one thread (set before numpy is imported):
mixing torch's and numpy's thread pools in one process distorts both. A second table
runs torch with its default threads, in a separate process. OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE, which some machines set for old OpenBLAS builds (they slow a current
numpy's matrix products about 1.6x), are dropped here before numpy loads OpenBLAS, and
the report names the BLAS kernel that ran (threadpoolctl); tests and CI leave them set.
"""

from __future__ import annotations

import os
import sys

# These take effect only if numpy is not loaded yet; imported by a test (numpy already
# loaded), this module leaves the environment as it is, for the test's subprocesses.
if "numpy" not in sys.modules:
    for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")
    for _variable in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(_variable, None)

import argparse  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What the benchmarks compare with: the `bench` extra of pyproject.toml.
BENCH_EXTRA = ("autograd", "threadpoolctl", "torch")


def missing_extra() -> list[str]:
    """The packages of the bench extra that are not installed."""
    import importlib.util

    return [name for name in BENCH_EXTRA if importlib.util.find_spec(name) is None]


if __name__ == "__main__" and not {"-h", "--help"} & set(sys.argv[1:]) and missing_extra():
    print(f"bench/run.py needs the bench extra ({', '.join(missing_extra())} missing): "
          "pip install -e '.[bench]'", file=sys.stderr)
    sys.exit(2)

import runtime  # noqa: E402
from bench import batch_scaling, figures, random_draws, systems  # noqa: E402
from bench.common import LR, median_time, median_times, repeats  # noqa: E402


def python_speed(samples: int = 200) -> float:
    """Microseconds for a fixed pure-Python loop (1,000 integer additions), the median of
    `samples`: how fast the machine runs Python just then. Machines that share their cores
    have slow spells, in which Python-heavy work (eager gradgen, torch's dispatch, a
    compiled step's guards) slows more than BLAS does; the report prints this beside the
    ratios, taken at the start of each round of the TinyModel steps."""
    def loop() -> int:
        total = 0
        for number in range(1_000):
            total += number
        return total

    times = []
    for _ in range(samples):
        start = time.perf_counter()
        loop()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def tinymodel_steps(batches: list[int], repeat: int, rounds: int) -> dict:
    """Seconds per training step of the seed's TinyModel, per system and batch size.

    The systems take turns, a block of steps each per round (see median_times), in
    `rounds` rounds: short blocks, so that a slow spell of the machine (they last tens
    of milliseconds here) falls on every system alike.
    """
    results: dict[str, dict[int, float]] = {}
    for batch in batches:
        weights, x, y = systems.tinymodel_inputs(batch)
        steps = {name: make(weights, x, y, LR) for name, make in systems.STEPS.items()}
        steps = {name: step for name, step in steps.items() if step is not None}
        by_round: dict[str, list[float]] = {}
        probes: list[float] = []
        for name, seconds in median_times(steps, repeats(batch, repeat), rounds=rounds,
                                          by_round=by_round, probe=lambda: python_speed(10),
                                          probes=probes).items():
            results.setdefault(name, {})[batch] = seconds
            results.setdefault("rounds", {}).setdefault(name, {})[batch] = by_round[name]
        results.setdefault("probes", {})[batch] = probes
    return results


# A round whose Python probe reads at most this much above the run's fastest is "calm".
CALM = 1.25


def machine_state(probes: list[float]) -> str:
    """The Python probes of the rounds, as the report's Machine state sentence."""
    fastest = min(probes)
    calm = sum(p <= CALM * fastest for p in probes)
    return (f"Machine state: a pure-Python loop of 1,000 additions, timed at the start of "
            f"each TinyModel round, took {fastest:.1f}–{max(probes):.1f} µs (median "
            f"{statistics.median(probes):.1f} µs); {calm} of {len(probes)} rounds began "
            f"within {CALM - 1:.0%} of the fastest. Where Python runs slower (a machine that "
            "shares its cores has such spells), numpy's BLAS slows less, and the ratios of "
            "Python-heavy systems rise.")


# The TinyModel steps run in 60 rounds of about ten steps per system (a quarter of that at
# batch 4096). With 20 rounds, four runs of the same code in a row gave batch-256 ratios from
# 1.005 to 1.038 on this machine, as slow spells fell on one system's blocks more than
# another's; with 40 or 60 rounds, three runs in a row spanned 2% (0.996-1.017 in one
# spell, 1.015-1.035 in another). How slow the machine is still moves the ratio itself.
STEP_ROUNDS = 60


def mlp_steps(batches: list[int], repeat: int) -> dict:
    """Seconds per training step of an MLP with cross-entropy and Adam (issue 14)."""
    results: dict[str, dict[int, float]] = {}
    for batch in batches:
        weights, x, target = systems.mlp_inputs(batch)
        steps = {name: make(weights, x, target, LR)
                 for name, make in systems.MLP_STEPS.items()}
        for name, seconds in median_times(steps, repeats(batch, repeat)).items():
            results.setdefault(name, {})[batch] = seconds
    return results


def backward_vs_batch(batches: list[int], repeat: int) -> dict:
    """gradgen's backward alone, per batch size, with a fit fixed + per_sample * batch."""
    times = {}
    for batch in batches:
        weights, x, y = systems.tinymodel_inputs(batch)
        forward, backward = systems.gradgen_forward_backward(weights, x, y)
        samples = []
        for _ in range(repeats(batch, repeat)):
            loss = forward()
            start = time.perf_counter()
            backward(loss)
            samples.append(time.perf_counter() - start)
        times[batch] = statistics.median(samples)
    # On the relative error, as bench/batch_scaling.py fits: plain least squares follows the
    # large batches alone and leaves the fixed part to chance (it came out negative).
    fixed, per_sample = batch_scaling.fit(list(times), list(times.values()))
    return {"times": times, "fixed": fixed, "per_sample": per_sample}


def chain_costs(length: int, repeat: int) -> dict:
    """Forward cost per op and backward cost per node on a chain of tiny elementwise ops,
    with Python's garbage collector on (as a program runs) and off.

    The graph of a Python engine is made of Python objects, which the collector walks
    from time to time while the chain grows; torch's graph is C++, out of its sight.
    """
    results = {}
    for name, make in systems.CHAINS.items():
        build = make(length)
        if build is None:
            continue
        row = {}
        for collector in ("on", "off"):
            forward_times, backward_times = [], []
            enabled = gc.isenabled()
            if collector == "off":
                gc.disable()
            try:
                for _ in range(repeat):
                    start = time.perf_counter()
                    run_backward = build()
                    middle = time.perf_counter()
                    run_backward()
                    end = time.perf_counter()
                    forward_times.append(middle - start)
                    backward_times.append(end - middle)
            finally:
                if enabled:
                    gc.enable()
            suffix = "" if collector == "on" else "_gc_off"
            row["forward_us_per_op" + suffix] = statistics.median(forward_times) / length * 1e6
            row["backward_us_per_node" + suffix] = \
                statistics.median(backward_times) / length * 1e6
        results[name] = row
    return results


def long_chain(length: int) -> dict:
    """A chain of `length` ops: build and backward time, and bytes kept per node, each
    system in a fresh process (memory freed by earlier benchmarks would hide growth)."""
    results = {}
    for name in systems.LONG_CHAINS:
        command = [sys.executable, "-m", "bench.long_chain", name, str(length)]
        out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
        results[name] = json.loads(out.stdout)
    return results


def step_memory(batch: int) -> dict:
    """Peak transient memory of one training step (tracemalloc: numpy-based systems)."""
    results = {}
    weights, x, y = systems.tinymodel_inputs(batch)
    for name in ("numpy", "gradgen", "compiled", "autograd"):
        make = systems.STEPS.get(name)
        step = make(weights, x, y, LR) if make else None
        if step is None:
            continue
        step()
        tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        step()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        results[name] = peak - base
    return results


def codegen_time(repeat: int) -> float:
    """`python -m codegen --check` on the full spec, as a whole process."""
    def run() -> None:
        subprocess.run([sys.executable, "-m", "codegen", "--check"], cwd=ROOT, check=True,
                       capture_output=True)

    return median_time(run, repeat, warmup=1)


def torch_default_threads(batches: list[int], repeat: int) -> dict:
    """The torch step in a separate process with torch's default thread count."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    command = [sys.executable, "-m", "bench.torch_threads", json.dumps(batches), str(repeat)]
    out = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# -- the report ----------------------------------------------------------------------------------

def _ratio(value: float, floor: float) -> str:
    return f"{value / floor:.2f}×"


# Issue 5's goals: the step as a ratio to the numpy floor, per batch; µs per op and node;
# bytes kept per node of a long chain.
GOALS = {"step": {16: 1.5, 256: 1.1, 4096: 1.03}, "forward_us": 1.5, "backward_us": 1.5,
         "bytes_per_node": 500}


def goals(results: dict) -> list[str]:
    """Each goal beside this run's number for gradgen (and torch's), and whether it is met."""
    steps, floor = results["steps"], results["steps"]["numpy"]
    chain, long_chain = results["chain"], results["long_chain"]
    rounds_run = results["step_rounds"]
    rows = [(f"TinyModel step, batch {batch}", f"≤ {goal}×", "×", goal,
             {name: steps[name][batch] / floor[batch] for name in ("gradgen", "torch")})
            for batch, goal in GOALS["step"].items() if batch in floor]
    rows += [
        ("forward cost per op (GC on)", f"≤ {GOALS['forward_us']} µs", " µs",
         GOALS["forward_us"],
         {name: chain[name]["forward_us_per_op"] for name in ("gradgen", "torch")}),
        ("backward cost per node (GC on)", f"≤ {GOALS['backward_us']} µs", " µs",
         GOALS["backward_us"],
         {name: chain[name]["backward_us_per_node"] for name in ("gradgen", "torch")}),
        ("bytes kept per node", f"≤ {GOALS['bytes_per_node']}", "", GOALS["bytes_per_node"],
         {name: long_chain[name]["bytes_per_node"] for name in ("gradgen", "torch")}),
    ]
    lines = ["## Against the goals", "", "Issue 5's goals, as ratios to the numpy floor and in "
             "absolute terms:", "",
             "| measure | goal | gradgen | met | torch |", "|---|---:|---:|---|---:|"]
    for name, goal_text, unit, goal, values in rows:
        shown = {k: f"{v:.2f}{unit}" if unit else f"{v:.0f}" for k, v in values.items()}
        met = "yes" if values["gradgen"] <= goal else "no"
        lines.append(f"| {name} | {goal_text} | {shown['gradgen']} | {met} | {shown['torch']} |")
    lines += eager_goals(results)
    if "compiled" in steps:
        lines += ["", "Issue 14's goals, for `runtime.compile`'s step (same run, same table "
                  f"below; `per round`: the ratio within each of the {rounds_run} rounds, "
                  "where the two ran a few milliseconds apart: the middle half of them, and "
                  "in brackets the lowest and highest, to show how far this machine's noise "
                  "moves a ratio):", "", "| measure | goal | compiled | met | per round |",
                  "|---|---:|---:|---|---:|"]
        rounds = steps["rounds"]
        # The step with its data in free variables (`compiled`), passed as arguments, and
        # read through a trainer's `self.` attributes.
        forms = [name for name in ("compiled", "compiled args", "compiled self")
                 if name in steps]
        for form, (batch, goal) in itertools.product(forms, COMPILED_GOALS.items()):
            if batch in floor:
                ratio = steps[form][batch] / floor[batch]
                each = [c / n for c, n in zip(rounds[form][batch], rounds["numpy"][batch],
                                              strict=True)]
                lines.append(f"| {form} TinyModel step, batch {batch} | ≤ {goal}× | "
                             f"{ratio:.2f}× | {'yes' if ratio <= goal else 'no'} | "
                             f"{_quartiles(each)} |")
    return lines + [""]


# Issue 14's goals: the compiled step as a ratio to the numpy floor, per batch.
COMPILED_GOALS = {16: 1.10, 256: 1.03, 4096: 1.03}

# Issue 29's goals: eager gradgen at or below torch eager on the step at every batch, at
# most 2.0x the numpy floor at batch 16, and per op at or below torch's.
EAGER_NUMPY_GOAL = {16: 2.0}


def _quartiles(each: list[float]) -> str:
    """The middle half of per-round ratios and, in brackets, the lowest and highest."""
    low, _, high = statistics.quantiles(each, n=4) if len(each) > 1 else each * 3
    return f"{low:.2f}–{high:.2f}× ({min(each):.2f}–{max(each):.2f}×)"


def eager_goals(results: dict) -> list[str]:
    """Issue 29's rows: eager gradgen beside torch eager in this run, as ratios to torch."""
    steps, floor, chain = results["steps"], results["steps"]["numpy"], results["chain"]
    lines = ["", "Issue 29's goals, eager gradgen against torch eager (same run; `per round`: "
             "gradgen's time over torch's within each round, as below):", "",
             "| measure | goal | gradgen / torch | met | per round |", "|---|---:|---:|---|---:|"]
    for batch in (b for b in (16, 256, 4096) if b in floor):
        ratio = steps["gradgen"][batch] / steps["torch"][batch]
        each = [g / t for g, t in zip(steps["rounds"]["gradgen"][batch],
                                      steps["rounds"]["torch"][batch], strict=True)]
        lines.append(f"| TinyModel step, batch {batch} | ≤ 1.00× | {ratio:.2f}× | "
                     f"{'yes' if ratio <= 1 else 'no'} | {_quartiles(each)} |")
    for batch, goal in EAGER_NUMPY_GOAL.items():
        if batch in floor:
            ratio = steps["gradgen"][batch] / floor[batch]
            lines.append(f"| TinyModel step, batch {batch}, to numpy | ≤ {goal}× | "
                         f"{ratio:.2f}× (numpy) | {'yes' if ratio <= goal else 'no'} | |")
    for name, key in (("forward cost per op (GC on)", "forward_us_per_op"),
                      ("backward cost per node (GC on)", "backward_us_per_node")):
        ratio = chain["gradgen"][key] / chain["torch"][key]
        lines.append(f"| {name} | ≤ 1.00× | {ratio:.2f}× | {'yes' if ratio <= 1 else 'no'} | |")
    return lines


def report(results: dict, quick: bool) -> str:
    lines = ["# Benchmarks", ""]
    info = results["machine"]
    lines += [
        f"Machine: {info['machine']}, {info.get('cpu') or 'CPU model not known'}, "
        f"{info['cpus']} CPUs, Python {info['python']}; "
        f"numpy {info['numpy']}, torch {info['torch']}, autograd {info['autograd']}; "
        f"BLAS: {info['blas']} (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset).",
        f"Method: median wall time over repeated runs (the TinyModel steps in "
        f"{results['step_rounds']} "
        "rounds, each system running a block of steps in a row in turn, the order of turns "
        "rotating from round to round); garbage collection off while "
        "timing the steps (the chains are timed with it on and off); "
        "BLAS pinned to one thread in this process (torch.set_num_threads(1) too); ratios "
        "are to hand-written numpy doing the same forward, backward and SGD update. At batch "
        "4096 the sum loss with lr 1e-3 diverges within a few steps in every system alike (the "
        "same arithmetic on infinities and NaNs); numpy's warnings about it are silenced.",
        machine_state([p for probes in results["steps"]["probes"].values() for p in probes]),
        f"Command: `python bench/run.py{' --quick' if quick else ''}`.",
        "",
        *goals(results),
        "## TinyModel training step (Linear 1000→100, ReLU, Linear 100→10, "
        "`(target - pred).pow(2).sum()`, backward, SGD lr 1e-3, float32)",
        "",
        "`compiled` is `runtime.compile` of the whole step; `compiled model` compiles the "
        "model alone (`model = torch.compile(model)`: a generated forward, and a generated "
        "backward at its one node; the loss, the engine's walk and SGD stay eager; "
        "docs/compile.md).",
        "",
    ]
    steps = results["steps"]
    batches = sorted(steps["numpy"])
    lines += _step_table(steps, batches)
    mlp = results.get("mlp_steps")
    if mlp:
        lines += ["", "## MLP training step (Linear 1000→100, ReLU, Linear 100→100, ReLU, "
                  "Linear 100→10, cross-entropy on class indices, backward, Adam lr 1e-3, "
                  "float32)", "",
                  "`compiled` is `runtime.compile` of gradgen's step (docs/compile.md); numpy "
                  "and HIPS autograd compute the softmax cross-entropy and Adam by hand.", ""]
        lines += _step_table(mlp, sorted(mlp["numpy"]))
    lines += ["", f"## Per op and per node (a chain of {results['chain_length']:,} tiny "
              "elementwise ops, `y = y * 1.0001` on 4 floats)", "",
              "Python's garbage collector on, as in a program, and off: gradgen's graph is "
              "Python objects, which the collector walks from time to time as the chain "
              "grows; torch's is C++, out of its sight.", "",
              "| system | forward µs/op | backward µs/node | forward, GC off | "
              "backward, GC off |", "|---|---:|---:|---:|---:|"]
    for name, row in results["chain"].items():
        lines.append(f"| {name} | {row['forward_us_per_op']:.2f} | "
                     f"{row['backward_us_per_node']:.2f} | "
                     f"{row['forward_us_per_op_gc_off']:.2f} | "
                     f"{row['backward_us_per_node_gc_off']:.2f} |")
    lines += ["", f"## A {results['long_chain_length']:,}-op chain (`y = y * 1.0001`; memory: "
              "growth of the resident set while the graph is built, each system in a fresh "
              "process)", "",
              "| system | build s | backward s | bytes kept per node |", "|---|---:|---:|---:|"]
    for name, row in results["long_chain"].items():
        lines.append(f"| {name} | {row['build_s']:.3f} | {row['backward_s']:.3f} | "
                     f"{row['bytes_per_node']:.0f} |")
    fit = results["backward_fit"]
    lines += ["", "## gradgen backward time against batch size", "",
              "| batch | backward ms |", "|---:|---:|"]
    for batch, seconds in fit["times"].items():
        lines.append(f"| {batch} | {seconds * 1e3:.3f} |")
    smallest, largest = min(fit["times"]), max(fit["times"])
    lines += ["", f"Least-squares fit: {fit['fixed'] * 1e6:.1f} µs fixed + "
              f"{fit['per_sample'] * 1e6:.3f} µs per sample. The fixed part is "
              f"{_fixed_share(fit, smallest):.0%} of backward at batch {smallest} and "
              f"{_fixed_share(fit, largest):.0%} at batch {largest}: backward grows in "
              "proportion to the batch only once the batch is large enough for the "
              "per-sample arithmetic to outweigh the per-node cost.", ""]
    memory = results["memory"]
    lines += [f"## Transient memory of one step at batch {results['memory_batch']} "
              "(tracemalloc peak)", "", "| system | MiB |", "|---|---:|"]
    for name, peak in memory.items():
        lines.append(f"| {name} | {peak / 2**20:.2f} |")
    lines += ["", "## Code generation", "",
              f"`python -m codegen --check` on the full spec, whole process: "
              f"{results['codegen_s'] * 1e3:.0f} ms.", ""]
    lines += random_draws.table(results["random_draws"])
    threads = results.get("torch_threads")
    if threads:
        lines += ["## torch with its default threads (separate process)", "",
                  "| batch | torch ms | ratio to the one-thread numpy floor |", "|---:|---:|---:|"]
        for batch in batches:
            seconds = threads.get(str(batch))
            if seconds is not None:
                lines.append(f"| {batch} | {seconds * 1e3:.3f} | "
                             f"{_ratio(seconds, steps['numpy'][batch])} |")
        lines.append("")
    return "\n".join(lines)


def _step_table(steps: dict, batches: list[int]) -> list[str]:
    """Milliseconds per step and the ratio to numpy, a column per system."""
    names = [n for n in ("gradgen", "compiled", "compiled args", "compiled self",
                         "compiled model", "torch", "autograd", "numpy")
             if n in steps]
    lines = ["| batch | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
    for batch in batches:
        floor = steps["numpy"][batch]
        cells = [f"{steps[n][batch] * 1e3:.3f} ms ({_ratio(steps[n][batch], floor)})"
                 for n in names]
        lines.append(f"| {batch} | " + " | ".join(cells) + " |")
    return lines


def _fixed_share(fit: dict, batch: int) -> float:
    """The fitted fixed cost as a share of the fitted backward time at `batch`."""
    return fit["fixed"] / (fit["fixed"] + fit["per_sample"] * batch)


def machine() -> dict:
    from importlib.metadata import version

    import torch

    return {"machine": platform.machine(), "cpu": cpu_model(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "autograd": version("autograd"),
            "blas": blas_kernels()}


def cpu_model() -> str:
    """The processor's name as the system gives it, and its caches (`AMD EPYC (L1d 48K,
    L2 1024K, L3 32768K)`): machines of one kind here differ, and the ratios with them
    (at batch 256 the step's arrays fill an L2 cache of 1 MiB)."""
    name = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
        caches = []
        for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
            kind = (index / "type").read_text().strip()
            if kind != "Instruction":
                level = (index / "level").read_text().strip()
                caches.append(f"L{level}{'d' if kind == 'Data' else ''} "
                              f"{(index / 'size').read_text().strip()}")
    except OSError:
        caches = []
    return f"{name} ({', '.join(caches)})" if caches else name


def blas_kernels() -> str:
    """The BLAS libraries loaded in this process and the kernel each picked, as threadpoolctl
    reports them (`openblas 0.3.31 SkylakeX (numpy, 1 thread)`), and torch's MKL."""
    from threadpoolctl import threadpool_info

    found = []
    for library in threadpool_info():
        if library["user_api"] != "blas":
            continue
        owner = "torch" if "torch" in library["filepath"] else \
            "numpy" if "numpy" in library["filepath"] else Path(library["filepath"]).name
        found.append(" ".join(str(part) for part in (
            library["internal_api"], library.get("version") or "",
            library.get("architecture") or "", f"({owner}, {library['num_threads']} thread"
            f"{'s' if library['num_threads'] != 1 else ''})") if part))
    import torch  # its MKL is linked into torch itself, out of threadpoolctl's sight

    mkl = re.search(r"Math Kernel Library Version ([\w.]+)", torch.__config__.show())
    if mkl:
        found.append(f"mkl {mkl.group(1)} (torch, {torch.get_num_threads()} thread"
                     f"{'s' if torch.get_num_threads() != 1 else ''})")
    return ", ".join(found) or "none found"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds; no BENCHMARKS.md")
    parser.add_argument("--output", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    import torch

    np.seterr(all="ignore")  # the diverging batch-4096 runs (see the method note)
    torch.set_num_threads(1)
    runtime.manual_seed(0)
    quick = args.quick
    batches = [16, 256] if quick else [16, 256, 4096]
    fit_batches = [16, 64, 256] if quick else [16, 64, 256, 1024, 4096]
    repeat = 3 if quick else 200
    length = 2_000 if quick else 100_000
    results = {
        "machine": machine(),
        "steps": tinymodel_steps(batches, repeat if quick else STEP_ROUNDS * 10,
                                 3 if quick else STEP_ROUNDS),
        "step_rounds": 3 if quick else STEP_ROUNDS,
        "mlp_steps": mlp_steps(batches, repeat // 2 if not quick else repeat),
        "chain_length": 100 if quick else 1_000,
        "chain": chain_costs(100 if quick else 1_000, 3 if quick else 50),
        "long_chain_length": length,
        "long_chain": long_chain(length),
        "backward_fit": backward_vs_batch(fit_batches, repeat),
        "memory_batch": 256 if quick else 4096,
        "memory": step_memory(256 if quick else 4096),
        "codegen_s": codegen_time(1 if quick else 5),
        "random_draws": random_draws.measure(3 if quick else 30),
        "torch_threads": torch_default_threads(batches, repeat),
    }
    text = report(results, quick)
    print(text)
    if not quick:
        args.output.write_text(text)
        print(f"wrote {args.output}")
        if args.output == figures.SOURCE:  # the docs quote this run's figures
            changed = figures.write(text)
            print(f"rewrote the figures of {', '.join(changed) or 'no page'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
