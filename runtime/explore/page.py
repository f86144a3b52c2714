"""The explorer's page: what each box shows when clicked, as data, and the HTML around it.

`page_data` gathers everything the page shows into one JSON-able dict: the boxes and arrows
(graph.py), for each box its panel (class, spec entry, generated source, saved values,
gradients in and out, time and FLOPs, tips), and the order the engine ran the nodes in.
`render` writes it into one self-contained HTML file: page.css and page.js inline, the data
in a JSON script element that the script reads; nothing is fetched from anywhere. All text
reaches the page through `textContent`, never as markup.
"""

from __future__ import annotations

import html
import inspect
import json
import re
from pathlib import Path
from typing import Any

from generated.explore_data import NODES as SPEC
from runtime._tensor import Tensor
from runtime.explore import graph
from runtime.explore.record import BackwardRun, NodeRun, saved_fields, summary
from runtime.node import AccumulateGrad, Node

HERE = Path(__file__).resolve().parent
TIPS_PAGE = HERE.parent.parent / "docs" / "autograd-tips.md"

# The tips of docs/autograd-tips.md the panel links, by the heading of each section.
TIPS = {
    "leaf": "1. Only leaves get `.grad` — right",
    "tracked": "2. `requires_grad=True` means the tensor is tracked — half right",
    "accumulate": "3. AccumulateGrad sums the batch's gradients — wrong",
    "transpose": "4. `TBackward` exists because the weight is column-major — half right",
    "sum": "5. `SumBackward` expands the gradient; a missing gradient starts as ones — right",
    "sub": "6. `SubBackward` negates the right operand's gradient — right",
    "pow": "7. `PowBackward` is `pow_backward` of FunctionsManual.cpp — right",
    "batch": "8. Backward's cost is proportional to the batch — half right",
    "generated": "9. `SubBackward` is generated from atomic ops — half right",
}
BATCH_NODES = frozenset({"AddmmBackward0", "MmBackward0", "BmmBackward0",
                         "ConvolutionBackward0", "MvBackward0"})


def anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, each space a
    hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def tip_link(key: str) -> dict:
    heading = TIPS[key]
    target = TIPS_PAGE.as_uri() if TIPS_PAGE.exists() else "docs/autograd-tips.md"
    return {"title": heading.replace("`", ""), "href": f"{target}#{anchor(heading)}"}


def _tips(node: Node, run: NodeRun | None, reduced_into: list) -> list[dict]:
    name = type(node).__name__
    keys = []
    if isinstance(node, AccumulateGrad):
        keys.append("leaf")
        if reduced_into:
            keys.append("accumulate")
    if any(n is None for n, _ in node.next_functions):
        keys.append("tracked")
    keys += {"TBackward0": ["transpose"], "SumBackward0": ["sum"],
             "SubBackward0": ["sub", "generated"], "PowBackward0": ["pow"]}.get(name, [])
    if name in BATCH_NODES or (run is not None and run.reduced):
        keys.append("batch")
    return [tip_link(key) for key in dict.fromkeys(keys)]


def _source(node: Node) -> str:
    try:
        return inspect.getsource(type(node))
    except (OSError, TypeError):
        return ""


def _spec(node: Node) -> dict | None:
    entry = SPEC.get(type(node).__name__)
    if entry is None:
        return None
    return {"entry": entry["entry"], "schema": entry["schema"],
            "formulas": [list(f) for f in entry["formulas"]],
            "result": [list(r) for r in entry["result"]]}


def _where(node: Node) -> str:
    module = type(node).__module__
    return f"{module}.{type(node).__qualname__}"


def _reductions_into(node: Node, run: BackwardRun | None, ids: dict[int, str]) -> list[dict]:
    """The gradients that reached `node` summed from a broadcast shape: who made each,
    its shape before the sum, which dimensions were summed."""
    if run is None:
        return []
    found = []
    for record in run.order:
        for index, entry in record.reduced.items():
            target, _ = record.node.next_functions[index]
            if target is node:
                found.append({"from": ids.get(id(record.node)), "cls": type(record.node).__name__,
                              "index": index, **entry})
    return found


def node_panel(node: Node, run: BackwardRun | None, ids: dict[int, str]) -> dict:
    """What the panel shows of a backward node."""
    record = run.by_node.get(node) if run is not None else None
    reduced_into = _reductions_into(node, run, ids)
    panel: dict[str, Any] = {
        "type": "node", "cls": type(node).__name__, "name": node.name(),
        "spec": _spec(node), "where": _where(node), "code": _source(node),
        "ran": record is not None, "step": None if record is None else record.step,
        "reduced_into": reduced_into, "tips": _tips(node, record, reduced_into),
    }
    if isinstance(node, AccumulateGrad):
        panel["variable"] = ids.get(id(node.variable))
    edges = [{"to": None if n is None else ids.get(id(n)),
              "cls": None if n is None else type(n).__name__, "input_nr": nr}
             for n, nr in node.next_functions]
    if record is not None:
        panel["saved"] = record.saved
        panel["received"] = record.received
        for index, edge in enumerate(edges):
            grad = record.produced[index] if index < len(record.produced) else None
            edge["grad"] = grad
            if grad is None:
                target = node.next_functions[index][0]
                edge["why"] = run.why_not_computed(node, index, target)
            if index in record.reduced:
                edge["reduced"] = record.reduced[index]
        panel["time_us"], panel["flops"] = record.time_us, record.flops
        panel["grad_after"] = record.grad_after
    else:
        panel["saved"] = saved_fields(node)
        panel["received"] = None
    panel["edges"] = edges
    return panel


def tensor_panel(tensor: Tensor, kind: str, name: str | None, ids: dict[int, str]) -> dict:
    """What the panel shows of a tensor: a leaf (with its .grad), the output, a view's base."""
    grad = tensor._grad if tensor.is_leaf else None
    return {"type": "tensor", "kind": kind, "name": name or "", "tensor": summary(tensor),
            "requires_grad": tensor.requires_grad, "is_leaf": tensor.is_leaf,
            "grad": None if grad is None else summary(grad),
            "grad_fn": None if tensor.grad_fn is None else type(tensor.grad_fn).__name__,
            "tips": [tip_link("leaf")] if kind == "leaf" else []}


def page_data(outputs: tuple[Tensor, ...], title: str, params: dict[str, Tensor],
              run: BackwardRun | None, layout: str = "auto") -> dict:
    """Everything the page shows, as JSON-able data."""
    names = {id(tensor): name for name, tensor in params.items()}
    for tensor in outputs:
        names.setdefault(id(tensor), title)
    sink = graph.build(outputs, names)
    used = graph.layout(sink, layout)
    found = graph.objects(outputs)
    ids = {id(item): key for key, item in found.items()}
    details: dict[str, dict] = {}
    for key, box in sink.boxes.items():
        item = found.get(key)
        if isinstance(item, Node):
            details[key] = node_panel(item, run, ids)
        elif isinstance(item, Tensor):
            details[key] = tensor_panel(item, box.kind, names.get(id(item)), ids)
    order = [] if run is None else [ids[id(r.node)] for r in run.order if id(r.node) in ids]
    return {
        "title": title, "layout": used,
        "boxes": [vars(box) for box in sink.boxes.values()],
        "arrows": [{"tail": a.tail, "head": a.head, "style": a.style, "points": a.points}
                   for a in sink.arrows],
        "details": details, "order": order, "backward": run is not None,
        "profiled": run is not None and any(r.time_us is not None for r in run.order),
    }


def render(data: dict) -> str:
    """The self-contained page."""
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    # Inside a <script> element only `</` could end it early: written as `<\/`.
    payload = payload.replace("</", "<\\/")
    css = (HERE / "page.css").read_text(encoding="utf-8")
    script = (HERE / "page.js").read_text(encoding="utf-8")
    title = html.escape(f"gradgen explorer: {data['title']}")
    parts = {"title": title, "css": css, "script": script, "data": payload}
    # One pass: a part's own text is never searched for another's place.
    return re.sub(r"\{(title|css|script|data)\}", lambda m: parts[m.group(1)], HTML)


HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{title}</title>
<style>
{css}
</style>
</head>
<body>
<header id="bar">
  <strong id="title"></strong>
  <span class="controls">
    <button id="step-first" title="back to the start">&#x25C0;&#x25C0;</button>
    <button id="step-prev" title="previous node">&#x25C0;</button>
    <button id="step-next" title="next node the engine ran">&#x25B6;</button>
    <button id="play" title="run through every node">play</button>
    <span id="step-label"></span>
  </span>
  <span class="controls">
    <button id="fit" title="fit the graph in the window">fit</button>
    <button id="collapse" title="fold repeated blocks into one box">collapse repeats</button>
  </span>
</header>
<main>
  <div id="canvas"><svg id="graph" xmlns="http://www.w3.org/2000/svg"></svg></div>
  <aside id="panel"><p class="hint">Click a box, or step through the engine with
    &#x25B6;.</p></aside>
</main>
<script type="application/json" id="explore-data">{data}</script>
<script>
{script}
</script>
</body>
</html>
"""
