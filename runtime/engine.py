"""The backward engine: PyTorch's algorithm, in one loop without recursion.

1. Discover the graph from the roots and count, for every node, how many edges lead
   into it (its dependencies). A node may run only when all of them have delivered.
2. If only some inputs are wanted (autograd.grad, backward(inputs=...)), mark the nodes
   that lead to them; nothing else runs, and no gradient is computed that no one needs.
3. Run ready nodes from a priority queue ordered by sequence number: the node made last
   runs first, and AccumulateGrad (numbered infinity) as soon as it is ready. This gives
   PyTorch's execution order.
4. Around each node's `apply` run its hooks, in PyTorch's order: hooks on the tensors
   it made, retain_grad, the node's pre-hooks; then its post-hooks. Each gradient it
   returns is checked against the shape of the input it flows to (a broadcast input
   gets its gradient summed back, `sum_to`) and added into that node's input buffer.

A backward that records nothing (create_graph off), with no hooks in the graph and
anomaly mode off, needs no Tensors between the nodes: it runs each node's `apply_raw`
on numpy arrays and makes Tensors only for the gradients it hands out.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import warnings
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from runtime import anomaly, dtypes, forward_grad, kernels
from runtime._tensor import Tensor
from runtime.grad_mode import set_grad_enabled
from runtime.namespaces import array_ops
from runtime.node import Node

Edge = tuple[Node, int]


def _discover(roots: Sequence[Node], with_parents: bool
              ) -> tuple[dict[Node, int], dict[Node, list[Node]], bool]:
    """Dependencies of every reachable node, (if asked) who feeds whom, and whether any
    node has hooks."""
    dependencies: dict[Node, int] = {}
    parents: dict[Node, list[Node]] = {}
    hooked = False
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        if not hooked and node.has_hooks():
            hooked = True
        for next_node, _ in node._next_functions:
            if next_node is None:
                continue
            dependencies[next_node] = dependencies.get(next_node, 0) + 1
            if with_parents:
                parents.setdefault(next_node, []).append(node)
            if next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return dependencies, parents, hooked


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


def _validate_outputs(node: Node, outputs: list) -> None:
    """PyTorch's validate_outputs: one gradient per edge, each of its input's shape and dtype.

    A gradient of a broadcast shape is summed back to the input's shape (`sum_to`), so a
    formula may return `grad` for an input that was broadcast in the forward pass.
    """
    _check_count(node, outputs)
    for index, ((next_node, input_nr), grad) in enumerate(zip(node._next_functions, outputs,
                                                               strict=True)):
        if next_node is None or grad is None:
            continue
        shape, dtype = next_node._input_metadata[input_nr]
        if grad._data.shape != shape:
            _check_shape(node, index, grad._data.shape, shape)
            grad = _sum_to(grad, shape)
        if grad._data.dtype != dtype:
            grad = grad.to(dtypes.from_numpy(dtype))
        outputs[index] = grad


def _validate_raw(node: Node, outputs: list) -> None:
    """_validate_outputs for a raw backward: the gradients are numpy arrays."""
    _check_count(node, outputs)
    for index, ((next_node, input_nr), grad) in enumerate(zip(node._next_functions, outputs,
                                                               strict=True)):
        if next_node is None or grad is None:
            continue
        if type(grad) is not np.ndarray:  # a numpy scalar, from an operator on 0-d arrays
            grad = np.asarray(grad)
        shape, dtype = next_node._input_metadata[input_nr]
        if grad.shape != shape:
            _check_shape(node, index, grad.shape, shape)
            grad = kernels.sum_to(grad, shape)
        if grad.dtype is not dtype and grad.dtype != dtype:
            grad = grad.astype(dtype)
        outputs[index] = grad


def _check_count(node: Node, outputs: list) -> None:
    edges = node._next_functions
    if len(outputs) != len(edges):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients "
            f"(expected {len(edges)}, got {len(outputs)})"
        )


def _check_shape(node: Node, index: int, got: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """A gradient of another shape than its input's must be one that sums back to it."""
    if not _expandable(shape, got):
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {index} - "
            f"got {list(got)} but expected shape compatible with {list(shape)}"
        )


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
    if forward_grad.current_level() >= 0:
        return False  # with a dual level open, formulas compute tangents, on Tensors
    for grad in root_grads:
        if grad is not None and (grad.requires_grad or grad._fw_grad is not None):
            return False
    return True


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


def apply_on_arrays(node: Node, grads: list) -> list:
    """A node's apply in a raw backward: its formulas on the arrays, or, for a node written
    for Tensors alone (a user's subclass), on the arrays wrapped as Tensors."""
    if node.runs_on_arrays:
        return node.apply(grads, array_ops)
    outputs = node.apply([None if g is None else Tensor._make(g, None) for g in grads])
    return [None if g is None else g._data for g in outputs]


def _call_function(node: Node, grads: list, mask: tuple[bool, ...] | None,
                   raw_mode: bool = False) -> list:
    """PyTorch's call_function: the hooks around `apply`, and the check of its results.

    In a raw backward (no hooks anywhere) this is `apply_raw` with the mask.
    """
    if raw_mode:
        node._output_mask = mask
        try:
            outputs = apply_on_arrays(node, grads)
        finally:
            node._output_mask = None
        _validate_raw(node, outputs)
        return outputs
    grads = _call_tensor_pre_hooks(node, grads)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = _check_hook_results(hook, tuple(grads), result)
    node._output_mask = mask
    try:
        outputs = node.apply(grads)
    finally:
        node._output_mask = None
    _validate_outputs(node, outputs)
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            result = hook(tuple(outputs), tuple(grads))
            if result is not None:
                outputs = _check_hook_results(hook, tuple(outputs), result)
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
    warnings.warn(message, stacklevel=4)


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
    root_nodes = list(dict.fromkeys(node for node, _ in roots))
    filtered = bool(inputs) or not accumulate
    dependencies, parents, hooked = _discover(root_nodes, with_parents=filtered)

    # PyTorch's exec_info: with inputs, a node runs only if it is `needed`, and a node
    # that is not needed but captures a gradient only runs its tensor hooks.
    needed: set[Node] | None = None
    if filtered:
        targets = {node for node, _ in inputs}
        needed = _needed_nodes(targets, parents)
        if accumulate:
            needed |= targets
    capture_at: dict[Edge, list[int]] = {}
    if not accumulate:
        for position, target in enumerate(inputs):
            capture_at.setdefault(target, []).append(position)
    captured: list = [] if accumulate else [None] * len(inputs)
    capture_nodes = {node for node, _ in capture_at}

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

    raw_mode = _runs_raw(hooked, root_grads, create_graph)
    if raw_mode:
        root_grads = [None if grad is None else grad._data for grad in root_grads]
    for (node, index), grad in zip(roots, root_grads, strict=True):
        deliver(node, index, grad)
    for node in root_nodes:
        if dependencies.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, next(tie), node))

    if raw_mode and needed is None:
        # The common case, `loss.backward()` with no hooks and create_graph off. Operators
        # in raw formulas are numpy's: silent on 0 * inf and 1 / 0, as the kernels are.
        with kernels.silenced():
            _run_raw(ready, buffers, dependencies, keep_graph, tie)
        return []

    check_nan = anomaly.is_enabled() and anomaly.check_nan()
    # Operators in raw formulas are numpy's: silent on 0 * inf and 1 / 0, as the kernels are.
    quiet = np.errstate(invalid="ignore", divide="ignore", over="ignore") if raw_mode \
        else contextlib.nullcontext()
    with set_grad_enabled(create_graph), quiet:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node)
            edges = node._next_functions
            try:
                if needed is None and not node.has_hooks():
                    # The common case, without hooks or a filter: apply and check.
                    outputs = node.apply(grads)
                    _validate_outputs(node, outputs)
                else:
                    mask = None
                    if needed is not None:
                        runs = node in needed
                        if not runs:
                            grads = _call_tensor_pre_hooks(node, grads)
                        # Captured before the hooks of a node that runs, after the tensor
                        # hooks of one that does not: PyTorch's order.
                        for index, grad in enumerate(grads):
                            for position in capture_at.get((node, index), ()):
                                captured[position] = grad
                        if not runs:
                            continue
                        mask = tuple(n is not None and (n in needed or (n, i) in capture_at)
                                     for n, i in edges)
                    outputs = _call_function(node, grads, mask, raw_mode)
                if not keep_graph:
                    node.release_variables()
                if check_nan:
                    _check_nan(node, outputs)
            except Exception:
                if anomaly.is_enabled():
                    _warn_forward_trace(node)
                raise
            # (_validate_outputs checked that there is one gradient per edge)
            for (next_node, input_nr), grad in zip(edges, outputs, strict=False):
                if next_node is None:
                    continue
                # Add the gradient into next_node's input buffer.
                buffer = buffers.get(next_node)
                if buffer is None:
                    buffer = buffers[next_node] = [None] * max(len(next_node._input_metadata),
                                                               input_nr + 1)
                if grad is not None:
                    previous = buffer[input_nr]
                    buffer[input_nr] = grad if previous is None else previous + grad
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    if needed is None or next_node in needed or next_node in capture_nodes:
                        heapq.heappush(ready, (-next_node._sequence_nr, next(tie), next_node))
                    else:
                        buffers.pop(next_node, None)
            # Drop this node's lists: an AccumulateGrad that runs next may keep a gradient
            # that only the engine holds, instead of copying it.
            outputs = grads = grad = None
    if raw_mode:
        return [None if grad is None else Tensor._make(grad, None) for grad in captured]
    return captured


def _run_raw(ready: list, buffers: dict[Node, list], dependencies: dict[Node, int],
             keep_graph: bool, tie: Iterator[int]) -> None:
    """The loop of `execute` for a raw backward that runs every node: no hooks, no
    capture, no anomaly mode, so each step is apply_raw, the checks of _validate_raw,
    and the delivery to the next nodes, written out in one pass.

    When a node makes exactly the node that should run next ready (a chain), that node
    runs at once rather than through the queue; the order is the queue's all the same.
    """
    following = None  # the queue entry of the node to run next, if known
    while following is not None or ready:
        node = (following if following is not None else heapq.heappop(ready))[2]
        following = None
        grads = buffers.pop(node)
        edges = node._next_functions
        outputs = node.apply(grads, array_ops) if node.runs_on_arrays \
            else apply_on_arrays(node, grads)
        if len(outputs) != len(edges):
            _check_count(node, outputs)
        if not keep_graph:
            node.release_variables()
        for index, ((next_node, input_nr), grad) in enumerate(zip(edges, outputs, strict=False)):
            if next_node is None:
                continue
            buffer = buffers.get(next_node)
            if buffer is None:
                buffer = buffers[next_node] = [None] * max(len(next_node._input_metadata),
                                                           input_nr + 1)
            if grad is not None:
                if type(grad) is not np.ndarray:  # a numpy scalar, from an operator on 0-d
                    grad = np.asarray(grad)
                shape, dtype = next_node._input_metadata[input_nr]
                if grad.shape != shape:
                    _check_shape(node, index, grad.shape, shape)
                    grad = kernels.sum_to(grad, shape)
                if grad.dtype is not dtype and grad.dtype != dtype:
                    grad = grad.astype(dtype)
                previous = buffer[input_nr]
                buffer[input_nr] = grad if previous is None else previous + grad
            remaining = dependencies[next_node] - 1
            dependencies[next_node] = remaining
            if remaining == 0:
                entry = (-next_node._sequence_nr, next(tie), next_node)
                if following is None:
                    following = entry
                else:
                    heapq.heappush(ready, entry)
        if following is not None and ready and ready[0] < following:
            following = heapq.heappushpop(ready, following)
        # Drop this node's lists: an AccumulateGrad that runs next may keep a gradient
        # that only the engine holds, instead of copying it.
        outputs = grads = grad = None
