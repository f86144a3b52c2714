"""functorch, the package torch.func grew out of, as torch 2.x still ships it: `import
functorch as ft` under `python -m runtime`.

Older tutorials (forward-mode AD, model ensembling, per-sample gradients before 2.0) call
`ft.jvp`, `ft.vmap`, `ft.make_functional(model)` and `ft.combine_state_for_ensemble`.
Each transform here is torch.func's (runtime/func.py), after the FutureWarning torch gives
for it; `make_functional*` return a stateless copy of the model to call as
`func(params, x)` or `func(params, buffers, x)`, which puts the given tensors in place of
its parameters (and buffers) for the call, through `functional_call`.

Left out: `make_fx` (a graph capture through torch's tracing machinery, which gradgen
does not have).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from generated import ops as _ops
from runtime import func as _func
from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute
from runtime.nn.module import Module
from runtime.version import __version__

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "__version__",
           "combine_state_for_ensemble", "functionalize", "grad", "grad_and_value", "hessian",
           "jacfwd", "jacrev", "jvp", "make_functional", "make_functional_with_buffers",
           "vjp", "vmap"]


def _deprecated(api: str, new_api: str | None = None) -> None:
    """torch's FutureWarning for a functorch name, pointing at the caller's line."""
    warn_at_caller(
        f"We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api or f'torch.func.{api}'}` instead; "
        "see the PyTorch 2.0 release notes and/or the `torch.func` migration guide for more "
        "details https://pytorch.org/docs/main/func.migrating.html",
        FutureWarning)


def _transform(api: str, new_api: str | None = None) -> Callable[..., Any]:
    """functorch.API: torch.func's function of that name, after the warning."""
    target = getattr(_func, api)

    def deprecated(*args: Any, **kwargs: Any) -> Any:
        _deprecated(api, new_api)
        return target(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = api
    deprecated.__doc__ = f"functorch.{api}: deprecated, see torch.func.{api}."
    return deprecated


vmap = _transform("vmap", "torch.vmap")
grad = _transform("grad")
grad_and_value = _transform("grad_and_value")
vjp = _transform("vjp")
jvp = _transform("jvp")
jacrev = _transform("jacrev")
jacfwd = _transform("jacfwd")
hessian = _transform("hessian")
functionalize = _transform("functionalize")


def _extract(model: Module, named: Callable[..., Any]) -> tuple[tuple, tuple, dict]:
    """Take the tensors `named` lists (parameters or buffers) out of `model`: (tensors,
    their first names, every name of each, for tied ones). Each name becomes a plain
    attribute set to None, filled in for the length of a call."""
    tensors, names, names_map = [], [], {}
    first_name: dict[int, str] = {}
    for name, tensor in named(model):
        if id(tensor) not in first_name:
            first_name[id(tensor)] = name
            tensors.append(tensor)
            names.append(name)
        names_map.setdefault(first_name[id(tensor)], []).append(name)
    for every in names_map.values():
        for name in every:
            owner_path, _, attribute = name.rpartition(".")
            owner = model.get_submodule(owner_path)
            delattr(owner, attribute)
            owner.__dict__[attribute] = None
    return tuple(tensors), tuple(names), names_map


def _parameters(model: Module) -> Any:
    return model.named_parameters(remove_duplicate=False)


def _buffers(model: Module) -> Any:
    return model.named_buffers(remove_duplicate=False)


def _call(model: Module, names_map: dict, names: tuple, tensors: Any, args: tuple,
          kwargs: dict) -> Any:
    """model(*args, **kwargs) with `tensors` under `names` (and their tied names)."""
    tensors = tuple(tensors)
    if len(tensors) != len(names):
        raise RuntimeError(f"Expected {len(names)} tensors, got {len(tensors)}")
    values = {tied: tensor for name, tensor in zip(names, tensors, strict=True)
              for tied in names_map[name]}
    return _func.functional_call(model, values, args, kwargs, tie_weights=False)


class FunctionalModule(Module):
    """What make_functional returns: `func(params, *args)` runs the model with `params`."""

    def __init__(self, stateless_model: Module, param_names: tuple,
                 names_map: dict) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False) -> tuple:
        model_copy = copy.deepcopy(model)
        params, names, names_map = _extract(model_copy, _parameters)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        return FunctionalModule(model_copy, names, names_map), params

    def forward(self, params: Any, *args: Any, **kwargs: Any) -> Any:
        return _call(self.stateless_model, self.names_map, self.param_names, params, args,
                     kwargs)


class FunctionalModuleWithBuffers(Module):
    """What make_functional_with_buffers returns: `func(params, buffers, *args)`."""

    def __init__(self, stateless_model: Module, param_names: tuple, buffer_names: tuple,
                 param_names_map: dict, buffer_names_map: dict) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False) -> tuple:
        model_copy = copy.deepcopy(model)
        params, param_names, param_map = _extract(model_copy, _parameters)
        buffers, buffer_names, buffer_map = _extract(model_copy, _buffers)
        if disable_autograd_tracking:
            for param in params:
                param.requires_grad_(False)
        functional = FunctionalModuleWithBuffers(model_copy, param_names, buffer_names,
                                                 param_map, buffer_map)
        return functional, params, buffers

    def forward(self, params: Any, buffers: Any, *args: Any, **kwargs: Any) -> Any:
        return _call(self.stateless_model, self.all_names_map,
                     self.param_names + self.buffer_names, (*params, *buffers), args, kwargs)


def make_functional(model: Module, disable_autograd_tracking: bool = False) -> tuple:
    """(func, params): a stateless copy of `model` and its parameters, as a tuple."""
    _deprecated("make_functional", "torch.func.functional_call")
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False
                                 ) -> tuple:
    """(func, params, buffers): a stateless copy of `model`, its parameters and buffers."""
    _deprecated("make_functional_with_buffers", "torch.func.functional_call")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Any) -> tuple:
    """(func, params, buffers) for vmap over an ensemble of models of one class: each
    parameter and buffer stacked along a new first dimension, detached."""
    _deprecated("combine_state_for_ensemble", "torch.func.stack_module_state")
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    functional, _, _ = FunctionalModuleWithBuffers._create_from(models[0])
    parts = [FunctionalModuleWithBuffers._create_from(m)[1:] for m in models]
    params = tuple(_ops.stack(list(shards)).detach() for shards in zip(*(p for p, _ in parts),
                                                                         strict=True))
    buffers = tuple(_ops.stack(list(shards)).detach() for shards in zip(*(b for _, b in parts),
                                                                          strict=True))
    return functional, params, buffers


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
