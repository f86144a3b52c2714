"""Helpers that backward formulas call: gradgen's FunctionsManual.

Each is written with ops of the spec (through `generated.ops` or Tensor methods), never
with numpy directly, so that a formula that calls it stays differentiable and a
`create_graph=True` backward can be differentiated again.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def _zeros(sizes: Sequence[int], like: Any) -> Any:
    """Zeros of `sizes` with `like`'s dtype, outside any graph."""
    from runtime.factories import zeros

    return zeros(tuple(sizes), dtype=like.dtype)


def _wrap(dim: int, ndim: int) -> int:
    return dim % ndim if ndim else 0


def permute_backwards(grad: Any, dims: Sequence[int]) -> Any:
    """Undo permute(dims) with the inverse permutation."""
    inverse = [0] * len(dims)
    for position, d in enumerate(dims):
        inverse[_wrap(d, len(dims))] = position
    return grad.permute(inverse)


def cat_tensors_backward(grad: Any, sizes: Sequence[Sequence[int]], dim: int) -> list:
    """Each input of cat gets its slice of the gradient (1-D empty inputs, which cat skips,
    get an empty gradient)."""
    dim = _wrap(dim, grad.ndim)
    grads, start = [], 0
    for shape in sizes:
        if tuple(shape) == (0,) and grad.ndim != 1:
            grads.append(_zeros(shape, grad))
            continue
        end = start + shape[dim]
        grads.append(ops.slice(grad, dim, start, end))
        start = end
    return grads


def stack_tensors_backward(grad: Any, dim: int, sizes: Sequence[Sequence[int]]) -> list:
    """stack put input i at index i of `dim`: selecting it gives its gradient back."""
    return [grad.select(dim, i) for i in range(len(sizes))]


def split_with_sizes_backward(grads: Sequence[Any], split_sizes: Sequence[int], dim: int,
                              sizes: Sequence[int]) -> Any:
    """Concatenate the pieces' gradients, zeros for pieces that got none (None when none
    did)."""
    defined = next((g for g in grads if g is not None), None)
    if defined is None:
        return None
    dim = _wrap(dim, len(sizes))
    pieces = []
    for grad, length in zip(grads, split_sizes, strict=True):
        if grad is None:
            shape = list(sizes)
            shape[dim] = length
            grad = _zeros(shape, defined)
        pieces.append(grad)
    return ops.cat(pieces, dim)


def split_backward(grads: Sequence[Any], split_size: int, dim: int,
                   sizes: Sequence[int]) -> Any:
    """split.Tensor's pieces are all `split_size` long but the last, which holds the rest."""
    length = sizes[_wrap(dim, len(sizes))]
    pieces = [split_size] * (len(grads) - 1)
    return split_with_sizes_backward(grads, [*pieces, length - sum(pieces)], dim, sizes)


def unbind_backward(grads: Sequence[Any], dim: int) -> Any:
    """Stack the slices' gradients back, zeros for slices that got none."""
    defined = next((g for g in grads if g is not None), None)
    if defined is None:
        return None
    return ops.stack([_zeros(defined.shape, defined) if g is None else g for g in grads], dim)


def slice_backward_wrapper(grad: Any, sizes: Sequence[int], dim: int, start: int | None,
                           end: int | None, step: int) -> Any:
    """slice_backward with `start` and `end` made concrete the way slice reads them."""
    dim = _wrap(dim, len(sizes))
    start, end, _ = slice(start, end, step).indices(sizes[dim])
    return ops.slice_backward(grad, sizes, dim, start, max(start, end), step)


def index_backward(grad: Any, sizes: Sequence[int], indices: Sequence[Any]) -> Any:
    """Scatter-add the gradient back to the indexed positions (repeated ones add up)."""
    return ops._index_put_impl_(_zeros(sizes, grad), indices, grad, True, True)


def index_select_backward(grad: Any, sizes: Sequence[int], dim: int, index: Any) -> Any:
    return _zeros(sizes, grad).index_add(dim, index, grad)


def gather_backward(grad: Any, sizes: Sequence[int], dim: int, index: Any) -> Any:
    return _zeros(sizes, grad).scatter_add(dim, index, grad)


def repeat_backward(grad: Any, repeats: Sequence[int], sizes: Sequence[int]) -> Any:
    """Sum the copies: split each dimension into (repeat, size) and sum the repeat axes."""
    lead = len(repeats) - len(sizes)
    shape: list[int] = list(repeats[:lead])
    for repeat, size in zip(repeats[lead:], sizes, strict=True):
        shape += [repeat, size]
    axes = [*range(lead), *range(lead, len(shape), 2)]
    grad = grad.reshape(shape)
    return grad.sum(axes) if axes else grad


# -- linear algebra and nn --------------------------------------------------------------------
