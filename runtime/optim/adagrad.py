"""Adagrad: each coordinate's step shrinks with the sum of its squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import dtypes, factories
from runtime.optim.optimizer import Optimizer, check_fused, step_without_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), with PyTorch's update order and options.

    Per parameter, at step t with gradient g (plus wd·p with weight decay):
        clr = lr / (1 + (t - 1)·lr_decay)
        s ← s + g²                     (s starts at initial_accumulator_value)
        p ← p - clr·g / (√s + eps)
    Unlike the other optimizers, the state is made for every parameter up front, in the
    constructor, as PyTorch does (so state_dict() lists it before the first step); a
    group added later gets its state on its first step.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "fused": fused}
        check_fused(fused, foreach, differentiable)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                self._state_for(param, group)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param, group)

    def _state_for(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        """The parameter's state, made if new: a float32 step count and the sum of squared
        gradients, starting at the group's initial_accumulator_value."""
        state = self.state[param]
        if not state:
            state["step"] = factories.tensor(0.0, dtype=dtypes.float32)
            state["sum"] = factories.full_like(param, group["initial_accumulator_value"])
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self._state_for(param, group)
                state["step"] += 1
                step = state["step"].item()
                grad = -param.grad if group["maximize"] else param.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                clr = lr / (1 + (step - 1) * lr_decay)
                state["sum"].add_(grad * grad)
                std = state["sum"].sqrt().add(eps)
                param.add_(grad / std, alpha=-clr)
