"""Every name the census finds in gradgen (bench/census.py) is proven against torch somewhere:

- by an OpInfo entry that tests/test_opinfo.py maps to gradgen (its function, or for the
  Tensor attributes its method), whose in-place variant tests/test_opinfo_inplace.py
  compares (`Tensor.NAME_`, and `torch.NAME_` where torch has one), or whose method and
  aliases tests/test_opinfo_variants.py compares; or
- by name, in the code of a test file that compares with torch (one that imports torch,
  the oracle, directly or through tests/oracle.py or tests/test_opinfo.py; tests/programs/
  among them): an identifier, an attribute or a word of a string it runs, not a comment or
  a docstring.

The test prints, per census module, how many present names are proven each way, and fails
listing any present name proven nowhere. UNCOMPARABLE holds the few names that cannot be
compared with torch, each with its reason (and where their behaviour is tested instead).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bench import census

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

# (census module, name) -> why it cannot be compared with torch.
UNCOMPARABLE: dict[tuple[str, str], str] = {
}

_ORACLE_IMPORT = re.compile(
    r"^\s*(import torch\b|from torch\b|from tests(\.oracle| import oracle| import test_opinfo)|"
    r"from tests\.test_opinfo\b|import tests\.oracle)", re.MULTILINE)


def _code_words(text: str) -> set[str]:
    """The names a file's code uses: its identifiers, attributes, imported names and the
    words of its strings (tests name ops in strings they run: `"ReLU6(True)"`), but not
    its comments, docstrings or the names of its own functions."""
    tree = ast.parse(text)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef
                                | ast.ClassDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.alias):
            words.update(node.name.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            words.update(re.findall(r"\w+", node.value))
    return words


def oracle_words() -> set[str]:
    """The names used by the code of every test file that compares with torch."""
    words: set[str] = set()
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if _ORACLE_IMPORT.search(text):
            words.update(_code_words(text))
    return words


def _census_place(name: str) -> tuple[str, str]:
    """An OpInfo name's census module and name (`nn.functional.relu` is torch.nn.functional's
    `relu`, `linalg.solve` torch.linalg's `solve`, `add` torch's)."""
    for prefix in ("nn.functional.", "linalg.", "special.", "fft."):
        if name.startswith(prefix):
            return "torch." + prefix[:-1], name.removeprefix(prefix)
    return "torch", name


def opinfo_proven() -> set[tuple[str, str]]:
    """(census module, name) pairs compared through OpInfo's samples."""
    import runtime
    from tests import test_opinfo, test_opinfo_inplace, test_opinfo_variants

    proven: set[tuple[str, str]] = set()
    for op in test_opinfo.OPS:
        name = test_opinfo._OPINFO_FUNCTIONS.get(op.name, op.name)
        module, short = _census_place(name)
        if module == "torch" and not callable(getattr(runtime, short, None)):
            module = census.TENSOR  # mapped to the Tensor method
        proven.add((module, short))
    for op in test_opinfo_inplace.OPS:
        name = getattr(op.inplace_variant, "__name__", "")
        if name.endswith("_"):
            proven.add((census.TENSOR, name))
    for op in test_opinfo_inplace.FUNCTION_OPS:
        proven.add(("torch", test_opinfo_inplace._function_name(op)))
    for _, label, *_ in test_opinfo_variants.CASES:  # methods and aliases
        owner, _, name = label.partition(".")
        proven.add((census.TENSOR, name) if owner == "Tensor" else _census_place(name))
    return proven


@pytest.fixture(scope="module")
def rows() -> list[census.Row]:
    return census.census()


def test_every_present_name_is_proven_against_torch(
    rows: list[census.Row], capsys: pytest.CaptureFixture[str]
) -> None:
    words = oracle_words()
    by_opinfo = opinfo_proven()
    unproven, lines = [], [f"{'module':28} {'present':>8} {'opinfo':>7} {'named':>6} "
                           f"{'allowed':>8} {'unproven':>9}"]
    for row in rows:
        counts = {"opinfo": 0, "named": 0, "allowed": 0, "unproven": 0}
        for name in row.present:
            if (row.module, name) in by_opinfo:
                counts["opinfo"] += 1
            elif name in words:
                counts["named"] += 1
            elif (row.module, name) in UNCOMPARABLE:
                counts["allowed"] += 1
            else:
                counts["unproven"] += 1
                unproven.append(f"{row.module}: {name}")
        lines.append(f"{row.module:28} {len(row.present):8} {counts['opinfo']:7} "
                     f"{counts['named']:6} {counts['allowed']:8} {counts['unproven']:9}")
    with capsys.disabled():  # the figures, in the log of every run
        print("\n" + "\n".join(lines))
    assert not unproven, "present in gradgen, compared with torch nowhere:\n" + "\n".join(
        unproven)


def test_the_allowlist_is_short_and_current(rows: list[census.Row]) -> None:
    """UNCOMPARABLE names only present names, and stays a short list."""
    present = {(row.module, name) for row in rows for name in row.present}
    assert set(UNCOMPARABLE) <= present, set(UNCOMPARABLE) - present
    assert len(UNCOMPARABLE) <= 10
