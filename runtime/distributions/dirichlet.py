"""torch.distributions.Dirichlet: distributions over the probability simplex."""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import autograd
from runtime._tensor import Size, Tensor
from runtime.distributions import constraints
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.samplers import _dirichlet_grad, _sample_dirichlet
from runtime.nn import functional

__all__ = ["Dirichlet"]


class _Dirichlet(autograd.Function):
    """A Dirichlet sample, differentiable in its concentrations (implicit
    reparameterisation, through torch's `_dirichlet_grad`)."""

    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = _dirichlet_grad(x, concentration, total)
        return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) over the last dimension of `concentration`."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return _Dirichlet.apply(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (ops.xlogy(self.concentration - 1.0, value).sum(-1)
                + ops.lgamma(self.concentration.sum(-1))
                - ops.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        below_one = (self.concentration < 1).all(dim=-1)
        mode[below_one] = functional.one_hot(mode[below_one].argmax(dim=-1),
                                             shifted.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def entropy(self) -> Tensor:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ops.lgamma(self.concentration).sum(-1) - ops.lgamma(a0)
                - (k - a0) * ops.digamma(a0)
                - ((self.concentration - 1.0) * ops.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - ops.lgamma(x.sum(-1))
