"""`python -m bench.census`: how much of torch's everyday public API gradgen has, per module.

For each module of MODULES, the census lists the public callables torch defines there, and
for the Tensor class all of its public attributes, leaves out the families gradgen does not
aim at (EXCLUDED_NAMES, EXCLUDED_SOURCES: the rules are printed with the figures), and
looks each name up on gradgen's module of the same torch name (runtime/aliases.py maps
them; a module gradgen lacks has none of its names). It prints the share present per
module and writes the missing names to docs/census.md (`--write-docs`) for the team.

torch is imported only when the census runs (it is the measure, not a dependency), and
gradgen's modules are imported under their own names (`runtime.nn`), so both live in one
process. tests/test_census.py holds the figures to a floor (tests/census_floor.json) that
only rises: `--write-floor` records today's figures once names have landed.

    python -m bench.census                 per-module figures
    python -m bench.census --missing       and every missing name
    python -m bench.census --json          the same as JSON
    python -m bench.census --write-docs    (re)write docs/census.md
    python -m bench.census --write-floor   raise tests/census_floor.json to today's figures
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS_PAGE = ROOT / "docs" / "census.md"
FLOOR = ROOT / "tests" / "census_floor.json"

# The modules of issue 28's census, in its order; TENSOR stands for torch.Tensor's attributes.
TENSOR = "Tensor attributes"
MODULES = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.autograd",
    "torch.linalg",
    "torch.special",
    "torch.fft",
    "torch.func",
    "torch.utils.data",
    "torch.distributions",
    TENSOR,
)

# Names left out, by a pattern on the name, with the reason (the first that matches).
EXCLUDED_NAMES: tuple[tuple[str, str], ...] = (
    (
        r"cuda|cudnn|mps|xpu|mtia|hpu|ipu|xla|vulkan|metal|miopen|mkldnn|mkl|fbgemm|nnpack|"
        r"^is_pinned$|^pin_memory$|^share_memory_$|^is_shared$",
        "CUDA, MPS and other backends or accelerators: gradgen has one CPU device",
    ),
    (
        r"jit|(?i:script)|^trace|fx|export|dynamo|inductor|graph_break|^compiled_with|"
        r"^is_compiling$|^vmap_impl|^cond$|^while_loop$|^associative_scan$|^wrap_",
        "jit, fx, export and compile internals",
    ),
    (r"distributed|^rpc", "distributed"),
    (
        r"quantiz|^q_|qint|quint|qscheme|^int_repr$|^dequantize|^fake_quant|per_channel|"
        r"per_tensor|^fused_moving_avg|^choose_qparams",
        "quantization",
    ),
    (
        r"sparse|nested|^to_padded_tensor$|crow_indices|col_indices|ccol_indices|row_indices|"
        r"^coalesce$|^is_coalesced$|^indices$|^values$|^smm$|^sspaddmm$|^hspmm$|^dense_dim$|"
        r"^sparse_dim$|^_nnz$|^to_dense$|^layout$|^is_nested$",
        "sparse and nested layouts",
    ),
    (r"^_foreach|^foreach", "_foreach_* (fused loops over lists of tensors)"),
    (
        r"^Q(U)?Int\w*Storage$|^scaled_(grouped_)?mm$|^grouped_mm$|^ScalingType$|^SwizzleType$",
        "quantized storages and low-precision GPU matmuls",
    ),
    (
        r"^(AliasDb|Argument|ArgumentSpec|CompleteArgumentSpec|Block|Graph|Node|Value|Use|Code|"
        r"\w*Type|unify_type_list|ConcreteModuleType\w*|ExecutionPlan|GraphExecutorState|Gradient|StaticModule|"
        r"LiteScriptModule|FileCheck|import_ir_module\w*|parse_ir|parse_schema|"
        r"parse_type_comment|merge_type_from_type_comment|TracingState|CallStack|ErrorReport|"
        r"FunctionSchema|InferredType|\w*StorageContext|ScriptModuleSerializer|"
        r"PyTorchFile(Reader|Writer)|Benchmark\w+|LoggerBase|LockingLogger|NoopLogger|"
        r"AggregationType|DispatchKey|DispatchKeySet|ExcludeDispatchKeyGuard|OperatorInfo|Tag|"
        r"fork|wait|Future|Capsule|BufferDict|DeepCopyMemoTable|Sym(Int|Bool|Float)|Stream|"
        r"Event|classproperty|get_file_path|prepare_multiprocessing_environment|"
        r"autocast_(increment|decrement)_nesting|batch_norm_(backward_\w+|gather_\w+|stats|"
        r"elemt|update_stats))$",
        "TorchScript's, the dispatcher's and the C++ extension's types and internals",
    ),
    (
        r"^(has_torch_function\w*|handle_torch_function|DisableTorchFunction\w*)$",
        "the __torch_function__ machinery",
    ),
    (
        r"DataPipe|datapipe|^DataChunk$|runtime_validation|^argument_validation$|"
        r"^non_deterministic$",
        "DataPipes (deprecated, torchdata's)",
    ),
)
# Objects left out by the module that defines them: re-exports of machinery, not of the API.
EXCLUDED_SOURCES: tuple[tuple[str, str], ...] = (
    (
        r"^(typing|typing_extensions|collections\.abc|builtins|abc|enum|functools|dataclasses)$",
        "typing and standard-library re-exports",
    ),
    (
        r"^torch\.(_jit_internal|jit|fx|export|_dynamo|_inductor|_higher_order_ops|_library|"
        r"_subclasses|_prims|_refs|_decomp|_export|compiler)",
        "jit, fx, export and compile internals",
    ),
    (r"^torch\.(distributed|_C\._distributed)", "distributed"),
    (r"^torch\.(ao|quantization|nn\.quantized|nn\.qat|nn\.intrinsic)", "quantization"),
    (r"^torch\.(cuda|mps|xpu|mtia|backends)", "CUDA, MPS and other backends or accelerators"),
    (r"^torch\.(sparse|nested|masked)", "sparse and nested layouts"),
    (r"^torch\.overrides$", "the __torch_function__ machinery (torch.overrides)"),
)
# Names left out of one module only (module, name pattern, reason): the same name is counted
# elsewhere (torch.ModuleDict is TorchScript's torch._C.ModuleDict, torch.nn.ModuleDict is the
# container, and torch.nn's is counted).
EXCLUDED_PLACES: tuple[tuple[str, str, str], ...] = (
    (
        "torch", r"^(ModuleDict|ParameterDict)$",
        "TorchScript's views of a ScriptModule's members (torch._C.ModuleDict and "
        "ParameterDict, like the BufferDict above), not torch.nn's containers",
    ),
)
# Every name is checked against these, and a module's names must be torch's own.
_SOURCE_NOT_TORCH = "not defined by torch (a re-export from another package)"


@dataclass
class Row:
    """One module's figures."""

    module: str
    gradgen_module: str | None  # None: gradgen has no such module
    total: int = 0
    present: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=dict)  # reason -> how many names

    @property
    def share(self) -> float:
        return len(self.present) / self.total if self.total else 1.0


def _reason_by_name(name: str) -> str | None:
    return next((why for pattern, why in EXCLUDED_NAMES if re.search(pattern, name)), None)


def _reason_by_place(module: str, name: str) -> str | None:
    return next((why for place, pattern, why in EXCLUDED_PLACES
                 if place == module and re.search(pattern, name)), None)


def _reason_by_source(value: object) -> str | None:
    source = getattr(value, "__module__", None)
    if not isinstance(source, str):  # a builtin of torch._C: torch's own
        return None
    reason = next((why for pattern, why in EXCLUDED_SOURCES if re.search(pattern, source)), None)
    if reason is None and not (source == "torch" or source.startswith("torch.")):
        return _SOURCE_NOT_TORCH
    return reason


def torch_names(module: str) -> tuple[list[str], dict[str, int]]:
    """The names the census counts for one module (sorted), and how many it left out by
    reason. A module: its public callables; TENSOR: torch.Tensor's public attributes."""
    import torch  # the measure, imported only when the census runs

    if module == TENSOR:
        owner, values = torch.Tensor, None
        names = [n for n in dir(torch.Tensor) if not n.startswith("_")]
    else:
        owner = importlib.import_module(module)
        names = [n for n in dir(owner) if not n.startswith("_")]
        values = {n: getattr(owner, n, None) for n in names}
    counted: list[str] = []
    excluded: dict[str, int] = {}
    for name in names:
        if values is not None:
            value = values[name]
            if isinstance(value, types.ModuleType) or not callable(value):
                continue
            reason = (_reason_by_name(name) or _reason_by_place(module, name)
                      or _reason_by_source(value))
        else:
            reason = _reason_by_name(name)
        if reason is None:
            counted.append(name)
        else:
            excluded[reason] = excluded.get(reason, 0) + 1
    return sorted(counted), excluded


def gradgen_module(module: str) -> types.ModuleType | type | None:
    """gradgen's module of a torch name (or its Tensor class), None when it has none."""
    from runtime.aliases import TORCH_MODULES

    if module == TENSOR:
        return importlib.import_module("runtime").Tensor
    name = TORCH_MODULES.get(module)
    return importlib.import_module(name) if name else None


def census(modules: tuple[str, ...] = MODULES) -> list[Row]:
    rows = []
    for module in modules:
        names, excluded = torch_names(module)
        ours = gradgen_module(module)
        ours_name = None if ours is None else getattr(ours, "__name__", None)
        row = Row(module, ours_name, len(names), excluded=excluded)
        for name in names:
            (row.present if ours is not None and hasattr(ours, name) else row.missing).append(name)
        rows.append(row)
    return rows


def _total(rows: list[Row]) -> tuple[int, int]:
    return sum(len(r.present) for r in rows), sum(r.total for r in rows)


def rules() -> list[str]:
    """The exclusion rules, as the output states them."""
    lines = [
        "Counted: for a module, the public callables (functions and classes; no leading",
        "underscore, no submodules, no constants) that torch defines; for Tensor, every",
        "public attribute of torch.Tensor. A name is present when gradgen's module of",
        "the same torch name has it (runtime/aliases.py). Left out:",
    ]
    lines += [f"- names matching /{p}/: {why}" for p, why in EXCLUDED_NAMES]
    lines += [f"- names of {m} matching /{p}/: {why}" for m, p, why in EXCLUDED_PLACES]
    lines += [f"- objects defined in a module matching /{p}/: {why}" for p, why in EXCLUDED_SOURCES]
    lines.append(f"- objects whose module is not torch's: {_SOURCE_NOT_TORCH}")
    return lines


def as_text(rows: list[Row], missing: bool = False) -> str:
    out = [f"{'module':28} {'present':>8} {'total':>6} {'share':>6}  gradgen's module"]
    for r in rows:
        out.append(
            f"{r.module:28} {len(r.present):8} {r.total:6} {r.share:6.0%}  "
            f"{r.gradgen_module or '(none)'}"
        )
        if missing and r.missing:
            out.append("    missing: " + ", ".join(r.missing))
    present, total = _total(rows)
    out.append(f"{'all':28} {present:8} {total:6} {present / total:6.0%}")
    out += ["", *rules()]
    return "\n".join(out) + "\n"


def as_markdown(rows: list[Row]) -> str:
    present, total = _total(rows)
    out = [
        "# Census: torch's everyday API in gradgen",
        "",
        "Generated by `python -m bench.census --write-docs` from the installed torch and",
        "gradgen's modules; do not edit by hand (rerun it as names land).",
        "",
        f"**{present} of {total} names present ({present / total:.0%}).**",
        "",
        "| module | present | total | share | gradgen's module |",
        "|---|---|---|---|---|",
    ]
    out += [
        f"| {r.module} | {len(r.present)} | {r.total} | {r.share:.0%} | "
        f"{r.gradgen_module or '(none)'} |"
        for r in rows
    ]
    out += ["", "## What is counted", "", *rules(), "", "## Missing names", ""]
    for r in rows:
        out += [
            f"### {r.module} ({len(r.missing)} missing)",
            "",
            ", ".join(f"`{n}`" for n in r.missing) or "none",
            "",
        ]
    return "\n".join(out)


def figures(rows: list[Row]) -> dict[str, dict[str, int]]:
    """What the floor records: present and total per module."""
    return {r.module: {"present": len(r.present), "total": r.total} for r in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.census",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--missing", action="store_true", help="list every missing name")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--write-docs", action="store_true", help="write docs/census.md")
    parser.add_argument(
        "--write-floor",
        action="store_true",
        help="raise tests/census_floor.json to today's figures",
    )
    args = parser.parse_args(argv)
    rows = census()
    if args.write_docs:
        DOCS_PAGE.write_text(as_markdown(rows), encoding="utf-8")
        print(f"wrote {DOCS_PAGE.relative_to(ROOT)}")
    if args.write_floor:
        old = json.loads(FLOOR.read_text()) if FLOOR.exists() else {}
        new = figures(rows)
        for module, figure in new.items():  # a ratchet: never lower a recorded floor
            figure["present"] = max(figure["present"], old.get(module, {}).get("present", 0))
        FLOOR.write_text(json.dumps(new, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {FLOOR.relative_to(ROOT)}")
    if args.json:
        sys.stdout.write(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    elif not (args.write_docs or args.write_floor):
        sys.stdout.write(as_text(rows, args.missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
