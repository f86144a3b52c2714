"""Forward kernels: one function per op overload, on numpy arrays (gradgen's "ATen").

A kernel knows numpy and nothing else: no Tensor, no graph, no grad mode. Arguments that
the schema types as Tensor arrive as numpy arrays, or as Python numbers where a number
stands in for a tensor (`x * 2`). Results follow PyTorch's type promotion: a Python
number or a 0-dim array does not widen a dimensioned array of the same category.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_DEFAULT_FLOAT = np.float32
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def default_float(dtype: np.dtype | None = None) -> None:
    """Set the dtype integers promote to in float ops (torch.set_default_dtype)."""
    global _DEFAULT_FLOAT
    _DEFAULT_FLOAT = dtype


def _category(value: Any) -> int:
    if isinstance(value, np.ndarray | np.generic):
        return _CATEGORY[value.dtype.kind]
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return 1
    return 2


def result_type(*operands: Any) -> np.dtype:
    """PyTorch's promotion: dimensioned arrays, then 0-dim arrays, then Python numbers.

    A lower tier only matters when it is of a higher category (bool < int < float):
    float32[3] + float64 0-dim -> float32, int64[3] + 2.5 -> float32 (the default).
    """
    tiers: list[list[Any]] = [[], [], []]
    for value in operands:
        if isinstance(value, np.ndarray):
            tiers[0 if value.ndim else 1].append(value.dtype)
        elif value is not None:
            tiers[2].append(value)
    result: np.dtype | None = None
    for tier, values in enumerate(tiers):
        if not values:
            continue
        if tier < 2:
            candidate = np.result_type(*values)
        else:
            category = max(_category(v) for v in values)
            candidate = np.dtype([np.bool_, np.int64, _DEFAULT_FLOAT][category])
        if result is None:
            result = candidate
        elif _CATEGORY[candidate.kind] > _CATEGORY[result.kind]:
            result = candidate if tier < 2 or candidate.kind != "f" else np.dtype(_DEFAULT_FLOAT)
    return result if result is not None else np.dtype(_DEFAULT_FLOAT)


def _float_type(*operands: Any) -> np.dtype:
    """The result dtype of an op that always gives floats (exp, div, ...)."""
    dtype = result_type(*operands)
    return dtype if dtype.kind == "f" else np.dtype(_DEFAULT_FLOAT)


def _as(value: Any, dtype: np.dtype) -> Any:
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    return dtype.type(value)


def _binary(a: Any, b: Any, dtype: np.dtype | None = None) -> tuple[Any, Any]:
    dtype = result_type(a, b) if dtype is None else dtype
    return _as(a, dtype), _as(b, dtype)


def _array(value: Any, dtype: np.dtype) -> np.ndarray:
    return np.asarray(value, dtype=dtype)


# -- elementwise ------------------------------------------------------------------------------

def add_Tensor(self, other, alpha=1):
    a, b = _binary(self, other, result_type(self, other, alpha if alpha != 1 else None))
    return _array(a + b if alpha == 1 else a + alpha * b, a.dtype)


def add_Scalar(self, other, alpha=1):
    return add_Tensor(self, other, alpha)


def sub_Tensor(self, other, alpha=1):
    a, b = _binary(self, other, result_type(self, other, alpha if alpha != 1 else None))
    return _array(a - b if alpha == 1 else a - alpha * b, a.dtype)


def mul_Tensor(self, other):
    a, b = _binary(self, other)
    return _array(a * b, a.dtype)


def mul_Scalar(self, other):
    return mul_Tensor(self, other)


def pow_Tensor_Scalar(self, exponent):
    dtype = result_type(self, exponent)
    return _array(np.power(_as(self, dtype), exponent), dtype)


def relu(self):
    return np.maximum(self, 0).astype(self.dtype, copy=False)


def threshold_backward(grad_output, self, threshold):
    return np.where(self <= threshold, 0, grad_output).astype(grad_output.dtype, copy=False)


# -- reductions ---------------------------------------------------------------------------------

def _sum_dtype(array: np.ndarray, dtype: Any) -> np.dtype:
    if dtype is not None:
        return dtype
    return np.dtype(np.int64) if array.dtype.kind in "biu" else array.dtype


def sum(self, dtype=None):  # noqa: A001 - the op's name
    return _array(np.sum(self, dtype=_sum_dtype(self, dtype)), _sum_dtype(self, dtype))


def sum_dim_IntList(self, dim, keepdim=False, dtype=None):
    axis = None if dim is None or dim == () else tuple(np.atleast_1d(dim))
    out = _sum_dtype(self, dtype)
    return _array(np.sum(self, axis=axis, keepdims=keepdim, dtype=out), out)


# -- shape and indexing -----------------------------------------------------------------------

def t(self):
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


def expand(self, size, implicit=False):
    size = tuple(size)
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({len(size)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({self.ndim})"
        )
    lead = len(size) - self.ndim
    target = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(size))
    return np.broadcast_to(self, target)


def unsqueeze(self, dim):
    return np.expand_dims(self, _wrap_dim(dim, self.ndim + 1))


def squeeze(self):
    return np.squeeze(self)


def squeeze_dim(self, dim):
    dim = _wrap_dim(dim, self.ndim)
    return np.squeeze(self, dim) if self.ndim and self.shape[dim] == 1 else self.view()


def squeeze_dims(self, dim):
    dims = tuple(d for d in (_wrap_dim(d, self.ndim) for d in dim) if self.shape[d] == 1)
    return np.squeeze(self, dims) if dims else self.view()


def _to_copy(self, dtype=None):
    return np.array(self, dtype=self.dtype if dtype is None else dtype, copy=True)


def _wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in [-ndim, ndim), made non-negative, with PyTorch's error."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], "
            f"but got {dim})"
        )
    return dim % size


def clone(self):
    return np.array(self, copy=True)


def transpose_int(self, dim0, dim1):
    return np.swapaxes(self, _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim))


def _view_shape(size, numel: int) -> tuple[int, ...]:
    """`size` with a -1 filled in, or PyTorch's error if it does not fit `numel` elements."""
    size = tuple(size)
    known = int(np.prod([s for s in size if s != -1]))
    if size.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in size:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        size = tuple(numel // known if s == -1 else s for s in size)
    if int(np.prod(size)) != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def view(self, size):
    shape = _view_shape(size, self.size)
    result = self.view()
    try:
        result.shape = shape  # numpy refuses where a view would need a copy, as torch does
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return result


def _unsafe_view(self, size):
    return np.reshape(self, _view_shape(size, self.size))


def zero_(self):
    return np.zeros_like(self)


# -- linear algebra and nn --------------------------------------------------------------------

def mm(self, mat2):
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if self.ndim != 2 else "mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_C_TYPE_NAMES[self.dtype.str[1:]]} != "
                           f"{_C_TYPE_NAMES[mat2.dtype.str[1:]]}")
    return self @ mat2


def addmm(self, mat1, mat2, beta=1, alpha=1):
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * product.dtype.type(alpha)
    bias = _as(self, product.dtype)
    if beta == 0:
        return product + np.zeros_like(bias)
    return product + (bias if beta == 1 else bias * product.dtype.type(beta))


_C_TYPE_NAMES = {"f4": "float", "f8": "double", "i8": "long int", "i4": "int", "b1": "bool"}


def _check_same_dtype(a: np.ndarray, b: np.ndarray, message: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(message.format(_dtype_name(a), _dtype_name(b)))


def _dtype_name(array: np.ndarray) -> str:
    """`Float`, `Double`, `Long`: PyTorch's short name for a dtype in messages."""
    return {"f4": "Float", "f8": "Double", "i8": "Long", "i4": "Int", "b1": "Bool"}.get(
        array.dtype.str[1:], str(array.dtype))


def bmm(self, mat2):
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    expected = [self.shape[0], self.shape[2]]
    if list(mat2.shape[:2]) != expected:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {expected} but got: "
            f"{list(mat2.shape[:2])}."
        )
    _check_same_dtype(self, mat2, "expected scalar type {0} but found {1}")
    return np.matmul(self, mat2)


def dot(self, tensor):
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {tensor.ndim}D tensors")
    if self.shape != tensor.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.size}] and src [{tensor.size}] to "
            f"have the same number of elements, but got {self.size} and {tensor.size} elements "
            "respectively"
        )
    _check_same_dtype(self, tensor, "dot : expected both vectors to have same dtype, but found "
                      "{0} and {1}")
    return _array(np.dot(self, tensor), self.dtype)


def mv(self, vec):
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}")
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
            f"vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_dtype_name(vec)}, {_dtype_name(self)}, and {_dtype_name(vec)}")
    return self @ vec


def neg(self):
    if self.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return np.negative(self)


def exp(self):
    dtype = _float_type(self)
    with np.errstate(over="ignore"):
        return _array(np.exp(_as(self, dtype)), dtype)


def _softmax_input(self, dim, half_to_float):
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    return _wrap_dim(dim, self.ndim)


def _softmax(self, dim, half_to_float):
    axis = _softmax_input(self, dim, half_to_float)
    shifted = np.exp(self - np.max(self, axis=axis, keepdims=True))
    return _array(shifted / np.sum(shifted, axis=axis, keepdims=True), self.dtype)


def _log_softmax(self, dim, half_to_float):
    axis = _softmax_input(self, dim, half_to_float)
    shifted = self - np.max(self, axis=axis, keepdims=True)
    return _array(shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True)),
                  self.dtype)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    axis = _wrap_dim(dim, output.ndim)
    inner = np.sum(grad_output * output, axis=axis, keepdims=True)
    return _array(output * (grad_output - inner), input_dtype)


def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    axis = _wrap_dim(dim, output.ndim)
    total = np.sum(grad_output, axis=axis, keepdims=True)
    return _array(grad_output - np.exp(output) * total, input_dtype)


# Loss reductions, PyTorch's at::Reduction enum.
_NONE, _MEAN, _SUM = 0, 1, 2


def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == _MEAN:
        return _array(np.mean(loss), loss.dtype)
    if reduction == _SUM:
        return _array(np.sum(loss), loss.dtype)
    return loss


def _per_element(grad_output, loss_shape, reduction) -> Any:
    """The gradient of a reduced loss spread back over its elements."""
    if reduction == _MEAN:
        return grad_output / int(np.prod(loss_shape))
    return grad_output


def mse_loss(self, target, reduction=_MEAN):
    a, b = _binary(self, target)
    return _reduce(_array((a - b) ** 2, a.dtype), reduction)


def mse_loss_backward(grad_output, self, target, reduction):
    a, b = _binary(self, target)
    diff = a - b
    norm = 2.0 / diff.size if reduction == _MEAN else 2.0  # in PyTorch's order, for float32
    return _array(norm * diff * grad_output, diff.dtype)


def smooth_l1_loss(self, target, reduction=_MEAN, beta=1.0):
    a, b = _binary(self, target)
    distance = np.abs(a - b)
    loss = np.where(distance < beta, 0.5 * distance**2 / (beta or 1.0), distance - 0.5 * beta)
    return _reduce(_array(loss, a.dtype), reduction)


def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    a, b = _binary(self, target)
    diff = a - b
    slope = np.where(np.abs(diff) < beta, diff / (beta or 1.0), np.sign(diff))
    return _array(slope * _per_element(grad_output, diff.shape, reduction), diff.dtype)


def _nll_weights(self, target, weight, ignore_index) -> np.ndarray:
    """The weight of each sample's target class, 0 where the target is ignore_index."""
    if target.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected scalar type Long but found {_dtype_name(target)}")
    if self.ndim not in (1, 2):
        raise ValueError(f"Expected 1 or 2 dimensions (got {self.ndim})")
    if self.ndim == 2 and target.shape != self.shape[:1]:
        raise ValueError(
            f"Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}).")
    classes = self.shape[-1]
    kept = target != ignore_index
    for value in target[kept].reshape(-1):
        if not 0 <= value < classes:
            raise IndexError(f"Target {value} is out of bounds.")
    safe = np.where(kept, target, 0)
    chosen = np.ones(target.shape, self.dtype) if weight is None else weight[safe]
    return np.where(kept, chosen, 0).astype(self.dtype)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    weights = _nll_weights(self, target, weight, ignore_index)
    safe = np.where(target != ignore_index, target, 0)
    picked = self[safe] if self.ndim == 1 else self[np.arange(self.shape[0]), safe]
    loss = -weights * picked
    total = np.sum(weights)
    if reduction == _NONE:
        return loss, _array(total if self.ndim == 1 else 0, self.dtype)
    if reduction == _SUM:
        return _array(np.sum(loss), self.dtype), _array(total, self.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _array(np.sum(loss) / total, self.dtype), _array(total, self.dtype)


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    weights = _nll_weights(self, target, weight, ignore_index)
    scale = grad_output
    if reduction == _MEAN:
        scale = grad_output / total_weight
    grad_input = np.zeros(self.shape, self.dtype)
    safe = np.where(target != ignore_index, target, 0)
    if self.ndim == 1:
        grad_input[safe] = -weights * scale
    else:
        grad_input[np.arange(self.shape[0]), safe] = -weights * scale
    return grad_input


_LOG_CLAMP = -100.0  # PyTorch clamps log(x) at -100 so a 0 or 1 input gives a finite loss
_BCE_EPSILON = 1e-12


def binary_cross_entropy(self, target, weight=None, reduction=_MEAN):
    if np.any((self < 0) | (self > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if np.any((target < 0) | (target > 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(self), _LOG_CLAMP)
        log_1mx = np.maximum(np.log1p(-self), _LOG_CLAMP)
    loss = (target - 1) * log_1mx - target * log_x
    if weight is not None:
        loss = loss * weight
    return _reduce(_array(loss, self.dtype), reduction)


def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=_MEAN):
    slope = (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    if weight is not None:
        slope = slope * weight
    return _array(slope * _per_element(grad_output, self.shape, reduction), self.dtype)


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None,
                                     reduction=_MEAN):
    softplus_neg = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)  # -log(sigmoid(x))
    if pos_weight is not None:
        loss = (1 - target) * self + ((pos_weight - 1) * target + 1) * softplus_neg
    else:
        loss = (1 - target) * self + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(_array(loss, result_type(self, target)), reduction)


# Dropout draws from a numpy Generator that runtime.factories shares (torch.manual_seed).
_generator = [np.random.default_rng()]


def set_generator(generator: np.random.Generator) -> None:
    """Use `generator` for the random ops (dropout masks)."""
    _generator[0] = generator


def native_dropout(input, p, train):
    if train is False:
        return input.copy(), np.ones(input.shape, np.bool_)
    mask = _generator[0].random(input.shape) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return _array(input * mask * scale, input.dtype), mask


def native_dropout_backward(grad_output, mask, scale):
    return _array(grad_output * mask * scale, grad_output.dtype)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_dtype_name(indices)}Tensor instead (while "
            "checking arguments for embedding)"
        )
    if np.any((indices < 0) | (indices >= weight.shape[0])):
        raise IndexError("index out of range in self")
    return weight[indices]


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = indices.reshape(-1)
    rows = grad_output.reshape(flat.size, -1)
    keep = flat != padding_idx
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        rows = rows / counts[flat][:, None]
    grad_weight = np.zeros((num_weights, rows.shape[1]), grad_output.dtype)
    np.add.at(grad_weight, flat[keep], rows[keep])
    return grad_weight


def _layer_norm_axes(input, normalized_shape) -> tuple[int, ...]:
    normalized_shape = tuple(normalized_shape)
    start = input.ndim - len(normalized_shape)
    if start < 0 or input.shape[start:] != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}"
        )
    return tuple(range(start, input.ndim))


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    axes = _layer_norm_axes(input, normalized_shape)
    mean = np.mean(input, axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(np.var(input, axis=axes, keepdims=True) + eps)
    output = (input - mean) * rstd
    if weight is not None:
        output = output * weight
    if bias is not None:
        output = output + bias
    return _array(output, input.dtype), _array(mean, input.dtype), _array(rstd, input.dtype)


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """All three gradients; PyTorch skips those output_mask turns off, gradgen's nodes ignore
    them instead."""
    axes = _layer_norm_axes(input, normalized_shape)
    batch_axes = tuple(range(input.ndim - len(axes)))
    normalized = (input - mean) * rstd
    scaled = grad_out if weight is None else grad_out * weight
    count = int(np.prod([input.shape[a] for a in axes]))
    grad_input = rstd / count * (
        count * scaled
        - np.sum(scaled, axis=axes, keepdims=True)
        - normalized * np.sum(scaled * normalized, axis=axes, keepdims=True)
    )
    grad_weight = np.sum(grad_out * normalized, axis=batch_axes)
    grad_bias = np.sum(grad_out, axis=batch_axes)
    return (_array(grad_input, input.dtype), _array(grad_weight, input.dtype),
            _array(grad_bias, input.dtype))
