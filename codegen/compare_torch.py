"""`python -m codegen compare-torch`: gradgen's spec beside the derivatives.yaml torch ships.

For every entry of torch's file: present in gradgen (an entry of the same `name.overload`) or
absent. A present entry's formulas are compared key by key once both dialects are brought
to one form (`normalise`): torch writes C++ (`at::`, `{}` lists, `?:`, `.sym_sizes()`,
`grad.expand_symint(...)`), gradgen writes Python (`self.shape`, `[...]`, `x if c else y`).
Each formula is then "same", "differs" or "not comparable" (C++ that has no Python form
here: a lambda, a template, a statement), and "missing" when gradgen has no formula for
the key. An absent entry is given its family; the families gradgen leaves out on purpose
(backend kernels, quantization, sparse and nested layouts, `_foreach_*`, fused attention)
with the reason.

A formula that differs needs a reason in the spec: a comment `# differs from torch: ...`
indented inside the entry (codegen.load.entry_notes reads it); tests/test_compare_torch.py
fails on one without.

    python -m codegen compare-torch               the table and a summary line
    python -m codegen compare-torch --json        the same as JSON, for tools
    python -m codegen compare-torch --write-docs  (re)write docs/compare-torch.md
    python -m codegen compare-torch --torch-spec PATH   another torch's derivatives.yaml

This is not part of `python -m codegen --check`, which stays fast: it reads torch's 3000-line
file. torch is found without being imported (the torchgen package's files are enough).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from codegen.load import entry_notes

ROOT = Path(__file__).resolve().parent.parent
DOCS_PAGE = ROOT / "docs" / "compare-torch.md"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Keys of an entry that are not formulas, in torch's file and in gradgen's.
TORCH_ENTRY_KEYS = frozenset({"name", "output_differentiability", "dispatch"})
GRADGEN_ENTRY_KEYS = frozenset(
    {
        "name",
        "output_differentiability",
        "variants",
        "inplace",
        "python_binding",
        "samples",
        "node",
        "numpy",
    }
)


class NotComparable(ValueError):
    """A formula this normaliser cannot bring to Python; the message says why."""


# -- finding torch's file ---------------------------------------------------------------------


def torch_spec_path() -> Path:
    """The derivatives.yaml of the installed torch, found without importing torch:
    torchgen/packaged/autograd/derivatives.yaml beside the torchgen package."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "torch is not installed (no torchgen package): pass --torch-spec PATH"
        )
    path = Path(next(iter(spec.submodule_search_locations)))
    path = path / "packaged" / "autograd" / "derivatives.yaml"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: pass --torch-spec PATH")
    return path


# -- C++ to Python ----------------------------------------------------------------------------

_LAMBDA = re.compile(r"\[[&=]?\]\s*\(")
_TEMPLATE = re.compile(r"[A-Za-z_]\w*<[\w:\s,*&]+>")
_NAMESPACE = re.compile(r"(?<![\w:])(?:::)?(?:[A-Za-z_]\w*::)+")
_WORDS = {"true": "True", "false": "False", "nullopt": "None", "nullptr": "None"}
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")
_FLOAT_SUFFIX = re.compile(r"\b(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+\.)[fF]\b")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_REDUCTIONS = {"None": "0", "Mean": "1", "Sum": "2"}
_REDUCTION = re.compile(r"(?:at::)?Reduction::(None|Mean|Sum)\b")
_DEREFERENCE = re.compile(r"(^|[(,?:]\s*)\*(?=[A-Za-z_])")


def cpp_to_python(text: str) -> str:
    """torch's C++ formula as a Python expression; raises NotComparable when it has no
    Python form here (a lambda, a template, statements)."""
    if _LAMBDA.search(text):
        raise NotComparable("a C++ lambda")
    if _TEMPLATE.search(text):
        raise NotComparable("a C++ template (a cast or a type)")
    if ";" in text or re.search(r"\breturn\b", text):
        raise NotComparable("C++ statements, not an expression")
    text = re.sub(r"/\*.*?\*/", " ", text)  # /*rounding_mode=*/"trunc"
    text = _REDUCTION.sub(lambda m: _REDUCTIONS[m[1]], text)  # the enum's values
    text = _NAMESPACE.sub("", text)
    text = _DEREFERENCE.sub(r"\1", text)  # *dtype: an optional's value
    text = _WORD.sub(lambda m: _WORDS[m[1]], text)
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    text = _FLOAT_SUFFIX.sub(r"\1", text)
    converted, end = _group(" ".join(text.split()), 0, None)
    if end != len(" ".join(text.split())):
        raise NotComparable("unbalanced brackets")
    return converted


def _group(text: str, start: int, closer: str | None) -> tuple[str, int]:
    """Convert text[start:] up to `closer` (None: the end): `{}` become `[]`, and each
    comma-separated item's `c ? a : b` becomes `(a) if (c) else (b)`. Returns the converted
    text and the index of the closer (or the end)."""
    items: list[str] = []
    current: list[str] = []
    index = start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            end = text.find(char, index + 1)
            if end < 0:
                raise NotComparable("an unterminated string")
            current.append(text[index : end + 1])
            index = end + 1
            continue
        if char in _OPENERS:
            inner, end = _group(text, index + 1, _OPENERS[char])
            opener, close = ("[", "]") if char == "{" else (char, _OPENERS[char])
            current.append(opener + inner + close)
            index = end + 1
            continue
        if char in ")]}":
            if char != closer:
                raise NotComparable("unbalanced brackets")
            items.append(_ternary("".join(current)))
            return ",".join(items), index
        if char == ",":
            items.append(_ternary("".join(current)))
            current = []
        else:
            current.append(char)
        index += 1
    if closer is not None:
        raise NotComparable("unbalanced brackets")
    items.append(_ternary("".join(current)))
    return ",".join(items), index


def _ternary(item: str) -> str:
    """`c ? a : b` (its groups already converted, so every `?` and `:` left is this
    level's) as a Python conditional; right-associative, as C++'s."""
    question = item.find("?")
    if question < 0:
        if ":" in item:
            raise NotComparable("a ':' without '?'")
        return item
    rest = item[question + 1 :]
    depth = 0
    for offset, char in enumerate(rest):
        if char == "?":
            depth += 1
        elif char == ":":
            if depth == 0:
                condition = item[:question].strip()
                then = _ternary(rest[:offset]).strip()
                otherwise = _ternary(rest[offset + 1 :]).strip()
                return f"(({then}) if ({condition}) else ({otherwise}))"
            depth -= 1
    raise NotComparable("a '?' without ':'")


# -- one canonical form for both dialects -----------------------------------------------------

# Identity on real tensors, which is all gradgen has: torch writes them for complex support.
_REAL_IDENTITIES = frozenset({"conj", "conj_physical", "resolve_conj", "resolve_neg"})


class _Canonical(ast.NodeTransformer):
    """Both dialects to one form: sizes as `.shape`, every method call as a function call
    (`x.f(a)` -> `f(x, a)`, in-place `f_` on a temporary as `f`), `_symint` names as the
    plain ones, `grads[0]` as `grad`, and what is the identity on real tensors removed
    (`.conj()`, `handle_r_to_c(t, x)`); `x.layout()` arguments are dropped (gradgen's
    tensors have one layout)."""

    def __init__(self, forward: bool = False) -> None:
        self.forward = forward

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [a for a in node.args if not _is_method_call(a, "layout")]
        self.generic_visit(node)
        # `f(a, b=b)`: torch passes b by position, as the last argument written
        by_name = [
            k for k in node.keywords if isinstance(k.value, ast.Name) and k.value.id == k.arg
        ]
        node.args += [k.value for k in by_name]
        node.keywords = [k for k in node.keywords if k not in by_name]
        func = node.func
        if isinstance(func, ast.Name):
            return _function(node, func.id)
        if not isinstance(func, ast.Attribute):
            return node
        return _method(node, func.value, func.attr, node.args)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.Call(ast.Name("pow", ast.Load()), [node.left, node.right], [])
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        # 0 and 0.0 are one number in a formula: its scalar takes the tensor's dtype
        if type(node.value) in (int, float):
            return ast.Constant(float(node.value))
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        name = _plain(node.id)
        if name == "original_self_t":  # the input's tangent, before an in-place op
            name = "self_t"
        if self.forward and name.endswith("_p"):  # a primal in a forward formula: the value
            name = name[:-2]
        return ast.Name(name, node.ctx)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "grads"
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == 0
        ):
            return ast.Name("grad", ast.Load())
        return node


# Size queries as methods, by (name, number of arguments): what they are in the one form.
_SIZE_METHODS = {
    ("sym_sizes", 0): lambda owner, args: ast.Attribute(owner, "shape", ast.Load()),
    ("sizes", 0): lambda owner, args: ast.Attribute(owner, "shape", ast.Load()),
    ("sym_size", 1): lambda owner, args: ast.Subscript(
        ast.Attribute(owner, "shape", ast.Load()), args[0], ast.Load()
    ),
    ("size", 1): lambda owner, args: ast.Subscript(
        ast.Attribute(owner, "shape", ast.Load()), args[0], ast.Load()
    ),
    ("dim", 0): lambda owner, args: ast.Attribute(owner, "ndim", ast.Load()),
    ("scalar_type", 0): lambda owner, args: ast.Attribute(owner, "dtype", ast.Load()),
    ("dtype", 0): lambda owner, args: ast.Attribute(owner, "dtype", ast.Load()),
}
_METHOD_RENAMES = {"sym_strides": "stride", "strides": "stride", "sym_numel": "numel"}


def _method(node: ast.Call, owner: ast.expr, name: str, args: list[ast.expr]) -> ast.AST:
    """`owner.name(args)` in the one form: a size query, or the call `name(owner, args)`."""
    size = _SIZE_METHODS.get((name, len(args)))
    if size is not None:
        return size(owner, args)
    if name in _REAL_IDENTITIES and not args:
        return owner
    name = _METHOD_RENAMES.get(name, name)
    if name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    call = ast.Call(ast.Name(_plain(name), ast.Load()), [owner, *args], node.keywords)
    return _function(call, call.func.id)


# Operators torch writes as functions (`div(grad, self)`), compared as the operators.
_OPERATORS = {"div": ast.Div, "mul": ast.Mult, "add": ast.Add, "sub": ast.Sub}


def _operator(op: type[ast.operator]):
    return lambda args: ast.BinOp(args[0], op(), args[1])


# Functions by (name, number of arguments): what they are in the one form.
_FUNCTIONS = {
    **{(name, 1): lambda args: args[0] for name in _REAL_IDENTITIES},
    ("handle_r_to_c", 2): lambda args: args[1],
    **{(name, 2): _operator(op) for name, op in _OPERATORS.items()},
    ("neg", 1): lambda args: ast.UnaryOp(ast.USub(), args[0]),
    # an optional: `x is not None` in Python, and its value x
    ("has_value", 1): lambda args: ast.Compare(args[0], [ast.IsNot()], [ast.Constant(None)]),
    ("value", 1): lambda args: args[0],
    # a 0-dim tensor of a number: the number
    ("scalar_tensor", 1): lambda args: args[0],
    ("scalar_tensor", 2): lambda args: args[0],
    # a Scalar as a C++ number: in Python it is the number
    ("toDouble", 1): lambda args: args[0],
    ("toFloat", 1): lambda args: args[0],
    ("to_float", 1): lambda args: args[0],  # gradgen's helper for toFloat
    # an in-place op's forward formula writes the result's tangent into self_t
    ("copy", 2): lambda args: args[1] if _is_name(args[0], "self_t") else None,
    # zeros in the result's shape and options: zeros_like(result)
    ("expand_as", 2): lambda args: _zeros_like(args[0], args[1]),
}


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _zeros_like(zeros: ast.expr, like: ast.expr) -> ast.expr | None:
    """`expand_as(zeros([], options(x)), x)` is zeros_like(x); None for anything else."""
    same = ast.dump(like)
    if (
        isinstance(zeros, ast.Call)
        and _is_name(zeros.func, "zeros")
        and len(zeros.args) == 2
        and isinstance(zeros.args[0], ast.List)
        and not zeros.args[0].elts
        and isinstance(zeros.args[1], ast.Call)
        and _is_name(zeros.args[1].func, "options")
        and [ast.dump(a) for a in zeros.args[1].args] == [same]
    ):
        return ast.Call(ast.Name("zeros_like", ast.Load()), [like], [])
    return None


# On real tensors: sgn is sign.
_RENAMES = {"sgn": "sign"}


def _function(node: ast.Call, name: str) -> ast.AST:
    """A call of a function by name, in the one form."""
    rewrite = _FUNCTIONS.get((name, len(node.args)))
    rewritten = rewrite(node.args) if rewrite is not None and not node.keywords else None
    if rewritten is not None:
        return rewritten
    if name in _RENAMES:
        node.func = ast.Name(_RENAMES[name], ast.Load())
    return node


def _is_method_call(node: ast.AST, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and not node.args
    )


def _plain(name: str) -> str:
    return name.removesuffix("_symint")


def canonical(python: str, forward: bool = False) -> str:
    """A Python formula in the one form both dialects are compared in (`forward`: a
    forward-mode formula, whose primals `x_p` are read as `x`)."""
    try:
        tree = ast.parse(python.strip(), mode="eval")
    except SyntaxError as error:
        raise NotComparable(f"not an expression after normalisation ({error.msg})") from None
    return ast.unparse(ast.fix_missing_locations(_Canonical(forward).visit(tree)))


def normalise(formula: str, dialect: str, forward: bool = False) -> str:
    """A formula of torch's file (dialect "torch") or of gradgen's ("gradgen"), in the
    canonical form; raises NotComparable."""
    return canonical(cpp_to_python(formula) if dialect == "torch" else formula, forward)


def auto_element_wise(backward: str, dialect: str, input_name: str) -> str:
    """torchgen's auto_element_wise: the one input's backward formula with grad replaced by
    its tangent (and its tensors by their primals, which forward forms read as values)."""
    tree = ast.parse(normalise(backward, dialect), mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "grad":
            node.id = f"{input_name}_t"
    return ast.unparse(tree)


# -- families ---------------------------------------------------------------------------------

# Left out on purpose (issue 27), each with its reason; the first matching pattern wins.
LEFT_OUT: tuple[tuple[str, str, str], ...] = (
    (
        "fused attention",
        r"attention|^_flash_|^_efficient_",
        "fused attention kernels: scaled_dot_product_attention is composed of ops in gradgen",
    ),
    (
        "backend",
        r"cudnn|miopen|mkldnn|_mps|^mps_|^_lstm_mps|lstm_mps|nnpack|fbgemm|"
        r"overrideable|^_pin_memory$",
        "a backend-specific kernel (cudnn, miopen, mkldnn, mps, nnpack, fbgemm): gradgen has "
        "one CPU backend",
    ),
    (
        "quantization",
        r"quantize|^_fused_moving_avg_obs|^q_|^int_repr$",
        "quantization and fake-quantize: gradgen has no quantized dtypes",
    ),
    (
        "sparse and nested",
        r"sparse|nested|jagged|^_?values$|^_?indices$|^_coalesce$|"
        r"^crow_indices$|^col_indices$|^ccol_indices$|^row_indices$|"
        r"^_to_dense$|^to_padded_tensor$|^_sparse|^sspaddmm$|"
        r"^_spdiags$|^_mkldnn",
        "a sparse or nested layout: gradgen has dense strided tensors only",
    ),
    (
        "_foreach",
        r"^_foreach_",
        "_foreach_* ops: a fused loop over lists of tensors, "
        "which gradgen runs as one op per tensor",
    ),
    ("test", r"^_test_", "torch's own tests of its code generator"),
)

# In scope; absent entries are grouped by these (informative), the first match wins.
FAMILIES: tuple[tuple[str, str], ...] = (
    ("fft", r"^_?fft"),
    (
        "linalg",
        r"linalg|cholesky|^lu_|^_?lu$|^det$|slogdet|logdet|^qr$|^svd|^eig|lstsq|"
        r"pinv|triangular|matrix_exp|^inverse$|^geqrf$|^ormqr$|householder|"
        r"^cross$|^addmv$|^addbmm$|^baddbmm$|^addr$|^vdot$|^dot$|^matmul$|^linear",
    ),
    (
        "random",
        r"^bernoulli|^normal|^uniform_|^random_|^exponential_|^geometric_|"
        r"^log_normal_|^cauchy_|^multinomial$|^poisson$|^_standard_gamma|"
        r"^rrelu_with_noise|^_fused_dropout$",
    ),
    (
        "complex",
        r"^view_as_(real|complex)$|^complex$|^polar$|^angle$|^_?conj|^sgn$|"
        r"^real$|^imag$|^_neg_view$",
    ),
    (
        "nn",
        r"conv|pool|upsample|grid_sampler|affine_grid|pixel_|channel_shuffle|im2col|"
        r"col2im|unpool|embedding|ctc_loss|_loss|^_?pdist|^_?cdist|_dist$|^_euclidean|"
        r"shrink|threshold|norm|^_trilinear$|^celu|^glu|^elu|hardswish|^log_sigmoid|"
        r"^_?prelu|softmax|^one_hot$|^_weight_norm|^_thnn|^_pack_padded|segment_reduce|"
        r"^huber",
    ),
    (
        "reductions, indexing and shape",
        r"^median$|^nanmedian$|^mode$|^kthvalue$|^cummax$|^cummin$|^logcumsumexp$|^nansum$|"
        r"^aminmax$|^count_nonzero$|^dist$|^trace$|^histc$|^_?unique|^nonzero$|^is(nan)?|"
        r"^_is_|index|scatter|^put$|^take$|^unfold|^diag|^block_diag$|^rot90$|^renorm$|"
        r"^masked|^as_strided|^narrow|^chunk$|split|^slice|^select|^unsqueeze_$|^t_$|"
        r"^transpose_$|_copy$|^_reshape|^_lazy_clone$|^lift|^_efficientzerotensor$|"
        r"^_new_zeros|^hash_tensor$|^_unsafe",
    ),
    ("comparisons in place", r"^(eq|ne|lt|le|gt|ge)_$"),
    ("elementwise", r".*"),
)


def family_of(base: str) -> tuple[str, str | None]:
    """(family, the reason it is left out, or None when it is in scope)."""
    for family, pattern, reason in LEFT_OUT:
        if re.search(pattern, base):
            return family, reason
    for family, pattern in FAMILIES:
        if re.search(pattern, base):
            return family, None
    raise AssertionError("the last family matches everything")


# -- comparing --------------------------------------------------------------------------------


@dataclass
class Formula:
    """One formula key of a torch entry, beside gradgen's."""

    key: str
    status: str  # same, differs, not comparable, missing
    torch: str
    gradgen: str | None = None
    why: str = ""  # for differs and not comparable: the normalised forms, or the reason


@dataclass
class Entry:
    """One entry of torch's derivatives.yaml and where gradgen stands on it."""

    name: str  # name.overload
    base: str
    present: bool
    family: str
    left_out: str | None = None  # the reason, for a family gradgen leaves out
    status: str = ""  # present: same, differs, not comparable, missing; absent: ""
    schema_same: bool | None = None
    note: str | None = None  # gradgen's `# differs from torch:` comment
    formulas: list[Formula] = field(default_factory=list)


def _keys(names: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in names.split(","))


def _torch_formulas(entry: dict) -> dict[tuple[str, ...], str]:
    """An entry's formula keys (the Default dispatch's, when it has several)."""
    body = entry
    if isinstance(entry.get("dispatch"), dict):
        body = entry["dispatch"].get("Default", {})
    return {_keys(k): str(v) for k, v in body.items() if k not in TORCH_ENTRY_KEYS}


def _gradgen_formulas(entry: dict) -> dict[tuple[str, ...], str]:
    return {_keys(k): str(v) for k, v in entry.items() if k not in GRADGEN_ENTRY_KEYS}


def _return_names(schema: str) -> list[str]:
    """The outputs' names of a schema, `result` (one) or `result0, result1...` unnamed."""
    returns = schema.split("->", 1)[-1].strip().strip("()")
    parts = [p.split() for p in returns.split(",") if p.strip()]
    if len(parts) == 1:
        return [parts[0][1] if len(parts[0]) > 1 else "result"]
    return [p[1] if len(p) > 1 else f"result{i}" for i, p in enumerate(parts)]


def _expand(
    formula: str,
    dialect: str,
    formulas: dict[tuple[str, ...], str],
    forward_keys: set[tuple[str, ...]],
) -> str:
    """A forward formula as written, or auto_element_wise expanded from the entry's one
    backward formula (in the canonical form) when it has exactly one, for one input."""
    if formula.strip() != "auto_element_wise":
        return normalise(formula, dialect, forward=True)
    backward = [
        (k, v)
        for k, v in formulas.items()
        if k not in forward_keys and v.strip() != "non_differentiable"
    ]
    if len(backward) != 1 or len(backward[0][0]) != 1:
        return "auto_element_wise"
    (name,), text = backward[0]
    return normalise(auto_element_wise(text, dialect, name), "gradgen", forward=True)


def compare_formula(
    key: str,
    torch: str,
    gradgen: str | None,
    forward: bool = False,
    context: tuple[dict, dict, set] | None = None,
) -> Formula:
    """One formula of torch's beside gradgen's for the same key (`forward`: a forward-mode
    formula; `context`, the entries' formulas and forward keys, expands auto_element_wise)."""
    if gradgen is None:
        return Formula(key, "missing", torch)
    keyword = _keyword_formula(key, torch, gradgen)
    if keyword is not None:
        return keyword
    theirs_all, ours_all, forward_keys = context or ({}, {}, set())
    try:
        ours = (
            _expand(gradgen, "gradgen", ours_all, forward_keys)
            if forward
            else normalise(gradgen, "gradgen")
        )
    except NotComparable as error:
        return Formula(key, "not comparable", torch, gradgen, f"gradgen's: {error}")
    try:
        theirs = (
            _expand(torch, "torch", theirs_all, forward_keys)
            if forward
            else normalise(torch, "torch")
        )
    except NotComparable as error:
        return Formula(key, "not comparable", torch, gradgen, f"torch's: {error}")
    if ours == theirs:
        return Formula(key, "same", torch, gradgen)
    return Formula(key, "differs", torch, gradgen, f"torch: {theirs}  gradgen: {ours}")


# Formulas that are a keyword, not an expression: compared as the keyword.
_KEYWORDS = ("non_differentiable", "not_implemented")


def _keyword_formula(key: str, torch: str, gradgen: str) -> Formula | None:
    """non_differentiable or not_implemented(...) on either side (None: on neither)."""
    for keyword in _KEYWORDS:
        sides = (torch.strip().startswith(keyword), gradgen.strip().startswith(keyword))
        if any(sides):
            same = all(sides)
            why = "" if same else f"{keyword} on one side only"
            return Formula(key, "same" if same else "differs", torch, gradgen, why)
    return None


def _schema_text(name: str) -> str:
    return " ".join(name.split())


def _compare_formulas(
    theirs: dict[tuple[str, ...], str], mine: dict[tuple[str, ...], str], outputs: set[str]
) -> list[Formula]:
    """Each of torch's formula keys beside gradgen's (`outputs`: the op's output names)."""
    forward_keys = {
        k
        for k in (*theirs, *mine)
        if set(k) <= outputs or all(re.fullmatch(r"result\d*", n) for n in k)
    }
    covered = {n for k in mine for n in k}
    formulas = []
    for key, formula in theirs.items():
        gradgen = mine.get(key)
        if gradgen is None and set(key) <= covered:
            grouped = " / ".join(
                f"{', '.join(k)}: {v}" for k, v in mine.items() if set(k) & set(key)
            )
            formulas.append(
                Formula(
                    ", ".join(key),
                    "differs",
                    formula,
                    grouped,
                    "the inputs are grouped in other keys",
                )
            )
            continue
        formulas.append(
            compare_formula(
                ", ".join(key), formula, gradgen, key in forward_keys, (theirs, mine, forward_keys)
            )
        )
    return formulas


def compare_entry(torch_entry: dict, ours: dict | None, note: str | None) -> Entry:
    """One torch entry beside gradgen's entry of the same name.overload (None: absent)."""
    name = torch_entry["name"].split("(", 1)[0].strip()
    base = name.split(".", 1)[0]
    family, left_out = family_of(base)
    if ours is None:
        return Entry(name, base, False, family, left_out)
    formulas = _compare_formulas(
        _torch_formulas(torch_entry),
        _gradgen_formulas(ours),
        set(_return_names(torch_entry["name"])) | set(_return_names(ours["name"])),
    )
    statuses = {f.status for f in formulas}
    status = next((s for s in ("differs", "not comparable", "missing") if s in statuses), "same")
    return Entry(
        name,
        base,
        True,
        family,
        left_out,
        status,
        _schema_text(torch_entry["name"]) == _schema_text(ours["name"]),
        note,
        formulas,
    )


@dataclass
class Report:
    entries: list[Entry]
    gradgen_only: list[str]  # gradgen's entries that torch's file does not have

    def summary(self) -> dict[str, int]:
        bases = {e.base for e in self.entries}
        present = {e.base for e in self.entries if e.present}
        left_out = {e.base for e in self.entries if e.left_out} - present
        formulas = Counter(f.status for e in self.entries for f in e.formulas)
        return {
            "torch_entries": len(self.entries),
            "entries_present": sum(e.present for e in self.entries),
            "base_names": len(bases),
            "base_names_in_scope": len(bases - left_out),
            "base_names_present": len(present),
            "formulas_same": formulas["same"],
            "formulas_differ": formulas["differs"],
            "formulas_differ_without_note": sum(
                f.status == "differs" for e in self.entries if not e.note for f in e.formulas
            ),
            "formulas_not_comparable": formulas["not comparable"],
            "formulas_missing": formulas["missing"],
            "gradgen_only": len(self.gradgen_only),
        }

    def summary_line(self) -> str:
        s = self.summary()
        return (
            f"{s['base_names_present']} of torch's base op names present "
            f"/ {s['base_names_in_scope']} in scope / {s['base_names']} in all "
            f"({s['entries_present']} of {s['torch_entries']} entries); formulas: "
            f"{s['formulas_same']} same, {s['formulas_differ']} differ "
            f"({s['formulas_differ_without_note']} without a note), "
            f"{s['formulas_not_comparable']} not comparable, "
            f"{s['formulas_missing']} missing in gradgen"
        )

    def stale_notes(self) -> list[Entry]:
        """Entries with a `# differs from torch:` note whose formulas no longer differ."""
        return [e for e in self.entries if e.note and e.status != "differs"]

    def unexplained(self) -> list[Entry]:
        """Present entries with a formula that differs and no `# differs from torch:`."""
        return [e for e in self.entries if e.status == "differs" and not e.note]


def compare(torch_text: str, gradgen_text: str) -> Report:
    """Pure: both specs' texts to the report."""
    theirs = yaml.load(torch_text, Loader=_LOADER)
    ours_list = yaml.load(gradgen_text, Loader=_LOADER)
    ours = {e["name"].split("(", 1)[0].strip(): e for e in ours_list}
    notes = entry_notes(gradgen_text)
    torch_names = set()
    entries = []
    for entry in theirs:
        name = entry["name"].split("(", 1)[0].strip()
        torch_names.add(name)
        entries.append(compare_entry(entry, ours.get(name), notes.get(name)))
    return Report(entries, sorted(name for name in set(ours) - torch_names
                                  if not _torch_lacks(ours[name])))


def _torch_lacks(entry: dict) -> bool:
    """An op torch does not have at all (every sample `no_torch`): a prototyper's own op,
    which this page, a comparison with torch, leaves out (adding one keeps it current)."""
    samples = entry.get("samples") or []
    return bool(samples) and all(isinstance(s, dict) and s.get("no_torch") for s in samples)


# -- output -----------------------------------------------------------------------------------


def as_json(report: Report) -> str:
    return (
        json.dumps(
            {
                "summary": report.summary(),
                "entries": [asdict(e) for e in report.entries],
                "gradgen_only": report.gradgen_only,
            },
            indent=1,
        )
        + "\n"
    )


def as_text(report: Report) -> str:
    lines = []
    for e in report.entries:
        if not e.present:
            where = f"left out: {e.left_out}" if e.left_out else "in scope"
            lines.append(f"absent   {e.name}  [{e.family}; {where}]")
            continue
        schema = "" if e.schema_same else "  (schema differs)"
        lines.append(f"present  {e.name}: {e.status}{schema}")
        for f in e.formulas:
            if f.status != "same":
                lines.append(f"    {f.key}: {f.status}" + (f"  {f.why}" if f.why else ""))
        if e.note:
            lines.append(f"    note: {e.note}")
    if report.gradgen_only:
        lines.append(
            "gradgen only (not in torch's derivatives.yaml): " + ", ".join(report.gradgen_only)
        )
    lines.append(report.summary_line())
    return "\n".join(lines) + "\n"


def _cell(text: str | None) -> str:
    return "" if text is None else "`" + " ".join(text.split()).replace("|", "\\|") + "`"


def _absent_by_family(report: Report) -> list[str]:
    """The page's section of absent entries, the families in scope first."""
    by_family: dict[str, list[Entry]] = {}
    for e in report.entries:
        if not e.present:
            by_family.setdefault(e.family, []).append(e)
    out = ["## Absent entries by family", ""]
    for family, entries in sorted(
        by_family.items(), key=lambda item: item[1][0].left_out is not None
    ):
        reason = entries[0].left_out
        label = f"left out: {reason}" if reason else "in scope"
        out += [
            f"### {family} ({len(entries)}; {label})",
            "",
            ", ".join(e.name for e in entries),
            "",
        ]
    return out


def as_markdown(report: Report) -> str:
    """docs/compare-torch.md."""
    s = report.summary()
    out = [
        "# gradgen beside torch's derivatives.yaml",
        "",
        "Generated by `python -m codegen compare-torch --write-docs` from gradgen's",
        "`derivatives.yaml` and the one torch ships",
        "(`torchgen/packaged/autograd/derivatives.yaml`); do not edit by hand.",
        "`tests/test_compare_torch.py` checks that it is current.",
        "",
        f"**{report.summary_line()}.**",
        "",
        "## How formulas are compared",
        "",
        "Both dialects are brought to one Python form before they are compared: torch's C++",
        "loses its namespaces (`at::`, `std::`, `c10::`), `{a, b}` lists become `[a, b]`,",
        "`c ? a : b` becomes `a if c else b`, `!`, `&&`, `||`, `true`, `false` and `nullopt`",
        "become Python's; in both, sizes are `.shape` (`.sym_sizes()`, `.sizes()`),",
        "`.sym_size(d)` is `.shape[d]`, `.dim()` is `.ndim`, `.scalar_type()` is `.dtype`,",
        "`.sym_strides()` is `.stride()`, `.sym_numel()` is `.numel()`, `_symint` names are the",
        "plain ones, a method call `x.f(a)` is the call `f(x, a)` (an in-place `f_` on a",
        "temporary is `f`), `grads[0]` is `grad`, and what is the identity on real tensors is",
        "dropped (`.conj()`, `conj_physical`, `handle_r_to_c(t, x)`, a `x.layout()` argument:",
        "gradgen has real dtypes and one layout). A formula is **same** when the two forms are",
        "equal, **differs** when they are not, **not comparable** when torch's C++ has no Python",
        "form here (a lambda, a template, statements), **missing** when gradgen has no formula",
        "for the key (often a forward-mode `result:`). Where an entry differs, gradgen's spec",
        "says why in a `# differs from torch: ...` comment inside the entry.",
        "",
        "## Summary",
        "",
        "| count | value |",
        "|---|---|",
        *(f"| {k.replace('_', ' ')} | {v} |" for k, v in s.items()),
        "",
        "## Present entries that are not the same",
        "",
        "| entry | status | key | formula status | torch | gradgen | note |",
        "|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| {e.name} | {e.status} | {f.key} | {f.status} "
        f"| {_cell(f.torch)} | {_cell(f.gradgen)} | {e.note or ''} |"
        for e in report.entries
        if e.present and e.status != "same"
        for f in e.formulas
        if f.status != "same"
    ]
    same = [e.name for e in report.entries if e.present and e.status == "same"]
    out += [
        "",
        f"## Present entries whose formulas are all the same ({len(same)})",
        "",
        ", ".join(same) or "none",
        "",
    ]
    out += _absent_by_family(report)
    out += [
        "## gradgen only",
        "",
        "gradgen's entries that torch's derivatives.yaml does not have (ops torch",
        "differentiates in its own way, or writes by hand; an op torch lacks altogether,",
        "every sample marked `no_torch`, is not listed):",
        "",
        ", ".join(report.gradgen_only) or "none",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codegen compare-torch",
        description="gradgen's spec beside the derivatives.yaml torch ships, entry by entry.",
    )
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml")
    parser.add_argument(
        "--torch-spec",
        type=Path,
        default=None,
        help="torch's derivatives.yaml (default: the installed torch's)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument(
        "--write-docs", action="store_true", help=f"write {DOCS_PAGE.relative_to(ROOT)}"
    )
    args = parser.parse_args(argv)
    try:
        torch_path = args.torch_spec or torch_spec_path()
        report = compare(
            torch_path.read_text(encoding="utf-8"), args.spec.read_text(encoding="utf-8")
        )
    except (OSError, yaml.YAMLError) as error:
        print(f"compare-torch: {error}", file=sys.stderr)
        return 2
    if args.write_docs:
        DOCS_PAGE.write_text(as_markdown(report), encoding="utf-8")
        print(f"wrote {DOCS_PAGE.relative_to(ROOT)}: {report.summary_line()}")
        return 0
    sys.stdout.write(as_json(report) if args.json else as_text(report))
    return 0
