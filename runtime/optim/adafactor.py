"""Adafactor (Shazeer & Stern, 2018) as torch.optim.Adafactor computes it: the second moment of
a matrix kept as a row and a column factor instead of a full tensor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime import factories
from runtime.optim.optimizer import Optimizer, scalar_state, step_without_grad

__all__ = ["Adafactor"]

_FLOAT_EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16,
              "float16": 0.0009765625}


def _check_options(lr: float, beta2_decay: float, eps: tuple, d: float,
                   weight_decay: float) -> None:
    """torch's checks, in its order and words."""
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")


class Adafactor(Optimizer):
    """Per parameter p with gradient g at step t (β₂ₜ = 1 - t^beta2_decay):
        ρₜ = min(lr, 1/√t)      α = max(eps2, RMS(p)) · ρₜ      p ← (1 - lr·wd) p
        a matrix: R ← lerp(R, mean(g², last dim), β₂ₜ), C likewise over the dim before,
                  V = R C / mean(R)         a vector: V ← lerp(V, g², β₂ₜ)
        u = g / √max(V, eps1²)              p ← p - α / max(1, RMS(u)/d) · u
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        _check_options(lr, beta2_decay, eps, d, weight_decay)
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _state_for(self, param: Any) -> dict[str, Any]:
        state = self.state[param]
        if not state:
            state["step"] = scalar_state(0.0)
            grad = param.grad
            if grad.ndim > 1:  # the factors: the last dim summed away, and the one before
                row, column = list(grad.shape), list(grad.shape)
                row[-1], column[-2] = 1, 1
                state["row_var"] = grad.new_zeros(row)
                state["col_var"] = grad.new_zeros(column)
            else:
                state["variance"] = factories.zeros_like(grad)
        return state

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)

    def _update(self, param: Any, group: dict[str, Any]) -> None:
        lr, weight_decay, d = group["lr"], group["weight_decay"], group["d"]
        eps1, eps2 = group["eps"]
        grad = -param.grad if group["maximize"] else param.grad
        state = self._state_for(param)
        if eps1 is None:
            eps1 = _FLOAT_EPS[param.dtype.name]
        state["step"] += 1
        step = state["step"].item()
        beta2 = step ** group["beta2_decay"]  # the weight of the new g², 1 - β₂ₜ
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.shape[-1]), beta2)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.shape[-2]), beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, beta2)
            estimate = variance.clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denominator = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denominator)
