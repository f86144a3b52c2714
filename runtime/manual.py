"""Helpers that backward formulas call: gradgen's FunctionsManual.

Each takes the op namespace `ops` first and does its tensor work through it: the ops of the
spec, former Tensor methods as `ops.m(x, ...)` and factories, never numpy or a method of its
arguments. So one body runs on every target that binds a namespace: on gradgen Tensors, where
a formula that calls it stays differentiable and a `create_graph=True` backward can be
differentiated again, on numpy arrays, and on torch tensors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Number
from typing import Any

# What the helpers call through `ops`; every namespace must provide them.
NAMESPACE_NAMES = (
    "_index_put_impl_", "abs", "arange", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cat", "embedding", "embedding_dense_backward", "exp",
    "expand", "index_add", "log", "logical_and", "logical_or", "mean", "mm", "numel", "ones_like",
    "permute", "pow", "prod", "reshape", "scatter_add", "select", "sigmoid", "sign", "slice",
    "slice_backward", "stack", "sum", "t", "tanh", "tensor", "threshold_backward", "to",
    "unsqueeze", "view", "where", "zeros", "zeros_like",
)

# -- elementwise ------------------------------------------------------------------------------

def maybe_multiply(ops: Any, grad: Any, factor: Any) -> Any:
    """`grad * factor`, skipping the multiplication when factor is 1 (as PyTorch does)."""
    return grad if factor == 1 else grad * factor


def pow_backward(ops: Any, grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**e = e * x**(e-1); zero when e == 0 (not NaN at x == 0)."""
    if exponent == 0:
        return zeros_like(ops, self)
    return grad * (exponent * ops.pow(self, exponent - 1))


def pow_backward_self(ops: Any, grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**y = y * x**(y-1) for a tensor exponent; zero where y == 0 (not NaN at x == 0)."""
    return ops.where(exponent == 0, 0, grad * (exponent * ops.pow(self, exponent - 1)))


def pow_backward_exponent(ops: Any, grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    """d/dy x**y = x**y * log(x); taken as 0 where x == 0 and y >= 0 (0**y is flat there).

    `self` is a tensor for pow.Tensor_Tensor and a Python number for pow.Scalar (`2 ** x`).
    """
    if isinstance(self, Number):
        if self == 0:
            return ops.where(exponent >= 0, 0, grad * result * -math.inf)
        return grad * result * (math.log(self) if self > 0 else math.nan)
    flat = ops.logical_and(self == 0, exponent >= 0)
    return ops.where(flat, 0, grad * result * ops.log(self))


def gelu_double_backward(ops: Any, grad: Any, grad_output: Any, self: Any,
                         approximate: str) -> Any:
    """d/dx of gelu_backward(grad_output, x) = grad_output * gelu''(x), times `grad`."""
    if approximate == "tanh":
        k, c = math.sqrt(2 / math.pi), 0.044715
        inner = (self + c * ops.pow(self, 3)) * k
        t = ops.tanh(inner)
        d_inner = (1 + 3 * c * ops.pow(self, 2)) * k
        dd_inner = 6 * c * k * self
        second = (1 - t * t) * (d_inner + 0.5 * self * (dd_inner - 2 * t * d_inner * d_inner))
    else:
        pdf = ops.exp(-0.5 * self * self) * (1 / math.sqrt(2 * math.pi))
        second = pdf * (2 - self * self)
    return grad * grad_output * second


def softplus_double_backward(ops: Any, grad: Any, self: Any, beta: Any, threshold: Any) -> Any:
    """d/dx of softplus_backward: beta * s * (1 - s) with s = sigmoid(beta x); 0 past the
    threshold, where softplus is linear."""
    s = ops.sigmoid(self * beta)
    return ops.where(self * beta > threshold, 0, grad * beta * s * (1 - s))


def clamp_backward(ops: Any, grad: Any, self: Any, min: Any, max: Any) -> Any:
    """The gradient passes where min <= self <= max (a bound itself included)."""
    if min is None:
        inside = self <= max
    elif max is None:
        inside = self >= min
    else:
        inside = ops.logical_and(self >= min, self <= max)
    return ops.where(inside, grad, 0)


def clamp_backward_min_max(ops: Any, grad: Any, self: Any, min: Any, max: Any,
                           grad_input_mask: Sequence[bool]) -> tuple[Any, Any]:
    """Gradients of clamp's tensor bounds: each takes it where it is the output.

    Where min > max the output is max everywhere, so only max gets the gradient.
    """
    grad_min = grad_max = None
    if min is not None and grad_input_mask[0]:
        takes = self < min if max is None else ops.logical_and(self < min, min < max)
        grad_min = ops.where(takes, grad, 0)
    if max is not None and grad_input_mask[1]:
        takes = self > max if min is None else ops.logical_or(self > max, max < min)
        grad_max = ops.where(takes, grad, 0)
    return grad_min, grad_max


def clamp_jvp(ops: Any, self_p: Any, self_t: Any, min_p: Any, min_t: Any, max_p: Any,
              max_t: Any) -> Any:
    """clamp's tangent: the transpose of clamp_backward and clamp_backward_min_max, so each
    point takes the tangent of the input whose gradient it passes (self at a tie with a
    bound; max where min > max, since the output is max there)."""
    result = clamp_backward(ops, self_t, self_p, min_p, max_p)
    grad_min, grad_max = clamp_backward_min_max(ops, 1, self_p, min_p, max_p, (True, True))
    if grad_min is not None:
        result = result + grad_min * min_t
    if grad_max is not None:
        result = result + grad_max * max_t
    return result


def masked_fill_backward(ops: Any, grad: Any, mask: Any) -> Any:
    """The filled value's gradient: the sum of the gradient where the mask is set."""
    return ops.sum(ops.where(mask, grad, 0))


# -- reductions -------------------------------------------------------------------------------

def _normalized_dims(dim: Sequence[int] | int | None, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted(d % ndim if ndim else 0 for d in dims)


def _reduced_count(sizes: Sequence[int], dim: Sequence[int] | int | None) -> int:
    """How many elements each output of a reduction over `dim` combines."""
    count = 1
    for d in _normalized_dims(dim, len(sizes)):
        count *= sizes[d] if sizes else 1
    return count


def unsqueeze_multiple(ops: Any, grad: Any, dim: Sequence[int] | int | None, ndim: int) -> Any:
    """Put back the dimensions a reduction without keepdim removed."""
    for d in _normalized_dims(dim, ndim):
        grad = ops.unsqueeze(grad, d)
    return grad


def restore_reduced_dims(ops: Any, output: Any, dim: Sequence[int] | int | None,
                         keepdim: bool) -> Any:
    """A reduction's output with the reduced dimensions back (size 1), knowing only `dim`.

    A reduction over every dimension (dim None or []) gives a 0-dim output, which
    broadcasts as it is.
    """
    dims = [dim] if isinstance(dim, int) else list(dim or ())
    if keepdim or not dims:
        return output
    return unsqueeze_multiple(ops, output, dims, output.ndim + len(dims))


def ones_like(ops: Any, tensor: Any) -> Any:
    """Ones of `tensor`'s shape and dtype, outside any graph (for forward-mode formulas)."""
    return ops.ones_like(tensor)


def sum_backward(ops: Any, grad: Any, sizes: Sequence[int], dim: Any, keepdim: bool) -> Any:
    """A sum over `dim` spreads its gradient back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        grad = unsqueeze_multiple(ops, grad, dim, len(sizes))
    return ops.expand(grad, sizes)


def mean_backward(ops: Any, grad: Any, sizes: Sequence[int], dim: Any, numel: int,
                  keepdim: bool) -> Any:
    """A mean is a sum divided by the number of elements each output averages."""
    all_dims = dim is None or (not isinstance(dim, int) and len(dim) == 0)
    count = numel if all_dims else _reduced_count(sizes, dim)
    return sum_backward(ops, grad, sizes, dim, keepdim) / count


def scale_grad_by_count(ops: Any, grad: Any, mask: Any, dim: Any) -> Any:
    """Share each slice's gradient evenly among the positions `mask` marks (ties of amax)."""
    return (grad / ops.sum(mask, dim, keepdim=True, dtype=grad.dtype)) * mask


def evenly_distribute_backward(ops: Any, grad: Any, input: Any, value: Any) -> Any:
    """max()/min() of a whole tensor: every element equal to the result gets an equal share."""
    mask = input == value
    return mask * (grad / ops.sum(mask, dtype=grad.dtype))


def _selected(ops: Any, dim: int, indices: Any, sizes: Sequence[int], keepdim: bool) -> Any:
    """A bool mask of `sizes`, true where max.dim/min.dim took its value from."""
    dim %= len(sizes)
    if not keepdim:
        indices = ops.unsqueeze(indices, dim)
    positions = ops.view(ops.arange(sizes[dim]),
                         [-1 if d == dim else 1 for d in range(len(sizes))])
    return positions == indices


def value_selecting_reduction_backward(ops: Any, grad: Any, dim: int, indices: Any,
                                       sizes: Sequence[int], keepdim: bool) -> Any:
    """max.dim/min.dim: the whole gradient goes to the index that was returned."""
    if len(sizes) == 0:
        return grad
    grad = grad if keepdim else ops.unsqueeze(grad, dim % len(sizes))
    return ops.where(_selected(ops, dim, indices, sizes, keepdim), grad, 0)


def prod_backward(ops: Any, grad: Any, input: Any, result: Any, dim: int | None = None,
                  keepdim: bool = False) -> Any:
    """d prod / d x_i is the product of the other elements: result / x_i when no x_j is 0."""
    if dim is None:  # the product of all elements: one slice, the flattened input
        if int(ops.sum(input == 0)) == 0:
            return grad * (result / input)
        others = _product_of_others(ops, ops.reshape(input, -1), 0)
        return ops.reshape(grad * others, input.shape)
    if input.ndim == 0:
        return grad
    grad = restore_reduced_dims(ops, grad, dim, keepdim)
    if int(ops.sum(input == 0)) == 0:
        return grad * (restore_reduced_dims(ops, result, dim, keepdim) / input)
    return grad * _product_of_others(ops, input, dim)


def _product_of_others(ops: Any, input: Any, dim: int) -> Any:
    """For each element, the product of the other elements of its slice along `dim`,
    without dividing by zero, and exact to second order (as gradgradcheck checks).

    A nonzero element's share is (product of the nonzero elements) / x_i times the product
    of the zeros: 0 if the slice has a zero, yet with the right derivative with respect to
    it. A zero's share is the product of the nonzero elements times the other zeros: 1 if
    there is no other, that other zero if there is one, 0 if there are more.
    """
    is_zero = input == 0
    nonzero = ops.where(is_zero, 1, input)
    nonzero_product = ops.prod(nonzero, dim, keepdim=True)
    zero_product = ops.prod(ops.where(is_zero, input, 1), dim, keepdim=True)
    zeros = ops.sum(is_zero, dim, keepdim=True)
    other_zero = ops.sum(ops.where(is_zero, input, 0), dim, keepdim=True) - input
    other_zeros = ops.where(zeros == 1, 1, ops.where(zeros == 2, other_zero, 0))
    return ops.where(is_zero, nonzero_product * other_zeros,
                     nonzero_product * zero_product / nonzero)


def var_backward(ops: Any, grad: Any, self: Any, dim: Any, correction: Any,
                 keepdim: bool) -> Any:
    """d var / d x_i = 2 (x_i - mean) / (N - correction) for each slice of N elements."""
    dof = _reduced_count(self.shape, dim) - (1 if correction is None else correction)
    scale = 2.0 / dof if dof > 0 else float("inf")
    if not keepdim and self.ndim > 0:
        grad = unsqueeze_multiple(ops, grad, dim, self.ndim)
    return scale * grad * (self - ops.mean(self, dim, keepdim=True))


def std_backward(ops: Any, result: Any, grad: Any, self: Any, dim: Any, correction: Any,
                 keepdim: bool) -> Any:
    """std = sqrt(var); where std is 0 (a constant slice) the gradient is 0, as PyTorch's."""
    grad_var = ops.where(result == 0, 0, grad / (2 * result))
    return var_backward(ops, grad_var, self, dim, correction, keepdim)


def logsumexp_backward(ops: Any, grad: Any, self: Any, result: Any, dim: Any,
                       keepdim: bool) -> Any:
    """d logsumexp / d x_i = exp(x_i - logsumexp): the softmax of each slice."""
    grad = restore_reduced_dims(ops, grad, dim, keepdim)
    return grad * ops.exp(self - restore_reduced_dims(ops, result, dim, keepdim))


def norm_backward(ops: Any, grad: Any, self: Any, p: Any, norm: Any, dim: Any = None,
                  keepdim: bool = False) -> Any:
    """The gradient of a vector p-norm; 0 wherever the norm is 0 (PyTorch's subgradient)."""
    p = 2 if p is None else p
    grad = restore_reduced_dims(ops, grad, dim, keepdim)
    norm = restore_reduced_dims(ops, norm, dim, keepdim)
    if p == 0:
        return zeros_like(ops, self)
    if p == 1:
        return ops.sign(self) * grad
    if p == 2:
        return grad * ops.where(norm == 0, 0, self / norm)
    if math.isinf(p):  # ties for the largest |x| share the gradient evenly, with x's sign
        return ops.sign(self) * scale_grad_by_count(ops, grad, ops.abs(self) == norm, dim)
    if p < 1:
        scaled = ops.sign(self) * ops.where(self == 0, 0, ops.pow(ops.abs(self), p - 1))
        return scaled * grad * ops.pow(norm, 1 - p)
    scaled = ops.sign(self) * ops.pow(ops.abs(self), p - 1)
    return scaled * ops.where(norm == 0, 0, grad / ops.pow(norm, p - 1))


# -- shape and indexing -----------------------------------------------------------------------

def zeros_like(ops: Any, tensor: Any) -> Any:
    """Zeros of `tensor`'s shape and dtype, outside any graph."""
    return ops.zeros_like(tensor)


def unsqueeze_to(ops: Any, grad: Any, dim: Sequence[int] | int, sizes: Sequence[int]) -> Any:
    """Undo squeeze(dim): put back each squeezed dimension that had size 1."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not sizes:  # a 0-dim input: squeeze removed nothing
        return grad
    for d in sorted(d % len(sizes) for d in dims):
        if sizes[d] == 1:
            grad = ops.unsqueeze(grad, d)
    return grad


def _zeros(ops: Any, sizes: Sequence[int], like: Any) -> Any:
    """Zeros of `sizes` with `like`'s dtype, outside any graph."""
    return ops.zeros(tuple(sizes), dtype=like.dtype)


def _wrap(dim: int, ndim: int) -> int:
    return dim % ndim if ndim else 0


def permute_backwards(ops: Any, grad: Any, dims: Sequence[int]) -> Any:
    """Undo permute(dims) with the inverse permutation."""
    inverse = [0] * len(dims)
    for position, d in enumerate(dims):
        inverse[_wrap(d, len(dims))] = position
    return ops.permute(grad, inverse)


def cat_tensors_backward(ops: Any, grad: Any, sizes: Sequence[Sequence[int]], dim: int) -> list:
    """Each input of cat gets its slice of the gradient (1-D empty inputs, which cat skips,
    get an empty gradient)."""
    dim = _wrap(dim, grad.ndim)
    grads, start = [], 0
    for shape in sizes:
        if tuple(shape) == (0,) and grad.ndim != 1:
            grads.append(_zeros(ops, shape, grad))
            continue
        end = start + shape[dim]
        grads.append(ops.slice(grad, dim, start, end))
        start = end
    return grads


def stack_tensors_backward(ops: Any, grad: Any, dim: int,
                           sizes: Sequence[Sequence[int]]) -> list:
    """stack put input i at index i of `dim`: selecting it gives its gradient back."""
    return [ops.select(grad, dim, i) for i in range(len(sizes))]


def split_with_sizes_backward(ops: Any, grads: Sequence[Any], split_sizes: Sequence[int],
                              dim: int, sizes: Sequence[int]) -> Any:
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
            grad = _zeros(ops, shape, defined)
        pieces.append(grad)
    return ops.cat(pieces, dim)


def split_backward(ops: Any, grads: Sequence[Any], split_size: int, dim: int,
                   sizes: Sequence[int]) -> Any:
    """split.Tensor's pieces are all `split_size` long but the last, which holds the rest."""
    length = sizes[_wrap(dim, len(sizes))]
    pieces = [split_size] * (len(grads) - 1)
    return split_with_sizes_backward(ops, grads, [*pieces, length - sum(pieces)], dim, sizes)


def unbind_backward(ops: Any, grads: Sequence[Any], dim: int) -> Any:
    """Stack the slices' gradients back, zeros for slices that got none."""
    defined = next((g for g in grads if g is not None), None)
    if defined is None:
        return None
    filled = [_zeros(ops, defined.shape, defined) if g is None else g for g in grads]
    return ops.stack(filled, dim)


def slice_backward_wrapper(ops: Any, grad: Any, sizes: Sequence[int], dim: int,
                           start: int | None, end: int | None, step: int) -> Any:
    """slice_backward with `start` and `end` made concrete the way slice reads them."""
    dim = _wrap(dim, len(sizes))
    start, end, _ = slice(start, end, step).indices(sizes[dim])
    return ops.slice_backward(grad, sizes, dim, start, max(start, end), step)


def index_backward(ops: Any, grad: Any, sizes: Sequence[int], indices: Sequence[Any]) -> Any:
    """Scatter-add the gradient back to the indexed positions (repeated ones add up)."""
    return ops._index_put_impl_(_zeros(ops, sizes, grad), indices, grad, True, True)


def index_select_backward(ops: Any, grad: Any, sizes: Sequence[int], dim: int,
                          index: Any) -> Any:
    return ops.index_add(_zeros(ops, sizes, grad), dim, index, grad)


def gather_backward(ops: Any, grad: Any, sizes: Sequence[int], dim: int, index: Any) -> Any:
    return ops.scatter_add(_zeros(ops, sizes, grad), dim, index, grad)


def repeat_backward(ops: Any, grad: Any, repeats: Sequence[int], sizes: Sequence[int]) -> Any:
    """Sum the copies: split each dimension into (repeat, size) and sum the repeat axes."""
    lead = len(repeats) - len(sizes)
    shape: list[int] = list(repeats[:lead])
    for repeat, size in zip(repeats[lead:], sizes, strict=True):
        shape += [repeat, size]
    axes = [*range(lead), *range(lead, len(shape), 2)]
    grad = ops.reshape(grad, shape)
    return ops.sum(grad, axes) if axes else grad


# -- linear algebra and nn --------------------------------------------------------------------

_MEAN = 1  # at::Reduction::Mean; None is 0 and Sum is 2


def _mean_scale(grad: Any, reduction: int, count: int) -> Any:
    """Divide by the number of loss elements when the loss was a mean."""
    return grad * (1.0 / count) if reduction == _MEAN and count else grad


def softmax_double_backward(ops: Any, grad: Any, grad_output: Any, dim: int,
                            output: Any) -> Any:
    """d/d(output) of <grad, output * (grad_output - sum(grad_output * output, dim))>."""
    inner = ops.sum(output * grad_output, dim, True)
    return grad * (grad_output - inner) - grad_output * ops.sum(grad * output, dim, True)


def log_softmax_double_backward(ops: Any, grad: Any, grad_output: Any, dim: int,
                                output: Any) -> Any:
    """d/d(output) of <grad, grad_output - exp(output) * sum(grad_output, dim)>."""
    return -grad * ops.exp(output) * ops.sum(grad_output, dim, True)


def apply_loss_reduction(ops: Any, loss: Any, reduction: int) -> Any:
    """A loss per element reduced as `reduction` says (0: none, 1: mean, 2: sum)."""
    if reduction == 0:
        return loss
    return _mean_scale(ops.sum(loss), reduction, ops.numel(loss))


def mse_loss_double_backward(ops: Any, grad: Any, reduction: int) -> Any:
    """d/d(self) of mse_loss_backward, times `grad` (which has the loss's full shape)."""
    return _mean_scale(grad * 2, reduction, ops.numel(grad))


def smooth_l1_loss_double_backward(ops: Any, grad: Any, self: Any, target: Any,
                                   reduction: int, beta: float) -> Any:
    """The slope of smooth L1's gradient: 1/beta where |self - target| < beta, else 0.

    threshold_backward(g, x, t) keeps g where x > t: once for d > -beta, once for -d > -beta.
    """
    if beta <= 0:
        return zeros_like(ops, grad)
    distance = self - target
    above = ops.threshold_backward(grad, distance, -beta)
    inside = ops.threshold_backward(above, -distance, -beta)
    return _mean_scale(inside * (1.0 / beta), reduction, ops.numel(grad))


def _ones_like(ops: Any, tensor: Any) -> Any:
    return zeros_like(ops, tensor) + 1


def binary_cross_entropy_target_backward(ops: Any, grad: Any, self: Any, target: Any,
                                         weight: Any, reduction: int) -> Any:
    """The loss is affine in the target, so d/d(target) = loss(target=1) - loss(target=0)."""
    ones = _ones_like(ops, target)
    slope = (ops.binary_cross_entropy(self, ones, weight, 0)
             - ops.binary_cross_entropy(self, ones * 0, weight, 0))
    return _mean_scale(grad * slope, reduction, ops.numel(self))


def _bce_variance(self: Any) -> Any:
    """x (1 - x), the denominator of the binary cross entropy's gradient."""
    return self * (-self + 1)


def binary_cross_entropy_double_backward(ops: Any, grad_output: Any, grad: Any, self: Any,
                                         target: Any, weight: Any, reduction: int) -> Any:
    """d/d(self) of grad_output * (self - target) / (self (1 - self)), times `grad`."""
    numerator = self * self - self * target * 2 + target
    result = grad * grad_output * numerator * ops.pow(_bce_variance(self), -2)
    if weight is not None:
        result = result * weight
    return _mean_scale(result, reduction, ops.numel(grad))


def binary_cross_entropy_double_backward_target(ops: Any, grad: Any, grad_output: Any,
                                                self: Any, target: Any, weight: Any,
                                                reduction: int) -> Any:
    """d/d(target) of grad_output * (self - target) / (self (1 - self)), times `grad`."""
    result = -grad * grad_output * ops.pow(_bce_variance(self), -1)
    if weight is not None:
        result = result * weight
    return _mean_scale(result, reduction, ops.numel(grad))


def _sigmoid(ops: Any, self: Any) -> Any:
    return ops.pow(ops.exp(-self) + 1, -1)


def binary_cross_entropy_with_logits_backward(ops: Any, grad: Any, self: Any, target: Any,
                                              weight: Any, pos_weight: Any,
                                              reduction: int) -> Any:
    """d/d(self): sigmoid(x) - t, or (pos_weight t + 1 - t) sigmoid(x) - pos_weight t."""
    if pos_weight is not None:
        weighted_target = pos_weight * target
        slope = (weighted_target - target + 1) * _sigmoid(ops, self) - weighted_target
    else:
        slope = _sigmoid(ops, self) - target
    if weight is not None:
        slope = slope * weight
    return _mean_scale(grad * slope, reduction, ops.numel(self))


def binary_cross_entropy_with_logits_target_backward(ops: Any, grad: Any, self: Any,
                                                     target: Any, weight: Any,
                                                     pos_weight: Any, reduction: int) -> Any:
    """The loss is affine in the target, so d/d(target) = loss(target=1) - loss(target=0)."""
    ones = _ones_like(ops, target)
    slope = (ops.binary_cross_entropy_with_logits(self, ones, weight, pos_weight, 0)
             - ops.binary_cross_entropy_with_logits(self, ones * 0, weight, pos_weight, 0))
    return _mean_scale(grad * slope, reduction, ops.numel(self))


def dropout_scale(ops: Any, p: float, train: bool | None) -> float:
    """What native_dropout multiplies the kept elements by: 1/(1-p) in training, else 1."""
    if train is False:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def embedding_dense_double_backward(ops: Any, grad: Any, indices: Any, num_weights: int,
                                    padding_idx: int, scale_grad_by_freq: bool) -> Any:
    """d/d(grad_output) of embedding_dense_backward: look the rows of `grad` up again.

    The padding row received nothing, so it gives nothing back; with scale_grad_by_freq each
    row was divided by how often its index occurs, and so is its lookup.
    """
    if 0 <= padding_idx < num_weights:
        keep = [[0.0] if row == padding_idx else [1.0] for row in range(num_weights)]
        grad = grad * ops.tensor(keep, dtype=grad.dtype)
    result = ops.embedding(grad, indices)
    if scale_grad_by_freq:
        ones = ops.unsqueeze(ops.to(_ones_like(ops, indices), grad.dtype), -1)
        counts = ops.embedding_dense_backward(ones, indices, num_weights, -1, False)
        result = result * ops.pow(ops.embedding(counts, indices), -1)
    return result


def _layer_norm_dims(input: Any, normalized_shape: Sequence[int]) -> list[int]:
    return list(range(input.ndim - len(normalized_shape), input.ndim))


def _layer_norm_row_backward(ops: Any, grad: Any, normalized: Any, rstd: Any, dims: list[int],
                             count: int) -> Any:
    """rstd/M (M g - sum(g) - x̂ sum(g x̂)) over each normalized row: layer norm's input
    gradient for a weighted output gradient `g`."""
    return rstd * (1.0 / count) * (grad * count - ops.sum(grad, dims, True)
                                   - normalized * ops.sum(grad * normalized, dims, True))


def layer_norm_double_backward(ops: Any, input: Any, weight: Any, grad_grad_input: Any,
                               grad_grad_weight: Any, grad_grad_bias: Any, grad_out: Any,
                               mean: Any, rstd: Any, normalized_shape: Sequence[int],
                               grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """Gradients of native_layer_norm_backward's (grad_input, grad_weight, grad_bias) with
    respect to input, weight and grad_out; mean and rstd count as functions of input."""
    dims = _layer_norm_dims(input, normalized_shape)
    batch = list(range(input.ndim - len(normalized_shape)))
    count = 1
    for size in normalized_shape:
        count *= size
    normalized = (input - mean) * rstd
    scaled = grad_out if weight is None else grad_out * weight
    grad_input = grad_weight = grad_out_grad = None

    if grad_input_mask[0]:
        grad_input = zeros_like(ops, input)
        if grad_grad_input is not None:
            # d/dx of <a, B_x(b)>, a = grad_grad_input, b = grad_out * weight, x̂ and rstd
            # depending on x; P = sum(a x̂), Q = sum(b x̂) per row.
            a, b = grad_grad_input, scaled
            p, q = ops.sum(a * normalized, dims, True), ops.sum(b * normalized, dims, True)
            sum_a, sum_b = ops.sum(a, dims, True), ops.sum(b, dims, True)
            ab = ops.sum(a * b, dims, True) * count - sum_a * sum_b
            grad_input = (normalized * (ab - p * q * 3) + q * (a * count - sum_a)
                          + p * (b * count - sum_b)) * rstd * rstd
            grad_input = grad_input * (-1.0 / (count * count))
        if grad_grad_weight is not None:
            grad_input = grad_input + _layer_norm_row_backward(
                ops, grad_grad_weight * grad_out, normalized, rstd, dims, count)

    if grad_input_mask[1] and grad_grad_input is not None:
        row = _layer_norm_row_backward(ops, grad_grad_input, normalized, rstd, dims, count)
        grad_weight = ops.sum(row * grad_out, batch) if batch else row * grad_out

    if grad_input_mask[2]:
        grad_out_grad = zeros_like(ops, grad_out)
        if grad_grad_input is not None:
            row = _layer_norm_row_backward(ops, grad_grad_input, normalized, rstd, dims, count)
            grad_out_grad = row if weight is None else row * weight
        if grad_grad_weight is not None:
            grad_out_grad = grad_out_grad + grad_grad_weight * normalized
        if grad_grad_bias is not None:
            grad_out_grad = grad_out_grad + grad_grad_bias
    return grad_input, grad_weight, grad_out_grad


def layer_norm_jvp(ops: Any, input_p: Any, input_t: Any, weight_p: Any, weight_t: Any,
                   bias_p: Any, bias_t: Any, mean: Any, rstd: Any,
                   normalized_shape: Sequence[int]) -> Any:
    """Forward-mode derivative of layer norm: rstd (t - mean(t) - x̂ mean(x̂ t)) w + x̂ w' + b'."""
    dims = _layer_norm_dims(input_p, normalized_shape)
    count = 1
    for size in normalized_shape:
        count *= size
    normalized = (input_p - mean) * rstd
    centered_t = input_t - ops.sum(input_t, dims, True) * (1.0 / count)
    result = (centered_t
              - normalized * ops.sum(normalized * input_t, dims, True) * (1.0 / count))
    result = result * rstd
    if weight_p is not None:
        result = result * weight_p
    if weight_t is not None:
        result = result + normalized * weight_t
    if bias_t is not None:
        result = result + bias_t
    return result


def layer_norm_backward_jvp(ops: Any, grad_out_p: Any, grad_out_t: Any, input_p: Any,
                            input_t: Any, weight_p: Any, weight_t: Any, mean: Any, rstd: Any,
                            normalized_shape: Sequence[int]) -> tuple[Any, Any, Any]:
    """Forward-mode derivative of native_layer_norm_backward's three gradients, with mean and
    rstd as the functions of input they are (as layer_norm_double_backward takes them).

    With x̂ = (x - mean) rstd and g = grad_out * weight, grad_input = rstd A for
    A = g - mean(g) - x̂ mean(g x̂) over each normalized row; the tangents of x̂ and rstd are
    rstd (t - mean(t) - x̂ mean(x̂ t)) and -rstd mean(x̂ t) rstd.
    """
    dims = _layer_norm_dims(input_p, normalized_shape)
    batch = list(range(input_p.ndim - len(normalized_shape)))
    count = 1
    for size in normalized_shape:
        count *= size

    def row_mean(value: Any) -> Any:
        return ops.sum(value, dims, True) * (1.0 / count)

    normalized = (input_p - mean) * rstd
    spread = row_mean(normalized * input_t)
    normalized_t = rstd * (input_t - row_mean(input_t) - normalized * spread)
    rstd_t = -rstd * rstd * spread
    scaled, scaled_t = grad_out_p, grad_out_t
    if weight_p is not None:
        scaled, scaled_t = grad_out_p * weight_p, grad_out_t * weight_p + grad_out_p * weight_t
    inner = row_mean(scaled * normalized)
    row = scaled - row_mean(scaled) - normalized * inner
    row_t = (scaled_t - row_mean(scaled_t) - normalized_t * inner
             - normalized * row_mean(scaled_t * normalized + scaled * normalized_t))
    grad_input_t = rstd_t * row + rstd * row_t
    grad_weight_t = (grad_out_t * normalized + grad_out_p * normalized_t)
    grad_bias_t = grad_out_t
    if batch:
        grad_weight_t, grad_bias_t = ops.sum(grad_weight_t, batch), ops.sum(grad_bias_t, batch)
    return grad_input_t, grad_weight_t, grad_bias_t


def _column_major(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """A matrix stored transposed, like nn.Linear's `weight.t()`."""
    return strides[0] == 1 and strides[1] == sizes[0] and sizes[1] != 1


def mm_mat1_backward(ops: Any, grad: Any, mat2: Any, sizes: Sequence[int],
                     strides: Sequence[int], alpha: Any) -> Any:
    """The gradient of mat1 in mat1 @ mat2, computed in mat1's layout (as PyTorch does):
    for a transposed mat1, (mat2 gradᵀ)ᵀ comes out contiguous once transposed back."""
    if _column_major(sizes, strides):
        return maybe_multiply(ops, ops.t(ops.mm(mat2, ops.t(grad))), alpha)
    return maybe_multiply(ops, ops.mm(grad, ops.t(mat2)), alpha)


def mm_mat2_backward(ops: Any, grad: Any, mat1: Any, sizes: Sequence[int],
                     strides: Sequence[int], alpha: Any) -> Any:
    """The gradient of mat2 in mat1 @ mat2, computed in mat2's layout: for nn.Linear's
    `weight.t()`, (gradᵀ mat1)ᵀ, so the weight's gradient is contiguous like the weight."""
    if _column_major(sizes, strides):
        return maybe_multiply(ops, ops.t(ops.mm(ops.t(grad), mat1)), alpha)
    return maybe_multiply(ops, ops.mm(ops.t(mat1), grad), alpha)


# -- batch norm, activations, losses ----------------------------------------------------------

def _batch_norm_layout(input: Any) -> tuple[list[int], list[int], float]:
    """For an (N, C, *) input: the dimensions each channel is reduced over, the shape a
    per-channel vector takes to broadcast against input, and 1 / the count per channel."""
    dims = [0] + list(range(2, input.ndim))
    shape = [1, input.shape[1]] + [1] * (input.ndim - 2)
    count = 1
    for dim in dims:
        count *= input.shape[dim]
    return dims, shape, 1.0 / count


def _batch_norm_statistics(ops: Any, input: Any, running_mean: Any, running_var: Any,
                           training: bool, eps: float) -> tuple[Any, Any, Any]:
    """(mean, invstd, normalized input), per channel and shaped to broadcast. In training the
    batch's own, computed from input with ops (so a second derivative sees them depend on
    it); in eval the running stats, constants."""
    dims, shape, scale = _batch_norm_layout(input)
    if training:
        mean = ops.sum(input, dims, True) * scale
        centered = input - mean
        invstd = ops.pow(ops.sum(centered * centered, dims, True) * scale + eps, -0.5)
        return mean, invstd, centered * invstd
    mean = ops.reshape(running_mean, shape)
    invstd = ops.pow(ops.reshape(running_var, shape) + eps, -0.5)
    return mean, invstd, (input - mean) * invstd


def batch_norm_gradients(ops: Any, grad: Any, input: Any, weight: Any, running_mean: Any,
                         running_var: Any, training: bool, eps: float,
                         grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """native_batch_norm's gradients for (input, weight, bias).

    With x̂ the normalized input and g = grad * weight: in training every output of a channel
    depends on every input of it through the batch mean and variance, so the input gets
    invstd (g - mean(g) - x̂ mean(g x̂)); in eval the stats are constants and it gets
    g invstd. weight gets sum(grad x̂) and bias sum(grad) over all but the channel dimension.
    """
    dims, shape, scale = _batch_norm_layout(input)
    _, invstd, normalized = _batch_norm_statistics(ops, input, running_mean, running_var,
                                                   training, eps)
    scaled = grad if weight is None else grad * ops.reshape(weight, shape)
    grad_input = grad_weight = grad_bias = None
    if grad_input_mask[0]:
        if training:
            grad_input = invstd * (scaled - ops.sum(scaled, dims, True) * scale
                                   - normalized * (ops.sum(scaled * normalized, dims, True)
                                                   * scale))
        else:
            grad_input = scaled * invstd
    if grad_input_mask[1]:
        grad_weight = ops.sum(grad * normalized, dims)
    if grad_input_mask[2]:
        grad_bias = ops.sum(grad, dims)
    return grad_input, grad_weight, grad_bias


def batch_norm_jvp(ops: Any, input_p: Any, input_t: Any, weight_p: Any, weight_t: Any,
                   bias_t: Any, running_mean: Any, running_var: Any, training: bool,
                   eps: float) -> Any:
    """Forward-mode derivative of batch norm: the input's tangent normalized as its
    gradient is (invstd (t - mean(t) - x̂ mean(x̂ t)) in training, t invstd in eval), times
    weight, plus x̂ weight' and bias'."""
    dims, shape, scale = _batch_norm_layout(input_p)
    _, invstd, normalized = _batch_norm_statistics(ops, input_p, running_mean, running_var,
                                                   training, eps)
    if training:
        result = invstd * (input_t - ops.sum(input_t, dims, True) * scale
                           - normalized * (ops.sum(normalized * input_t, dims, True) * scale))
    else:
        result = input_t * invstd
    if weight_p is not None:
        result = result * ops.reshape(weight_p, shape)
    if weight_t is not None:
        result = result + normalized * ops.reshape(weight_t, shape)
    if bias_t is not None:
        result = result + ops.reshape(bias_t, shape)
    return result


def _glu_halves(ops: Any, self: Any, dim: int) -> tuple[Any, Any]:
    half = self.shape[dim] // 2
    return (ops.slice(self, dim, 0, half, 1),
            ops.slice(self, dim, half, self.shape[dim], 1))


def glu_gradient(ops: Any, grad: Any, self: Any, dim: int) -> Any:
    """glu's gradient: for a sigmoid(b), grad sigmoid(b) for a and grad a s (1 - s) for b,
    joined back along dim."""
    first, second = _glu_halves(ops, self, dim)
    gate = ops.sigmoid(second)
    grad_first = grad * gate
    return ops.cat([grad_first, grad_first * first * (1 - gate)], dim)


def glu_jvp(ops: Any, self_p: Any, self_t: Any, dim: int) -> Any:
    """glu's tangent: a' s + a s (1 - s) b' for s = sigmoid(b)."""
    first, second = _glu_halves(ops, self_p, dim)
    first_t, second_t = _glu_halves(ops, self_t, dim)
    gate = ops.sigmoid(second)
    return first_t * gate + first * gate * (1 - gate) * second_t


def constant_pad_nd_backward(ops: Any, grad: Any, pad: Sequence[int]) -> Any:
    """The gradient of a constant pad: the padding cropped off again (negated amounts)."""
    return ops.constant_pad_nd(grad, [-amount for amount in pad], 0)


# The ops the helpers above call, added to the list at the top of this file.
NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"constant_pad_nd"}))
# -- convolution and pooling (conv/pool area) ------------------------------------------------

def convolution_double_backward(ops: Any, grad_grad_input: Any, grad_grad_weight: Any,
                                grad_grad_bias: Any, grad_output: Any, weight: Any, input: Any,
                                stride: Sequence[int], padding: Sequence[int],
                                dilation: Sequence[int], transposed: bool,
                                output_padding: Sequence[int], groups: int,
                                grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """Gradients of convolution_backward's (grad_input, grad_weight, grad_bias) with respect
    to grad_output, input and weight, in that order.

    With y = conv(x, w) + b, grad_input is linear in (grad_output, w), grad_weight in
    (x, grad_output) and grad_bias in grad_output, so each term is a convolution or a
    convolution_backward again: <gg_x, grad_input(g, w)> = <conv(gg_x, w), g>
    = <grad_weight(gg_x, g), w>, and <gg_w, grad_weight(x, g)> = <conv(x, gg_w), g>
    = <grad_input(g, gg_w), x>. Gradients that were not given (None) add nothing.
    """
    conv = (stride, padding, dilation, transposed, output_padding, groups)
    grad_for_output = grad_for_input = grad_for_weight = None
    if grad_input_mask[0]:
        grad_for_output = zeros_like(ops, grad_output)
        if grad_grad_input is not None:
            grad_for_output = grad_for_output + ops.convolution(grad_grad_input, weight, None,
                                                                *conv)
        if grad_grad_weight is not None:
            grad_for_output = grad_for_output + ops.convolution(input, grad_grad_weight, None,
                                                                *conv)
        if grad_grad_bias is not None:
            shape = [1, -1] + [1] * (grad_output.ndim - 2)
            grad_for_output = grad_for_output + ops.reshape(grad_grad_bias, shape)
    if grad_input_mask[1]:
        grad_for_input = zeros_like(ops, input)
        if grad_grad_weight is not None:
            grad_for_input = ops.convolution_backward(grad_output, input, grad_grad_weight, None,
                                                      *conv, (True, False, False))[0]
    if grad_input_mask[2]:
        grad_for_weight = zeros_like(ops, weight)
        if grad_grad_input is not None:
            grad_for_weight = ops.convolution_backward(grad_output, grad_grad_input, weight, None,
                                                       *conv, (False, True, False))[1]
    return grad_for_output, grad_for_input, grad_for_weight


def max_pool_double_backward(ops: Any, grad: Any, indices: Any, dim: int) -> Any:
    """d/d(grad_output) of max pooling's backward, and max pooling's forward-mode derivative:
    each output reads `grad` at the position its maximum came from (indices into the last
    `dim` dims, flattened)."""
    lead = list(indices.shape[:indices.ndim - dim])
    picked = ops.gather(ops.reshape(grad, lead + [-1]), -1, ops.reshape(indices, lead + [-1]))
    return ops.reshape(picked, list(indices.shape))


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"convolution", "convolution_backward",
                                                        "gather"}))


# -- elementwise math and torch.special (torch's spec, family 1) -------------------------------
# (helpers of this family follow; keep this line and the blank ones around it)


# -- reductions, scans, indexing and shape (torch's spec, family 2) ----------------------------
# (helpers of this family follow; keep this line and the blank ones around it)


# -- linear algebra (torch's spec, family 3) ---------------------------------------------------
# (helpers of this family follow; keep this line and the blank ones around it)


# -- nn kernels (torch's spec, family 4) -------------------------------------------------------
# (helpers of this family follow; keep this line and the blank ones around it)

def elu_double_backward(ops: Any, grad: Any, grad_output: Any, alpha: Any, scale: Any,
                        input_scale: Any, is_result: bool, self_or_result: Any) -> Any:
    """elu_backward differentiated in its saved input (or output): only the side at or below
    0 has a slope that changes, input_scale times elu_backward's there (from the output y,
    input_scale (y + alpha scale) has slope input_scale)."""
    negative = ops.to(self_or_result < 0, grad.dtype)  # torch's: < 0, not <= 0
    if is_result:
        return grad * grad_output * input_scale * negative
    return ops.elu_backward(grad * grad_output * input_scale, alpha, scale, input_scale,
                            is_result, self_or_result) * negative


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"elu_backward"}))


def soft_margin_loss_double_backward(ops: Any, grad: Any, self: Any, target: Any,
                                     reduction: int) -> Any:
    """The slope of soft_margin_loss_backward in self, times grad: target² z / (1 + z)² for
    z = exp(-target self), over the element count for the mean."""
    z = ops.exp(-target * self)
    result = target * target * z / ((z + 1) * (z + 1)) * grad
    return result / ops.numel(self) if reduction == 1 else result


def soft_margin_loss_double_backward_grad_output(ops: Any, grad: Any, grad_output: Any,
                                                 self: Any, target: Any, reduction: int) -> Any:
    """soft_margin_loss_backward is linear in grad_output: its slope, times grad (summed when
    grad_output is the reduced loss's one number)."""
    slope = ops.soft_margin_loss_backward(ops.ones_like(grad_output), self, target, reduction)
    if reduction == 0:
        return slope * grad
    return ops.sum(slope * grad)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"soft_margin_loss_backward"}))
