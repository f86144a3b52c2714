"""Saving and loading a Module's state dict, as torch.nn.Module's.

state_dict walks the tree, each module writing its own parameters, persistent buffers and
extra state (`_save_to_state_dict`), between its state-dict pre- and post-hooks.
load_state_dict walks it too, each module reading its own entries (`_load_from_state_dict`,
after its load pre-hooks), then running its load post-hooks; with `assign`, the state
dict's tensors become the module's, instead of being copied into them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import no_grad
from runtime.nn.parameter import Parameter

__all__ = ["EXTRA_STATE", "IncompatibleKeys", "load_local", "load_state_dict", "save_local",
           "state_dict"]

EXTRA_STATE = "_extra_state"

_POSITIONAL = ("Positional args are being deprecated, use kwargs instead. Refer to "
               "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
               "#torch.nn.Module.state_dict for details.")


class IncompatibleKeys(NamedTuple):
    """What load_state_dict returns: the keys it expected but missed, and the extra ones."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    __str__ = __repr__


def _size(shape: tuple[int, ...]) -> str:
    return f"torch.Size({list(shape)})"


def save_local(module: Any, destination: dict, prefix: str, keep_vars: bool,
               extra: bool) -> None:
    """Module._save_to_state_dict: this module's own entries (and its extra state if
    `extra`: its class defines get_extra_state)."""
    for name, parameter in module._parameters.items():
        if parameter is not None:
            destination[prefix + name] = parameter if keep_vars else parameter.detach()
    for name, buffer in module._buffers.items():
        if buffer is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buffer if keep_vars else buffer.detach()
    if extra:
        destination[prefix + EXTRA_STATE] = module.get_extra_state()


def state_dict(module: Any, args: tuple, destination: Any, prefix: str,
               keep_vars: bool) -> Any:
    """Module.state_dict, with torch's deprecated positional arguments."""
    if args:
        warn_at_caller(_POSITIONAL, FutureWarning)
        destination = args[0] if destination is None else destination
        prefix = args[1] if len(args) > 1 and prefix == "" else prefix
        keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # type: ignore[attr-defined]
    local_metadata = {"version": getattr(module, "_version", 1)}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in list(module._state_dict_pre_hooks.values()):
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in list(module._state_dict_hooks.values()):
        result = hook(module, destination, prefix, local_metadata)
        if getattr(hook, "_from_public_api", False):
            if result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        elif result is not None:
            destination = result
    return destination


def _load_one(module: Any, name: str, key: str, target: Tensor, value: Any,
              assign: bool) -> str | None:
    """Load one entry into a parameter or buffer; the error message, if any."""
    if not isinstance(value, Tensor):
        return (f'While copying the parameter named "{key}", expected torch.Tensor or '
                f"Tensor-like object from checkpoint but received {type(value)}")
    if target.ndim == 0 and value.shape == (1,):
        value = value[0]
    if value.shape != target.shape:
        return (f"size mismatch for {key}: copying a param with shape {_size(value.shape)} "
                f"from checkpoint, the shape in current model is {_size(target.shape)}.")
    try:
        with no_grad():
            if not assign:
                target.copy_(value)
                return None
            if isinstance(target, Parameter):
                if isinstance(value, Parameter):
                    value.requires_grad_(target.requires_grad)
                else:
                    value = Parameter(value, requires_grad=target.requires_grad)
            setattr(module, name, value)
    except Exception as error:
        return (f'While copying the parameter named "{key}", whose dimensions in the model '
                f"are {_size(target.shape)} and whose dimensions in the checkpoint are "
                f"{_size(value.shape)}, an exception occurred : {error.args}.")
    return None


def _unexpected(module: Any, state: Mapping, prefix: str, local: dict) -> list[str]:
    keys = []
    for key in state:
        if key.startswith(prefix) and key != prefix + EXTRA_STATE:
            first, *rest = key[len(prefix):].split(".", 1)
            if (first not in module._modules) if rest else (first not in local):
                keys.append(key)
    return keys


def load_local(module: Any, state: Mapping, prefix: str, local_metadata: dict, strict: bool,
               missing: list, unexpected: list, errors: list, extra: bool) -> None:
    """Module._load_from_state_dict: this module's own entries (and its extra state if
    `extra`: its class defines set_extra_state)."""
    for hook in list(module._load_state_dict_pre_hooks.values()):
        hook(state, prefix, local_metadata, strict, missing, unexpected, errors)
    local = {name: p for name, p in module._parameters.items() if p is not None}
    local.update((name, b) for name, b in module._buffers.items()
                 if b is not None and name not in module._non_persistent_buffers_set)
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, target in local.items():
        key = prefix + name
        if key in state:
            error = _load_one(module, name, key, target, state[key], assign)
            if error is not None:
                errors.append(error)
        elif strict:
            missing.append(key)
    extra_key = prefix + EXTRA_STATE
    if extra:
        if extra_key in state:
            module.set_extra_state(state[extra_key])
        elif strict:
            missing.append(extra_key)
    elif strict and extra_key in state:
        unexpected.append(extra_key)
    if strict:
        unexpected.extend(_unexpected(module, state, prefix, local))


def _load_tree(module: Any, state: dict, prefix: str, assign: bool, keys: IncompatibleKeys,
               errors: list, metadata: Any) -> None:
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(state, prefix, local_metadata, True, keys.missing_keys,
                                 keys.unexpected_keys, errors)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_state = {k: v for k, v in state.items() if k.startswith(child_prefix)}
            _load_tree(child, child_state, child_prefix, assign, keys, errors, metadata)
    for hook in list(module._load_state_dict_post_hooks.values()):
        if hook(module, keys) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                "expected to return new values, if incompatible_keys need to be modified, it "
                "should be done inplace.")


def load_state_dict(module: Any, state: Any, strict: bool, assign: bool) -> IncompatibleKeys:
    """Module.load_state_dict: copy (or assign) the entries; report or raise on the keys."""
    if not isinstance(state, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state)}.")
    keys = IncompatibleKeys([], [])
    errors: list[str] = []
    metadata = getattr(state, "_metadata", None)
    state = OrderedDict(state)
    if metadata is not None:
        state._metadata = metadata
    _load_tree(module, state, "", assign, keys, errors, metadata)
    if strict:
        if keys.unexpected_keys:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in keys.unexpected_keys)))
        if keys.missing_keys:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in keys.missing_keys)))
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(errors)))
    return keys
