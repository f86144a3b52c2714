"""`python -m codegen explain OP`: one op's entry, schema, formulas, saved attributes and
freshly rendered code on one page; wrong names and bad specs exit 2 with one message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codegen import explain
from codegen.__main__ import generate
from codegen.load import load_spec
from codegen.model import OpInfo

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "derivatives.yaml"

# op -> (node class, forward wrapper, its in-place form or None, grad_fn's saved fields)
EXPECTED = {
    "pow.Tensor_Scalar": ("PowBackward0", "pow_Tensor_Scalar", "pow_Tensor_Scalar_",
                          ["_saved_self", "_saved_exponent"]),
    "mm": ("MmBackward0", "mm", None,
           ["_saved_self", "_saved_mat2", "_saved_self_sym_sizes", "_saved_self_sym_strides",
            "_saved_mat2_sym_sizes", "_saved_mat2_sym_strides"]),
    "native_layer_norm": ("NativeLayerNormBackward0", "native_layer_norm", None,
                          ["_saved_input", "_saved_normalized_shape", "_saved_result1",
                           "_saved_result2", "_saved_weight", "_saved_bias"]),
}


@pytest.fixture(scope="module")
def spec() -> tuple[list[OpInfo], dict[str, str], str]:
    """The spec's entries, its files rendered now, and its text: read once for the module."""
    return load_spec(SPEC), generate(SPEC), SPEC.read_text(encoding="utf-8")


def run(spec: tuple, op: str) -> str:
    infos, files, text = spec
    return explain.explain(infos, files, text, SPEC.name, op)


def section(text: str, number: int) -> str:
    """The text of section `number` ("3. The formulas ..." up to the next heading)."""
    start = text.index(f"\n{number}. ")
    end = text.find(f"\n{number + 1}. ", start)
    return text[start : end if end >= 0 else len(text)]


@pytest.mark.parametrize("op", sorted(EXPECTED))
def test_the_whole_path_of_an_op(spec: tuple, op: str) -> None:
    node, wrapper, inplace, fields = EXPECTED[op]
    info = next(i for i in spec[0] if i.name == op)
    text = run(spec, op)
    starts = [text.index(f"\n{n}. ") for n in range(1, 6)]
    assert starts == sorted(starts)

    entry = section(text, 1)
    name_line = spec[2].splitlines()[info.location.line - 1].strip()
    assert name_line.startswith("- name:") and name_line in entry
    assert f"{SPEC.name}:{info.location.line}-" in entry
    for derivative in info.derivatives:
        assert f"{', '.join(derivative.var_names)}: {derivative.formula}" in entry

    assert node in section(text, 2)
    formulas = section(text, 3)
    for derivative in info.derivatives:
        assert derivative.formula in formulas and derivative.code in formulas
    for forward in info.forward_derivatives:
        assert forward.formula in formulas and forward.kind in formulas
        assert forward.code in formulas and forward.derived in formulas
    saved = section(text, 4)
    for field in fields:
        assert f"\n{field}" in saved

    code = section(text, 5)
    assert f"class {node}(Node):" in code
    assert f"def {wrapper}(" in code
    assert f"def {wrapper}(self_p" in code or f"def {wrapper}(input_p" in code  # the JVP
    if inplace:
        assert f"def {inplace}(" in code


def test_the_schema_says_what_is_differentiable_and_why_the_number(spec: tuple) -> None:
    schema = section(run(spec, "pow.Tensor_Scalar"), 2)
    for node, name in [("PowBackward1", "pow.Tensor_Tensor"), ("PowBackward2", "pow.Scalar")]:
        assert any(node in line and line.endswith(name) for line in schema.splitlines())
    assert "in-place method Tensor.pow_" in schema
    layer_norm = section(run(spec, "native_layer_norm"), 2)
    assert "output_differentiability" in layer_norm
    assert "grad_input_mask" in section(run(spec, "native_layer_norm"), 3)


def test_a_tensor_one_formula_reads_is_a_guarded_save(spec: tuple) -> None:
    saved = section(run(spec, "mm"), 4)
    assert "should_compute_output(0)" in saved and "should_compute_output(1)" in saved
    assert "not the tensor" in saved  # self.shape saves the size only
    assert "guarded" not in section(run(spec, "pow.Tensor_Scalar"), 4)  # one input


def test_the_code_comes_from_the_files_given(spec: tuple) -> None:
    infos, files, text = spec
    fresh = {**files, "functions.py": "class PowBackward0(Node):\n    fresh = True\n"}
    code = section(explain.explain(infos, fresh, text, SPEC.name, "pow.Tensor_Scalar"), 5)
    assert "    fresh = True" in code


def test_an_entry_ends_before_the_next_entry_or_a_section_comment(spec: tuple) -> None:
    infos, _, text = spec
    for name, inside, outside in [
        ("pow.Tensor_Tensor", "# d/dself is 0 where exponent == 0", "- name: pow.Scalar"),
        ("reciprocal", "samples:", "# -- linear algebra"),
    ]:
        info = next(i for i in infos if i.name == name)
        first, last, entry = explain.entry_lines(text, info.location.line)
        assert first == info.location.line and inside in entry and outside not in entry
        assert entry == "\n".join(text.splitlines()[first - 1 : last])
        assert entry.splitlines()[-1].strip()  # no trailing blank line


def test_a_wrong_name_exits_2_with_a_suggestion(capsys: pytest.CaptureFixture) -> None:
    assert explain.main(["native_layer_nrom", "--no-verify"]) == 2
    assert "did you mean native_layer_norm" in capsys.readouterr().err


def test_a_base_name_with_several_overloads_lists_them(capsys: pytest.CaptureFixture) -> None:
    assert explain.main(["pow", "--no-verify"]) == 2
    err = capsys.readouterr().err
    assert all(f"pow.{o}(" in err for o in ("Tensor_Scalar", "Tensor_Tensor", "Scalar"))


def test_a_spec_error_is_told_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "derivatives.yaml"
    bad.write_text("- name: mm(Tensor self, Tensr mat2) -> Tensor\n  self: grad\n")
    assert explain.main(["mm", "--spec", str(bad), "--no-verify"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("derivatives.yaml:1:") == 1 and "Tensr" in err


def test_the_command_proves_the_op() -> None:
    done = subprocess.run([sys.executable, "-m", "codegen", "explain", "neg", "--no-torch"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    proof = section(done.stdout, 6)
    rows = [line.split() for line in proof.splitlines() if line.startswith("neg ")]
    assert "check" in proof and rows and all(row[-1] == "pass" for row in rows)
    checks = {row[2] for row in rows}
    assert "fd" in checks and "torch" not in checks  # --no-torch reached the proof
    assert "Traceback" not in done.stderr
