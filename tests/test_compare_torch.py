"""`python -m codegen compare-torch`: the normaliser of both dialects, the rule that a formula
differing from torch's says why, and docs/compare-torch.md being current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen import compare_torch as ct
from codegen.load import entry_notes

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "derivatives.yaml"


@pytest.fixture(scope="module")
def torch_text() -> str:
    return ct.torch_spec_path().read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def report(torch_text: str) -> ct.Report:
    return ct.compare(torch_text, SPEC.read_text(encoding="utf-8"))


# -- the normaliser ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "torch, gradgen",
    [
        ("grad.expand_symint(self.sym_sizes())", "grad.expand(self.shape)"),
        (
            "at::where(self >= min, grad, at::scalar_tensor(0., grad.options()))",
            "where(self >= min, grad, 0)",
        ),
        ("grad * self.cos().conj()", "grad * self.cos()"),
        (
            "mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)",
            "mean_backward(grad, self.shape, dim, self.numel(), keepdim)",
        ),
        (
            "dtype.has_value() ? grad.to(*dtype) : grad",
            "grad.to(dtype) if dtype is not None else grad",
        ),
        ("at::stack({a, b}, 0)", "stack([a, b], 0)"),
        ("grads[0].sum()", "grad.sum()"),
        (
            "mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), self.layout(), 1)",
            "mm_mat1_backward(grad, mat2, self.shape, self.stride(), 1)",
        ),
        ("at::div(grad, self)", "grad / self"),
        (
            "self.dim() == 0 ? grad : grad.sum(self.sym_size(0))",
            "grad if self.ndim == 0 else grad.sum(self.shape[0])",
        ),
        ("!train.has_value() && a || b", "not train is not None and a or b"),
        ("apply_loss_reduction(x, at::Reduction::Mean)", "apply_loss_reduction(x, 1)"),
        ("x.masked_fill_(m, 0)", "masked_fill(x, m, 0)"),
        ("elu_backward(grad, 1.0 / alpha.toFloat())", "elu_backward(grad, 1.0 / alpha)"),
        ("self_t.copy_(f(original_self_t, result))", "f(self_t, result)"),
        (
            "at::where(m, g, at::zeros({}, result.options()).expand_as(result))",
            "where(m, g, zeros_like(result))",
        ),
    ],
)
def test_the_two_dialects_meet(torch: str, gradgen: str) -> None:
    assert ct.normalise(torch, "torch") == ct.normalise(gradgen, "gradgen")


@pytest.mark.parametrize(
    "torch, gradgen",
    [
        ("grad * other", "grad / other"),
        ("a ? b : c", "c if a else b"),
        ("f(x, y)", "f(y, x)"),
        ("grad.to(self.scalar_type())", "grad"),
        ("other_t.copy_(f(self_t))", "f(self_t)"),
        ("at::zeros({}, self.options()).expand_as(result)", "zeros_like(result)"),
    ],
)
def test_different_formulas_stay_different(torch: str, gradgen: str) -> None:
    assert ct.normalise(torch, "torch") != ct.normalise(gradgen, "gradgen")


def test_nested_ternaries_are_right_associative() -> None:
    assert ct.cpp_to_python("a ? b : c ? d : e") == "((b) if (a) else (((d) if (c) else (e))))"
    assert ct.normalise("f(a ? b : c, d)", "torch") == "f(b if a else c, d)"


@pytest.mark.parametrize(
    "formula, why",
    [
        ("std::get<0>(x)", "template"),
        ("[&]() { return grad; }()", "lambda"),
        ("auto x = grad; x", "statements"),
        ("f(a, b", "unbalanced"),
    ],
)
def test_what_cannot_be_compared_says_so(formula: str, why: str) -> None:
    with pytest.raises(ct.NotComparable, match=why):
        ct.normalise(formula, "torch")
    result = ct.compare_formula("self", formula, "grad")
    assert result.status == "not comparable" and why in result.why


def test_auto_element_wise_is_expanded_on_both_sides() -> None:
    torch = (
        "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
        "  result: self_t * self_p.sgn()\n"
    )
    ours = (
        "- name: abs(Tensor self) -> Tensor\n  self: grad * sign(self)\n"
        "  result: auto_element_wise\n"
    )
    entry = ct.compare(torch, ours).entries[0]
    assert [f.status for f in entry.formulas] == ["same", "same"]


# -- a formula that differs says why ----------------------------------------------------------

TORCH = """\
- name: sin(Tensor self) -> Tensor
  self: grad * self.cos().conj()
  result: auto_element_wise

- name: cos(Tensor self) -> Tensor
  self: grad * -self.sin().conj()
  result: auto_element_wise

- name: _cudnn_thing(Tensor self) -> Tensor
  self: grad
"""


def test_a_formula_that_differs_without_a_note_is_reported() -> None:
    ours = """\
- name: sin(Tensor self) -> Tensor
  self: grad * self.cos()
  result: auto_element_wise

- name: cos(Tensor self) -> Tensor
  self: -grad * self.sin()
  result: auto_element_wise
"""
    report = ct.compare(TORCH, ours)
    assert [e.name for e in report.unexplained()] == ["cos"]
    assert report.entries[0].status == "same"
    assert report.summary()["formulas_differ_without_note"] == 2  # backward and forward
    cudnn = report.entries[2]
    assert not cudnn.present and cudnn.family == "backend" and "cudnn" in cudnn.left_out


def test_an_op_torch_lacks_is_left_out_and_one_torch_differentiates_otherwise_is_listed(
) -> None:
    ours = """\
- name: mycube(Tensor self) -> Tensor
  self: 3 * grad * self * self
  samples:
    - {self: [3], no_torch: true}

- name: argmax(Tensor self) -> Tensor
  output_differentiability: [False]
  samples:
    - {self: [3]}
"""
    assert ct.compare(TORCH, ours).gradgen_only == ["argmax"]


def test_a_note_inside_the_entry_explains_it() -> None:
    ours = """\
- name: sin(Tensor self) -> Tensor
  self: grad * self.cos()

# differs from torch: a comment in column 1 belongs to no entry.
- name: cos(Tensor self) -> Tensor
  # differs from torch: the minus sign on grad,
  # not on sin.
  # The entry's own comment follows the full stop.
  self: -grad * self.sin()
  result: auto_element_wise
"""
    assert entry_notes(ours) == {"cos": "the minus sign on grad, not on sin."}
    report = ct.compare(TORCH, ours)
    assert report.unexplained() == []
    assert report.entries[0].note is None


def test_every_formula_of_the_spec_that_differs_from_torchs_says_why(report: ct.Report) -> None:
    unexplained = {
        e.name: [f"{f.key}: {f.why}" for f in e.formulas if f.status == "differs"]
        for e in report.unexplained()
    }
    assert not unexplained, (
        "these entries' formulas differ from torch's derivatives.yaml; port torch's formula "
        "or say why in a `# differs from torch: ...` comment inside the entry:\n"
        + "\n".join(f"  {name}: {why}" for name, why in unexplained.items())
    )


def test_no_note_explains_a_difference_that_is_gone(report: ct.Report) -> None:
    stale = [f"{e.name}: {e.note}" for e in report.stale_notes()]
    assert not stale, (
        "these entries are now the same as torch's (or cannot be compared): "
        "remove their `# differs from torch:` note:\n" + "\n".join(stale)
    )


def test_the_counts(report: ct.Report) -> None:
    summary = report.summary()
    print("\n" + report.summary_line())
    assert summary["base_names"] >= 580 and summary["torch_entries"] >= 680
    assert summary["base_names_in_scope"] < summary["base_names"]
    assert summary["base_names_present"] >= 178  # the count when compare-torch was written
    assert summary["formulas_same"] > summary["formulas_differ"]
    absent = [e for e in report.entries if not e.present]
    assert all(e.family for e in absent)
    left_out = {e.family for e in absent if e.left_out}
    assert {
        "backend",
        "quantization",
        "sparse and nested",
        "_foreach",
        "fused attention",
    } <= left_out


# -- the command and its page -----------------------------------------------------------------


def test_the_page_is_current(report: ct.Report) -> None:
    assert ct.DOCS_PAGE.read_text(encoding="utf-8") == ct.as_markdown(report), (
        "docs/compare-torch.md is stale: run `python -m codegen compare-torch --write-docs`"
    )


def test_json_for_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert ct.main(["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["base_names_present"] >= 178
    pow_entry = next(e for e in data["entries"] if e["name"] == "pow.Tensor_Scalar")
    assert pow_entry["present"] and pow_entry["status"] == "same"


def test_a_missing_torch_spec_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ct.main(["--torch-spec", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml" in capsys.readouterr().err


def test_another_torch_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "derivatives.yaml"
    path.write_text(TORCH, encoding="utf-8")
    assert ct.main(["--torch-spec", str(path)]) == 0
    out = capsys.readouterr().out
    assert "present  sin: same" in out and "present  cos: same" in out
    assert "absent   _cudnn_thing  [backend; left out" in out
    assert out.strip().endswith(
        "2 of torch's base op names present / 2 in scope / 3 in all "
        "(2 of 3 entries); formulas: 4 same, 0 differ (0 without a "
        "note), 0 not comparable, 0 missing in gradgen"
    )
