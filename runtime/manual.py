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


# -- linear algebra and nn --------------------------------------------------------------------

_MEAN = 1  # at::Reduction::Mean; None is 0 and Sum is 2


def _mean_scale(grad: Any, reduction: int, count: int) -> Any:
    """Divide by the number of loss elements when the loss was a mean."""
    return grad * (1.0 / count) if reduction == _MEAN and count else grad


def softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """d/d(output) of <grad, output * (grad_output - sum(grad_output * output, dim))>."""
    inner = (output * grad_output).sum(dim, True)
    return grad * (grad_output - inner) - grad_output * (grad * output).sum(dim, True)


def log_softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """d/d(output) of <grad, grad_output - exp(output) * sum(grad_output, dim)>."""
    return -grad * output.exp() * grad_output.sum(dim, True)


def apply_loss_reduction(loss: Any, reduction: int) -> Any:
    """A loss per element reduced as `reduction` says (0: none, 1: mean, 2: sum)."""
    if reduction == 0:
        return loss
    return _mean_scale(loss.sum(), reduction, loss.numel())


def mse_loss_double_backward(grad: Any, reduction: int) -> Any:
    """d/d(self) of mse_loss_backward, times `grad` (which has the loss's full shape)."""
    return _mean_scale(grad * 2, reduction, grad.numel())


def smooth_l1_loss_double_backward(grad: Any, self: Any, target: Any, reduction: int,
                                   beta: float) -> Any:
    """The slope of smooth L1's gradient: 1/beta where |self - target| < beta, else 0.

    threshold_backward(g, x, t) keeps g where x > t: once for d > -beta, once for -d > -beta.
    """
    if beta <= 0:
        return zeros_like(grad)
    distance = self - target
    above = ops.threshold_backward(grad, distance, -beta)
    inside = ops.threshold_backward(above, -distance, -beta)
    return _mean_scale(inside * (1.0 / beta), reduction, grad.numel())


def _ones_like(tensor: Any) -> Any:
    return zeros_like(tensor) + 1


def binary_cross_entropy_target_backward(grad: Any, self: Any, target: Any, weight: Any,
                                         reduction: int) -> Any:
    """The loss is affine in the target, so d/d(target) = loss(target=1) - loss(target=0)."""
    ones = _ones_like(target)
    slope = (ops.binary_cross_entropy(self, ones, weight, 0)
             - ops.binary_cross_entropy(self, ones * 0, weight, 0))
    return _mean_scale(grad * slope, reduction, self.numel())


def _bce_variance(self: Any) -> Any:
    """x (1 - x), the denominator of the binary cross entropy's gradient."""
    return self * (-self + 1)


def binary_cross_entropy_double_backward(grad_output: Any, grad: Any, self: Any, target: Any,
                                         weight: Any, reduction: int) -> Any:
    """d/d(self) of grad_output * (self - target) / (self (1 - self)), times `grad`."""
    numerator = self * self - self * target * 2 + target
    result = grad * grad_output * numerator * _bce_variance(self).pow(-2)
    if weight is not None:
        result = result * weight
    return _mean_scale(result, reduction, grad.numel())


def binary_cross_entropy_double_backward_target(grad: Any, grad_output: Any, self: Any,
                                                target: Any, weight: Any,
                                                reduction: int) -> Any:
    """d/d(target) of grad_output * (self - target) / (self (1 - self)), times `grad`."""
    result = -grad * grad_output * _bce_variance(self).pow(-1)
    if weight is not None:
        result = result * weight
    return _mean_scale(result, reduction, grad.numel())


def _sigmoid(self: Any) -> Any:
    return ((-self).exp() + 1).pow(-1)


def binary_cross_entropy_with_logits_backward(grad: Any, self: Any, target: Any, weight: Any,
                                              pos_weight: Any, reduction: int) -> Any:
    """d/d(self): sigmoid(x) - t, or (pos_weight t + 1 - t) sigmoid(x) - pos_weight t."""
    if pos_weight is not None:
        weighted_target = pos_weight * target
        slope = (weighted_target - target + 1) * _sigmoid(self) - weighted_target
    else:
        slope = _sigmoid(self) - target
    if weight is not None:
        slope = slope * weight
    return _mean_scale(grad * slope, reduction, self.numel())


def binary_cross_entropy_with_logits_target_backward(grad: Any, self: Any, target: Any,
                                                     weight: Any, pos_weight: Any,
                                                     reduction: int) -> Any:
    """The loss is affine in the target, so d/d(target) = loss(target=1) - loss(target=0)."""
    ones = _ones_like(target)
    slope = (ops.binary_cross_entropy_with_logits(self, ones, weight, pos_weight, 0)
             - ops.binary_cross_entropy_with_logits(self, ones * 0, weight, pos_weight, 0))
    return _mean_scale(grad * slope, reduction, self.numel())


def dropout_scale(p: float, train: bool | None) -> float:
    """What native_dropout multiplies the kept elements by: 1/(1-p) in training, else 1."""
    if train is False:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def embedding_dense_double_backward(grad: Any, indices: Any, num_weights: int, padding_idx: int,
                                    scale_grad_by_freq: bool) -> Any:
    """d/d(grad_output) of embedding_dense_backward: look the rows of `grad` up again.

    The padding row received nothing, so it gives nothing back; with scale_grad_by_freq each
    row was divided by how often its index occurs, and so is its lookup.
    """
    from runtime.factories import tensor as _constant

    if 0 <= padding_idx < num_weights:
        keep = [[0.0] if row == padding_idx else [1.0] for row in range(num_weights)]
        grad = grad * _constant(keep, dtype=grad.dtype)
    result = ops.embedding(grad, indices)
    if scale_grad_by_freq:
        ones = _ones_like(indices).to(grad.dtype).unsqueeze(-1)
        counts = ops.embedding_dense_backward(ones, indices, num_weights, -1, False)
        result = result * ops.embedding(counts, indices).pow(-1)
    return result


def _layer_norm_dims(input: Any, normalized_shape: Sequence[int]) -> list[int]:
    return list(range(input.ndim - len(normalized_shape), input.ndim))


def _layer_norm_row_backward(grad: Any, normalized: Any, rstd: Any, dims: list[int],
                             count: int) -> Any:
    """rstd/M (M g - sum(g) - x̂ sum(g x̂)) over each normalized row: layer norm's input
    gradient for a weighted output gradient `g`."""
    return rstd * (1.0 / count) * (grad * count - grad.sum(dims, True)
                                   - normalized * (grad * normalized).sum(dims, True))


def layer_norm_double_backward(input: Any, weight: Any, grad_grad_input: Any,
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
        grad_input = zeros_like(input)
        if grad_grad_input is not None:
            # d/dx of <a, B_x(b)>, a = grad_grad_input, b = grad_out * weight, x̂ and rstd
            # depending on x; P = sum(a x̂), Q = sum(b x̂) per row.
            a, b = grad_grad_input, scaled
            p, q = (a * normalized).sum(dims, True), (b * normalized).sum(dims, True)
            ab = (a * b).sum(dims, True) * count - a.sum(dims, True) * b.sum(dims, True)
            grad_input = (normalized * (ab - p * q * 3) + q * (a * count - a.sum(dims, True))
                          + p * (b * count - b.sum(dims, True))) * rstd * rstd
            grad_input = grad_input * (-1.0 / (count * count))
        if grad_grad_weight is not None:
            grad_input = grad_input + _layer_norm_row_backward(
                grad_grad_weight * grad_out, normalized, rstd, dims, count)

    if grad_input_mask[1] and grad_grad_input is not None:
        row = _layer_norm_row_backward(grad_grad_input, normalized, rstd, dims, count)
        grad_weight = (row * grad_out).sum(batch) if batch else row * grad_out

    if grad_input_mask[2]:
        grad_out_grad = zeros_like(grad_out)
        if grad_grad_input is not None:
            row = _layer_norm_row_backward(grad_grad_input, normalized, rstd, dims, count)
            grad_out_grad = row if weight is None else row * weight
        if grad_grad_weight is not None:
            grad_out_grad = grad_out_grad + grad_grad_weight * normalized
        if grad_grad_bias is not None:
            grad_out_grad = grad_out_grad + grad_grad_bias
    return grad_input, grad_weight, grad_out_grad


def layer_norm_jvp(input_p: Any, input_t: Any, weight_p: Any, weight_t: Any, bias_p: Any,
                   bias_t: Any, mean: Any, rstd: Any, normalized_shape: Sequence[int]) -> Any:
    """Forward-mode derivative of layer norm: rstd (t - mean(t) - x̂ mean(x̂ t)) w + x̂ w' + b'."""
    dims = _layer_norm_dims(input_p, normalized_shape)
    count = 1
    for size in normalized_shape:
        count *= size
    normalized = (input_p - mean) * rstd
    centered_t = input_t - input_t.sum(dims, True) * (1.0 / count)
    result = (centered_t - normalized * (normalized * input_t).sum(dims, True) * (1.0 / count))
    result = result * rstd
    if weight_p is not None:
        result = result * weight_p
    if weight_t is not None:
        result = result + normalized * weight_t
    if bias_t is not None:
        result = result + bias_t
    return result
