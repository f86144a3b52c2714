"""SparseAdam: Adam for sparse gradients (nn.Embedding(sparse=True)). gradgen has no sparse
layout, so every gradient it makes is dense, which SparseAdam refuses as torch's does; the
optimizer exists so that programs naming it construct it, check its options and say why."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime._tensor import Tensor
from runtime.optim.optimizer import Optimizer, step_without_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch's options, checks and state_dict layout; a step with a (dense) gradient raises
    torch's error, and a step with none does nothing."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for index in (0, 1):
            if not 0.0 <= betas[index] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [[index, position]
                          for index, group in enumerate(self.param_groups)
                          for position, param in enumerate(group["params"])
                          if param.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    @step_without_grad
    def step(self) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
