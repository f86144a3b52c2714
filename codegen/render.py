"""Render the checked model into generated/: every decision here, layout in the templates."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2

from codegen.escape import Into, escape
from codegen.formula import local_name
from codegen.model import Derivative, OpInfo, SavedAttribute, SavedKind
from codegen.python_signatures import signatures_context
from codegen.schema import REDUCTIONS, Argument, FunctionSchema, varargs_list
from codegen.wrapped_numbers import has_several_signatures, takes_number, takes_only_numbers

TEMPLATES = Path(__file__).resolve().parent / "templates"
GENERATOR = "python -m codegen"

# Python operators and the spec op each one calls; (op, swapped): `2 - x` is rsub(x, 2).
OPERATORS = {
    "__add__": ("add", False), "__radd__": ("add", False),
    "__sub__": ("sub", False), "__rsub__": ("rsub", False),
    "__mul__": ("mul", False), "__rmul__": ("mul", False),
    "__truediv__": ("div", False),
    "__pow__": ("pow", False), "__rpow__": ("pow", True),
    "__neg__": ("neg", False), "__abs__": ("abs", False),
    "__eq__": ("eq", False), "__ne__": ("ne", False), "__lt__": ("lt", False),
    "__le__": ("le", False), "__gt__": ("gt", False), "__ge__": ("ge", False),
    "__and__": ("bitwise_and", False), "__or__": ("bitwise_or", False),
    "__xor__": ("bitwise_xor", False), "__invert__": ("bitwise_not", False),
    "__rand__": ("bitwise_and", False), "__ror__": ("bitwise_or", False),
    "__rxor__": ("bitwise_xor", False),
}
# The reflected operators torch's Tensor has as C descriptors, which refuse a self that is
# not a Tensor (`Tensor.__radd__(2, x)`); its __rsub__ and __rpow__ are Python functions.
_DESCRIPTORS = ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__")
INPLACE_OPERATORS = {"__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_",
                     "__itruediv__": "div_"}

# -- out= -------------------------------------------------------------------------------------
# The overloads whose functional form torch's Python binding also takes with out= (it has an
# `.out` overload of the same arguments in its native_functions.yaml): their wrappers get a
# keyword-only `out=None` and hand a call that gives one to runtime/out.py. The spec has
# only functional schemas, so this is where that fact lives; tests/test_out.py checks the
# list against torch's own signatures, both ways, for every overload gradgen binds.
OUT_OVERLOADS = frozenset({
    "add.Tensor", "add.Scalar", "sub.Tensor", "mul.Tensor", "mul.Scalar", "div.Tensor",
    "div.Scalar", "div.Tensor_mode", "neg", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
    "pow.Scalar", "reciprocal", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "tanh", "sigmoid", "erf", "abs", "sign", "clamp.Tensor", "clamp", "clamp_min",
    "clamp_min.Tensor", "clamp_max", "clamp_max.Tensor", "maximum", "minimum", "where.self",
    "eq.Scalar", "eq.Tensor", "ge.Scalar", "ge.Tensor", "gt.Scalar", "gt.Tensor", "le.Scalar",
    "le.Tensor", "lt.Scalar", "lt.Tensor", "ne.Scalar", "ne.Tensor", "logical_not",
    "logical_and", "logical_or", "bitwise_not", "bitwise_and.Tensor", "bitwise_or.Tensor",
    "bitwise_xor.Tensor", "sum.dim_IntList", "mean", "mean.dim", "logsumexp", "max.dim", "max",
    "amax", "amin", "min.dim", "min", "any", "any.dim", "any.dims", "all", "all.dim", "all.dims",
    "argmax", "argmin", "prod.dim_int", "cat", "stack", "index_select", "index_add", "gather",
    "scatter_add", "mm", "addmm", "bmm", "dot", "mv", "_softmax", "_log_softmax",
    "_log_softmax_backward_data", "native_batch_norm", "cumsum", "cumprod", "sort",
    "sort.stable", "topk", "tril", "triu", "log2", "log10", "floor", "ceil", "round",
    "round.decimals", "trunc", "frac", "masked_select", "scatter.src", "scatter.value",
    "scatter.reduce", "scatter.value_reduce", "lerp.Scalar", "lerp.Tensor", "addcmul", "addcdiv",
    "floor_divide", "floor_divide.Scalar", "remainder.Scalar", "remainder.Tensor",
    "fmod.Scalar", "fmod.Tensor",
})

# The out dtypes torch's kernel of each overload takes (runtime/out.py, DTYPE_RULES), where
# it is not TensorIterator's "cast" (any dtype the result casts to): most take only the
# result's own dtype, each with its own message; checked against torch in tests/test_out.py.
OUT_DTYPE_RULES = {
    **dict.fromkeys(("max.dim", "min.dim", "argmax", "argmin", "index_add", "gather",
                     "scatter_add", "mm", "addmm", "bmm", "_softmax", "_log_softmax",
                     "_log_softmax_backward_data", "sort", "sort.stable", "topk", "tril",
                     "triu", "scatter.src", "scatter.value", "scatter.reduce",
                     "scatter.value_reduce"), "same"),
    **dict.fromkeys(("neg", "abs", "sign", "clamp", "clamp_min", "clamp_max", "bitwise_not",
                     "floor", "ceil", "round", "round.decimals", "trunc", "frac",
                     "lerp.Tensor"), "found"),
    **dict.fromkeys(("index_select", "masked_select"), "index"),
    **dict.fromkeys(("amax", "amin"), "reduce"),
    **dict.fromkeys(("any", "any.dim", "any.dims", "all", "all.dim", "all.dims"), "bool"),
    **dict.fromkeys(("sum.dim_IntList", "prod.dim_int", "cumsum", "cumprod"), "any"),
    **dict.fromkeys(("cat", "stack"), "cat"),
    **dict.fromkeys(("max", "min"), "unary"),
    **dict.fromkeys(("eq.Scalar", "eq.Tensor", "ne.Scalar", "ne.Tensor", "lt.Scalar",
                     "lt.Tensor", "le.Scalar", "le.Tensor", "gt.Scalar", "gt.Tensor",
                     "ge.Scalar", "ge.Tensor", "logical_not", "logical_and", "logical_or",
                     "floor_divide", "floor_divide.Scalar"), "cast_once"),
    "where.self": "where", "dot": "dot", "native_batch_norm": "batch_norm",
    "logsumexp": "floating", "mv": "mv", "mean": "mean", "mean.dim": "mean_dim",
}

# -- out= of the reductions, scans, indexing and shape family (torch's spec, family 2) --
OUT_OVERLOADS = OUT_OVERLOADS | {
    "cummax", "cummin", "index_copy", "kthvalue", "median.dim", "nanmedian.dim", "nansum",
    "narrow_copy", "slice_scatter", "take",
}
OUT_DTYPE_RULES.update({
    "narrow_copy": "expected_true", "slice_scatter": "same", "index_copy": "same",
    "median.dim": "median", "nanmedian.dim": "median", "kthvalue": "kthvalue",
    "cummax": "scan", "cummin": "scan", "take": "take",
})

# -- out= of torch.special's ops that torch also binds as torch.* functions (helper "special")
OUT_OVERLOADS = OUT_OVERLOADS | {"i0", "igamma", "igammac", "logit", "xlogy.Scalar_Other",
                                 "xlogy.Scalar_Self"}

# -- overloads torch gives out= that gradgen does not bind with it yet: the breadth work
# (elementwise, linear algebra and nn families) added the ops; each needs its out dtype rule
# (torch's messages) before it takes out=. tests/test_out.py holds the two sets to torch's.
OUT_NOT_YET = frozenset({
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "deg2rad", "digamma",
    "erfc", "erfinv", "exp2", "fmax", "fmin", "hypot", "ldexp.Tensor", "lgamma", "logaddexp",
    "logaddexp2", "mvlgamma", "nextafter", "polygamma", "rad2deg", "sinc", "sinh",
    "xlogy.Tensor", "_linalg_det", "_linalg_eigh", "_linalg_slogdet", "_linalg_svd", "addbmm",
    "addmv", "addr", "baddbmm", "cholesky_solve", "lu_unpack", "triangular_solve", "vdot",
    "hardshrink", "threshold",
    # the torch.* names of issue 28
    "angle", "copysign.Scalar", "copysign.Tensor", "frexp.Tensor", "logcumsumexp", "nan_to_num",
    "sgn",
})

# (helper "special") nan_to_num's out= needs torch's same-dtype rule and message first
OUT_NOT_YET = OUT_NOT_YET | {"nan_to_num"}

# -- out= of nn kernels B (issue 27): renorm's structured kernel takes its result's dtype only
OUT_OVERLOADS = OUT_OVERLOADS | {"renorm"}
OUT_DTYPE_RULES["renorm"] = "same"
# -- out= of the spec-breadth ops of reductions, indexing, random and linalg (helper misc)
OUT_OVERLOADS = OUT_OVERLOADS | {"scatter_reduce.two", "sub.Scalar", "div.Scalar_mode"}
OUT_DTYPE_RULES.update({"scatter_reduce.two": "same"})
# (their public functions are hand-written, or their out dtype rules not yet written)
OUT_NOT_YET = OUT_NOT_YET | {"aminmax", "bernoulli", "cholesky", "cholesky_inverse", "histc",
                           "index_reduce", "mode"}

# (the complex family, the fft entries and batch norm's legit forms: their out= forms and
# dtype rules not written yet)
OUT_NOT_YET = OUT_NOT_YET | {"complex", "polar", "_fft_r2c", "_fft_c2r",
                             "_native_batch_norm_legit", "_native_batch_norm_legit.no_stats"}
# (hash_tensor: torch's out= wants uint64 with a message of its own, not written yet)
OUT_NOT_YET = OUT_NOT_YET | {"hash_tensor"}
# (normal's tensor overloads: torch.normal is hand-written, runtime/random_functions.py, with
# its out= drawing as torch's; geqrf, ormqr, _linalg_solve_ex and multinomial: their out=
# forms not written yet)
OUT_NOT_YET = OUT_NOT_YET | {"normal.Tensor_Tensor", "normal.Tensor_float",
                             "normal.float_Tensor", "geqrf", "ormqr", "_linalg_solve_ex",
                             "multinomial"}

def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    # Spec text reaches a template only through these: see codegen/escape.py.
    env.filters.update(literal=lambda text: escape(text, Into.LITERAL),
                       docstring=lambda text: escape(text, Into.DOCSTRING),
                       comment=lambda text: escape(text, Into.COMMENT))
    return env


# The runtime function that computes each size-like saved value from its tensor (or from
# a number standing in for one): what a wrapper stores instead of the tensor.
# tests/test_saved_variables.py checks that runtime/recording.py has each.
SIZE_SAVERS = {
    SavedKind.SIZES: "recording.sizes",
    SavedKind.DIM: "recording.dim",
    SavedKind.SCALAR_TYPE: "recording.scalar_type",
    SavedKind.NUMEL: "recording.numel",
    SavedKind.STRIDES: "recording.strides",
    SavedKind.LIST_SIZES: "recording.list_sizes",
    SavedKind.GEOMETRY: "recording.geometry",
}


# -- functions.py: the Node classes --------------------------------------------------------

def _field(attr: SavedAttribute) -> str:
    """The slot a node stores a saved attribute in."""
    if attr.is_saved_variable:
        return f"{attr.source}_"
    if attr.kind is SavedKind.SCALAR_TYPE:  # torch keeps a dtype with no `_saved_` property
        return f"_kept_{attr.name}"
    return f"_saved_{attr.name}"


def saves_number(info: OpInfo, attr: SavedAttribute) -> bool:
    """Whether a saved Tensor argument may hold a Python number (`x * 2`: other): the node
    then keeps the number itself, not a SavedVariable made for it (no call, no object)."""
    return attr.kind == "tensor" and takes_number(info.schema.base, attr.source)


def _unpack(info: OpInfo, attr: SavedAttribute) -> str:
    """The line of apply() that gives a saved attribute its local name. A saved tensor is
    unpacked by the namespace: as a Tensor (an output with this node as its grad_fn) or as
    its array, checked the same way; a number kept in its place is read as it is."""
    field, name = _field(attr), local_name(attr.name)
    if saves_number(info, attr):
        return (f"{name} = ops.unpack(self.{field}, self) if isinstance(self.{field}, SAVED) "
                f"else self.{field}")
    if attr.is_saved_variable:
        return f"{name} = ops.unpack(self.{field}, self)"
    return f"{name} = self.{field}"


def _block(info: OpInfo, derivative: Derivative) -> list[str]:
    """One formula's lines in apply(): a comment with the formula as written, the condition
    that some input it gives a gradient to needs one, and the assignment."""
    index = {i.name: i.index for i in info.inputs}
    slots = [index[n] for n in derivative.var_names if n in index]
    is_list = any(i.is_list for i in info.inputs if i.name in derivative.var_names)
    if is_list:
        condition = "any(self.should_compute_output(i) for i in range(len(grad_inputs)))"
    else:
        condition = " or ".join(f"self.should_compute_output({i})" for i in slots)
    # As torchgen does: with no gradient defined at all (a pre-hook returned None),
    # a formula would fail; its inputs get None instead.
    if derivative.not_implemented is None and derivative.code != "grad":
        condition = f"any_grad_defined and ({condition})" if len(slots) > 1 else \
            f"any_grad_defined and {condition}"
    if derivative.not_implemented is not None:
        # torch's not_implemented("why"): the reason stands where the op's name would
        message = f"the derivative for '{derivative.not_implemented}' is not implemented."
        body = [f"raise NotImplementedError({escape(message, Into.LITERAL)})"]
    elif is_list:
        body = [f"grad_inputs[:] = {derivative.code}"]
    elif len(slots) == 1:
        body = [f"grad_inputs[{slots[0]}] = {derivative.code}"]
    else:
        mask = ", ".join(f"self.should_compute_output({i})" for i in slots)
        body = [f"grad_input_mask = ({mask})", f"results = {derivative.code}"]
        for position, slot in enumerate(slots):
            body += [f"if grad_input_mask[{position}]:", f"    grad_inputs[{slot}] = "
                     f"results[{position}]"]
    comment = escape(f"{', '.join(derivative.var_names)}: {derivative.formula}", Into.COMMENT)
    return [f"# {comment}", f"if {condition}:", *(f"    {line}" for line in body)]


def grad_setup(info: OpInfo) -> list[str]:
    """The lines that name the incoming gradients: `grad = grads[0]`, `any_grad_defined`."""
    outputs = info.schema.return_names()
    lines = []
    used = {n for d in info.derivatives for n in d.grad_names}
    if "grad" in used:
        lines.append("grad = grads[0]")
    for i, name in enumerate(outputs):
        if f"grad_{name}" in used:
            lines.append(f"grad_{name} = grads[{i}]")
    # Only formulas read it (not `grad` passed on, not not_implemented). A Tensor[] return
    # has one gradient per tensor of the list, as several returns do.
    if not any(d.not_implemented is None and d.code != "grad" for d in info.derivatives):
        pass
    elif len(outputs) > 1 or info.schema.returns[0].type.is_tensor_list:
        lines.append("any_grad_defined = any(g is not None for g in grads)")
    else:
        lines.append("any_grad_defined = grads[0] is not None")
    return lines


def _grad_inputs(info: OpInfo) -> str:
    """`grad_inputs = [None, None]`: one slot per next_functions entry."""
    if any(i.is_list for i in info.inputs):  # a Tensor[] input: one per tensor of the list
        return "grad_inputs = [None] * len(self._next_functions)"
    return f"grad_inputs = [{', '.join(['None'] * len(info.inputs))}]"


def _tuple_literal(names: list[str]) -> str:
    """`("a",)`, `("a", "b")` or `()`: a tuple of strings as Python source."""
    literals = [escape(n, Into.LITERAL) for n in names]
    if len(literals) == 1:
        return f"({literals[0]},)"
    return "(" + ", ".join(literals) + ")"


def formula_lines(info: OpInfo) -> list[str]:
    """The part of apply() that every target shares: one slot per input, and each formula
    under its condition. The gradients (grad_setup) and saved values are bound before it."""
    lines = [_grad_inputs(info)]
    for derivative in info.derivatives:
        lines += _block(info, derivative)
    return lines


def node_context(info: OpInfo) -> dict:
    """One Node class: its docstring, slots, saved-tensor properties and one apply()."""
    saved = list(info.saved)
    body = [*grad_setup(info), *(_unpack(info, a) for a in saved), *formula_lines(info)]
    return {
        "name": info.node_name,
        "qualified_name": info.qualified_name,
        "schema": str(info.schema),
        "entry": info.name,
        "formulas": [(", ".join(d.var_names), d.formula) for d in info.derivatives],
        "slots": _tuple_literal([_field(a) for a in saved]),
        "tensors": [(f"_saved_{a.source}", _field(a), a.kind == "output", saves_number(info, a))
                    for a in saved if a.is_saved_variable],
        "release": [(_field(a), saves_number(info, a)) for a in saved if a.is_saved_variable],
        "body": [*body, "return grad_inputs"],
    }


# -- forward.py: the JVP functions -----------------------------------------------------------

def _forward_parameters(info: OpInfo) -> list[str]:
    """`self_p, self_t, other_p, alpha, result`: a JVP function's parameters, in schema order."""
    tangents = {i.name for i in info.inputs}
    params = []
    for arg in info.schema.arguments:
        if arg.type.is_tensor_like:
            params.append(f"{arg.name}_p")
            if arg.name in tangents:
                params.append(f"{arg.name}_t")
        else:
            params.append(local_name(arg.name))
    return params + [local_name(o) for o in info.schema.return_names()]


def _auto_linear(info: OpInfo, group: list[OpInfo]) -> str:
    """torchgen's auto_linear: the op itself on the tangents, primals for other tensors."""
    tangents = {i.name for i in info.inputs}
    args = []
    for arg in info.schema.arguments:
        if arg.type.is_tensor_like:
            value = f"{arg.name}_t" if arg.name in tangents else f"{arg.name}_p"
        else:
            value = local_name(arg.name)
        args.append(f"{local_name(arg.name)}={value}" if arg.kwarg_only else value)
    return f"ops.{wrapper_name(info, group)}({', '.join(args)})"


def _tangent_terms(code: str, info: OpInfo) -> list[tuple[str, str, str | None]] | None:
    """A JVP formula that is a sum of terms (`other_t * self_p + self_t * other_p`), as
    (sign, term, tangent) triples: `tangent` names the input tangent a term is a product of
    (a factor of its `*` chain, or maybe_multiply's first argument), None for another term.
    None for a formula with no such product, or that is no sum."""
    tangents = {f"{i.name}_t" for i in info.inputs}
    try:
        tree = ast.parse(code, mode="eval").body
    except SyntaxError:
        return None
    terms: list[tuple[str, ast.expr]] = []
    sign_of_right = {ast.Add: "+", ast.Sub: "-"}
    while isinstance(tree, ast.BinOp) and type(tree.op) in sign_of_right:
        terms.insert(0, (sign_of_right[type(tree.op)], tree.right))
        tree = tree.left
    terms.insert(0, ("+", tree))
    result = [(sign, ast.unparse(term), _product_of(term, tangents)) for sign, term in terms]
    if len(result) < 2 or all(tangent is None for _, _, tangent in result):
        return None
    return result


def _product_of(term: ast.expr, tangents: set[str]) -> str | None:
    """The tangent `term` is a multiple of, where PyTorch's zero tangent (an efficient zero
    tensor, whose products are zero tensors) would make the whole term zero; else None.
    Through other ops (mm, helpers) torch computes on materialized zeros, as gradgen does."""
    factors = [term]
    while factors and isinstance(factors[-1], ast.BinOp) and isinstance(factors[-1].op,
                                                                        ast.Mult):
        product = factors.pop()
        factors += [product.left, product.right]
    if isinstance(term, ast.Call) and ast.unparse(term.func).endswith("maybe_multiply"):
        factors = term.args[1:2]
    names = {f.id for f in factors if isinstance(f, ast.Name)} & tangents
    return names.pop() if len(names) == 1 else None


def _defined_terms_total(terms: list[tuple[str, str, str]]) -> list[str]:
    """Lines that set `total` to the sum of the terms whose tangent is defined (PyTorch's
    undefined tangents are zero tensors whose products stay zero: inf * 0 is not nan there),
    or None if there is none."""
    body = ["total = None"]
    for sign, term, tangent in terms:
        minus = "-" if sign == "-" else ""
        add = [f"term = {term}", f"total = {minus}term if total is None else total {sign} term"]
        body += [f"if forward_grad.defined({tangent}):", *_indent(add)] if tangent else add
    return body


def _sum_of_defined_terms(terms: list[tuple[str, str, str]], output: str) -> list[str]:
    """The JVP's body: the sum of the terms whose tangent is defined."""
    return [*_defined_terms_total(terms),
            f"return forward_grad.complete(total, {local_name(output)})"]


def _where_of_defined_terms(code: str, info: OpInfo) -> list[str] | None:
    """The JVP's body for `where(cond, a, b)` whose branch a or b is a sum of terms (torch's
    _prelu_kernel: `where(self_p >= 0, self_t, weight_p * self_t + weight_t * self_p)`): each
    such branch summed over its defined terms first (0 if none is), then the where. None for
    another formula."""
    try:
        call = ast.parse(code, mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) in ("where", "ops.where")
            and len(call.args) == 3 and not call.keywords):
        return None
    body: list[str] = []
    branches = []
    for index, branch in enumerate(call.args[1:], 1):
        terms = _tangent_terms(ast.unparse(branch), info)
        if terms is None:
            branches.append(ast.unparse(branch))
            continue
        body += [*_defined_terms_total(terms), f"branch{index} = 0 if total is None else total"]
        branches.append(f"branch{index}")
    if not body:
        return None
    return [*body, f"return {ast.unparse(call.func)}({ast.unparse(call.args[0])}, "
                   f"{', '.join(branches)})"]


def forward_context(info: OpInfo, group: list[OpInfo]) -> dict:
    """One JVP function: the formulas in its docstring, one line per formula in its body."""
    outputs = info.schema.return_names()
    codes = [_auto_linear(info, group) if f.kind == "auto_linear" else f.code
             for f in info.forward_derivatives]
    formulas = []
    for fwd in info.forward_derivatives:
        text = fwd.formula
        if fwd.kind == "auto_element_wise":
            backward = next(d for d in info.derivatives if d.var_names == (info.inputs[0].name,))
            text += f", from {backward.var_names[0]}: {backward.formula}"
        formulas.append((", ".join(fwd.var_names), text))
    terms = _tangent_terms(codes[0], info) if len(outputs) == 1 else None
    where = _where_of_defined_terms(codes[0], info) if len(outputs) == 1 else None
    if terms is not None:
        body = _sum_of_defined_terms(terms, outputs[0])
    elif where is not None:
        body = where
    elif len(outputs) == 1:
        body = [f"return {codes[0]}"]
    else:
        body = [f"{', '.join(f'{n}_t' for n in fwd.var_names)} = {code}"
                for fwd, code in zip(info.forward_derivatives, codes, strict=True)]
        covered = {n for fwd in info.forward_derivatives for n in fwd.var_names}
        body.append("return " + ", ".join(f"{n}_t" if n in covered else "None" for n in outputs))
    return {
        "name": wrapper_name(info, group),
        "schema": str(info.schema),
        "entry": info.name,
        "params": ", ".join(_forward_parameters(info)),
        "formulas": formulas,
        "body": body,
    }


# -- ops.py: forward wrappers ----------------------------------------------------------------

def _parameter(arg: Argument) -> str:
    name = local_name(arg.name)
    if arg.default is None:
        return name
    return f"{name}={_python_default(arg)}"


def _python_default(arg: Argument) -> str:
    """A schema default as Python: lists become tuples (immutable), `Mean` its enum value."""
    text = arg.default
    if text in ("None", "True", "False"):
        return text
    if text.startswith("[") and text.endswith("]"):  # numbers, checked by the schema parser
        items = [item.strip() for item in text[1:-1].split(",") if item.strip()]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if text in REDUCTIONS:
        return str(REDUCTIONS[text])
    if arg.type.base == "str":  # checked to be a string literal: written out anew
        return escape(ast.literal_eval(text), Into.LITERAL)
    if arg.type.is_list:  # `int[2] stride=1` means (1, 1)
        size = arg.type.list_size or 1
        return f"({text},)" if size == 1 else "(" + ", ".join([text] * size) + ")"
    return text


def late_required(arguments: tuple[Argument, ...] | list[Argument]) -> list[Argument]:
    """The required arguments, which a wrapper gives the default MISSING: a call may name
    one by a numpy-style keyword (`torch.exp(x=a)`), which Python puts in the wrapper's
    **kwargs, so the parameter itself must be allowed to go without a value (and so must
    the positional ones after it); one left without any is torch's "missing" TypeError."""
    return [arg for arg in arguments if arg.default is None]


def python_signature(schema: FunctionSchema, out: bool = False) -> str:
    """A wrapper's parameters: the positional ones, then `*extra`, where positional
    arguments past them land (torch's "takes 2 positional arguments but 3 were given",
    from `bind`), the keyword-only ones; with `out`, a last keyword-only `out=None` (torch's
    out=); then `**kwargs`, where the keywords that are no parameter's own name land: the
    numpy-style aliases, or mistakes (runtime/arguments.py's `bind` reads them)."""
    parts = []
    star = False
    late = late_required(schema.arguments)
    for arg in schema.arguments:
        if arg.kwarg_only and not star:
            parts.append("*extra")
            star = True
        parts.append(f"{local_name(arg.name)}=MISSING" if arg in late else _parameter(arg))
    if not star:
        parts.append("*extra")
    if out:
        parts.append("out=None")
    return ", ".join([*parts, "**kwargs"])


def _out_form(info: OpInfo, function: str) -> list[str]:
    """The lines that give a call with out= to runtime/out.py: the wrapper itself runs
    there without out=, and its results are written into the out tensors."""
    schema = info.schema
    positional = [local_name(a.name) for a in schema.arguments if not a.kwarg_only]
    keywords = [local_name(a.name) for a in schema.arguments if a.kwarg_only]
    args = "(" + ", ".join(positional) + ("," if len(positional) == 1 else "") + ")"
    kwargs = "{" + ", ".join(f"{escape(k, Into.LITERAL)}: {k}" for k in keywords) + "}"
    extra = [str(len(schema.returns))] if len(schema.returns) > 1 else []
    if info.name in OUT_DTYPE_RULES:
        extra.append(f"dtype_rule={escape(OUT_DTYPE_RULES[info.name], Into.LITERAL)}")
    return ["if out is not None:  # torch's out= form (runtime/out.py)",
            f"    return _out.call({escape(schema.base, Into.LITERAL)}, {function}, {args}, "
            f"{', '.join([kwargs, 'out', *extra])})"]


def save_guard(info: OpInfo, attr: SavedAttribute) -> int | None:
    """The one input whose gradient needs `attr`, when saving it can be skipped otherwise.

    torchgen's rule: a tensor read by exactly one single-input formula of an op with several
    differentiable inputs is saved only if that input's gradient will be computed, so
    `x * 2` keeps no reference to x (grad_fn._saved_self is None, as in PyTorch).
    """
    if attr.kind != "tensor" or len(info.inputs) <= 1 or "backward" in info.schema.base:
        return None
    if any(i.is_list for i in info.inputs):
        return None
    used_in = [d for d in info.derivatives if attr in d.saved]
    if len(used_in) != 1 or len(used_in[0].var_names) != 1:
        return None
    return next(i.index for i in info.inputs if i.name == used_in[0].var_names[0])


def _save_statement(info: OpInfo, attr: SavedAttribute, inplace: bool) -> str:
    """The line of a forward wrapper that stores one saved attribute on grad_fn.

    In place (`x.add_(y)`), self is saved as it was before the write (`recording.original`),
    and
    the output is self itself. A guarded tensor (see save_guard) is saved as None when
    the gradient that reads it will not be computed.
    """
    source = local_name(attr.source)
    field = _field(attr)
    if attr.kind == "tensor":
        value = f"recording.original({source})" if inplace and attr.source == "self" else source
        saved = f"SavedVariable({value}, False)"
        if saves_number(info, attr):  # a number is kept as itself
            saved = f"({saved} if isinstance({value}, Tensor) else {value})"
        guard = save_guard(info, attr)
        if guard is not None:  # should_compute_output(guard) of a node just made, read off
            return (f"grad_fn.{field} = {saved} "  # its edge: no call
                    f"if grad_fn._next_functions[{guard}][0] is not None else NOT_SAVED")
        return f"grad_fn.{field} = {saved}"
    if attr.kind == "output":
        return f"grad_fn.{field} = SavedVariable({'self_' if inplace else source}, True)"
    if attr.kind == "tensor_list":
        return f"grad_fn.{field} = SavedVariableList({source}, False)"
    if attr.kind == SavedKind.SIZES and always_tensor(info, attr.source):
        return f"grad_fn.{field} = {source}._data.shape"  # recording.sizes of a sure Tensor
    if attr.kind == SavedKind.SCALAR_TYPE:  # recording.scalar_type, without its call
        dtype = f"DTYPE_OF[{source}._data.dtype]"
        if always_tensor(info, attr.source):
            return f"grad_fn.{field} = {dtype}"
        return f"grad_fn.{field} = {dtype} if isinstance({source}, Tensor) else None"
    if attr.kind in SIZE_SAVERS:
        return f"grad_fn.{field} = {SIZE_SAVERS[attr.kind]}({source})"
    return f"grad_fn.{field} = {source}"


def always_tensor(info: OpInfo, name: str) -> bool:
    """Whether the wrapper's argument `name` is sure to be a Tensor past its argument guard
    (_argument_guard): a Tensor argument, not optional, that no Python number may stand for
    (codegen/wrapped_numbers.py). Its array is then read as `x._data`, without a call."""
    arg = next((a for a in info.schema.arguments if a.name == name), None)
    return arg is not None and arg.type.is_tensor and not arg.type.optional \
        and not takes_number(info.schema.base, name)


def _kernel_argument(info: OpInfo, arg: Argument) -> str:
    """What a kernel receives: numpy arrays for tensors, numpy dtypes for ScalarTypes."""
    name = local_name(arg.name)
    if always_tensor(info, arg.name):
        return f"{name}._data"
    if arg.type.is_tensor:  # a Tensor, or a number or None in its place: recording.data's
        return f"({name}._data if isinstance({name}, Tensor) else {name})"  # test, inline
    if arg.type.is_tensor_like:
        return f"recording.data({name})"
    if arg.type.base == "ScalarType":
        return f"recording.numpy_dtype({name})"
    return name


def _compute_outputs(info: OpInfo, kernel_call: str) -> str:
    """The line that runs the kernel and wraps its arrays as the op's output Tensors."""
    schema = info.schema
    outputs = [local_name(o) for o in schema.return_names()]
    wrap = f"recording.as_view({local_name(info.view_of)}, {{}})" if info.view_of \
        else "recording.wrap({})"
    if info.view_of and not any(info.output_differentiability):
        # torch's non-differentiable view (view.dtype): the same memory and version counter,
        # but no view for autograd (no _base, never regenerated through one)
        wrap = f"recording.sharing_memory({local_name(info.view_of)}, {{}})"
    if len(schema.returns) == 1 and schema.returns[0].type.is_list:
        return f"{outputs[0]} = [{wrap.format('a')} for a in {kernel_call}]"
    if len(outputs) == 1:
        return f"{outputs[0]} = {wrap.format(kernel_call)}"
    return f"{', '.join(outputs)} = map(recording.wrap, {kernel_call})"


def _history(info: OpInfo) -> list[str]:
    """Lines that make grad_fn the creator of each output (or skip a non-differentiable one)."""
    schema = info.schema
    outputs = [local_name(o) for o in schema.return_names()]
    if len(schema.returns) == 1 and schema.returns[0].type.is_list:
        return [f"for returned in {outputs[0]}:", "    recording.set_history(returned, grad_fn)"]
    return [f"recording.set_history({o}, grad_fn)" if differentiable
            else f"recording.skip_output({o}, grad_fn)"
            for o, differentiable in zip(outputs, info.output_differentiability, strict=True)]


def _return_expression(info: OpInfo) -> str:
    """What a wrapper returns: one Tensor, a tuple (named for named returns)."""
    schema = info.schema
    outputs = ", ".join(local_name(o) for o in schema.return_names())
    if len(schema.returns) > 1 and all(r.name for r in schema.returns):
        return f"_{schema.kernel_name}_return({outputs})"
    if len(schema.returns) == 1 and schema.returns[0].type.is_list:
        return f"tuple({outputs})  # a Tensor[] comes back as a tuple, as in PyTorch"
    return f"({outputs})" if len(schema.returns) > 1 else outputs


def _forward_ad(info: OpInfo, group: list[OpInfo]) -> dict | None:
    """How a wrapper passes tangents on: the JVP call, in place or not, and where the
    tangents go. None for an op with no differentiable output; `missing` names an op that
    has no forward formula, whose wrapper raises when it meets a tangent (as torch's do).
    """
    if not info.differentiable:
        return None
    if not info.forward_derivatives:
        return {"missing": info.name}
    tangents = {i.name for i in info.inputs}
    schema = info.schema

    def call(inplace: bool) -> str:
        args = []
        for arg in schema.arguments:
            name = local_name(arg.name)
            args.append("original_self" if inplace and arg.name == "self" else name)
            if arg.name in tangents:
                args.append(f"forward_grad.tangent({name})")
        outputs = ["self_"] if inplace else [local_name(o) for o in schema.return_names()]
        return f"forward.{wrapper_name(info, group)}({', '.join(args + outputs)})"

    outputs = [local_name(o) for o in schema.return_names()]
    if len(outputs) > 1:
        store = f"forward_grad.set_tangents(({', '.join(outputs)}), tangent)"
    elif schema.returns[0].type.is_list:
        store = f"forward_grad.set_tangents({outputs[0]}, tangent)"
    else:
        store = f"forward_grad.set_tangent({outputs[0]}, tangent)"
    return {"missing": None, "call": call(False), "inplace_call": call(True), "store": store}


def _normalize(schema: FunctionSchema) -> list[str]:
    """Lines that give an int-list argument one form, a tuple: `amin(x, 1)` means dim (1,),
    as PyTorch's IntArrayRef does (and as its grad_fn saves it)."""
    return [f"{local_name(a.name)} = recording.int_tuple({local_name(a.name)})"
            for a in schema.arguments
            if a.type.is_list and a.type.base in ("int", "SymInt")]


# What a parameter's quick test in a wrapper lets through, by its type (the names are
# runtime/arguments.py's): anything else goes to `_arguments.check_arguments`.
_QUICK_TYPES = {"Scalar": "NUMBER", "Scalar?": "NUMBER_OR_NONE", "float": "NUMBER",
                "float?": "NUMBER_OR_NONE"}


def _checked(arg: Argument) -> bool:
    """The parameters a wrapper checks on every call, as runtime/arguments.py's `checked`
    picks them: Tensors, lists of Tensors, and the numbers a 0-dim tensor may stand for."""
    kind = _argument_kind(arg)
    return kind == "Tensor" or kind.startswith("Tensor[") and not kind.endswith("?") \
        or kind in _QUICK_TYPES


def _quick_test(info: OpInfo, arg: Argument, first_tensor: bool) -> str:
    """The condition under which a value is not plainly right for `arg`: one isinstance. A
    number for the first Tensor argument (`torch.add(2, x)`, or `torch.add(2, 3)`, which
    has no tensor at all) is rare enough to be left to the slow check."""
    name = local_name(arg.name)
    kind = _argument_kind(arg)
    if kind != "Tensor" and kind.startswith("Tensor"):
        return f"not _arguments.all_tensors({name})"
    if kind == "Tensor":
        number = not first_tensor and takes_number(info.schema.base, arg.name)
        return f"not isinstance({name}, {'TENSOR_OR_NUMBER' if number else 'Tensor'})"
    return f"not isinstance({name}, {_QUICK_TYPES[kind]})"


def _argument_guard(info: OpInfo, inplace: bool = False) -> list[str]:
    """Lines that check the arguments as PyTorch's argument parser does: a value that is no
    Tensor where the schema says Tensor is a TypeError (`torch.add(x, None)`, not NaNs), a
    0-dim tensor given for a Scalar becomes its number. The usual path costs one isinstance
    per checked argument, which lets through what is plainly right: a Tensor, or a Python
    number where the op's binding takes one (decided here: codegen/wrapped_numbers.py) or
    the schema says Scalar; and one test that no other keyword came (`kwargs`). Anything
    else goes to runtime/arguments.py's `bind`, which takes the numpy-style keywords,
    accepts or converts what torch accepts and raises torch's error for the rest."""
    arguments = info.schema.arguments
    checked = [a for a in arguments if _checked(a)]
    first = next((a for a in checked if _argument_kind(a) == "Tensor"), None)
    tests = [_quick_test(info, a, a is first) for a in checked]
    tests += [f"{local_name(a.name)} is MISSING" for a in late_required(arguments)
              if not _checked(a)]
    names = ", ".join(local_name(a.name) for a in arguments)
    targets = f"({names},)" if len(arguments) == 1 else names
    flag = ", inplace=True" if inplace else ""
    return [f"if {' or '.join([*tests, 'kwargs', 'extra'])}:",
            f"    {targets} = _arguments.bind("
            f"OVERLOADS[{escape(info.name, Into.LITERAL)}], ({names},), kwargs, extra{flag})"]


# torch's in-place view ops that gradgen writes as such (tagged inplace_view in torch): they
# change self's geometry, not its data, so self's grad_fn becomes the op's node itself (no
# CopySlices on a base whose data did not change). squeeze_, unsqueeze_ and transpose_ are
# not among them yet: they still rebase a view's history through its base.
INPLACE_VIEWS = frozenset({"as_strided_"})


def _inplace_write(info: OpInfo, kernel_args: str, kernel_call: str,
                   kernels: frozenset[str]) -> list[str]:
    """How an in-place wrapper writes: the kernel's in-place form, or a computed result
    copied into self's storage (an in-place view op: self made the view the kernel gives)."""
    if info.schema.base in INPLACE_VIEWS:
        return [f"recording.restride(self_, {kernel_call})"]
    inplace_kernel = f"{info.schema.kernel_name}_"
    if inplace_kernel in kernels:
        return [f"kernels.{inplace_kernel}({kernel_args})", "recording.increment_version(self_)"]
    return [f"recording.write_inplace(self_, {kernel_call})"]


# Where a wrapper's order is PyTorch's rule rather than a free choice, it says so.
SAVED_AFTER_TANGENTS = "# torchgen's order: outputs are saved after their tangents are set"


def _indent(lines: list[str]) -> list[str]:
    return [f"    {line}" for line in lines]


@dataclass(frozen=True)
class _Wrapper:
    """What a forward wrapper's body is made of; `body` and `inplace_body` lay it out."""

    info: OpInfo
    compute: str  # the line that runs the kernel and wraps its outputs
    write: list[str]  # in place: the lines that write into self
    history: list[str]
    saves: list[str]  # saved before the forward-mode tangents: inputs, sizes, values
    saves_after: list[str]  # outputs, saved after them (torchgen's order)
    inplace_saves: list[str]
    inplace_saves_after: list[str]
    forward: dict | None  # how tangents pass on (_forward_ad)
    returns: str

    @property
    def inputs(self) -> str:
        return ", ".join(local_name(i.name) for i in self.info.inputs)

    def _make_node(self) -> str:
        """The node, made with its edges: one gradient_edge per input, written out when no
        input is a Tensor[] (collect_next_edges, a loop over its arguments, otherwise)."""
        inputs = self.info.inputs
        if any(i.is_list for i in inputs):
            return f"grad_fn = {self.info.node_name}(recording.collect_next_edges({self.inputs}))"
        edges = ", ".join(f"gradient_edge({local_name(i.name)})" for i in inputs)
        return f"grad_fn = {self.info.node_name}(({edges}{',' if len(inputs) == 1 else ''}))"

    @property
    def needs_grad(self) -> str:
        """The test that a gradient is needed (recording.compute_requires_grad): grad mode on
        and an input that requires grad, written out when no input is a Tensor[]."""
        inputs = self.info.inputs
        if any(i.is_list for i in inputs):
            return f"recording.compute_requires_grad({self.inputs})"
        tests = " or ".join(f"isinstance({n}, Tensor) and ({n}._requires_grad or {n}.grad_fn "
                            "is not None)" for n in (local_name(i.name) for i in inputs))
        return f"_grad_state.enabled and ({tests})"

    def _missing_forward(self) -> list[str]:
        """As torch's wrappers: an op without a forward formula raises on a tangent."""
        return [f"if forward_grad.enabled and forward_grad.any_tangent({self.inputs}):",
                f"    forward_grad.not_implemented({escape(self.info.name, Into.LITERAL)})"]

    def body(self) -> list[str]:
        """compute; record the node if a gradient is needed; pass tangents on; return."""
        lines = [self.compute]
        missing = self.forward is not None and self.forward["missing"]
        if not self.info.differentiable:
            return [*lines, f"return {self.returns}"]
        if self.saves_after and not missing:  # outputs are saved after the tangents
            lines += [f"needs_grad = {self.needs_grad}",
                      "if needs_grad:",
                      *_indent([self._make_node(), *self.saves, *self.history])]
        else:
            lines += [f"if {self.needs_grad}:",
                      *_indent([self._make_node(), *self.saves, *self.history,
                                *self.saves_after])]
        if missing:
            lines += self._missing_forward()
        else:
            lines += [f"if forward_grad.enabled and forward_grad.any_tangent({self.inputs}):",
                      "    with forward_grad.computing_tangents():",
                      f"        tangent = {self.forward['call']}",
                      f"    {self.forward['store']}"]
            if self.saves_after:
                lines += [SAVED_AFTER_TANGENTS, "if needs_grad:", *_indent(self.saves_after)]
        return [*lines, f"return {self.returns}"]

    def inplace_body(self) -> list[str]:
        """The same for a write into self: check it may be written, record, write, rebase
        self's history on the new node, pass the tangent on; return self."""
        if not self.info.differentiable:  # as torch: no autograd check, a leaf may be written
            return ["recording.check_inplace(self_, differentiable=False)", *self.write,
                    "return self_"]
        lines = ["recording.check_inplace(self_)"]
        missing = self.forward["missing"]
        lines += [f"needs_grad = {self.needs_grad}",
                  "if needs_grad:", *_indent([self._make_node(), *self.inplace_saves])]
        lines += self._missing_forward() if missing else [
            f"forward_ad = forward_grad.enabled and forward_grad.any_tangent({self.inputs})",
            "if forward_ad:", "    original_self = recording.original(self_)"]
        rebase = "rebase_view_history" if self.info.schema.base in INPLACE_VIEWS \
            else "rebase_history"
        lines += [*self.write, "if needs_grad:", f"    recording.{rebase}(self_, grad_fn)"]
        if not missing:
            lines += ["if forward_ad:", "    with forward_grad.computing_tangents():",
                      f"        tangent = {self.forward['inplace_call']}",
                      "    forward_grad.set_tangent_inplace(self_, tangent)"]
        if self.inplace_saves_after:
            lines += [SAVED_AFTER_TANGENTS, "if needs_grad:", *_indent(self.inplace_saves_after)]
        return [*lines, "return self_"]


def save_statements(info: OpInfo, inplace: bool = False) -> tuple[list[str], list[str]]:
    """The lines that store what the node saves: (before the tangents, after them)."""
    before = [_save_statement(info, a, inplace) for a in info.saved if a.kind != "output"]
    after = [_save_statement(info, a, inplace) for a in info.saved if a.kind == "output"]
    return before, after


def kernel_module(info: OpInfo, kernels: frozenset[str]) -> str:
    """Where the op's kernel is: runtime/kernels.py (`kernels`), or, for an entry with a
    `forward:` formula and no kernel written by hand, generated/spec_kernels.py."""
    derived = info.forward_formula is not None and info.schema.kernel_name not in kernels
    return "spec_kernels" if derived else "kernels"


def spec_kernel_context(info: OpInfo) -> dict:
    """One kernel derived from a `forward:` formula: the schema's parameter names (as a
    kernel in runtime/kernels.py has them), bound to the names formulas use, then the
    formula's code with numpy's warnings off."""
    schema = info.schema
    params = [a.name for a in schema.arguments]
    rebind = [f"{local_name(p)} = {p}" for p in params if local_name(p) != p]
    defaults = [a.name if a.default is None else f"{a.name}={_python_default(a)}"
                for a in schema.arguments]
    return {"name": schema.kernel_name, "params": ", ".join(defaults), "schema": str(schema),
            "entry": info.name, "formula": info.forward_formula.formula,
            "body": [*rebind, "with silenced():", f"    return {info.forward_formula.code}"]}


def op_contexts(info: OpInfo, group: list[OpInfo], kernels: frozenset[str] = frozenset()
                ) -> list[dict]:
    """The forward wrapper of an overload, and its in-place form if it has one."""
    schema = info.schema
    kernel_args = ", ".join(_kernel_argument(info, a) for a in schema.arguments)
    kernel_call = f"{kernel_module(info, kernels)}.{schema.kernel_name}({kernel_args})"
    saves, saves_after = save_statements(info)
    inplace_saves, inplace_saves_after = save_statements(info, inplace=True)
    wrapper = _Wrapper(
        info, compute=_compute_outputs(info, kernel_call),
        write=_inplace_write(info, kernel_args, kernel_call, kernels),
        history=_history(info), saves=saves, saves_after=saves_after,
        inplace_saves=inplace_saves, inplace_saves_after=inplace_saves_after,
        forward=_forward_ad(info, group), returns=_return_expression(info))
    function = wrapper_name(info, group)
    common = {"name": schema.name, "schema": str(schema), "signature": python_signature(schema)}
    normalize = [*_argument_guard(info), *_normalize(schema)]
    # An op that is itself in place (`zero_(Tensor(a!) self)`) writes into self.
    body = wrapper.inplace_body() if _writes_self(schema) else wrapper.body()
    contexts = [{**common, "function": function, "doc": "", "body": [*normalize, *body]}]
    if info.name in OUT_OVERLOADS and not _writes_self(schema):
        contexts[0].update(signature=python_signature(schema, out=True),
                           body=[*normalize, *_out_form(info, function), *body])
    if info.inplace:
        contexts.append({**common, "function": f"{function}_", "doc": "In-place ",
                         "body": [*_argument_guard(info, inplace=True), *_normalize(schema),
                                  *wrapper.inplace_body()]})
    return contexts


def _argument_kind(arg: Argument) -> str:
    """The type the dispatcher checks a value against: aliases and SymInt don't matter."""
    return str(replace(arg.type, alias=None)).replace("SymInt", "int")


def _param(arg: Argument, base: str) -> str:
    """An argument as overload resolution reads it: `Param("dim", "int[1]?", has_default=True)`;
    `number=True` on a Tensor argument a Python number may stand for (in op `base`)."""
    flags = (", has_default=True" if arg.default is not None else "") \
        + (", keyword_only=True" if arg.kwarg_only else "") \
        + (", number=True" if arg.type.base == "Tensor" and not arg.type.is_list
           and takes_number(base, arg.name) else "")
    return f"Param({escape(local_name(arg.name), Into.LITERAL)}, " \
        f"{escape(_argument_kind(arg), Into.LITERAL)}{flags})"


def overload_context(info: OpInfo, group: list[OpInfo],
                     kernels: frozenset[str] = frozenset()) -> dict:
    """One entry of OVERLOADS: the overload's wrapper, kernel, schema and parameters."""
    return {
        "key": info.name,
        "wrapper": wrapper_name(info, group),
        "kernel": f"{kernel_module(info, kernels)}.{info.schema.kernel_name}",
        "schema": str(info.schema),
        "params": [_param(a, info.schema.base) for a in info.schema.arguments],
        "several": has_several_signatures(info.schema.base),
        "only_numbers": takes_only_numbers(info.schema.base),
    }


def _by_name(groups: dict[str, list[OpInfo]], inplace: dict[str, list[OpInfo]]
             ) -> list[tuple[str, list[str]]]:
    """BY_NAME: for each name Python calls (and its in-place form), its overloads in the
    order resolution tries them, as OVERLOADS entries."""
    table = [(base, [f"OVERLOADS[{escape(i.name, Into.LITERAL)}]" for i in group])
             for base, group in groups.items()]
    for base, group in inplace.items():
        table.append((f"{base}_", [
            f"OVERLOADS[{escape(i.name, Into.LITERAL)}]._replace("
            f"wrapper={wrapper_name(i, groups[base])}_, kernel=None)" for i in group]))
    return table


# -- tensor_methods.py -----------------------------------------------------------------------

def _method_params(schema: FunctionSchema) -> tuple[list[str], list[str]]:
    """Parameters and call arguments of a Tensor method, `self` bound to the tensor."""
    rest = list(schema.arguments[1:])
    varargs = varargs_list(schema)
    if varargs is not None:
        # `x.flip(0, 1)`, `x.flip((0, 1))` and, as PyTorch's parser allows, `x.flip(dims=(0, 1))`
        keywords = [a for a in rest if a.kwarg_only]
        params = ["self", "*args", f"{varargs.name}=None", *(_parameter(a) for a in keywords)]
        call = ["self", f"_arguments.varargs_list(args, {varargs.name})",
                *(f"{local_name(a.name)}={local_name(a.name)}" for a in keywords)]
        return params, call
    params = ["self"]
    star = False
    late = late_required(rest)
    for arg in rest:
        if arg.kwarg_only and not star:
            params.append("*")
            star = True
        params.append(f"{local_name(arg.name)}=MISSING" if arg in late else _parameter(arg))
    call = ["self", *(f"{local_name(a.name)}={local_name(a.name)}" if a.kwarg_only
                      else local_name(a.name) for a in rest)]
    if rest:  # numpy-style keywords, and torch's errors: the function's `bind` sees them
        params.append("**kwargs")
    return params, call


def method_context(name: str, infos: list[OpInfo], suffix: str = "",
                   group: list[OpInfo] | None = None) -> dict:
    """A Tensor method (or, with suffix "_", its in-place form); its docstring is the
    schema of each overload it may call, one a line. `group`: all the overloads of the name,
    in the order resolution tries them."""
    doc = [("In-place " if suffix else "") + str(i.schema) for i in infos]
    if len(infos) > 1:
        call = f"ops.{name}{suffix}(self, *args, **kwargs)"
        if not suffix and any(i.name in OUT_OVERLOADS for i in infos):
            # the function takes out= (`torch.max(x, 0, out=...)`), the method does not
            call += f' if "out" not in kwargs else _arguments.no_out({escape(name, Into.LITERAL)})'
        if group and not suffix:
            call = _usual_calls_first(call, group)
        return {"name": name + suffix, "signature": "self, *args, **kwargs", "call": call,
                "doc": doc}
    params, call = _method_params(infos[0].schema)
    function = f"ops.{wrapper_name(infos[0], [infos[0]])}{suffix}"
    expression = f"{function}({', '.join(call)})"
    literal = escape(name + suffix, Into.LITERAL)
    if params == ["self"]:  # torch's message for an argument given to a method of none
        context = {"name": name + suffix, "signature": "self, *extra", "doc": doc,
                   "call": f"{expression} if not extra else _arguments.no_arguments("
                           f"{literal}, extra)"}
        return context
    if params[-1] == "**kwargs" and name not in DEPRECATED_FORMS:
        # positions past the method's own go on to the function, whose `bind` words torch's
        # error; the usual call passes no dict of keywords on
        params = _with_extra(params)
        keywords = f"**_arguments.method_keywords({escape(name, Into.LITERAL)}, kwargs)"
        positional = [c for c in call if "=" not in c]
        rest = [*positional, "*extra", *call[len(positional):], keywords]
        expression += f" if not kwargs and not extra else {function}({', '.join(rest)})"
    elif params[-1] == "**kwargs":  # the usual call passes no dict of keywords on
        keywords = f"**_arguments.method_keywords({escape(name, Into.LITERAL)}, kwargs)"
        expression += f" if not kwargs else {function}({', '.join([*call, keywords])})"
    context = {"name": name + suffix, "signature": ", ".join(params), "call": expression,
               "doc": doc}
    return _deprecated_form(context, params) if name in DEPRECATED_FORMS else context


def _usual_calls_first(call: str, group: list[OpInfo]) -> str:
    """A method's call of overload resolution, behind the usual calls that would resolve to
    one overload, made at once: `x.pow(2)`, `x.sum()`, `x.view(3, 4)`."""
    scalar = _one_number_call(group)
    if scalar is not None:  # `x.pow(2)`: the overload resolution would pick, called at once
        call = (f"ops.{wrapper_name(scalar, group)}(self, args[0]) if len(args) == 1 and "
                f"not kwargs and type(args[0]) in _arguments.NUMBER else {call}")
    bare = _bare_call(group)
    if bare is not None:  # `x.sum()`: the overload resolution would pick, called at once
        call = f"ops.{wrapper_name(bare, group)}(self) if not args and not kwargs else {call}"
    spread = _varargs_call(group)
    if spread is not None:  # `x.view(3, 4)`: sizes given one by one, as PyTorch allows
        call = (f"ops.{wrapper_name(spread, group)}(self, _arguments.varargs_list(args, "
                f"None)) if args and type(args[0]) is int and not kwargs else {call}")
    return call


def _varargs_call(group: list[OpInfo]) -> OpInfo | None:
    """The one overload that takes its int list as separate arguments (`x.view(3, 4)`, beside
    view.dtype): what a call whose first argument is an int resolves to."""
    spread = [i for i in group if varargs_list(i.schema) is not None]
    if len(spread) != 1:
        return None
    # (not where another overload takes one number there: `x.squeeze(0)` is squeeze.dim's)
    others = [i.schema.arguments[1:2] for i in group if i is not spread[0]]
    if any(first and _argument_kind(first[0]) not in _NO_NUMBER_KINDS for first in others):
        return None
    return spread[0]


def _bare_call(group: list[OpInfo]) -> OpInfo | None:
    """The overload a call with a Tensor alone resolves to (runtime/arguments.py tries the
    overloads in order): the first whose arguments after a Tensor self all have defaults."""
    for info in group:
        arguments = info.schema.arguments
        if arguments and _argument_kind(arguments[0]) == "Tensor" \
                and all(a.default is not None for a in arguments[1:]):
            return info
    return None


# Argument kinds that a Python int or float never fits in resolution's first (strict) pass.
_NO_NUMBER_KINDS = ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "bool", "str", "ScalarType",
                    "ScalarType?", "Generator?")


def _one_number_call(group: list[OpInfo]) -> OpInfo | None:
    """The overload a call with a Tensor and one Python int or float resolves to (`x.pow(2)`),
    when resolution's first pass surely picks it: the first overload that could take the
    two has a Scalar there and defaults for the rest. None where another kind (int, float)
    would decide by the value's type."""
    for info in group:
        arguments = info.schema.arguments
        if len(arguments) < 2 or arguments[1].kwarg_only \
                or any(a.default is None for a in arguments[2:]):
            continue  # it cannot take two positional arguments alone
        first, second = _argument_kind(arguments[0]), _argument_kind(arguments[1])
        if first != "Tensor":
            if first in ("Scalar", "float", "int"):
                continue  # a number there: a Tensor does not fit it in the first pass
            return None
        if second in ("Scalar", "Scalar?"):
            return info
        if second not in _NO_NUMBER_KINDS:
            return None
    return None


def _with_extra(params: list[str]) -> list[str]:
    """A method's parameters with `*extra` where the keyword-only ones begin (or before
    **kwargs)."""
    if "*" in params:
        return ["*extra" if p == "*" else p for p in params]
    return [*params[:-1], "*extra", params[-1]]


# Tensor methods that also take the positional forms torch keeps for old programs, with a
# warning (its tools/autograd/deprecated.yaml): `x.add_(alpha, other)`,
# `x.addcmul(value, tensor1, tensor2)`. Each lists the form's parameters in order.
DEPRECATED_FORMS = {
    "add": ("alpha", "other"),
    "sub": ("alpha", "other"),
    "addcmul": ("value", "tensor1", "tensor2"),
    "addcdiv": ("value", "tensor1", "tensor2"),
}


def _deprecated_form(context: dict, params: list[str]) -> dict:
    """A method's context taking its deprecated positional form too: the extra positions
    gather in `*deprecated`, and a line before the mode check reads them as that form."""
    form = DEPRECATED_FORMS[context["name"].rstrip("_")]
    positional = [p.split("=")[0] for p in params[1:params.index("*")]]
    targets = positional + [n for n in form if n not in positional]
    params = [p if p != "*" else "*deprecated" for p in params]

    def names(items: list[str] | tuple[str, ...]) -> str:
        return "(" + ", ".join(escape(n, Into.LITERAL) for n in items) + ")"

    reading = (f"{', '.join(targets)} = _arguments.deprecated_form("
               f"{escape(context['name'], Into.LITERAL)}, ({', '.join(positional)}, "
               f"*deprecated), {names(form)}, {names(targets)})")
    return {**context, "signature": ", ".join(params), "deprecated": reading}


def _writes_self(schema: FunctionSchema) -> bool:
    """An op that is itself in place (`zero_(Tensor(a!) self)`): it writes into self."""
    return bool(schema.arguments and schema.arguments[0].type.alias
                and schema.arguments[0].type.alias.endswith("!"))


# An overload's wrapper is `base_overload`, unless that is another op's own name (scatter's
# overload `reduce` beside the op scatter_reduce): then it is named here. _aliases refuses
# any other such clash.
RENAMED_WRAPPERS = {"scatter.reduce": "scatter_reduce_overload"}


def wrapper_name(info: OpInfo, group: list[OpInfo]) -> str:
    """`pow_Tensor_Scalar`; an overload without a name is `sum_default` beside others."""
    schema = info.schema
    if not schema.overload and len(group) > 1:
        return f"{schema.base}_default"
    return RENAMED_WRAPPERS.get(info.name, schema.kernel_name)


def _bound(infos: list[OpInfo]) -> dict[str, list[OpInfo]]:
    groups: dict[str, list[OpInfo]] = {}
    for info in infos:
        if info.python_binding:
            groups.setdefault(info.schema.base, []).append(info)
    return groups


def operator_contexts(infos: list[OpInfo]) -> list[dict]:
    groups = _bound(infos)
    result = []
    for dunder, (op, swapped) in OPERATORS.items():
        if op not in groups:
            continue
        unary = dunder in ("__neg__", "__abs__", "__invert__")
        if unary:
            result.append({"name": dunder, "signature": "self", "call": f"ops.{op}(self)"})
        else:
            result.append({"name": dunder, "signature": "self, other", "call":
                           f"ops.{op}(other, self)" if swapped else f"ops.{op}(self, other)",
                           "reflected": dunder in _DESCRIPTORS})
    for dunder, method in INPLACE_OPERATORS.items():
        base = method[:-1]
        if any(i.inplace for i in groups.get(base, [])):
            result.append({"name": dunder, "signature": "self, other",
                           "call": f"self.{method}(other)"})
    return result


def _import_order(name: str) -> tuple:
    """isort's order for imported names: case-insensitive, numbers by value."""
    return tuple(int(part) if part.isdigit() else part
                 for part in re.split(r"(\d+)", name.lower()))


# -- all files ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bindings:
    """How the spec's ops are reached from Python: the overloads of each name it binds, and
    which names are functions, Tensor methods and in-place methods."""

    groups: dict[str, list[OpInfo]]  # every bound name, its overloads in spec order
    functions: dict[str, list[OpInfo]]  # `torch.add`
    methods: dict[str, list[OpInfo]]  # `x.add(y)`: the overloads that are methods
    inplace: dict[str, list[OpInfo]]  # `x.add_(y)`: the overloads with an in-place form

    @classmethod
    def of(cls, infos: list[OpInfo]) -> Bindings:
        groups = _bound(infos)

        def keep(test: Callable[[OpInfo], bool]) -> dict[str, list[OpInfo]]:
            return {base: [i for i in group if test(i)] for base, group in groups.items()
                    if any(test(i) for i in group)}

        functions = {base: group for base, group in groups.items()
                     if any(i.function for i in group)}
        return cls(groups, functions, keep(lambda i: i.method), keep(lambda i: i.inplace))

    def group(self, info: OpInfo) -> list[OpInfo]:
        return self.groups.get(info.schema.base, [info])


def _named_returns(infos: list[OpInfo]) -> list[dict]:
    """A namedtuple per op whose returns all have names (`max.dim`'s values, indices)."""
    return [{"name": f"_{i.schema.kernel_name}_return", "type": i.schema.base,
             "fields": [r.name for r in i.schema.returns]}
            for i in infos if len(i.schema.returns) > 1 and all(r.name for r in i.schema.returns)]


def _aliases(bindings: Bindings) -> list[tuple[str, str]]:
    """`add = add_Tensor`: a name Python binds to one overload whose wrapper is named after
    the overload; the same for its in-place form (`add_ = add_Tensor_`)."""
    aliases = []
    wrappers = {wrapper_name(i, group) for group in bindings.groups.values() for i in group
                if i.schema.overload}
    for base, group in sorted(bindings.functions.items()):
        if base in wrappers and wrapper_name(group[0], group) != base:
            raise ValueError(f"the wrapper of an overload is named {base!r}, the name of "
                             f"another op: name it in codegen/render.py's RENAMED_WRAPPERS")
        if len(group) == 1 and wrapper_name(group[0], group) != base:
            aliases.append((base, wrapper_name(group[0], group)))
        inplace = bindings.inplace.get(base, [])
        if len(inplace) == 1 and wrapper_name(inplace[0], group) + "_" != f"{base}_":
            aliases.append((f"{base}_", wrapper_name(inplace[0], group) + "_"))
    return aliases


def _node_imports(infos: list[OpInfo]) -> list[str]:
    """What ops.py takes from runtime.node: only what its save statements and edges use."""
    kinds = {a.kind for i in infos for a in i.saved}
    guarded = any(save_guard(i, a) is not None for i in infos for a in i.saved)
    plain = any(i.differentiable and not any(x.is_list for x in i.inputs) for i in infos)
    names = [name for name, used in (("NOT_SAVED", guarded),
                                     ("SavedVariable", bool(kinds & {"tensor", "output"})),
                                     ("SavedVariableList", "tensor_list" in kinds),
                                     ("gradient_edge", plain)) if used]
    return [f"from runtime.node import {', '.join(names)}"] if names else []


def _public(bindings: Bindings) -> list[str]:
    """`__all__` of ops.py: the function names, and in-place functions (`torch.sin_`)."""
    inplace = {f"{base}_" for base, group in bindings.inplace.items()
               if base in bindings.functions and any(i.inplace_function for i in group)}
    return sorted({*bindings.functions, *inplace})


# -- the mode check: the block at the top of every wrapper (runtime/modes.py) ----------------

@functools.cache  # many wrappers share a signature
def _signature_call(signature: str) -> tuple[str, str]:
    """The args tuple and kwargs dict, as source, that call a function of `signature` again
    with what it received: its positional parameters (and *args), its keyword-only ones
    (and **kwargs)."""
    parsed = ast.parse(f"def function({signature}): pass").body[0].args
    args = [a.arg for a in parsed.posonlyargs + parsed.args]
    args += [f"*{parsed.vararg.arg}"] if parsed.vararg else []
    kwargs = [f"{escape(a.arg, Into.LITERAL)}: {a.arg}" for a in parsed.kwonlyargs]
    kwargs += [f"**{parsed.kwarg.arg}"] if parsed.kwarg else []
    return ("(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")",
            "{" + ", ".join(kwargs) + "}")


def _parameter_names(signature: str) -> set[str]:
    parsed = ast.parse(f"def function({signature}): pass").body[0].args
    return {a.arg for a in (*parsed.posonlyargs, *parsed.args, *parsed.kwonlyargs)}


def _mode_call(wrapper: dict, info: OpInfo, public: set[str]) -> dict:
    """The wrapper's context with `heard`: what it hands to `_modes.dispatch` when a mode is
    on: itself, the arguments it received, and who may hear it (a public function is heard
    by function modes too)."""
    args, kwargs = _signature_call(wrapper["signature"])
    who = "PUBLIC_OP" if wrapper["function"] in public else "OP"
    function = wrapper["function"]
    if function in _parameter_names(wrapper["signature"]):
        # (`threshold(self, threshold, value)`: the name is the argument's in the body.)
        function = f'globals()["{function}"]'
    return {**wrapper, "heard": f"{function}, {args}, {kwargs}, _modes.{who}"}


def _public_wrappers(bindings: Bindings) -> set[str]:
    """The wrappers a program calls by a public name (`mm`, `add_Tensor` bound as `add`)."""
    names = set(_public(bindings))
    return names | {target for alias, target in _aliases(bindings) if alias in names}


def _method_mode_call(method: dict) -> dict:
    """A Tensor method's context with `heard`: itself as `TensorMethods.NAME` (the function
    Tensor gets), and the call's arguments as its signature takes them, self first."""
    args, kwargs = _signature_call(method["signature"])
    return {**method, "heard": f"TensorMethods.{method['name']}, {args}, {kwargs}"}


def render_functions(env: jinja2.Environment, header: dict, infos: list[OpInfo]) -> str:
    nodes = [node_context(i) for i in infos if i.differentiable]
    return env.get_template("functions.py.j2").render(
        **header, nodes=nodes,
        saves_numbers=any(number for node in nodes for _, number in node["release"]))


def render_ops(env: jinja2.Environment, header: dict, infos: list[OpInfo], bindings: Bindings,
               kernels: frozenset[str]) -> str:
    public_wrappers = _public_wrappers(bindings)
    return env.get_template("ops.py.j2").render(
        **header,
        wrappers=[_mode_call(w, i, public_wrappers) for i in infos
                  for w in op_contexts(i, bindings.group(i), kernels)],
        nodes=sorted({i.node_name for i in infos if i.differentiable}, key=_import_order),
        named_returns=_named_returns(infos),
        overloads=[overload_context(i, bindings.group(i), kernels) for i in infos],
        spec_kernels=any(kernel_module(i, kernels) == "spec_kernels" for i in infos),
        by_name=_by_name(bindings.groups, bindings.inplace),
        dispatchers=[base for base, group in bindings.functions.items() if len(group) > 1]
        + [base for base, group in bindings.methods.items()
           if len(group) > 1 and base not in bindings.functions]  # eq_: methods only
        + [f"{base}_" for base, group in bindings.inplace.items() if len(group) > 1],
        public=_public(bindings), aliases=_aliases(bindings), node_imports=_node_imports(infos),
    )


def render_forward(env: jinja2.Environment, header: dict, infos: list[OpInfo],
                   bindings: Bindings) -> str:
    return env.get_template("forward.py.j2").render(
        **header, functions=[forward_context(i, bindings.group(i)) for i in infos
                             if i.forward_derivatives])


def render_tensor_methods(env: jinja2.Environment, header: dict, infos: list[OpInfo],
                          bindings: Bindings) -> str:
    methods = [method_context(base, group, group=bindings.groups[base])
               for base, group in sorted(bindings.methods.items())]
    methods += [method_context(base, group, "_")
                for base, group in sorted(bindings.inplace.items())]
    return env.get_template("tensor_methods.py.j2").render(
        **header, methods=[_method_mode_call(m) for m in methods],
        operators=operator_contexts(infos))


def _numpy_forms(infos: list[OpInfo]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(kernel name, [(form, when's literal or None, quiet)]) per op with `numpy:` forms."""
    return [(info.name.replace(".", "_"),
             [(f.form, "None" if f.when is None else escape(f.when, Into.LITERAL),
               repr(f.quiet)) for f in info.numpy_forms])
            for info in infos if info.numpy_forms]


def _provenance(infos: list[OpInfo]) -> list[tuple[str, list[tuple[int, str]]]]:
    """(node name, [(input index, "name: formula" as one comment-safe line)]), for the
    first entry of each node name."""
    table: dict[str, dict[int, str]] = {}
    for info in infos:
        if info.node_name is None or info.node_name in table:
            continue
        index_of = {i.name: i.index for i in info.inputs}
        entry: dict[int, str] = {}
        for derivative in info.derivatives:
            for var in derivative.var_names:
                if var in index_of:
                    entry[index_of[var]] = escape(f"{var}: {derivative.formula}", Into.COMMENT)
        table[info.node_name] = entry
    return [(name, sorted(entry.items())) for name, entry in table.items()]


def render_spec_data(env: jinja2.Environment, header: dict, infos: list[OpInfo]) -> str:
    return env.get_template("spec_data.py.j2").render(
        **header, numpy_forms=_numpy_forms(infos), formulas=_provenance(infos))


def explore_context(info: OpInfo) -> dict:
    """One Node class's entry, as runtime.explore shows it (generated/explore_data.py)."""
    return {
        "name": info.node_name,
        "entry": info.name,
        "schema": str(info.schema),
        "formulas": [(", ".join(d.var_names), d.formula) for d in info.derivatives],
        "result": [(", ".join(f.var_names), f.formula, f.derived)
                   for f in info.forward_derivatives],
        "saved": [(a.name, str(a.kind)) for a in info.saved],
    }


def render_explore_data(env: jinja2.Environment, header: dict, infos: list[OpInfo]) -> str:
    return env.get_template("explore_data.py.j2").render(
        **header, nodes=[explore_context(i) for i in infos if i.differentiable])


def render_all(infos: list[OpInfo], spec_name: str,
               kernels: frozenset[str] = frozenset()) -> dict[str, str]:
    """File name -> text, for every file under generated/.

    `kernels` names the functions of runtime/kernels.py: an in-place wrapper calls the
    kernel's in-place form (`add_Tensor_`, writing into its first argument) when it has one.
    """
    env = _environment()
    header = {"generator": GENERATOR, "spec": spec_name}
    bindings = Bindings.of(infos)
    return {
        "functions.py": render_functions(env, header, infos),
        "ops.py": render_ops(env, header, infos, bindings, kernels),
        "forward.py": render_forward(env, header, infos, bindings),
        "tensor_methods.py": render_tensor_methods(env, header, infos, bindings),
        "spec_data.py": render_spec_data(env, header, infos),
        "explore_data.py": render_explore_data(env, header, infos),
        "spec_kernels.py": env.get_template("spec_kernels.py.j2").render(
            **header, kernels=[spec_kernel_context(i) for i in infos if i.forward_formula]),
        "__init__.py": env.get_template("__init__.py.j2").render(**header),
        "signatures.py": env.get_template("signatures.py.j2").render(
            **header, signatures=signatures_context()),
    }
