"""RAdam: Adam whose adaptive step is switched on once its variance is tractable."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import factories
from runtime.optim.optimizer import (
    Optimizer,
    check_adam_options,
    scalar_state,
    select,
    step_without_grad,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al.), in PyTorch's update order.

    With ρ∞ = 2/(1 - β₂) - 1 and ρₜ = ρ∞ - 2tβ₂ᵗ/(1 - β₂ᵗ): while ρₜ ≤ 5 the step is plain
    momentum SGD on the bias-corrected m; after, it is Adam's, scaled by the rectification
    r = √((ρₜ-4)(ρₜ-2)ρ∞ / ((ρ∞-4)(ρ∞-2)ρₜ)).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param)

    def _state_for(self, param: Any) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            state["exp_avg"] = factories.zeros_like(param)
            state["exp_avg_sq"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)

    def _update(self, param: Any, group: dict[str, Any]) -> None:
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        grad = -param.grad if group["maximize"] else param.grad
        state = self._state_for(param)
        state["step"] += 1
        step = state["step"].item()
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        # Rectified once the variance is tractable. A choice (`select`), not an `if`: a
        # compiled step makes it at each call, on that call's step count.
        tractable = rho_t > 5.0
        rect = select(tractable, (rho_t - 4) * (rho_t - 2) * rho_inf
                      / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.0) ** 0.5
        adaptive = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
        step_size = corrected * lr
        param.add_(select(tractable, step_size * adaptive * rect, step_size), alpha=-1.0)
