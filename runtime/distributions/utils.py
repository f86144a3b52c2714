"""torch.distributions.utils: the helpers the distributions share (broadcasting their
parameters, probabilities and logits, properties computed on first use)."""

from __future__ import annotations

import functools
from typing import Any

from generated import ops
from runtime import dtypes, factories, grad_mode
from runtime._tensor import Size, Tensor
from runtime.legacy import finfo
from runtime.nn import functional

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape every one of `shapes` broadcasts to (torch's rules, right-aligned)."""
    result: list[int] = []
    for shape in shapes:
        shape = tuple(shape)
        width = max(len(result), len(shape))
        left = [1] * (width - len(result)) + result
        right = [1] * (width - len(shape)) + list(shape)
        merged = []
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            if a != b and 1 not in (a, b):
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {index}")
            merged.append(b if a == 1 else a)
        result = merged
    return tuple(result)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Each tensor expanded to the common shape (views that record ExpandBackward0)."""
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Numbers and tensors as tensors of one broadcast shape; a number takes the dtype of
    the first tensor among `values`, or the default dtype."""
    if not all(isinstance(v, Tensor) or is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = dtypes.get_default_dtype() if first is None else first.dtype
    tensors = [v if isinstance(v, Tensor) else factories.tensor(v, dtype=dtype) for v in values]
    return broadcast_tensors(*tensors)


def standard_normal(shape: Any, dtype: Any) -> Tensor:
    """N(0, 1) of `shape`, drawn as torch's distributions draw it: `empty(...).normal_()`."""
    return factories.empty(shape, dtype=dtype).normal_()


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """`value` summed over its `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid for binary events, a softmax over the last
    dimension otherwise."""
    if is_binary:
        return ops.sigmoid(logits)
    return functional.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept one machine epsilon away from 0 and 1."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from (clamped) probabilities: log-odds for binary events, logs otherwise."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ops.log(clamped) - ops.log1p(-clamped)
    return ops.log(clamped)


class lazy_property:  # noqa: N801 - torch's name
    """A property computed once, on first access, then stored on the instance (so it shows
    in the instance's __dict__, which is how a distribution knows which of its
    parametrisations was given)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with grad_mode.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):  # noqa: N801 - torch's name
    """What a lazy_property reads as on the class: a property too, for introspection."""

    def __init__(self, wrapped: Any) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int) -> Tensor:
    arange = factories.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal `diag` down) of the last two dims, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: square matrices with `vec` in their lower triangle."""
    size = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


def is_number(value: Any) -> bool:
    """Whether `value` is a Python number (torch's `_Number`: bool, int or float)."""
    return isinstance(value, bool | int | float)


EMPTY_SHAPE = Size()  # the default sample_shape: one sample, no sample dimensions
