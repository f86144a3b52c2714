"""Composite ops: plain Python over spec ops, like PyTorch's CompositeImplicitAutograd.

They have no node of their own; the graph shows the ops they are made of, exactly as
PyTorch's does (`linear` on a 2-D input records TBackward0 and AddmmBackward0).
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import dtypes
from runtime.dispatch import int_list
from runtime.tensor import Tensor


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sum a broadcast tensor back to `size` (PyTorch's at::sum_to)."""
    size = int_list(size)
    shape = self.shape
    if shape == size:
        return self
    lead = len(shape) - len(size)
    result = self
    if lead > 0:
        result = result.sum(tuple(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and result.shape[i] != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """`x.to(dtype)` (and `x.to(other)`): the same tensor if nothing changes."""
    dtype = kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            dtype = arg.dtype
    if dtype is None or dtype is self.dtype:
        return self
    return ops._to_copy(self, dtype=dtype)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x Wᵀ + b; addmm on a 2-D input with a bias, as PyTorch decomposes it."""
    if input.ndim == 2 and bias is not None:
        return ops.addmm(bias, input, weight.t())
    output = matmul(input, weight.t())
    return output if bias is None else output + bias


def matmul(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim == 2 and other.ndim == 2:
        return ops.mm(input, other)
    raise NotImplementedError("matmul is only implemented for 2-D inputs so far")
