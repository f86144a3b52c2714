"""A corpus of malformed specs, one per mistake: `python -m codegen` must exit 2, print
`<file>:LINE:COL: <entry>: <message>` pointing at the offending token, and leave the output
directory exactly as it was."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A valid entry first, so that line numbers are not trivially 1. Cases start at line 7.
PRELUDE = """\
# a valid entry, then the broken one
- name: mul.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
  result: other_t * self_p + self_t * other_p

"""
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> " \
    "(Tensor values, Tensor indices)\n"


@dataclass(frozen=True)
class Case:
    id: str
    spec: str  # appended to PRELUDE unless `alone`
    line: int
    column: int
    at: str  # the text LINE:COL points at, as a readable cross-check
    entry: str
    message: str  # a fragment of the message
    alone: bool = False


CASES = [
    Case("unknown-name", "- name: relu(Tensor self) -> Tensor\n"
         "  self: maybe_multiply(grad, reslt)\n",
         8, 30, "reslt", "relu", "unknown name 'reslt' (did you mean 'result'?)"),
    Case("missing-formula", "- name: atan2(Tensor self, Tensor other) -> Tensor\n"
         "  self: grad * other\n",
         7, 35, "other)", "atan2",
         "Tensor input 'other' has no formula: give it one, or say `other: non_differentiable`"),
    Case("key-names-nothing", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  other: grad\n",
         9, 3, "other", "relu", "unknown key 'other'"),
    Case("unknown-key-typo", "- name: relu(Tensor self) -> Tensor\n"
         "  slef: grad\n",
         8, 3, "slef", "relu", "unknown key 'slef': did you mean 'self'?"),
    Case("unknown-entry-key-typo", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  sample: []\n",
         9, 3, "sample", "relu", "did you mean 'samples'?"),
    Case("node-name-malformed", "- name: relu(Tensor self) -> Tensor\n"
         "  node: Copy Backwards\n  self: grad\n",
         8, 9, "Copy Backwards", "relu", "node must be a class name"),
    Case("fused-key-names-nothing", "- name: relu(Tensor self) -> Tensor\n"
         "  self, other: grad\n",
         8, 9, "other", "relu", "unknown key 'other'"),
    Case("key-not-a-tensor", MAX_DIM + "  self: grads[0]\n  dim: grad\n",
         9, 3, "dim", "max.dim", "'dim' is a int, not a Tensor"),
    Case("grad-and-grads", MAX_DIM + "  self: grads[0] + grad\n",
         8, 20, "grad", "max.dim", "either grad or grads[i]"),
    Case("grads-out-of-range", MAX_DIM + "  self: grads[0] + grads[2]\n",
         8, 20, "grads[2]", "max.dim", "grads[2] is out of range: the op has 2 output(s)"),
    Case("auto-element-wise-two-inputs", "- name: atan2(Tensor self, Tensor other) -> Tensor\n"
         "  self: grad * other\n  other: grad * self\n  result: auto_element_wise\n",
         10, 11, "auto_element_wise", "atan2",
         "auto_element_wise needs exactly one differentiable input (this op has 2"),
    Case("output-differentiability-length", MAX_DIM + "  output_differentiability: [True]\n"
         "  self: grads[0]\n",
         8, 29, "[True]", "max.dim", "output_differentiability has 1 value(s) but the op has 2"),
    Case("duplicate-schema", "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
         "  self: grad\n  other: grad\n",
         7, 9, "mul.Tensor", "mul.Tensor", "duplicate schema: mul.Tensor is already declared "
         "at line 2"),
    Case("malformed-schema", "- name: relu(Tensor self) -> Tensr\n  self: grad\n",
         7, 30, "Tensr", "<entry 2>", "malformed schema: unknown type 'Tensr' (did you mean "
         "'Tensor'?)"),
    Case("malformed-schema-quoted", "- name: 'relu(Tensor self, int x=) -> Tensor'\n"
         "  self: grad\n",
         7, 34, ") ->", "<entry 2>", "'x' has an empty default"),
    Case("import", "- name: relu(Tensor self) -> Tensor\n  self: import os\n",
         8, 9, "import", "relu", "import is not allowed in a formula"),
    Case("dunder-import", "- name: relu(Tensor self) -> Tensor\n"
         "  self: __import__('os').getcwd()\n",
         8, 9, "__import__", "relu", "dunder name '__import__' is not allowed"),
    Case("lambda", "- name: relu(Tensor self) -> Tensor\n"
         "  self: \"maybe_multiply(grad, (lambda g: g)(1))\"\n",
         8, 32, "lambda", "relu", "a lambda is not allowed in a formula"),
    Case("comprehension", "- name: relu(Tensor self) -> Tensor\n"
         "  self: maybe_multiply(grad, [g for g in grad])\n",
         8, 30, "[g for", "relu", "a comprehension is not allowed in a formula"),
    Case("walrus", "- name: relu(Tensor self) -> Tensor\n  self: (g := grad) * 2\n",
         8, 10, "g :=", "relu", "an assignment is not allowed in a formula"),
    Case("assignment", "- name: relu(Tensor self) -> Tensor\n  self: g = grad\n",
         8, 11, "= grad", "relu", "an assignment is not allowed in a formula"),
    Case("attribute", "- name: relu(Tensor self) -> Tensor\n  self: grad * self.data\n",
         8, 21, "data", "relu", "attribute 'data' is not allowed"),
    Case("dunder-name", "- name: relu(Tensor self) -> Tensor\n  self: grad * __builtins__\n",
         8, 16, "__builtins__", "relu", "dunder name '__builtins__' is not allowed"),
    Case("dunder-attribute", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad.__class__(grad)\n",
         8, 14, "__class__", "relu", "dunder attribute '__class__' is not allowed"),
    Case("dunder-attribute-read", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad * self.__dict__\n",
         8, 21, "__dict__", "relu", "dunder attribute '__dict__' is not allowed"),
    Case("unknown-function", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad * fancy_helper(self)\n",
         8, 16, "fancy_helper", "relu", "unknown function 'fancy_helper'"),
    Case("unknown-function-did-you-mean", "- name: relu(Tensor self) -> Tensor\n"
         "  self: maybe_multipy(grad, 2)\n",
         8, 9, "maybe_multipy", "relu",
         "unknown function 'maybe_multipy' (did you mean 'maybe_multiply'?)"),
    Case("unknown-method", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad.frobnicate()\n",
         8, 14, "frobnicate", "relu", "unknown Tensor method 'frobnicate'"),
    # An unclosed bracket or quote: where it opens, not where the parser gave up.
    Case("yaml-syntax", "- name: relu(Tensor self) -> Tensor\n  self: [grad\n",
         8, 9, "[grad", "<yaml>", "YAML syntax error in the '[' opened here: expected ',' or "
         "']', but got '<stream end>' (at line 9, column 1)"),
    Case("yaml-unclosed-bracket-before-a-key", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  output_differentiability: [True\n  samples: []\n",
         9, 29, "[True", "<yaml>", "YAML syntax error in the '[' opened here: expected ',' or "
         "']', but got ':' (at line 10, column 10)"),
    Case("yaml-unclosed-bracket-in-a-sample", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  samples:\n    - {self: [3, 4}\n",
         10, 14, "[3, 4}", "<yaml>", "in the '[' opened here: expected ',' or ']', but got '}'"),
    Case("yaml-unclosed-brace", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  samples:\n    - {self: [3, 4]\n  variants: function\n",
         10, 7, "{self", "<yaml>", "in the '{' opened here"),
    Case("yaml-unclosed-quote", "- name: relu(Tensor self) -> Tensor\n  self: \"grad\n\n",
         8, 9, "\"grad", "<yaml>", "YAML syntax error in the quoted text that starts here, "
         "never closed: found unexpected end of stream"),
    Case("yaml-colon-in-plain-formula", "- name: relu(Tensor self) -> Tensor\n"
         "  self: (lambda g: g)(grad)\n",
         8, 18, ": g)", "<yaml>", "YAML syntax error: mapping values are not allowed here"),
    Case("python-tag", "- name: relu(Tensor self) -> Tensor\n"
         "  self: !!python/object/apply:os.system [\"echo pwned\"]\n",
         8, 9, "!!python", "<entry 2>", "tag 'tag:yaml.org,2002:python/object/apply:os.system' "
         "is not allowed"),
    Case("python-tag-root", "!!python/object/apply:os.system [\"echo pwned\"]\n",
         1, 1, "!!python", "<spec>", "is not allowed", alone=True),
    Case("yaml-alias", "- name: relu(Tensor self) -> Tensor\n  self: grad\n"
         "  samples: &s [{self: [3]}]\n- name: clone(Tensor self) -> Tensor\n  self: grad\n"
         "  samples: *s\n",
         12, 12, "*s", "<yaml>", "YAML aliases (*name) are not allowed"),
    Case("empty-file", "", 1, 1, "", "<spec>", "the spec is empty", alone=True),
    Case("comments-only", "# nothing here\n", 1, 1, "#", "<spec>", "the spec is empty",
         alone=True),
    Case("not-a-list", "name: relu(Tensor self) -> Tensor\n", 1, 1, "name", "<spec>",
         "the spec must be a list of entries", alone=True),
    Case("duplicate-key", "- name: relu(Tensor self) -> Tensor\n  self: grad\n  self: grad\n",
         9, 3, "self", "<entry 2>", "key 'self' appears twice"),
    Case("formula-not-a-string", "- name: relu(Tensor self) -> Tensor\n  self: [grad]\n",
         8, 9, "[grad]", "relu", "the formula for 'self' must be a string"),
    Case("not-implemented-needs-a-string", "- name: relu(Tensor self) -> Tensor\n"
         "  self: not_implemented(42)\n",
         8, 9, "not_implemented", "relu", "not_implemented takes one string literal"),
    Case("forward-unknown-name", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  result: self_q * 2\n",
         9, 11, "self_q", "relu", "unknown name 'self_q' (did you mean 'self_t'?)"),
    Case("forward-bare-input", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  result: self_t * self\n",
         9, 20, "self", "relu", "'self' is ambiguous in a forward formula: write self_p or "
         "self_t"),
    Case("forward-uses-grad", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grad\n  result: grad\n",
         9, 11, "grad", "relu", "'grad' is a backward name"),
    Case("forward-tangent-of-non-differentiable-input",
         "- name: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor\n"
         "  condition: non_differentiable\n  self: grad\n  other: grad\n"
         "  result: where(condition_p, self_t, other_t) + condition_t\n",
         11, 49, "condition_t", "where.self",
         "'condition_t' names no tangent: 'condition' is not a differentiable input"),
    Case("forward-primal-of-a-scalar", "- name: mul.Scalar(Tensor self, Scalar other) -> Tensor\n"
         "  self: grad * other\n  result: self_t * other_p\n",
         9, 20, "other_p", "mul.Scalar",
         "'other' is a Scalar, not a Tensor: write other, not other_p"),
    Case("forward-for-a-non-differentiable-output", MAX_DIM
         + "  output_differentiability: [True, False]\n"
         "  self: grad\n  values: self_t\n  indices: self_t\n",
         11, 3, "indices", "max.dim", "output 'indices' is not differentiable"),
    Case("forward-missing-for-one-output",
         "- name: f(Tensor self) -> (Tensor a, Tensor b)\n"
         "  self: grads[0] + grads[1]\n  a: self_t\n",
         7, 9, "f(Tensor", "f", "output 'b' has no forward formula, though 'a' has one"),
    Case("forward-two-formulas-for-one-output",
         "- name: f(Tensor self) -> (Tensor a, Tensor b)\n"
         "  self: grads[0] + grads[1]\n  a: self_t\n  b, a: self_t, self_t\n",
         10, 6, "a: self_t, self_t", "f", "output 'a' has two forward formulas"),
    Case("auto-element-wise-from-grads", "- name: relu(Tensor self) -> Tensor\n"
         "  self: grads[0]\n  result: auto_element_wise\n",
         9, 11, "auto_element_wise", "relu",
         "auto_element_wise needs a backward formula for 'self' that reads grad"),
    Case("auto-element-wise-gives-a-bad-formula", "- name: cat(Tensor[] tensors) -> Tensor\n"
         "  tensors: cat_tensors_backward(grad, to_args_sizes(tensors), 0)\n"
         "  result: auto_element_wise\n",
         9, 11, "auto_element_wise", "cat", "auto_element_wise gives"),
    Case("error-on-a-folded-line", "- name: relu(Tensor self) -> Tensor\n"
         "  self: maybe_multiply(grad,\n    reslt)\n",
         9, 5, "reslt", "relu", "unknown name 'reslt'"),
    Case("error-in-a-block-scalar", "- name: relu(Tensor self) -> Tensor\n"
         "  self: >-\n    maybe_multiply(grad,\n      reslt)\n",
         10, 7, "reslt", "relu", "unknown name 'reslt'"),
    Case("sample-key-typo", "- name: relu(Tensor self) -> Tensor\n  self: grad\n"
         "  samples:\n    - {slef: [3]}\n",
         10, 8, "slef", "relu", "sample key 'slef' is neither an argument nor one of kink"),
    # Names that would replace the generated code's own, or are not Python names at all.
    *(Case(f"op-named-{name}", f"- name: {name}(Tensor self) -> Tensor\n  self: grad\n",
           7, 9, name, "<entry 2>", f"operator name {name!r} is a Python keyword")
      for name in ("class", "import", "lambda", "None")),
    *(Case(f"op-named-{name}", f"- name: {name}(Tensor self) -> Tensor\n  self: grad\n",
           7, 9, name, name, f"an op may not be named {name!r}: generated code uses that name")
      for name in ("kernels", "recording", "map", "SavedVariable", "__init__")),
    *(Case(f"argument-named-{name}", f"- name: relu(Tensor self, Tensor {name}) -> Tensor\n"
           f"  self: grad\n  {name}: grad\n",
           7, 34, name, "relu", f"{name!r} may not name an argument or output")
      for name in ("grad_fn", "grad_inputs", "kernels", "map", "grad")),
    Case("argument-named-self_", "- name: relu(Tensor self, Tensor self_) -> Tensor\n"
         "  self: grad\n  self_: grad\n",
         7, 34, "self_", "relu", "may not begin or end with '_'"),
    Case("argument-named-like-a-tangent", "- name: relu(Tensor self, Tensor self_p) -> Tensor\n"
         "  self: grad\n  self_p: grad\n",
         7, 34, "self_p", "relu", "'self_p' is the name generated code gives to something of "
         "'self'"),
    Case("return-named-underscore", "- name: relu(Tensor self) -> (Tensor _a, Tensor _b)\n"
         "  self: grads[0]\n",
         7, 38, "_a", "relu", "may not begin or end with '_'"),
    Case("node-name-newline", "- name: relu(Tensor self) -> Tensor\n"
         "  node: \"FooNode\\n\"\n  self: grad\n",
         8, 10, "FooNode", "relu", "node must be a class name"),
    Case("node-name-generated", "- name: relu(Tensor self) -> Tensor\n"
         "  node: SavedVariable\n  self: grad\n",
         8, 9, "SavedVariable", "relu", "a node may not be named 'SavedVariable'"),
    # What used to end in a traceback.
    Case("yaml-too-deep", "- name: relu(Tensor self) -> Tensor\n  self: grad\n"
         "  samples: " + "[" * 1000 + "]" * 1000 + "\n",
         9, 42, "[", "<yaml>", "YAML nested more than 32 levels deep"),
    Case("formula-400-terms", "- name: relu(Tensor self) -> Tensor\n  self: "
         + " + ".join(["grad"] * 400) + "\n",
         8, 9, "grad + grad", "relu", "the formula nests more than 100 levels deep"),
    Case("formula-500-minus", "- name: relu(Tensor self) -> Tensor\n  self: " + "-" * 500
         + "grad\n",
         8, 109, "-", "relu", "the formula nests more than 100 levels deep"),
    Case("nul-in-formula", "- name: relu(Tensor self) -> Tensor\n  self: \"grad\\0\"\n",
         8, 14, "\\0", "<entry 2>", "character '\\x00' is not allowed in the spec"),
    Case("lone-surrogate", "- name: relu(Tensor self) -> Tensor\n"
         "  self: \"not_implemented('\\ud800')\"\n",
         8, 27, "\\ud800", "<entry 2>", "character '\\ud800' is not allowed in the spec"),
    # Calls that fit no overload, found at generation instead of at run time.
    Case("method-arity", "- name: pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor\n"
         "  self: grad\n- name: relu(Tensor self) -> Tensor\n  self: grad * self.pow()\n",
         10, 16, "self.pow()", "relu", ".pow() called with 0 positional argument(s): "
         "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor needs 'exponent'"),
    Case("helper-arity", "- name: relu(Tensor self) -> Tensor\n"
         "  self: pow_backward(grad, self)\n",
         8, 9, "pow_backward", "relu", "pow_backward() called with 2 positional argument(s): "
         "pow_backward(grad: Any, self: Any, exponent: Any) needs 'exponent'"),
    Case("unknown-keyword", "- name: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim="
         "False) -> Tensor\n  self: grad\n- name: relu(Tensor self) -> Tensor\n"
         "  self: grad.sum(dims=0)\n",
         10, 9, "grad.sum", "relu", "has no argument 'dims'"),
    Case("builtin-shadowed", "- name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) "
         "-> Tensor\n  self: grad * max(1, 2)\n",
         8, 16, "max(1", "clamp", "'max' names an argument of this op here"),
    # (a name no user would give an op: a user's own op must not collide with a fixture)
    Case("missing-kernel", "- name: zz_fixture_cube(Tensor self) -> Tensor\n"
         "  self: grad * 3 * self\n", 7, 9, "zz_fixture_cube", "zz_fixture_cube",
         "no kernel 'zz_fixture_cube' in runtime/kernels.py"),
    # `forward:`, the op's result over its arguments: checked as a formula is.
    Case("forward-formula-reads-grad", "- name: relu(Tensor self) -> Tensor\n"
         "  forward: grad * self\n  self: grad\n",
         8, 12, "grad", "relu", "'grad' is a backward name; a forward: formula computes"),
    Case("forward-formula-reads-result", "- name: relu(Tensor self) -> Tensor\n"
         "  forward: result * 2\n  self: grad\n",
         8, 12, "result", "relu", "'result' is the op's output"),
    Case("forward-formula-calls-itself", "- name: relu(Tensor self) -> Tensor\n"
         "  forward: relu(self)\n  self: grad\n",
         8, 12, "relu(self)", "relu", "a forward: formula cannot call relu() itself"),
    Case("forward-formula-unknown-name", "- name: relu(Tensor self) -> Tensor\n"
         "  forward: slef * 2\n  self: grad\n",
         8, 12, "slef", "relu", "unknown name 'slef' (did you mean 'self'?)"),
    Case("forward-formula-import", "- name: relu(Tensor self) -> Tensor\n"
         "  forward: __import__('os')\n  self: grad\n",
         8, 12, "__import__", "relu", "dunder name '__import__' is not allowed"),
    Case("invalid-expression", "- name: relu(Tensor self) -> Tensor\n  self: grad * * 2\n",
         8, 16, "* 2", "relu", "invalid Python expression"),
]


@pytest.fixture(scope="module")
def generated_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output directory holding what the repository's spec generates."""
    out = tmp_path_factory.mktemp("out") / "generated"
    shutil.copytree(ROOT / "generated", out, ignore=shutil.ignore_patterns("__pycache__"))
    return out


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def test_corpus_covers_enough_mistakes() -> None:
    assert len(CASES) >= 20
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_spec(case: Case, generated_copy: Path, tmp_path: Path) -> None:
    text = case.spec if case.alone else PRELUDE + case.spec
    spec = tmp_path / "bad.yaml"
    spec.write_text(text)
    before = _snapshot(generated_copy)

    run = subprocess.run(
        [sys.executable, "-m", "codegen", "--spec", str(spec), "--out", str(generated_copy)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )

    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    match = re.fullmatch(r"(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<entry>[^:]+): "
                         r"(?P<message>.*)", lines[0])
    assert match, lines[0]
    assert match["file"] == "bad.yaml"
    assert (int(match["line"]), int(match["col"])) == (case.line, case.column), lines[0]
    assert match["entry"] == case.entry
    assert case.message in match["message"]
    source = text.splitlines()
    source_line = source[case.line - 1] if case.line <= len(source) else ""
    assert source_line[case.column - 1:].startswith(case.at), (source_line, case.at)
    assert _snapshot(generated_copy) == before


def test_the_prelude_alone_is_valid(tmp_path: Path) -> None:
    spec = tmp_path / "good.yaml"
    spec.write_text(PRELUDE)
    run = subprocess.run(
        [sys.executable, "-m", "codegen", "--spec", str(spec), "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("name", ["bad\nname.yaml", "bad\rname.yaml", "bad\u2028name.yaml",
                                  "bad\tname.yaml"])
def test_a_spec_name_with_a_line_break_keeps_the_error_on_one_line(
        name: str, generated_copy: Path, tmp_path: Path) -> None:
    spec = tmp_path / name
    spec.write_text(PRELUDE + "- name: relu(Tensor self) -> Tensor\n  self: [grad\n")
    run = subprocess.run(
        [sys.executable, "-m", "codegen", "--spec", str(spec), "--out", str(generated_copy)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2
    shown = name.encode("unicode_escape").decode("ascii")  # bad\nname.yaml, as Python writes it
    assert run.stderr.split("\n") == [f"{shown}:8:9: <yaml>: YAML syntax error in the '[' "
                                      "opened here: expected ',' or ']', but got '<stream end>' "
                                      "(at line 9, column 1)", ""]


def test_an_unreadable_spec_path_with_a_newline_is_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "no\nsuch.yaml"
    run = subprocess.run([sys.executable, "-m", "codegen", "--spec", str(spec)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert len(run.stderr.splitlines()) == 1, run.stderr
    assert run.stderr.startswith(str(tmp_path) + "/no\\nsuch.yaml:1:1: <spec>: cannot read: ")


def test_a_spec_that_is_not_utf8_is_a_located_error(generated_copy: Path, tmp_path: Path) -> None:
    spec = tmp_path / "latin.yaml"
    spec.write_bytes(PRELUDE.encode() + b"- name: relu(Tensor self) -> Tensor  # caf\xe9\n"
                     b"  self: grad\n")
    before = _snapshot(generated_copy)
    run = subprocess.run(
        [sys.executable, "-m", "codegen", "--spec", str(spec), "--out", str(generated_copy)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2
    assert run.stderr == ("latin.yaml:7:43: <spec>: not UTF-8: byte 0xe9 cannot start or "
                          "continue a character here\n")
    assert _snapshot(generated_copy) == before
