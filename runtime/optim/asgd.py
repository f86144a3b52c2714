"""ASGD: SGD with a decaying step and a running average of the iterates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import factories
from runtime.optim.optimizer import Optimizer, scalar_state, select, step_without_grad

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky), in PyTorch's update order.

    Per parameter, at step t with gradient g (plus wd·p when `weight_decay`):
        p ← p(1 - λη) - η·g          ax ← ax + μ(p - ax)  (ax ← p while μ = 1)
        η ← lr / (1 + λ·lr·t)^α      μ ← 1 / max(1, t - t₀)
    `ax`, the average, is in the state; the parameters themselves are not averaged.
    """

    # torch's refusal of capturable=True names the state this optimizer keeps
    CAPTURABLE_STATE = "params, mus, etas, and state_steps"

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        self._state_for(param, group["lr"])

    def _state_for(self, param: Any, lr: float) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            state["eta"] = scalar_state(lr)
            state["mu"] = scalar_state(1.0)
            state["ax"] = factories.zeros_like(param)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)

    def _update(self, param: Any, group: dict[str, Any]) -> None:
        lr, lambd, weight_decay = group["lr"], group["lambd"], group["weight_decay"]
        grad = -param.grad if group["maximize"] else param.grad
        state = self._state_for(param, lr)
        state["step"] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        # Choices (`select`), not `if`s or max(): a compiled step makes them at each call,
        # on that call's numbers.
        ax.copy_(select(mu.item() != 1, ax.add(param.sub(ax).mul_(mu)), param))
        step = state["step"].item()
        _set(eta, lr / ((1 + lambd * lr * step) ** group["alpha"]))
        since = step - group["t0"]
        _set(mu, 1 / select(since > 1, since, 1))


def _set(state: Any, value: float) -> None:
    """`state.copy_(torch.as_tensor(value))`, as torch sets it: the value rounded to the
    default dtype first (a state loaded as float64 still gets float32's value). Filled,
    not made from the number, so that a compiled step writes the value it reads afresh."""
    state.copy_(factories.zeros(()).fill_(value))
