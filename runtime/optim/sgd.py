"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime.optim.optimizer import Optimizer, check_fused, step_without_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    """p ← p - lr·g, where g is the gradient plus weight decay, through momentum if any.

    With momentum μ the buffer is b ← μ·b + (1 - dampening)·g (b = g on the first step),
    and the step uses b, or g + μ·b with Nesterov.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        check_fused(fused, foreach, differentiable)
        super().__init__(params, defaults)

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if group["maximize"]:
                    grad = -grad
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                if momentum != 0:
                    state = self.state[param]
                    buffer = state.get("momentum_buffer")
                    if buffer is None:
                        buffer = state["momentum_buffer"] = grad.detach().clone()
                    else:
                        buffer.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
                    grad = grad.add(buffer, alpha=momentum) if group["nesterov"] else buffer
                param.add_(grad, alpha=-lr)
