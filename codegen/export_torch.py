"""`python -m codegen export-torch [OP ...] --out FILE`: the spec's formulas inside PyTorch.

Each exportable entry becomes a `torch.autograd.Function` whose forward runs torch's own op
of the same schema (`torch.ops.aten.<base>.<overload>`) and whose backward (and jvp, where
the spec has a forward formula) runs the spec's formulas: the same lines a gradgen node's
apply() runs (render.formula_lines), with `ops` bound to torch and the helpers of
runtime/manual.py they reach copied in. A formula prototyped and proven in gradgen then
runs, unchanged, in the engine that scales to GPUs and clusters.

An entry is not exported when torch has no op of its schema (an op gradgen adds: to take it
to torch, write its forward in torch ops), when an input or output is a Tensor[] (a Function
takes tensors one by one), when it writes into an input, or when nothing is differentiable.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from codegen import render
from codegen.formula import CORE_TENSOR_METHODS, local_name
from codegen.load import load_spec
from codegen.model import OpInfo, SpecError

ROOT = Path(__file__).resolve().parent.parent
MANUAL = ROOT / "runtime" / "manual.py"
# Factories helpers call through `ops`, and the torch function of the same meaning.
FACTORIES = {"zeros": "torch.zeros", "zeros_like": "torch.zeros_like",
             "ones_like": "torch.ones_like", "arange": "torch.arange", "tensor": "torch.tensor"}
# What a saved size-like value is, computed from the tensor in forward.
SIZE_EXPRESSIONS = {"sizes": "{}.shape", "dim": "{}.dim()", "scalar_type": "{}.dtype",
                    "numel": "{}.numel()", "strides": "{}.stride()",
                    "list_sizes": "[t.shape for t in {}]"}


@dataclass(frozen=True)
class Skipped:
    op: str
    why: str


def class_name(info: OpInfo) -> str:
    """`pow.Tensor_Scalar` -> `PowTensorScalar`: the op's name in CamelCase."""
    words = info.schema.kernel_name.replace(".", "_").split("_")
    return "".join(w[:1].upper() + w[1:] for w in words if w) or "Op"


def why_not_exported(info: OpInfo, aten: set[str] | None) -> str | None:
    """Why an entry cannot become a torch Function, or None when it can."""
    schema = info.schema
    if not info.differentiable:
        return "nothing is differentiable"
    if any(a.type.alias and a.type.alias.endswith("!") for a in schema.arguments):
        return "it writes into an input"
    if any(a.type.is_tensor_list for a in schema.arguments) or any(
            r.type.is_list for r in schema.returns):
        return "a Tensor[] input or output (a Function takes its tensors one by one)"
    if aten is not None and schema.name not in aten:
        return f"torch has no aten::{schema.name}: write its forward in torch ops to export it"
    return None


def _forward_call(info: OpInfo) -> str:
    """torch's op of the same schema, on the forward's parameters."""
    schema = info.schema
    args = [local_name(a.name) if not a.kwarg_only else f"{a.name}={local_name(a.name)}"
            for a in schema.arguments]
    return f"torch.ops.aten.{schema.base}.{schema.overload or 'default'}({', '.join(args)})"


def _outputs(info: OpInfo) -> list[str]:
    return [local_name(o) for o in info.schema.return_names()]


def _saved(info: OpInfo) -> tuple[list[str], list[str], list[str]]:
    """What forward keeps for backward: tensors (save_for_backward), values on ctx, and the
    lines of backward that bind them to the names the formulas read."""
    tensors, on_ctx, bind = [], [], []
    for attr in info.saved:
        name = local_name(attr.name)
        if attr.kind in ("tensor", "output"):
            tensors.append(name)
        elif attr.kind in SIZE_EXPRESSIONS:
            size = SIZE_EXPRESSIONS[attr.kind].format(local_name(attr.source))
            on_ctx.append(f"ctx.{name} = {size}")
            bind.append(f"{name} = ctx.{name}")
        else:
            on_ctx.append(f"ctx.{name} = {name}")
            bind.append(f"{name} = ctx.{name}")
    if tensors:
        bind.insert(0, f"{', '.join(tensors)}, = ctx.saved_tensors")
    return tensors, on_ctx, bind


def _returned(info: OpInfo) -> str:
    """backward's result: one gradient per forward argument, None for the others."""
    index = {i.name: i.index for i in info.inputs}
    items = [f"grad_inputs[{index[a.name]}]" if a.name in index else "None"
             for a in info.schema.arguments]
    return f"return {items[0]}," if len(items) == 1 else f"return {', '.join(items)}"


def _jvp_bindings(info: OpInfo) -> list[str]:
    """The first lines of jvp: primals and tangents by the names forward formulas use."""
    schema = info.schema
    tangent_of = {i.name for i in info.inputs}
    primals = [f"{a.name}_p" for a in schema.arguments if a.type.is_tensor] + _outputs(info)
    lines = [f"{', '.join(primals)}, = ctx.saved_tensors"]
    lines += [f"{local_name(a.name)} = ctx.{local_name(a.name)}_value"
              for a in schema.arguments if not a.type.is_tensor]
    for position, a in enumerate(schema.arguments):
        if a.name in tangent_of:
            # torch gives None for an input without a tangent; gradgen's formulas see zeros
            lines += [f"{a.name}_t = tangents[{position}]",
                      f"if {a.name}_t is None and {a.name}_p is not None:",
                      f"    {a.name}_t = torch.zeros_like({a.name}_p)"]
    return lines


def _auto_linear(info: OpInfo) -> str:
    """torchgen's auto_linear: torch's op itself, on the tangents."""
    schema = info.schema
    tangent_of = {i.name for i in info.inputs}
    args = []
    for a in schema.arguments:
        value = f"{a.name}_t" if a.name in tangent_of else \
            f"{a.name}_p" if a.type.is_tensor else local_name(a.name)
        args.append(f"{a.name}={value}" if a.kwarg_only else value)
    return f"torch.ops.aten.{schema.base}.{schema.overload or 'default'}({', '.join(args)})"


def _jvp(info: OpInfo) -> list[str] | None:
    """jvp's body: the bindings, then the spec's forward formulas; None when it has none."""
    if not info.forward_derivatives:
        return None
    codes = [_auto_linear(info) if fwd.kind == "auto_linear" else fwd.code
             for fwd in info.forward_derivatives]
    outputs = info.schema.return_names()
    if len(outputs) == 1:
        return [*_jvp_bindings(info), f"return {codes[0]}"]
    body = [f"{', '.join(f'{n}_t' for n in fwd.var_names)} = {code}"
            for fwd, code in zip(info.forward_derivatives, codes, strict=True)]
    covered = {n for fwd in info.forward_derivatives for n in fwd.var_names}
    returned = ", ".join(f"{n}_t" if n in covered else "None" for n in outputs)
    return [*_jvp_bindings(info), *body, f"return {returned}"]


def function_context(info: OpInfo) -> dict:
    """One torch.autograd.Function: forward, backward and (if any) jvp, as lines."""
    schema = info.schema
    params = [local_name(a.name) for a in schema.arguments]
    outputs = _outputs(info)
    tensors, on_ctx, bind = _saved(info)
    forward = [f"{', '.join(outputs)} = {_forward_call(info)}"]
    if tensors:
        forward.append(f"ctx.save_for_backward({', '.join(tensors)})")
    forward += on_ctx
    hidden = [o for o, d in zip(outputs, info.output_differentiability, strict=True) if not d]
    if hidden:
        forward.append(f"ctx.mark_non_differentiable({', '.join(hidden)})")
    jvp = _jvp(info)
    if jvp is not None:
        primals = [local_name(a.name) for a in schema.arguments if a.type.is_tensor]
        forward.append(f"ctx.save_for_forward({', '.join(primals + outputs)})")
        forward += [f"ctx.{local_name(a.name)}_value = {local_name(a.name)}"
                    for a in schema.arguments if not a.type.is_tensor]
    forward.append(f"return {', '.join(outputs)}")
    positions = [next(p for p, a in enumerate(schema.arguments) if a.name == i.name)
                 for i in info.inputs]
    backward = [
        f"self = _Inputs(ctx, {tuple(positions)!r})  # `self` as in a node: should_compute_output",
        *bind, *render.grad_setup(info), *render.formula_lines(info), _returned(info),
    ]
    return {"name": class_name(info), "schema": str(schema), "entry": info.name,
            "formulas": [(", ".join(d.var_names), d.formula) for d in info.derivatives],
            "params": ", ".join(["ctx", *params]), "forward": forward, "backward": backward,
            "jvp": jvp}


def _helpers(codes: list[str], manual_source: str) -> tuple[list[str], list[str]]:
    """The helpers of runtime/manual.py that the formulas reach (and the ones those call),
    as source, with the module-level imports and constants they need."""
    module = ast.parse(manual_source)
    functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    wanted: list[str] = []
    pending = [n.attr for code in codes for n in ast.walk(ast.parse(code))
               if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
               and n.value.id == "manual"]
    while pending:
        name = pending.pop()
        if name in wanted or name not in functions:
            continue
        wanted.append(name)
        pending += [n.id for n in ast.walk(functions[name]) if isinstance(n, ast.Name)
                    and n.id in functions]
    preamble = [ast.get_source_segment(manual_source, n) for n in module.body
                if isinstance(n, ast.Import | ast.ImportFrom) and getattr(n, "module", "")
                != "__future__" or isinstance(n, ast.Assign)]
    return preamble, [ast.get_source_segment(manual_source, functions[n])
                      for n in functions if n in wanted]


def _op_names(codes: list[str]) -> list[str]:
    """Every `ops.NAME` the exported formulas and helpers call."""
    return sorted({n.attr for code in codes for n in ast.walk(ast.parse(code))
                   if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                   and n.value.id == "ops"})


def _binding(name: str, aten_bases: set[str]) -> str:
    """How the torch namespace binds a name: a factory, a Tensor method the runtime writes
    by hand, or torch's aten op (overloads resolved by torch)."""
    if name in FACTORIES:
        return FACTORIES[name]
    if name in CORE_TENSOR_METHODS or name not in aten_bases:
        return f"torch.Tensor.{name}"
    return f"torch.ops.aten.{name}"


def export(infos: list[OpInfo], spec_name: str, manual_source: str,
           aten: set[str] | None) -> tuple[str, list[Skipped]]:
    """The module's text, and the entries left out with why."""
    exported, skipped = [], []
    for info in infos:
        why = why_not_exported(info, aten)
        if why is None:
            exported.append(function_context(info))
        elif info.differentiable:
            skipped.append(Skipped(info.name, why))
    codes = ["\n".join(f["backward"]) for f in exported] \
        + ["\n".join(f["jvp"]) for f in exported if f["jvp"] is not None]
    preamble, helpers = _helpers(codes, manual_source)
    aten_bases = {name.split(".")[0] for name in aten} if aten is not None else set()
    names = _op_names(codes + helpers)
    env = render._environment()
    text = env.get_template("torch_functions.py.j2").render(
        generator="python -m codegen export-torch", spec=spec_name, functions=exported,
        preamble=preamble, helpers=helpers,
        helper_names=[ast.parse(h).body[0].name for h in helpers],
        bindings=[(n, _binding(n, aten_bases)) for n in names])
    return text, skipped


def aten_schemas() -> set[str]:
    """`base.overload` (and `base` for a default overload) of every aten op torch has."""
    import torch  # only this command needs torch: it exports to it

    names = set()
    for base in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, base, None)
        for overload in getattr(packet, "overloads", lambda: [])():
            names.add(base if overload == "default" else f"{base}.{overload}")
    return names


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen export-torch",
        description="Write the spec's formulas as torch.autograd.Function classes.")
    parser.add_argument("ops", nargs="*", help="op names (base or base.overload); all by default")
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the Python file to write")
    args = parser.parse_args(argv)
    try:
        infos = load_spec(args.spec)
    except SpecError as error:
        print(error, file=sys.stderr)
        return 2
    if args.ops:
        unknown = [o for o in args.ops if not any(o in (i.name, i.schema.base) for i in infos)]
        if unknown:
            print(f"unknown op(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        infos = [i for i in infos if i.name in args.ops or i.schema.base in args.ops]
    try:
        aten = aten_schemas()
    except ImportError:
        print("export-torch needs torch: pip install torch", file=sys.stderr)
        return 2
    text, skipped = export(infos, args.spec.name, MANUAL.read_text(), aten)
    args.out.write_text(text, encoding="utf-8")
    count = len([i for i in infos if i.differentiable]) - len(skipped)
    print(f"wrote {count} Function classes to {args.out}")
    for item in skipped:
        print(f"  not exported: {item.op}: {item.why}")
    return 0
