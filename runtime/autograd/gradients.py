"""backward and grad: the gradients of outputs with respect to inputs, through the engine.

`runtime.autograd` exports them (as torch.autograd does); they live in a module of their
own so that the autograd modules built on them (functional, gradcheck) import them from
below, not from the package that imports those modules.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from generated import ops
from runtime import engine
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.factories import ones_like, zeros_like
from runtime.node import gradient_edge

__all__ = ["backward", "grad"]


def _as_tuple(value: Tensor | Sequence[Tensor] | None) -> tuple:
    if value is None:
        return ()
    if isinstance(value, Tensor):
        return (value,)
    return tuple(value)


def _ones(data: np.ndarray) -> np.ndarray:
    """Ones of data's shape and dtype: for a 0-dim loss, the usual one, without np.ones's
    Python layers."""
    return np.array(1, data.dtype) if data.ndim == 0 else np.ones(data.shape, data.dtype)


def _make_grads(outputs: tuple, grad_outputs: tuple, create_graph: bool) -> list:
    """The gradients the roots start from: given ones, or 1 for a scalar output.

    Like PyTorch, extra gradients are ignored and missing ones are an error.
    """
    if not grad_outputs:
        grad_outputs = (None,) * len(outputs)
    grads = []
    for i, (output, given) in enumerate(zip(outputs, grad_outputs, strict=False)):
        if given is None:
            if not output.requires_grad:
                grads.append(None)  # the root check reports it
                continue
            if output.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            # With no mode to hear ones_like (runtime/modes.py), its ones made directly: the
            # argument handling of the factory costs more than the rest of a small backward.
            grads.append(ones_like(output) if _modes.active
                         else Tensor._make(_ones(output._data), None))
            continue
        if not isinstance(given, Tensor):
            raise TypeError(f"gradient must be a Tensor or None, not {type(given).__name__}")
        if given.shape != output.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {given.shape} and "
                f"output[{i}] has a shape of {output.shape}."
            )
        grads.append(given if create_graph else given.detach())
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return grads


def _root_edges(outputs: tuple) -> list:
    edges = []
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(gradient_edge(output))
    return edges


_warned_create_graph_cycle = False


def _warn_create_graph_cycle() -> None:
    """PyTorch's warning, given once per process like its TORCH_WARN_ONCE."""
    global _warned_create_graph_cycle
    _warned_create_graph_cycle = True
    warn_at_caller(
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this "
        "function, make sure to reset the .grad fields of your parameters to None after use "
        "to break the cycle and avoid the leak.",
        UserWarning,
    )


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Tensor | Sequence[Tensor | None] | None = None,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate into `.grad` of the leaves (or of `inputs`) the gradient of `tensors`.
    `grad_variables` is the deprecated name of `grad_tensors`."""
    if grad_variables is not None:
        warn_at_caller("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                       FutureWarning)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments "
                               "both passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if _modes.active:  # a mode may hear the call (runtime/modes.py), by its current names
        heard = _modes.dispatch(backward, (tensors, grad_tensors, retain_graph, create_graph),
                                {"inputs": inputs})
        if heard is not _modes.PASS:
            return heard
    outputs = _as_tuple(tensors)
    grad_outputs = _as_tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _warned_create_graph_cycle:
        _warn_create_graph_cycle()
    wanted = _as_tuple(inputs)
    if inputs is not None and not wanted:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    roots = _root_edges(outputs)
    # As in PyTorch, a non-leaf named in `inputs` gets its gradient through retain_grad.
    for tensor in wanted:
        tensor.retain_grad()
    engine.execute(roots, grads, retain_graph, create_graph, [gradient_edge(t) for t in wanted])


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor] | dict[str, Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple | dict:
    """The gradients of `outputs` with respect to `inputs`, leaving every `.grad` alone.

    `inputs` given as a dict gives a dict of gradients under the same names. With
    `is_grads_batched`, the first dimension of every grad_output indexes a batch of
    cotangents: one gradient per batch entry, stacked (torch vectorises this with vmap;
    here it is a loop over the batch, each pass keeping the graph for the next).
    `only_inputs` is deprecated and ignored, as in torch.
    """
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(grad, (outputs, inputs, grad_outputs, retain_graph, create_graph,
            only_inputs, allow_unused, is_grads_batched, materialize_grads), {})
        if heard is not _modes.PASS:
            return heard
    if not only_inputs:
        warn_at_caller("only_inputs argument is deprecated and is ignored now (defaults to "
                       "True). To accumulate gradient for other parts of the graph, please use "
                       "torch.autograd.backward.", FutureWarning)
    names = list(inputs) if isinstance(inputs, dict) else None
    outs = _as_tuple(outputs)
    ins = tuple(inputs.values()) if names is not None else _as_tuple(inputs)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        captured = _batched(outs, ins, _as_tuple(grad_outputs), retain_graph, create_graph)
    else:
        captured = _captured(outs, ins, _as_tuple(grad_outputs), retain_graph, create_graph)
    results = []
    for i, (tensor, grad_) in enumerate(zip(ins, captured, strict=True)):
        if grad_ is None:
            if materialize_grads:
                grad_ = zeros_like(tensor)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
        results.append(grad_)
    if names is not None:
        return dict(zip(names, results, strict=True))
    return tuple(results)


def _captured(outs: tuple, ins: tuple, grad_outputs: tuple, retain_graph: bool,
              create_graph: bool) -> list:
    """One engine run from `outs`, returning the gradient reaching each of `ins` (or None)."""
    grads = _make_grads(outs, grad_outputs, create_graph)
    roots = _root_edges(outs)
    capture = []
    for tensor in ins:
        if not tensor.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        capture.append(gradient_edge(tensor))
    return engine.execute(roots, grads, retain_graph, create_graph, capture,
                          accumulate=False)


def _batched(outs: tuple, ins: tuple, grad_outputs: tuple, retain_graph: bool,
             create_graph: bool) -> list:
    """is_grads_batched: an engine run per entry of the grad_outputs' first dimension, the
    gradients stacked along a new first dimension (None for an input none of them reach)."""
    given = [g for g in grad_outputs if g is not None]
    if not given:  # nothing to batch over: as torch, the scalar-output rule decides
        return _captured(outs, ins, grad_outputs, retain_graph, create_graph)
    size = given[0].shape[0]
    runs = [_captured(outs, ins, tuple(None if g is None else g[b] for g in grad_outputs),
                      retain_graph if b == size - 1 else True, create_graph)
            for b in range(size)]
    stacked = []
    for j in range(len(ins)):
        column = [run[j] for run in runs]
        stacked.append(None if any(g is None for g in column) else ops.stack(column))
    return stacked
