"""docs/autograd-tips.md runs: every snippet, in order in one session, prints the output
the page shows under it, on gradgen; the snippets marked plain `python` print the same on
torch. The pictures it shows exist, and README links to it."""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "autograd-tips.md"
# A fenced block: its info string (`python`, `python gradgen`, `text`) and its body.
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.S | re.M)
GRADGEN_IMPORT = "import runtime as torch"


def snippets(text: str) -> list[tuple[str, str, str]]:
    """(info, code, expected output) for each python block, whose output is the text block
    right after it."""
    blocks = [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]
    found = []
    for index, (info, body) in enumerate(blocks):
        if not info.startswith("python"):
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        assert following[0] == "text", f"snippet {len(found) + 1} has no output block after it"
        found.append((info, body, following[1]))
    return found


def matches(expected: str, got: str) -> bool:
    """doctest's comparison: exact, but `...` stands for any text."""
    return doctest.OutputChecker().check_output(expected, got, doctest.ELLIPSIS)


def run_all(blocks: list[tuple[str, str, str]], on_torch: bool) -> list[tuple[int, str, str]]:
    """Run the snippets in one namespace, from the repository root; (number, expected,
    printed) for each that ran."""
    namespace: dict = {"__name__": "__tips__"}
    results = []
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for number, (info, code, expected) in enumerate(blocks, 1):
            if on_torch:
                if info != "python":
                    continue
                code = code.replace(GRADGEN_IMPORT, "import torch")
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(code, f"{PAGE.name} snippet {number}", "exec"), namespace)
            results.append((number, expected, printed.getvalue()))
    finally:
        os.chdir(cwd)
    return results


def test_the_page_has_nine_tips_each_with_a_verdict_and_a_snippet() -> None:
    text = PAGE.read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d)\. .* — (right|half right|wrong)$", text, re.M)
    assert [int(number) for number, _ in headings] == list(range(1, 10))
    sections = re.split(r"^## \d\. ", text, flags=re.M)[1:]
    assert all("```python" in section for section in sections)
    table = dict(re.findall(r"^\| (\d) \| .* \| (right|half right|wrong) \|$", text, re.M))
    assert table == {number: verdict for number, verdict in headings}


def test_every_snippet_prints_what_the_page_shows_on_gradgen() -> None:
    blocks = snippets(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 10
    for number, expected, printed in run_all(blocks, on_torch=False):
        assert matches(expected, printed), \
            f"snippet {number}: the page shows\n{expected}\nbut it prints\n{printed}"


def test_the_shared_snippets_print_the_same_on_torch() -> None:
    import torch  # noqa: F401 - a test dependency: missing, this test fails

    blocks = snippets(PAGE.read_text(encoding="utf-8"))
    ran = run_all(blocks, on_torch=True)
    assert len(ran) >= 8
    for number, expected, printed in ran:
        assert matches(expected, printed), \
            f"snippet {number} on torch: the page shows\n{expected}\nbut torch prints\n{printed}"


def test_the_checker_sees_a_wrong_output() -> None:
    assert matches("a ... c\n", "a bbb c\n")
    assert not matches("True\n", "False\n")
    assert not matches("(16, 10)\n", "(16, 10)\nextra\n")


def test_pictures_exist_and_readme_links_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert set(pictures) == {"tinymodel-graph.svg", "batch-scaling.svg", "explorer.png"}
    for picture in pictures:
        if picture.endswith(".png"):  # the explorer's screenshot
            assert (PAGE.parent / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            continue
        svg = (PAGE.parent / picture).read_text(encoding="utf-8")
        assert "<svg" in svg
    graph = (PAGE.parent / "tinymodel-graph.svg").read_text(encoding="utf-8")
    for label in ("AddmmBackward0", "TBackward0", "layer1.weight", "mat1"):
        assert label in graph
    assert "docs/autograd-tips.md" in (ROOT / "README.md").read_text(encoding="utf-8")


# -- bench.batch_scaling, whose plot and fit tip 8 shows -------------------------------------

def test_batch_scaling_fits_fixed_plus_per_sample_cost() -> None:
    from bench import batch_scaling

    fixed, per_sample = batch_scaling.fit([1, 16, 256], [3e-4 + 2e-6 * b for b in (1, 16, 256)])
    assert fixed == pytest.approx(3e-4) and per_sample == pytest.approx(2e-6)
    assert batch_scaling.fixed_share(3e-4, 2e-6, 16) == pytest.approx(3e-4 / (3e-4 + 32e-6))


def test_batch_scaling_measures_both_systems_and_plots(tmp_path: Path, capsys) -> None:
    from bench import batch_scaling

    out = tmp_path / "plot.svg"
    assert batch_scaling.main(["--quick", "--repeat", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for row in ("gradgen forward", "gradgen backward", "torch forward", "torch backward"):
        assert row in printed
    assert [line.split()[0] for line in printed.splitlines()[1:4]] == ["1", "16", "256"]
    assert "<svg" in out.read_text() and "TinyModel backward" in out.read_text()


def test_batch_scaling_without_matplotlib_says_so(tmp_path: Path, capsys,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import batch_scaling

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    results = {"gradgen": {"forward": [1e-4, 2e-4], "backward": [1e-4, 3e-4],
                           "forward_fit": (1e-4, 1e-6), "backward_fit": (1e-4, 2e-6)}}
    assert batch_scaling.plot([1, 100], results, tmp_path / "p.svg") is False
    assert "matplotlib is not installed" in capsys.readouterr().err
    assert not (tmp_path / "p.svg").exists()
