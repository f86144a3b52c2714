"""The generator writes only its own files (refusing, untouched, a directory with anything
else in it), removes the generated files it no longer makes, and a kill at any instant leaves
the old or the new complete set, with the next run cleaning up (see codegen/output.py)."""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import codegen.__main__ as cli
from codegen import output

ROOT = Path(__file__).resolve().parent.parent
DEBRIS = ".codegen-"  # every name output.py leaves beside --out while it works contains this


def codegen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codegen", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=os.environ | {"PYTHONPATH": str(ROOT)})


def tree(root: Path) -> dict[str, bytes | str | None]:
    """Every path under `root`: a file's bytes, a symlink's target, None for a directory."""
    return {str(p.relative_to(root)): os.readlink(p) if p.is_symlink()
            else p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def contents(out: Path) -> dict[str, bytes | None]:
    """Each entry of `out`: a file's bytes, None for a directory."""
    return {p.name: None if p.is_dir() else p.read_bytes() for p in sorted(out.iterdir())}


def encoded(files: dict[str, str]) -> dict[str, bytes | None]:
    return {name: text.encode() for name, text in files.items()}


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The repository's spec and a copy with one formula edited, both named derivatives.yaml."""
    new, old = (tmp_path_factory.mktemp(n) / "derivatives.yaml" for n in ("new", "old"))
    text = (ROOT / "derivatives.yaml").read_text()
    new.write_text(text)
    edited = text.replace("  self: grad.t()\n", "  self: grad.t().t().t()\n")
    assert edited != text
    old.write_text(edited)
    return new, old


@pytest.fixture(scope="module")
def sets(specs: tuple[Path, Path]) -> tuple[dict[str, str], dict[str, str]]:
    """(new, old): two complete generated sets; the old one also has a file the new one lacks."""
    new, old = (cli.generate(spec) for spec in specs)
    old["retired.py"] = f"{output.HEADER} from derivatives.yaml, an op since removed.\n"
    assert set(old) > set(new) and old["functions.py"] != new["functions.py"]
    return new, old


# -- refusals: exit 2, one line naming the path, every byte as it was --------------------------

def assert_refused(run: subprocess.CompletedProcess, path: Path | str) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.count("\n") == 1 and str(path) in run.stderr, run.stderr
    assert run.stdout == ""


def test_an_out_that_is_a_file_is_refused(specs: tuple[Path, Path], tmp_path: Path) -> None:
    somefile = tmp_path / "somefile"
    somefile.write_text("mine\n")
    shutil.copy(specs[0], tmp_path)
    before = tree(tmp_path)
    run = codegen("--spec", str(tmp_path / "derivatives.yaml"), "--out", str(somefile))
    assert_refused(run, somefile)
    assert "not a directory" in run.stderr
    assert tree(tmp_path) == before


def test_the_spec_directory_is_refused_and_the_spec_kept(specs: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    gen.mkdir()
    shutil.copy(specs[0], gen / "derivatives.yaml")
    before = tree(tmp_path)
    run = codegen("--spec", "gen/derivatives.yaml", "--out", "gen", cwd=tmp_path)
    assert_refused(run, Path("gen") / "derivatives.yaml")
    assert tree(tmp_path) == before


def test_out_dot_is_refused(specs: tuple[Path, Path], tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    shutil.copy(specs[0], work / "derivatives.yaml")
    (work / "src" / "notes.txt").write_text("mine\n")
    before = tree(tmp_path)
    run = codegen("--spec", "derivatives.yaml", "--out", ".", cwd=work)
    assert_refused(run, "derivatives.yaml")
    assert tree(tmp_path) == before


def test_a_generated_directory_with_a_readme_is_refused(specs: tuple[Path, Path],
                                                         sets: tuple[dict, dict],
                                                         tmp_path: Path) -> None:
    out = tmp_path / "generated"
    output.write(sets[1], out)  # stale, so a run would write
    (out / "README.md").write_text("mine\n")
    before = tree(tmp_path)
    run = codegen("--spec", str(specs[0]), "--out", str(out))
    assert_refused(run, out / "README.md")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("make", [
    lambda out: (out / "ops.py").write_text("# my own ops.py, a name the generator writes\n"),
    lambda out: (out / "notes").mkdir(),
    lambda out: (out / "link.py").symlink_to(out / "ops.py"),
    lambda out: (out / "empty.py").touch(),
], ids=["headerless-ops.py", "directory", "symlink-to-generated", "empty-file"])
def test_anything_without_the_header_is_refused(make, sets: tuple[dict, dict],
                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    output.write(sets[1], out)
    make(out)
    before = tree(tmp_path)
    with pytest.raises(output.Refused, match="is not a generated file"):
        output.write(sets[0], out)
    assert tree(tmp_path) == before


def test_check_notes_a_foreign_file_but_judges_only_generated_ones(
        specs: tuple[Path, Path], sets: tuple[dict, dict], tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "out"
    output.write(sets[0], out)
    (out / "README.md").write_text("mine\n")
    before = tree(tmp_path)
    assert cli.main(["--check", "--spec", str(specs[0]), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "up to date" in captured.out and "README.md" not in captured.out
    assert f"would refuse to write {out}: {out / 'README.md'}" in captured.err
    assert tree(tmp_path) == before


# -- what a write replaces and keeps ----------------------------------------------------------

def test_a_generated_file_no_longer_made_is_removed_and_pycache_tolerated(
        sets: tuple[dict, dict], tmp_path: Path) -> None:
    new, old = sets
    out = tmp_path / "a" / "b" / "out"  # created, parents too
    assert output.write(old, out)
    (out / "__pycache__").mkdir()
    (out / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\0")
    out.chmod(0o750)
    assert output.write(new, out)
    assert contents(out) == encoded(new)  # retired.py is gone; __pycache__ went with the old set
    assert out.stat().st_mode & 0o777 == 0o750
    assert not output.write(new, out)  # up to date: nothing written
    assert os.listdir(out.parent) == ["out"]


def test_the_fallback_without_renameat2_gives_the_same_result(
        sets: tuple[dict, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new, old = sets
    out = tmp_path / "out"
    output.write(old, out)
    (out / "__pycache__").mkdir()
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    assert output.write(new, out)
    assert contents(out) == encoded(new) | {"__pycache__": None}  # files replaced one by one
    assert os.listdir(tmp_path) == ["out"]


def test_a_file_without_the_header_is_never_written(sets: tuple[dict, dict],
                                                   tmp_path: Path) -> None:
    """It would be foreign to the next run: a template that lost its header is a bug."""
    with pytest.raises(ValueError, match="would not start with"):
        output.write({**sets[0], "extra.py": "print()\n"}, tmp_path / "out")
    assert os.listdir(tmp_path) == []


def test_a_failed_exchange_leaves_the_output_untouched(
        sets: tuple[dict, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new, old = sets
    out = tmp_path / "out"
    output.write(old, out)
    before = tree(tmp_path)

    def exchange(a: Path, b: Path) -> bool:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(output, "_exchange", exchange)
    with pytest.raises(PermissionError):
        output.write(new, out)
    assert tree(tmp_path) == before


# -- kills: the old set or the new one, and the next run cleans up -----------------------------

def judge(out: Path, sets: tuple[dict, dict], mode: str) -> str:
    """What a killed write left at `out`: "old", "new", or (fallback only) a pending "mix"."""
    new, old = (encoded(files) for files in sets)
    found = contents(out)
    if found in (old, new):
        return "old" if found == old else "new"
    assert mode == "fallback", f"{out}: neither the old set nor the new one"
    assert any(".codegen-commit-" in name for name in os.listdir(out.parent)), "no commit"
    assert set(found) <= set(old) and all(found[n] in (old.get(n), new.get(n)) for n in found)
    return "mix"


def assert_recovered(out: Path, new: dict[str, str]) -> None:
    """The next write leaves the new set and nothing beside it; a committed move alone does it."""
    committed = any(".codegen-commit-" in name for name in os.listdir(out.parent))
    written = output.write(new, out)
    assert contents(out) == encoded(new)
    assert os.listdir(out.parent) == [out.name], "debris left"
    assert not (committed and written), "the committed move was not completed"


WRITER = """
import json, sys
from pathlib import Path
from codegen import output
if sys.argv[3] == "fallback":
    output._exchange = lambda a, b: False
output.write(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
"""


@pytest.mark.parametrize(("mode", "runs"), [("exchange", 30), ("fallback", 12)])
def test_a_write_killed_at_random_leaves_a_whole_set(mode: str, runs: int,
                                                     sets: tuple[dict, dict],
                                                     tmp_path: Path) -> None:
    """SIGKILL writers of the new set over the old one at times spread over a whole write."""
    new, old = sets
    files = tmp_path / "new.json"
    files.write_text(json.dumps(new))
    env = os.environ | {"CODEGEN_OUTPUT_PAUSE": "0.005", "PYTHONPATH": str(ROOT)}

    def start(run: str) -> tuple[subprocess.Popen, Path]:
        """A writer, once it has made its staging directory beside an output with the old set."""
        out = tmp_path / run / "gen"
        output.write(old, out)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(files), str(out), mode],
                                  cwd=ROOT, env=env)
        while writer.poll() is None and not any(DEBRIS in n for n in os.listdir(out.parent)):
            time.sleep(0.001)
        return writer, out

    writer, out = start("whole")  # how long a write takes on this machine, now
    began = time.monotonic()
    assert writer.wait() == 0 and contents(out) == encoded(new)
    duration = time.monotonic() - began
    rng = random.Random(1234)
    outcomes = []
    for run in range(runs):
        writer, out = start(f"run{run}")
        time.sleep(1.5 * duration * (run + rng.random()) / runs)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        outcomes.append((judge(out, sets, mode), writer.returncode == -signal.SIGKILL))
        assert_recovered(out, new)
    assert any(killed for _, killed in outcomes), outcomes  # not all over before the kill


class Killed(BaseException):
    """Stands for SIGKILL at one of output.py's steps, in-process (so the finally clauses run)."""


def stop_at(stop: int) -> Callable[[], None]:
    """A stand-in for output._pause that raises Killed at its `stop`-th call."""
    calls = itertools.count(1)

    def pause() -> None:
        if next(calls) == stop:
            raise Killed

    return pause


@pytest.mark.parametrize("mode", ["exchange", "fallback"])
def test_a_write_stopped_at_each_step_leaves_a_whole_set(mode: str, sets: tuple[dict, dict],
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic twin of the random kills: stop the write at every step in turn."""
    new, old = sets
    if mode == "fallback":
        monkeypatch.setattr(output, "_exchange", lambda a, b: False)
    outcomes = []
    for stop in range(1, 100):
        out = tmp_path / f"stop{stop}" / "gen"
        output.write(old, out)
        monkeypatch.setattr(output, "_pause", stop_at(stop))
        try:
            output.write(new, out)
        except Killed:
            outcomes.append(judge(out, sets, mode))
            monkeypatch.setattr(output, "_pause", lambda: None)
            assert_recovered(out, new)
        else:
            break
    assert set(outcomes) == {"old", "new"} | ({"mix"} if mode == "fallback" else set())


def test_the_cli_cleans_up_after_a_killed_run(specs: tuple[Path, Path], sets: tuple[dict, dict],
                                              tmp_path: Path) -> None:
    """A committed move cut short and a staging directory beside the output: the next
    `python -m codegen` completes the one (which leaves nothing to write) and deletes the other."""
    new, old = sets
    out = tmp_path / "gen"
    output.write(old, out)
    commit = tmp_path / ".gen.codegen-commit-4567cdef"
    commit.mkdir()
    (commit / output.MANIFEST).write_text("\n".join(new))
    for name, text in new.items():
        (commit if name != "functions.py" else out).joinpath(name).write_text(text)
    staging = tmp_path / ".gen.codegen-tmp-0123abcd"
    staging.mkdir()
    (staging / "ops.py").write_text(new["ops.py"][:100])
    run = codegen("--spec", str(specs[0]), "--out", str(out))
    assert run.returncode == 0 and "is up to date" in run.stdout, run.stdout + run.stderr
    assert contents(out) == encoded(new)
    assert os.listdir(tmp_path) == ["gen"]
