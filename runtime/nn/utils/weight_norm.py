"""The older weight normalisation, as a forward pre-hook (torch.nn.utils.weight_norm):
`weight` becomes g * v / ||v||, with the norm taken over every dimension but `dim`, from
two parameters `weight_g` and `weight_v`, recomputed before every forward.

As in torch, the first and last dimensions go through the spec op _weight_norm_interface
(WeightNormInterfaceBackward0 in the graph), any other through the composite torch falls
back to, v * (g / norm_except_dim(v, 2, dim)); values agree with torch's to rounding.
"""

from __future__ import annotations

from typing import Any, TypeVar

from generated import ops
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm", "norm_except_dim",
           "_weight_norm"]

T_module = TypeVar("T_module", bound=Module)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The `pow`-norm of each slice of `v` along `dim`, shaped to broadcast against `v`
    (ones elsewhere); the norm of all of `v` when dim is -1."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = [v.shape[0]] + [1] * (v.ndim - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == v.ndim - 1:
        shape = [1] * (v.ndim - 1) + [v.shape[-1]]
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """v scaled so that its norm over every dimension but `dim` is g: torch's fused op
    (WeightNormInterfaceBackward0) for the first or last dimension, else the composite."""
    if dim in (0, v.ndim - 1):
        return ops._weight_norm_interface(v.contiguous(), g.contiguous(), dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes `name` from `name_g` and `name_v`."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"),
                            getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warn_at_caller("`torch.nn.utils.weight_norm` is deprecated in favor of "
                       "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if _is_uninitialized(weight):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _is_uninitialized(value: Any) -> bool:
    """A lazy module's parameter that has no shape yet (runtime.nn.lazy)."""
    return getattr(value, "_is_uninitialized", False)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrise `module.name` as g * v / ||v|| (deprecated in torch, with a
    FutureWarning, in favour of parametrizations.weight_norm)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Fold the reparametrisation back into one parameter `name`."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
