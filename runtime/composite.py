"""Composite ops: plain Python over spec ops, like PyTorch's CompositeImplicitAutograd.

They have no node of their own; the graph shows the ops they are made of, exactly as
PyTorch's does (`linear` on a 2-D input records TBackward0 and AddmmBackward0).
`CompositeMethods` makes them Tensor methods; runtime.tensor.Tensor inherits it.
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import dtypes
from runtime import tensor as _tensor
from runtime.dispatch import int_list

__all__: list[str] = []

# -- broadcasting and dtype -------------------------------------------------------------------

__all__ += []


def sum_to_size(self: Any, *size: Any) -> Any:
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


def to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.to(dtype)` (and `x.to(other)`): the same tensor if nothing changes."""
    dtype = kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, _tensor.Tensor):
            dtype = arg.dtype
    if dtype is None or dtype is self.dtype:
        return self
    return ops._to_copy(self, dtype=dtype)


# -- elementwise ------------------------------------------------------------------------------

# -- reductions -------------------------------------------------------------------------------

# -- shape and indexing -----------------------------------------------------------------------

__all__ += ["reshape"]


def reshape(input: Any, *shape: Any) -> Any:
    """A view when the strides allow one, else a copy (CloneBackward0, UnsafeViewBackward0)."""
    shape = int_list(shape)
    try:
        return ops.view(input, shape)
    except RuntimeError as error:
        if "view size is not compatible" not in str(error):
            raise
    return ops._unsafe_view(ops.clone(input), shape)

# -- linear algebra and nn --------------------------------------------------------------------
# The torch.nn.functional-level ops below take torch.nn.functional's signatures. Those whose
# name torch's namespace uses for something else (embedding, binary_cross_entropy_with_logits
# are aten ops there) or does not have are left out of __all__: runtime.nn imports them.

__all__ += ["linear", "matmul", "outer", "ger", "softmax", "log_softmax", "dropout", "layer_norm"]


def _product(sizes: Any) -> int:
    result = 1
    for size in sizes:
        result *= size
    return result


def _is_contiguous(tensor: Any) -> bool:
    return tensor._data.flags.c_contiguous


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """y = x Wᵀ + b, decomposed as PyTorch does: addmm on 2-D input with a bias, addmm on the
    input flattened to 2-D (then a view back) for a contiguous N-D input with a 1-D bias,
    else matmul and an in-place add."""
    if input.ndim == 2 and bias is not None:
        return ops.addmm(bias, input, weight.t())
    if bias is not None and _is_contiguous(input) and (input.ndim == 3 or bias.ndim == 1):
        flat = reshape(input, _product(input.shape[:-1]), input.shape[-1])
        output = ops.addmm(bias, flat, weight.t())
        return ops.view(output, (*input.shape[:-1], output.shape[1]))
    output = matmul(input, weight.t())
    return output if bias is None else output.add_(bias)


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two batch shapes, with PyTorch's error when they don't match."""
    size = max(len(a), len(b))
    result = []
    for i in range(size):
        x = a[i - size + len(a)] if i >= size - len(a) else 1
        y = b[i - size + len(b)] if i >= size - len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        result.append(y if x == 1 else x)
    return tuple(result)


def matmul(input: Any, other: Any) -> Any:
    """torch.matmul, folded into dot / mv / mm / bmm as PyTorch folds it, so the graph
    records the same nodes (MmBackward0 under UnsafeViewBackward0 for a batch times a matrix)."""
    dim1, dim2 = input.ndim, other.ndim
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{dim1}D and {dim2}D")
    if dim1 == 1 and dim2 == 1:
        return ops.dot(input, other)
    if dim1 == 2 and dim2 == 1:
        return ops.mv(input, other)
    if dim1 == 1 and dim2 == 2:
        return ops.squeeze(ops.mm(input.unsqueeze(0), other), 0)
    if dim1 == 2 and dim2 == 2:
        return ops.mm(input, other)
    if _should_fold(input, other):
        return _matmul_folded(input, other)
    return _matmul_batched(input, other)


def _should_fold(input: Any, other: Any) -> bool:
    """PyTorch's choice: fold a batch times a matrix (or vector) into one mm (or mv) when an
    input requires grad (cheaper gradients), else only when the fold is a view."""
    larger = input.ndim >= other.ndim
    folded = input if larger else other.transpose(-1, -2)
    if folded.ndim < 3 or (other.ndim if larger else input.ndim) > 2:
        return False
    if input.requires_grad or other.requires_grad:
        return True
    if input.ndim == 2:
        return False
    if folded.numel() == 0:
        return True
    shape, strides = folded.shape, folded._data.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(folded.ndim - 2))


def _matmul_folded(input: Any, other: Any) -> Any:
    """A batch of matrices times a matrix or a vector: one mm / mv on the batch flattened to
    rows. With the batch on the right, work on the transposes and transpose back."""
    transpose = other.ndim > input.ndim
    if transpose:
        left = other.transpose(-1, -2)
        right = input.t() if input.ndim == 2 else input
    else:
        left, right = input, other
    output_shape = left.shape[:-1] + (right.shape[1:] if right.ndim == 2 else ())
    folded = reshape(left, _product(left.shape[:-1]), left.shape[-1])
    if right.ndim == 1:
        return ops._unsafe_view(ops.mv(folded, right), output_shape)
    output = ops._unsafe_view(ops.mm(folded, right), output_shape)
    return ops.clone(output.transpose(-1, -2)) if transpose else output


def _matmul_batched(input: Any, other: Any) -> Any:
    """Broadcast the batch dimensions, flatten them into one, bmm; a vector on either side
    takes part as a matrix of one row (left) or one column (right)."""
    rows = input.shape[-2] if input.ndim > 1 else 1
    inner = input.shape[-1]
    inner_other = other.shape[-2] if other.ndim > 1 else other.shape[0]
    columns = other.shape[-1] if other.ndim > 1 else 1
    batch = _broadcast_batch(input.shape[:-2], other.shape[:-2])
    count = _product(batch)
    left = reshape(input.expand(*batch, rows, inner), count, rows, inner)
    if other.ndim == 1:
        right = reshape(other.expand(*batch, inner_other), count, inner_other).unsqueeze(2)
    else:
        right = reshape(other.expand(*batch, inner_other, columns), count, inner_other,
                        columns)
    output_shape = batch + ((rows,) if input.ndim > 1 else ()) + \
        ((columns,) if other.ndim > 1 else ())
    output = ops.bmm(left, right)
    if other.ndim == 1:
        output = ops.squeeze(output, -1)
    return ops._unsafe_view(output, output_shape)


def outer(input: Any, vec2: Any) -> Any:
    """The outer product, as PyTorch computes it: input as a column times vec2."""
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return reshape(input, input.shape[0], 1) * vec2


ger = outer


def _softmax_dim(name: str, ndim: int) -> int:
    """torch.nn.functional's implicit dim for softmax without `dim` (deprecated there too)."""
    import warnings

    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x), dim): _softmax, after a cast to `dtype` if one is given."""
    if isinstance(_stacklevel, dtypes.dtype):  # torch.softmax(x, dim, dtype)
        dtype = _stacklevel
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return ops._softmax(to(input, dtype), dim, False)


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Any:
    """x - log(sum(exp(x), dim)): _log_softmax, after a cast to `dtype` if one is given."""
    if isinstance(_stacklevel, dtypes.dtype):  # torch.log_softmax(x, dim, dtype)
        dtype = _stacklevel
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return ops._log_softmax(to(input, dtype), dim, False)


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction: str, size_average: bool | None = None,
               reduce: bool | None = None) -> int:
    """A reduction string as at::Reduction's int; the legacy size_average/reduce win."""
    if size_average is not None or reduce is not None:
        import warnings

        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _warn_target_size(input: Any, target: Any) -> None:
    if target.shape != input.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def _size(tensor: Any) -> str:
    return f"torch.Size({list(tensor.shape)})"


def _broadcast_pair(input: Any, target: Any) -> tuple[Any, Any]:
    """torch.broadcast_tensors for two tensors: an input already of the shape stays itself."""
    shape = _broadcast_batch(input.shape, target.shape)
    return (input if input.shape == shape else input.expand(*shape),
            target if target.shape == shape else target.expand(*shape))


def _weighted_loss(errors: Any, weight: Any, reduction: int) -> Any:
    """torch.nn.functional's weighted mse/l1: weighted errors, a weighted mean."""
    if weight.shape != errors.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = errors * weight
    if reduction == 0:
        return weighted
    if reduction == 2:
        return weighted.sum()
    return weighted.sum() / weight.sum()


def mse_loss(input: Any, target: Any, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Any:
    """Mean squared error: mse_loss (MseLossBackward0), or by hand with a weight."""
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss((input - target).pow(2), weight, enum)
    return ops.mse_loss(input, target, enum)


def l1_loss(input: Any, target: Any, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean", weight: Any = None) -> Any:
    """Mean absolute error, made of sub, abs and mean / sum as PyTorch makes it."""
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted_loss((input - target).abs(), weight, enum)
    return _l1_loss(input, target, enum)


def _l1_loss(input: Any, target: Any, reduction: int) -> Any:
    errors = (input - target).abs()
    return errors if reduction == 0 else errors.sum() if reduction == 2 else errors.mean()


def smooth_l1_loss(input: Any, target: Any, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Any:
    """Huber-like loss: quadratic below beta, linear above (l1_loss when beta is 0)."""
    _warn_target_size(input, target)
    enum = _reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    if beta == 0.0:
        return _l1_loss(input, target, enum)
    return ops.smooth_l1_loss(input, target, enum, beta)


def nll_loss(input: Any, target: Any, weight: Any = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Any:
    """Negative log likelihood of class indices: nll_loss_forward's output."""
    return _nll_loss(input, target, weight, _reduction(reduction, size_average, reduce),
                     ignore_index)


def _nll_loss(input: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim > 2:
        raise NotImplementedError("gradgen's nll_loss takes (C) or (N, C) inputs only")
    if input.ndim == 2 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0] if target.ndim else 0}).")
    return ops.nll_loss_forward(input, target, weight, reduction, ignore_index)[0]


def cross_entropy(input: Any, target: Any, weight: Any = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """log_softmax over the classes, then nll_loss (class-index targets)."""
    enum = _reduction(reduction, size_average, reduce)
    if target.dtype.is_floating_point:
        raise NotImplementedError("gradgen's cross_entropy takes class-index targets only")
    if label_smoothing != 0.0:
        raise NotImplementedError("gradgen's cross_entropy supports label_smoothing=0 only")
    class_dim = 0 if input.ndim == 1 else 1
    log_probabilities = log_softmax(input, class_dim, dtype=input.dtype)
    return _nll_loss(log_probabilities, target, weight, enum, ignore_index)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Any:
    """-(t log x + (1 - t) log(1 - x)) for probabilities x, weighted."""
    enum = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(*_broadcast_batch(target.shape, weight.shape))
    return ops.binary_cross_entropy(input, target, weight, enum)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """binary_cross_entropy of sigmoid(input), computed stably from the logits."""
    enum = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})")
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, enum)


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
    """Zero each element with probability p and scale the rest by 1/(1-p), as PyTorch's CPU
    path does: input times a noise tensor (MulBackward0); the input itself when not training
    or p is 0."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    from runtime.factories import ones_like, zeros

    if p == 1:
        noise = zeros((), dtype=input.dtype)
    else:
        noise = ops.native_dropout(ones_like(input), p, True)[0]
    return input.mul_(noise) if inplace else input * noise


def embedding(input: Any, weight: Any, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """Rows of `weight` looked up by the indices in `input`; padding_idx's row gets no
    gradient."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx > 0:
        if padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = weight.shape[0] + padding_idx
    if max_norm is not None:
        raise NotImplementedError("gradgen's embedding does not renormalize (max_norm)")
    if sparse:
        raise NotImplementedError("gradgen has no sparse gradients")
    return ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Normalize over the last len(normalized_shape) dimensions, then scale and shift."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return ops.native_layer_norm(input, tuple(normalized_shape), weight, bias, eps)[0]


class CompositeMethods:
    """Tensor methods for the composite ops above."""

    __slots__ = ()

    # -- broadcasting and dtype ---------------------------------------------------------------
    def sum_to_size(self, *size: Any) -> Any:
        return sum_to_size(self, *size)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        return to(self, *args, **kwargs)

    def float(self) -> Any:
        return to(self, dtypes.float32)

    def double(self) -> Any:
        return to(self, dtypes.float64)

    # -- elementwise --------------------------------------------------------------------------

    # -- reductions ---------------------------------------------------------------------------

    # -- shape and indexing -------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Any:
        return reshape(self, *shape)

    # -- linear algebra and nn ----------------------------------------------------------------
    def matmul(self, other: Any) -> Any:
        return matmul(self, other)

    __matmul__ = matmul

    def outer(self, vec2: Any) -> Any:
        return outer(self, vec2)

    ger = outer

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        return softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        return log_softmax(self, dim, dtype=dtype)
