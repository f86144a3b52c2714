"""The explorer's page in a real browser: Debian's chromium, headless, driven by Playwright
(nothing downloaded). No console errors, no network request; a click on every box shows
what the engine computed; the stepper follows the engine's order; 300 boxes load in < 2 s."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import runtime as torch
from runtime.explore import recording
from tests.explore_models import cnn_loss, deep_loss, engine_view, tiny_loss

sync_api = pytest.importorskip("playwright.sync_api", reason="the 'explore' extra: playwright")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file:") else None)
    started = time.perf_counter()
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, problems, time.perf_counter() - started


def _cells(page, selector: str) -> list[str]:
    return [c.text_content() for c in page.query_selector_all(selector)]


def _shape(tensor) -> str:
    return "(" + ", ".join(str(s) for s in tensor.shape) + ")"


@pytest.mark.parametrize("build", [tiny_loss, cnn_loss], ids=["tinymodel", "cnn"])
def test_click_every_box_and_step_through_the_engine(browser, build, tmp_path: Path) -> None:
    model, loss = build()
    order, received, produced, saved = engine_view(loss)
    with recording():
        loss.backward(retain_graph=True)
    path = tmp_path / "page.html"
    explored = torch.explore(loss, path, params=dict(model.named_parameters()))
    page, problems, _ = _open(browser, path)
    by_id = {str(id(node)): node for node in order}
    for box in explored.data["boxes"]:
        page.click(f"g.box[data-id='{box['id']}']")
        assert page.get_attribute("#panel", "data-id") == box["id"]
        node = by_id.get(box["id"])
        if node is None:  # a leaf or the loss: its name and shape
            assert _cells(page, "tr.tensor-row td.shape") == [box["label"].split("\n")[1].strip()]
            continue
        assert page.text_content("#panel h2.class-name") == type(node).__name__
        spec = explored.data["details"][box["id"]]["spec"]
        if spec is None:
            assert "hand-written" in page.text_content("p.handwritten")
        else:
            doc = " ".join((type(node).__doc__ or "").split())
            formulas = _cells(page, "li.formula")
            assert formulas and all(f in doc for f in formulas)
        assert _cells(page, "tr.received-row td.shape") == [_shape(g) for g in received[node]
                                                             if g is not None]
        assert _cells(page, "tr.produced-row td.shape") == [_shape(g) for g in produced[node]
                                                             if g is not None]
        assert sorted(_cells(page, "tr.saved-row:not(.value-row) td.shape")) == sorted(
            "(" + ", ".join(map(str, s)) + ")" for s in saved[node].values())
    visited = []
    for _ in order:
        page.click("#step-next")
        visited.append(page.get_attribute("#step-label", "data-id"))
        assert page.query_selector_all("g.box.running") != []
    assert visited == [str(id(node)) for node in order]
    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert problems == []


def test_a_300_box_graph_loads_in_under_two_seconds(browser, tmp_path: Path) -> None:
    params, loss = deep_loss(43)
    with recording():
        loss.backward()
    path = tmp_path / "big.html"
    explored = torch.explore(loss, path, params=params)
    assert len(explored.data["boxes"]) >= 300
    page, problems, seconds = _open(browser, path)
    assert seconds < 2.0
    assert len(page.query_selector_all("g.box")) == len(explored.data["boxes"])
    assert problems == []
