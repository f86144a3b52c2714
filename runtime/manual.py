"""Helpers that backward formulas call: gradgen's FunctionsManual.

Each is written with ops of the spec (through `generated.ops` or Tensor methods), never
with numpy directly, so that a formula that calls it stays differentiable and a
`create_graph=True` backward can be differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

from generated import ops

# -- elementwise ------------------------------------------------------------------------------

def maybe_multiply(grad: Any, factor: Any) -> Any:
    """`grad * factor`, skipping the multiplication when factor is 1 (as PyTorch does)."""
    return grad if factor == 1 else grad * factor


def pow_backward(grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**e = e * x**(e-1); zero when e == 0 (not NaN at x == 0)."""
    if exponent == 0:
        return zeros_like(self)
    return grad * (exponent * self.pow(exponent - 1))


def pow_backward_self(grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**y = y * x**(y-1) for a tensor exponent; zero where y == 0 (not NaN at x == 0)."""
    return ops.where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)))


def pow_backward_exponent(grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    """d/dy x**y = x**y * log(x); taken as 0 where x == 0 and y >= 0 (0**y is flat there).

    `self` is a tensor for pow.Tensor_Tensor and a Python number for pow.Scalar (`2 ** x`).
    """
    if isinstance(self, Number):
        if self == 0:
            return ops.where(exponent >= 0, 0, grad * result * -math.inf)
        return grad * result * (math.log(self) if self > 0 else math.nan)
    flat = (self == 0).logical_and(exponent >= 0)
    return ops.where(flat, 0, grad * result * self.log())


def gelu_double_backward(grad: Any, grad_output: Any, self: Any, approximate: str) -> Any:
    """d/dx of gelu_backward(grad_output, x) = grad_output * gelu''(x), times `grad`."""
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        inner = (self + c * self.pow(3)) * k
        t = inner.tanh()
        d_inner = (1 + 3 * c * self.pow(2)) * k
        dd_inner = 6 * c * k * self
        second = (1 - t * t) * (d_inner + 0.5 * self * (dd_inner - 2 * t * d_inner * d_inner))
    else:
        pdf = (-0.5 * self * self).exp() * (1 / math.sqrt(2 * math.pi))
        second = pdf * (2 - self * self)
    return grad * grad_output * second


def softplus_double_backward(grad: Any, self: Any, beta: Any, threshold: Any) -> Any:
    """d/dx of softplus_backward: beta * s * (1 - s) with s = sigmoid(beta x); 0 past the
    threshold, where softplus is linear."""
    s = (self * beta).sigmoid()
    return ops.where(self * beta > threshold, 0, grad * beta * s * (1 - s))


def clamp_backward(grad: Any, self: Any, min: Any, max: Any) -> Any:
    """The gradient passes where min <= self <= max (a bound itself included)."""
    if min is None:
        inside = self <= max
    elif max is None:
        inside = self >= min
    else:
        inside = (self >= min).logical_and(self <= max)
    return ops.where(inside, grad, 0)


def clamp_backward_min_max(grad: Any, self: Any, min: Any, max: Any,
                           grad_input_mask: Sequence[bool]) -> tuple[Any, Any]:
    """Gradients of clamp's tensor bounds: each takes it where it is the output.

    Where min > max the output is max everywhere, so only max gets the gradient.
    """
    grad_min = grad_max = None
    if min is not None and grad_input_mask[0]:
        takes = self < min if max is None else (self < min).logical_and(min < max)
        grad_min = ops.where(takes, grad, 0)
    if max is not None and grad_input_mask[1]:
        takes = self > max if min is None else (self > max).logical_or(max < min)
        grad_max = ops.where(takes, grad, 0)
    return grad_min, grad_max


def masked_fill_backward(grad: Any, mask: Any) -> Any:
    """The filled value's gradient: the sum of the gradient where the mask is set."""
    return ops.where(mask, grad, 0).sum()


# -- reductions -------------------------------------------------------------------------------

def _normalized_dims(dim: Sequence[int] | int | None, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted(d % ndim if ndim else 0 for d in dims)


def unsqueeze_multiple(grad: Any, dim: Sequence[int] | int | None, ndim: int) -> Any:
    """Put back the dimensions a reduction without keepdim removed."""
    for d in _normalized_dims(dim, ndim):
        grad = grad.unsqueeze(d)
    return grad


def sum_backward(grad: Any, sizes: Sequence[int], dim: Any, keepdim: bool) -> Any:
    """A sum over `dim` spreads its gradient back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        grad = unsqueeze_multiple(grad, dim, len(sizes))
    return grad.expand(sizes)


# -- shape and indexing -----------------------------------------------------------------------

def zeros_like(tensor: Any) -> Any:
    """Zeros of `tensor`'s shape and dtype, outside any graph."""
    from runtime.factories import zeros_like as _zeros_like

    return _zeros_like(tensor)




def unsqueeze_to(grad: Any, dim: Sequence[int] | int, sizes: Sequence[int]) -> Any:
    """Undo squeeze(dim): put back each squeezed dimension that had size 1."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in sorted(d % len(sizes) for d in dims):
        if sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


# -- linear algebra and nn --------------------------------------------------------------------
