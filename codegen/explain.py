"""`python -m codegen explain OP`: one op's path from its YAML entry to its generated code.

For a learner: the entry as written, its parsed schema, each formula before and after the
rewrite, what the node saves and why, the generated class and functions, and the proof
(`codegen.verify`), on one page instead of five files. `explain` is pure (no I/O);
`main` reads the spec, renders it fresh and runs the proof.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

from codegen import render, verify
from codegen.generate import generate
from codegen.load import load_spec, node_name_prefix
from codegen.model import (
    Derivative,
    ForwardDerivative,
    ForwardKind,
    OpInfo,
    SavedAttribute,
    SavedKind,
    SpecError,
)
from codegen.schema import Argument

ROOT = Path(__file__).resolve().parent.parent

# Why a node keeps each kind of saved attribute (see model.SavedAttribute).
REASONS: dict[SavedKind, str] = {
    SavedKind.TENSOR:
        "a formula reads the tensor's values, so the node keeps it as a SavedVariable; "
        "an in-place change to it before backward raises (its version counter moved)",
    SavedKind.OUTPUT:
        "a formula reads an output; it is saved without its grad_fn (is_output=True), "
        "so the output and its own node form no reference cycle",
    SavedKind.TENSOR_LIST: "a formula reads the tensors of a Tensor[]: each is a SavedVariable",
    SavedKind.SIZES: "only `.shape` is read: the node keeps the sizes, not the tensor, "
                     "whose memory can then be freed",
    SavedKind.STRIDES: "only `.stride()` is read: the node keeps the strides, not the tensor",
    SavedKind.DIM:
        "only `.ndim` is read: the node keeps the number of dimensions, not the tensor",
    SavedKind.SCALAR_TYPE: "only `.dtype` is read: the node keeps the dtype, not the tensor",
    SavedKind.NUMEL:
        "only `.numel()` is read: the node keeps the element count, not the tensor",
    SavedKind.LIST_SIZES: "only `to_args_sizes(...)` is read: the node keeps the shapes of the "
                          "list's tensors, not the tensors",
    SavedKind.GEOMETRY: "only `TensorGeometry(...)` is read: the node keeps the sizes, strides "
                        "and storage offset, not the tensor",
    SavedKind.VALUE: "a non-tensor argument a formula reads, kept by value",
}


class UnknownOp(LookupError):
    """OP names no entry, or a base name with several overloads; the message says which."""


def find_op(infos: list[OpInfo], op: str) -> OpInfo:
    """The entry a full schema name or an unambiguous base name names; else UnknownOp."""
    for info in infos:
        if info.name == op:
            return info
    same_base = [i for i in infos if i.schema.base == op]
    if len(same_base) == 1:
        return same_base[0]
    if same_base:
        names = "\n".join(f"  {i.schema}" for i in same_base)
        raise UnknownOp(f"{op} has {len(same_base)} overloads; name one:\n{names}")
    known = sorted({i.name for i in infos} | {i.schema.base for i in infos})
    close = difflib.get_close_matches(op, known, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ": no entry has a name like it"
    raise UnknownOp(f"unknown op {op!r}{hint}")


def entry_lines(spec_text: str, line: int) -> tuple[int, int, str]:
    """(first, last, text) of the YAML entry whose `name:` is on 1-based `line`.

    The entry runs from its `- name:` line through the lines indented deeper than its
    dash (blank lines between them included, trailing ones not).
    """
    lines = spec_text.splitlines()
    first = line - 1
    dash = lines[first].index("-") if "-" in lines[first] else 0
    last = first
    for index in range(first + 1, len(lines)):
        text = lines[index]
        if text.strip() and len(text) - len(text.lstrip()) <= dash:
            break
        if text.strip():
            last = index
    return first + 1, last + 1, "\n".join(lines[first : last + 1])


def _group(infos: list[OpInfo], info: OpInfo) -> list[OpInfo]:
    """The overloads bound under info's base name, as render.render_all groups them."""
    return [i for i in infos if i.python_binding and i.schema.base == info.schema.base] or [info]


def _heading(number: int, title: str) -> str:
    text = f"{number}. {title}"
    return f"{text}\n{'-' * len(text)}"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def _item(label: str, text: str, indent: int = 4, prose: bool = True) -> list[str]:
    """`    label    text`, prose wrapped to 100 columns under itself; code never wrapped."""
    head = f"{' ' * indent}{label:<9}"
    if not prose:
        return [head + text]
    return textwrap.wrap(text, 100, initial_indent=head, subsequent_indent=" " * len(head),
                         break_long_words=False, break_on_hyphens=False)


def _argument_role(info: OpInfo, arg: Argument) -> str:
    inputs = {i.name: i for i in info.inputs}
    if arg.name in inputs and inputs[arg.name].is_list:
        return "differentiable: one next_functions entry per tensor of the list"
    if arg.name in inputs:
        return f"differentiable: next_functions[{inputs[arg.name].index}]"
    if arg.name in info.non_differentiable:
        return "not differentiable (the spec says non_differentiable)"
    if arg.type.is_tensor_like:
        return "no gradient: no output is differentiable"
    return "not a tensor: no gradient"


def _node_reason(infos: list[OpInfo], info: OpInfo) -> list[str]:
    """Why the node class has its name: torchgen's counter per prefix, in spec order."""
    if info.node_name is None:
        return _item("node", "none: no output is differentiable, so no graph is recorded", 0)
    if info.qualified_name:
        return _item("node", f"{info.node_name}: the spec's `node:` key names a node PyTorch "
                     f"writes by hand ({info.qualified_name}); it takes no number", 0)
    prefix = node_name_prefix(info.schema.base)
    numbered = re.compile(rf"{re.escape(prefix)}\d+")
    siblings = [i for i in infos if i.node_name and numbered.fullmatch(i.node_name)]
    lines = _item("node", f"{info.node_name}: {prefix} (CamelCase of {info.schema.base!r}) "
                  "and a number counted per prefix in spec order, as torchgen does:", 0)
    for sibling in siblings:
        mark = "  <- this entry" if sibling is info else ""
        lines.append(f"{'':<9}    {sibling.node_name:<24} {sibling.name}{mark}")
    return lines


def _variants(info: OpInfo) -> str:
    base = info.schema.base
    forms = []
    if info.function:
        forms.append(f"function torch.{base}")
    if info.method:
        forms.append(f"method Tensor.{base}")
    if info.inplace:
        forms.append(f"in-place method Tensor.{base}_")
    if info.inplace_function:
        forms.append(f"in-place function torch.{base}_")
    text = ", ".join(forms) or "none"
    if not info.python_binding:
        text += "; not reached by Python's overload resolution (python_binding: False)"
    alias = next((r.type.alias for r in info.schema.returns if r.type.alias), None)
    if info.view_of and alias and alias.endswith("!"):
        text += f"; writes into {info.view_of!r} in place and returns it"
    elif info.view_of:
        text += f"; the output is a view of {info.view_of!r}"
    return text


def _schema_section(infos: list[OpInfo], info: OpInfo) -> str:
    schema = info.schema
    lines = [f"name     {schema.name}  (base {schema.base!r}, overload "
             f"{repr(schema.overload) if schema.overload else 'none'})", "arguments"]
    for arg in schema.arguments:
        extras = [f"default {arg.default}"] if arg.default is not None else []
        if arg.kwarg_only:
            extras.append("keyword-only")
        detail = f"  ({', '.join(extras)})" if extras else ""
        lines.append(f"    {arg.name:<18} {str(arg.type):<10} {_argument_role(info, arg)}{detail}")
    lines.append("returns, by the names formulas use")
    for name, ret, diff in zip(schema.return_names(), schema.returns,
                               info.output_differentiability, strict=True):
        role = "differentiable" if diff else "not differentiable (output_differentiability)"
        lines.append(f"    {name:<18} {str(ret.type):<10} {role}")
    lines += _node_reason(infos, info)
    lines += _item("variants", _variants(info), indent=0)
    wrapper = render.wrapper_name(info, _group(infos, info))
    lines += _item("wrapper", f"ops.{wrapper}, the forward wrapper they call", indent=0)
    return "\n".join(lines)


def _backward(derivative: Derivative) -> list[str]:
    names = ", ".join(derivative.var_names)
    lines = [f"{names}: {' '.join(derivative.formula.split())}    (line {derivative.line})"]
    if derivative.not_implemented is not None:
        return lines + _item("runs", "raise NotImplementedError: the derivative is not "
                             f"implemented ({derivative.not_implemented})")
    lines += _item("runs", derivative.code, prose=False)
    lines += _item("reads", ", ".join(derivative.grad_names) or "grads, the whole list")
    if len(derivative.var_names) > 1:
        lines += _item("fused", "one call gives all these gradients; grad_input_mask says "
                       "which of them are needed")
    return lines


def _forward(info: OpInfo, fwd: ForwardDerivative) -> list[str]:
    names = ", ".join(fwd.var_names)
    lines = [f"{names}: {' '.join(fwd.formula.split())}    (line {fwd.line})"]
    if fwd.kind == ForwardKind.AUTO_ELEMENT_WISE:
        lines += _item("kind", f"auto_element_wise: the backward formula of "
                       f"{info.inputs[0].name!r} with grad replaced by its tangent, and each "
                       "tensor x by its primal x_p")
        lines += _item("from", fwd.derived, prose=False)
    elif fwd.kind == ForwardKind.AUTO_LINEAR:
        lines += _item("kind", "auto_linear: the op itself applied to the tangents (primals "
                       "for the other tensors); its call is in the JVP function below")
        return lines
    else:
        lines += _item("kind", "formula, written in the spec")
    return lines + _item("runs", fwd.code, prose=False)


def _formulas_section(info: OpInfo) -> str:
    if not info.differentiable:
        return "none: no output is differentiable, so no node runs a formula"
    lines = _item("rewrite", "`self` -> `self_` (a Python local cannot be self), ops of the "
                  "spec -> `ops.NAME(...)` and Tensor methods -> `ops.NAME(x, ...)` (`ops`: "
                  "the namespace apply() is given, Tensors or numpy arrays), helpers of "
                  "runtime/manual.py -> `manual.NAME(ops, ...)`, `x.shape` -> the saved size "
                  "`x_sym_sizes`", indent=0)
    lines += ["", "backward: the node's apply() runs each rewritten expression"]
    for derivative in info.derivatives:
        lines += _backward(derivative)
    lines += ["", "forward mode: the JVP function returns it (x_p is a primal, x_t a tangent)"]
    for fwd in info.forward_derivatives:
        lines += _forward(info, fwd)
    if not info.forward_derivatives:
        lines.append("none: forward-mode AD through this op raises")
    return "\n".join(lines)


def _attribute_name(attr: SavedAttribute) -> str:
    """PyTorch's name for it on grad_fn: `_saved_self`, `_saved_self_sym_sizes` (a dtype
    is kept without one, as torch keeps it)."""
    if attr.kind is SavedKind.SCALAR_TYPE:
        return f"(none: kept as _kept_{attr.name})"
    return f"_saved_{attr.source if attr.is_saved_variable else attr.name}"


def _saved_section(info: OpInfo) -> str:
    if not info.saved:
        return "nothing: no formula reads an argument or an output"
    lines = []
    for attr in info.saved:
        field = render._field(attr)
        slot = f" (slot {field})" if field != _attribute_name(attr) else ""
        lines.append(f"{_attribute_name(attr)}{slot}: {attr.kind} of {attr.source!r}, "
                     f"{attr.name!r} in apply()")
        for derivative in info.derivatives:
            if attr in derivative.saved:
                lines += _item("read by", f"{', '.join(derivative.var_names)}: "
                               f"{' '.join(derivative.formula.split())}", prose=False)
        lines += _item("why", REASONS[attr.kind])
        guard = render.save_guard(info, attr)
        if guard is not None:
            lines += _item("guarded", f"saved only if should_compute_output({guard}), that is "
                           f"if {info.inputs[guard].name!r} needs its gradient: only its "
                           "formula reads it, so otherwise the node keeps no reference")
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def _definitions(source: str) -> dict[str, ast.stmt]:
    """The top-level classes and functions of a generated file, by name (parsed once)."""
    return {node.name: node for node in ast.parse(source).body
            if isinstance(node, ast.ClassDef | ast.FunctionDef)}


def _definition(source: str, name: str) -> str | None:
    """The source text of the top-level class or function `name` in `source`."""
    node = _definitions(source).get(name)
    return None if node is None else ast.get_source_segment(source, node)


def _code_section(infos: list[OpInfo], info: OpInfo, files: dict[str, str]) -> str:
    wrapper = render.wrapper_name(info, _group(infos, info))
    wanted: list[tuple[str, str, str]] = []
    if info.node_name:
        wanted.append(("functions.py", info.node_name, "the node"))
    wanted.append(("ops.py", wrapper, "the forward wrapper"))
    if info.inplace:
        wanted.append(("ops.py", f"{wrapper}_", "its in-place form"))
    if info.forward_derivatives:
        wanted.append(("forward.py", wrapper, "the JVP function"))
    parts = []
    for file, name, what in wanted:
        text = _definition(files.get(file, ""), name)
        body = _indent(text) if text else "    (not found in the rendered text)"
        parts.append(f"generated/{file}: {name}, {what}\n\n{body}")
    return "\n\n".join(parts)


def explain(infos: list[OpInfo], files: dict[str, str], spec_text: str, spec_name: str,
            op: str) -> str:
    """Sections 1-5 of the explanation of `op` (raises UnknownOp): entry, schema, formulas,
    saved attributes and the code rendered into `files` ({file name: text})."""
    info = find_op(infos, op)
    first, last, entry = entry_lines(spec_text, info.location.line)
    title = f"{info.name}: from {spec_name}:{first}-{last} to {info.node_name or 'no node'}"
    sections = [
        f"{title}\n{'=' * len(title)}",
        f"{_heading(1, f'The entry, {spec_name}:{first}-{last}')}\n\n{_indent(entry)}",
        f"{_heading(2, 'The schema, parsed')}\n{_schema_section(infos, info)}",
        f"{_heading(3, 'The formulas, as written and as rewritten')}\n{_formulas_section(info)}",
        f"{_heading(4, 'What the node saves, and why')}\n{_saved_section(info)}",
        f"{_heading(5, 'The generated code (rendered now from the spec)')}\n\n"
        f"{_code_section(infos, info, files)}",
    ]
    return "\n\n".join(sections) + "\n"


def main(argv: list[str]) -> int:
    """`python -m codegen explain OP`: print the explanation, then the proof (section 6).

    Exit 2 on a bad spec or OP, 1 when a check of the proof fails, else 0.
    """
    parser = argparse.ArgumentParser(
        prog="python -m codegen explain",
        description="Show one op's path from its YAML entry to its generated code and proof.")
    parser.add_argument("op", help="a schema name (pow.Tensor_Scalar) or a base name (mm)")
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml",
                        help="the spec to read (default: derivatives.yaml)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the proof (section 6): fast")
    parser.add_argument("--no-torch", action="store_true",
                        help="prove without the comparison with torch")
    args = parser.parse_args(argv)
    try:
        infos = load_spec(args.spec)
        info = find_op(infos, args.op)  # a wrong name is told before the spec is rendered
        files = generate(args.spec)
        text = explain(infos, files, args.spec.read_text(encoding="utf-8"), args.spec.name,
                       args.op)
    except (SpecError, UnknownOp) as error:
        print(error, file=sys.stderr)
        return 2
    sys.stdout.write(text)
    if args.no_verify:
        return 0
    sys.stdout.flush()  # the sections above show while the proof runs
    # As verify does: without torch installed, the proof runs without it and says so.
    installed = importlib.util.find_spec("torch") is not None
    checks = verify.prove(args.spec, [info.name], use_torch=installed and not args.no_torch)
    failed = sum(not c.ok for c in checks)
    print(f"\n{_heading(6, 'The proof: python -m codegen verify ' + info.name)}")
    print("One row per check of one sample, run on code rendered now from the spec;\n"
          "`python -m codegen verify --help` says what each check proves.\n")
    print(verify.format_table(checks))
    note = "" if installed or args.no_torch else "; torch not installed: no torch comparison"
    print(f"\n{len(checks) - failed} passed, {failed} failed{note}")
    return 1 if failed else 0
