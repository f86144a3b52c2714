"""Adadelta: steps sized by the ratio of running RMS of past updates to that of gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import dtypes, factories
from runtime.optim.optimizer import Optimizer, step_without_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler), with PyTorch's update order and options.

    Per parameter, with gradient g (plus wd·p with weight decay):
        v ← ρ·v + (1 - ρ)·g²                 running mean square of the gradients
        Δ = √(u + eps) / √(v + eps) · g       u: running mean square of the updates
        u ← ρ·u + (1 - ρ)·Δ²
        p ← p - lr·Δ                          (lr defaults to 1: Δ has the units of p)
    """

    # torch's refusal of capturable=True lists no xla for this optimizer
    CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone']"

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param)

    def _state_for(self, param: Any) -> dict[str, Any]:
        """The parameter's state, made on its first step: a float32 step count and the two
        running mean squares, zero."""
        state = self.state[param]
        if not state:
            state["step"] = factories.tensor(0.0, dtype=dtypes.float32)
            state["square_avg"] = factories.zeros_like(param)
            state["acc_delta"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self._state_for(param)
                state["step"] += 1
                grad = -param.grad if group["maximize"] else param.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
                std = square_avg.add(eps).sqrt()
                delta = acc_delta.add(eps).sqrt().div(std).mul(grad)
                acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
                param.add_(delta, alpha=-lr)
