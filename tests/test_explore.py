"""runtime.explore's data: make_dot's graph, the engine's order, and each node's panel equal
to what the engine computed (read with node hooks in the same process)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import runtime as torch
from runtime import engine, modes
from runtime.explore import page as explore_page
from runtime.explore import recording
from runtime.viz import make_dot
from tests.explore_models import cnn_loss, deep_loss, engine_view, tiny_loss

ROOT = Path(__file__).resolve().parent.parent


def _explored(model, loss, layout="auto"):
    expected = engine_view(loss)
    with recording():
        loss.backward(retain_graph=True)
    page = torch.explore(loss, params=dict(model.named_parameters()), layout=layout)
    return page, expected


def _dot_graph(dot) -> tuple[set[str], list[tuple[str, str]]]:
    nodes = {m.group(1) for line in dot.body if (m := re.match(r"\t(\d+) \[", line))}
    edges = [(m.group(1), m.group(2)) for line in dot.body
             if (m := re.match(r"\t(\d+) -> (\d+)", line))]
    return nodes, edges


@pytest.mark.parametrize("build", [tiny_loss, cnn_loss], ids=["tinymodel", "cnn"])
def test_the_page_has_make_dots_nodes_and_edges_and_the_engines_data(build) -> None:
    model, loss = build()
    page, (order, received, produced, saved) = _explored(model, loss)
    data = page.data
    nodes, edges = _dot_graph(make_dot(loss, params=dict(model.named_parameters())))
    assert {box["id"] for box in data["boxes"]} == nodes
    assert sorted((a["tail"], a["head"]) for a in data["arrows"]) == sorted(edges)
    assert data["order"] == [str(id(node)) for node in order]
    for node in order:
        panel = data["details"][str(id(node))]
        assert panel["cls"] == type(node).__name__
        got_in = [None if s is None else tuple(s["shape"]) for s in panel["received"]]
        assert got_in == [None if g is None else tuple(g.shape) for g in received[node]]
        for edge, grad in zip(panel["edges"], produced[node], strict=True):
            if grad is None:
                assert edge["grad"] is None and edge["why"]
            else:
                assert tuple(edge["grad"]["shape"]) == tuple(grad.shape)
                assert edge["grad"]["norm"] == pytest.approx(
                    float(np.linalg.norm(grad.numpy().astype(np.float64))), rel=1e-5)
        shapes = {f["name"]: tuple(f["tensor"]["shape"]) for f in panel["saved"] if "tensor" in f}
        assert shapes == saved[node]
        doc = type(node).__doc__ or ""
        if panel["spec"] is None:
            assert "node" in panel["where"] and type(node).__name__ == "AccumulateGrad"
        else:
            for key, formula in panel["spec"]["formulas"]:
                assert f"{key}: {formula}" in " ".join(doc.split())


def test_accumulate_grad_shows_the_bias_before_and_after_the_sum() -> None:
    model, loss = tiny_loss()
    page, _ = _explored(model, loss)
    bias = model.layer2.bias
    panel = next(p for p in page.data["details"].values()
                 if p.get("variable") == str(id(bias)))
    [reduced] = panel["reduced_into"]
    assert (reduced["cls"], reduced["shape"], reduced["to"], reduced["dims"]) == (
        "AddmmBackward0", [16, 10], [10], [0])
    assert panel["received"][0]["shape"] == [10]
    # the second backward doubled .grad; each backward's received gradient is half of it
    assert reduced["column_sum"] == pytest.approx(float(bias.grad[0]) / 2, rel=1e-4)
    assert "accumulategrad-sums-the-batchs-gradients--wrong" in str(panel["tips"])


def test_sizes_saved_without_the_tensor_are_marked() -> None:
    model, loss = tiny_loss()
    page = torch.explore(loss)  # no backward: saved values read now
    addmm = next(p for p in page.data["details"].values() if p.get("cls") == "AddmmBackward0")
    marked = {f["name"]: f.get("without_tensor") for f in addmm["saved"]}
    assert marked["mat1_sym_sizes"] == "sizes" and marked["mat1"] is None
    assert page.data["order"] == [] and not page.data["backward"]


def test_a_profiled_backward_gives_times_and_flops() -> None:
    model, loss = tiny_loss()
    with recording(), torch.profiler.profile(with_flops=True):
        loss.backward()
    page = torch.explore(loss)
    addmm = [p for p in page.data["details"].values() if p.get("cls") == "AddmmBackward0"]
    assert all(p["time_us"] > 0 for p in addmm)
    assert sorted(p["flops"] for p in addmm) == [2 * 16 * 10 * 100 * 2, 2 * 16 * 100 * 1000]
    assert page.data["profiled"]


def test_the_recording_is_a_mode_only_inside_its_block() -> None:
    assert modes.op_modes() == []
    with recording() as recorder:
        assert modes.op_modes() == [recorder]
    assert modes.op_modes() == [] and not hasattr(engine, "observer")


def test_the_layered_layout_places_every_box_below_its_inputs() -> None:
    params, loss = deep_loss(20)
    page = torch.explore(loss, params=params, layout="layered")
    boxes = {b["id"]: b for b in page.data["boxes"]}
    assert page.data["layout"] == "layered"
    for arrow in page.data["arrows"]:
        assert boxes[arrow["tail"]]["y"] < boxes[arrow["head"]]["y"]
    rows: dict[float, list] = {}
    for box in boxes.values():
        rows.setdefault(box["y"], []).append(box)
    for row in rows.values():
        row.sort(key=lambda b: b["x"])
        for left, right in zip(row, row[1:], strict=False):
            assert left["x"] + left["width"] / 2 <= right["x"] - right["width"] / 2


def test_the_page_is_self_contained_and_spec_text_stays_text() -> None:
    x = torch.randn(3, requires_grad=True)
    loss = (x * 2).sum()
    page = torch.explore(loss, params={"</script><script>alert(1)</script>": x}, backward=True)
    text = page.html
    assert text.count("</script>") == 2  # the data's and the script's own
    assert not re.search(r"""(src|href)=["']?https?:""", text)
    assert "<link" not in text and "default-src 'none'" in text
    payload = re.search(r'id="explore-data">(.*?)</script>', text, re.S).group(1)
    labels = [box["label"] for box in json.loads(payload)["boxes"]]
    assert "</script><script>alert(1)</script>\n (3)" in labels  # text, read as JSON
    inline = page._repr_html_()  # a notebook's: the page in an iframe, all of it escaped
    assert inline.startswith("<iframe srcdoc=") and "<script" not in inline


def test_the_tips_linked_are_headings_of_the_tips_page() -> None:
    headings = re.findall(r"^## (.+)$", (ROOT / "docs" / "autograd-tips.md").read_text(), re.M)
    assert set(explore_page.TIPS.values()) <= set(headings)


def test_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expected a Tensor"):
        torch.explore(3)
    with pytest.raises(ValueError, match="layout"):
        torch.explore(torch.randn(2, requires_grad=True).sum(), layout="circo")


def test_the_command_writes_the_page_of_a_script(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    done = subprocess.run([sys.executable, "-m", "runtime.explore", "examples/seed_tinymodel.py",
                           "--out", str(out), "--profile"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "12 nodes of its backward" in done.stderr
    payload = re.search(r'id="explore-data">(.*?)</script>', out.read_text(), re.S).group(1)
    data = json.loads(payload)
    assert [data["details"][i]["cls"] for i in data["order"][:4]] == [
        "SumBackward0", "PowBackward0", "SubBackward0", "AddmmBackward0"]
    assert data["profiled"]
    labels = {b["label"] for b in data["boxes"]}
    assert "layer2.bias\n (10)" in labels


def test_each_arrow_runs_from_its_tail_box_to_its_head_box() -> None:
    model, loss = cnn_loss()
    page = torch.explore(loss, params=dict(model.named_parameters()), layout="dot")
    boxes = {b["id"]: b for b in page.data["boxes"]}

    def distance(point, box) -> float:
        dx = max(abs(point[0] - box["x"]) - box["width"] / 2, 0)
        dy = max(abs(point[1] - box["y"]) - box["height"] / 2, 0)
        return (dx * dx + dy * dy) ** 0.5

    for arrow in page.data["arrows"]:
        assert distance(arrow["points"][0], boxes[arrow["tail"]]) < 12
        assert distance(arrow["points"][-1], boxes[arrow["head"]]) < 12
