"""A Module call with hooks: forward pre-hooks, forward hooks, and backward hooks.

Module.__call__ comes here only when the module has a hook. The full backward hooks
(`register_full_backward_hook`, `register_full_backward_pre_hook`) work as torch's: the
module's tensor inputs, and then its tensor outputs, pass through an identity custom
Function (BackwardHookFunction), whose backward node sees the gradients of the outputs
first (the pre-hooks may replace them) and of the inputs last (the hooks are called with
both, and may replace the inputs' gradients). The deprecated `register_backward_hook`
hooks the node that made the output instead, as torch's does.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.autograd.function import Function
from runtime.grad_mode import is_grad_enabled
from runtime.hooks import RemovableHandle, add_hook

__all__ = ["GLOBAL_CALL_HOOKS", "GLOBAL_HOOKS", "BackwardHook", "BackwardHookFunction",
           "backward_hooks_of", "call_with_hooks",
           "register_module_backward_hook", "register_module_buffer_registration_hook",
           "register_module_forward_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "registered",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook"]

# The hooks of every Module (torch.nn.modules.module's register_module_*), run before each
# module's own, by kind; GLOBAL_CALL_HOOKS holds the ids of them all (Module.__call__'s
# check), GLOBAL_FLAGS which forward hooks take kwargs or are always called, and which
# kind of backward hook (full or not) the global ones are.
GLOBAL_CALL_HOOKS: dict[int, bool] = {}
GLOBAL_HOOKS: dict[str, dict[int, Callable]] = {
    kind: {} for kind in ("forward_pre", "forward", "backward_pre", "backward")}
GLOBAL_FLAGS: dict[str, Any] = {"with_kwargs": {}, "always_call": {}, "full_backward": None}

_MIXED_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global "
                 "Module hook. Please use only one of them.")


# Called `hook(module, name, value)` when a module registers a parameter, buffer or
# submodule; a hook may return the value to register instead.
REGISTRATION_HOOKS: dict[str, dict[int, Callable]] = {
    kind: {} for kind in ("parameter", "buffer", "module")}


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, name, param)` whenever a module registers a parameter."""
    return add_hook(REGISTRATION_HOOKS["parameter"], hook)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, name, buffer)` whenever a module registers a buffer."""
    return add_hook(REGISTRATION_HOOKS["buffer"], hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, name, submodule)` whenever a module registers a submodule."""
    return add_hook(REGISTRATION_HOOKS["module"], hook)


def registered(kind: str, module: Any, name: str, value: Any) -> Any:
    """`value`, or what the registration hooks of `kind` replace it with."""
    for hook in list(REGISTRATION_HOOKS[kind].values()):
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _add_global(kind: str, hook: Callable, flags: tuple = ()) -> RemovableHandle:
    handle = add_hook(GLOBAL_HOOKS[kind], hook, extra_dict=[*flags, GLOBAL_CALL_HOOKS])
    GLOBAL_CALL_HOOKS[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, args)` before every module's forward (and its own pre-hooks)."""
    return _add_global("forward_pre", hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """`hook(module, args, output)` after every module's forward (before its own hooks)."""
    flags = (GLOBAL_FLAGS["with_kwargs"], GLOBAL_FLAGS["always_call"])
    handle = _add_global("forward", hook, flags)
    if with_kwargs:
        GLOBAL_FLAGS["with_kwargs"][handle.id] = True
    if always_call:
        GLOBAL_FLAGS["always_call"][handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, grad_output)` for every module, before its own."""
    return _add_global("backward_pre", hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """`hook(module, grad_input, grad_output)` for every module, before its own."""
    if GLOBAL_FLAGS["full_backward"] is False:
        raise RuntimeError(_MIXED_GLOBAL)
    GLOBAL_FLAGS["full_backward"] = True
    return _add_global("backward", hook)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """Deprecated: register_module_full_backward_hook's hook on each module's last node."""
    if GLOBAL_FLAGS["full_backward"] is True:
        raise RuntimeError(_MIXED_GLOBAL)
    GLOBAL_FLAGS["full_backward"] = False
    return _add_global("backward", hook)

NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to "
                 "module outputs since no inputs require gradients. See "
                 "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                 "#torch.nn.Module.register_full_backward_hook for more details.")


class BackwardHookFunction(Function):
    """The identity on tensors, whose backward node the module's backward hooks hook."""

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        return args


def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple:
    packed: list = [None] * size
    for index, value in zip(indices, values, strict=True):
        packed[index] = value
    return tuple(packed)


class BackwardHook:
    """One call's backward hooks: the gradients of the outputs wait here for those of the
    inputs."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: tuple | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    def _input_hook(self, grad_input: tuple, _: Any) -> tuple | None:
        if self.grad_outputs is None:
            return None
        assert self.input_tensors_index is not None
        result = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, result, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(result):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(result)}")
            result = out
        self.grad_outputs = None
        return tuple(result[i] for i in self.input_tensors_index)

    def _run_pre_hooks(self) -> None:
        assert self.grad_outputs is not None
        expected = len(self.grad_outputs)
        for hook in self.user_pre_hooks:
            replaced = hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(replaced)}, but expected {expected}")
            self.grad_outputs = replaced

    def _output_hook(self, _: Any, grad_output: tuple) -> tuple | None:
        assert self.output_tensors_index is not None
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                            self.n_outputs)
        self._run_pre_hooks()
        grad_outputs = self.grad_outputs
        if self.input_tensors_index is None:
            warn_at_caller(NO_INPUT_GRAD)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                result = hook(self.module, grad_inputs, self.grad_outputs)
                if result is not None and not (isinstance(result, tuple)
                                               and all(r is None for r in result)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(grad_outputs[i] for i in self.output_tensors_index)

    def _apply_on_tensors(self, hook: Callable, args: tuple) -> tuple[tuple, list[int] | None]:
        indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        node = next(t.grad_fn for t in new_tensors if t.grad_fn is not None)
        node.register_hook(hook)
        arguments = list(args)
        for index, value in zip(indices, new_tensors, strict=True):
            arguments[index] = value
        return (tuple(arguments) if type(args) is tuple else type(args)(*arguments)), indices

    def setup_input_hook(self, args: tuple) -> tuple:
        result, self.input_tensors_index = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        return result

    def setup_output_hook(self, output: Any) -> Any:
        is_tuple = isinstance(output, tuple)
        outputs = output if is_tuple else (output,)
        result, self.output_tensors_index = self._apply_on_tensors(self._output_hook, outputs)
        self.n_outputs = len(outputs)
        return result if is_tuple else result[0]


class _WrappedHook:
    """A deprecated backward hook on a node: called with the module (held weakly) first."""

    def __init__(self, hook: Callable, module: Any) -> None:
        self.hook = hook
        self.module = weakref.ref(module)

    def __call__(self, *args: Any) -> Any:
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args)


def backward_hooks_of(module: Any) -> tuple[list, list]:
    """The full and the non-full (deprecated) backward hooks for a call of the module: the
    global ones, then its own."""
    full: list = []
    non_full: list = []
    for hooks, is_full in ((GLOBAL_HOOKS["backward"], GLOBAL_FLAGS["full_backward"]),
                           (module._backward_hooks, module._is_full_backward_hook)):
        if is_full is not None:
            (full if is_full else non_full).extend(hooks.values())
    return full, non_full


def _run_pre_hooks(module: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    with_kwargs = module._forward_pre_hooks_with_kwargs
    for key, hook in [*GLOBAL_HOOKS["forward_pre"].items(),
                      *module._forward_pre_hooks.items()]:
        if key in with_kwargs:
            result = hook(module, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError("forward pre-hook must return None or a tuple of "
                                   f"(new_args, new_kwargs), but got {result}.")
            args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    return args, kwargs


class _Call:
    """One hooked call: its arguments and result so far, and the always-called hooks run."""

    def __init__(self, module: Any, args: tuple, kwargs: dict) -> None:
        self.module = module
        self.args = args
        self.kwargs = kwargs
        self.result: Any = None
        self.called: set[int] = set()

    def run_forward_hook(self, key: int, hook: Callable) -> None:
        module = self.module
        if key in module._forward_hooks_always_called or key in GLOBAL_FLAGS["always_call"]:
            self.called.add(key)
        if key in module._forward_hooks_with_kwargs or key in GLOBAL_FLAGS["with_kwargs"]:
            result = hook(module, self.args, self.kwargs, self.result)
        else:
            result = hook(module, self.args, self.result)
        if result is not None:
            self.result = result

    def run(self) -> Any:
        module = self.module
        full_hooks, non_full_hooks = backward_hooks_of(module)
        pre_hooks = [*GLOBAL_HOOKS["backward_pre"].values(),
                     *module._backward_pre_hooks.values()]
        self.args, self.kwargs = _run_pre_hooks(module, self.args, self.kwargs)
        backward_hook = None
        if full_hooks or pre_hooks:
            backward_hook = BackwardHook(module, full_hooks, pre_hooks)
            self.args = backward_hook.setup_input_hook(self.args)
        self.result = module.forward(*self.args, **self.kwargs)
        for key, hook in [*GLOBAL_HOOKS["forward"].items(), *module._forward_hooks.items()]:
            self.run_forward_hook(key, hook)
        if backward_hook is not None:
            if not isinstance(self.result, Tensor | tuple):
                warn_at_caller("For backward hooks to be called, module output should be a "
                               f"Tensor or a tuple of Tensors but received {type(self.result)}")
            self.result = backward_hook.setup_output_hook(self.result)
        if non_full_hooks:
            self._hook_last_node(non_full_hooks)
        return self.result

    def _hook_last_node(self, hooks: list) -> None:
        value = self.result
        while not isinstance(value, Tensor):
            if isinstance(value, dict):
                value = next(v for v in value.values() if isinstance(v, Tensor))
            else:
                value = value[0]
        node = value.grad_fn
        if node is None:
            return
        for hook in hooks:
            node.register_hook(_WrappedHook(hook, self.module))
        _warn_non_full(self.args, self.result, node)

    def always_called_after_error(self) -> None:
        """The always-called forward hooks not yet run, when forward (or a hook) raised: the
        global ones (given no kwargs, as torch's), then the module's own."""
        module = self.module
        for key, hook in list(GLOBAL_HOOKS["forward"].items()):
            if key in GLOBAL_FLAGS["always_call"] and key not in self.called:
                self._run_silenced(functools.partial(hook, module, self.args, self.result),
                                   "global ")
        for key, hook in list(module._forward_hooks.items()):
            if key in module._forward_hooks_always_called and key not in self.called:
                self._run_silenced(functools.partial(self.run_forward_hook, key, hook), "")

    def _run_silenced(self, run: Callable, scope: str) -> None:
        try:
            result = run()
            if scope and result is not None:
                self.result = result
        except Exception as error:
            warn_at_caller(f"{scope}module forward hook with ``always_call=True`` raised an "
                           "exception that was silenced as another error was raised in "
                           f"forward: {error}")


def call_with_hooks(module: Any, args: tuple, kwargs: dict) -> Any:
    """Module.__call__ for a module with hooks, as torch's _call_impl."""
    call = _Call(module, args, kwargs)
    try:
        return call.run()
    except Exception:
        call.always_called_after_error()
        raise


_NON_FULL = ("Using non-full backward hooks on a Module that does not {} is deprecated and "
             "will be removed in future versions. This hook will be missing some of the "
             "{}. Please use register_full_backward_hook to get the documented behavior.")


def _all_tensors(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, Tensor) for v in value)


def _warn_non_full(inputs: Any, result: Any, node: Any) -> None:
    """The FutureWarning torch gives when a deprecated backward hook will miss gradients."""
    if not isinstance(result, Tensor) and not _all_tensors(result):
        message = _NON_FULL.format("return a single Tensor or a tuple of Tensors",
                                   "grad_output")
        warn_at_caller(message, FutureWarning)
        return
    results = (result,) if isinstance(result, Tensor) else result
    if not isinstance(inputs, Tensor) and not _all_tensors(inputs):
        message = _NON_FULL.format("take as input a single Tensor or a tuple of Tensors",
                                   "grad_input")
        warn_at_caller(message, FutureWarning)
        return
    inputs = (inputs,) if isinstance(inputs, Tensor) else inputs
    output_nodes = {r.grad_fn for r in results if r.grad_fn is not None}
    if not output_nodes or (len(output_nodes) == 1 and node not in output_nodes):
        message = ("Using a non-full backward hook when outputs are nested in python data "
                   "structure is deprecated and will be removed in future versions. This hook "
                   "will be missing some grad_output.")
    elif len(output_nodes) > 1:
        message = ("Using a non-full backward hook when outputs are generated by different "
                   "autograd Nodes is deprecated and will be removed in future versions. This "
                   "hook will be missing some grad_output. Please use "
                   "register_full_backward_hook to get the documented behavior.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {
            n[0] for n in node.next_functions}:
        message = ("Using a non-full backward hook when the forward contains multiple autograd "
                   "Nodes is deprecated and will be removed in future versions. This hook will "
                   "be missing some grad_input. Please use register_full_backward_hook to get "
                   "the documented behavior.")
    else:
        return
    warn_at_caller(message, FutureWarning)
