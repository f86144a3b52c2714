"""The tutorial programs of tests/programs/ print torch's numbers when run on gradgen.

Each program is a plain PyTorch script (`import torch`), written after a well-known
tutorial or example (the header comment of each says which), adapted only where the
original downloads a dataset (a small seeded synthetic one instead) and to few steps. It
seeds torch's generator itself; gradgen's random streams equal torch's bit for bit, so
both runs start from the same weights and data.

Under gradgen each program runs as a user runs it, `python -m runtime prog.py`, in a
process of its own. Under real torch they all run in one process (importing torch takes
seconds on a loaded machine, and there are many programs), each as `python prog.py` would
run it: as `__main__` by runpy, with its own sys.argv, in a fresh working directory,
its hooks numbered from 0 (the pruning tutorial prints a module's hooks by number),
with one intra-op thread (on a loaded machine torch's thread pool makes small programs
ten times slower; tensors this small are not split between threads anyway).
Every number the two print must agree to 1e-5 relative (1e-6 absolute, for values that
are zero up to rounding, such as a fitted coefficient of 1e-9), and they must print as
many numbers. Digits inside identifiers (`fc1`, `AddmmBackward0`) are not numbers, and
object addresses are ignored.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
NAMES = sorted(path.name for path in PROGRAMS.glob("*.py"))

NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")

# Runs every program given on its command line under real torch, one after another in this
# process, and prints {name: {"ok", "stdout", "error"}} as JSON.
TORCH_RUNNER = """
import contextlib, io, json, os, runpy, sys, tempfile, traceback
import torch
import torch.utils.hooks
torch.set_num_threads(1)
results = {}
for path in sys.argv[1:]:
    out = io.StringIO()
    torch.utils.hooks.RemovableHandle.next_id = 0  # hook ids from 0, as in a fresh process
    os.chdir(tempfile.mkdtemp())
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(path))
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        error = None
    except BaseException:
        error = traceback.format_exc()
    sys.path.pop(0)
    results[os.path.basename(path)] = {"ok": error is None, "stdout": out.getvalue(),
                                       "error": error}
print(json.dumps(results))
"""


def _environment() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


@pytest.fixture(scope="module")
def torch_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What each program prints under real torch."""
    result = subprocess.run(
        [sys.executable, "-c", TORCH_RUNNER, *(str(PROGRAMS / name) for name in NAMES)],
        cwd=tmp_path_factory.mktemp("torch"), env=_environment(), capture_output=True,
        text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def numbers(text: str) -> list[float]:
    """The numbers a program printed, in order (object addresses left out)."""
    return [float(match) for match in NUMBER.findall(ADDRESS.sub("", text))]


def assert_same_numbers(ours: str, theirs: str) -> None:
    ours_numbers, theirs_numbers = numbers(ours), numbers(theirs)
    assert len(ours_numbers) == len(theirs_numbers), (
        f"{len(ours_numbers)} numbers printed, torch printed {len(theirs_numbers)}\n"
        f"ours:\n{ours}\ntheirs:\n{theirs}")
    for position, (a, b) in enumerate(zip(ours_numbers, theirs_numbers, strict=True)):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6), (
            f"number {position}: ours {a}, torch's {b}\nours:\n{ours}\ntheirs:\n{theirs}")


def test_number_parsing():
    text = "Epoch 1 fc1 <AddmmBackward0 object at 0x7f3a> loss: 2.5e-3 [   16/   96] -0.0000 x^2"
    assert numbers(text) == [1.0, 2.5e-3, 16.0, 96.0, -0.0, 2.0]
    with pytest.raises(AssertionError):
        assert_same_numbers("loss 1.00002", "loss 1.0")
    with pytest.raises(AssertionError):
        assert_same_numbers("1 2", "1 2 3")
    assert_same_numbers("loss 1.000001 and 3e-9", "loss 1.0 and -4e-10")


@pytest.mark.parametrize("name", NAMES)
def test_program_runs_under_torch(name, torch_outputs):
    """Every program is a working PyTorch program: it runs under torch and prints numbers."""
    outcome = torch_outputs[name]
    assert outcome["ok"], outcome["error"]
    assert numbers(outcome["stdout"])


@pytest.mark.parametrize("name", NAMES)
def test_program_prints_torchs_numbers(name, torch_outputs, tmp_path):
    """`python -m runtime prog.py` succeeds and prints torch's numbers."""
    ours = subprocess.run([sys.executable, "-m", "runtime", str(PROGRAMS / name)],
                          cwd=tmp_path, env=_environment(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert ours.returncode == 0, ours.stderr
    theirs = torch_outputs[name]
    assert theirs["ok"], theirs["error"]
    assert_same_numbers(ours.stdout, theirs["stdout"])



# A line that makes a program's model (`model = Net()`, `netD = Discriminator().to(device)`).
MODEL_LINE = re.compile(r"^(model|net|netG|netD|rnn) *= *[A-Z]\w*\(.*\)(?:\.to\(device\))?$",
                        re.M)
# Where a compiled model runs eagerly, and why (any other compiles).
EAGER_MODELS = {
    "char_rnn.py": "the cache of 8 traces is full",  # a name's length is its tensor's shape
    "lpwe_dynamic.py": "the step draws from Python's random module",
    "dynamic_net.py": "the step draws from Python's random module",
    # nn.TransformerEncoder checks its mask's values in Python, as torch's fast path does
    "transformer_tutorial.py": "the step reads a tensor's values in Python (bool() of a tensor)",
}
# Programs whose compiled models are all gone by the end (the name is bound to a model made
# otherwise, `model = nn.Sequential(...)`), so none is left to report: their numbers are
# still compared.
UNREPORTED = {"nn_tutorial.py", "saved_tensors_hooks.py"}
# Programs that cannot run with their models compiled, torch's as gradgen's, and why.
NOT_COMPILABLE: set[str] = set()
REPORT = """
import gc as _gc, sys as _sys
for _model in _gc.get_objects():
    if isinstance(_model, _sys.modules["runtime.compile.module"].OptimizedModule):
        print("COMPILED", type(_model._orig_mod).__name__, _model.fallback_reason)
"""


@pytest.mark.parametrize("name", [name for name in NAMES if name != "compile_tutorial.py" and
                                  name not in NOT_COMPILABLE and
                                  MODEL_LINE.search((PROGRAMS / name).read_text())])
def test_program_with_its_models_compiled_prints_torchs_numbers(name, torch_outputs,
                                                                 tmp_path):
    """The program with `model = torch.compile(model)` after each line that makes a model,
    as a user adds it, run on gradgen: the compiled models (a generated forward and
    backward, docs/compile.md) leave every number the program prints as torch's."""
    source = MODEL_LINE.sub(lambda m: f"{m.group(0)}\n{m.group(1)} = torch.compile({m.group(1)})",
                            (PROGRAMS / name).read_text())
    program = tmp_path / name
    program.write_text(source + REPORT)
    ours = subprocess.run([sys.executable, "-m", "runtime", str(program)], cwd=tmp_path,
                          env=_environment(), capture_output=True, text=True, timeout=300,
                          check=False)
    assert ours.returncode == 0, ours.stderr
    lines = ours.stdout.splitlines()
    reports = [line.split(" ", 2)[2] for line in lines if line.startswith("COMPILED ")]
    assert reports or name in UNREPORTED
    expected = EAGER_MODELS.get(name)
    for reason in reports:
        assert reason.startswith(expected) if expected else reason == "None", reason
    printed = "\n".join(line for line in lines if not line.startswith("COMPILED "))
    assert_same_numbers(printed, torch_outputs[name]["stdout"])
