"""`python -m codegen export-torch [OP ...] --out FILE`: the spec's formulas inside PyTorch.

Each exportable entry becomes a `torch.autograd.Function` whose forward runs torch's own op
of the same schema (`torch.ops.aten.<base>.<overload>`) and whose backward (and jvp, where
the spec has a forward formula) runs the spec's formulas: the same lines a gradgen node's
apply() runs (render.formula_lines), with `ops` bound to torch and the helpers of
runtime/manual.py they reach copied in. A formula prototyped and proven in gradgen then
runs, unchanged, in the engine that scales to GPUs and clusters.

A Function takes its tensors one by one, so an op with a differentiable Tensor[] input
(`cat`) takes that list's tensors last, as `*tensors`, and gets a `call` with the schema's
order (`Cat.call(tensors, dim)`); an op that writes into an input marks it dirty.

An op torch lacks (one gradgen adds) is exported when its entry gives its result as a
`forward:` formula over other ops of the spec: its forward runs that formula, in torch ops
(`ops` bound to torch, as the backward's). An entry is not exported when torch has no op
of its schema and it has no `forward:`, or when nothing is differentiable.
"""

from __future__ import annotations

import argparse
import ast
import functools
import keyword
import sys
from dataclasses import dataclass
from pathlib import Path

from codegen import render
from codegen.formula import CORE_TENSOR_METHODS, local_name
from codegen.load import load_spec
from codegen.model import OpInfo, SpecError
from codegen.schema import FunctionSchema
from codegen.verify import UnknownOp, select

ROOT = Path(__file__).resolve().parent.parent
MANUAL = ROOT / "runtime" / "manual.py"
# Factories helpers call through `ops`, and the torch function of the same meaning.
FACTORIES = {"zeros": "torch.zeros", "zeros_like": "torch.zeros_like",
             "ones_like": "torch.ones_like", "arange": "torch.arange", "tensor": "torch.tensor"}
# What a saved size-like value is, computed from the tensor in forward.
SIZE_EXPRESSIONS = {"sizes": "{}.shape", "dim": "{}.dim()", "scalar_type": "{}.dtype",
                    "numel": "{}.numel()", "strides": "{}.stride()",
                    "list_sizes": "[t.shape for t in {}]",
                    "geometry": "({0}.shape, {0}.stride(), {0}.storage_offset())"}


@dataclass(frozen=True)
class Skipped:
    op: str
    why: str


def class_name(info: OpInfo) -> str:
    """`pow.Tensor_Scalar` -> `PowTensorScalar`: the op's name in CamelCase, keeping the
    underscores that tell ops apart (`fill_.Scalar` -> `Fill_Scalar`, `_softmax` ->
    `_Softmax`)."""
    base = info.schema.base

    def camel(text: str) -> str:
        return "".join(w[:1].upper() + w[1:] for w in text.split("_") if w)

    return ("_" if base.startswith("_") else "") + camel(base) \
        + ("_" if base.endswith("_") else "") + camel(info.schema.overload)


def why_not_exported(info: OpInfo, aten: set[str] | None) -> str | None:
    """Why an entry cannot become a torch Function, or None when it can."""
    schema = info.schema
    if not info.differentiable:
        return "nothing is differentiable"
    if aten is not None and schema.name not in aten and info.forward_formula is None:
        return (f"torch has no aten::{schema.name}: give its entry a `forward:` formula in ops "
                "of the spec to export it")
    foreign = _foreign_ops(info, aten) if aten is not None else []
    if foreign:
        return (f"its formulas call gradgen's own {', '.join(foreign)}, which torch has "
                "neither as an aten op nor as a Tensor method")
    return None


_FOREIGN: dict[str, list[str]] = {}


def _foreign_ops(info: OpInfo, aten: set[str]) -> list[str]:
    """The ops the entry's exported code would call (its formulas and the helpers they
    reach) that torch binds nowhere: gradgen's own ops, written for its formulas."""
    if info.name not in _FOREIGN:
        import torch  # only this command needs torch: it exports to it

        context = function_context(info, runs_formula(info, aten))
        codes = ["\n".join(context["backward"]), "\n".join(context["forward"])]
        if context["jvp"] is not None:
            codes.append("\n".join(context["jvp"]))
        module = _parsed(_manual_source())
        functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        helpers = [ast.unparse(functions[n]) for n in _reached_helpers(codes, module)]
        bases = {name.split(".")[0] for name in aten}
        _FOREIGN[info.name] = [n for n in _op_names(codes + helpers) if n not in FACTORIES
                               and n not in bases and not hasattr(torch.Tensor, n)]
    return _FOREIGN[info.name]


def runs_formula(info: OpInfo, aten: set[str] | None) -> bool:
    """Whether the exported forward runs the entry's `forward:` formula (torch lacks the op)
    rather than torch's op of the same schema."""
    return info.forward_formula is not None and aten is not None and info.name not in aten


def _aten_op(schema: FunctionSchema) -> str:
    """torch's OpOverload of the schema: `torch.ops.aten.<base>.<overload>`, or through
    getattr for an overload named by a Python keyword (random_.from)."""
    overload = schema.overload or "default"
    if keyword.iskeyword(overload):
        return f"getattr(torch.ops.aten.{schema.base}, {overload!r})"
    return f"torch.ops.aten.{schema.base}.{overload}"


def _forward_call(info: OpInfo, formula: bool = False) -> str:
    """torch's op of the same schema, on the forward's parameters; or, for an op torch
    lacks, its `forward:` formula (its code calls through `ops`, bound to torch)."""
    if formula:
        return info.forward_formula.code
    schema = info.schema
    args = [local_name(a.name) if not a.kwarg_only else f"{a.name}={local_name(a.name)}"
            for a in schema.arguments]
    return f"{_aten_op(schema)}({', '.join(args)})"


def _outputs(info: OpInfo) -> list[str]:
    return [local_name(o) for o in info.schema.return_names()]


def _list_input(info: OpInfo) -> str | None:
    """The differentiable Tensor[] input, if any (the spec allows one, and nothing else
    differentiable beside it)."""
    return next((i.name for i in info.inputs if i.is_list), None)


def _writes(info: OpInfo) -> bool:
    """Whether the op writes into its first argument (`zero_(Tensor(a!) self)`)."""
    alias = info.schema.arguments[0].type.alias if info.schema.arguments else None
    return bool(alias and alias.endswith("!"))


def _parameters(info: OpInfo) -> list[str]:
    """forward's parameters after ctx: the schema's, a differentiable Tensor[] last."""
    listed = _list_input(info)
    params = [local_name(a.name) for a in info.schema.arguments if a.name != listed]
    return params + [f"*{listed}"] if listed else params


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
        else:  # a value, or a Tensor[] (kept on ctx: save_for_backward takes tensors)
            on_ctx.append(f"ctx.{name} = {name}")
            bind.append(f"{name} = ctx.{name}")
    if tensors:
        bind.insert(0, f"{', '.join(tensors)}, = ctx.saved_tensors")
    return tensors, on_ctx, bind


def _returned(info: OpInfo) -> str:
    """backward's result: one gradient per forward argument, None for the others; a
    Tensor[]'s, one per tensor, last."""
    listed = _list_input(info)
    index = {i.name: i.index for i in info.inputs}
    items = [f"grad_inputs[{index[a.name]}]" if a.name in index else "None"
             for a in info.schema.arguments if a.name != listed]
    items += ["*grad_inputs"] if listed else []
    return f"return {items[0]}," if len(items) == 1 else f"return {', '.join(items)}"


def _inputs_line(info: OpInfo) -> str:
    """The backward line that answers should_compute_output(i) from ctx.needs_input_grad."""
    listed = _list_input(info)
    if listed:
        first = len(info.schema.arguments) - 1
        positions = f"range({first}, {first} + ctx.count)"
    else:
        positions = repr(tuple(next(p for p, a in enumerate(info.schema.arguments)
                                    if a.name == i.name) for i in info.inputs))
    return f"self = _Inputs(ctx, {positions})  # `self` as in a node: should_compute_output"


def _call(info: OpInfo) -> list[str] | None:
    """`call`, with the schema's order, for a Function that takes a Tensor[]'s tensors last."""
    listed = _list_input(info)
    if not listed:
        return None
    params = [local_name(a.name) for a in info.schema.arguments]
    others = [p for p in params if p != listed]
    return [f"def call({', '.join(params)}):",
            f"    return {class_name(info)}.apply({', '.join([*others, f'*{listed}'])})"]


def _jvp_bindings(info: OpInfo) -> list[str]:
    """The first lines of jvp: primals and tangents by the names forward formulas use."""
    schema = info.schema
    tangent_of = {i.name for i in info.inputs}
    primals = [f"{a.name}_p" for a in schema.arguments if a.type.is_tensor] + _outputs(info)
    lines = [f"{', '.join(primals)}, = ctx.saved_tensors"]
    # A Tensor[] that is not differentiable (index's indices) has no tangent: formulas read
    # it as a primal.
    lines += [f"{a.name}_p = ctx.{local_name(a.name)}_value" if a.type.is_tensor_list
              else f"{local_name(a.name)} = ctx.{local_name(a.name)}_value"
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
            f"{a.name}_p" if a.type.is_tensor_like else local_name(a.name)
        args.append(f"{a.name}={value}" if a.kwarg_only else value)
    return f"{_aten_op(schema)}({', '.join(args)})"


def _jvp(info: OpInfo, formula: bool = False) -> list[str] | None:
    """jvp's body: the bindings, then the spec's forward formulas; None when it has none
    (or when one is auto_linear, torch's op on the tangents, and torch lacks the op)."""
    if not info.forward_derivatives:
        return None
    if formula and any(fwd.kind == "auto_linear" for fwd in info.forward_derivatives):
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


def _forward(info: OpInfo, tensors: list[str], on_ctx: list[str],
             jvp: list[str] | None, formula: bool = False) -> list[str]:
    """forward's body: torch's op (or the `forward:` formula), then what backward (and jvp)
    needs."""
    schema = info.schema
    outputs = _outputs(info)
    listed = _list_input(info)
    # Sizes are taken before an op that writes (squeeze_ changes self's).
    lines = [*on_ctx] if _writes(info) else []
    lines += [f"{listed} = list({listed})", f"ctx.count = len({listed})"] if listed else []
    lines.append(f"{', '.join(outputs)} = {_forward_call(info, formula)}")
    if _writes(info):
        lines.append("ctx.mark_dirty(self_)")
    if tensors:
        lines.append(f"ctx.save_for_backward({', '.join(tensors)})")
    lines += [] if _writes(info) else on_ctx
    hidden = [o for o, d in zip(outputs, info.output_differentiability, strict=True) if not d]
    if hidden:
        lines.append(f"ctx.mark_non_differentiable({', '.join(hidden)})")
    if jvp is not None:
        primals = [local_name(a.name) for a in schema.arguments if a.type.is_tensor]
        lines.append(f"ctx.save_for_forward({', '.join(primals + outputs)})")
        lines += [f"ctx.{local_name(a.name)}_value = {local_name(a.name)}"
                  for a in schema.arguments if not a.type.is_tensor]
    returned = f"tuple({outputs[0]})" if schema.returns[0].type.is_list else ", ".join(outputs)
    return [*lines, f"return {returned}"]


def function_context(info: OpInfo, formula: bool = False) -> dict:
    """One torch.autograd.Function: forward, backward, and jvp where the spec has a forward
    formula (not for an op that takes or gives a Tensor[], or writes into an input).
    `formula`: forward runs the entry's `forward:` formula (torch lacks the op)."""
    tensors, on_ctx, bind = _saved(info)
    plain = not (_list_input(info) or _writes(info) or info.schema.returns[0].type.is_list)
    jvp = _jvp(info, formula) if plain else None
    backward = [_inputs_line(info), *bind, *render.grad_setup(info),
                *render.formula_lines(info), _returned(info)]
    formulas = [("forward", info.forward_formula.formula)] if formula else []
    formulas += [(", ".join(d.var_names), d.formula) for d in info.derivatives]
    return {"name": class_name(info), "schema": str(info.schema), "entry": info.name,
            "formulas": formulas, "params": ", ".join(["ctx", *_parameters(info)]),
            "forward": _forward(info, tensors, on_ctx, jvp, formula), "backward": backward,
            "jvp": jvp, "call": _call(info)}


@functools.lru_cache(maxsize=2)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


@functools.lru_cache(maxsize=1)
def _manual_source() -> str:
    return (ROOT / "runtime" / "manual.py").read_text()


def _reached_helpers(codes: list[str], module: ast.Module) -> list[str]:
    """The names of the helpers of runtime/manual.py that the formulas reach (and the ones
    those call), in the module's order."""
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
    return [n for n in functions if n in wanted]


def _helpers(codes: list[str], manual_source: str) -> tuple[list[str], list[str]]:
    """The helpers of runtime/manual.py that the formulas reach (and the ones those call),
    as source, with the module-level imports and constants they need."""
    module = _parsed(manual_source)
    functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
    preamble = [ast.get_source_segment(manual_source, n) for n in module.body
                if isinstance(n, ast.Import | ast.ImportFrom) and getattr(n, "module", "")
                != "__future__" or isinstance(n, ast.Assign)
                or isinstance(n, ast.AnnAssign) and n.value is not None]
    return preamble, [ast.get_source_segment(manual_source, functions[n])
                      for n in _reached_helpers(codes, module)]


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
    names = [class_name(i) for i in infos]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # the spec's own names are unique; a class name must be too
        raise ValueError(f"two entries would both be exported as {twice[0]}")
    for info in infos:
        why = why_not_exported(info, aten)
        if why is None:
            exported.append(function_context(info, runs_formula(info, aten)))
        elif info.differentiable:
            skipped.append(Skipped(info.name, why))
    codes = ["\n".join(f["backward"]) for f in exported] \
        + ["\n".join(f["jvp"]) for f in exported if f["jvp"] is not None] \
        + ["\n".join(f["forward"]) for f in exported]
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
    """`base.overload` (and `base` for a default overload) of every aten op torch has
    registered, loaded or not."""
    import torch  # only this command needs torch: it exports to it

    return {name.removeprefix("aten::") for name in torch._C._dispatch_get_all_op_names()
            if name.startswith("aten::")}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen export-torch",
        description="Write the spec's formulas as torch.autograd.Function classes.")
    parser.add_argument("ops", nargs="*", help="op names (base or base.overload); all by default")
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the Python file to write")
    args = parser.parse_args(argv)
    try:
        infos = select(load_spec(args.spec), args.ops)  # as verify picks them
    except (SpecError, UnknownOp) as error:
        print(error, file=sys.stderr)
        return 2
    try:
        aten = aten_schemas()
    except ImportError:
        print("export-torch needs torch: pip install torch", file=sys.stderr)
        return 2
    text, skipped = export(infos, args.spec.name, MANUAL.read_text(), aten)
    args.out.write_text(text, encoding="utf-8")
    count = len([i for i in infos if i.differentiable]) - len(skipped)
    print(f"wrote {count} Function class{'' if count == 1 else 'es'} to {args.out}")
    for item in skipped:
        print(f"  not exported: {item.op}: {item.why}")
    return 0
