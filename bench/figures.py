"""One source for the figures the docs quote: BENCHMARKS.md, as `bench/run.py` writes it.

    python -m bench.figures            check: exit 1, naming each figure, where a page
                                       quotes another value than BENCHMARKS.md holds
    python -m bench.figures --write    rewrite the quoted figures from BENCHMARKS.md
                                       (bench/run.py does this after a full run)

A page quotes a measured figure only inside a marker that names it,

    the step costs <!-- bench: step.16.gradgen -->2.66×<!-- /bench --> numpy's time

and FIGURES says where in BENCHMARKS.md each name is read: a cell of one of its tables
(the section whose heading starts with the given words, the row whose first cell is the
given label, the column of the given header; `ratio` keeps the `(2.66×)` part of a cell,
`time` the rest), or a pattern in its text. tests/test_docs.py fails on a marker that
disagrees with BENCHMARKS.md and on a measured figure outside a marker, so two pages
cannot quote two different costs of the same thing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "BENCHMARKS.md"
# The pages whose figures come from BENCHMARKS.md: the README and every page of docs/ but
# the two written whole by their own commands (census.md, compare-torch.md).
WRITTEN_WHOLE = {"docs/census.md", "docs/compare-torch.md"}
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")
                              if p.relative_to(ROOT).as_posix() not in WRITTEN_WHOLE)]
MARKER = re.compile(r"<!-- bench: (?P<name>[\w.\-]+) -->(?P<value>.*?)<!-- /bench -->")


class FigureError(LookupError):
    """A figure FIGURES names is not where it says in BENCHMARKS.md."""


def sections(text: str) -> dict[str, list[list[str]]]:
    """Each `## ` section of BENCHMARKS.md: its table rows, as lists of cells."""
    found: dict[str, list[list[str]]] = {}
    rows: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            rows = found.setdefault(line[3:].strip(), [])
        elif line.startswith("|") and not set(line) <= set("|-: "):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return found


def cell(section: str, row: str, column: str, part: str = "all") -> Callable[[str], str]:
    """The figure in a table cell: all of it, its `ratio` (in brackets) or its `time`."""
    def read(text: str) -> str:
        tables = [rows for heading, rows in sections(text).items()
                  if heading.startswith(section)]
        if not tables:
            raise FigureError(f"no section of BENCHMARKS.md starts with {section!r}")
        header, *body = tables[0]
        if column not in header:
            raise FigureError(f"{section!r} has no column {column!r}")
        value = next((r[header.index(column)] for r in body if r and r[0] == row), None)
        if value is None:
            raise FigureError(f"{section!r} has no row {row!r}")
        ratio = re.search(r"\(([^)]*)\)", value)
        if part == "ratio":
            if ratio is None:
                raise FigureError(f"{section!r}, {row}, {column}: no ratio in {value!r}")
            return ratio[1]
        return value[:ratio.start()].strip() if part == "time" and ratio else value
    return read


def pattern(regex: str) -> Callable[[str], str]:
    """The figure a pattern's first group finds in BENCHMARKS.md's text."""
    def read(text: str) -> str:
        found = re.search(regex, text)
        if found is None:
            raise FigureError(f"BENCHMARKS.md has no match for {regex!r}")
        return found[1]
    return read


_STEP = "TinyModel training step"
_CHAIN = "Per op and per node"
_DRAWS = "Random draws"
FIGURES: dict[str, Callable[[str], str]] = {
    **{f"step.{batch}.{system}": cell(_STEP, str(batch), system, "ratio")
       for batch in (16, 256, 4096) for system in ("gradgen", "compiled", "torch")},
    **{f"step.{batch}.numpy": cell(_STEP, str(batch), "numpy", "time")
       for batch in (16, 256, 4096)},
    **{f"chain.{system}.{way}": cell(_CHAIN, system, column)
       for system in ("gradgen", "torch")
       for way, column in (("forward", "forward µs/op"), ("backward", "backward µs/node"),
                           ("forward-gc-off", "forward, GC off"))},
    "fit.fixed": pattern(r"Least-squares fit: (-?[\d.]+ µs) fixed"),
    "fit.per-sample": pattern(r"fixed \+ ([\d.]+ µs) per sample"),
    "fit.fixed-share.16": pattern(r"The fixed part is (\d+%) of backward at batch 16"),
    "memory.gradgen": cell("A 100,000-op chain", "gradgen", "bytes kept per node"),
    "memory.torch": cell("A 100,000-op chain", "torch", "bytes kept per node"),
    **{f"draws.{what}.{dtype}.{other}": cell(_DRAWS, f"{what}(1e+06), {dtype}",
                                              f"gradgen / {other}")
       for what in ("rand", "randn") for dtype in ("float32", "float64")
       for other in ("numpy", "torch")},
}


def expected(name: str, text: str) -> str:
    if name not in FIGURES:
        raise FigureError(f"no figure is named {name!r} (bench/figures.py FIGURES)")
    return FIGURES[name](text)


def disagreements(text: str) -> list[str]:
    """`page:line: name quotes X, BENCHMARKS.md has Y` for each marker that disagrees."""
    found = []
    for page in PAGES:
        content = (ROOT / page).read_text(encoding="utf-8")
        for marker in MARKER.finditer(content):
            line = content.count("\n", 0, marker.start()) + 1
            try:
                value = expected(marker["name"], text)
            except FigureError as error:
                found.append(f"{page}:{line}: {error}")
                continue
            if marker["value"] != value:
                found.append(f"{page}:{line}: {marker['name']} quotes {marker['value']!r}, "
                             f"BENCHMARKS.md has {value!r}")
    return found


def write(text: str) -> list[str]:
    """Rewrite every marker of every page from BENCHMARKS.md; the pages changed."""
    changed = []
    for page in PAGES:
        path = ROOT / page
        content = path.read_text(encoding="utf-8")
        new = MARKER.sub(lambda m: f"<!-- bench: {m['name']} -->{expected(m['name'], text)}"
                                   "<!-- /bench -->", content)
        if new != content:
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.figures",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true",
                        help="rewrite the pages' figures from BENCHMARKS.md")
    args = parser.parse_args(argv)
    text = SOURCE.read_text(encoding="utf-8")
    if args.write:
        changed = write(text)
        print(f"rewrote the figures of {len(changed)} page(s): {', '.join(changed) or '-'}")
        return 0
    wrong = disagreements(text)
    print("\n".join(wrong) or f"every figure of {len(PAGES)} pages agrees with BENCHMARKS.md")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
