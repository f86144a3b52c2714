"""RMSprop: each step scaled by a running root-mean-square of the gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import dtypes, factories
from runtime.optim.optimizer import Optimizer, step_without_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture notes), with PyTorch's update order and options.

    Per parameter, with gradient g (plus wd·p with weight decay):
        v ← α·v + (1 - α)·g²          the running mean square
        centered: ḡ ← ḡ + (1 - α)(g - ḡ), and v - ḡ² (a variance) replaces v below
        avg = √v + eps
        p ← p - lr·g / avg, or with momentum μ: b ← μ·b + g / avg, p ← p - lr·b
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param, group)

    def _state_for(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        """The parameter's state, made on its first step: a float32 step count (as PyTorch
        keeps it), the mean square and, as the options need them, the momentum buffer
        and the mean gradient, all zero."""
        state = self.state[param]
        if not state:
            state["step"] = factories.tensor(0.0, dtype=dtypes.float32)
            state["square_avg"] = factories.zeros_like(param)
            if group["momentum"] > 0:
                state["momentum_buffer"] = factories.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            lr, alpha, eps, momentum = (group[k] for k in ("lr", "alpha", "eps", "momentum"))
            for param in group["params"]:
                if param.grad is None:
                    continue
                grad = -param.grad if group["maximize"] else param.grad
                state = self._state_for(param, group)
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(param, alpha=group["weight_decay"])
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.add_(grad - grad_avg, alpha=1 - alpha)  # lerp towards grad
                    avg = (square_avg - grad_avg * grad_avg).sqrt()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add(eps)
                if momentum > 0:
                    buffer = state["momentum_buffer"]
                    buffer.mul_(momentum).add_(grad / avg)
                    param.add_(buffer, alpha=-lr)
                else:
                    param.add_(grad / avg, alpha=-lr)
