"""Adam (and the step AdamW shares): moment estimates with bias correction."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from generated import ops
from runtime import dtypes, factories
from runtime.optim.optimizer import Optimizer, check_adam_options, check_fused, step_without_grad

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), with PyTorch's update order and options.

    Per parameter, at step t with gradient g:
        m ← m + (1 - β₁)(g - m)          v ← β₂·v + (1 - β₂)·g²
        p ← p - lr/(1 - β₁ᵗ) · m / (√v / √(1 - β₂ᵗ) + eps)
    `weight_decay` adds wd·p to g, or, with `decoupled_weight_decay` (AdamW), scales p by
    (1 - lr·wd) first. `amsgrad` uses the running maximum of v instead of v.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_adam_options(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        check_fused(fused, foreach, differentiable)
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param, group["amsgrad"])

    def _state_for(self, param: Any, amsgrad: bool) -> dict[str, Any]:
        """The parameter's state, made on its first step: a float32 step count (as
        PyTorch keeps it) and the moment estimates, zero."""
        state = self.state[param]
        if not state:
            state["step"] = factories.tensor(0.0, dtype=dtypes.float32)
            state["exp_avg"] = factories.zeros_like(param)
            state["exp_avg_sq"] = factories.zeros_like(param)
            if amsgrad:
                state["max_exp_avg_sq"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, eps, weight_decay, amsgrad = (group[k] for k in ("lr", "eps", "weight_decay",
                                                                 "amsgrad"))
            beta1, beta2 = group["betas"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = -param.grad if group["maximize"] else param.grad
                state = self._state_for(param, amsgrad)
                state["step"] += 1
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # lerp towards grad
                exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
                if group["differentiable"]:
                    _differentiable_update(param, state, lr, (beta1, beta2), eps, amsgrad)
                    continue
                step = state["step"].item()
                bias_correction1 = 1 - beta1**step
                bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                if amsgrad:  # in place, as PyTorch keeps it (the same tensor, its version moved)
                    second_moment = state["max_exp_avg_sq"]
                    ops.maximum(second_moment, exp_avg_sq, out=second_moment)
                else:
                    second_moment = exp_avg_sq
                denom = second_moment.sqrt() / bias_correction2_sqrt + eps
                param.add_(exp_avg / denom, alpha=-lr / bias_correction1)


def _differentiable_update(param: Any, state: dict, lr: float, betas: tuple[float, float],
                           eps: float, amsgrad: bool) -> None:
    """The update of a `differentiable=True` Adam, in torch's form for it: the bias
    corrections are tensors of the float32 step count (not Python numbers of its value),
    the step size folded into the denominator, and nothing the graph needs overwritten."""
    beta1, beta2 = betas
    step = state["step"]
    step_size_neg = (lr / (1 - beta1**step)).neg()
    bias_correction2_sqrt = (1 - beta2**step).sqrt()
    second_moment = state["exp_avg_sq"]
    if amsgrad:
        state["max_exp_avg_sq"].copy_(ops.maximum(state["max_exp_avg_sq"].clone(),
                                                  second_moment))
        second_moment = state["max_exp_avg_sq"]
    denom = (second_moment.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
        eps / step_size_neg)
    param.addcdiv_(state["exp_avg"].clone(), denom)
