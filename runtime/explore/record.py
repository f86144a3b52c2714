"""What the explorer records of a backward call: the engine's order, and for each node the
gradients it received and produced, what it had saved, and what the profiler timed.

`Recording` is an op mode (runtime/modes.py): while it is on, each backward call's
`evaluate` runs through `Recording.wrap_evaluate`, and each gradient the engine sums back to
the shape of its input (a broadcast bias) is shown to `Recording.summed_to_shape` before
the sum. Values are summarised when they pass (shape, dtype,
norm, a few values): nothing keeps a gradient array, so the engine's handling of the
gradients it alone holds (AccumulateGrad keeping rather than copying) is unchanged.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from generated.explore_data import NODES as SPEC
from runtime import modes
from runtime._tensor import Tensor
from runtime.node import AccumulateGrad, Node
from runtime.profiler import recorder as profiler
from runtime.viz import saved_attributes

# How many values of a tensor a page shows, and how many backward calls a recording keeps.
VALUES = 6
KEPT_BACKWARDS = 4
SIZE_KINDS = {"sizes": "sizes", "strides": "strides", "dim": "number of dimensions",
              "numel": "number of elements", "scalar_type": "dtype",
              "list_sizes": "sizes of each tensor",
              "geometry": "sizes, strides and storage offset"}


def _array(value: Any) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


def summary(value: Any) -> dict:
    """Shape, dtype, norm and the first few values of a tensor or array."""
    data = _array(value)
    flat = data.reshape(-1)
    shown = flat[:VALUES]
    if data.dtype.kind in "fcV":
        with np.errstate(all="ignore"):
            norm = float(np.linalg.norm(flat.astype(np.float64))) if flat.size else 0.0
    elif data.dtype.kind in "iub":
        norm = float(np.linalg.norm(flat.astype(np.float64))) if flat.size else 0.0
    else:
        norm = math.nan
    return {"shape": list(data.shape), "dtype": str(data.dtype), "numel": int(data.size),
            "norm": norm, "values": [_number(v) for v in shown.tolist()]}


def _number(value: Any) -> Any:
    """A JSON-safe number: infinities and NaN as strings."""
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def saved_fields(node: Node) -> list[dict]:
    """What a node saved for backward, field by field: a tensor summarised, a value
    printed, a size kept without its tensor marked as such (from the spec's saved kinds)."""
    kinds = SPEC.get(type(node).__name__, {}).get("saved", {})
    fields = []
    for name, value in saved_attributes(node):
        kind = kinds.get(name, "")
        entry: dict[str, Any] = {"name": name, "kind": kind}
        if isinstance(value, Tensor):
            entry.update(tensor=summary(value))
        elif isinstance(value, tuple | list) and value and all(isinstance(v, Tensor)
                                                               for v in value):
            entry.update(tensors=[summary(v) for v in value])
        else:
            entry.update(value=_cut(repr(value)))
        if kind in SIZE_KINDS:
            entry["without_tensor"] = SIZE_KINDS[kind]
        fields.append(entry)
    for index, tensor in enumerate(getattr(node, "saved_tensors", None) or ()):
        if isinstance(tensor, Tensor):  # a custom Function's ctx.save_for_backward
            fields.append({"name": f"saved_tensors[{index}]", "kind": "tensor",
                           "tensor": summary(tensor)})
    return fields


def _cut(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


class NodeRun:
    """One node's run in a backward call."""

    __slots__ = ("node", "step", "received", "produced", "saved", "reduced", "time_us",
                 "flops", "grad_after")

    def __init__(self, node: Node, step: int) -> None:
        self.node = node
        self.step = step
        self.received: list[dict | None] = []
        self.produced: list[dict | None] = []
        self.saved: list[dict] = []
        self.reduced: dict[int, dict] = {}  # output index -> its gradient before sum_to
        self.time_us: float | None = None
        self.flops: int | None = None
        self.grad_after: dict | None = None  # an AccumulateGrad: the leaf's .grad after it


class BackwardRun:
    """One backward call: its nodes in the order the engine ran them."""

    def __init__(self, task: Any) -> None:
        self.create_graph = bool(getattr(task, "create_graph", False))
        self.needed = getattr(task, "needed", None)
        self.order: list[NodeRun] = []
        self.by_node: dict[Node, NodeRun] = {}

    def ran(self, node: Node) -> bool:
        return node in self.by_node

    def why_not_computed(self, node: Node, index: int, target: Node | None) -> str:
        """Why a node returned no gradient for its input `index`."""
        if target is None:
            return "no edge: this input does not require grad (a None in next_functions)"
        if self.needed is not None and target not in self.needed:
            return ("not needed by this backward (autograd.grad or inputs= asked for other "
                    "tensors): should_compute_output was False")
        return "the formula gave no gradient (the gradient it reads was undefined)"


class Recording(modes.OpMode):
    """What the explorer records, an op mode while it is on (see the module's docstring)."""

    def __init__(self, keep: int = KEPT_BACKWARDS) -> None:
        self.backwards: collections.deque[BackwardRun] = collections.deque(maxlen=keep)
        self._current: BackwardRun | None = None

    # -- the engine's side ------------------------------------------------------------------
    def wrap_evaluate(self, task: Any, evaluate: Callable) -> Callable:
        run = BackwardRun(task)
        self.backwards.append(run)

        def observed(node: Node, grads: list) -> Any:
            self._current = run
            record = NodeRun(node, len(run.order))
            run.order.append(record)
            run.by_node[node] = record
            record.received = [None if g is None else summary(g) for g in grads]
            record.saved = saved_fields(node)
            active = profiler.active()
            first = len(active.events) if active is not None else 0
            outputs = evaluate(node, grads)
            if active is not None:
                _profiled(record, active.events[first:])
            record.produced = [None if g is None else summary(g) for g in outputs]
            if isinstance(node, AccumulateGrad) and node.variable.grad is not None:
                record.grad_after = summary(node.variable.grad)
            return outputs

        return observed

    def summed_to_shape(self, node: Node, index: int, grad: Any, shape: tuple) -> None:
        run = self._current
        if run is None or node not in run.by_node:
            return
        data = _array(grad)
        entry = summary(data)
        entry["to"] = list(shape)
        entry["dims"] = _summed_dims(tuple(data.shape), tuple(shape))
        if data.ndim >= 1 and data.shape[0] > 1 and data.size:
            # The batch's sum made visible: the first value of each row, and their sum.
            column = data.reshape(data.shape[0], -1)[:, 0].astype(np.float64)
            entry["column"] = [_number(float(v)) for v in column[:VALUES]]
            entry["column_sum"] = _number(float(column.sum()))
        run.by_node[node].reduced[index] = entry

    # -- installing -------------------------------------------------------------------------
    def install(self) -> Recording:
        if self not in modes.op_modes():
            modes.push(self)
        return self

    def uninstall(self) -> None:
        if self in modes.op_modes():
            modes.pop(self)

    def __enter__(self) -> Recording:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # -- reading ----------------------------------------------------------------------------
    def backward_of(self, tensor: Tensor) -> BackwardRun | None:
        """The last recorded backward call that ran the node behind `tensor`."""
        root = tensor.grad_fn
        for run in reversed(self.backwards):
            if root is not None and run.ran(root):
                return run
        return None

    def __iter__(self) -> Iterator[BackwardRun]:
        return iter(self.backwards)


def _summed_dims(got: tuple[int, ...], shape: tuple[int, ...]) -> list[int]:
    """The dimensions of `got` that sum_to adds up to reach `shape`."""
    lead = len(got) - len(shape)
    dims = list(range(lead))
    for index, size in enumerate(shape):
        if size == 1 and got[lead + index] != 1:
            dims.append(lead + index)
    return dims


def _profiled(record: NodeRun, events: list) -> None:
    """The node's time and FLOPs from the profiler's evaluate_function event."""
    for event in events:
        if event.name.startswith("autograd::engine::evaluate_function:"):
            record.time_us = event.cpu_time_total
            record.flops = _flops(event)
            return


def _flops(event: Any) -> int:
    total, stack = 0, [event]
    while stack:
        current = stack.pop()
        total += current.flops
        stack.extend(current.cpu_children)
    return total
