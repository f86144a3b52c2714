"""How often gradgen agrees with torch on the reference inputs of PyTorch's OpInfo database.

tests/test_opinfo.py runs the first few samples of each OpInfo as pass/fail tests. This
measure runs every *reference* input (`op.reference_inputs`: the samples plus the extra
cases torch's own reference tests use, such as broadcasting, extremal values and empty
tensors) of every OpInfo gradgen maps, and counts per check how many samples agree:

- forward: values, shape and dtype in float64 (rtol and atol 1e-7);
- backward, forward mode, second order: the float64 gradients or tangents, as test_opinfo
  forms them (where the OpInfo says torch supports that derivative);
- errors: the exception class on the OpInfo's error inputs.

Derivatives are taken of each sample's `output_process_fn_grad` of the op's outputs, as
torch's own gradient tests take them; forward values too for the factorizations whose
factors are unique only up to sign or phase (test_opinfo.UP_TO_SIGN: svd, eig, eigh...).

Every sample counts, those of KNOWN_DIFFERENCES included (a known difference is still a
difference), but for what test_opinfo leaves out (its `_outside_gradgen`: tensors of dtypes
other than bool, uint8, int32, int64, float32 and float64, complex numbers, `out=`) and the
orders of tied elements that torch leaves undefined (sort's ties; for the derivatives,
max_unpool's repeated indices, as torch's own OpInfo leaves them out). A sample on which
torch itself raises is not compared.

    python -m tests.opinfo_agreement                 every mapped OpInfo (about 30 minutes)
    python -m tests.opinfo_agreement add mul ...     these OpInfo names
    python -m tests.opinfo_agreement --write-docs    and write docs/opinfo-agreement.md
    python -m tests.opinfo_agreement --shard 1/2 --json-out a.json   (and 2/2 to b.json, in
    python -m tests.opinfo_agreement --merge a.json b.json --write-docs    two processes)
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

from tests import test_opinfo as opinfo

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ("forward", "backward", "forward_ad", "gradgrad", "errors")
DOCS = ROOT / "docs" / "opinfo-agreement.md"
GOALS = {"forward": 99.5, "backward": 99.9, "forward_ad": 99.9, "gradgrad": 99.9, "errors": 97.0}


def _fresh_leaf(value: Any) -> Any:
    """A tensor that requires grad as a leaf of its own. Some reference inputs are views,
    made without grad, of a base that does not require grad, then marked requires_grad: in
    torch the gradient of such a view is None, though the output depends on it."""
    if isinstance(value, torch.Tensor) and value.requires_grad:
        return value.detach().clone().requires_grad_(True)
    if isinstance(value, list | tuple):
        return type(value)(_fresh_leaf(v) for v in value)
    if isinstance(value, dict):
        return {k: _fresh_leaf(v) for k, v in value.items()}
    return value


def _until_torch_fails(samples: Iterator[Any]) -> Iterator[Any]:
    """The samples an OpInfo's generator makes until it raises (a few of torch's reference
    generators cannot make their integer samples with requires_grad=True)."""
    try:
        yield from samples
    except (ValueError, RuntimeError, TypeError):
        return


def _reference_samples(op: Any, requires_grad: bool) -> Iterator[tuple[int, Any]]:
    torch.manual_seed(0)
    for index, sample in enumerate(_until_torch_fails(
            op.reference_inputs("cpu", torch.float64, requires_grad=requires_grad))):
        if opinfo._outside_gradgen(sample):
            continue
        if op.name in ("sort", "argsort", "topk") and opinfo._has_ties_unstable(sample):
            continue
        if requires_grad:
            sample = copy.copy(sample)
            sample.input, sample.args, sample.kwargs = _fresh_leaf(
                (sample.input, sample.args, sample.kwargs))
        yield index, sample


def _same_arrays(got: list, want: list) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        if w is None or g is None:
            if (w if g is None else g) is not None and np.any(w if g is None else g):
                return False
            continue
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-7, atol=1e-7, equal_nan=True):
            return False
    return True


def _forward(op: Any, sample: Any) -> bool | None:
    try:
        want = opinfo.defined_part(op, sample, opinfo._call_torch(op, sample))
    except Exception:  # noqa: BLE001 - torch refuses the sample: nothing to compare
        return None
    try:
        got = opinfo.defined_part(op, sample,
                                  opinfo._call_gradgen(op, sample, requires_grad=False))
        opinfo.assert_same(got, want, "")
    except Exception:  # noqa: BLE001 - any difference or error is a disagreement
        return False
    return True


def _derivative(order_or_mode: int | str) -> Callable[[Any, Any], bool | None]:
    def check(op: Any, sample: Any) -> bool | None:
        try:
            if order_or_mode == "forward_ad":
                want = opinfo._tangents(op, sample, torch)
            else:
                want = opinfo._gradients(op, sample, torch, order_or_mode)
        except Exception:  # noqa: BLE001
            return None
        try:
            if order_or_mode == "forward_ad":
                got = opinfo._tangents(op, sample, opinfo.runtime)
            else:
                got = opinfo._gradients(op, sample, opinfo.runtime, order_or_mode)
        except Exception:  # noqa: BLE001
            return False
        return _same_arrays(got, want)
    return check


def _errors(op: Any) -> Iterator[bool]:
    torch.manual_seed(0)
    for error in op.error_inputs("cpu"):
        sample = error.sample_input
        if opinfo._outside_gradgen(sample):
            continue
        try:
            opinfo._call_torch(op, sample)
        except error.error_type:
            pass
        except Exception:  # noqa: BLE001 - torch raises another class: not this input's point
            continue
        else:
            continue
        try:
            opinfo._call_gradgen(op, sample, requires_grad=False)
        except Exception as raised:  # noqa: BLE001
            yield isinstance(raised, error.error_type)
        else:
            yield False


def _applies(op: Any, check: str) -> bool:
    if check == "forward":
        return torch.float64 in op.supported_dtypes("cpu")
    if check == "errors":
        return op.error_inputs_func is not None
    if torch.float64 not in op.supported_backward_dtypes("cpu"):
        return False
    return {"backward": op.supports_autograd, "forward_ad": op.supports_forward_ad,
            "gradgrad": op.supports_gradgrad}[check]


def _unpool_collides(op: Any, sample: Any) -> bool:
    """A max_unpool sample whose indices repeat within a plane: several inputs are written to
    one output, and which one is kept torch leaves undefined. torch's own OpInfo skips its
    derivative tests on these samples for that reason (its `grad` variant, whose samples
    have no repeats, is where it tests them); the tangent then depends on that choice."""
    if not op.name.startswith("nn.functional.max_unpool") or op.variant_test_name:
        return False
    dims = int(op.name[-2])
    planes = sample.args[0].reshape(-1, math.prod(sample.args[0].shape[-dims:]))
    return any(row.unique().numel() < row.numel() for row in planes)


def measure_op(op: Any) -> dict[str, list[int]]:
    """{check: [agreed, compared]} for one OpInfo."""
    counts = {check: [0, 0] for check in CHECKS}
    checks = {"forward": _forward, "backward": _derivative(1), "forward_ad":
              _derivative("forward_ad"), "gradgrad": _derivative(2)}
    for check, function in checks.items():
        if not _applies(op, check):
            continue
        for _, sample in _reference_samples(op, requires_grad=check != "forward"):
            if check != "forward" and _unpool_collides(op, sample):
                continue
            outcome = function(op, sample)
            if outcome is not None:
                counts[check][0] += outcome
                counts[check][1] += 1
    if _applies(op, "errors"):
        for agreed in _errors(op):
            counts["errors"][0] += agreed
            counts["errors"][1] += 1
    return counts


def coverage() -> tuple[int, int]:
    """(OpInfo names with derivatives that gradgen maps, OpInfo names with derivatives)."""
    with_derivatives = {op.name for op in op_db if op.supports_autograd}
    mapped = {op.name for op in opinfo.OPS if op.supports_autograd}
    return len(mapped), len(with_derivatives)


def run(names: list[str], shard: tuple[int, int] = (1, 1), skip: int = 0) -> tuple[dict, dict]:
    ops = [op for op in opinfo.OPS if not names or op.name in names]
    ops = ops[shard[0] - 1::shard[1]][skip:]
    totals = {check: [0, 0] for check in CHECKS}
    worst: dict[str, dict[str, list[int]]] = {}
    start = time.perf_counter()
    for number, op in enumerate(ops, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counts = measure_op(op)
        for check, (agreed, compared) in counts.items():
            totals[check][0] += agreed
            totals[check][1] += compared
            if agreed < compared:
                worst.setdefault(opinfo._opinfo_name(op), {})[check] = [agreed, compared]
        print(f"[{number}/{len(ops)} {time.perf_counter() - start:.0f}s] "
              f"{opinfo._opinfo_name(op)}: "
              + ", ".join(f"{c} {a}/{n}" for c, (a, n) in counts.items() if n), file=sys.stderr)
    return totals, worst


def report(totals: dict, worst: dict) -> str:
    mapped, with_derivatives = coverage()
    lines = ["| check | samples agreeing | compared | share | goal |", "|---|---:|---:|---:|---:|"]
    for check in CHECKS:
        agreed, compared = totals[check]
        share = 100.0 * agreed / compared if compared else 100.0
        lines.append(f"| {check} | {agreed} | {compared} | {share:.2f}% | "
                     f"{GOALS[check]}% |")
    lines += ["", f"OpInfo names with derivatives that gradgen maps: {mapped} of "
              f"{with_derivatives}.", "", "Disagreements by OpInfo (agreeing / compared):", ""]
    by_size = sorted(worst.items(), key=lambda item: -sum(n - a for a, n in item[1].values()))
    for name, checks in by_size:
        lines.append(f"- {name}: " + ", ".join(f"{c} {a}/{n}" for c, (a, n) in checks.items()))
    return "\n".join(lines) + "\n"


def _merged(paths: list[Path]) -> tuple[dict, dict]:
    totals = {check: [0, 0] for check in CHECKS}
    worst: dict = {}
    for path in paths:
        part = json.loads(path.read_text())
        for check, (agreed, compared) in part["totals"].items():
            totals[check][0] += agreed
            totals[check][1] += compared
        worst.update(part["worst"])
    return totals, worst


_LOG_LINE = re.compile(r"^\[\d+/\d+ \d+s\] (\S+): (.*)$")


def _from_logs(paths: list[Path]) -> tuple[dict, dict]:
    """The sum of runs' progress lines (their stderr), each OpInfo counted once: for runs
    that were continued in other processes (--skip) or stopped before writing JSON."""
    totals = {check: [0, 0] for check in CHECKS}
    worst: dict = {}
    seen = set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _LOG_LINE.match(line)
            if match is None or match[1] in seen:
                continue
            seen.add(match[1])
            for check, agreed, compared in re.findall(r"(\w+) (\d+)/(\d+)", match[2]):
                totals[check][0] += int(agreed)
                totals[check][1] += int(compared)
                if agreed != compared:
                    worst.setdefault(match[1], {})[check] = [int(agreed), int(compared)]
    return totals, worst


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.opinfo_agreement",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="OpInfo names (default: every mapped one)")
    parser.add_argument("--write-docs", action="store_true",
                        help=f"write {DOCS.relative_to(ROOT)} (needs the whole run)")
    parser.add_argument("--shard", default="1/1", metavar="I/N",
                        help="measure every N-th OpInfo from the I-th (to run N processes); "
                        "--json-out then writes the counts for --merge")
    parser.add_argument("--skip", type=int, default=0, metavar="K",
                        help="leave out the shard's first K OpInfos (measured by another run)")
    parser.add_argument("--json-out", type=Path, help="write the counts as JSON")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                        help="report the sum of shards' --json-out files instead of measuring")
    parser.add_argument("--merge-logs", type=Path, nargs="+", metavar="LOG",
                        help="report the sum of runs' progress lines (their stderr)")
    args = parser.parse_args(argv)
    if args.merge_logs:
        totals, worst = _from_logs(args.merge_logs)
    elif args.merge:
        totals, worst = _merged(args.merge)
    else:
        index, count = (int(part) for part in args.shard.split("/"))
        totals, worst = run(args.names, (index, count), args.skip)
    if args.json_out:
        args.json_out.write_text(json.dumps({"totals": totals, "worst": worst}))
    text = report(totals, worst)
    print(text)
    if args.write_docs:
        DOCS.write_text(
            "# gradgen beside torch on OpInfo's reference inputs\n\n"
            "Written by `python -m tests.opinfo_agreement --write-docs` (what is counted: its "
            "docstring); do not edit by hand.\n\n" + text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
