"""Commands that behave: a missing extra is named in one line, with exit status 2."""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

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
