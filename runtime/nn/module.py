"""Module: the base of every layer, as torch.nn.Module.

A Module keeps three ordered registries, filled by plain attribute assignment:
`_parameters` (Parameters), `_buffers` (other tensors saved with the model) and
`_modules` (sub-Modules). Everything else (parameters(), state_dict(), repr, train())
walks them, so the order in which `__init__` assigns attributes is the order PyTorch
reports.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from runtime import changes, devices, dtypes, factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.dtypes import type_string
from runtime.grad_mode import no_grad
from runtime.hooks import RemovableHandle, add_hook
from runtime.nn import module_state
from runtime.nn.module_hooks import (
    GLOBAL_CALL_HOOKS,
    GLOBAL_HOOKS,
    backward_hooks_of,
    call_with_hooks,
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
    registered,
)
from runtime.nn.module_state import IncompatibleKeys
from runtime.nn.parameter import Parameter, buffer_persistence

__all__ = ["IncompatibleKeys", "Module", "register_module_backward_hook",
           "register_module_buffer_registration_hook", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "typename"]

# The hook registries Module.__init__ makes; those __call__ runs.
_CALLED_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
_HOOK_REGISTRIES = (*_CALLED_HOOKS, "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                    "_forward_hooks_always_called", "_state_dict_hooks", "_state_dict_pre_hooks",
                    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")
_NEVER_CALLED = ("Reached a code path in Module.{}() that should never be called. Please file "
                 "an issue at https://github.com/pytorch/pytorch/issues/new?template="
                 "bug-report.yml to report this bug.")
_MIXED_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a "
                         "single Module. Please use only one of them.")


def typename(value: Any) -> str:
    """PyTorch's name for a value's type in messages: `torch.FloatTensor`, `int`."""
    if isinstance(value, Tensor):
        return type_string(value._data)
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _indent(text: str, spaces: int) -> str:
    """Indent every line of `text` but the first (a child's repr inside its parent's)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class of layers and models: subclasses assign Parameters and Modules in
    `__init__` and compute their output in `forward`."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        # object.__setattr__: our __setattr__ needs these registries to exist. They count
        # their changes (runtime/changes.py), as __setattr__ and __delattr__ do.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", changes.Registry())
        object.__setattr__(self, "_buffers", changes.Registry())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", changes.Registry())
        object.__setattr__(self, "_forward_pre_hooks", changes.Hooks())
        object.__setattr__(self, "_forward_hooks", changes.Hooks())
        # Which hooks take kwargs, or run even when forward raises (keyed by hook id).
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", changes.Hooks())
        object.__setattr__(self, "_forward_hooks_with_kwargs", changes.Hooks())
        object.__setattr__(self, "_forward_hooks_always_called", changes.Hooks())
        object.__setattr__(self, "_backward_pre_hooks", changes.Hooks())
        object.__setattr__(self, "_backward_hooks", changes.Hooks())
        # True once a full backward hook is registered, False once a deprecated one is.
        object.__setattr__(self, "_is_full_backward_hook", None)
        # The ids of every hook a register_* method added (a handle's remove() takes its id
        # out): __call__'s one check of whether there is a hook to run.
        object.__setattr__(self, "_call_hooks", {})
        for hooks in ("_state_dict_hooks", "_state_dict_pre_hooks",
                      "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            object.__setattr__(self, hooks, changes.Hooks())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def __setstate__(self, state: dict) -> None:
        """Unpickling (and copy.deepcopy): a module saved without some of the registries
        (by an older gradgen) gets them empty, and __call__'s check the ids of its hooks."""
        self.__dict__.update(state)
        for name in _HOOK_REGISTRIES:
            self.__dict__.setdefault(name, changes.Hooks())
        self.__dict__.setdefault("_is_full_backward_hook", None)
        if "_call_hooks" not in self.__dict__:
            self.__dict__["_call_hooks"] = dict.fromkeys(
                [key for name in _CALLED_HOOKS for key in self.__dict__[name]], True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Module.__call__, (self, *args), kwargs, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        if not self._call_hooks and not GLOBAL_CALL_HOOKS:
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """The call with its hooks (torch's name, which some libraries call)."""
        return Module.__call__(self, *args, **kwargs)

    _wrapped_call_impl = _call_impl

    def _get_backward_hooks(self) -> tuple[list, list]:
        """The full and the deprecated backward hooks a call would use (the global first)."""
        return backward_hooks_of(self)

    def _get_backward_pre_hooks(self) -> list:
        return [*GLOBAL_HOOKS["backward_pre"].values(), *self._backward_pre_hooks.values()]

    def _add_hook(self, hooks: dict, hook: Callable, prepend: bool = False,
                  flags: tuple = ()) -> RemovableHandle:
        """Register `hook` in `hooks` (and its id in __call__'s check, and in the dicts
        `flags` of its options, which its handle's remove() clears too)."""
        handle = add_hook(hooks, hook, prepend, [*flags, self._call_hooks])
        self._call_hooks[handle.id] = True
        return handle

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """`hook(module, args)` runs before forward; it may return new args. With
        `with_kwargs`, `hook(module, args, kwargs)` may return new `(args, kwargs)`."""
        handle = self._add_hook(self._forward_pre_hooks, hook, prepend,
                                (self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """`hook(module, args, output)` (or `hook(module, args, kwargs, output)` with
        `with_kwargs`) runs after forward; it may return a new output. With `always_call`
        it runs even when forward raises."""
        handle = self._add_hook(self._forward_hooks, hook, prepend,
                                (self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_output)` runs when the gradients of the module's outputs are
        known; it may return new ones."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` runs when the gradients of the module's
        inputs are known; it may return new ones."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = True
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: hooks the node that made the module's output, so that grad_input is
        that node's (use register_full_backward_hook)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        self._is_full_backward_hook = False
        return self._add_hook(self._backward_hooks, hook)

    # -- registration ---------------------------------------------------------------------
    def _check_name(self, name: Any, kind: str, registry: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder, like a Linear without bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = (None if param is None
                                  else registered("parameter", self, name, param))

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; `persistent=False` keeps it
        out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = registered("buffer", self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        self._modules[name] = registered("module", self, name, module)

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Module.__setattr__, (self, name, value), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        changes.COUNT.value += 1
        registries = self.__dict__.get("_parameters"), self.__dict__.get("_modules")
        parameters, modules = registries
        if isinstance(value, Parameter):
            if parameters is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep=parameters)
            self.register_parameter(name, value)
        elif parameters is not None and name in parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, None)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=modules)
            modules[name] = registered("module", self, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = registered("module", self, name, None)
        elif buffer_persistence(value) is not None:  # a tensor nn.Buffer made
            self.register_buffer(name, value, buffer_persistence(value))
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            self._buffers[name] = registered("buffer", self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: dict | None = None) -> None:
        """Drop `name` from every registry but `keep` (where it is registered anew: a
        member set again keeps its place in the order, as in torch)."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str) -> Any:
        # Called only when normal lookup fails: the registered members live in the registries.
        attributes = self.__dict__  # (read once: every `self.layer` of a forward comes here)
        for registry in ("_parameters", "_buffers", "_modules"):
            members = attributes.get(registry)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        """Registered members too, so that tab completion shows `model.layer1`."""
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def __delattr__(self, name: str) -> None:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Module.__delattr__, (self, name), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        changes.COUNT.value += 1
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # -- walking the tree -----------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """This module and every module below it, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        """Entries of one registry over this module (and its descendants if `recurse`)."""
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        seen: set[int] = set()
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """`("layer1.weight", parameter)` pairs, in registration order, each parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, parameter in self.named_parameters(recurse=recurse):
            yield parameter

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> Module:
        """The module at a dotted path such as `"encoder.layer1"` ("" is this module)."""
        module = self
        for name in target.split(".") if target else []:
            if name not in module._modules:
                raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
            module = module._modules[name]
        return module

    def _member(self, target: str) -> tuple[Module, str]:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        return module, name

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path such as `"encoder.layer1.weight"`."""
        module, name = self._member(target)
        parameter = getattr(module, name)
        if not isinstance(parameter, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return parameter

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path such as `"bn.running_mean"`."""
        module, name = self._member(target)
        buffer = getattr(module, name)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return buffer

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put `module` at a dotted path such as `"encoder.layer1"` (replacing the module
        there; with `strict`, there must be one)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every child (recursively), then on this module, e.g. to init weights."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients --------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode here and below (Dropout drops only in training)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the parameters (or fill them with zeros)."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Module.zero_grad, (self, set_to_none), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        for parameter in self.parameters():
            zero_grad_of(parameter, set_to_none)

    # -- dtype conversion -----------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Convert every parameter, gradient and buffer with `fn` (this module's alone
        unless `recurse`).

        A parameter stays the same object (its data is swapped, as PyTorch does by
        default), so optimizers built before the conversion still hold it.
        """
        for module in self.modules() if recurse else [self]:
            with no_grad():
                for parameter in module._parameters.values():
                    if parameter is None:
                        continue
                    parameter.data = fn(parameter)
                    if parameter.grad is not None:
                        parameter.grad.data = fn(parameter.grad)
                for name, buffer in module._buffers.items():
                    if buffer is not None:
                        module._buffers[name] = fn(buffer)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`model.to(torch.float64)`: convert the floating-point parameters and buffers.
        A device must be the CPU, the only one gradgen has (`model.to("cpu")` changes
        nothing)."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for arg in args:
            if isinstance(arg, dtypes.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
            elif arg is not None and not isinstance(arg, bool):
                device = arg
        if device is not None:
            devices.to_cpu(device)
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def cpu(self) -> Module:
        """The module itself: its tensors are on the CPU already."""
        return self

    def cuda(self, device: Any = None) -> Module:
        """Fails as PyTorch built without CUDA fails."""
        raise AssertionError(devices.CUDA_MISSING)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type: Any) -> Module:
        """Every parameter and buffer (floating-point or not) cast to `dst_type`."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Parameters and buffers replaced by uninitialised ones of the same shapes."""
        return self._apply(lambda t: factories.empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> Module:
        """The module itself: a CPU tensor's memory is shared already, for gradgen."""
        return self

    def float(self) -> Module:
        return self.to(dtypes.float32)

    def double(self) -> Module:
        return self.to(dtypes.float64)

    # -- state dict (runtime/nn/module_state.py) -------------------------------------------
    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    _version: int = 1  # saved in the state dict's metadata, as torch's
    dump_patches: bool = False
    call_super_init: bool = False

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        """Every parameter, persistent buffer and extra state by dotted name, detached
        unless `keep_vars`."""
        return module_state.state_dict(self, args, destination, prefix, keep_vars)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        extra = type(self).get_extra_state is not Module.get_extra_state
        module_state.save_local(self, destination, prefix, keep_vars, extra)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """Copy tensors from `state_dict` into the parameters and buffers, in place (or,
        with `assign`, make them the parameters and buffers). With `strict`, missing and
        unexpected keys are errors, reported as PyTorch does."""
        return module_state.load_state_dict(self, state_dict, strict, assign)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        extra = type(self).set_extra_state is not Module.set_extra_state
        module_state.load_local(self, state_dict, prefix, local_metadata, strict,
                                missing_keys, unexpected_keys, error_msgs, extra)

    def get_extra_state(self) -> Any:
        """Overridden by a module with state that is not a tensor, saved under
        `_extra_state` (Module's own is never called)."""
        raise RuntimeError(_NEVER_CALLED.format("get_extra_state"))

    def set_extra_state(self, state: Any) -> None:
        """Overridden with get_extra_state: takes what it returned back."""
        raise RuntimeError(_NEVER_CALLED.format("set_extra_state"))

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` runs before the module's state_dict."""
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` runs after it, returning
        None."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        return add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` runs before the module loads its entries."""
        return add_hook(self._load_state_dict_pre_hooks, functools.partial(hook, self))

    def _register_load_state_dict_pre_hook(self, hook: Callable,
                                           with_module: bool = False) -> RemovableHandle:
        return add_hook(self._load_state_dict_pre_hooks,
                        functools.partial(hook, self) if with_module else hook)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(module, incompatible_keys)` runs after the module and its children
        loaded; it may change the keys' lists in place."""
        return add_hook(self._load_state_dict_post_hooks, hook)

    # -- repr -----------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The part of the repr between the parentheses, e.g. `in_features=2, ...`."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_indent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        if not lines:
            return f"{self._get_name()}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def zero_grad_of(tensor: Tensor, set_to_none: bool) -> None:
    """Module.zero_grad and Optimizer.zero_grad for one tensor: drop or zero its grad."""
    grad = tensor.grad
    if grad is None:
        return
    if set_to_none:
        tensor.grad = None
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    with no_grad():
        grad.zero_()
