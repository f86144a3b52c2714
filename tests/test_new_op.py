"""The prototyper's path, in a copy of the project: add an op torch lacks exactly as the
README's recipe says (an entry with a `forward:` formula, samples marked `no_torch`), then
`python -m codegen`, `verify`, the tests that iterate over the spec, and `export-torch`
with torch's gradcheck on the exported Function. Everything must be green.

Not the whole suite (it takes minutes on its own): the spec-wide tests, selected by the new
op's name where they are parametrized by op, and whole where they loop over the spec inside
one test (SPEC_WIDE below)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A name no fixture of the suite uses, as a user's own op would have.
OP = "newcomer_cube"
ENTRY = f"""
- name: {OP}(Tensor self) -> Tensor
  forward: self * self * self
  self: 3 * grad * self * self
  result: 3 * self_t * self_p * self_p
  samples:
    - {{self: [3, 4], no_torch: true}}
    - {{self: [5], no_torch: true}}
"""
# Tests parametrized by op (run with -k OP) ...
BY_OP = ["tests/test_ops.py", "tests/test_node_names.py", "tests/test_saved_variables.py",
         "tests/test_forward_ad.py", "tests/test_export_torch.py"]
# ... and tests that loop over the whole spec inside one test, or use made-up ops of their
# own that a user's op must not collide with.
SPEC_WIDE = [
    "tests/test_kernels.py::test_no_op_of_the_spec_warns_of_infinities_nan_or_overflow",
    "tests/test_export_torch.py::test_every_op_torch_has_is_exported",
    "tests/test_node_names.py::test_every_node_is_checked",
    "tests/test_codegen_errors.py", "tests/test_verify.py",
]


def _run(*args: str, cwd: Path, timeout: int = 1200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tracked files of the project, copied, with the new op added."""
    copy = tmp_path_factory.mktemp("project")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    spec = copy / "derivatives.yaml"
    spec.write_text(spec.read_text(encoding="utf-8") + ENTRY, encoding="utf-8")
    run = _run("-m", "codegen", cwd=copy)
    assert run.returncode == 0, run.stderr
    return copy


@pytest.mark.slow
def test_the_new_op_is_proven(project: Path) -> None:
    run = _run("-m", "codegen", "verify", OP, cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert " fd " in run.stdout and " gg " in run.stdout and "jvp fd" in run.stdout
    check = _run("-m", "codegen", "--check", cwd=project)
    assert check.returncode == 0, check.stdout
    # CI lints the generated code too: the new op's imports must be written as ruff sorts
    # them (a derived kernel once added a second `from generated import` line).
    lint = _run("-m", "ruff", "check", "generated", cwd=project)
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.slow
def test_the_spec_wide_tests_pass_with_the_new_op(project: Path) -> None:
    pytest = ("-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider")
    by_op = _run(*pytest, "-k", OP, *BY_OP, cwd=project)
    assert by_op.returncode == 0, by_op.stdout[-3000:]
    # formula x2, node name x2, saved attributes, forward AD, export gradcheck x2, ...
    passed = re.search(r"(\d+) passed", by_op.stdout)
    assert passed and int(passed[1]) >= 8, by_op.stdout[-500:]
    assert "skipped" not in by_op.stdout, by_op.stdout[-500:]
    whole = _run(*pytest, *SPEC_WIDE, cwd=project)
    assert whole.returncode == 0, whole.stdout[-3000:]


@pytest.mark.slow
def test_the_new_op_goes_to_torch(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "exported.py"
    run = _run("-m", "codegen", "export-torch", OP, "--out", str(out), cwd=project)
    assert run.returncode == 0 and "not exported" not in run.stdout, run.stdout + run.stderr
    script = (
        "import importlib.util, torch\n"
        f"spec = importlib.util.spec_from_file_location('exported', {str(out)!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)\n"
        "f = module.NewcomerCube.apply\n"
        "assert torch.autograd.gradcheck(f, (x,), check_forward_ad=True)\n"
        "assert torch.autograd.gradgradcheck(f, (x,))\n"
        "assert torch.equal(f(x), x * x * x)\n"
        "print('ok')\n")
    checked = _run("-c", script, cwd=tmp_path)
    assert checked.stdout.strip() == "ok", checked.stdout + checked.stderr
