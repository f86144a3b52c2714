"""Importing a benchmark module from a test leaves the environment as it was. The benchmarks
set BLAS thread counts and drop OPENBLAS_CORETYPE before numpy loads; inside pytest numpy is
loaded already, and a changed os.environ would reach every later test's subprocesses: the
oracle programs then ran torch with one thread instead of its default (tests/programs'
torch runner), which changes the rounding of some programs' numbers."""

from __future__ import annotations

import importlib
import os
import sys

import numpy  # noqa: F401  (loaded first, as in any test process)


def test_importing_the_benchmarks_keeps_the_environment(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = dict(os.environ)
    for name in ("bench", "bench.run", "bench.batch_scaling"):
        sys.modules.pop(name, None)
        importlib.import_module(name)
    assert dict(os.environ) == before
