"""NAdam: Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import factories
from runtime.optim.optimizer import Optimizer, check_adam_options, scalar_state, step_without_grad

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat), in PyTorch's update order.

    The momentum coefficient at step t is μₜ = β₁(1 - ½·0.96^(t·ψ)) with ψ the
    `momentum_decay`; its running product Πμ is kept in the state (`mu_product`). With m and
    v Adam's moments and d = √(v / (1 - β₂ᵗ)) + eps:
        p ← p - lr(1 - μₜ)/(1 - Πμ) · g / d - lr·μₜ₊₁/(1 - Πμ·μₜ₊₁) · m / d
    """

    # torch's refusal of capturable=True names the state this optimizer keeps
    CAPTURABLE_STATE = "params, mu_products and state_steps"

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param)

    def _state_for(self, param: Any) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            state["mu_product"] = scalar_state(1.0)
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
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * group["momentum_decay"]))
        mu_product = state["mu_product"]
        mu_product *= mu
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        product = mu_product.item()
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - product * mu_next))
