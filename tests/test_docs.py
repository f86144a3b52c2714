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


# -- measured figures: one source -------------------------------------------------------------
# A time (µs, ms) or a ratio written as `2.66×`: figures that only a benchmark run can give.
# (A shape such as `16 × 10` has spaces around its sign and is not one.)
MEASURED = re.compile(r"\d(?:\.\d+)?\s?(?:µs|ms)\b|\d×")


def test_every_quoted_figure_agrees_with_benchmarks_md() -> None:
    from bench import figures

    assert figures.disagreements(figures.SOURCE.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", __import__("bench.figures").figures.PAGES)
def test_a_page_quotes_measured_figures_only_from_benchmarks_md(page: str) -> None:
    from bench import figures

    text = (ROOT / page).read_text(encoding="utf-8")
    unmarked = figures.MARKER.sub("", text)
    found = [f"{page}:{text.count(chr(10), 0, text.find(line)) + 1}: {line.strip()}"
             for line in unmarked.splitlines() if MEASURED.search(line)]
    assert not found, ("measured figures outside a <!-- bench: NAME --> marker (see "
                       "bench/figures.py):\n" + "\n".join(found))


def test_a_marker_naming_no_figure_is_reported() -> None:
    from bench import figures

    with pytest.raises(figures.FigureError, match="no figure is named 'step.17.gradgen'"):
        figures.expected("step.17.gradgen", figures.SOURCE.read_text(encoding="utf-8"))
