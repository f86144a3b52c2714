"""Rprop: a per-element step size grown or shrunk by the sign of the gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import factories
from runtime.optim.optimizer import Optimizer, scalar_state, step_without_grad

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun), in PyTorch's update order.

    Per element: where g has the sign of the previous gradient the step size grows by
    η₊, where it changed sign it shrinks by η₋ (and that element does not move this step,
    its stored gradient set to 0), clamped to `step_sizes`; p ← p - sign(g)·step_size.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param, group["lr"])

    def _state_for(self, param: Any, lr: float) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            state["prev"] = factories.zeros_like(param)
            state["step_size"] = factories.full_like(param, lr)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)

    def _update(self, param: Any, group: dict[str, Any]) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        grad = -param.grad if group["maximize"] else param.grad
        state = self._state_for(param, group["lr"])
        state["step"] += 1
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
