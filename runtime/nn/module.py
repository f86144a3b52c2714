"""Module: the base of every layer, as torch.nn.Module.

A Module keeps three ordered registries, filled by plain attribute assignment:
`_parameters` (Parameters), `_buffers` (other tensors saved with the model) and
`_modules` (sub-Modules). Everything else (parameters(), state_dict(), repr, train())
walks them, so the order in which `__init__` assigns attributes is the order PyTorch
reports.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from runtime import changes, devices, dtypes
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.dtypes import type_string
from runtime.grad_mode import no_grad
from runtime.hooks import RemovableHandle, add_hook
from runtime.nn.parameter import Parameter, buffer_persistence

__all__ = ["Module", "typename"]


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


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


class IncompatibleKeys(NamedTuple):
    """What load_state_dict returns: the keys it expected but missed, and the extra ones."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class Module:
    """Base class of layers and models: subclasses assign Parameters and Modules in
    `__init__` and compute their output in `forward`."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        # object.__setattr__: our __setattr__ needs these registries to exist. They count
        # their changes (runtime/changes.py), as __setattr__ and __delattr__ do.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", changes.Registry())
        object.__setattr__(self, "_buffers", changes.Registry())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", changes.Registry())
        object.__setattr__(self, "_forward_pre_hooks", changes.Hooks())
        object.__setattr__(self, "_forward_hooks", changes.Hooks())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Module.__call__, (self, *args), kwargs, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook: Any) -> RemovableHandle:
        """`hook(module, args)` runs before forward; it may return new args."""
        return add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Any) -> RemovableHandle:
        """`hook(module, args, output)` runs after forward; it may return a new output."""
        return add_hook(self._forward_hooks, hook)

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
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter; `persistent=False` keeps it
        out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        self._check_name(name, "module", self._modules)
        self._modules[name] = module

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
            parameters[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep=modules)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif buffer_persistence(value) is not None:  # a tensor nn.Buffer made
            self.register_buffer(name, value, buffer_persistence(value))
        elif name in self.__dict__.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            self._buffers[name] = value
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

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
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
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Convert every parameter, gradient and buffer with `fn`.

        A parameter stays the same object (its data is swapped, as PyTorch does by
        default), so optimizers built before the conversion still hold it.
        """
        for module in self.modules():
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

    def float(self) -> Module:
        return self.to(dtypes.float32)

    def double(self) -> Module:
        return self.to(dtypes.float64)

    # -- state dict -----------------------------------------------------------------------
    def _local_state(self) -> dict[str, Tensor]:
        """This module's own parameters and persistent buffers, by name."""
        state = {name: p for name, p in self._parameters.items() if p is not None}
        state.update((name, b) for name, b in self._buffers.items()
                     if b is not None and name not in self._non_persistent_buffers_set)
        return state

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict[str, Tensor]:
        """Every parameter and persistent buffer by dotted name, detached unless `keep_vars`."""
        if destination is None:
            destination = OrderedDict()
        for name, value in self._local_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> IncompatibleKeys:
        """Copy tensors from `state_dict` into the parameters and buffers, in place.

        With `strict`, missing and unexpected keys are errors, reported as PyTorch does.
        """
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        for prefix, module in self.named_modules():
            prefix = prefix + "." if prefix else ""
            local = module._local_state()
            for name, target in local.items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                errors.extend(_copy_into(key, target, state_dict[key]))
            for key in state_dict:
                if key.startswith(prefix):
                    first = key[len(prefix):].split(".", 1)[0]
                    if first not in module._modules and first not in local:
                        unexpected.append(key)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return IncompatibleKeys(missing, unexpected)

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


def _copy_into(key: str, target: Tensor, value: Any) -> list[str]:
    """Copy a checkpoint value into a parameter or buffer; the error messages, if any."""
    if not isinstance(value, Tensor):
        return [f'While copying the parameter named "{key}", expected torch.Tensor or '
                f"Tensor-like object from checkpoint but received {type(value)}"]
    if value.shape != target.shape:
        return [f"size mismatch for {key}: copying a param with shape {_size(value.shape)} "
                f"from checkpoint, the shape in current model is {_size(target.shape)}."]
    with no_grad():
        target.copy_(value)
    return []
