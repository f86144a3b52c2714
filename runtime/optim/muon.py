"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration, for the 2-d
weights of hidden layers."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from runtime import dtypes, factories
from runtime._tensor import Tensor
from runtime.optim.optimizer import Optimizer, step_without_grad

__all__ = ["Muon"]

_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
_BFLOAT16 = dtypes.bfloat16.numpy
_ADJUSTMENTS = ("original", "match_rms_adamw")


def _bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even), kept as float32: the
    rounding torch does after every bfloat16 operation."""
    return np.asarray(values, dtype=np.float32).astype(_BFLOAT16).astype(np.float32)


def _newton_schulz(update: np.ndarray, coefficients: tuple[float, float, float], steps: int,
                   eps: float) -> np.ndarray:
    """An approximately orthogonal matrix with `update`'s singular vectors: `steps` quintic
    Newton-Schulz iterations, in bfloat16 as torch computes them (each product accumulated in
    float32, each result rounded)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (np.float32(value) for value in coefficients)
    tall = update.shape[0] > update.shape[1]
    x = _bfloat16(update.T if tall else update)
    norm = _bfloat16(np.sqrt(np.square(x).sum(dtype=np.float32)))
    x = _bfloat16(x / np.maximum(norm, _bfloat16(np.float32(eps))))
    for _ in range(steps):
        gram = _bfloat16(x @ x.T)
        polynomial = _bfloat16(b * gram + c * (gram @ gram))
        x = _bfloat16(a * x + polynomial @ x)
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, columns = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / columns))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, columns)))
    return lr


class Muon(Optimizer):
    """Muon (Keller Jordan), as torch.optim.Muon: B ← μB + (1-μ)g (a lerp); the update is
    g lerped towards B by μ (Nesterov) or B itself, orthogonalised by Newton-Schulz in
    bfloat16; then p ← p(1 - lr·λ) - lr'·update, lr' scaled by the matrix's shape."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = _COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUSTMENTS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for param in group["params"]:
                if param.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {param.size()}")

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    self._update(param, group)

    def _update(self, param: Any, group: dict[str, Any]) -> None:
        if param.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        grad = param.grad
        state = self.state[param]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = factories.zeros_like(grad)
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        momentum = group["momentum"]
        buffer = state["momentum_buffer"]
        buffer.lerp_(grad, 1 - momentum)
        update = grad.lerp(buffer, momentum) if group["nesterov"] else buffer
        orthogonal = _newton_schulz(update._data.astype(np.float32),
                                    group["ns_coefficients"], group["ns_steps"], group["eps"])
        lr = float(group["lr"])
        param.mul_(1 - lr * group["weight_decay"])
        param.add_(factories.tensor(orthogonal),
                   alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], tuple(param.shape)))
