"""The explorer's graph: make_dot's boxes and arrows, and where to draw them.

The boxes and arrows come from runtime.viz's own walk (`viz.draw`, the one make_dot fills a
Digraph with), so the page shows exactly make_dot's graph. They are placed by Graphviz's
`dot` when it is installed (`dot -Tplain` gives positions, the page draws them), else by a
layered layout of our own: longest-path layers, a few sweeps of barycentre ordering to
untangle the arrows, and each layer centred.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from runtime import viz
from runtime._tensor import Tensor
from runtime.node import Node

POINTS = 72.0  # Graphviz's unit is the inch; the page's, the point
CHAR_WIDTH, LINE_HEIGHT, PADDING = 6.2, 13.0, 10.0  # monospace 10px, the fallback's box sizes
LAYER_GAP, NODE_GAP = 36.0, 18.0
KINDS = {viz.LEAF_COLOR: "leaf", viz.OUTPUT_COLOR: "output", viz.BASE_COLOR: "base",
         viz.SAVED_COLOR: "saved"}


@dataclass
class Box:
    id: str
    label: str
    kind: str  # "node", "leaf", "output", "base", "saved"
    x: float = 0.0  # centre, in points, y down
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0


@dataclass
class Arrow:
    tail: str
    head: str
    style: str = "solid"  # "dotted" from a view's base; "none": a line without a head
    points: list[tuple[float, float]] = field(default_factory=list)


class Sink:
    """What `viz.draw` draws into: boxes in the order first drawn, every arrow."""

    def __init__(self) -> None:
        self.boxes: dict[str, Box] = {}
        self.arrows: list[Arrow] = []

    def node(self, name: str, label: str, **attributes: str) -> None:
        kind = KINDS.get(attributes.get("fillcolor", ""), "node")
        if name in self.boxes:  # declared again: Graphviz keeps one box, the last label
            self.boxes[name].label, self.boxes[name].kind = label, kind
        else:
            self.boxes[name] = Box(name, label, kind)

    def edge(self, tail: str, head: str, **attributes: str) -> None:
        style = "none" if attributes.get("dir") == "none" else attributes.get("style", "solid")
        self.arrows.append(Arrow(tail, head, style))


def objects(outputs: Iterable[Tensor]) -> dict[str, Any]:
    """The nodes and tensors of the graph behind `outputs`, by the id make_dot names them
    with (no recursion: a deep graph is fine)."""
    found: dict[str, Any] = {}
    stack: list[Any] = list(outputs)
    while stack:
        item = stack.pop()
        key = str(id(item))
        if item is None or key in found:
            continue
        found[key] = item
        if isinstance(item, Tensor):
            stack.append(item.grad_fn)
            stack.append(getattr(item, "_base", None))
        elif isinstance(item, Node):
            variable = getattr(item, "variable", None)
            if isinstance(variable, Tensor):
                found.setdefault(str(id(variable)), variable)
            stack.extend(next_node for next_node, _ in item.next_functions)
            stack.extend(t for t in getattr(item, "saved_tensors", None) or ()
                         if isinstance(t, Tensor))
    return found


def build(outputs: tuple[Tensor, ...], names: dict[int, str]) -> Sink:
    """make_dot's graph of `outputs` (show_saved and show_attrs off, as make_dot's default)."""
    sink = Sink()
    viz.draw(sink, outputs if len(outputs) > 1 else outputs[0], names)
    return sink


def layout(sink: Sink, engine: str = "auto") -> str:
    """Place the boxes and route the arrows: with `dot` ("dot"), our own ("layered"), or
    dot when it is installed ("auto"). Returns the layout used."""
    if engine in ("auto", "dot") and shutil.which("dot"):
        try:
            _dot_layout(sink)
            return "dot"
        except (OSError, subprocess.SubprocessError, ValueError):
            if engine == "dot":
                raise
    _layered_layout(sink)
    return "layered"


# -- Graphviz ------------------------------------------------------------------------------

def _quoted(text: str) -> str:
    """A DOT string: quotes and backslashes escaped, lines joined by DOT's left-justified
    line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\l") + '\\l"'


def dot_source(sink: Sink) -> str:
    """The graph in DOT, its boxes named n0, n1, ... (make_dot's attributes of a box)."""
    index = {key: f"n{i}" for i, key in enumerate(sink.boxes)}
    lines = ["digraph {", '  node [shape=box, fontname="monospace", fontsize=10, height=0.2];',
             "  ranksep=0.3; nodesep=0.2;"]
    for key, box in sink.boxes.items():
        lines.append(f"  {index[key]} [label={_quoted(box.label)}];")
    for arrow in sink.arrows:
        extra = ' [style=dotted]' if arrow.style == "dotted" else (
            " [dir=none]" if arrow.style == "none" else "")
        lines.append(f"  {index[arrow.tail]} -> {index[arrow.head]}{extra};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_layout(sink: Sink) -> None:
    done = subprocess.run(["dot", "-Tplain"], input=dot_source(sink), capture_output=True,
                          text=True, timeout=60, check=True)
    keys = list(sink.boxes)
    height = 0.0
    placed: dict[str, tuple[float, float, float, float]] = {}
    # dot lists the edges in an order of its own: each route is matched by its two ends.
    routes: dict[tuple[str, str], list[list[tuple[float, float]]]] = {}
    for line in done.stdout.splitlines():
        parts = shlex.split(line, posix=False)
        if not parts:
            continue
        if parts[0] == "graph":
            height = float(parts[3]) * POINTS
        elif parts[0] == "node":
            x, y, w, h = (float(v) * POINTS for v in parts[2:6])
            placed[parts[1]] = (x, y, w, h)
        elif parts[0] == "edge":
            count = int(parts[3])
            coordinates = [float(v) * POINTS for v in parts[4:4 + 2 * count]]
            route = list(zip(coordinates[::2], coordinates[1::2], strict=True))
            routes.setdefault((parts[1], parts[2]), []).append(route)
    if len(placed) != len(keys) or sum(map(len, routes.values())) != len(sink.arrows):
        raise ValueError("dot -Tplain: unexpected output")
    for i, key in enumerate(keys):
        x, y, w, h = placed[f"n{i}"]
        box = sink.boxes[key]
        box.x, box.y, box.width, box.height = x, height - y, w, h
    index = {key: f"n{i}" for i, key in enumerate(keys)}
    for arrow in sink.arrows:
        route = routes[index[arrow.tail], index[arrow.head]].pop(0)
        arrow.points = [(x, height - y) for x, y in route]


# -- our own layered layout ------------------------------------------------------------------

def _size(box: Box) -> None:
    lines = box.label.split("\n")
    box.width = max(len(line) for line in lines) * CHAR_WIDTH + 2 * PADDING
    box.height = len(lines) * LINE_HEIGHT + PADDING


def _layers(sink: Sink) -> dict[str, int]:
    """Longest-path layers, sources at the top (Kahn's order; a cycle, never made by
    make_dot, would leave its boxes in layer 0)."""
    incoming: dict[str, int] = dict.fromkeys(sink.boxes, 0)
    outgoing: dict[str, list[str]] = {key: [] for key in sink.boxes}
    for arrow in sink.arrows:
        incoming[arrow.head] += 1
        outgoing[arrow.tail].append(arrow.head)
    layer = dict.fromkeys(sink.boxes, 0)
    ready = [key for key, count in incoming.items() if count == 0]
    while ready:
        key = ready.pop()
        for head in outgoing[key]:
            layer[head] = max(layer[head], layer[key] + 1)
            incoming[head] -= 1
            if incoming[head] == 0:
                ready.append(head)
    return layer


def _order(sink: Sink, layer: dict[str, int]) -> list[list[str]]:
    """The boxes of each layer, ordered by a few down and up sweeps of barycentres."""
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    for key in sink.boxes:
        rows[layer[key]].append(key)
    above: dict[str, list[str]] = {key: [] for key in sink.boxes}
    below: dict[str, list[str]] = {key: [] for key in sink.boxes}
    for arrow in sink.arrows:
        above[arrow.head].append(arrow.tail)
        below[arrow.tail].append(arrow.head)
    position = {key: i for row in rows for i, key in enumerate(row)}
    for sweep in range(8):
        neighbours, sequence = (above, rows[1:]) if sweep % 2 == 0 else (below, rows[-2::-1])
        for row in sequence:
            centres = {}
            for index, key in enumerate(row):
                linked = [position[k] for k in neighbours[key]]
                centres[key] = sum(linked) / len(linked) if linked else index
            row.sort(key=centres.__getitem__)
            position.update({key: i for i, key in enumerate(row)})
    return rows


def _layered_layout(sink: Sink) -> None:
    for box in sink.boxes.values():
        _size(box)
    rows = _order(sink, _layers(sink))
    widths = [sum(sink.boxes[k].width for k in row) + NODE_GAP * max(len(row) - 1, 0)
              for row in rows]
    widest = max(widths, default=0.0)
    y = PADDING
    for row, width in zip(rows, widths, strict=True):
        x = (widest - width) / 2 + PADDING
        tallest = max((sink.boxes[k].height for k in row), default=0.0)
        for key in row:
            box = sink.boxes[key]
            box.x, box.y = x + box.width / 2, y + tallest / 2
            x += box.width + NODE_GAP
        y += tallest + LAYER_GAP
    for arrow in sink.arrows:
        tail, head = sink.boxes[arrow.tail], sink.boxes[arrow.head]
        arrow.points = [(tail.x, tail.y + tail.height / 2), (head.x, head.y - head.height / 2)]
