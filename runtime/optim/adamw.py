"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameters directly, p ← p·(1 - lr·wd), instead of
    adding wd·p to the gradient; its default weight decay is 1e-2."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
