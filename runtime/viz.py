"""Pictures of the backward graph: torchviz's `make_dot` on gradgen, a text form for
terminals, and a command that draws the graph of a script.

PyTorch users draw a graph with torchviz (`pip install torchviz`), which ships apart from
PyTorch. `make_dot` here takes the same arguments and follows the same conventions, so a
picture of a gradgen graph reads like one of PyTorch's:

- a grey box per backward node, named as its class (`AddmmBackward0`, `AccumulateGrad`);
- a blue box per leaf that gets a `.grad` (the `variable` of an AccumulateGrad), named
  from `params` (`dict(model.named_parameters())`) and with its shape;
- an orange box per tensor a node saved for backward (`show_saved`), named after the
  saved attribute (`mat1` for `_saved_mat1`) and with its shape;
- the `_saved_*` attributes that are not tensors printed under the node's name
  (`show_attrs`);
- the output in green; an arrow from each node to the node that consumes its gradient
  (the forward direction: inputs at the top, the output at the bottom).

The Graphviz package (`pip install graphviz`, the `viz` extra) builds the `Digraph`;
rendering it to SVG or PNG needs Graphviz's `dot` program too. `graph_text` needs neither:
it prints the same graph as an indented tree, as examples/seed_tinymodel.py does.

`python -m runtime.viz prog.py [args] --out graph.svg` runs a PyTorch program on gradgen
(as `python -m runtime` does) and draws the graph behind one of its tensors; see `main`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import Any

from runtime import __main__ as runner
from runtime import aliases
from runtime._tensor import Tensor
from runtime.nn import Module
from runtime.node import Node

__all__ = ["make_dot", "draw", "graph_text", "saved_attributes", "main"]

SAVED_PREFIX = "_saved_"

# The look of torchviz's boxes: filled, monospace, small.
NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
             "ranksep": "0.1", "height": "0.2", "fontname": "monospace"}
OUTPUT_COLOR = "darkolivegreen1"
BASE_COLOR = "darkolivegreen3"  # the base of an output that is a view
LEAF_COLOR = "lightblue"
SAVED_COLOR = "orange"


def saved_attributes(node: Node) -> Iterator[tuple[str, Any]]:
    """The `_saved_*` attributes of a node, as (name without the prefix, value), in the
    alphabetical order `dir` gives. A saved tensor freed by backward (or never saved,
    when its gradient was not needed) is skipped: reading it raises, or gives None."""
    for attribute in dir(node):
        if not attribute.startswith(SAVED_PREFIX):
            continue
        try:
            value = getattr(node, attribute)
        except RuntimeError:  # freed by a backward without retain_graph
            continue
        yield attribute[len(SAVED_PREFIX):], value


def _shape(tensor: Tensor) -> str:
    """A shape as torchviz writes it: `(16, 10)`, `(10)` for one dimension, `()` for none."""
    return "(" + ", ".join(str(size) for size in tensor.shape) + ")"


def _node_label(node: Node, show_attrs: bool, max_attr_chars: int) -> str:
    """The node's class name; with `show_attrs`, a table of its saved attributes below it,
    each value cut to `max_attr_chars` characters."""
    name = type(node).__name__
    if not show_attrs:
        return name
    attrs: dict[str, str] = {}
    for key, value in saved_attributes(node):
        if isinstance(value, Tensor):
            attrs[key] = "[saved tensor]"
        elif isinstance(value, tuple) and any(isinstance(v, Tensor) for v in value):
            attrs[key] = "[saved tensors]"
        else:
            attrs[key] = str(value)
    if not attrs:
        return name
    width = min(max(len(v) for v in attrs.values()), max(max_attr_chars, 3))
    key_width = max(len(k) for k in attrs)
    rule = "-" * max(key_width + width + 2, len(name))
    rows = [f"{key:<{key_width}}: {_cut(value, width):>{width}}" for key, value in attrs.items()]
    return "\n".join([name, rule, *rows])


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _saved_tensors(node: Node) -> Iterator[tuple[str, Tensor]]:
    """The tensors a node saved: `mat1` for `_saved_mat1`, `tensors[0]` for the items of a
    saved tuple, then a custom Function's `saved_tensors`, which have no names."""
    for key, value in saved_attributes(node):
        if isinstance(value, Tensor):
            yield key, value
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                if isinstance(item, Tensor):
                    yield f"{key}[{index}]", item


def draw(dot: Any, output: Tensor | tuple[Tensor, ...], names: dict[int, str],
         show_attrs: bool = False, show_saved: bool = False, max_attr_chars: int = 50) -> None:
    """make_dot's walk of the graph: calls `dot.node(name, label, **attributes)` and
    `dot.edge(tail, head, **attributes)` for each box and arrow of make_dot's picture, as
    on a `graphviz.Digraph`; any object with those two methods can take them (runtime.explore
    draws the same graph in a page). `names` maps the id of a leaf to its name."""
    seen: set[int] = set()

    def tensor_label(tensor: Tensor, name: str | None = None) -> str:
        return f"{name or names.get(id(tensor), '')}\n {_shape(tensor)}"

    def add_node(node: Node) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if show_saved:
            for key, tensor in _saved_tensors(node):
                # A box per tensor object, as torchviz: a saved input is the caller's tensor
                # itself (a leaf saved by MulBackward0 is its blue box, now joined to the
                # node by a line), a saved output a new tensor, as PyTorch unpacks them.
                seen.add(id(tensor))
                dot.edge(str(id(node)), str(id(tensor)), dir="none")
                dot.node(str(id(tensor)), tensor_label(tensor, key), fillcolor=SAVED_COLOR)
        variable = getattr(node, "variable", None)
        if isinstance(variable, Tensor):  # an AccumulateGrad: the leaf it fills
            seen.add(id(variable))
            dot.node(str(id(variable)), tensor_label(variable), fillcolor=LEAF_COLOR)
            dot.edge(str(id(variable)), str(id(node)))
        dot.node(str(id(node)), _node_label(node, show_attrs, max_attr_chars))
        for next_node, _ in node.next_functions:
            if next_node is not None:
                dot.edge(str(id(next_node)), str(id(node)))
                add_node(next_node)
        for tensor in getattr(node, "saved_tensors", None) or ():  # a custom Function's
            dot.edge(str(id(tensor)), str(id(node)), dir="none")
            dot.node(str(id(tensor)), tensor_label(tensor), fillcolor=SAVED_COLOR)

    def add_output(tensor: Tensor, color: str = OUTPUT_COLOR) -> None:
        if id(tensor) in seen:
            return
        seen.add(id(tensor))
        dot.node(str(id(tensor)), tensor_label(tensor), fillcolor=color)
        if tensor.grad_fn is not None:
            add_node(tensor.grad_fn)
            dot.edge(str(id(tensor.grad_fn)), str(id(tensor)))
        base = getattr(tensor, "_base", None)
        if base is not None:  # a view: its base too, joined by a dotted line
            add_output(base, BASE_COLOR)
            dot.edge(str(id(base)), str(id(tensor)), style="dotted")

    for tensor in output if isinstance(output, tuple) else (output,):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"make_dot: expected a Tensor or a tuple of Tensors, got "
                            f"{type(tensor).__name__}")
        add_output(tensor)


def make_dot(output: Tensor | tuple[Tensor, ...], params: dict[str, Tensor] | None = None,
             show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> Any:
    """A `graphviz.Digraph` of the graph behind `output` (a tensor, or a tuple of them),
    as torchviz's `make_dot` draws PyTorch's.

    `params` names the leaves (`dict(model.named_parameters())`); `show_saved` adds the
    tensors each node saved for backward; `show_attrs` lists the other saved values under
    each node, cut to `max_attr_chars` characters. Render with `.render()` or `.pipe()`,
    or read the DOT text in `.source`.
    """
    try:
        from graphviz import Digraph
    except ImportError as error:
        raise ImportError("make_dot needs the graphviz package: pip install graphviz (the "
                          "'viz' extra); graph_text draws the graph without it") from error
    if params is not None and not all(isinstance(p, Tensor) for p in params.values()):
        raise TypeError("make_dot: params must map names to tensors")
    names = {} if params is None else {id(tensor): name for name, tensor in params.items()}
    dot = Digraph(node_attr=dict(NODE_ATTR), graph_attr={"size": "12,12"})
    draw(dot, output, names, show_attrs, show_saved, max_attr_chars)
    # As torchviz: a bigger drawing for a bigger graph (0.15 inch per line of DOT, 12 at least).
    size = max(12, len(dot.body) * 0.15)
    dot.graph_attr.update(size=f"{size},{size}")
    return dot


def graph_text(output: Tensor, params: dict[str, Tensor] | None = None,
               show_saved: bool = False, show_attrs: bool = False) -> str:
    """The graph behind `output` as an indented tree: one line per node, the nodes that
    receive its gradients indented below it, `None` for an input that needs none (a
    tensor that does not require grad). A leaf's AccumulateGrad shows the leaf's name (from
    `params`) and shape; `show_saved` adds the shapes of saved tensors, `show_attrs` the
    other saved values. A node reached a second time is marked `(shown above)`."""
    names = {} if params is None else {id(tensor): name for name, tensor in params.items()}
    lines: list[str] = []
    shown: set[int] = set()

    def details(node: Node) -> str:
        parts = []
        variable = getattr(node, "variable", None)
        if isinstance(variable, Tensor):
            name = names.get(id(variable))
            parts.append(f"{name} {_shape(variable)}" if name else _shape(variable))
        for key, value in saved_attributes(node):
            if isinstance(value, Tensor):
                if show_saved:
                    parts.append(f"{key}={_shape(value)}")
            elif show_attrs:
                parts.append(f"{key}={_cut(str(value), 50)}")
        return "  " + ", ".join(parts) if parts else ""

    def visit(node: Node | None, depth: int) -> None:
        indent = "    " * depth
        if node is None:
            lines.append(f"{indent}None")
            return
        if id(node) in shown:
            lines.append(f"{indent}{type(node).__name__} (shown above)")
            return
        shown.add(id(node))
        lines.append(f"{indent}{type(node).__name__}{details(node)}")
        for next_node, _ in node.next_functions:
            visit(next_node, depth + 1)

    if not isinstance(output, Tensor):
        raise TypeError(f"graph_text: expected a Tensor, got {type(output).__name__}")
    if output.grad_fn is None:
        return f"a leaf {_shape(output)}: no graph (requires_grad={output.requires_grad})"
    visit(output.grad_fn, 0)
    return "\n".join(lines)


# -- the command: draw the graph of a script ----------------------------------------------

USAGE = ("python -m runtime.viz prog.py [args ...] [--out graph.svg] [--var NAME] "
         "[--show-saved] [--show-attrs] [--text]")


def pick_tensor(namespace: dict[str, Any], name: str | None) -> tuple[str, Tensor]:
    """The tensor to draw from a finished program's globals: the one named `name`; else
    `loss` if it has a graph; else the last global (in order of assignment) with a graph."""
    if name is not None:
        value = namespace.get(name)
        if not isinstance(value, Tensor):
            raise SystemExit(f"runtime.viz: the program has no tensor named {name!r}")
        return name, value
    candidates = [(key, value) for key, value in namespace.items()
                  if isinstance(value, Tensor) and value.grad_fn is not None]
    for key, value in candidates:
        if key == "loss":
            return key, value
    if not candidates:
        raise SystemExit("runtime.viz: the program left no global tensor with a graph; name "
                         "one with --var")
    return candidates[-1]


def _parameters(namespace: dict[str, Any]) -> dict[str, Tensor]:
    """Names for leaves: the named parameters of every nn.Module among the globals (the
    module's own name first: `model.layer1.weight` is `layer1.weight`, as torchviz users
    pass it), then the leaf tensors of the globals under their variable names."""
    params: dict[str, Tensor] = {}
    for value in namespace.values():
        if isinstance(value, Module):
            for name, parameter in value.named_parameters():
                params.setdefault(name, parameter)
    for key, value in namespace.items():
        if isinstance(value, Tensor) and value.grad_fn is None and value.requires_grad:
            params.setdefault(key, value)
    return params


def _run(program: str, args: list[str]) -> dict[str, Any]:
    """Run the program on gradgen (`import torch` gives runtime) and return its globals."""
    aliases.install_as_torch()
    runner.run_program(program, args)
    return vars(sys.modules["__main__"])


def _write(dot: Any, out: str) -> None:
    """Save the DOT text (`.dot`, `.gv`) or render it with Graphviz (any format `dot`
    knows, taken from the file's extension: svg, png, pdf)."""
    stem, extension = os.path.splitext(out)
    kind = extension.lstrip(".").lower() or "svg"
    if kind in ("dot", "gv"):
        with open(out, "w", encoding="utf-8") as file:
            file.write(dot.source)
        return
    dot.render(filename=stem + ".gv", outfile=out, format=kind, cleanup=True)


def missing_renderer(out: str) -> str | None:
    """Why `out` cannot be drawn here (one line, with what to install), or None."""
    kind = os.path.splitext(out)[1].lstrip(".").lower() or "svg"
    if kind in ("dot", "gv"):
        return None
    if importlib.util.find_spec("graphviz") is None:
        return (f"runtime.viz: drawing {out} needs the graphviz package: pip install -e "
                "'.[viz]' (or write --out graph.dot, or print a tree with --text)")
    if shutil.which("dot") is None:
        return (f"runtime.viz: drawing {out} needs Graphviz's dot program: apt-get install "
                "graphviz (brew install graphviz on macOS), or write --out graph.dot, or "
                "print a tree with --text")
    return None


def main(argv: list[str] | None = None, run: Callable[[str, list[str]], dict] = _run) -> int:
    """`python -m runtime.viz prog.py [args] --out graph.svg`: run the program, then draw
    the graph behind its tensor `--var` (by default `loss`, else the last global tensor
    that has a graph). The graph is read after the program ends: if it called backward,
    the saved tensors are freed and `--show-saved` shows none (call the drawing with
    `retain_graph=True` in the program, or draw before backward with make_dot)."""
    parser = argparse.ArgumentParser(prog="python -m runtime.viz", usage=USAGE,
                                     description="Draw the backward graph of a program's tensor.",
                                     allow_abbrev=False)
    parser.add_argument("program")
    parser.add_argument("--out", default=None, help="graph.svg / .png / .pdf / .dot")
    parser.add_argument("--var", default=None, help="the global tensor to draw")
    parser.add_argument("--show-saved", action="store_true")
    parser.add_argument("--show-attrs", action="store_true")
    parser.add_argument("--text", action="store_true", help="print the tree instead")
    options, program_args = parser.parse_known_args(argv)
    missing = missing_renderer(options.out) if options.out is not None else None
    if missing is not None:  # said before the program runs, not after
        print(missing, file=sys.stderr)
        return 2
    namespace = run(options.program, program_args)
    name, tensor = pick_tensor(namespace, options.var)
    params = _parameters(namespace)
    if options.text or options.out is None:
        print(f"{name}:")
        print(graph_text(tensor, params, options.show_saved, options.show_attrs))
    if options.out is not None:
        dot = make_dot(tensor, params, options.show_attrs, options.show_saved)
        _write(dot, options.out)
        print(f"runtime.viz: the graph of {name!r} is in {options.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
