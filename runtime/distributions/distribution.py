"""torch.distributions.Distribution, the base class of every distribution."""

from __future__ import annotations

from typing import Any

from runtime import grad_mode
from runtime._tensor import Size, Tensor
from runtime._warn import warn_at_caller
from runtime.aliases import torch_name
from runtime.distributions import constraints
from runtime.distributions.utils import EMPTY_SHAPE, lazy_property

__all__ = ["Distribution"]


def class_name(cls: type) -> str:
    """`str(cls)` with torch's module names for gradgen's modules, as torch's messages
    print a class."""
    return f"<class '{torch_name(cls.__module__)}.{cls.__qualname__}'>"


def _all_true(valid: Any) -> bool:
    return bool(valid) if not isinstance(valid, Tensor) else bool(valid.all())


class Distribution:
    """A probability distribution over events of `event_shape`, batched over `batch_shape`.

    With validation on (the default, as Python's `assert`: off under `python -O`), the
    constructor checks every parameter against `arg_constraints`, and `log_prob`, `cdf`
    and `icdf` check their value's shape and that it lies in the support.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = EMPTY_SHAPE, event_shape: Any = EMPTY_SHAPE,
                 validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warn_at_caller(f"{class_name(type(self))} does not define `arg_constraints`. "
                           "Please set `arg_constraints = {}` or initialize the distribution with "
                           "`validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                         lazy_property):
                continue  # the other parametrisation was given: this one is not computed
            value = getattr(self, param)
            if not _all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                    f"constraint {constraint!r}, but found invalid values:\n{value}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """This distribution with its batch dimensions expanded to `batch_shape` (the
        parameters are expanded views; nothing is checked again)."""
        raise NotImplementedError

    def _expand_parameters(self, cls: type, names: Any, batch_shape: Any,
                           _instance: Any = None) -> Any:
        """The common body of `expand`: a new instance with each parameter in `names`
        expanded to `batch_shape`."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def batch_shape(self) -> Size:
        """The shape over which the parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Each tensor parameter's name and the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        """The constraint that the distribution's values satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{class_name(type(self))} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """A sample of shape sample_shape + batch_shape + event_shape, without gradient."""
        with grad_mode.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = EMPTY_SHAPE) -> Tensor:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """`n` samples (deprecated, as in torch: use sample((n,)))."""
        warn_at_caller("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                       FutureWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape: Any = EMPTY_SHAPE) -> Size:
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Any) -> None:
        """torch's checks on a value given to log_prob, cdf or icdf: a Tensor, whose
        rightmost dimensions match the event shape and broadcast with the batch shape, and
        whose values lie in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warn_at_caller(f"{class_name(type(self))} does not define `support` to enable sample "
                           "validation. Please initialize the distribution with "
                           "`validate_args=False` to turn off validation.")
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        shown = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                value = self.__dict__[name]
                shown.append(f"{name}: {value if value.numel() == 1 else value.size()}")
        return f"{type(self).__name__}({', '.join(shown)})"
