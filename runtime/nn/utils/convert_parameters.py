"""parameters_to_vector and vector_to_parameters, as torch.nn.utils: all the parameters
as one flat vector and back (e.g. for second-order methods or evolution strategies that
see the model as a point in R^n)."""

from __future__ import annotations

from collections.abc import Iterable

from generated import ops
from runtime._tensor import Tensor
from runtime.nn.module import typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated in order. The result is part of the graph
    (views of the parameters, then a cat), so gradients flow back through it."""
    return ops.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Give each parameter, in order, the next numel() entries of `vec` as its new data
    (a view of `vec` shaped like the parameter, as torch's `param.data = ...` does)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    start = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[start:start + count].view_as(param).data
        start += count
