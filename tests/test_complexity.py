"""No function above cyclomatic complexity 20 (radon's measure): past that, a function is
several steps of an algorithm in one, and reads as none of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 20
PATHS = ["runtime/engine.py"]


def _functions(blocks: list) -> Iterator[Function]:
    """Every function and method in radon's blocks, the ones nested in them included."""
    for block in blocks:
        if isinstance(block, Function):
            yield block
            yield from _functions(block.closures)


@pytest.mark.parametrize("path", PATHS)
def test_no_function_is_above_the_limit(path: str) -> None:
    functions = list(_functions(cc_visit((ROOT / path).read_text())))
    assert functions, f"radon found no function in {path}"
    over = [f"{path}:{f.lineno} {f.fullname} ({f.complexity})" for f in functions
            if f.complexity > LIMIT]
    assert not over, f"cyclomatic complexity above {LIMIT}: {', '.join(over)}"
