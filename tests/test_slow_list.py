"""tests/slow_tests.txt names tests that exist: a renamed or removed test leaves no stale
line behind (the list marks tests slow, so `pytest --quick` leaves them out)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_line_of_the_slow_list_names_a_test_function() -> None:
    lines = [line.strip() for line in
             (ROOT / "tests" / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines
    stale = []
    for line in lines:
        path, _, name = line.partition("::")
        source = ROOT / path
        if not source.is_file() or not re.search(
                rf"^(async )?def {re.escape(name)}\(", source.read_text(encoding="utf-8"), re.M):
            stale.append(line)
    assert not stale, "no such test: " + ", ".join(stale)
