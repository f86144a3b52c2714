"""Commands that behave: a missing extra is named in one line, with exit status 2."""

from __future__ import annotations

import importlib.util
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_bench_run_names_the_missing_extra(monkeypatch, capsys) -> None:
    real = importlib.util.find_spec

    def without_autograd(name, *args):
        return None if name == "autograd" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_autograd)
    monkeypatch.setattr(sys, "argv", ["bench/run.py", "--quick"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(ROOT / "bench" / "run.py"), run_name="__main__")
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == ("bench/run.py needs the bench extra (autograd missing): "
                   "pip install -e '.[bench]'\n")


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


def test_runtime_compile_has_its_own_help() -> None:
    run = _run("-m", "runtime.compile", "--help")
    assert run.returncode == 0
    assert run.stdout.startswith("usage: python -m runtime.compile prog.py")
    assert "python -m runtime prog.py" not in run.stdout  # not python -m runtime's usage
    bare = _run("-m", "runtime.compile")
    assert bare.returncode == 2 and bare.stderr.startswith("usage: python -m runtime.compile")


def test_runtime_compile_says_when_nothing_compiled(tmp_path: Path) -> None:
    program = tmp_path / "plain.py"
    program.write_text("import torch\nprint(torch.ones(2).sum().item())\n")
    run = _run("-m", "runtime.compile", str(program))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "2.0\n"
    assert "compiled no step" in run.stderr


def test_batch_scaling_writes_its_picture_in_the_current_directory() -> None:
    """Not over the tracked docs/batch-scaling.svg: that one is redrawn only on purpose."""
    from bench import batch_scaling

    assert batch_scaling.DEFAULT_PLOT == Path("batch-scaling.svg")
    assert not batch_scaling.DEFAULT_PLOT.is_absolute()


def test_var_warns_torchs_words_at_the_users_line() -> None:
    import warnings

    import runtime

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = runtime.var(runtime.tensor([1.0])); line = sys._getframe().f_lineno  # noqa: E702
    assert np.isnan(value.item())
    assert [(str(w.message), w.category, w.filename, w.lineno) for w in caught] == [(
        "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel).", UserWarning, __file__, line)]


def test_a_float32_overflow_in_tensor_is_silent_as_torchs() -> None:
    import warnings

    import runtime

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert runtime.tensor(1e40, dtype=runtime.float32).item() == float("inf")
        assert runtime.tensor([1e40, -1e40], dtype=runtime.float32).tolist() == \
            [float("inf"), float("-inf")]


def test_viz_without_graphviz_says_what_to_install_in_one_line(tmp_path: Path) -> None:
    """PATH without Graphviz's dot: one line naming the install command, before the program
    runs (its print never shows), exit status 2, no traceback."""
    program = tmp_path / "prog.py"
    program.write_text("print('the program ran')\n")
    run = subprocess.run([sys.executable, "-m", "runtime.viz", str(program), "--out",
                          str(tmp_path / "g.svg")], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False, env={"PATH": str(tmp_path)})
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and "apt-get install graphviz" in lines[0], run.stderr
    assert not (tmp_path / "g.svg").exists()


@pytest.mark.parametrize(("module", "usage"), [
    ("codegen", "usage: python -m codegen"),
    ("runtime", "usage: python -m runtime prog.py"),
    ("runtime.viz", "usage: python -m runtime.viz"),
    ("runtime.compile", "usage: python -m runtime.compile"),
    ("bench.batch_scaling", "usage: python -m bench.batch_scaling"),
    ("bench.random_draws", "usage: random_draws.py"),
    ("bench.long_chain", "usage: python -m bench.long_chain"),
    ("bench.torch_threads", "usage: python -m bench.torch_threads"),
])
def test_every_entry_point_has_its_own_help(module: str, usage: str) -> None:
    run = _run("-m", module, "--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(usage), run.stdout[:200]


def test_the_readme_fits_on_a_screen_or_two() -> None:
    """At most 120 lines; the two commands and both users' first steps on the first screen
    (50 lines); every page it links exists."""
    import re

    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, len(lines)
    first_screen = "\n".join(lines[:50])
    for needed in ("pip install -e . && python -m codegen", "python -m pytest",
                   "python -m runtime prog.py", "docs/prototyping.md"):
        assert needed in first_screen, needed
    for link in re.findall(r"\]\(([^)#]+)\)", "\n".join(lines)):
        assert (ROOT / link).exists(), link
