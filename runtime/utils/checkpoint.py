"""torch.utils.checkpoint: activation checkpointing, memory traded for compute.

`checkpoint(function, *args)` runs `function` without recording a graph, so none of the
tensors it computes inside is kept for backward; it keeps only its inputs (and the random
generator's state, with preserve_rng_state). When the gradient reaches the checkpoint, the
backward runs `function` again on the same inputs, this time recording, and backpropagates
through that fresh graph. So the forward runs twice, and the gradients are those of the
plain call.

Both variants are one autograd Function here, whose node is CheckpointFunctionBackward:

- use_reentrant=True is torch's reentrant checkpoint, the same algorithm: it needs a
  tensor input that requires grad to record anything, refuses keyword arguments, and its
  backward runs a nested `backward()`, which accumulates the gradients of the tensors the
  function reads from outside (a module's parameters) into their `.grad`.
- use_reentrant=False accepts keyword arguments and outputs that need no gradient, as
  torch's does. torch implements it with saved-tensor hooks, so its outputs carry the
  function's own last node as grad_fn; gradgen has no such hooks and records the same
  CheckpointFunctionBackward node as the reentrant variant.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from runtime import grad_mode, random
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.autograd import Function
from runtime.autograd import backward as autograd_backward
from runtime.nn import Sequential

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "detach_variable",
           "check_backward_validity", "noop_context_fn", "set_checkpoint_debug_enabled",
           "DefaultDeviceType"]


class CheckpointError(RuntimeError):
    """An error of the non-reentrant checkpoint's recomputation."""


class DefaultDeviceType:
    """The device whose random state a checkpoint preserves: "cuda" by default, as in torch
    (gradgen has the CPU's only, which is always preserved)."""

    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        return DefaultDeviceType._default_device_type


_debug_enabled: bool | None = None


def set_checkpoint_debug_enabled(enabled: bool | None) -> Any:
    """A context manager setting whether checkpoints run with debug output."""
    @contextlib.contextmanager
    def scope() -> Any:
        global _debug_enabled
        old, _debug_enabled = _debug_enabled, enabled
        try:
            yield
        finally:
            _debug_enabled = old

    return scope()


def noop_context_fn() -> tuple:
    """The default `context_fn`: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of `inputs` detached, keeping its requires_grad; the rest as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    detached = []
    for item in inputs:
        if isinstance(item, Tensor):
            copy = item.detach()
            copy.requires_grad = item.requires_grad
            item = copy
        detached.append(item)
    return tuple(detached)


def check_backward_validity(inputs: Any) -> None:
    if not any(item.requires_grad for item in inputs if isinstance(item, Tensor)):
        warn_at_caller("None of the inputs have requires_grad=True. Gradients will be None")


class CheckpointFunction(Function):
    """Run `run_function` without a graph; in backward, run it again with one and
    backpropagate through it."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, reentrant: bool,
                kwargs: dict, *args: Any) -> Any:
        if reentrant:
            check_backward_validity(args)
        ctx.run_function = run_function
        ctx.kwargs = kwargs
        ctx.reentrant = reentrant
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = random.get_rng_state()
        ctx.inputs = [None if isinstance(arg, Tensor) else arg for arg in args]
        ctx.tensor_indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with grad_mode.no_grad():
            return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> tuple:
        inputs = list(ctx.inputs)
        for index, tensor in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[index] = tensor
        with random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                random.set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*detached, **ctx.kwargs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(output, grad) for output, grad in zip(outputs, grad_outputs, strict=False)
                 if isinstance(output, Tensor) and output.requires_grad]
        if not pairs:
            if ctx.reentrant:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() "
                                   "is not necessary")
        else:
            autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(item.grad if isinstance(item, Tensor) else None for item in detached)
        return (None, None, None, None) + grads


def _warn_use_reentrant(where: str) -> None:
    if where == "checkpoint":
        message = ("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                   "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                   "use_reentrant will raise an exception. use_reentrant=False is "
                   "recommended, but if you need to preserve the current default behavior, "
                   "you can pass use_reentrant=True. Refer to docs for more details on the "
                   "differences between the two variants.")
    else:
        message = ("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                   "should be passed explicitly. In version 2.9 we will raise an exception "
                   "if use_reentrant is not passed. use_reentrant=False is recommended, but "
                   "if you need to preserve the current default behavior, you can pass "
                   "use_reentrant=True. Refer to docs for more details on the differences "
                   "between the two variants.")
    warn_at_caller(message)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, computed again in backward instead of keeping the
    tensors it makes. Without use_reentrant, torch 2.13 warns and uses the reentrant
    variant."""
    if use_reentrant is None:
        _warn_use_reentrant("checkpoint")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    return CheckpointFunction.apply(function, preserve, use_reentrant, kwargs, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run a sequence of modules (or an nn.Sequential) in `segments` chunks, checkpointing
    every chunk but the last."""
    if use_reentrant is None:
        _warn_use_reentrant("checkpoint_sequential")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: list) -> Callable:
        def forward(value: Any) -> Any:
            for j in range(start, end + 1):
                value = functions[j](value)
            return value

        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
