"""Hand-written backward functions, from the math, not from the spec.

Each takes the gradient of the output and what the forward pass saw (numpy arrays and
numbers) and returns the gradient of each differentiable input, in the order of the
node's next_functions. A broadcast input gets the gradient of its broadcast shape here;
the engine sums it back, so the tests compare after that reduction (`sum_to`).
"""

from __future__ import annotations

import numpy as np


def sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Reduce a gradient of a broadcast shape to `shape` (what the engine does)."""
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead))) if lead else grad
    axes = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad


def add_backward(grad, self, other, alpha):
    """out = self + alpha * other."""
    return [sum_to(grad, self.shape), sum_to(alpha * grad, other.shape)]


def sub_backward(grad, self, other, alpha):
    """out = self - alpha * other."""
    return [sum_to(grad, self.shape), sum_to(-alpha * grad, other.shape)]


def mul_backward(grad, self, other):
    """out = self * other: each factor's gradient is the other factor."""
    return [sum_to(grad * other, self.shape), sum_to(grad * self, other.shape)]


def div_backward(grad, self, other):
    """out = self / other: d/dself = 1/other, d/dother = -self/other²."""
    return [sum_to(grad / other, self.shape), sum_to(-grad * self / other**2, other.shape)]


def pow_backward(grad, self, exponent):
    """out = self ** e (e a number): d/dself = e * self^(e-1), and 0 when e == 0."""
    if exponent == 0:
        return [np.zeros_like(self)]
    return [grad * exponent * self ** (exponent - 1)]


def sum_backward(grad, self):
    """out = Σ self: every element gets the output's gradient."""
    return [np.broadcast_to(grad, self.shape).copy()]


def mean_backward(grad, self):
    """out = Σ self / n."""
    return [np.broadcast_to(grad / self.size, self.shape).copy()]


def t_backward(grad, self):
    """out = selfᵀ."""
    return [grad.T]


def mm_backward(grad, self, mat2):
    """out = self @ mat2: d/dself = grad @ mat2ᵀ, d/dmat2 = selfᵀ @ grad."""
    return [grad @ mat2.T, self.T @ grad]


def addmm_backward(grad, self, mat1, mat2, beta, alpha):
    """out = beta * self + alpha * (mat1 @ mat2), self broadcast (a bias)."""
    return [sum_to(beta * grad, self.shape), alpha * grad @ mat2.T, alpha * mat1.T @ grad]


def relu_backward(grad, self):
    """out = max(self, 0): the gradient passes where the input is positive (0 at 0)."""
    return [np.where(self > 0, grad, 0.0)]
