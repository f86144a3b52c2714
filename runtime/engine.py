"""The backward engine: PyTorch's algorithm, in one loop without recursion.

1. Discover the graph from the roots and count, for every node, how many edges lead
   into it (its dependencies), the roots' own edges included. A node may run only when all
   of them have delivered.
2. If only some inputs are wanted (autograd.grad, backward(inputs=...)), mark the nodes
   that lead to them; nothing else runs, and no gradient is computed that no one needs.
3. Seed: deliver the root gradients along the roots' edges, as PyTorch's GraphRoot does.
4. Run ready nodes from a priority queue ordered by sequence number: the node made last
   runs first, and AccumulateGrad (numbered infinity) as soon as it is ready. This gives
   PyTorch's execution order.
5. Around each node's `apply` run its hooks, in PyTorch's order: hooks on the tensors
   it made, retain_grad, the node's pre-hooks; then its post-hooks. Each gradient it
   returns is checked against the shape of the input it flows to (a broadcast input
   gets its gradient summed back, `sum_to`) and delivered: added into that node's input
   buffer, whose dependencies count down by one; at zero, that node is ready.

A backward that records nothing (create_graph off), with no hooks in the graph and
anomaly mode off, needs no Tensors between the nodes: it runs each node's `apply` with
`array_ops`, on numpy arrays, and makes Tensors only for the gradients it hands out.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from runtime import anomaly, dtypes, forward_grad, kernels, modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import set_grad_enabled
from runtime.namespaces import array_ops
from runtime.node import AccumulateGrad, Node

Edge = tuple[Node, int]
# PyTorch's InputBuffer: a node's incoming gradients, one slot per input, summed as they come.
InputBuffer = list
# A ready node in the queue: (-sequence number, tie-breaker, node); the smallest runs first.
ReadyEntry = tuple[float, int, Node]



class GraphTask:
    """PyTorch's GraphTask: the state of one backward call, from the discovery of the graph
    to the gradients it captures."""

    __slots__ = ("keep_graph", "create_graph", "raw", "check_nan", "dependencies",
                 "input_buffers", "ready", "tie", "needed", "should_execute", "captures",
                 "captured", "array_ops")

    def __init__(self, keep_graph: bool, create_graph: bool, ops: Any = None) -> None:
        self.keep_graph = keep_graph  # retain_graph: keep saved tensors for another backward
        self.create_graph = create_graph
        self.raw = False  # whether the gradients are numpy arrays (see _runs_raw)
        self.check_nan = anomaly.is_enabled() and anomaly.check_nan()
        self.dependencies: dict[Node, int] = {}  # edges into each node yet to deliver
        self.input_buffers: dict[Node, InputBuffer] = {}
        self.ready: list[ReadyEntry] = []  # a heap
        self.tie = itertools.count()  # AccumulateGrads share the number infinity
        # PyTorch's exec_info, set by init_to_execute; None when every node runs.
        self.needed: set[Node] | None = None  # nodes whose apply runs
        self.should_execute: set[Node] | None = None  # nodes that are queued when ready
        self.captures: dict[Edge, list[int]] = {}  # edge -> positions in `captured`
        self.captured: list = []
        # What first-order formulas call their ops on (and validate_outputs its asarray and
        # sum_to): array_ops, or what an op mode (a profiler) gives in its place
        # (runtime/modes.py), or `ops` (runtime.compile's symbolic namespace, which also
        # writes each call down).
        self.array_ops = ops if ops is not None else \
            modes.array_ops(array_ops) if modes.active else array_ops

    def compute_dependencies(self, roots: Sequence[Edge], with_parents: bool
                             ) -> tuple[dict[Node, list[Node]], bool]:
        """Count the edges into every node reachable from the roots, the roots' own edges
        included. Returns who feeds whom (if asked) and whether any node has hooks."""
        dependencies = self.dependencies
        for node, _ in roots:
            if node is not None:
                dependencies[node] = dependencies.get(node, 0) + 1
        parents: dict[Node, list[Node]] = {}
        hooked = False
        stack = list(dependencies)  # a node is seen once it has a count
        while stack:
            node = stack.pop()
            # node.has_hooks(), read off the slot for all but AccumulateGrad (whose tensor's
            # hooks count too): one call fewer per node.
            if not hooked and (node._hooks is not None
                               or (type(node) is AccumulateGrad and node.has_hooks())):
                hooked = True
            for next_node, _ in node._next_functions:
                if next_node is None:
                    continue
                if next_node in dependencies:
                    dependencies[next_node] += 1
                else:
                    dependencies[next_node] = 1
                    stack.append(next_node)
                if with_parents:
                    parents.setdefault(next_node, []).append(node)
        return parents, hooked

    def init_to_execute(self, roots: Sequence[Edge], inputs: Sequence[Edge], accumulate: bool,
                        parents: dict[Node, list[Node]]) -> None:
        """PyTorch's init_to_execute: only the nodes leading to `inputs` run. With
        `accumulate` (backward) the inputs' own nodes run too; without (autograd.grad) the
        gradients flowing into `inputs` are captured instead."""
        targets = {node for node, _ in inputs}
        needed = _needed_nodes(targets, parents)
        if accumulate:
            needed |= targets
        else:
            for position, target in enumerate(inputs):
                self.captures.setdefault(target, []).append(position)
            self.captured = [None] * len(inputs)
        self.needed = needed
        # A node that captures is queued even if not needed, to run its tensor hooks; so is
        # a root nothing feeds, which is ready from the start.
        self.should_execute = (needed | {node for node, _ in self.captures}
                               | {node for node, _ in roots if node not in parents})

    def deliver(self, edges: Sequence[tuple[Node | None, int]], grads: Sequence
                ) -> ReadyEntry | None:
        """Add each gradient into the input buffer of the node its edge leads to and count
        down that node's dependencies: at zero, it is ready.

        Returns the entry of the node to run next when it is one made ready here, which then
        runs without passing through the queue (a chain's next node); the order is the
        queue's all the same.
        """
        buffers, dependencies, ready = self.input_buffers, self.dependencies, self.ready
        should_execute = self.should_execute
        following = None
        index = -1  # a counter, not zip: cheaper, and validate_outputs checked the count
        for grad in grads:
            index += 1
            node, input_nr = edges[index]
            if node is None:
                continue
            buffer = buffers.get(node)
            if buffer is None:
                size = len(node._input_metadata)
                buffer = buffers[node] = [None] * (size if input_nr < size else input_nr + 1)
            if grad is not None:
                previous = buffer[input_nr]
                buffer[input_nr] = grad if previous is None else previous + grad
            remaining = dependencies[node] - 1
            dependencies[node] = remaining
            if remaining:
                continue
            if should_execute is not None and node not in should_execute:
                del buffers[node]
                continue
            entry = (-node._sequence_nr, next(self.tie), node)
            if following is None:
                following = entry
            else:
                heapq.heappush(ready, entry)
        if following is not None and ready and ready[0] < following:
            following = heapq.heappushpop(ready, following)
        return following

    def run(self, following: ReadyEntry | None,
            evaluate: Callable[[Node, InputBuffer], Sequence]) -> None:
        """Run ready nodes until none is left: `evaluate` runs a node on its input buffer and
        returns the gradients to deliver."""
        ready, buffers, deliver = self.ready, self.input_buffers, self.deliver
        if modes.active:  # an op mode (a profiler, the explorer) may watch the nodes
            evaluate = modes.wrap_evaluate(self, evaluate)
        node = None
        try:
            while following is not None or ready:
                node = (following if following is not None else heapq.heappop(ready))[2]
                # Nothing here keeps a node's gradients past their delivery: an AccumulateGrad
                # that runs next may keep one that only the engine holds, instead of copying it.
                following = deliver(node._next_functions, evaluate(node, buffers.pop(node)))
        except Exception:
            if anomaly.is_enabled():
                _warn_forward_trace(node)
            raise

    def evaluate_raw(self, node: Node, grads: InputBuffer) -> list:
        """A node of a raw backward that runs every node: no hooks, no capture, no anomaly
        mode; `apply` on arrays, the check of its gradients, and the release of its saved
        tensors."""
        outputs = node.apply(grads, self.array_ops) if node.runs_on_arrays \
            else apply_on_arrays(node, grads)
        validate_outputs(node, outputs, True, self.array_ops)
        if not self.keep_graph and node.releases:
            node.release_variables()
        return outputs

    def evaluate_function(self, node: Node, grads: InputBuffer) -> Sequence:
        """PyTorch's evaluate_function: capture the gradients wanted here, run the node with
        its hooks, release its saved tensors. A node that is not needed runs only its tensor
        hooks, for what it captures, and returns no gradients."""
        mask = None
        if self.needed is not None:
            runs = node in self.needed
            if not runs:
                grads = _call_tensor_pre_hooks(node, grads)
            # Captured before the hooks of a node that runs, after the tensor hooks of one
            # that does not: PyTorch's order.
            self.capture(node, grads)
            if not runs:
                return ()
            mask = self.output_mask(node)
        outputs = call_function(node, grads, mask, self.raw, self.array_ops)
        if not self.keep_graph and node.releases:
            node.release_variables()
        if self.check_nan:
            _check_nan(node, outputs)
        return outputs

    def capture(self, node: Node, grads: InputBuffer) -> None:
        """Keep the gradients flowing into `node` that autograd.grad returns."""
        for index, grad in enumerate(grads):
            for position in self.captures.get((node, index), ()):
                self.captured[position] = grad

    def output_mask(self, node: Node) -> tuple[bool, ...]:
        """Which of the node's gradients anyone needs: those flowing to a needed node or
        captured (Node.should_compute_output reads it)."""
        needed, captures = self.needed, self.captures
        return tuple(n is not None and (n in needed or (n, i) in captures)
                     for n, i in node._next_functions)

    def captured_grads(self) -> list:
        """The captured gradients, as Tensors."""
        if self.raw:
            return [None if grad is None else Tensor._make(grad, None) for grad in self.captured]
        return self.captured


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


def validate_outputs(node: Node, outputs: list, arrays: bool, ops: Any = array_ops) -> None:
    """PyTorch's validate_outputs: one gradient per edge, each of its input's shape and dtype.
    The gradients are numpy arrays (`arrays`: a raw backward) or Tensors; wrong ones are
    replaced in `outputs` (on arrays, with `ops`' asarray and sum_to).

    A gradient of a broadcast shape is summed back to the input's shape (`sum_to`), so a
    formula may return `grad` for an input that was broadcast in the forward pass.
    """
    edges = node._next_functions
    if len(outputs) != len(edges):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(edges)}, got {len(outputs)})"
        )
    index = -1  # a counter, not enumerate: cheaper, in a loop over every edge of every node
    for next_node, input_nr in edges:
        index += 1
        grad = outputs[index]
        if next_node is None or grad is None:
            continue
        data = grad if arrays else grad._data
        shape, dtype = next_node._input_metadata[input_nr]
        if (type(data) is not np.ndarray or data.shape != shape
                or (data.dtype is not dtype and data.dtype != dtype)):
            outputs[index] = _conform(node, index, grad, arrays, shape, dtype, ops)


def _conform(node: Node, index: int, grad: Tensor | np.ndarray | np.generic, arrays: bool,
             shape: tuple[int, ...], dtype: np.dtype, ops: Any) -> Tensor | np.ndarray:
    """`grad` summed back to `shape` if it is of a shape that broadcasts to it, and cast to
    `dtype`; an error if it is of another shape."""
    if arrays and type(grad) is not np.ndarray:  # a numpy scalar, from an operator on 0-d arrays
        grad = ops.asarray(grad)
    got = grad.shape if arrays else grad._data.shape
    if got != shape:
        if not _expandable(shape, got):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - "
                f"got {list(got)} but expected shape compatible with {list(shape)}"
            )
        if modes.active:  # an op mode (the explorer) may show the gradient before the sum
            modes.summed_to_shape(node, index, grad, shape)
        grad = ops.sum_to(grad, shape) if arrays else _sum_to(grad, shape)
    if arrays:
        return grad if grad.dtype == dtype else kernels.cast(grad, dtype)
    return grad if grad._data.dtype == dtype else grad.to(dtypes.from_numpy(dtype))


class _Mode:
    raw_allowed = True


@contextlib.contextmanager
def tensor_backward() -> Iterator[None]:
    """Run every backward inside on Tensors (each node's `apply`), as with create_graph:
    to step through the Tensor form in a debugger, or to test the raw form against it."""
    previous, _Mode.raw_allowed = _Mode.raw_allowed, False
    try:
        yield
    finally:
        _Mode.raw_allowed = previous


def _runs_raw(hooked: bool, root_grads: Sequence, create_graph: bool) -> bool:
    """Whether this backward can run on arrays: nothing in it needs to see a Tensor."""
    if hooked or not _Mode.raw_allowed or create_graph or anomaly.is_enabled():
        return False
    if modes.active and modes.tensor_backward():  # a TorchDispatchMode hears backward's ops
        return False
    if forward_grad.current_level() >= 0:
        return False  # with a dual level open, formulas compute tangents, on Tensors
    for grad in root_grads:
        if grad is not None and (grad.requires_grad or grad._fw_grad is not None):
            return False
    return True


def apply_on_arrays(node: Node, grads: list, ops: object = array_ops) -> list:
    """A node's apply in a raw backward: its formulas on the arrays (array_ops), or, for a
    node written for Tensors alone (a user's subclass, a custom Function's), on the arrays
    wrapped as Tensors, with grad mode off as in any backward without create_graph."""
    if node.runs_on_arrays:
        return node.apply(grads, ops)
    with set_grad_enabled(False):
        outputs = node.apply([None if g is None else Tensor._make(g, None) for g in grads])
    return [None if g is None else g._data for g in outputs]


def _sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum a broadcast gradient back to `shape`: with an op when a graph is being built
    (create_graph) or the gradient has a tangent (forward AD), else directly on the array."""
    if grad.requires_grad or grad._fw_grad is not None:
        return grad.sum_to_size(shape)
    return Tensor._make(kernels.sum_to(grad._data, shape), None)


def _expandable(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to `desired` (so a gradient of `desired` sums back)."""
    if len(shape) > len(desired):
        return False
    for size, target in zip(reversed(shape), reversed(desired), strict=False):
        if size != target and size != 1:
            return False
    return True


def _hook_name(hook: Callable) -> str:
    return getattr(hook, "__name__", "<unknown>")


def _check_hook_result(hook: Callable, original, result) -> None:
    """PyTorch's checks on a gradient that a hook returned in place of `original`."""
    if result is None:
        return
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != original._data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was "
            f"{dtypes.type_string(original._data)} got {dtypes.type_string(result._data)})"
        )
    if result._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _check_hook_results(hook: Callable, originals: tuple, results) -> list:
    """A node hook returns a tuple with one gradient (or None) per gradient it was given."""
    if not isinstance(results, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(results).__name__}'")
    if len(results) != len(originals):
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(results)}, but expected {len(originals)})"
        )
    for original, result in zip(originals, results, strict=True):
        _check_hook_result(hook, original, result)
    return list(results)


def _call_tensor_pre_hooks(node: Node, grads: list) -> list:
    """Hooks registered on the tensors this node made (Tensor.register_hook), then retain_grad."""
    if not node.has_tensor_hooks():
        return grads
    for index in range(len(grads)):
        hooks = node.tensor_pre_hooks(index)
        if hooks:
            for hook in list(hooks.values()):
                result = hook(grads[index])
                _check_hook_result(hook, grads[index], result)
                if result is not None:
                    grads[index] = result
    if node._retains_grad_hooks:
        for index, hook in node._retains_grad_hooks.items():
            hook(grads[index])
    return grads


def _call_pre_hooks(node: Node, grads: list) -> list:
    """The tensor hooks, then the node's own pre-hooks (register_prehook)."""
    grads = _call_tensor_pre_hooks(node, grads)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = _check_hook_results(hook, tuple(grads), result)
    return grads


def _call_post_hooks(node: Node, outputs: list, grads: list) -> list:
    """The node's post-hooks (register_hook), which may replace its gradients."""
    for hook in list(node._post_hooks.values()):
        result = hook(tuple(outputs), tuple(grads))
        if result is not None:
            outputs = _check_hook_results(hook, tuple(outputs), result)
    return outputs


def call_function(node: Node, grads: list, mask: tuple[bool, ...] | None, arrays: bool,
                  ops: object = array_ops) -> list:
    """PyTorch's call_function: the hooks around `apply`, and the check of its results.

    `mask` says which gradients are needed (None: all that have an edge). A raw backward
    (`arrays`) has no hooks and runs `apply` on arrays, with `ops`.
    """
    hooked = node.has_hooks()
    if hooked:
        grads = _call_pre_hooks(node, grads)
    node._output_mask = mask
    try:
        outputs = apply_on_arrays(node, grads, ops) if arrays else node.apply(grads)
    finally:
        node._output_mask = None
    validate_outputs(node, outputs, arrays)
    if hooked and node._post_hooks:
        outputs = _call_post_hooks(node, outputs, grads)
    return outputs


def _check_nan(node: Node, outputs: list) -> None:
    for index, grad in enumerate(outputs):
        if grad is not None and np.isnan(grad._data).any():
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {index}th output."
            )


def _warn_forward_trace(node: Node) -> None:
    """Anomaly mode: say which forward call made the node whose backward failed."""
    if node._anomaly_trace is None:
        message = (f"Error detected in {node.name()}. No forward pass information available. "
                   "Enable detect anomaly during forward pass for more information.")
    else:
        message = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
                   f"error:\n{''.join(node._anomaly_trace)}")
    # Attributed to the caller of autograd.backward or autograd.grad, past GraphTask.run
    # and execute.
    warn_at_caller(message)


def execute(
    roots: Sequence[Edge],
    root_grads: Sequence,
    keep_graph: bool,
    create_graph: bool,
    inputs: Sequence[Edge] = (),
    accumulate: bool = True,
) -> list:
    """Run backward from `roots`; returns the gradients flowing into `inputs` (autograd.grad).

    With `accumulate` (backward) and `inputs` given, only the nodes leading to the inputs
    run, the inputs' own nodes included (their AccumulateGrad, or the node whose
    retain_grad hook fills a non-leaf's .grad); nothing is returned. Without `accumulate`
    (autograd.grad) the gradients reaching `inputs` are captured and no AccumulateGrad runs.
    """
    task = GraphTask(keep_graph, create_graph)
    filtered = bool(inputs) or not accumulate
    parents, hooked = task.compute_dependencies(roots, with_parents=filtered)
    if filtered:
        task.init_to_execute(roots, inputs, accumulate, parents)
    task.raw = _runs_raw(hooked, root_grads, create_graph)
    if task.raw:
        root_grads = [None if grad is None else grad._data for grad in root_grads]
    # The root gradients, delivered as PyTorch's GraphRoot node delivers them.
    following = task.deliver(roots, root_grads)
    if task.raw and not filtered:
        # The common case, `loss.backward()` with no hooks and create_graph off. Operators
        # in raw formulas are numpy's: silent on 0 * inf and 1 / 0, as the kernels are.
        with kernels.silenced():
            task.run(following, task.evaluate_raw)
        return []
    quiet = kernels.silenced() if task.raw else contextlib.nullcontext()
    with set_grad_enabled(task.create_graph), quiet:
        task.run(following, task.evaluate_function)
    return task.captured_grads()
