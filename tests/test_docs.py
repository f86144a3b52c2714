"""The generated code the README and the walkthrough quote is the generated code.

Each quoted block of Python is checked line by line against generated/: every line but
the `...` elisions must appear in one generated file, in the block's order. A change to
the templates that the docs do not follow fails here, not in a reader's hands.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["README.md", "docs/walkthrough.md"]
GENERATED = {p.name: p.read_text().splitlines() for p in (ROOT / "generated").glob("*.py")}


def _python_blocks(path: str) -> list[tuple[int, list[str]]]:
    """The ```python blocks of a document, with the line each starts on."""
    text = (ROOT / path).read_text()
    return [(text.count("\n", 0, m.start()) + 2, m["body"].splitlines())
            for m in re.finditer(r"```python\n(?P<body>.*?)```", text, re.S)]


def _quoted_in_order(quoted: list[str], lines: list[str]) -> bool:
    position = 0
    for line in quoted:
        try:
            position = lines.index(line, position) + 1
        except ValueError:
            return False
    return True


BLOCKS = [(path, start, body) for path in DOCS for start, body in _python_blocks(path)]


def test_the_docs_quote_generated_code() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize(("path", "start", "body"), BLOCKS,
                         ids=[f"{path}:{start}" for path, start, _ in BLOCKS])
def test_a_quoted_block_is_in_a_generated_file(path: str, start: int, body: list[str]) -> None:
    quoted = [line for line in body if line.strip() and not line.strip().startswith("...")]
    found = [name for name, lines in GENERATED.items() if _quoted_in_order(quoted, lines)]
    assert found, f"{path}:{start}: this block is not in any file of generated/ as quoted"
