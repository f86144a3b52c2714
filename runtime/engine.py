"""The backward engine: PyTorch's algorithm, in one loop without recursion.

1. Discover the graph from the roots and count, for every node, how many edges lead
   into it (its dependencies). A node may run only when all of them have delivered.
2. If only some inputs are wanted (autograd.grad, backward(inputs=...)), mark the nodes
   that lead to them; nothing else runs, and no gradient is computed that no one needs.
3. Run ready nodes from a priority queue ordered by sequence number: the node made last
   runs first, and AccumulateGrad (numbered infinity) as soon as it is ready. This gives
   PyTorch's execution order.
4. Each node's gradients are checked against the shape of the input they flow to
   (a broadcast input gets its gradient summed back, `sum_to`) and added into that
   node's input buffer.
"""

from __future__ import annotations

import heapq
import itertools
import warnings
from collections.abc import Sequence

import numpy as np

from runtime import anomaly, dtypes
from runtime.grad_mode import set_grad_enabled
from runtime.node import Node

Edge = tuple[Node, int]


def _discover(roots: Sequence[Node]) -> tuple[dict[Node, int], dict[Node, list[Node]]]:
    """Dependencies of every reachable node, and who feeds whom (for the needed-set)."""
    dependencies: dict[Node, int] = {}
    parents: dict[Node, list[Node]] = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for next_node, _ in node._next_functions:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            parents.setdefault(next_node, []).append(node)
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies, parents


def _needed_nodes(targets: set[Node], parents: dict[Node, list[Node]]) -> set[Node]:
    """Nodes with a path to a target: the only ones whose gradients anyone needs."""
    needed: set[Node] = set()
    stack = [p for t in targets for p in parents.get(t, ())]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


def _validate(node: Node, index: int, grad, metadata):
    """PyTorch's validate_outputs: sum a broadcast gradient back to the input's shape."""
    shape, dtype = metadata
    if grad.shape != shape:
        if not _expandable(shape, grad.shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(grad.shape)} but expected shape compatible with {list(shape)}"
            )
        grad = grad.sum_to_size(shape)
    if grad._data.dtype != dtype:
        grad = grad.to(dtypes.from_numpy(dtype))
    return grad


def _expandable(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `desired` (so a gradient of `desired` sums back)."""
    if len(shape) > len(desired):
        return False
    for size, target in zip(reversed(shape), reversed(desired), strict=False):
        if size != target and size != 1:
            return False
    return True


def _call_hooks(node: Node, grads: list) -> list:
    """Tensor hooks, then retain_grad, then the node's pre-hooks (PyTorch's order)."""
    for index in range(len(grads)):
        hooks = node.tensor_pre_hooks(index)
        if hooks:
            for hook in list(hooks.values()):
                result = hook(grads[index])
                if result is not None:
                    grads[index] = result
    if node._retains_grad_hooks:
        for index, hook in node._retains_grad_hooks.items():
            hook(grads[index])
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(result)
    return grads


def _apply(node: Node, grads: list) -> list:
    if node._anomaly_trace is None:
        outputs = node.apply(grads)
    else:
        try:
            outputs = node.apply(grads)
        except Exception:
            trace = "".join(node._anomaly_trace)
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the "
                f"error:\n{trace}",
                stacklevel=2,
            )
            raise
    if node._anomaly_trace is not None and anomaly.check_nan():
        for index, grad in enumerate(outputs):
            if grad is not None and np.isnan(grad._data).any():
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {index}th output."
                )
    return outputs


def execute(
    roots: Sequence[Edge],
    root_grads: Sequence,
    keep_graph: bool,
    create_graph: bool,
    capture: Sequence[Edge] = (),
    accumulate: bool = True,
) -> list:
    """Run backward from `roots`; returns the gradients flowing into the `capture` edges.

    With `accumulate` False (autograd.grad) only the captured gradients are computed, and
    no AccumulateGrad runs. With `accumulate` True and `capture` given (backward(inputs=)),
    only the gradients of those inputs are accumulated.
    """
    root_nodes = list(dict.fromkeys(node for node, _ in roots))
    dependencies, parents = _discover(root_nodes)

    needed: set[Node] | None = None
    if capture or not accumulate:
        targets = {node for node, _ in capture}
        needed = _needed_nodes(targets, parents)
        if accumulate:
            needed |= targets
    capture_at: dict[Edge, list[int]] = {}
    for position, target in enumerate(capture):
        capture_at.setdefault(target, []).append(position)
    captured: list = [None] * len(capture)
    capture_nodes = {node for node, _ in capture}

    buffers: dict[Node, list] = {}
    ready: list = []
    tie = itertools.count()  # AccumulateGrads share the number infinity

    def deliver(node: Node, index: int, grad) -> None:
        buffer = buffers.get(node)
        if buffer is None:
            buffer = buffers[node] = [None] * max(len(node._input_metadata), index + 1)
        if grad is None:
            return
        previous = buffer[index]
        buffer[index] = grad if previous is None else previous + grad

    for (node, index), grad in zip(roots, root_grads, strict=True):
        deliver(node, index, grad)
    for node in root_nodes:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(tie), node))

    with set_grad_enabled(create_graph):
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node)
            grads = _call_hooks(node, grads)
            for index, grad in enumerate(grads):
                for position in capture_at.get((node, index), ()):
                    captured[position] = grad
            if needed is not None and node not in needed:
                continue
            edges = node._next_functions
            if needed is None:
                node._output_mask = None
            else:
                node._output_mask = tuple(
                    n is not None and (n in needed or (n, i) in capture_at) for n, i in edges
                )
            outputs = _apply(node, grads)
            node._output_mask = None
            if node._post_hooks:
                for hook in list(node._post_hooks.values()):
                    result = hook(tuple(outputs), tuple(grads))
                    if result is not None:
                        outputs = list(result)
            if not keep_graph:
                node.release_variables()
            if len(outputs) != len(edges):
                raise RuntimeError(
                    f"function {node.name()} returned an incorrect number of gradients "
                    f"(expected {len(edges)}, got {len(outputs)})"
                )
            for index, ((next_node, input_nr), grad) in enumerate(zip(edges, outputs,
                                                                       strict=True)):
                if next_node is None:
                    continue
                if grad is not None:
                    grad = _validate(node, index, grad, next_node._input_metadata[input_nr])
                deliver(next_node, input_nr, grad)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    if needed is None or next_node in needed or next_node in capture_nodes:
                        heapq.heappush(ready, (-next_node._sequence_nr, next(tie), next_node))
                    else:
                        buffers.pop(next_node, None)
    return captured

