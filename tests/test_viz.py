"""runtime.viz against torchviz: the same boxes, labels, colours and arrows for the same
program on gradgen and on torch (node ids differ, so the graphs are compared by structure),
the text form, and the command that draws a script's graph."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch
import torchviz

import runtime
from runtime import viz
from tests.oracle import tiny_model as tiny_model_of

# torchviz compares torch versions with distutils' LooseVersion, which warns.
pytestmark = pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning")

ROOT = Path(__file__).resolve().parent.parent

STATEMENT = re.compile(r'^\s*("[^"]*"|\S+)(?: -> ("[^"]*"|\S+))? ?(?:\[(.*)\])?$', re.S)
ATTRIBUTE = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def _unquote(text: str) -> str:
    return text[1:-1] if text.startswith('"') else text


def parse_dot(source: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, tuple]]]:
    """The nodes (id -> attributes, merged as Graphviz merges repeated statements) and the
    edges (source, target, attributes) of a DOT text as torchviz and make_dot write it."""
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, tuple]] = []
    body = source.strip()[len("digraph {"):-1]
    # One statement per line, but a label may hold newlines: split on tab-indented starts.
    for statement in re.split(r"\n\t(?=\S)", body):
        statement = statement.strip()
        if not statement or statement.startswith(("graph ", "node ")):
            continue
        match = STATEMENT.match(statement)
        assert match, statement
        first, second, attributes = match.groups()
        attrs = {key: _unquote(value) for key, value in ATTRIBUTE.findall(attributes or "")}
        if second is None:
            nodes.setdefault(_unquote(first), {}).update(attrs)
        else:
            edges.append((_unquote(first), _unquote(second), tuple(sorted(attrs.items()))))
    return nodes, edges


def canonical(source: str) -> tuple[Counter, Counter]:
    """The graph with its ids replaced by what each node is: its label and colour, the same
    of every node with an arrow into it, recursively (the arrows form no cycle), and the
    label and colour of the boxes joined to it by a line (a saved tensor, which may be a
    leaf drawn above the node). Two graphs drawn alike have equal multisets of nodes and of
    edges in this form."""
    nodes, edges = parse_dot(source)
    into: dict[str, list[str]] = {}
    lines: dict[str, list[str]] = {}
    for start, end, attrs in edges:
        if ("dir", "none") in attrs:
            lines.setdefault(start, []).append(end)
        else:
            into.setdefault(end, []).append(f"{start}{attrs}")

    def local(node: str) -> str:
        attrs = nodes.get(node, {})
        return f"{attrs.get('label', '')}|{attrs.get('fillcolor', '')}"

    memo: dict[str, str] = {}

    def signature(node: str) -> str:
        if node not in memo:
            parents = sorted(signature(entry[:entry.index("(")]) + entry[entry.index("("):]
                             for entry in into.get(node, []))
            joined = sorted(local(other) for other in lines.get(node, []))
            memo[node] = f"[{local(node)}<{parents}>{joined}]"
        return memo[node]

    node_forms = Counter(signature(node) for node in nodes)
    edge_forms = Counter((signature(start), signature(end), attrs) for start, end, attrs in edges)
    return node_forms, edge_forms


def tiny_model(lib):
    """The seed's TinyModel and its loss, built with `lib` (torch or runtime)."""
    lib.manual_seed(0)
    model = tiny_model_of(lib)
    some_input = lib.randn(16, 1000)
    ideal_output = lib.randn(16, 10)
    loss = (ideal_output - model(some_input)).pow(2).sum()
    return model, loss


def test_tinymodel_graph_matches_torchviz_with_params_and_saved_tensors() -> None:
    ours_model, ours_loss = tiny_model(runtime)
    theirs_model, theirs_loss = tiny_model(torch)
    ours = viz.make_dot(ours_loss, params=dict(ours_model.named_parameters()), show_saved=True)
    theirs = torchviz.make_dot(theirs_loss, params=dict(theirs_model.named_parameters()),
                               show_saved=True)
    assert canonical(ours.source) == canonical(theirs.source)
    nodes, edges = parse_dot(ours.source)
    colours = Counter(attrs.get("fillcolor", "grey") for attrs in nodes.values())
    # 4 parameters, 5 saved tensors (self, 2 x mat1, mat2, result), the loss, and 12 nodes:
    # 8 of ops and 4 AccumulateGrad.
    assert colours == {"lightblue": 4, "orange": 5, "darkolivegreen1": 1, "grey": 12}
    assert len(edges) == len(parse_dot(theirs.source)[1]) == 21
    assert ours.graph_attr == theirs.graph_attr and ours.node_attr == theirs.node_attr


def test_the_comparison_sees_a_difference() -> None:
    """The canonical form tells two graphs apart when one label or one arrow differs."""
    _, loss = tiny_model(runtime)
    source = viz.make_dot(loss).source
    assert canonical(source) != canonical(source.replace("ReluBackward0", "SigmoidBackward0"))
    first_edge = next(line for line in source.splitlines() if "->" in line)
    assert canonical(source) != canonical(source.replace(first_edge + "\n", "", 1))


@pytest.mark.parametrize("show_saved", [False, True])
def test_plain_graphs_and_attributes_match_torchviz(show_saved: bool) -> None:
    def program(lib):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.tensor([0.5, -1.0], requires_grad=True)
        return a, b, (a * b).exp().sum(1).pow(3).mean()

    a, b, ours = program(runtime)
    ta, tb, theirs = program(torch)
    for kwargs in ({}, {"params": {"a": a, "b": b}}):
        their_kwargs = {"params": {"a": ta, "b": tb}} if kwargs else {}
        ours_dot = viz.make_dot(ours, show_attrs=True, show_saved=show_saved, **kwargs)
        theirs_dot = torchviz.make_dot(theirs, show_attrs=True, show_saved=show_saved,
                                       **their_kwargs)
        assert canonical(ours_dot.source) == canonical(theirs_dot.source)
    ours_short = viz.make_dot(ours, show_attrs=True, max_attr_chars=5).source
    theirs_short = torchviz.make_dot(theirs, show_attrs=True, max_attr_chars=5).source
    assert "(2..." in ours_short
    assert canonical(ours_short) == canonical(theirs_short)


def test_views_and_tuples_of_outputs_match_torchviz() -> None:
    def program(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 2
        return y[0], y.sum()

    ours, theirs = program(runtime), program(torch)
    assert canonical(viz.make_dot(ours).source) == canonical(torchviz.make_dot(theirs).source)


def test_torchviz_itself_draws_gradgen_graphs_as_torchs() -> None:
    """A program that imports torchviz under `python -m runtime` hands it gradgen's tensors:
    torchviz reads their grad_fn, next_functions, variable, saved_tensors of custom
    Functions, and `_is_view()` / `_base` of every tensor it draws."""
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**2

            @staticmethod
            def backward(ctx, grad_out):
                x, = ctx.saved_tensors
                return grad_out * 2 * x

        x = lib.ones(2, 3, requires_grad=True)
        y = Square.apply(x * 2)
        grad_y, = lib.autograd.grad(y.sum(), x, create_graph=True)
        return y[0], y.sum(), grad_y

    ours, theirs = program(runtime), program(torch)
    assert canonical(torchviz.make_dot(ours).source) == canonical(
        torchviz.make_dot(theirs).source)


def test_bad_arguments_are_refused_as_torchviz_would_not_crash_on() -> None:
    with pytest.raises(TypeError, match="expected a Tensor"):
        viz.make_dot([1, 2])
    x = runtime.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="params must map names to tensors"):
        viz.make_dot(x * 2, params={"x": 3})


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program "
                    "(CI installs it: .ci/run)")
def test_renders_to_svg(tmp_path: Path) -> None:
    model, loss = tiny_model(runtime)
    dot = viz.make_dot(loss, params=dict(model.named_parameters()), show_saved=True)
    svg = dot.pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for name in ("AddmmBackward0", "layer1.weight", "TBackward0", "mat1"):
        assert name in svg


def test_text_form_is_the_seed_tree_with_names_and_shapes() -> None:
    model, loss = tiny_model(runtime)
    text = viz.graph_text(loss, dict(model.named_parameters()), show_saved=True)
    assert text.splitlines() == [
        "SumBackward0",
        "    PowBackward0  self=(16, 10)",
        "        SubBackward0",
        "            None",
        "            AddmmBackward0  mat1=(16, 100), mat2=(100, 10)",
        "                AccumulateGrad  layer2.bias (10)",
        "                ReluBackward0  result=(16, 100)",
        "                    AddmmBackward0  mat1=(16, 1000)",
        "                        AccumulateGrad  layer1.bias (100)",
        "                        None",
        "                        TBackward0",
        "                            AccumulateGrad  layer1.weight (100, 1000)",
        "                TBackward0",
        "                    AccumulateGrad  layer2.weight (10, 100)",
    ]
    # The names of the nodes are torch's, line for line.
    _, theirs = tiny_model(torch)

    def names(node, depth=0):
        if node is None:
            return ["None"]
        out = [type(node).__name__]
        for next_node, _ in node.next_functions:
            out += names(next_node, depth + 1)
        return out

    assert [line.split()[0] for line in text.splitlines()] == names(theirs.grad_fn)


def test_text_form_marks_shared_nodes_and_leaves() -> None:
    x = runtime.ones(3, requires_grad=True)
    y = x.exp()
    text = viz.graph_text(y * y, show_attrs=True)
    assert text.splitlines() == ["MulBackward0", "    ExpBackward0", "        AccumulateGrad  (3)",
                                 "    ExpBackward0 (shown above)"]
    assert viz.graph_text(x) == "a leaf (3): no graph (requires_grad=True)"


def test_command_draws_the_graph_of_a_script(tmp_path: Path) -> None:
    out = tmp_path / "graph.dot"
    command = [sys.executable, "-m", "runtime.viz", str(ROOT / "examples" / "seed_tinymodel.py"),
               "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the graph of 'loss'" in done.stderr
    nodes, edges = parse_dot(out.read_text())
    labels = sorted(attrs["label"] for attrs in nodes.values() if "fillcolor" not in attrs)
    assert labels == sorted(["SumBackward0", "PowBackward0", "SubBackward0", "AddmmBackward0",
                             "AddmmBackward0", "ReluBackward0", "TBackward0", "TBackward0"]
                            + ["AccumulateGrad"] * 4)
    leaves = sorted(attrs["label"].split("\n")[0] for attrs in nodes.values()
                    if attrs.get("fillcolor") == "lightblue")
    assert leaves == ["layer1.bias", "layer1.weight", "layer2.bias", "layer2.weight"]
    text = subprocess.run([*command[:4], "--text"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert text.returncode == 0, text.stderr
    assert "loss:\nSumBackward0\n    PowBackward0\n" in text.stdout


def test_command_picks_the_named_tensor_and_says_when_there_is_none() -> None:
    namespace = {"a": runtime.ones(2, requires_grad=True)}
    namespace["b"] = namespace["a"] * 2
    namespace["c"] = namespace["b"].sum()
    assert viz.pick_tensor(namespace, None)[0] == "c"
    assert viz.pick_tensor(namespace, "b")[0] == "b"
    with pytest.raises(SystemExit, match="no tensor named 'z'"):
        viz.pick_tensor(namespace, "z")
    with pytest.raises(SystemExit, match="no global tensor with a graph"):
        viz.pick_tensor({"a": namespace["a"]}, None)
