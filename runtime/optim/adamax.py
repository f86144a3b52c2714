"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from generated import ops
from runtime import factories
from runtime.optim.optimizer import Optimizer, check_adam_options, scalar_state, step_without_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7), in PyTorch's update order.

    Per parameter, at step t with gradient g (plus wd·p when `weight_decay`):
        m ← m + (1 - β₁)(g - m)          u ← max(β₂·u, |g| + eps)
        p ← p - lr/(1 - β₁ᵗ) · m / u
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param)

    def _state_for(self, param: Any) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            state["exp_avg"] = factories.zeros_like(param)
            state["exp_inf"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = -param.grad if group["maximize"] else param.grad
                state = self._state_for(param)
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                exp_avg.lerp_(grad, 1 - beta1)
                ops.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                bias_correction = 1 - beta1 ** state["step"].item()
                param.addcdiv_(exp_avg, exp_inf, value=-lr / bias_correction)
