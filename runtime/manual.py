"""Helpers that backward formulas call: gradgen's FunctionsManual.

Each is written with ops of the spec (through `generated.ops` or Tensor methods), never
with numpy directly, so that a formula that calls it stays differentiable and a
`create_graph=True` backward can be differentiated again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# -- elementwise ------------------------------------------------------------------------------

def maybe_multiply(grad: Any, factor: Any) -> Any:
    """`grad * factor`, skipping the multiplication when factor is 1 (as PyTorch does)."""
    return grad if factor == 1 else grad * factor


def pow_backward(grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**e = e * x**(e-1); zero when e == 0 (not NaN at x == 0)."""
    if exponent == 0:
        return zeros_like(self)
    return grad * (exponent * self.pow(exponent - 1))


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
