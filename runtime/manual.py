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
    "_conj_physical", "_fft_c2c", "_fft_r2c", "_grid_sampler_taps", "_grid_sampler_taps_backward",
    "_index_put_impl_", "_linalg_det", "_linalg_svd", "_trilinear",
    "_unsafe_masked_index_put_accumulate", "abs", "all", "amax", "any", "arange",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cat", "cholesky_solve", "conj",
    "constant_pad_nd", "convolution", "convolution_backward", "cos", "cumsum", "digamma",
    "elu_backward", "embedding", "embedding_dense_backward", "eq", "exp", "expand", "eye", "flip",
    "gather", "gt", "huber_loss_backward", "i0", "index_add", "index_fill", "index_select",
    "is_contiguous", "linalg_lu_solve", "linalg_matrix_exp", "linalg_pinv", "_linalg_solve_ex",
    "linalg_solve_triangular", "log", "logcumsumexp", "logical_and", "logical_or", "lt",
    "lu_unpack", "masked_select", "matmul", "mean", "mm", "numel", "ones_like", "permute", "pow",
    "prod", "put", "reciprocal", "reshape", "scatter", "scatter_add", "scatter_reduce", "select",
    "sgn", "sigmoid", "sign", "sin", "slice", "slice_backward", "soft_margin_loss_backward",
    "special_i0e", "squeeze", "stack", "sum", "t", "take", "tanh", "tensor", "threshold_backward",
    "to", "transpose", "triangular_solve", "tril", "triu", "unsqueeze", "view", "view_as_real",
    "where", "zeros", "zeros_like",
)

# -- complex values ---------------------------------------------------------------------------
# A gradient of a complex input is, as torch's, the conjugate Wirtinger derivative times two:
# for an analytic f, grad * conj(f'(z)). On real values each `conj` is the value itself.

def _complex_dtype(dtype: Any) -> bool:
    """Whether a dtype (gradgen's, numpy's or torch's) is complex."""
    kind = getattr(dtype, "kind", None)  # numpy's has a kind; gradgen's and torch's do not
    if kind is not None:
        return kind == "c"
    return getattr(dtype, "is_complex", None) is True


def _is_complex(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return isinstance(value, complex)
    kind = getattr(dtype, "kind", None)  # _complex_dtype's test, without its call: an
    return kind == "c" if kind is not None else _complex_dtype(dtype)  # array's, the usual


# Whether values of a type are Numbers: the ABC's check, made once per type (an array or a
# Tensor meets it in every `mul` and `addmm` backward).
_NUMBER_TYPES: dict[type, bool] = {}


def conj(ops: Any, value: Any) -> Any:
    """The conjugate of a tensor or of a Python number (a Scalar argument)."""
    kind = type(value)  # a real Python number, the usual Scalar, without the ABC's check
    if kind is float or kind is int:
        return value
    number = _NUMBER_TYPES.get(kind)
    if number is None:
        number = _NUMBER_TYPES[kind] = issubclass(kind, Number)
    if number:
        return value.conjugate() if isinstance(value, complex) else value
    return ops.conj(value) if _is_complex(value) else value


def to_float(ops: Any, value: Any) -> float:
    """A Scalar as a C++ float (torch's `Scalar::toFloat()`): a Python number rounded to
    float32 and back (beyond float32's range, an infinity)."""
    number = float(value)
    if number == 0 or not math.isfinite(number):
        return number
    _, exponent = math.frexp(number)
    quantum = max(exponent - 24, -149)  # 24 significant bits; float32's subnormal step
    rounded = math.ldexp(round(math.ldexp(number, -quantum)), quantum)  # (half to even)
    return rounded if abs(rounded) <= 3.4028234663852886e+38 else math.copysign(math.inf,
                                                                                  number)


def handle_r_to_c(ops: Any, self_dtype: Any, gradient: Any) -> Any:
    """A complex gradient of a real input: its real part (the input moves along reals)."""
    if gradient is None or not _is_complex(gradient) or _complex_dtype(self_dtype):
        return gradient
    return ops.select(ops.view_as_real(gradient), -1, 0)


def mul_tensor_backward(ops: Any, grad: Any, other: Any, self_dtype: Any) -> Any:
    """mul's gradient for one factor: grad times the other's conjugate."""
    return handle_r_to_c(ops, self_dtype, grad * conj(ops, other))


def div_tensor_self_backward(ops: Any, grad: Any, other: Any, self_dtype: Any) -> Any:
    """div's gradient for the dividend: grad over the divisor's conjugate."""
    return handle_r_to_c(ops, self_dtype, grad / conj(ops, other))


def div_tensor_other_backward(ops: Any, grad: Any, self: Any, other: Any) -> Any:
    """div's gradient for the divisor: -grad times conj(self / other / other)."""
    return handle_r_to_c(ops, other.dtype, -grad * conj(ops, (self / other) / other))


def angle_backward(ops: Any, grad: Any, self: Any) -> Any:
    """angle's gradient: i grad z / |z|^2 (0 at 0) for a complex z; zero for a real one."""
    if not _is_complex(self):
        return ops.zeros_like(self)
    size = ops.abs(self)
    return ops.where(size == 0, 0, grad * self / (size * size) * 1j)


def sgn_backward(ops: Any, self: Any, grad: Any, result: Any) -> Any:
    """sgn's gradient: for a complex z, (grad - Re(grad conj(sgn z)) sgn z) / |z| (0 at 0);
    zero for a real one."""
    if not _is_complex(self):
        return ops.zeros_like(grad)
    size = ops.abs(self)
    along = ops.select(ops.view_as_real(grad * ops.conj(result)), -1, 0)
    return ops.where(size == 0, 0, (grad - along * result) / ops.where(size == 0, 1, size))


def _real_part(ops: Any, value: Any) -> Any:
    return ops.select(ops.view_as_real(value), -1, 0)


def fft_r2c_backward(ops: Any, grad: Any, dim: Sequence[int], normalization: int,
                     onesided: bool, last_dim_size: int) -> Any:
    """_fft_r2c's gradient: the inverse (unnormalised, then scaled as the forward was)
    complex transform of grad, its real part. A onesided forward dropped the upper half of
    its last dimension: it comes back as zeros first."""
    if onesided:
        last = dim[-1] % grad.ndim
        missing = last_dim_size - grad.shape[last]
        if missing > 0:
            shape = list(grad.shape)
            shape[last] = missing
            grad = ops.cat([grad, ops.zeros(shape, dtype=grad.dtype)], last)
    return _real_part(ops, ops._fft_c2c(grad, dim, normalization, False))


def fft_c2r_backward(ops: Any, grad: Any, dim: Sequence[int], normalization: int) -> Any:
    """_fft_c2r's gradient: the onesided real transform of grad, with the entries whose
    mirror images the forward filled in by symmetry counted twice."""
    gradient = ops._fft_r2c(grad, dim, normalization, True)
    last = dim[-1] % grad.ndim
    half = gradient.shape[last]
    doubled = grad.shape[last] - half
    if doubled <= 0:
        return gradient
    factor = [1.0] + [2.0] * doubled + [1.0] * (half - 1 - doubled)
    shape = [1] * grad.ndim
    shape[last] = half
    return gradient * ops.reshape(ops.tensor(factor, dtype=grad.dtype), shape)


# -- elementwise ------------------------------------------------------------------------------

def maybe_multiply(ops: Any, grad: Any, factor: Any) -> Any:
    """`grad * factor`, skipping the multiplication when factor is 1 (as PyTorch does)."""
    return grad if factor == 1 else grad * factor


def pow_backward(ops: Any, grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**e = e * x**(e-1); zero when e == 0 (not NaN at x == 0)."""
    if exponent == 0:
        return zeros_like(ops, self)
    # x ** 1 is x (pow's kernel copies it): a square's gradient, the usual one, skips it
    power = self if exponent == 2 else ops.pow(self, exponent - 1)
    return grad * conj(ops, exponent * power)


def pow_backward_self(ops: Any, grad: Any, self: Any, exponent: Any) -> Any:
    """d/dx x**y = y * x**(y-1) for a tensor exponent; zero where y == 0 (not NaN at x == 0)."""
    return ops.where(exponent == 0, 0, grad * (exponent * ops.pow(self, exponent - 1)))


def atan2_recip(ops: Any, self: Any, other: Any) -> Any:
    """1 / (self² + other²), the factor of both of atan2's gradients, taken as 0 where self
    and other are both 0 (torch's atan2_backward: the gradient at the origin is 0, not NaN)."""
    denominator = self * self + other * other
    return ops.where(denominator == 0, 0, ops.reciprocal(denominator))


def pow_backward_exponent(ops: Any, grad: Any, self: Any, exponent: Any, result: Any) -> Any:
    """d/dy x**y = x**y * log(x); taken as 0 where x == 0 and y >= 0 (0**y is flat there).

    `self` is a tensor for pow.Tensor_Tensor and a Python number for pow.Scalar (`2 ** x`).
    """
    if isinstance(self, Number):
        log_base = math.log(self) if self > 0 else -math.inf if self == 0 else math.nan
        if self == 0:
            return grad * ops.where(exponent >= 0, 0, result * log_base)
        return grad * (result * log_base)
    flat = ops.logical_and(self == 0, exponent >= 0)
    return grad * ops.where(flat, 0, result * ops.log(self))


def copysign_tensor_self_backward(ops: Any, grad: Any, self: Any, result: Any) -> Any:
    """d copysign(x, y) / dx: the sign flip result / x, and 0 where x is 0."""
    ratio = result / self
    return grad * ops.where(self == 0, 0, ratio)


def logcumsumexp_backward(ops: Any, grad: Any, self: Any, result: Any, dim: int) -> Any:
    """The gradient of logcumsumexp: the positive and negative parts of grad, each summed
    from the end in log space (a reversed logcumsumexp) and weighted by exp(self)."""
    if grad.ndim == 0 or ops.numel(grad) == 0:
        return grad
    lowest = -3.4028234663852886e+38 if self.dtype.itemsize == 4 else -1.7976931348623157e+308
    log_abs_grad = ops.log(ops.abs(grad))
    positive = ops.where(grad > 0, log_abs_grad, lowest)
    negative = ops.where(grad < 0, log_abs_grad, lowest)

    def from_the_end(x: Any) -> Any:
        return ops.flip(ops.logcumsumexp(ops.flip(x, [dim]), dim), [dim])

    return ops.exp(from_the_end(positive - result) + self) - \
        ops.exp(from_the_end(negative - result) + self)


def logcumsumexp_jvp(ops: Any, self_p: Any, self_t: Any, dim: int) -> Any:
    """The tangent of logcumsumexp: a running softmax-weighted sum of self_t."""
    shifted = ops.exp(self_p - ops.amax(self_p, [dim], True))
    return ops.cumsum(shifted * self_t, dim) / (ops.cumsum(shifted, dim) + 1e-13)


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


def polar_backward(ops: Any, grad: Any, result: Any) -> tuple[Any, Any]:
    """polar's gradients, as torch's polar_backward: for the modulus the real part of
    conj(grad) sgn(result), for the angle the real part of conj(grad) i result."""
    grad_conj = ops._conj_physical(grad)
    grad_abs = ops.select(ops.view_as_real(grad_conj * ops.sgn(result)), -1, 0)
    grad_angle = ops.select(ops.view_as_real(grad_conj * (result * 1j)), -1, 0)
    return grad_abs, grad_angle


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
    """d prod / d x_i is the product of the other elements: result / x_i when no x_j is 0.
    Of a 0-dim input, grad itself (no second-order path to the input, as torch's)."""
    if input.ndim == 0:
        return grad
    if dim is None:  # the product of all elements: one slice, the flattened input
        if int(ops.sum(input == 0)) == 0:
            return grad * (result / input)
        others = _product_of_others(ops, ops.reshape(input, -1), 0)
        return ops.reshape(grad * others, input.shape)
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


def logsumexp_jvp(ops: Any, self_p: Any, self_t: Any, dim: Any, keepdim: bool) -> Any:
    """The tangents weighted by the softmax of each slice, as torch computes it: exp(x -
    max x) summed over its sum (of an empty input, 0 / 0: NaN)."""
    if ops.numel(self_p) > 0:
        weights = ops.exp(self_p - ops.amax(self_p, dim, True))
    else:
        weights = ops.exp(self_p)
    return ops.sum(weights * self_t, dim, keepdim) / ops.sum(weights, dim, keepdim)


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


def fused_dropout_backward(ops: Any, grad: Any, mask: Any, p: float) -> Any:
    """_fused_dropout's gradient: grad where the uint8 mask kept, scaled by 1/p (torch's
    differentiable form of it, which its double backward takes)."""
    return grad * (ops.to(mask, grad.dtype) * (1.0 / p))


def embedding_backward(ops: Any, grad: Any, indices: Any, num_weights: int, padding_idx: int,
                       scale_grad_by_freq: bool, sparse: bool) -> Any:
    """embedding's gradient in its weight: embedding_dense_backward, or, for sparse=True, a
    sparse gradient, which gradgen does not have (the forward runs; the backward refuses)."""
    if sparse:
        raise NotImplementedError("gradgen has no sparse gradients (embedding with sparse=True "
                                  "has no backward here)")
    return ops.embedding_dense_backward(grad, indices, num_weights, padding_idx,
                                        scale_grad_by_freq)


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
    mat2 = conj(ops, mat2)
    if _column_major(sizes, strides):
        return maybe_multiply(ops, ops.t(ops.mm(mat2, ops.t(grad))), alpha)
    return maybe_multiply(ops, ops.mm(grad, ops.t(mat2)), alpha)


def mm_mat2_backward(ops: Any, grad: Any, mat1: Any, sizes: Sequence[int],
                     strides: Sequence[int], alpha: Any) -> Any:
    """The gradient of mat2 in mat1 @ mat2, computed in mat2's layout: for nn.Linear's
    `weight.t()`, (gradᵀ mat1)ᵀ, so the weight's gradient is contiguous like the weight."""
    mat1 = conj(ops, mat1)
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


def batchnorm_double_backward(ops: Any, input: Any, weight: Any, grad_grad_input: Any,
                              grad_grad_weight: Any, grad_grad_bias: Any, grad_out: Any,
                              running_mean: Any, running_var: Any, train: bool, eps: float,
                              save_mean: Any, save_invstd: Any,
                              grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """The gradients of native_batch_norm_backward's (input, weight, grad_out), given those
    of its three outputs (any may be None).

    With s the inverse std, x̂ = (x - mean) s, a = grad_out * weight, E the mean over a
    channel and P(v) = v - E[v] - x̂ E[x̂ v] (self-adjoint, dx̂ = s P(dx)): in training the
    input gradient is s P(a), and differentiating it and sum(grad_out x̂) through x̂ and s
    gives the input's terms below; in eval the statistics are constants."""
    dims, shape, scale = _batch_norm_layout(input)
    if train:
        mean, invstd = ops.reshape(save_mean, shape), ops.reshape(save_invstd, shape)
    else:
        mean = ops.reshape(running_mean, shape)
        invstd = ops.pow(ops.reshape(running_var, shape) + eps, -0.5)
    normalized = (input - mean) * invstd
    weight_b = 1.0 if weight is None else ops.reshape(weight, shape)
    scaled = grad_out * weight_b

    def channel_mean(value: Any) -> Any:
        return ops.sum(value, dims, True) * scale

    def project(value: Any) -> Any:
        return value - channel_mean(value) - normalized * channel_mean(normalized * value)

    grad_input = grad_weight = grad_grad_out = None
    if grad_grad_input is not None:
        if train:
            grad_of_input = invstd * project(scaled)
            grad_input = (-invstd * normalized * channel_mean(grad_grad_input * grad_of_input)
                          - invstd * invstd * (channel_mean(scaled * normalized)
                                               * project(grad_grad_input)
                                               + channel_mean(grad_grad_input * normalized)
                                               * project(scaled)))
            grad_weight = ops.sum(grad_out * invstd * project(grad_grad_input), dims)
            grad_grad_out = weight_b * invstd * project(grad_grad_input)
        else:
            grad_weight = ops.sum(grad_grad_input * grad_out * invstd, dims)
            grad_grad_out = grad_grad_input * weight_b * invstd
    if grad_grad_weight is not None:
        per_channel = ops.reshape(grad_grad_weight, shape)
        term = per_channel * invstd * (project(grad_out) if train else grad_out)
        grad_input = term if grad_input is None else grad_input + term
        term = per_channel * normalized
        grad_grad_out = term if grad_grad_out is None else grad_grad_out + term
    if grad_grad_bias is not None:
        term = ops.reshape(grad_grad_bias, shape) + zeros_like(ops, grad_out)
        grad_grad_out = term if grad_grad_out is None else grad_grad_out + term
    if weight is None:
        grad_weight = None
    return _filled(ops, grad_input, input), _filled(ops, grad_weight, weight), \
        _filled(ops, grad_grad_out, grad_out)


def _filled(ops: Any, value: Any, like: Any) -> Any:
    """value, or zeros of like's shape where it is None (and like is a tensor)."""
    if value is not None or like is None:
        return value
    return zeros_like(ops, like)


def _per_sample_grad(ops: Any, grad: Any, frames: int, reduction: int) -> Any:
    """A margin loss's incoming gradient as a (frames, 1) column (or one number)."""
    if reduction == 0:
        return ops.reshape(grad, [frames, 1])
    return grad * (1.0 / frames) if reduction == 1 else grad


def multi_margin_loss_backward(ops: Any, grad: Any, self: Any, target: Any, p: Any,
                               margin: Any, weight: Any, reduction: int) -> Any:
    """multi_margin_loss's gradient: each class j ≠ y whose hinge z = margin - x[y] + x[j] is
    positive gets p z^(p-1) (times weight[y]) / C, and y minus their sum; made of ops, so
    it is differentiable again."""
    classes = self.shape[-1] if self.ndim else 1
    frames = ops.numel(self) // classes if self.ndim else 1
    scores = ops.reshape(self, [frames, classes])
    labels = ops.reshape(target, [frames, 1])
    hinge = margin - ops.gather(scores, 1, labels) + scores
    others = labels != ops.arange(classes)
    slope = ops.where(ops.logical_and(hinge > 0, others), hinge * 2 if p == 2 else 1, 0)
    if weight is not None:
        slope = slope * ops.reshape(ops.index_select(weight, 0, ops.reshape(labels, [-1])),
                                    [frames, 1])
    slope = slope * _per_sample_grad(ops, grad, frames, reduction) * (1.0 / classes)
    result = slope - ops.where(others, 0, 1) * ops.sum(slope, [1], True)
    return ops.reshape(result, self.shape)


def multilabel_margin_loss_backward(ops: Any, grad: Any, self: Any, target: Any,
                                    reduction: int, is_target: Any) -> Any:
    """multilabel_margin_loss's gradient: for each target class j (as often as target lists
    it) and other class i with 1 - x[j] + x[i] > 0, -1/C to x[j] and +1/C to x[i]."""
    classes = self.shape[-1] if self.ndim else 1
    frames = ops.numel(self) // classes if self.ndim else 1
    scores = ops.reshape(self, [frames, classes])
    labels = ops.reshape(target, [frames, classes])
    valid = ops.cumsum(ops.where(labels < 0, 1, 0), 1) == 0
    listed = ops.logical_and(ops.unsqueeze(labels, 2) == ops.arange(classes),
                             ops.unsqueeze(valid, 2))
    counts = ops.sum(ops.where(listed, 1.0, 0.0), [1])
    others = 1 - ops.reshape(is_target, [frames, classes])
    hinge = 1 - ops.unsqueeze(scores, 2) + ops.unsqueeze(scores, 1)
    pairs = (ops.where(hinge > 0, 1.0, 0.0) * ops.unsqueeze(counts, 2)
             * ops.unsqueeze(others, 1))
    scale = _per_sample_grad(ops, grad, frames, reduction) * (1.0 / classes)
    result = (ops.sum(pairs, [1]) - ops.sum(pairs, [2])) * scale
    return ops.reshape(result, self.shape)


def _margin_jvp(ops: Any, slopes: Any, self_t: Any, shape: Sequence[int],
                reduction: int) -> Any:
    """A margin loss's tangent: each sample's slopes (its gradient for an incoming 1) times
    the tangent, summed per sample, then reduced as the loss is."""
    classes = self_t.shape[-1] if self_t.ndim else 1
    frames = ops.numel(self_t) // classes if self_t.ndim else 1
    per_sample = ops.sum(ops.reshape(slopes * self_t, [frames, classes]), [1])
    if reduction == 0:
        return ops.reshape(per_sample, list(shape))
    total = ops.sum(per_sample)
    return total * (1.0 / frames) if reduction == 1 else total


def _ones_per_sample(ops: Any, self: Any) -> Any:
    classes = self.shape[-1] if self.ndim else 1
    frames = ops.numel(self) // classes if self.ndim else 1
    return ops.sum(ops.reshape(self, [frames, classes]) * 0, [1]) + 1


def multi_margin_loss_jvp(ops: Any, self_t: Any, self_p: Any, target: Any, p: Any, margin: Any,
                          weight: Any, reduction: int) -> Any:
    """multi_margin_loss's tangent, from its per-sample slopes."""
    slopes = multi_margin_loss_backward(ops, _ones_per_sample(ops, self_p), self_p, target, p,
                                        margin, weight, 0)
    return _margin_jvp(ops, slopes, self_t, target.shape, reduction)


def multilabel_margin_loss_jvp(ops: Any, self_t: Any, self_p: Any, target: Any, reduction: int,
                               is_target: Any) -> Any:
    """multilabel_margin_loss's tangent, from its per-sample slopes."""
    slopes = multilabel_margin_loss_backward(ops, _ones_per_sample(ops, self_p), self_p, target,
                                             0, is_target)
    shape = [self_p.shape[0]] if self_p.ndim > 1 else []
    return _margin_jvp(ops, slopes, self_t, shape, reduction)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"gather", "index_select"}))


def _group_layout(ops: Any, input: Any, mean: Any, rstd: Any, group: int) -> tuple:
    """For group norm: a function regrouping a tensor of input's shape as (N, group, D), the
    mean over each group's D elements (kept), and mean, rstd and x̂ in that layout."""
    batch = input.shape[0]

    size = ops.numel(input) // (batch * group) if batch * group else 0

    def grouped(value: Any) -> Any:
        return ops.reshape(value, [batch, group, size])

    def group_mean(value: Any) -> Any:
        return ops.mean(value, [2], True)

    mean_g = ops.reshape(mean, [batch, group, 1])
    rstd_g = ops.reshape(rstd, [batch, group, 1])
    return grouped, group_mean, mean_g, rstd_g, (grouped(input) - mean_g) * rstd_g


def _channel_view(ops: Any, vector: Any, like: Any) -> Any:
    return ops.reshape(vector, [1, like.shape[1]] + [1] * (like.ndim - 2))


def infinitely_differentiable_native_group_norm_backward(
        ops: Any, dY: Any, dmean: Any, drstd: Any, X: Any, mean: Any, rstd: Any,  # noqa: N803
        gamma: Any, N: int, C: int, HxW: int, group: int, eps: float,  # noqa: N803
        grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """native_group_norm's gradients of (input, weight, bias) from those of its three
    outputs (any may be None), made of ops. For each group, x̂ = (x - mean) rstd and
    P(v) = v - E[v] - x̂ E[x̂ v]: the output's gradient a = dY gamma gives rstd P(a), the
    mean's dmean / D, the rstd's -drstd rstd² x̂ / D (D: the group's element count)."""
    grouped, group_mean, _, rstd_g, normalized = _group_layout(ops, X, mean, rstd, group)
    count = ops.numel(X) // (N * group) if N * group else 1
    d_input = d_gamma = d_beta = None
    if dY is not None:
        scaled = grouped(dY if gamma is None else dY * _channel_view(ops, gamma, X))
        d_input = rstd_g * (scaled - group_mean(scaled)
                            - normalized * group_mean(scaled * normalized))
        dims = [0] + list(range(2, X.ndim))
        d_gamma = ops.sum(dY * ops.reshape(normalized, X.shape), dims)
        d_beta = ops.sum(dY, dims)
    if dmean is not None:
        term = ops.reshape(dmean, [N, group, 1]) * (1.0 / count) + normalized * 0
        d_input = term if d_input is None else d_input + term
    if drstd is not None:
        term = -ops.reshape(drstd, [N, group, 1]) * rstd_g * rstd_g * normalized * (1.0 / count)
        d_input = term if d_input is None else d_input + term
    if d_input is not None:
        d_input = ops.reshape(d_input, X.shape)
    return (d_input if grad_input_mask[0] else None,
            d_gamma if grad_input_mask[1] and gamma is not None else None,
            d_beta if grad_input_mask[2] else None)


def group_norm_jvp(ops: Any, X_p: Any, X_t: Any, gamma_p: Any, gamma_t: Any,  # noqa: N803
                   beta_p: Any, beta_t: Any, mean: Any, rstd: Any, group: int) -> Any:
    """native_group_norm's output tangent: rstd P(x_t) per group, times gamma, plus x̂ gamma'
    and beta'."""
    grouped, group_mean, _, rstd_g, normalized = _group_layout(ops, X_p, mean, rstd, group)
    tangent = grouped(X_t)
    result = ops.reshape(rstd_g * (tangent - group_mean(tangent)
                                   - normalized * group_mean(normalized * tangent)), X_p.shape)
    if gamma_p is not None:
        result = result * _channel_view(ops, gamma_p, X_p)
    if gamma_t is not None:
        result = result + ops.reshape(normalized, X_p.shape) * _channel_view(ops, gamma_t, X_p)
    if beta_t is not None:
        result = result + _channel_view(ops, beta_t, X_p)
    return result


def group_norm_mean_jvp(ops: Any, X_t: Any, mean: Any, group: int) -> Any:  # noqa: N803
    """The mean's tangent: the mean of the input's tangent over each group."""
    return ops.mean(ops.reshape(X_t, [X_t.shape[0], group, ops.numel(X_t) // (X_t.shape[0] * group)
                                      if X_t.shape[0] * group else 0]), [2])


def group_norm_invstd_jvp(ops: Any, X_p: Any, X_t: Any, mean: Any, rstd: Any,  # noqa: N803
                          group: int) -> Any:
    """rstd's tangent: -rstd² E[x̂ x_t] over each group."""
    grouped, group_mean, _, rstd_g, normalized = _group_layout(ops, X_p, mean, rstd, group)
    tangent = -rstd_g * rstd_g * group_mean(normalized * grouped(X_t))
    return ops.reshape(tangent, list(mean.shape))


def trilinear_backward(ops: Any, grad: Any, i1: Any, i2: Any, i3: Any,
                       expand1: Sequence[int], expand2: Sequence[int], expand3: Sequence[int],
                       sumdim: Sequence[int], grad_input_mask: Sequence[bool]) -> tuple:
    """_trilinear is linear in each input, so each one's gradient is _trilinear again: of the
    gradient and the other two, summed over the input's own expanded dimensions (with
    sumdim's restored as size-1 dimensions of the gradient)."""
    grad_i1 = grad_i2 = grad_i3 = None
    if grad_input_mask[0]:
        grad_i1 = ops._trilinear(grad, i2, i3, sumdim, expand2, expand3, expand1)
    if grad_input_mask[1]:
        grad_i2 = ops._trilinear(i1, grad, i3, expand1, sumdim, expand3, expand2)
    if grad_input_mask[2]:
        grad_i3 = ops._trilinear(i1, i2, grad, expand1, expand2, sumdim, expand3)
    return grad_i1, grad_i2, grad_i3


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"_trilinear"}))


def pack_padded_sequence_backward(ops: Any, grad: Any, input_sizes: Sequence[int],
                                  batch_sizes: Any, batch_first: bool) -> Any:
    """The packed rows' gradient put back at their places in the padded batch, zeros in the
    padding: the places are the (step, sample) pairs with sample < batch_sizes[step]."""
    steps, batch = ((input_sizes[1], input_sizes[0]) if batch_first
                    else (input_sizes[0], input_sizes[1]))
    used = batch_sizes.shape[0]
    step = ops.unsqueeze(ops.arange(used), 1)
    sample = ops.unsqueeze(ops.arange(batch), 0)
    covered = sample < ops.unsqueeze(batch_sizes, 1)
    places = sample * steps + step if batch_first else step * batch + sample
    rows = ops.masked_select(places, covered)
    flat = ops.zeros([steps * batch, *input_sizes[2:]], dtype=grad.dtype)
    return ops.reshape(ops.index_add(flat, 0, rows, grad), list(input_sizes))


def _summed_gates(ops: Any, input_gates: Any, hidden_gates: Any, input_bias: Any,
                  hidden_bias: Any) -> tuple[Any, Any]:
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    return input_gates, hidden_gates


def _chunks(ops: Any, value: Any, count: int) -> list:
    size = value.shape[1] // count
    return [ops.slice(value, 1, k * size, (k + 1) * size, 1) for k in range(count)]


def thnn_differentiable_lstm_cell_backward(ops: Any, grad_hy: Any, grad_cy: Any,
                                           input_gates: Any, hidden_gates: Any,
                                           input_bias: Any, hidden_bias: Any, cx: Any,
                                           cy: Any) -> tuple:
    """The fused LSTM cell's gradients (input_gates, hidden_gates, cx, input_bias,
    hidden_bias), made of ops: the gates recomputed, hy = o tanh(cy) and
    cy = f cx + i g differentiated back through the activations."""
    inputs, hidden = _summed_gates(ops, input_gates, hidden_gates, input_bias, hidden_bias)
    ingate, forgetgate, cellgate, outgate = _chunks(ops, inputs + hidden, 4)
    ingate, forgetgate, outgate = (ops.sigmoid(ingate), ops.sigmoid(forgetgate),
                                   ops.sigmoid(outgate))
    cellgate = ops.tanh(cellgate)
    tanh_cy = ops.tanh(cy)
    grad_cell = zeros_like(ops, cy)
    grad_out = zeros_like(ops, cy)
    if grad_hy is not None:
        grad_out = grad_hy * tanh_cy * outgate * (1 - outgate)
        grad_cell = grad_hy * outgate * (1 - tanh_cy * tanh_cy)
    if grad_cy is not None:
        grad_cell = grad_cell + grad_cy
    grad_in = grad_cell * cellgate * ingate * (1 - ingate)
    grad_forget = grad_cell * cx * forgetgate * (1 - forgetgate)
    grad_candidate = grad_cell * ingate * (1 - cellgate * cellgate)
    grad_gates = ops.cat([grad_in, grad_forget, grad_candidate, grad_out], 1)
    grad_bias = ops.sum(grad_gates, [0]) if input_bias is not None else None
    return grad_gates, grad_gates, grad_cell * forgetgate, grad_bias, grad_bias


def thnn_differentiable_gru_cell_backward(ops: Any, grad_hy: Any, input_gates: Any,
                                          hidden_gates: Any, hx: Any, input_bias: Any,
                                          hidden_bias: Any) -> tuple:
    """The fused GRU cell's gradients (input_gates, hidden_gates, hx, input_bias,
    hidden_bias), made of ops: r, z, n recomputed and hy = n + z (hx - n) differentiated."""
    inputs, hidden = _summed_gates(ops, input_gates, hidden_gates, input_bias, hidden_bias)
    input_r, input_z, input_n = _chunks(ops, inputs, 3)
    hidden_r, hidden_z, hidden_n = _chunks(ops, hidden, 3)
    resetgate = ops.sigmoid(input_r + hidden_r)
    inputgate = ops.sigmoid(input_z + hidden_z)
    newgate = ops.tanh(input_n + resetgate * hidden_n)
    grad_new = grad_hy * (1 - inputgate) * (1 - newgate * newgate)
    grad_update = grad_hy * (hx - newgate) * inputgate * (1 - inputgate)
    grad_reset = grad_new * hidden_n * resetgate * (1 - resetgate)
    grad_inputs = ops.cat([grad_reset, grad_update, grad_new], 1)
    grad_hidden = ops.cat([grad_reset, grad_update, grad_new * resetgate], 1)
    grad_input_bias = ops.sum(grad_inputs, [0]) if input_bias is not None else None
    grad_hidden_bias = ops.sum(grad_hidden, [0]) if hidden_bias is not None else None
    return grad_inputs, grad_hidden, grad_hy * inputgate, grad_input_bias, grad_hidden_bias


def masked_softmax_backward(ops: Any, grad: Any, result: Any, mask: Any, dim: Any) -> Any:
    """_masked_softmax's gradient: softmax's, result (grad - sum(grad result)), and 0 at the
    masked positions; the mask must have the gradient's shape (torch's check: a broadcast
    mask_type 0 or 1 mask has no backward)."""
    if tuple(mask.shape) != tuple(grad.shape):
        raise RuntimeError("Mask shape should match grad shape")
    dim = -1 if dim is None else dim
    inner = ops.sum(ops.where(mask, 0, grad * result), [dim], True)
    return ops.where(mask, 0, result * (grad - inner))


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


# -- nn kernels B: double backwards of activation and loss backwards (issue 27, helper nnB) ---

def glu_double_backward_grad_output(ops: Any, grad: Any, self: Any, dim: int) -> Any:
    """d/d(grad_output) of <grad, glu_backward(grad_output, self, dim)>: glu_backward is
    linear in grad_output, so its two halves' slopes, summed."""
    first, second = _glu_halves(ops, self, dim)
    grad_first, grad_second = _glu_halves(ops, grad, dim)
    gate = ops.sigmoid(second)
    return grad_first * gate + grad_second * first * gate * (1 - gate)


def glu_double_backward(ops: Any, grad: Any, grad_output: Any, self: Any, dim: int) -> Any:
    """d/d(self) of <grad, glu_backward(grad_output, self, dim)>, for the halves a, b of
    self and s = sigmoid(b): g s, g a s (1 - s) differentiated by a and by b."""
    first, second = _glu_halves(ops, self, dim)
    grad_first, grad_second = _glu_halves(ops, grad, dim)
    gate = ops.sigmoid(second)
    slope = grad_output * gate * (1 - gate)
    return ops.cat([grad_second * slope,
                    slope * (grad_first + grad_second * first * (1 - 2 * gate))], dim)


def glu_backward_jvp(ops: Any, result: Any, grad_output_p: Any, self_p: Any,
                     grad_output_t: Any, self_t: Any, dim: int) -> Any:
    """The tangent of glu_backward: of g s and of g a s (1 - s), for the halves a, b of
    self, s = sigmoid(b) (`result` is not needed: the halves are recomputed)."""
    first, second = _glu_halves(ops, self_p, dim)
    first_t, second_t = _glu_halves(ops, self_t, dim)
    gate = ops.sigmoid(second)
    slope = gate * (1 - gate)
    tangent_first = grad_output_t * gate + grad_output_p * slope * second_t
    tangent_second = (grad_output_t * first * slope + grad_output_p * first_t * slope
                      + grad_output_p * first * slope * (1 - 2 * gate) * second_t)
    return ops.cat([tangent_first, tangent_second], dim)


def log_sigmoid_double_backward(ops: Any, grad: Any, self: Any) -> Any:
    """The slope of log_sigmoid's gradient sigmoid(-x): -s (1 - s) for s = sigmoid(x)."""
    gate = ops.sigmoid(self)
    return grad * (gate - 1) * gate


def huber_loss_double_backward(ops: Any, grad: Any, self: Any, target: Any, reduction: int,
                               delta: float) -> Any:
    """The slope of huber_loss's gradient in self: 1 where |self - target| < delta, else 0,
    over the element count for the mean."""
    inside = ops.where(ops.abs(self - target) < delta, grad, 0)
    return _mean_scale(inside, reduction, ops.numel(grad))


def huber_loss_double_backward_grad_output(ops: Any, grad: Any, grad_output: Any, self: Any,
                                           target: Any, reduction: int, delta: float) -> Any:
    """d/d(grad_output) of <grad, huber_loss_backward(grad_output, ...)>: linear in
    grad_output, which is one number for a reduced loss."""
    if reduction == 0:
        return ops.huber_loss_backward(grad, self, target, reduction, delta)
    slope = ops.huber_loss_backward(ops.ones_like(grad_output), self, target, reduction, delta)
    return ops.sum(slope * grad)


def _renorm_norm(ops: Any, self: Any, p: Any, dim: int) -> tuple[Any, list[int]]:
    """The p-norm of each slice along dim (kept as size-1 dimensions), and the dims it
    reduces."""
    dim = dim % self.ndim
    dims = [d for d in range(self.ndim) if d != dim]
    magnitude = ops.abs(self)
    if math.isinf(p):
        return ops.amax(magnitude, dims, True), dims
    return ops.pow(ops.sum(ops.pow(magnitude, p), dims, True), 1.0 / p), dims


def renorm_backward(ops: Any, grad: Any, self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    """renorm's gradient: where a slice's norm n exceeds maxnorm its output is
    self * maxnorm / (n + 1e-7), differentiated through n; elsewhere grad passes."""
    norm, dims = _renorm_norm(ops, self, p, dim)
    grad_norm = norm_backward(ops, ops.sum(self * grad, dims, True), self, p, norm, dims, True)
    inverse = 1.0 / (norm + 1e-7)
    factor = inverse * maxnorm
    return ops.where(norm > maxnorm, factor * grad - (factor * inverse) * grad_norm, grad)


def renorm_jvp(ops: Any, self_p: Any, self_t: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    """renorm's tangent: f (t - x n_t / (n + 1e-7)) for f = maxnorm / (n + 1e-7) where a
    slice's norm n exceeds maxnorm; the tangent itself elsewhere."""
    norm, dims = _renorm_norm(ops, self_p, p, dim)
    slope = norm_backward(ops, ones_like(ops, norm), self_p, p, norm, dims, True)
    norm_t = ops.sum(slope * self_t, dims, True)
    inverse = 1.0 / (norm + 1e-7)
    scaled = (inverse * maxnorm) * (self_t - self_p * norm_t * inverse)
    return ops.where(norm > maxnorm, scaled, self_t)


def _batched_matmul(ops: Any, a: Any, b: Any) -> Any:
    """a @ b over the last two dimensions, batch dimensions broadcast, as a broadcast
    product summed (matmul is a composite in gradgen, not an op of the spec)."""
    return ops.sum(ops.unsqueeze(a, -1) * ops.unsqueeze(b, -3), [-2])


def euclidean_dist_backward(ops: Any, grad: Any, x1: Any, x2: Any, res: Any) -> tuple:
    """The gradients of the distances res between the rows of x1 and x2: for each pair,
    grad (a - b) / res to a and its negative to b, 0 where res is 0 (a subgradient)."""
    ratio = ops.where(res == 0, 0, grad / res)
    grad_x1 = x1 * ops.sum(ratio, [-1], True) - _batched_matmul(ops, ratio, x2)
    grad_x2 = (x2 * ops.unsqueeze(ops.sum(ratio, [-2]), -1)
               - _batched_matmul(ops, ops.transpose(ratio, -1, -2), x1))
    return grad_x1, grad_x2


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"huber_loss_backward", "transpose"}))


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
    # the flattened sizes written out: an empty batch leaves -1 nothing to infer from
    grad_flat = lead + [math.prod(grad.shape[grad.ndim - dim:])]
    indices_flat = lead + [math.prod(indices.shape[indices.ndim - dim:])]
    picked = ops.gather(ops.reshape(grad, grad_flat), -1, ops.reshape(indices, indices_flat))
    return ops.reshape(picked, list(indices.shape))


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"convolution", "convolution_backward",
                                                        "gather"}))


# -- elementwise math and torch.special (torch's spec, family 1) -------------------------------
# (helpers of this family follow; keep this line and the blank ones around it)


def sinc_backward(ops: Any, grad: Any, self: Any) -> Any:
    """d/dx sin(pi x) / (pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x²), in torch's order
    of operations, and 0 where pi x² is 0 (x == 0, or x² underflows)."""
    self_pi = self * math.pi
    self_squared_pi = self * self * math.pi
    out = grad * (self_pi * ops.cos(self_pi) - ops.sin(self_pi)) / conj(ops, self_squared_pi)
    return ops.where(self_squared_pi == 0, 0, out)


def mvlgamma_backward(ops: Any, grad: Any, self: Any, p: int) -> Any:
    """d/dx sum_j lgamma(x - j/2) = sum_j digamma(x - j/2), j = 0 .. p - 1."""
    total = ops.digamma(self)
    for j in range(1, p):
        total = total + ops.digamma(self - j / 2)
    return grad * total


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"cos", "digamma", "sin"}))


# torch.special (helper "special"): the Bessel functions' and logit's derivatives.

def _tiny(ops: Any, self: Any) -> float:
    """The machine epsilon of self's dtype: below it, 1/x is not worth taking. (The dtype's
    name is read as text: numpy's, gradgen's and torch's dtypes all end it with `float32`.)"""
    return 1.1920928955078125e-07 if str(self.dtype).endswith("float32") else 2.220446049250313e-16


def i1_backward(ops: Any, grad: Any, self: Any, result: Any) -> Any:
    """d/dx I1(x) = I0(x) - I1(x) / x, and 1/2 at (and near) 0, where that is 0/0."""
    eps = _tiny(ops, self)
    not_tiny = ops.abs(self) > eps
    safe_self = ops.where(not_tiny, self, eps)
    slope = ops.i0(safe_self) - result / safe_self
    return grad * ops.where(not_tiny, slope, 0.5)


def i1e_backward(ops: Any, grad: Any, self: Any, result: Any) -> Any:
    """d/dx exp(-|x|) I1(x) = I0e(x) - I1e(x) (sgn(x) + 1/x), and 1/2 near 0."""
    eps = _tiny(ops, self)
    not_tiny = ops.abs(self) > eps
    safe_self = ops.where(not_tiny, self, eps)
    slope = ops.special_i0e(safe_self) - result * (ops.sign(safe_self) + 1 / safe_self)
    return grad * ops.where(not_tiny, slope, 0.5)


def logit_backward(ops: Any, grad: Any, self: Any, eps: Any) -> Any:
    """d/dx log(x / (1 - x)) = 1 / (x (1 - x)) inside [eps, 1 - eps] (0 outside it, where
    the input was clamped), or inside [0, 1] without eps (NaN outside it)."""
    low, high = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = ops.logical_and(self >= low, self <= high)
    return ops.where(inside, grad / (self * (1.0 - self)), math.nan if eps is None else 0.0)


def isfinite_mask(ops: Any, self: Any) -> Any:
    """1 where self is finite, 0 at NaN and the infinities (torch's at::isfinite, as a mask
    that multiplies): x == x is false at NaN, |x| < inf at the infinities."""
    return ops.logical_and(self == self, ops.abs(self) < math.inf)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"i0", "special_i0e"}))


# -- reductions, scans, indexing and shape (torch's spec, family 2) ----------------------------
# (helpers of this family follow; keep this line and the blank ones around it)

def trace_backward(ops: Any, grad: Any, sizes: Sequence[int]) -> Any:
    """trace's gradient: grad on the main diagonal of a zero matrix of `sizes`, filled in
    its flattened form (every `columns + 1`-th element, min(rows, columns) of them)."""
    rows, columns = sizes
    flat = ops.zeros(rows * columns, dtype=grad.dtype)
    diagonal = ops.arange(0, min(rows, columns) * (columns + 1), columns + 1)
    return ops.view(ops.index_fill(flat, 0, diagonal, grad), list(sizes))


def cummaxmin_backward(ops: Any, grad: Any, input: Any, indices: Any, dim: int) -> Any:
    """cummax / cummin's gradient: each output's grad added to the element it came from."""
    if ops.numel(input) == 0:
        return input
    return ops.scatter_add(zeros_like(ops, input), dim, indices, grad)


def nansum_backward(ops: Any, grad: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    """nansum's gradient: sum's, zero where self is NaN (a NaN is not a number, x != x)."""
    return ops.where(self != self, 0, sum_backward(ops, grad, self.shape, dim, keepdim))


def take_backward(ops: Any, grad: Any, self: Any, index: Any) -> Any:
    """take's gradient: grad added back at the flat positions read (a repeat adds twice)."""
    return ops.put(zeros_like(ops, self), index, grad, True)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"arange", "index_fill", "numel", "put",
                                                        "scatter_add", "view", "where",
                                                        "zeros"}))


# -- linear algebra (torch's spec, family 3) ---------------------------------------------------
# (helpers of this family follow; keep this line and the blank ones around it)

def _mT(ops: Any, X: Any) -> Any:
    """The matrix transpose of a batch (torch's `.mT`; `.mH` too: gradgen is real)."""
    return ops.transpose(X, -2, -1)


def _eye(ops: Any, n: int, like: Any) -> Any:
    return ops.eye(n, dtype=like.dtype)


def _diag_embed(ops: Any, v: Any) -> Any:
    """Vectors (…, n) as diagonal matrices (…, n, n)."""
    return ops.unsqueeze(v, -1) * _eye(ops, v.shape[-1], v)


def _diagonal(ops: Any, X: Any) -> Any:
    """The diagonals (…, n) of square matrices (…, n, n)."""
    return ops.sum(X * _eye(ops, X.shape[-1], X), [-1])


def _trace(ops: Any, X: Any) -> Any:
    return ops.sum(X * _eye(ops, X.shape[-1], X), [-2, -1])


def _scalar_matrices(ops: Any, values: Any) -> Any:
    """A batch of numbers (…) as (…, 1, 1), to scale a batch of matrices."""
    return ops.unsqueeze(ops.unsqueeze(values, -1), -1)


def _on_arrays(ops: Any) -> bool:
    """True in the engine's first-order backward (numpy arrays; PyTorch's grad mode off),
    where formulas may use factorizations that carry no gradient of their own."""
    return getattr(ops, "on_arrays", False)


def _any(ops: Any, mask: Any) -> bool:
    return bool(ops.any(mask))


def linalg_det_backward(ops: Any, grad: Any, det: Any, A: Any, LU: Any, pivots: Any) -> Any:
    """grad · det · A⁻ᵀ; for a (nearly) singular matrix, through its SVD A = U S Vh, where
    det A = det U det Vh ∏S needs no inverse."""
    n = A.shape[-1]
    if ops.numel(A) == 0:
        return ops.zeros_like(A)
    if n == 1:  # det A = A: grad itself, which a second order does not go through A for
        return ops.expand(ops.unsqueeze(ops.unsqueeze(grad, -1), -1), list(A.shape))
    d = _diag_embed(ops, ops.expand(ops.unsqueeze(grad * det, -1), list(A.shape[:-1])))
    singular = ops.lt(ops.abs(det), 100 * _epsilon(A))
    if not _any(ops, singular):
        return _det_nonsingular(ops, d, A, LU, pivots)
    U, S, Vh = ops._linalg_svd(A)
    alpha = ops._linalg_det(U)[0] * ops._linalg_det(Vh)[0] * grad
    D = _product_of_others(ops, S, -1) * ops.unsqueeze(alpha, -1)
    through_svd = ops.matmul(U * ops.unsqueeze(D, -2), Vh)
    if bool(ops.all(singular)):
        return through_svd
    mask = _scalar_matrices(ops, singular)
    safe = ops.where(mask, _eye(ops, n, A), A)
    return ops.where(mask, through_svd, _det_nonsingular(ops, d, safe, None, None))


def _epsilon(A: Any) -> float:
    return 2.220446049250313e-16 if "64" in str(A.dtype) else 1.1920928955078125e-07


def _det_nonsingular(ops: Any, d: Any, A: Any, LU: Any, pivots: Any) -> Any:
    """A⁻ᵀ d: with the saved LU factors on arrays, else by a solve that stays
    differentiable in A (torch's choice under grad mode)."""
    if _on_arrays(ops) and LU is not None:  # LU is of Aᵀ when A is contiguous (use_A_T)
        return ops.linalg_lu_solve(LU, pivots, d, adjoint=not ops.is_contiguous(A))
    return ops._linalg_solve_ex(_mT(ops, A), d)[0]


def linalg_det_jvp(ops: Any, dA: Any, det: Any, LU: Any, pivots: Any, use_A_T: bool) -> Any:
    """d det = det · tr(A⁻¹ dA); a zero pivot is moved to eps first, as torch does (the
    determinant is C¹, and forward mode is never differentiated again)."""
    pivots_of_U = _diagonal(ops, LU)
    shifted = LU + _diag_embed(ops, ops.to(ops.eq(pivots_of_U, 0), LU.dtype) * _epsilon(LU))
    return det * _trace(ops, ops.linalg_lu_solve(shifted, pivots, dA, adjoint=use_A_T))


def slogdet_backward(ops: Any, grad_sign: Any, grad_logabsdet: Any, A: Any, signdet: Any,
                     LU: Any, pivots: Any) -> Any:
    """The sign of a real determinant is piecewise constant: only log|det| has a gradient,
    grad · A⁻ᵀ."""
    if grad_logabsdet is None:
        return ops.zeros_like(A)
    d = _diag_embed(ops, ops.expand(ops.unsqueeze(grad_logabsdet, -1), list(A.shape[:-1])))
    return _det_nonsingular(ops, d, A, LU, pivots)


def slogdet_jvp(ops: Any, LU: Any, pivots: Any, dA: Any, sign: Any, use_A_T: bool) -> Any:
    """(0, tr(A⁻¹ dA))."""
    return (ops.zeros_like(sign),
            _trace(ops, ops.linalg_lu_solve(LU, pivots, dA, adjoint=use_A_T)))


def cholesky_backward(ops: Any, gL: Any, upper: bool, L: Any) -> Any:
    """A = L Lᵀ (Iain Murray, 2016): Φ(Lᵀ gL) symmetrised, then L⁻ᵀ · L⁻¹ around it."""
    if upper:
        L, gL = _mT(ops, L), _mT(ops, gL)
    gA = ops.tril(ops.matmul(_mT(ops, L), gL))
    gA = 0.5 * (gA + _mT(ops, ops.tril(gA, -1)))
    gA = ops.linalg_solve_triangular(_mT(ops, L), gA, upper=True, left=True)
    return ops.linalg_solve_triangular(L, gA, upper=False, left=False)


def cholesky_jvp(ops: Any, dA: Any, L: Any, upper: bool) -> Any:
    """dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ the lower triangle with half the diagonal."""
    lower = _mT(ops, L) if upper else L
    dL = ops.linalg_solve_triangular(lower, dA, upper=False, left=True)
    dL = ops.linalg_solve_triangular(_mT(ops, lower), dL, upper=True, left=False)
    dL = ops.tril(dL) - 0.5 * _diag_embed(ops, _diagonal(ops, dL))
    dL = ops.matmul(lower, dL)
    return _mT(ops, dL) if upper else dL


def cholesky_solve_backward(ops: Any, grad_x: Any, self: Any, input2: Any, result: Any,
                            upper: bool, output_mask: Any) -> tuple:
    """X = A⁻¹ B with A = L Lᵀ: B's gradient A⁻¹ gX; L's from A's, -(G + Gᵀ) L, G = A⁻¹ gX Xᵀ."""
    if grad_x is None:
        return None, None
    common = ops.cholesky_solve(grad_x, input2, upper)
    grad_self = common if output_mask[0] else None
    grad_input2 = None
    if output_mask[1]:
        common = ops.matmul(common, _mT(ops, result))
        common = common + _mT(ops, common)
        grad_input2 = -ops.matmul(input2, common) if upper else -ops.matmul(common, input2)
    return grad_self, grad_input2


def cholesky_solve_jvp(ops: Any, X: Any, U: Any, dU: Any, dB: Any, upper: bool) -> Any:
    """dX = A⁻¹ (dB - dA X), dA = dL Lᵀ + L dLᵀ."""
    dK = ops.matmul(_mT(ops, dU), U) if upper else ops.matmul(dU, _mT(ops, U))
    dA = dK + _mT(ops, dK)
    return ops.cholesky_solve(dB - ops.matmul(dA, X), U, upper)


def _triangle(ops: Any, X: Any, upper: bool, unitriangular: bool) -> Any:
    """The triangle of X a triangular solve reads (without the diagonal when it is unit)."""
    if upper:
        return ops.triu(X, 1 if unitriangular else 0)
    return ops.tril(X, -1 if unitriangular else 0)


def linalg_solve_triangular_backward(ops: Any, grad: Any, A: Any, X: Any, upper: bool,
                                     left: bool, unitriangular: bool,
                                     output_mask: Any) -> tuple:
    """B's gradient solves Aᵀ G = grad (G Aᵀ = grad); A's is -G Xᵀ (-Xᵀ G), on A's
    triangle."""
    if grad is None:
        return None, None
    gB = ops.linalg_solve_triangular(_mT(ops, A), grad, upper=not upper, left=left,
                                     unitriangular=unitriangular)
    gA = None
    if output_mask[0]:
        gA = -ops.matmul(gB, _mT(ops, X)) if left else -ops.matmul(_mT(ops, X), gB)
        gA = _triangle(ops, gA, upper, unitriangular)
    return gA, (gB if output_mask[1] else None)


def linalg_solve_triangular_forward_AD(ops: Any, A_t: Any, B_t: Any, A: Any, X: Any,
                                       upper: bool, left: bool, unitriangular: bool) -> Any:
    """dX solves A dX = dB - dA X (dX A = dB - X dA), dA on A's triangle."""
    dA = _triangle(ops, A_t, upper, unitriangular)
    R = ops.matmul(dA, X) if left else ops.matmul(X, dA)
    return ops.linalg_solve_triangular(A, B_t - R, upper=upper, left=left,
                                       unitriangular=unitriangular)


def triangular_solve_backward(ops: Any, grad_x: Any, grad_m: Any, b: Any, a: Any, x: Any,
                              upper: bool, transpose: bool, unitriangular: bool,
                              output_mask: Any) -> tuple:
    """As linalg_solve_triangular's, for op(A) X = b; the copy of A passes its gradient."""
    grad_b = grad_a = None
    if grad_x is not None:
        grad_b = ops.triangular_solve(grad_x, a, upper, not transpose, unitriangular)[0]
        if output_mask[1]:
            grad_a = -ops.matmul(x, _mT(ops, grad_b)) if transpose \
                else -ops.matmul(grad_b, _mT(ops, x))
            grad_a = _triangle(ops, grad_a, upper, unitriangular)
    if output_mask[1] and grad_m is not None:
        grad_a = grad_m if grad_a is None else grad_a + grad_m
    return (grad_b if output_mask[0] else None), grad_a


def triangular_solve_jvp(ops: Any, X: Any, A: Any, dA: Any, dB: Any, upper: bool,
                         transpose: bool, unitriangular: bool) -> Any:
    """dX solves op(A) dX = dB - dA X, as torch writes it (all of dA, untransposed)."""
    return ops.triangular_solve(dB - ops.matmul(dA, X), A, upper, transpose, unitriangular)[0]

def _solve_lower_unit(ops: Any, L: Any, B: Any) -> Any:
    """L⁻¹ B, L unit lower triangular."""
    return ops.linalg_solve_triangular(L, B, upper=False, left=True, unitriangular=True)


def _right_solve_upper(ops: Any, U: Any, B: Any) -> Any:
    """B U⁻¹, U upper triangular."""
    return ops.linalg_solve_triangular(U, B, upper=True, left=False)


def _lu_square_backward(ops: Any, gL: Any, gU: Any, L: Any, U: Any) -> Any:
    """L⁻ᵀ (tril(Lᵀ gL, -1) + triu(gU Uᵀ)) U⁻ᵀ: A = L U's gradient (L unit, square U)."""
    M = ops.tril(ops.matmul(_mT(ops, L), gL), -1) + ops.triu(ops.matmul(gU, _mT(ops, U)))
    M = ops.linalg_solve_triangular(_mT(ops, U), M, upper=False, left=False)
    return ops.linalg_solve_triangular(_mT(ops, L), M, upper=True, left=True, unitriangular=True)


def linalg_lu_backward(ops: Any, L_grad: Any, U_grad: Any, P: Any, L: Any, U: Any,
                       pivot: bool) -> Any:
    """A = P L U: the square case, and for a wide (tall) A the extra columns of U (rows of
    L) folded in first."""
    m, n = L.shape[-2], U.shape[-1]
    gL = ops.zeros_like(L) if L_grad is None else L_grad
    gU = ops.zeros_like(U) if U_grad is None else U_grad
    if m == n:
        gA = _lu_square_backward(ops, gL, gU, L, U)
    elif m < n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        gA2 = ops.linalg_solve_triangular(_mT(ops, L), gU2, upper=True, left=True,
                                          unitriangular=True)
        gL = gL - ops.matmul(gA2, _mT(ops, U2))
        gA = ops.cat([_lu_square_backward(ops, gL, gU1, L, U1), gA2], -1)
    else:
        L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
        gA2 = ops.linalg_solve_triangular(_mT(ops, U), gL2, upper=False, left=False)
        gU = gU - ops.matmul(_mT(ops, L2), gA2)
        gA = ops.cat([_lu_square_backward(ops, gL1, gU, L1, U), gA2], -2)
    return ops.matmul(P, gA) if pivot else gA


def _lu_square_jvp(ops: Any, dA: Any, L: Any, U: Any) -> tuple[Any, Any]:
    X = _right_solve_upper(ops, U, _solve_lower_unit(ops, L, dA))
    return ops.matmul(L, ops.tril(X, -1)), ops.matmul(ops.triu(X), U)


def linalg_lu_jvp(ops: Any, dA: Any, P: Any, L: Any, U: Any, pivot: bool) -> tuple[Any, Any]:
    """(dL, dU): L⁻¹ Pᵀ dA U⁻¹ split into its strictly lower part (L's) and upper part (U's)."""
    m, n = L.shape[-2], U.shape[-1]
    PdA = ops.matmul(_mT(ops, P), dA) if pivot else dA
    if m == n:
        return _lu_square_jvp(ops, PdA, L, U)
    if m < n:
        dL, dU1 = _lu_square_jvp(ops, PdA[..., :m], L, U[..., :m])
        dU2 = _solve_lower_unit(ops, L, PdA[..., m:] - ops.matmul(dL, U[..., m:]))
        return dL, ops.cat([dU1, dU2], -1)
    dL1, dU = _lu_square_jvp(ops, PdA[..., :n, :], L[..., :n, :], U)
    dL2 = _right_solve_upper(ops, U, PdA[..., n:, :] - ops.matmul(L[..., n:, :], dU))
    return ops.cat([dL1, dL2], -2), dU


def _packed(ops: Any, L_part: Any, U_part: Any, m: int, n: int) -> Any:
    """L's strictly lower and U's upper parts in one m × n tensor, as LU packs them."""
    if m == n:
        return L_part + U_part
    if m < n:
        return ops.cat([U_part[..., :m] + L_part, U_part[..., m:]], -1)
    return ops.cat([L_part[..., :n, :] + U_part, L_part[..., n:, :]], -2)


def lu_factor_ex_backward(ops: Any, grad: Any, LU: Any, pivs: Any, pivot: bool) -> Any:
    """The packed LU's gradient is L's (strictly lower) and U's (upper) together."""
    P, L, U = ops.lu_unpack(LU, pivs)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    return linalg_lu_backward(ops, ops.tril(grad[..., :, :k], -1), ops.triu(grad[..., :k, :]),
                              P, L, U, pivot)


def lu_factor_ex_jvp(ops: Any, dX: Any, LU: Any, pivs: Any, pivot: bool) -> Any:
    P, L, U = ops.lu_unpack(LU, pivs)
    dL, dU = linalg_lu_jvp(ops, dX, P, L, U, pivot)
    return _packed(ops, dL, dU, LU.shape[-2], LU.shape[-1])


def lu_unpack_backward(ops: Any, L_grad: Any, U_grad: Any, m: int, n: int) -> Any:
    """L's gradient below the diagonal and U's on and above it, packed as LU is."""
    k = min(m, n)
    like = U_grad if L_grad is None else L_grad
    batch = list(like.shape[:-2])
    gL = ops.tril(L_grad, -1) if L_grad is not None else \
        ops.zeros(batch + [m, k], dtype=like.dtype)
    gU = ops.triu(U_grad) if U_grad is not None else ops.zeros(batch + [k, n], dtype=like.dtype)
    return _packed(ops, gL, gU, m, n)


def lu_unpack_L_jvp(ops: Any, LU_data_t: Any) -> Any:
    """L's tangent: the strictly lower part of LU's first min(m, n) columns."""
    k = min(LU_data_t.shape[-2], LU_data_t.shape[-1])
    return ops.tril(LU_data_t[..., :, :k], -1)


def lu_unpack_U_jvp(ops: Any, LU_data_t: Any) -> Any:
    """U's tangent: the upper part of LU's first min(m, n) rows."""
    k = min(LU_data_t.shape[-2], LU_data_t.shape[-1])
    return ops.triu(LU_data_t[..., :k, :])


def _lu_solve_matrix_gradient(ops: Any, gX: Any, LU: Any, pivots: Any, X: Any, left: bool,
                              adjoint: bool) -> Any:
    """The gradient of A (= P L U) in A X = B and its variants (left=False: X A = B;
    adjoint: Aᵀ for A)."""
    G = ops.linalg_lu_solve(LU, pivots, gX, left=left, adjoint=not adjoint)
    if left:
        return -ops.matmul(X, _mT(ops, G)) if adjoint else -ops.matmul(G, _mT(ops, X))
    return -ops.matmul(_mT(ops, G), X) if adjoint else -ops.matmul(_mT(ops, X), G)


def linalg_lu_solve_LU(ops: Any, grad: Any, LU: Any, pivots: Any, X: Any, left: bool,
                       adjoint: bool) -> Any:
    """From A's gradient to the packed factors': dA = P (dL U + L dU)."""
    P, L, U = ops.lu_unpack(LU, pivots)
    gA = ops.matmul(_mT(ops, P), _lu_solve_matrix_gradient(ops, grad, LU, pivots, X, left,
                                                           adjoint))
    return ops.tril(ops.matmul(gA, _mT(ops, U)), -1) + ops.triu(ops.matmul(_mT(ops, L), gA))


def linalg_lu_solve_jvp(ops: Any, X: Any, LU: Any, pivots: Any, dLU: Any, dB: Any,
                        left: bool, adjoint: bool) -> Any:
    """dX solves the same system with dB - dA X (or its variant) on the right."""
    P, L, U = ops.lu_unpack(LU, pivots)
    dA = ops.matmul(P, ops.matmul(ops.tril(dLU, -1), U) + ops.matmul(L, ops.triu(dLU)))
    dA = _mT(ops, dA) if adjoint else dA
    R = ops.matmul(dA, X) if left else ops.matmul(X, dA)
    return ops.linalg_lu_solve(LU, pivots, dB - R, left=left, adjoint=adjoint)

def _gaps(ops: Any, values: Any) -> Any:
    """E[i, j] = values[j] - values[i], with ones on the diagonal (where it is not used)."""
    E = ops.unsqueeze(values, -2) - ops.unsqueeze(values, -1)
    return E + _eye(ops, values.shape[-1], values)


def _skew(ops: Any, X: Any) -> Any:
    return X - _mT(ops, X)


def _svd_backward(ops: Any, gU: Any, gS: Any, gVh: Any, U: Any, S: Any, Vh: Any) -> Any:
    """A = U diag(S) Vh (reduced): the gradient through the skew parts of Uᵀ gU and Vᵀ gV
    over the gaps between the squared singular values, plus what leaves U's (V's) span
    when A is tall (wide)."""
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return None if gS is None else ops.matmul(U * ops.unsqueeze(gS, -2), Vh)
    E = _gaps(ops, S * S)
    row, column = ops.unsqueeze(S, -1), ops.unsqueeze(S, -2)
    gV = None if gVh is None else _mT(ops, gVh)
    UhgU = None if gU is None else _skew(ops, ops.matmul(_mT(ops, U), gU))
    VhgV = None if gV is None else _skew(ops, ops.matmul(Vh, gV))
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * column + row * VhgV) / E
    elif UhgU is not None:
        gA = (UhgU / E) * column
    else:
        gA = row * (VhgV / E)
    if gS is not None:
        gA = gA + _diag_embed(ops, gS)
    if m > n and gU is not None:
        gUSinv = gU / column
        gA = ops.matmul(U, gA) + gUSinv - ops.matmul(U, ops.matmul(_mT(ops, U), gUSinv))
        return ops.matmul(gA, Vh)
    if m < n and gV is not None:
        gVSinv = _mT(ops, gV / column)
        gA = ops.matmul(gA, Vh) + gVSinv - ops.matmul(ops.matmul(gVSinv, _mT(ops, Vh)), Vh)
        return ops.matmul(U, gA)
    return ops.matmul(U, ops.matmul(gA, Vh))


def svd_full_backward(ops: Any, gU: Any, gS: Any, gVh: Any, U: Any, S: Any, Vh: Any,
                      full_matrices: bool) -> Any:
    """svd_backward on the first k = S.shape[-1] columns of U and rows of Vh (and of their
    gradients): what torch's formula narrows to when full_matrices."""
    if full_matrices:
        k = S.shape[-1]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
        U, Vh = U[..., :k], Vh[..., :k, :]
    return _svd_backward(ops, gU, gS, gVh, U, S, Vh)


def _zero_padded(ops: Any, X: Any, size: int, dim: int) -> Any:
    """X followed along dim by zeros up to `size` (the tangent of full_matrices' extra
    singular vectors, which torch sets to zero)."""
    if X.shape[dim] == size:
        return X
    shape = list(X.shape)
    shape[dim] = size - X.shape[dim]
    return ops.cat([X, ops.zeros(shape, dtype=X.dtype)], dim)


def linalg_svd_jvp(ops: Any, dA: Any, U: Any, S: Any, Vh: Any, full_matrices: bool) -> tuple:
    """(dU, dS, dVh) from dP = Uᵀ dA V: its diagonal is dS, its off-diagonal part rotates U
    and V; a tall (wide) A adds what leaves U's (V's) span. With full_matrices, torch's
    tangents of the first k singular vectors, zeros for the others."""
    m, n = dA.shape[-2], dA.shape[-1]
    k = S.shape[-1]
    if full_matrices:
        U, Vh = U[..., :k], Vh[..., :k, :]
    V = _mT(ops, Vh)
    dP = ops.matmul(_mT(ops, U), ops.matmul(dA, V))
    dS = _diagonal(ops, dP)
    dX = dP - _diag_embed(ops, dS)
    E = _gaps(ops, S * S)
    row, column = ops.unsqueeze(S, -1), ops.unsqueeze(S, -2)
    dU = ops.matmul(U, (dX * column + row * _mT(ops, dX)) / E)
    dV = ops.matmul(V, (row * dX + _mT(ops, dX) * column) / E)
    if m > k:
        dU = dU + (ops.matmul(dA, V) - ops.matmul(U, dP)) / column
    if n > k:
        dV = dV + (ops.matmul(_mT(ops, dA), U) - ops.matmul(V, _mT(ops, dP))) / column
    dVh = _mT(ops, dV)
    if full_matrices:
        dU, dVh = _zero_padded(ops, dU, m, -1), _zero_padded(ops, dVh, n, -2)
    return dU, dS, dVh


def _eig_backward(ops: Any, gL: Any, gV: Any, L: Any, V: Any) -> Any:
    """A = V diag(L) V⁻¹ (complex): V⁻ᴴ (gA) Vᴴ, gA = (Vᴴ gV, its diagonal's real part
    projected out) / conj(E), with gL on its diagonal (torch's linalg_eig_backward)."""
    Vh = ops.transpose(conj(ops, V), -2, -1)
    if gV is None:
        return ops._linalg_solve_ex(Vh, ops.unsqueeze(gL, -1) * Vh)[0]
    VhgV = ops.matmul(Vh, gV)
    real_diagonal = _real_part(ops, _diagonal(ops, VhgV))
    VhgV = VhgV - ops.matmul(Vh, V * ops.unsqueeze(real_diagonal, -2))
    gA = VhgV / _gaps(ops, conj(ops, L))
    if gL is not None:
        gA = gA - _diag_embed(ops, _diagonal(ops, gA)) + _diag_embed(ops, gL)
    return ops._linalg_solve_ex(Vh, ops.matmul(gA, Vh))[0]


def linalg_eig_backward(ops: Any, gL: Any, gV: Any, L: Any, V: Any, is_hermitian: bool) -> Any:
    """A = V diag(L) Vᵀ (symmetric): V (diag(gL) + skew(Vᵀ gV) / 2E) Vᵀ; a general A's
    is _eig_backward's."""
    if gL is None and gV is None:
        return None
    if not is_hermitian:
        return _eig_backward(ops, gL, gV, L, V)
    if gV is None:
        return None if gL is None else ops.matmul(V * ops.unsqueeze(gL, -2), _mT(ops, V))
    gA = 0.5 * _skew(ops, ops.matmul(_mT(ops, V), gV)) / _gaps(ops, L)
    if gL is not None:
        gA = gA + _diag_embed(ops, gL)
    return ops.matmul(V, ops.matmul(gA, _mT(ops, V)))


def linalg_eig_jvp(ops: Any, dA: Any, L: Any, V: Any, is_hermitian: bool) -> tuple:
    """(dL, dV): dP = V⁻¹ dA V (Vᵀ dA V when symmetric); dL its diagonal, dV = V (dP off
    the diagonal / E), less, for a general A, what would change the unit columns' norms."""
    if is_hermitian:
        dP = ops.matmul(_mT(ops, V), ops.matmul(dA, V))
    else:
        dA = dA if _is_complex(dA) else ops.to(dA, V.dtype)
        dP = ops._linalg_solve_ex(V, ops.matmul(dA, V))[0]
    dL = _diagonal(ops, dP)
    dV = ops.matmul(V, (dP - _diag_embed(ops, dL)) / _gaps(ops, L))
    if not is_hermitian:
        Vh = ops.transpose(conj(ops, V), -2, -1)
        dV = dV - V * ops.unsqueeze(_real_part(ops, _diagonal(ops, ops.matmul(Vh, dV))), -2)
    return dL, dV


_QR_R_MODE = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
              "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
              "through linalg.qr.")


def _qr_checks(mode: str, m: int, n: int) -> None:
    if mode == "r":
        raise RuntimeError(_QR_R_MODE)
    if mode == "complete" and m > n:
        raise NotImplementedError("The QR decomposition is not differentiable when "
                                  "mode='complete' and nrows > ncols.")


def _qr_tall_backward(ops: Any, gQ: Any, gR: Any, Q: Any, R: Any) -> Any:
    """A = Q R with m ≥ n: (gQ + Q copyltu(M)) R⁻ᵀ, M = R gRᵀ - gQᵀ Q."""
    M = None
    if gR is not None:
        M = ops.matmul(gR, _mT(ops, R))
    if gQ is not None:
        QhgQ = ops.matmul(_mT(ops, Q), gQ)
        M = -QhgQ if M is None else M - QhgQ
    M = ops.triu(M)
    B = ops.matmul(Q, M + _mT(ops, ops.triu(M, 1)))
    if gQ is not None:
        B = B + gQ
    return ops.linalg_solve_triangular(_mT(ops, R), B, upper=False, left=False)


def linalg_qr_backward(ops: Any, gQ: Any, gR: Any, Q: Any, R: Any, mode: str) -> Any:
    """A = Q R; a wide A is [X Y] with X = Q R₁ square and Y = Q R₂."""
    m, n = Q.shape[-2], R.shape[-1]
    _qr_checks(mode, m, n)
    if gQ is None and gR is None:
        return None
    if m >= n:
        return _qr_tall_backward(ops, gQ, gR, Q, R)
    gR1 = None if gR is None else gR[..., :m]
    gY = None
    if gR is not None:
        gR2 = gR[..., m:]
        Y = ops.matmul(Q, R[..., m:])
        gQ = ops.matmul(Y, _mT(ops, gR2)) if gQ is None else gQ + ops.matmul(Y, _mT(ops, gR2))
        gY = ops.matmul(Q, gR2)
    gX = _qr_tall_backward(ops, gQ, gR1, Q, R[..., :m])
    if gY is None:
        gY = ops.zeros_like(R[..., m:])
    return ops.cat([gX, gY], -1)


def _qr_tall_jvp(ops: Any, dA: Any, Q: Any, R: Any) -> tuple[Any, Any]:
    C = ops.linalg_solve_triangular(R, ops.matmul(_mT(ops, Q), dA), upper=True, left=False)
    lower = ops.tril(C, -1)
    upper_part = C - (lower - _mT(ops, lower))
    dQ = ops.linalg_solve_triangular(R, dA, upper=True, left=False) - \
        ops.matmul(Q, upper_part)
    return dQ, ops.matmul(upper_part, R)


def linalg_qr_jvp(ops: Any, dA: Any, Q: Any, R: Any, mode: str) -> tuple:
    """(dQ, dR): C = Qᵀ dA R⁻¹ is Qᵀ dQ (skew) plus dR R⁻¹ (upper)."""
    m, n = Q.shape[-2], R.shape[-1]
    _qr_checks(mode, m, n)
    if m >= n:
        return _qr_tall_jvp(ops, dA, Q, R)
    dQ, dR1 = _qr_tall_jvp(ops, dA[..., :m], Q, R[..., :m])
    dR2 = ops.matmul(_mT(ops, Q), dA[..., m:] - ops.matmul(dQ, R[..., m:]))
    return dQ, ops.cat([dR1, dR2], -1)


def linalg_matrix_exp_differential(ops: Any, self: Any, grad: Any, adjoint: bool) -> Any:
    """The upper-right block of exp([[M, G], [0, M]]), M = A (Aᵀ for the adjoint)."""
    n = self.shape[-1]
    M = _mT(ops, self) if adjoint else self
    meta = ops.cat([ops.cat([M, grad], -1), ops.cat([ops.zeros_like(M), M], -1)], -2)
    return ops.linalg_matrix_exp(meta)[..., :n, n:]


def pinv_backward(ops: Any, grad: Any, pinvA: Any, A: Any) -> Any:
    """The pseudo-inverse's gradient (Golub and Pereyra), with products of the smaller
    dimension first."""
    m, n = A.shape[-2], A.shape[-1]
    mm = ops.matmul
    pinvAh, gradh = _mT(ops, pinvA), _mT(ops, grad)
    if m <= n:
        K = mm(gradh, pinvA)
        KpinvAh = mm(K, pinvAh)
        return (-_mT(ops, mm(pinvA, K)) + KpinvAh - mm(mm(A, pinvA), KpinvAh)
                + mm(mm(pinvAh, pinvA), gradh - mm(K, A)))
    K = mm(pinvA, gradh)
    pinvAhK = mm(pinvAh, K)
    return (-_mT(ops, mm(K, pinvA)) + mm(mm(gradh - mm(A, K), pinvA), pinvAh) + pinvAhK
            - mm(mm(pinvAhK, pinvA), A))


def pinv_jvp(ops: Any, A: Any, pinvA: Any, dA: Any) -> Any:
    m, n = A.shape[-2], A.shape[-1]
    mm = ops.matmul
    dAh, pinvAh = _mT(ops, dA), _mT(ops, pinvA)
    if m <= n:
        K = mm(pinvAh, dAh)
        return (mm(pinvA, K - _mT(ops, K) - mm(K, mm(A, pinvA)))
                + mm(dAh - mm(pinvA, mm(A, dAh)), mm(pinvAh, pinvA)))
    K = mm(pinvA, dA)
    Kh = _mT(ops, K)
    return (mm(Kh - K - mm(mm(pinvA, A), Kh), pinvA)
            + mm(mm(pinvA, pinvAh), dAh - mm(mm(dAh, A), pinvA)))


def _as_matrices(B: Any, A: Any, ops: Any) -> tuple[Any, bool]:
    """lstsq's B as a batch of matrices, and whether it was a batch of vectors."""
    vector = B.ndim == A.ndim - 1
    return (ops.unsqueeze(B, -1) if vector else B), vector


def linalg_lstsq_backward(ops: Any, gX: Any, gL: Any, A: Any, B: Any, X: Any,
                          grad_input_mask: Any) -> tuple:
    """X = pinv(A) B: through pinv_backward for A and pinv(A)ᵀ gX for B; the residuals
    ‖A X - B‖² add their direct part (X's own part vanishes at the minimum)."""
    B_, vector = _as_matrices(B, A, ops)
    X_ = ops.unsqueeze(X, -1) if vector else X
    gA = gB = None
    if gX is not None:
        gX_ = ops.unsqueeze(gX, -1) if vector else gX
        pinvA = ops.linalg_pinv(A)
        if grad_input_mask[0]:
            gA = pinv_backward(ops, ops.matmul(gX_, _mT(ops, B_)), pinvA, A)
        if grad_input_mask[1]:
            gB = ops.matmul(_mT(ops, pinvA), gX_)
    if gL is not None and ops.numel(gL) > 0:
        weighted = 2 * (ops.matmul(A, X_) - B_) * ops.unsqueeze(gL, -2)
        if grad_input_mask[0]:
            extra = ops.matmul(weighted, _mT(ops, X_))
            gA = extra if gA is None else gA + extra
        if grad_input_mask[1]:
            gB = -weighted if gB is None else gB - weighted
    if gB is not None and vector:
        gB = ops.squeeze(gB, -1)
    return gA, gB


def linalg_lstsq_solution_jvp(ops: Any, A: Any, B: Any, dA: Any, dB: Any) -> Any:
    B_, vector = _as_matrices(B, A, ops)
    dB_ = ops.unsqueeze(dB, -1) if vector else dB
    pinvA = ops.linalg_pinv(A)
    dX = ops.matmul(pinv_jvp(ops, A, pinvA, dA), B_) + ops.matmul(pinvA, dB_)
    return ops.squeeze(dX, -1) if vector else dX


def linalg_lstsq_residuals_jvp(ops: Any, A: Any, B: Any, dA: Any, dB: Any, X: Any,
                               L: Any) -> Any:
    """d‖A X - B‖² = 2 Σ (A X - B)(dA X - dB): at the minimum A dX adds nothing."""
    if ops.numel(L) == 0:
        return ops.zeros_like(L)
    B_, vector = _as_matrices(B, A, ops)
    dB_ = ops.unsqueeze(dB, -1) if vector else dB
    X_ = ops.unsqueeze(X, -1) if vector else X
    r = ops.matmul(A, X_) - B_
    return ops.sum(2 * r * (ops.matmul(dA, X_) - dB_), [-2])


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {
    "_linalg_det", "_linalg_svd", "all", "any", "cholesky_solve", "eq", "eye", "is_contiguous",
    "linalg_lu_solve", "linalg_matrix_exp", "linalg_pinv", "_linalg_solve_ex",
    "linalg_solve_triangular", "lt", "lu_unpack", "matmul", "squeeze", "transpose",
    "triangular_solve", "tril", "triu",
}))



# -- Householder products (helper linalg, breadth 2) ------------------------------------------
# (helpers of this block follow; keep this line and the blank ones around it)
# householder_product(V, tau) is the first n columns of Q = H_1 ... H_k, H_i = I - tau_i v_i v_iᵀ
# with v_i column i of V below the diagonal and 1 on it (vᴴ, tauᴴ on complex tensors).

def _mH(ops: Any, X: Any) -> Any:
    """The conjugate transpose of a batch of matrices (the transpose of a real one)."""
    return ops.conj(_mT(ops, X))


def _reflectors(ops: Any, V: Any) -> Any:
    """V's Householder vectors: its strictly lower part, with ones on the diagonal."""
    return ops.tril(V, -1) + ops.triu(ops.tril(ops.ones_like(V)))


def _inverse_scales(ops: Any, V: Any, tau: Any) -> Any:
    """sigma_i with H_i(sigma_i) = H_i(tau_i)⁻¹: tau / (tau ‖v‖² - 1)."""
    first = V[..., :, :tau.shape[-1]]
    return tau / (tau * ops.sum(first * ops.conj(first), [-2]) - 1.0)


def _reflect(ops: Any, v: Any, t: Any, K: Any, left: bool) -> Any:
    """(I - t v vᴴ) K, or K (I - t v vᴴ) (v a column (…, m, 1), t (…, 1))."""
    scale = ops.unsqueeze(t, -1)
    if left:
        return K - (scale * v) * ops.matmul(_mH(ops, v), K)
    return K - ops.matmul(K, scale * v) * _mH(ops, v)


def householder_product_backward(ops: Any, grad: Any, result: Any, input: Any, tau: Any,
                                 flip_order: bool = False) -> tuple[Any, Any]:
    """(input's gradient, tau's): with K_i = H_i₊ Qᵀ-side products of grad (torch's note),
    v_i's gradient is -t_i (v_iᵀ K_i)ᵀ - t_i K_i v_i and tau_i's -v_iᵀ K_i v_i; K_i moves to
    K_(i+1) by H_(i+1)⁻¹ on one side and H_i on the other. flip_order walks the reflectors
    from the last (ormqr's other cases)."""
    if ops.numel(input) == 0 or ops.numel(tau) == 0:
        return ops.zeros_like(input), ops.zeros_like(tau)
    k = tau.shape[-1]
    V = _reflectors(ops, input)
    sigma = _inverse_scales(ops, V, tau)
    order = list(range(k - 1, -1, -1)) if flip_order else list(range(k))
    first = order[0]
    K = _reflect(ops, V[..., :, first:first + 1], sigma[..., first:first + 1],
                 ops.matmul(result, _mH(ops, grad)), not flip_order)
    columns: list[Any] = [None] * k
    scales: list[Any] = [None] * k
    for step, i in enumerate(order):
        v, t = V[..., :, i:i + 1], tau[..., i:i + 1]
        vK, Kv, scale = ops.matmul(_mH(ops, v), K), ops.matmul(K, v), ops.unsqueeze(t, -1)
        columns[i] = _mH(ops, -scale * vK) - scale * Kv
        scales[i] = -ops.conj(ops.squeeze(ops.matmul(vK, v), -1))
        if step + 1 < k:
            after = order[step + 1]
            K = _reflect(ops, V[..., :, after:after + 1], sigma[..., after:after + 1], K,
                         not flip_order)
            K = _reflect(ops, v, t, K, flip_order)
    if k < input.shape[-1]:  # the columns past tau's reflectors take no part
        columns.append(ops.zeros_like(input[..., :, k:]))
    return ops.tril(ops.cat(columns, -1), -1), ops.cat(scales, -1)


def householder_product_jvp(ops: Any, dV: Any, dtau: Any, prod: Any, V: Any, tau: Any) -> Any:
    """dQ = Σ_i H_1 … H_(i-1) dH_i H_(i+1) … H_k (its first columns: prod's), dH_i =
    -dtau_i v_i v_iᵀ - tau_i dv_i v_iᵀ - tau_i v_i dv_iᵀ."""
    V = _reflectors(ops, V)
    dV = ops.tril(dV, -1)
    sigma = _inverse_scales(ops, V, tau)
    m = V.shape[-2]
    after = prod
    before = ops.zeros_like(V[..., :, :1]) + _eye(ops, m, V)  # batched identity
    dprod = ops.zeros_like(prod)
    for i in range(tau.shape[-1]):
        v, dv = V[..., :, i:i + 1], dV[..., :, i:i + 1]
        t, dt = ops.unsqueeze(tau[..., i:i + 1], -1), ops.unsqueeze(dtau[..., i:i + 1], -1)
        after = _reflect(ops, v, sigma[..., i:i + 1], after, True)
        vK, dvK = ops.matmul(_mH(ops, v), after), ops.matmul(_mH(ops, dv), after)
        dH = -(dt * v) * vK - (t * dv) * vK - (t * v) * dvK
        dprod = dprod + ops.matmul(before, dH)
        before = _reflect(ops, v, tau[..., i:i + 1], before, False)
    return dprod


def ormqr_backward(ops: Any, grad: Any, result: Any, self: Any, tau: Any, other: Any,
                   left: bool, transpose: bool,
                   grad_input_mask: Sequence[bool]) -> tuple[Any, Any, Any]:
    """other's gradient is ormqr with the other transpose; self's and tau's are
    householder_product_backward's, with grad and result (or their transposes, swapped and
    walked from the last reflector) in the roles of Q's gradient and Q."""
    other_grad = ops.ormqr(self, tau, grad, left, not transpose) if grad_input_mask[2] \
        else None
    self_grad = tau_grad = None
    if grad_input_mask[0] or grad_input_mask[1]:
        if left != transpose:
            g = _mH(ops, grad) if transpose else grad
            r = _mH(ops, result) if transpose else result
            self_grad, tau_grad = householder_product_backward(ops, g, r, self, tau)
        else:
            g = result if transpose else _mH(ops, result)
            r = grad if transpose else _mH(ops, grad)
            self_grad, tau_grad = householder_product_backward(ops, g, r, self, tau, True)
    return self_grad, tau_grad, other_grad


def ormqr_jvp(ops: Any, self_t: Any, tau_t: Any, other_t: Any, self: Any, tau: Any,
              other: Any, left: bool, transpose: bool) -> Any:
    """d(op(Q) C) = op(dQ) C + op(Q) dC (or C op(dQ) + dC op(Q)), dQ the tangent of the whole
    m x m Q (householder_product_jvp of Q = ormqr of the identity)."""
    m = self.shape[-2]
    Q = ops.ormqr(self, tau, ops.zeros_like(self[..., :, :1]) + _eye(ops, m, self), True, False)
    dQ = householder_product_jvp(ops, self_t, tau_t, Q, self, tau)
    dQ = _mH(ops, dQ) if transpose else dQ
    moved = ops.matmul(dQ, other) if left else ops.matmul(other, dQ)
    return moved + ops.ormqr(self, tau, other_t, left, transpose)



# -- torch's linalg_solve_backward / linalg_solve_jvp (for _linalg_solve_ex) -------------------

def _solve_vector_rhs(LU: Any, X: Any) -> bool:
    """torch's rule: the right-hand side is a (batch of) vector(s) when it is 1-D, or has
    one dimension less than A and A's batch shape before its last dimension."""
    return X.ndim == 1 or (X.ndim == LU.ndim - 1 and tuple(X.shape) == tuple(LU.shape[:-1]))


def linalg_solve_backward(ops: Any, gX: Any, X: Any, A: Any, LU: Any, pivots: Any,
                          left: bool, B_requires_grad: bool) -> tuple[Any, Any]:
    """For X = A⁻¹B: gB = A⁻ᴴ gX and gA = -gB Xᴴ (X A = B: gA = -Xᴴ gB), a vector
    right-hand side taken as one column."""
    vector = _solve_vector_rhs(LU, X)
    gX_ = ops.unsqueeze(gX, -1) if vector else gX
    gB_ = ops._linalg_solve_ex(ops.conj(_mT(ops, A)), gX_, left=left)[0]
    X_ = ops.unsqueeze(X, -1) if vector else X
    XH = ops.conj(_mT(ops, X_))  # Xᴴ (the transpose of a real X)
    gA = -ops.matmul(gB_, XH) if left else -ops.matmul(XH, gB_)
    gB = (ops.squeeze(gB_, -1) if vector else gB_) if B_requires_grad else None
    return gA, gB


def linalg_solve_jvp(ops: Any, dA: Any, dB: Any, X: Any, LU: Any, pivots: Any,
                     left: bool, use_A_T: bool = False) -> Any:
    """dX = A⁻¹(dB - dA X) (left), or (dB - X dA) A⁻¹, solved with A's LU factors."""
    vector = _solve_vector_rhs(LU, X)
    X_ = ops.unsqueeze(X, -1) if vector else X
    dB_ = ops.unsqueeze(dB, -1) if vector else dB
    R_ = ops.matmul(dA, X_) if left else ops.matmul(X_, dA)
    if _is_complex(LU):  # gradgen's linalg_lu_solve is real: solve with A = P L U itself
        P, L, U = ops.lu_unpack(LU, pivots)
        A = ops.matmul(P, ops.matmul(L, U))
        A = _mT(ops, A) if use_A_T else A
        dX_ = ops._linalg_solve_ex(A, dB_ - R_, left=left)[0]
    else:
        dX_ = ops.linalg_lu_solve(LU, pivots, dB_ - R_, left=left, adjoint=use_A_T)
    return ops.squeeze(dX_, -1) if vector else dX_


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"cat", "conj", "ormqr", "squeeze", "tril"}))


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


# -- weight normalisation (issue 28, helper nnB) ----------------------------------------------

def weight_norm_differentiable_backward(ops: Any, grad: Any, v: Any, g: Any, norms: Any,
                                        dim: int) -> tuple[Any, Any]:
    """Gradients of w = g v / n (n = ||v|| over every dimension but `dim`) for v and g, with
    s = sum(grad * v) over those dimensions: g / n * (grad - v s / n²) and s / n."""
    axes = [d for d in range(v.ndim) if d != dim]
    per_dim_sums = ops.sum(grad * v, axes, True)
    grad_v = (g / norms) * (grad - v * (per_dim_sums / (norms * norms)))
    return grad_v, per_dim_sums / norms


def weight_norm_jvp(ops: Any, v_p: Any, g_p: Any, v_t: Any, g_t: Any, norms: Any,
                    dim: int) -> Any:
    """The tangent of w = g v / n: (g_t v + g v_t) / n - g v n_t / n², where
    n_t = sum(v v_t) / n over every dimension but `dim`."""
    axes = [d for d in range(v_p.ndim) if d != dim]
    norms_t = ops.sum(v_p * v_t, axes, True) / norms
    return (g_t * v_p + g_p * v_t) / norms - g_p * v_p * norms_t / (norms * norms)


# -- nn kernels A: convolution, pooling, grid sampling (issue 27, helper nnA) ----------------

def conv_tbc_backward(ops: Any, grad: Any, self: Any, weight: Any, bias: Any,
                      pad: int) -> tuple[Any, Any, Any]:
    """conv_tbc's gradients: conv_tbc is a 1-d convolution of the input seen as (batch, in,
    time) with the weight seen as (out, in, kernel), its output seen as (time, batch, out);
    so its gradients are convolution_backward's, seen back the other way."""
    grads = ops.convolution_backward(
        ops.permute(grad, [1, 2, 0]), ops.permute(self, [1, 2, 0]),
        ops.permute(weight, [2, 1, 0]), None, [1], [pad], [1], False, [0], 1,
        (True, True, True))
    return (ops.permute(grads[0], [2, 0, 1]), ops.permute(grads[1], [2, 1, 0]), grads[2])


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"convolution_backward", "permute"}))
# -- spec breadth: reductions, indexing, random, linalg (helper misc) -------------------------

def _scatter_counts(ops: Any, grad: Any, dim: int, index: Any, src: Any,
                    include_self: bool) -> Any:
    """How many values each position of a scatter_reduce averaged (1 where none was)."""
    start = ops.ones_like(grad) if include_self else zeros_like(ops, grad)
    counts = ops.scatter_add(start, dim, index, ops.ones_like(src))
    return ops.where(counts == 0, 1, counts)


def _scatter_prod_backward(ops: Any, grad: Any, self: Any, dim: int, index: Any, src: Any,
                           include_self: bool, result: Any) -> tuple[Any, Any]:
    """prod's gradient: the product of the other factors, found by dividing the result by
    the factor, or, for a factor that is the only zero of its position, by reducing again
    with that zero read as 1."""
    self_no_zero = ops.where(self == 0, 1, self)
    reduced = ops.scatter_reduce(self_no_zero, dim, index, src, "prod", include_self=include_self)
    grad_self = grad * reduced / self_no_zero
    src_zero = src == 0
    zeros_at = ops.gather(ops.scatter_add(zeros_like(ops, self), dim, index,
                                          ops.to(src_zero, self.dtype)), dim, index)
    single_zero = ops.logical_and(src_zero, zeros_at == 1)
    src_one = ops.where(single_zero, 1, src)
    others = ops.scatter_reduce(self, dim, index, src_one, "prod", include_self=include_self)
    grad_src = ops.where(single_zero, ops.gather(grad * others, dim, index),
                         ops.gather(grad * result, dim, index) / ops.where(src_zero, 1, src))
    return grad_self, grad_src


def scatter_reduce_backward(ops: Any, grad: Any, self: Any, dim: int, index: Any, src: Any,
                            reduce: str, include_self: bool, result: Any) -> tuple[Any, Any]:
    """scatter_reduce's gradients for self and src. A position written to with
    include_self=False gives self's old value no gradient."""
    if ops.numel(grad) == 0:
        return zeros_like(ops, self), zeros_like(ops, src)
    if reduce == "sum":
        grad_self, grad_src = grad, ops.gather(grad, dim, index)
    elif reduce == "mean":
        grad_self = grad / _scatter_counts(ops, grad, dim, index, src, include_self)
        grad_src = ops.gather(grad_self, dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _scatter_prod_backward(ops, grad, self, dim, index, src,
                                                     include_self, result)
    elif reduce in ("amax", "amin"):
        value = ops.gather(result, dim, index)
        self_is = ops.to(self == result, self.dtype)
        src_is = ops.to(src == value, self.dtype)
        shares = grad / ops.scatter_add(self_is, dim, index, src_is)
        grad_self = self_is * shares
        grad_src = src_is * ops.gather(shares, dim, index)
    else:
        raise RuntimeError(f"Expected 'reduce' argument to be one of 'sum', 'prod', 'mean', "
                           f"'amax', 'amin' but got {reduce}")
    if not include_self:
        grad_self = ops.scatter(grad_self, dim, index, 0)
    return grad_self, grad_src


def scatter_reduce_jvp(ops: Any, self_p: Any, self_t: Any, dim: int, index: Any, src_p: Any,
                       src_t: Any, reduce: str, include_self: bool, result: Any) -> Any:
    """The tangent of scatter_reduce: sum and mean are linear; prod and amax/amin take the
    tangent through their gradients (each position a sum over the values reduced into it)."""
    if reduce in ("sum", "mean"):
        return ops.scatter_reduce(self_t, dim, index, src_t, reduce, include_self=include_self)
    grad_self, grad_src = scatter_reduce_backward(ops, ops.ones_like(result), self_p, dim,
                                                  index, src_p, reduce, include_self, result)
    return ops.scatter_add(grad_self * self_t, dim, index, grad_src * src_t)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"gather", "scatter", "scatter_reduce"}))


def gather_with_keepdimed_indices(ops: Any, input: Any, dim: int, indices: Any,
                                  keepdim: bool) -> Any:
    """input's elements at `indices` along dim, indices shaped as a keepdim reduction's or
    not: the tangent of mode's (or any value-selecting reduction's) values."""
    if input.ndim == 0:
        return input
    if keepdim:
        return ops.gather(input, dim, indices)
    return ops.squeeze(ops.gather(input, dim, ops.unsqueeze(indices, dim)), dim)


def _all_dims(self: Any, dim: int | None) -> list[int]:
    return list(range(self.ndim)) if dim is None else [dim]


def aminmax_backward(ops: Any, self: Any, dim: int | None, keepdim: bool, grad_min: Any,
                     grad_max: Any, min: Any, max: Any) -> Any:
    """aminmax's gradient: amin's and amax's, each shared evenly among the tied extrema."""
    if self.ndim == 0:
        return sum(g for g in (grad_min, grad_max) if g is not None) + zeros_like(ops, self)
    dims = _all_dims(self, dim)
    grad_input = zeros_like(ops, self)
    for grad, value in ((grad_min, min), (grad_max, max)):
        if grad is not None:
            grad = restore_reduced_dims(ops, grad, dims, keepdim or dim is None)
            value = restore_reduced_dims(ops, value, dims, keepdim or dim is None)
            grad_input = grad_input + scale_grad_by_count(ops, grad, self == value, dims)
    return grad_input


def aminmax_jvp(ops: Any, self_p: Any, self_t: Any, result: Any, dim: int | None,
                keepdim: bool) -> Any:
    """The tangent of aminmax's min (or max): the mean of self_t over the tied extrema."""
    if self_p.ndim == 0:
        return self_t
    dims = _all_dims(self_p, dim)
    keep = keepdim or dim is None
    mask = self_p == restore_reduced_dims(ops, result, dims, keep)
    mean = ops.sum(self_t * mask, dims, True) / ops.sum(mask, dims, True, dtype=self_t.dtype)
    return ops.reshape(mean, result.shape)


def block_diag_backward(ops: Any, grad: Any, sizes: Sequence[Sequence[int]]) -> list:
    """Each block's gradient: its window of grad (a 0-dim input's one element, a 1-D one's
    row). As torch's, an empty 1-D input gets an empty gradient and moves no window, though
    block_diag gave it a row."""
    grads, row, column = [], 0, 0
    for shape in sizes:
        if tuple(shape) == (0,):
            grads.append(_zeros(ops, [0], grad))
            continue
        rows, columns = (shape[0], shape[1]) if len(shape) == 2 else (1, math.prod(shape))
        window = ops.slice(ops.slice(grad, 0, row, row + rows), 1, column, column + columns)
        grads.append(window if len(shape) == 2 else ops.reshape(window, list(shape)))
        row, column = row + rows, column + columns
    return grads


def cholesky_inverse_backward(ops: Any, grad: Any, L: Any, upper: bool, inverse: Any) -> Any:
    """X = (L Lᵀ)⁻¹ (Uᵀ U with upper): dL = -(X (G + Gᵀ) X) L (-U (X (G + Gᵀ) X) with upper)."""
    common = ops.matmul(inverse, ops.matmul(grad + _mT(ops, grad), inverse))
    return -ops.matmul(L, common) if upper else -ops.matmul(common, L)


def cholesky_inverse_jvp(ops: Any, F: Any, dF: Any, X: Any, upper: bool) -> Any:
    """torch's tangent, term for term: -X dF X Fᵀ (upper: -X dFᵀ X F) plus its transpose.
    It is not the derivative of X = (F Fᵀ)⁻¹, -X (dF Fᵀ + F dFᵀ) X (finite differences
    disagree), but it is what torch's forward mode gives, so gradgen gives it too."""
    CF = F if upper else _mT(ops, F)
    dCF = _mT(ops, dF) if upper else dF
    partial = -ops.matmul(ops.matmul(ops.matmul(X, dCF), X), CF)
    return partial + _mT(ops, partial)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"matmul", "squeeze"}))


def _affine_axis(steps: int, align_corners: bool) -> list[float]:
    """affine_grid's points along one dim: -1 to 1, scaled by (steps - 1) / steps without
    align_corners (0 for a single step)."""
    if steps <= 1:
        return [0.0] * max(steps, 0)
    scale = 1.0 if align_corners else (steps - 1) / steps
    return [(-1.0 + 2.0 * i / (steps - 1)) * scale for i in range(steps)]


def affine_grid_generator_backward(ops: Any, grad: Any, size: Sequence[int],
                                   align_corners: bool) -> Any:
    """affine_grid_generator is base @ thetaᵀ, base holding each output point's (x, y[, z],
    1); so theta's gradient is gradᵀ @ base, (N, dims, dims + 1)."""
    spatial = [int(s) for s in size[2:]]
    axes = [_affine_axis(s, align_corners) for s in spatial]
    rows = []
    for point in range(math.prod(spatial)):
        position, coords = point, []
        for axis in reversed(axes):  # the last dim (x) varies fastest
            coords.append(axis[position % len(axis)])
            position //= len(axis)
        rows.append(coords + [1.0])
    base = ops.tensor(rows, dtype=grad.dtype)  # (points, dims + 1)
    flat = ops.reshape(grad, [int(size[0]), len(rows), len(spatial)])
    return ops.sum(ops.unsqueeze(flat, -1) * ops.unsqueeze(ops.unsqueeze(base, 0), 2), 1)


def _plus_one(order: Sequence[int], k: int) -> list[int]:
    return [n + (j == k) for j, n in enumerate(order)]


def _coordinate(ops: Any, grid: Any, k: int) -> Any:
    """Grid coordinate k, shaped to broadcast against (N, C, *points)."""
    return ops.unsqueeze(ops.select(grid, -1, k), 1)


def grid_sampler_taps_grid_grad(ops: Any, grad: Any, values: Any, grid: Any,
                                order: Sequence[int], interpolation_mode: int,
                                padding_mode: int, align_corners: bool) -> Any:
    """The grid's gradient of <grad, _grid_sampler_taps(values, grid, order)>: per grid
    coordinate k, the taps differentiated once more in k, times grad, summed over the
    channels."""
    return ops.stack([
        ops.sum(ops._grid_sampler_taps(values, grid, _plus_one(order, k), interpolation_mode,
                                       padding_mode, align_corners) * grad, 1)
        for k in range(len(order))], -1)


def grid_sampler_taps_jvp(ops: Any, values: Any, grid: Any, grid_t: Any, order: Sequence[int],
                          interpolation_mode: int, padding_mode: int,
                          align_corners: bool) -> Any:
    """The tangent of _grid_sampler_taps(values, grid, order) for a tangent grid_t of the
    grid: the taps differentiated once more in each coordinate, times its tangent."""
    total = None
    for k in range(len(order)):
        term = ops._grid_sampler_taps(values, grid, _plus_one(order, k), interpolation_mode,
                                      padding_mode, align_corners) * _coordinate(ops, grid_t, k)
        total = term if total is None else total + term
    return total


def grid_sampler_taps_backward_jvp(ops: Any, grad_output: Any, grid: Any, grid_t: Any,
                                   input_size: Sequence[int], order: Sequence[int],
                                   interpolation_mode: int, padding_mode: int,
                                   align_corners: bool) -> Any:
    """The tangent of _grid_sampler_taps_backward(grad_output, grid, ...) for a tangent
    grid_t of the grid."""
    total = None
    for k in range(len(order)):
        term = ops._grid_sampler_taps_backward(
            grad_output * _coordinate(ops, grid_t, k), grid, input_size, _plus_one(order, k),
            interpolation_mode, padding_mode, align_corners)
        total = term if total is None else total + term
    return total


def grid_sampler_grid_grad_jvp(ops: Any, grad_output: Any, input: Any, grid: Any,
                               grad_output_t: Any, input_t: Any, grid_t: Any,
                               interpolation_mode: int, padding_mode: int,
                               align_corners: bool) -> Any:
    """The tangent of grid_sampler's grid gradient (grid_sampler_taps_grid_grad of order
    zero), which is linear in grad_output and in input."""
    zero = [0] * grid.shape[-1]
    args = (interpolation_mode, padding_mode, align_corners)
    total = grid_sampler_taps_grid_grad(ops, grad_output_t, input, grid, zero, *args) + \
        grid_sampler_taps_grid_grad(ops, grad_output, input_t, grid, zero, *args)
    for k in range(len(zero)):
        total = total + grid_sampler_taps_grid_grad(
            ops, grad_output, input, grid, _plus_one(zero, k), *args) * \
            ops.unsqueeze(ops.select(grid_t, -1, k), -1)
    return total


def grid_sampler_double_backward(ops: Any, grad_grad_input: Any, grad_grad_grid: Any,
                                 grad_output: Any, input: Any, grid: Any,
                                 interpolation_mode: int, padding_mode: int,
                                 align_corners: bool, grad_input_mask: Sequence[bool]
                                 ) -> tuple[Any, Any, Any]:
    """grid_sampler_2d / 3d_backward's gradients in (grad_output, input, grid) for the
    given gradients of its outputs (grad_input = the taps' adjoint on grad_output,
    grad_grid = grid_sampler_taps_grid_grad), all through _grid_sampler_taps and its
    adjoint with the taps differentiated once or twice, so they are differentiable again."""
    dims = grid.shape[-1]
    zero = [0] * dims
    args = (interpolation_mode, padding_mode, align_corners)
    d_output = d_input = d_grid = None
    if grad_grad_input is not None:
        d_output = ops._grid_sampler_taps(grad_grad_input, grid, zero, *args)
        d_grid = grid_sampler_taps_grid_grad(ops, grad_output, grad_grad_input, grid, zero,
                                             *args)
    if grad_grad_grid is not None:
        along = grid_sampler_taps_jvp(ops, input, grid, grad_grad_grid, zero, *args)
        d_output = along if d_output is None else d_output + along
        d_input = grid_sampler_taps_backward_jvp(ops, grad_output, grid, grad_grad_grid,
                                                 input.shape, zero, *args)
        for k in range(dims):
            term = grid_sampler_taps_grid_grad(ops, grad_output, input, grid,
                                               _plus_one(zero, k), *args) * \
                ops.unsqueeze(ops.select(grad_grad_grid, -1, k), -1)
            d_grid = term if d_grid is None else d_grid + term
    results = (d_output if d_output is not None else zeros_like(ops, grad_output),
               d_input if d_input is not None else zeros_like(ops, input),
               d_grid if d_grid is not None else zeros_like(ops, grid))
    return tuple(r if wanted else None for r, wanted in zip(results, grad_input_mask,
                                                              strict=True))


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {
    "_grid_sampler_taps", "_grid_sampler_taps_backward", "reshape", "select", "stack", "sum",
    "tensor", "unsqueeze"}))
def _spread_index(ops: Any, index: Any, dim: int, source: Any) -> Any:
    """index_reduce's vector index as the scatter index of source's shape."""
    if source.ndim == 0:
        return index
    shape = [-1 if d == dim % source.ndim else 1 for d in range(source.ndim)]
    return ops.expand(ops.reshape(index, shape), list(source.shape))


def index_reduce_backward(ops: Any, grad: Any, self: Any, dim: int, index: Any, source: Any,
                          reduce: str, include_self: bool, result: Any) -> tuple[Any, Any]:
    """index_reduce's gradients: scatter_reduce's, with the index spread over each slice."""
    return scatter_reduce_backward(ops, grad, self, dim, _spread_index(ops, index, dim, source),
                                   source, reduce, include_self, result)


def index_reduce_jvp(ops: Any, self_p: Any, self_t: Any, dim: int, index: Any, source_p: Any,
                     source_t: Any, reduce: str, include_self: bool, result: Any) -> Any:
    """index_reduce's tangent: scatter_reduce's, with the index spread over each slice."""
    return scatter_reduce_jvp(ops, self_p, self_t, dim, _spread_index(ops, index, dim, source_p),
                              source_p, source_t, reduce, include_self, result)


def unsafe_masked_index_backward(ops: Any, grad: Any, sizes: Sequence[int], mask: Any,
                                 indices: Sequence[Any]) -> Any:
    """_unsafe_masked_index's gradient: grad added, where mask is true, at indices of zeros
    of self's shape (torch's _unsafe_masked_index_put_accumulate(grad.new_zeros(...)))."""
    return ops._unsafe_masked_index_put_accumulate(_zeros(ops, sizes, grad), mask, indices, grad)


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"_unsafe_masked_index_put_accumulate"}))


def matmul_backward(ops: Any, grad: Any, self: Any, other: Any,
                    grad_input_mask: Sequence[bool]) -> tuple[Any, Any]:
    """matmul's gradients: grad times the other operand transposed, summed over the batch
    dimensions an operand was broadcast along (a 1-D operand a row or a column)."""
    if self.ndim == 1 and other.ndim == 1:
        return grad * other, grad * self
    a = ops.unsqueeze(self, 0) if self.ndim == 1 else self
    b = ops.unsqueeze(other, -1) if other.ndim == 1 else other
    g = ops.unsqueeze(grad, -2) if self.ndim == 1 else grad
    g = ops.unsqueeze(g, -1) if other.ndim == 1 else g
    grad_self = grad_other = None
    if grad_input_mask[0]:
        grad_self = ops.reshape(ops.sum_to_size(ops.matmul(g, _mT(ops, b)), *a.shape),
                                list(self.shape))
    if grad_input_mask[1]:
        grad_other = ops.reshape(ops.sum_to_size(ops.matmul(_mT(ops, a), g), *b.shape),
                                 list(other.shape))
    return grad_self, grad_other


def linear_double_backward(ops: Any, gi: Any, gw: Any, gb: Any, self: Any, grad_output: Any,
                           weight: Any) -> tuple[Any, Any, Any]:
    """linear_backward's gradients, from the gradients (gi, gw, gb) of its three outputs
    gi = go W, gw = goᵀ x, gb = Σ go (go, x flattened to rows)."""
    rows = ops.reshape(grad_output, [-1, grad_output.shape[-1]])
    self_grad = ops.matmul(grad_output, gw) if gw is not None else None
    grad_grad_output = None
    for term in (None if gi is None else ops.matmul(gi, _mT(ops, weight)),
                 None if gw is None else ops.matmul(self, _mT(ops, gw)),
                 None if gb is None else ops.expand(gb, list(grad_output.shape))):
        if term is not None:
            grad_grad_output = term if grad_grad_output is None else grad_grad_output + term
    weight_grad = None
    if gi is not None:
        weight_grad = ops.mm(ops.t(rows), ops.reshape(gi, [-1, gi.shape[-1]]))
    return self_grad, grad_grad_output, weight_grad


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"sum_to_size"}))


# -- strided views: as_strided and as_strided_scatter (helper strided) --------------------------
# A geometry is (sizes, strides, storage offset), in elements, as torch's TensorGeometry. The
# elements of a geometry sit at storage positions offset + sum(index_i * stride_i); the
# gradients move through those positions, so overlapping geometries need no case of their own.

def _storage_positions(ops: Any, sizes: Sequence[int], strides: Sequence[int],
                       offset: int) -> Any:
    """The storage position of each element of a geometry: an int64 tensor of `sizes`."""
    positions = ops.tensor(offset)
    for size, stride in zip(sizes, strides, strict=True):
        positions = ops.unsqueeze(positions, -1) + ops.arange(size) * stride
    return positions


def _geometry_span(sizes: Sequence[int], strides: Sequence[int], offset: int) -> range:
    """The storage positions from a geometry's first element to its last (empty if it has
    no elements)."""
    if 0 in sizes:
        return range(0)
    steps = zip(sizes, strides, strict=True)
    return range(offset, offset + 1 + sum((n - 1) * s for n, s in steps))


def as_strided_backward(ops: Any, grad: Any, input_geometry: Any, sizes: Sequence[int],
                        strides: Sequence[int], storage_offset: int | None) -> Any:
    """The gradient of x.as_strided(sizes, strides, storage_offset): grad added up at the
    storage positions of the view's elements, then read at the positions of x's. Where x's
    own elements share a position (an expanded x), each gets an equal share, as in torch."""
    in_sizes, in_strides, in_offset = input_geometry
    offset = in_offset if storage_offset is None else storage_offset
    inside = _geometry_span(in_sizes, in_strides, in_offset)
    if not inside:
        return _zeros(ops, in_sizes, grad)
    outside = _geometry_span(sizes, strides, offset)
    low = min(inside.start, outside.start) if outside else inside.start
    high = max(inside.stop, outside.stop) if outside else inside.stop
    storage = ops.index_add(_zeros(ops, (high - low,), grad), 0,
                            ops.reshape(_storage_positions(ops, sizes, strides, offset - low),
                                        (-1,)),
                            ops.reshape(grad, (-1,)))
    positions = _storage_positions(ops, in_sizes, in_strides, in_offset - low)
    shares = ops.index_add(_zeros(ops, (high - low,), grad), 0, ops.reshape(positions, (-1,)),
                           ops.ones_like(ops.reshape(positions, (-1,)), dtype=grad.dtype))
    if _any(ops, ops.gt(shares, 1)):
        storage = storage / (shares + ops.eq(shares, 0))
    return ops.take(storage, positions)


def _check_contiguous_geometry(geometry: Any) -> None:
    sizes, strides, _ = geometry
    step = 1
    for size, stride in reversed(list(zip(sizes, strides, strict=True))):
        if size != 1 and stride != step:
            raise RuntimeError("as_strided_scatter is currently only supported for contiguous "
                               "inputs (torch refuses a gradient through a non-contiguous self)")
        step *= size


def as_strided_scatter_backward(ops: Any, grad: Any, input_geometry: Any, src_geometry: Any,
                                sizes: Sequence[int], strides: Sequence[int],
                                storage_offset: int | None) -> Any:
    """torch's gradient of self in as_strided_scatter(self, src, ...): grad where src was
    written, zero elsewhere (self laid out contiguously, as torch requires when a gradient is
    needed). It is not the derivative, which is grad zero where src was written: torch's
    gradcheck of the op fails, and its OpInfo marks the gradient test an expected failure;
    gradgen gives torch's values."""
    _check_contiguous_geometry(input_geometry)
    positions = _storage_positions(ops, sizes, strides, storage_offset or 0)
    written = ops.index_fill(ops.zeros_like(ops.reshape(grad, (-1,)), dtype=grad.dtype), 0,
                             ops.reshape(positions, (-1,)), 1)
    return grad * ops.reshape(written, tuple(grad.shape))


def as_strided_scatter_src_backward(ops: Any, grad: Any, input_geometry: Any,
                                    sizes: Sequence[int], strides: Sequence[int],
                                    storage_offset: int | None) -> Any:
    """The gradient of src in as_strided_scatter: grad (laid out contiguously) read at the
    positions src was written to."""
    _check_contiguous_geometry(input_geometry)
    positions = _storage_positions(ops, sizes, strides, storage_offset or 0)
    return ops.take(grad, positions)


# -- shape and tensor identity (helper strided) ----------------------------------------------------

def chunk_backward(ops: Any, grads: Sequence[Any], sizes: Sequence[int], chunks: int,
                   dim: int) -> Any:
    """chunk's gradient: split's, for the split size chunk splits by (split_with_sizes' along
    an empty dimension), which is what torch's chunk records."""
    dim = _wrap(dim, len(sizes))
    split_size = -(-sizes[dim] // chunks)
    if split_size == 0:
        return split_with_sizes_backward(ops, grads, [0] * chunks, dim, sizes)
    return split_backward(ops, grads, split_size, dim, sizes)


# -- embedding bags (helper nnx) ---------------------------------------------------------------

def embedding_bag_jvp(ops: Any, weight_t: Any, per_sample_weights_t: Any, weight: Any,
                      indices: Any, offsets: Any, per_sample_weights: Any, mode: int,
                      include_last_offset: bool, padding_idx: int, bag_size: Any,
                      max_indices: Any) -> Any:
    """Forward-mode derivative of _embedding_bag's bags. A sum or a mean is linear in the
    table and in the per-sample weights: the same bags of their tangents (product rule). A
    maximum moves with the row each element came from (max_indices), and an empty bag, a
    constant zero, not at all."""
    if mode == 2:
        columns = weight.shape[1]
        flat = ops.reshape(weight_t, [-1, 1])
        where = max_indices * columns + ops.arange(columns)
        picked = ops.reshape(ops.embedding(flat, where), list(max_indices.shape))
        return ops.masked_fill(picked, ops.unsqueeze(ops.eq(bag_size, 0), 1), 0)
    result = None
    if weight_t is not None:
        result = ops._embedding_bag(weight_t, indices, offsets, False, mode, False,
                                    per_sample_weights, include_last_offset, padding_idx)[0]
    if per_sample_weights_t is not None:
        term = ops._embedding_bag(weight, indices, offsets, False, mode, False,
                                  per_sample_weights_t, include_last_offset, padding_idx)[0]
        result = term if result is None else result + term
    return result


NAMESPACE_NAMES = tuple(sorted(set(NAMESPACE_NAMES) | {"_embedding_bag", "masked_fill"}))


# -- RMS normalisation (helper nnx) ------------------------------------------------------------

def _rms_count(normalized_shape: Sequence[int]) -> int:
    count = 1
    for size in normalized_shape:
        count *= size
    return count


def infinitely_differentiable_native_rms_norm_backward(
        ops: Any, grad_out: Any, grad_rstd: Any, input: Any, normalized_shape: Sequence[int],
        rstd: Any, weight: Any, grad_input_mask: Sequence[bool]) -> tuple[Any, Any]:
    """_fused_rms_norm's gradients (input, weight), made of ops. With y = x r w and
    r = (mean(x²) + eps)^(-1/2): dr/dx = -r³ x / N, so the input receives r g - x r³ Σ(g x) / N
    (g = grad_out w) and -grad_rstd r³ x / N; the weight receives Σ over the batch of
    grad_out x r."""
    dims = _layer_norm_dims(input, normalized_shape)
    count = _rms_count(normalized_shape)
    cubed = rstd * rstd * rstd
    grad_input = grad_weight = None
    if grad_input_mask[0]:
        if grad_out is not None:
            g = grad_out if weight is None else grad_out * weight
            grad_input = rstd * g - input * cubed * ops.sum(g * input, dims, True) * (1.0 / count)
        if grad_rstd is not None:
            term = -(grad_rstd * cubed * input) * (1.0 / count)
            grad_input = term if grad_input is None else grad_input + term
        if grad_input is not None:
            grad_input = ops.to(grad_input, input.dtype)
    if len(grad_input_mask) > 1 and grad_input_mask[1] and weight is not None \
            and grad_out is not None:
        batch = list(range(input.ndim - len(normalized_shape)))
        grad_weight = grad_out * input * rstd
        grad_weight = ops.sum(grad_weight, batch, False) if batch else grad_weight
        grad_weight = ops.to(grad_weight, weight.dtype)
    return grad_input, grad_weight


def rms_norm_rstd_jvp(ops: Any, input_p: Any, input_t: Any, rstd: Any,
                      normalized_shape: Sequence[int]) -> Any:
    """Forward-mode derivative of rstd: -r³ mean(x t) over the normalized dims."""
    dims = _layer_norm_dims(input_p, normalized_shape)
    return -(rstd * rstd * rstd) * ops.sum(input_p * input_t, dims, True) * (
        1.0 / _rms_count(normalized_shape))


def rms_norm_jvp(ops: Any, input_p: Any, input_t: Any, weight_p: Any, weight_t: Any,
                 rstd: Any, normalized_shape: Sequence[int]) -> Any:
    """Forward-mode derivative of x r w: (t r + x dr) w + x r w'."""
    d_rstd = rms_norm_rstd_jvp(ops, input_p, input_t, rstd, normalized_shape)
    result = input_t * rstd + input_p * d_rstd
    if weight_p is not None:
        result = result * weight_p
    if weight_t is not None:
        result = result + input_p * rstd * weight_t
    return result
