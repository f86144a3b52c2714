"""torch.optim.swa_utils: stochastic weight averaging (and EMA) of a model's parameters,
the learning-rate schedule that anneals to the SWA rate, and the pass that recomputes batch
norm statistics for the averaged weights."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from runtime import dtypes, factories
from runtime._tensor import Tensor
from runtime.grad_mode import no_grad
from runtime.nn.batchnorm import _BatchNorm
from runtime.nn.module import Module
from runtime.optim.lr_scheduler import LRScheduler
from runtime.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """Exponential moving average, all tensors at once: ema ← lerp(ema, current, 1 - decay)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_params: list, current_params: list, num_averaged: Any) -> None:
        for ema, current in zip(ema_params, current_params, strict=True):
            if ema.dtype.is_floating_point:
                ema.lerp_(current, 1 - decay)
            else:
                ema.copy_(ema * decay + current * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running mean, all tensors at once."""
    @no_grad()
    def swa_update(averaged_params: list, current_params: list, num_averaged: Any) -> None:
        for averaged, current in zip(averaged_params, current_params, strict=True):
            averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable:
    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers) are the average of
    the model's at each `update_parameters` call: the running mean by default, or avg_fn /
    multi_avg_fn's (an EMA with get_ema_multi_avg_fn)."""

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", factories.tensor(0, dtype=dtypes.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tracked(self, model: Module) -> Iterable[Tensor]:
        return itertools.chain(model.parameters(), model.buffers()) if self.use_buffers \
            else model.parameters()

    def update_parameters(self, model: Module) -> None:
        averaged = [p.detach() for p in (self._tracked(self.module) if self.use_buffers
                                          else self.parameters())]
        current = [p.detach() for p in self._tracked(model)]
        pairs = list(zip(averaged, current, strict=False))
        if int(self.n_averaged.item()) == 0:
            for mine, theirs in pairs:
                mine.copy_(theirs)
        elif self.multi_avg_fn is not None:
            self.multi_avg_fn([m for m, _ in pairs], [c for _, c in pairs], self.n_averaged)
        else:
            average = self.avg_fn or get_swa_avg_fn()
            for mine, theirs in pairs:
                mine.copy_(average(mine, theirs, self.n_averaged))
        if not self.use_buffers:  # buffers (batch norm's statistics) follow the model's
            for mine, theirs in zip(self.module.buffers(), model.buffers(), strict=True):
                mine.detach().copy_(theirs.detach())
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of model's batch norms over one pass of loader
    (a cumulative average: momentum None during the pass)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, list | tuple):
            input = input[0]
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs epochs ('cos' or 'linear'),
    then keeps it there."""

    def __init__(self, optimizer: Optimizer, swa_lr: Any, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        if isinstance(swa_lr, list | tuple):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups. "
                                 f"swa_lr has {len(swa_lr)} values, param_groups has "
                                 f"{len(groups)}.")
            values = list(swa_lr)
        else:
            values = [swa_lr] * len(groups)
        for value, group in zip(values, groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the schedule started from, given the current one at progress alpha."""
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        self._warn_if_called_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        previous = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        starts = [self._get_initial_lr(group["lr"], group["swa_lr"], previous)
                  for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, starts, strict=True)]
