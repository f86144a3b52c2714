"""F.linear_cross_entropy and nn.LinearCrossEntropyOptions (new in torch 2.13; the module
nn.LinearCrossEntropyLoss is in linear_cross_entropy_loss.py): the cross entropy of a linear
layer's logits and a target.

Without options (the reference path) the loss is `cross_entropy(linear(input, W, b), target,
...)`, recorded as those ops. With a LinearCrossEntropyOptions (torch's chunked path, for
class counts far above the feature count) the batch is cut into chunks of rows; each
chunk's logits give its share of the loss and, at once, of the gradients of input, weight
and bias, so the whole (batch, classes) logits never exist. Its node is torch's custom op's
(GeneratedBackwardFor_..._defaultBackward): backward scales the gradients the forward made
and, unless allow_retain_graph, can run once; with reduction="none" it recomputes them from
the saved inputs instead. As torch's, the chunked path takes only class-index targets
(int64), no label smoothing and no K-dimensional weight; other calls warn and take the
reference path.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, NamedTuple

import numpy as np

from runtime import composite, devices, dtypes, grad_mode
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.autograd.function import Function
from runtime.recording import wrap

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# What "auto" resolves to on gradgen's one device, the CPU, per input dtype (torch's picks);
# other dtypes take the fallback.
_AUTO_DEFAULTS = {dtypes.bfloat16: _AutoDefault("accurate", "aspect_ratio"),
                  dtypes.float16: _AutoDefault("accurate", "aspect_ratio")}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How F.linear_cross_entropy's chunked path cuts the batch and accumulates.

    allow_retain_graph: keep the precomputed gradients so backward may run again (scalar
    reductions only). batch_chunk_size: rows per chunk (None: one chunk, or what
    chunking_method gives). chunking_method: "auto", "aspect_ratio", "aspect_ratio:N" or
    None; "aspect_ratio" makes a chunk's (rows, classes) logits as large as the (batch,
    features) input, rounded up to a power of two, ":N" divides that by N. acc_policy and
    acc_dtype: the precision of the accumulation ("auto" resolves per input dtype).
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, colon, factor = self.chunking_method.partition(":")
            factor = factor if colon else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None "
                "to let the op pick automatically.")

    @staticmethod
    def _chunk_size(method: str, num_batches: int, in_features: int, num_classes: int) -> int:
        """The rows per chunk an "aspect_ratio[:N]" method gives."""
        factor = int(method.split(":", 1)[1]) if ":" in method else 1
        target = -(-num_batches // -(-num_classes // in_features))
        return min((1 << (target - 1).bit_length()) // factor, num_batches)

    def _adjust(self, num_batches: int, in_features: int, num_classes: int, dtype: Any,
                device: Any = None) -> LinearCrossEntropyOptions:
        """These options with "auto" and None resolved for one call."""
        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None  # an explicit size wins over the automatic one
        if "auto" in (acc_policy, method):
            picks = _AUTO_DEFAULTS.get(dtype, _AUTO_FALLBACK) if device is not None \
                else _AUTO_FALLBACK
            acc_policy = picks.acc_policy if acc_policy == "auto" else acc_policy
            method = picks.chunking_method if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size,
                                                                      num_batches)
        if method is not None:
            size = self._chunk_size(method, num_batches, in_features, num_classes)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{method}') give different chunk sizes ({self.batch_chunk_size} vs "
                    f"{size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            mixed = self.acc_policy == "auto" and device is not None and dtype in (
                dtypes.float16, dtypes.bfloat16)
            acc_dtype = dtypes.float32 if mixed else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)


# -- the chunked path ---------------------------------------------------------------------------

def _chunk_terms(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, rows: np.ndarray,
                 target: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One chunk's losses (-scale * log softmax at the target) and the gradient of their sum
    in its logits ((softmax - one-hot) * scale)."""
    logits = x[rows] @ w.T
    if b is not None:
        logits = logits + b
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    log_probs = shifted - log_sum
    picked = np.take_along_axis(log_probs, np.maximum(target[rows], 0)[:, None], 1)[:, 0]
    slope = np.exp(log_probs)
    slope[np.arange(rows.size), np.maximum(target[rows], 0)] -= 1
    return -picked * scale[rows], slope * scale[rows][:, None]


def _row_scales(target: np.ndarray, weight: np.ndarray | None, ignore_index: int,
                dtype: np.dtype) -> np.ndarray:
    """Each row's class weight (1 without weights), 0 for an ignored row."""
    kept = target != ignore_index
    scale = np.ones(target.shape, dtype) if weight is None else \
        weight[np.where(kept, target, 0)].astype(dtype)
    return np.where(kept, scale, 0).astype(dtype)


def _check_targets(target: np.ndarray, kept: np.ndarray, classes: int) -> None:
    outside = (target < 0) | (target >= classes)
    if np.any(outside & kept):
        raise IndexError(f"Target {int(target[outside & kept][0])} is out of bounds.")


def _chunked(arrays: tuple, ignore_index: int, chunk: int, want: tuple[bool, bool, bool],
             per_row: np.ndarray | None = None) -> tuple:
    """(losses per row, grad input, grad weight, grad bias) over the batch in chunks; the
    gradients are those of sum(losses * per_row) (per_row 1 when None), each where `want`."""
    x, w, b, target, weight = arrays
    _check_targets(target, target != ignore_index, w.shape[0])
    scale = _row_scales(target, weight, ignore_index, x.dtype)
    losses = np.zeros(x.shape[0], x.dtype)
    grads = [np.zeros_like(x) if want[0] else None, np.zeros_like(w) if want[1] else None,
             None if b is None or not want[2] else np.zeros_like(b)]
    for start in range(0, x.shape[0], chunk):
        rows = np.arange(start, min(start + chunk, x.shape[0]))
        losses[rows], slope = _chunk_terms(x, w, b, rows, target, scale)
        if per_row is not None:
            slope = slope * per_row[rows][:, None]
        if grads[0] is not None:
            grads[0][rows] = slope @ w
        if grads[1] is not None:
            grads[1] += slope.T @ x[rows]
        if grads[2] is not None:
            grads[2] += slope.sum(axis=0)
    return losses, *grads, scale


def _arrays(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias: Tensor | None,
            weight: Tensor | None, acc: Any) -> tuple:
    def array(t: Tensor | None) -> np.ndarray | None:
        return None if t is None else t.detach().numpy().astype(acc.numpy, copy=False)
    return (array(input), array(linear_weight), array(linear_bias),
            target.numpy().astype(np.int64), None if weight is None else array(weight))


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):  # noqa: N801
    """The mean or sum over chunks; the gradients made with the loss, scaled in backward
    (named as torch's custom op, so its node is torch's)."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, linear_weight: Tensor, target: Tensor,
                linear_bias: Tensor | None, weight: Tensor | None, reduction: str,
                ignore_index: int, options: LinearCrossEntropyOptions) -> Tensor:
        want = tuple(t is not None and t.requires_grad for t in (input, linear_weight,
                                                                  linear_bias))
        arrays = _arrays(input, linear_weight, target, linear_bias, weight, options.acc_dtype)
        losses, *grads, scale = _chunked(arrays, ignore_index, options.batch_chunk_size, want)
        total = losses.sum()
        if reduction == "mean":
            denominator = scale.sum()
            total = total / denominator
            grads = [None if g is None else g / denominator for g in grads]
        ctx.grads = [None if g is None else g.astype(t.dtype.numpy, copy=False)
                     for g, t in zip(grads, (input, linear_weight, linear_bias), strict=True)]
        ctx.keep = options.allow_retain_graph
        return wrap(np.asarray(total, input.dtype.numpy))

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy chunked backward called twice; "
                               "retain_graph=True / double backward are not supported.")
        factor = grad_output.detach().numpy()
        grads = [None if g is None else wrap(g * factor) for g in ctx.grads]
        if not ctx.keep:
            ctx.grads = None
        return grads[0], grads[1], None, grads[2], None, None, None, None


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(  # noqa: N801
        Function):
    """Each row's loss; backward recomputes the gradients from the saved inputs, chunk by
    chunk (named as torch's custom op)."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, linear_weight: Tensor, target: Tensor,
                linear_bias: Tensor | None, weight: Tensor | None, ignore_index: int,
                options: LinearCrossEntropyOptions) -> Tensor:
        ctx.arrays = _arrays(input, linear_weight, target, linear_bias, weight,
                             options.acc_dtype)
        ctx.settings = (ignore_index, options.batch_chunk_size)
        ctx.dtypes = [None if t is None else t.dtype.numpy
                      for t in (input, linear_weight, linear_bias)]
        losses = _chunked(ctx.arrays, ignore_index, options.batch_chunk_size,
                          (False, False, False))[0]
        return wrap(losses.astype(input.dtype.numpy))

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        ignore_index, chunk = ctx.settings
        want = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[3])
        per_row = grad_output.detach().numpy().astype(ctx.arrays[0].dtype)
        grads = _chunked(ctx.arrays, ignore_index, chunk, want, per_row)[1:4]
        grads = [None if g is None else wrap(g.astype(d, copy=False))
                 for g, d in zip(grads, ctx.dtypes, strict=True)]
        return grads[0], grads[1], None, grads[2], None, None, None


# -- F.linear_cross_entropy --------------------------------------------------------------------

def _check_shapes(input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None) -> tuple:
    """(num_classes, out_features) once the shapes agree as torch requires."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and input.dim() == 1:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {input.shape[-1]}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    return num_classes, out_features


def _chunkable(options: Any, out_features: tuple, reduction: str, label_smoothing: float,
               target: Tensor, linear_bias: Tensor | None) -> bool:
    """Whether the chunked path takes the call (with options given; else torch's warning)."""
    if options is None:
        return False
    fits = (not out_features and reduction in {"mean", "sum", "none"}
            and label_smoothing == 0.0 and target.dtype is dtypes.int64)
    if not fits:
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warn_at_caller(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, "
            f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing=False, linear_bias.shape={bias_shape}.")
    return fits


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): linear_weight is
    (C, in_features) or (C, d_1, ..., d_K, in_features) for a K-dimensional loss."""
    num_classes, out_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if _chunkable(options, out_features, reduction, label_smoothing, target, linear_bias):
        return _chunked_loss(input, linear_weight, target, linear_bias, weight, reduction,
                             ignore_index, options)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, input.shape[-1]))
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = composite.linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return composite.cross_entropy(logits, target, weight=weight, reduction=reduction,
                                   ignore_index=ignore_index, label_smoothing=label_smoothing)


def _own(options: Any) -> LinearCrossEntropyOptions:
    """Options as this module's class (another class of the same fields, torch's say, is
    read field by field)."""
    if isinstance(options, LinearCrossEntropyOptions):
        return options
    acc_dtype = options.acc_dtype
    if acc_dtype is not None and not isinstance(acc_dtype, dtypes.dtype):
        acc_dtype = getattr(dtypes, str(acc_dtype).removeprefix("torch."))
    return LinearCrossEntropyOptions(options.allow_retain_graph, options.batch_chunk_size,
                                     options.chunking_method, options.acc_policy, acc_dtype)


def _chunked_loss(input: Tensor, linear_weight: Tensor, target: Tensor,
                  linear_bias: Tensor | None, weight: Tensor | None, reduction: str,
                  ignore_index: int, options: LinearCrossEntropyOptions) -> Tensor:
    batched = input.dim() == 2
    if not batched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    options = _own(options)._adjust(num_batches=input.shape[0], in_features=input.shape[-1],
                                    num_classes=linear_weight.shape[0], dtype=input.dtype,
                                    device=devices.CPU)
    if not grad_mode.is_grad_enabled():
        input, linear_weight = input.detach(), linear_weight.detach()
        linear_bias = None if linear_bias is None else linear_bias.detach()
    if reduction == "none":
        result = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default.apply(  # noqa: E501
            input, linear_weight, target, linear_bias, weight, ignore_index, options)
    else:
        result = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default.apply(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
            options)
    return result if batched else result.squeeze(0)
