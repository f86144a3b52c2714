"""`python -m codegen verify` proves the spec it is given, and says what it did.

Each run generates the spec fresh (about a second), so these tests verify one or two small
ops on a copy of the spec in tmp_path, and mostly without torch; never the whole spec.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import runtime  # noqa: F401 - imported here, so prove() below must take the subprocess path
from codegen import verify
from codegen.load import module_functions, parse_spec

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "derivatives.yaml"
# An op with no kernel and no aten op, by a name no user would give one of theirs.
FIXTURE_OP = ("- name: zz_fixture_cube(Tensor self) -> Tensor\n  self: grad\n  samples:\n"
              "    - {self: [3]}\n")
NEG_BACKWARD = "- name: neg(Tensor self) -> Tensor\n  inplace: function, method\n  self: -grad\n"


def run_verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", "verify", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def spec_copy(tmp_path: Path, name: str = "copy.yaml", replace: tuple[str, str] | None = None,
              append: str = "") -> Path:
    text = SPEC.read_text(encoding="utf-8")
    if replace is not None:
        assert replace[0] in text, f"the spec no longer holds {replace[0]!r}: update this test"
        text = text.replace(replace[0], replace[1], 1)
    path = tmp_path / name
    path.write_text(text + append, encoding="utf-8")
    return path


def neg_flipped(tmp_path: Path) -> Path:
    """A copy of the spec where neg's backward lost its sign (self: grad)."""
    return spec_copy(tmp_path, "flipped.yaml", (NEG_BACKWARD, NEG_BACKWARD.replace("-grad",
                                                                                  "grad")))


def test_a_sign_edit_in_the_spec_fails_and_the_unedited_copy_passes(tmp_path: Path) -> None:
    edited = run_verify("--spec", neg_flipped(tmp_path), "--no-torch", "neg")
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "FAIL" in edited.stdout and "neg: fd self" in edited.stdout
    assert "torch comparison skipped (--no-torch)" in edited.stdout
    assert "not installed" not in edited.stdout

    unedited = run_verify("--spec", spec_copy(tmp_path), "--no-torch", "neg")
    assert unedited.returncode == 0, unedited.stdout + unedited.stderr
    assert "FAIL" not in unedited.stdout
    assert "passed, 0 failed, over 1 ops" in unedited.stdout


def test_prove_never_runs_generated_on_disk(tmp_path: Path, monkeypatch) -> None:
    # generated/ on disk holds neg's right formula: a proof that read it would pass.
    functions = (ROOT / "generated" / "functions.py").read_text(encoding="utf-8")
    neg_node = functions.split("class NegBackward0(")[1].split("\nclass ")[0]
    assert "grad_inputs[0] = -grad" in neg_node
    assert "runtime" in sys.modules  # so prove() runs in a fresh subprocess
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    checks = verify.prove(neg_flipped(tmp_path), ["neg"], use_torch=False)
    assert {(c.what, c.input) for c in checks if not c.ok} >= {("fd", "self")}
    assert all(c.op == "neg" for c in checks)
    assert not list(scratch.iterdir())  # the temporary package is gone


def test_prove_in_a_fresh_process_imports_the_temporary_package(tmp_path: Path) -> None:
    # A process that never imported runtime proves in itself, then unimports it all.
    script = (
        "import json, sys\n"
        "from codegen.verify import prove\n"
        f"checks = prove({str(neg_flipped(tmp_path))!r}, ['neg'], use_torch=False)\n"
        "left = [m for m in sys.modules if m.split('.')[0] in ('runtime', 'generated')]\n"
        "print(json.dumps({'failed': sorted({c.what for c in checks if not c.ok}),\n"
        "                  'left': left}))\n"
    )
    process = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                             text=True, timeout=300, check=False)
    assert process.returncode == 0, process.stderr
    report = json.loads(process.stdout.splitlines()[-1])
    assert "fd" in report["failed"] and report["left"] == []


def test_proving_here_refuses_once_runtime_is_imported(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="already imported"):
        verify._prove_here(tmp_path, [], use_torch=False)


def test_an_op_without_samples_fails_and_the_others_still_run(tmp_path: Path) -> None:
    # kernels._sigmoid exists (sigmoid's helper): only the samples are missing.
    spec = spec_copy(tmp_path, append=(
        "\n- name: _sigmoid(Tensor self) -> Tensor\n  self: grad * result * (1 - result)\n"))
    process = run_verify("--spec", spec, "--no-torch", "_sigmoid", "neg")
    assert process.returncode == 1, process.stdout + process.stderr
    assert "Traceback" not in process.stdout + process.stderr
    table, summary = process.stdout.split("\nfailed:\n")
    assert any(r.startswith("_sigmoid ") and r.endswith("FAIL  " + verify.NO_SAMPLES)
               for r in table.splitlines())
    assert "  _sigmoid: no samples: add `samples:` to its entry" in summary
    assert "  neg:" not in summary  # neg's checks ran and passed
    assert "over 2 ops" in summary


def test_a_missing_kernel_is_named_without_a_traceback(tmp_path: Path) -> None:
    spec = spec_copy(tmp_path, append=(
        "\n- name: zz_fixture_cube(Tensor self) -> Tensor\n  self: 3 * grad * self * self\n"
        "  samples:\n    - {self: [3], no_torch: true}\n"))
    process = run_verify("--spec", spec, "--no-torch", "zz_fixture_cube")
    output = process.stdout + process.stderr
    assert process.returncode in (1, 2), output  # a spec error, or a failed check
    assert "Traceback" not in output
    assert "zz_fixture_cube" in output and "kernel" in output
    assert "runtime/kernels.py" in output


def test_verify_fails_an_op_whose_kernel_is_missing() -> None:
    # Generation refuses such a spec; verify() on its own names the missing kernel too.
    text = FIXTURE_OP
    (info,) = parse_spec(text, "mine.yaml", frozenset())
    (check,) = verify.verify([info], use_torch=False)
    assert (check.op, check.what, check.ok) == ("zz_fixture_cube", "kernel", False)
    assert "runtime/kernels.py has no function `zz_fixture_cube`" in check.detail


def test_an_op_torch_lacks_gets_the_no_torch_hint(tmp_path: Path) -> None:
    # kernels._sigmoid exists (sigmoid's helper) but aten::_sigmoid does not.
    kernels = module_functions(ROOT / "runtime" / "kernels.py", private=True)
    assert "_sigmoid" in kernels, "runtime/kernels.py lost _sigmoid: pick another kernel"
    spec = spec_copy(tmp_path, append=(
        "\n- name: _sigmoid(Tensor self) -> Tensor\n  self: grad * result * (1 - result)\n"
        "  result: auto_element_wise\n  samples:\n    - {self: [3]}\n"))
    process = run_verify("--spec", spec, "_sigmoid")
    assert process.returncode == 1, process.stdout + process.stderr
    hint = "torch has no aten::_sigmoid: mark its samples `no_torch: true`"
    assert hint in process.stdout
    assert "AttributeError" not in process.stdout + process.stderr
    rows = [line for line in process.stdout.splitlines() if line.startswith("_sigmoid ")]
    assert [r for r in rows if "FAIL" in r] == [r for r in rows if hint in r]
    assert any(" fd " in r and r.endswith("pass") for r in rows)  # the rest ran, without torch


def test_torch_overload_names_the_missing_op() -> None:
    text = FIXTURE_OP
    (info,) = parse_spec(text, "mine.yaml", frozenset())
    with pytest.raises(verify.TorchLacksOp) as raised:
        verify.torch_overload(info)
    assert str(raised.value) == \
        "torch has no aten::zz_fixture_cube: mark its samples `no_torch: true`"


def test_unknown_ops_get_a_did_you_mean() -> None:
    process = run_verify("negg", "add.Tensr", "zzzz")
    assert process.returncode == 2
    assert process.stderr.splitlines() == [
        "unknown op 'negg' (did you mean 'neg'?)",
        "unknown op 'add.Tensr' (did you mean 'add.Tensor'?)",
        "unknown op 'zzzz'",
    ]
    assert process.stdout == ""


def test_a_spec_error_is_one_located_line(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("- name: neg(Tensor self) -> Tensor\n  self: -grad\n  bogus: 1\n")
    process = run_verify("--spec", spec, "neg")
    assert process.returncode == 2
    assert "Traceback" not in process.stderr
    (line,) = process.stderr.splitlines()
    assert line.startswith("bad.yaml:3:3: neg: unknown key 'bogus'")
    assert process.stdout == ""


def test_help_explains_every_column_and_sample_flag() -> None:
    process = run_verify("--help")
    assert process.returncode == 0
    text = process.stdout
    for column in ("sample", "input", "error", "forward", "grad_fn", "raw", "fd", "gg",
                   "torch grad", "jvp fd", "jvp rev", "jvp torch"):
        assert f"  {column} " in text, column
    for flag in verify.SAMPLE_KEYS:
        assert f"  {flag}: true" in text, flag
    assert "ATOL/RTOL + |reference|" in text
    assert "never the files in generated/" in text and "--spec" in text
