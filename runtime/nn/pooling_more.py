"""More pooling, and sliding blocks: MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d, LPPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d, Fold and
Unfold, with their functional forms and the F.*_with_indices names.

Each function checks its arguments as torch's Python does, then calls the op of torch's
spec that torch calls (max_pool3d_with_indices, avg_pool3d, _adaptive_avg_pool3d,
adaptive_max_pool3d, max_unpool2d / 3d, fractional_max_pool2d / 3d, im2col, col2im), so
the graph holds torch's nodes (MaxPool3DWithIndicesBackward0, Im2ColBackward0, ...);
LPPool is a composite of average pooling, as in torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime import random_ops
from runtime._tensor import Tensor
from runtime.nn.module import Module
from runtime.nn.pooling import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

__all__ = [
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "Fold", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "LPPool1d", "LPPool2d",
    "LPPool3d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Unfold",
    "adaptive_avg_pool3d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "avg_pool3d", "fold", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d",
    "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold",
]


def _pair(value: Any) -> tuple:
    """torch's _pair: a sequence as it is, a number twice."""
    return tuple(value) if isinstance(value, Sequence) else (value, value)


def _tuple(value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, Sequence):
        return tuple(int(v) for v in value) if len(value) != 1 else (int(value[0]),) * n
    return (int(value),) * n


# -- sizes and checks (the ops of torch's spec compute; runtime/kernels.py) -------------------

def _pool_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int,
                      ceil_mode: bool) -> int:
    """torch's pooling_output_shape: a last window that starts in the padding is dropped."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _batched(input: Tensor, dims: int, message: str) -> tuple[Tensor, bool]:
    """The input with a batch dimension, and whether it came with one."""
    if input.ndim not in (dims + 1, dims + 2) or 0 in input.shape[-dims - 1:]:
        raise RuntimeError(message.format(shape=list(input.shape)))
    batched = input.ndim == dims + 2
    return (input if batched else input.unsqueeze(0)), batched


# -- max and average pooling in 3-d -----------------------------------------------------------

def _check_pool_arguments(kernel: tuple, stride: tuple, padding: tuple,
                          dilation: tuple) -> None:
    for k, p, d in zip(kernel, padding, dilation, strict=True):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if min(kernel) <= 0 or min(stride) <= 0 or min(dilation) <= 0:
        raise RuntimeError("kernel_size, stride and dilation should be greater than zero")


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """The maximum of each 3-d window and where it is (into D * H * W)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool3d_with_indices, (input, kernel_size, stride, padding,
            dilation, ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    x, batched = _batched(input, 3, "non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel = _tuple(kernel_size, 3)
    strides = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 3)
    pads, dilations = _tuple(padding, 3), _tuple(dilation, 3)
    _check_pool_arguments(kernel, strides, pads, dilations)
    spatial = x.shape[2:]
    outs = [_pool_output_size(*args, ceil_mode) for args in
            zip(spatial, kernel, strides, pads, dilations, strict=True)]
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(str(s) for s in x.shape[1:])}). "
                           f"Calculated output size: ({x.shape[1]}x{'x'.join(map(str, outs))})"
                           ". Output size is too small")
    # torch's op of the same name (MaxPool3DWithIndicesBackward0), on the input as given
    return ops.max_pool3d_with_indices(input, kernel, strides, pads, dilations, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool3d, (input, kernel_size, stride, padding, dilation,
            ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    values, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    return (values, indices) if return_indices else values


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each 3-d window of (N, C, D, H, W) or (C, D, H, W) input."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(avg_pool3d, (input, kernel_size, stride, padding, ceil_mode,
            count_include_pad, divisor_override), {})
        if heard is not _modes.PASS:
            return heard
    x, batched = _batched(input, 3, "non-empty 4D or 5D (batch mode) tensor expected for input")
    kernel = _tuple(kernel_size, 3)
    strides = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 3)
    pads = _tuple(padding, 3)
    _check_pool_arguments(kernel, strides, pads, (1, 1, 1))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    spatial = x.shape[2:]
    outs = [_pool_output_size(size, k, s, p, 1, ceil_mode)
            for size, k, s, p in zip(spatial, kernel, strides, pads, strict=True)]
    if min(outs) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(str(s) for s in x.shape[1:])}). "
                           f"Calculated output size: ({x.shape[1]}x{'x'.join(map(str, outs))})"
                           ". Output size is too small")
    # torch's op of the same name (AvgPool3DBackward0), on the input as given
    return ops.avg_pool3d(input, kernel, strides, pads, ceil_mode, count_include_pad,
                          divisor_override)


# -- adaptive pooling in 3-d ------------------------------------------------------------------

def _adaptive_sizes(input: Tensor, output_size: Any, dims: int, message: str) -> list[int]:
    if not isinstance(output_size, Sequence):
        return [int(output_size)] * dims
    sizes = list(output_size)
    if input.ndim <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    if len(sizes) != dims:
        raise RuntimeError(message)
    return [input.shape[-dims + i] if size is None else int(size)
            for i, size in enumerate(sizes)]


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to a given size."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_avg_pool3d, (input, output_size), {})
        if heard is not _modes.PASS:
            return heard
    outs = _adaptive_sizes(input, output_size, 3, "adaptive_avg_pool3d: output_size must be 3")
    x, batched = _batched(input, 3, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                          "{shape}")
    if outs == [1, 1, 1]:  # torch takes the mean there (MeanBackward1)
        result = x.mean([-1, -2, -3], True)
        return result if batched else result.squeeze(0)
    return ops._adaptive_avg_pool3d(input, outs)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to a given size, with where
    each maximum is (into D * H * W)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool3d_with_indices, (input, output_size,
            return_indices), {})
        if heard is not _modes.PASS:
            return heard
    outs = _adaptive_sizes(input, output_size, 3, "adaptive_max_pool3d(): internal error: "
                           "output_size.size() must be 3")
    x, batched = _batched(input, 3, "adaptive_max_pool3d(): Expected 4D or 5D tensor, but "
                          "got: {shape}")
    del x, batched  # checked; torch's op takes the input as given
    return ops.adaptive_max_pool3d(input, outs)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool3d, (input, output_size, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    values, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (values, indices) if return_indices else values


# -- the *_with_indices names -----------------------------------------------------------------

def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool1d_with_indices, (input, kernel_size, stride, padding,
            dilation, ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool2d_with_indices, (input, kernel_size, stride, padding,
            dilation, ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool1d_with_indices, (input, output_size,
            return_indices), {})
        if heard is not _modes.PASS:
            return heard
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool2d_with_indices, (input, output_size,
            return_indices), {})
        if heard is not _modes.PASS:
            return heard
    return adaptive_max_pool2d(input, output_size, True)


# -- power-average pooling --------------------------------------------------------------------

def _lp_finish(pooled: Tensor, norm_type: float, window: int) -> Tensor:
    """(window * mean of x^p)^(1/p), with torch's sign(.) * relu(|.|) guard."""
    return (ops.sign(pooled) * ops.relu(ops.abs(pooled))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm of each window: (sum of x^p)^(1/p)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lp_pool1d, (input, norm_type, kernel_size, stride, ceil_mode), {})
        if heard is not _modes.PASS:
            return heard
    pooled = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(pooled, norm_type, kernel_size)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lp_pool2d, (input, norm_type, kernel_size, stride, ceil_mode), {})
        if heard is not _modes.PASS:
            return heard
    kernel = _tuple(kernel_size, 2)
    pooled = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(pooled, norm_type, math.prod(kernel))


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(lp_pool3d, (input, norm_type, kernel_size, stride, ceil_mode), {})
        if heard is not _modes.PASS:
            return heard
    kernel = _tuple(kernel_size, 3)
    pooled = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(pooled, norm_type, math.prod(kernel))


# -- unpooling --------------------------------------------------------------------------------

def _unpool_output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                        output_size: Any) -> list[int]:
    dims = len(kernel)
    default = [(input.shape[-dims + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(dims)]
    if output_size is None:
        return default
    if len(output_size) == dims + 2:
        output_size = output_size[2:]
    if len(output_size) != dims:
        raise ValueError(f"output_size should be a sequence containing {dims} or {dims + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(dims):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{low} and {high})")
    return output_size


def _max_unpool(input: Tensor, indices: Tensor, sizes: list[int], kernel: tuple,
                stride: tuple, padding: tuple) -> Tensor:
    """torch's unpooling op for the dims: max_unpool2d (1-d through it, on a trailing
    dim of one), or max_unpool3d."""
    if len(sizes) == 1:
        return ops.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1),
                                [sizes[0], 1]).squeeze(-1)
    if len(sizes) == 2:
        return ops.max_unpool2d(input, indices, sizes)
    return ops.max_unpool3d(input, indices, sizes, list(stride), list(padding))


def _unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
            output_size: Any, dims: int) -> Tensor:
    kernel = _tuple(kernel_size, dims)
    strides = kernel if stride is None else _tuple(stride, dims)
    pads = _tuple(padding, dims)
    sizes = _unpool_output_size(input, kernel, strides, pads, output_size)
    return _max_unpool(input, indices, [int(s) for s in sizes], kernel, strides, pads)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool1d: each maximum back where it was, zeros elsewhere."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_unpool1d, (input, indices, kernel_size, stride, padding,
            output_size), {})
        if heard is not _modes.PASS:
            return heard
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool2d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_unpool2d, (input, indices, kernel_size, stride, padding,
            output_size), {})
        if heard is not _modes.PASS:
            return heard
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool3d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_unpool3d, (input, indices, kernel_size, stride, padding,
            output_size), {})
        if heard is not _modes.PASS:
            return heard
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# -- sliding blocks ---------------------------------------------------------------------------


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding blocks of (N, C, H, W) or (C, H, W) input as columns: (N, C * kh * kw, L)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(unfold, (input, kernel_size, dilation, padding, stride), {})
        if heard is not _modes.PASS:
            return heard
    # torch's unfold is its im2col op (Im2ColBackward0), which makes every check.
    return ops.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding),
                      _pair(stride))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """The adjoint of unfold: columns (N, C * kh * kw, L) summed back into (N, C, H, W)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fold, (input, output_size, kernel_size, dilation, padding, stride),
            {})
        if heard is not _modes.PASS:
            return heard
    # torch's fold is its col2im op (Col2ImBackward0), which makes every check.
    return ops.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                      _pair(padding), _pair(stride))


# -- layers -----------------------------------------------------------------------------------

class MaxPool3d(Module):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W) input."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W) input."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to a given size."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) input to a given size."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _LPPoolNd(Module):
    """The p-norm of each window; norm_type p, kept with torch's attribute names."""

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) or (C, L) input."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride,
                         self.ceil_mode)


class _MaxUnpoolNd(Module):
    """kernel_size, stride (the kernel size by default) and padding, as tuples."""

    _dims = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._dims)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._dims)
        self.padding = _tuple(padding, self._dims)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return _unpool(input, indices, self.kernel_size, self.stride, self.padding,
                       output_size, self._dims)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d."""
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d."""
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d."""
    _dims = 3


class Fold(Module):
    """Columns of sliding blocks summed back into an image (F.fold)."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Sliding blocks of an image as columns (F.unfold)."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


# -- fractional max pooling -------------------------------------------------------------------


def _fractional_output_size(input: Tensor, output_size: Any, output_ratio: Any,
                            dims: int) -> tuple[int, ...]:
    """output_size, or the input's size times output_ratio (truncated), checked as torch's
    functional forms check them."""
    name = f"fractional_max_pool{dims}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if dims == 2 and not isinstance(output_ratio, Sequence):  # as torch's F. does
            raise TypeError(f"object of type '{type(output_ratio).__name__}' has no len()")
        if dims == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratios = (tuple(output_ratio) if isinstance(output_ratio, Sequence)
                  else (output_ratio,) * dims)
        output_size = [int(input.shape[-dims + d] * ratios[d]) for d in range(dims)]
    return _tuple(output_size, dims)


def _fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any,
                         output_ratio: Any, samples: Tensor | None,
                         dims: int) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{dims}d"
    outs = _fractional_output_size(input, output_size, output_ratio, dims)
    pools = _tuple(kernel_size, dims)
    batched = input.ndim == dims + 2
    x = input if batched else input.unsqueeze(0)
    if samples is None:
        samples = random_ops.rand(x.shape[0], x.shape[1], dims, dtype=input.dtype)
    _check_samples(samples, x, dims)
    names = ("height", "width") if dims == 2 else ("time", "height", "width")
    for d, (size, out, pool) in enumerate(zip(x.shape[2:], outs, pools, strict=True)):
        if out + pool - 1 > size:
            op = name if dims == 2 else f"{name}_out"
            raise RuntimeError(f"{op}(): pool {names[d]} {pool} too large relative to input "
                               f"{names[d]} {size}")
    del x, batched  # checked; torch's op takes the input as given
    return getattr(ops, name)(input, pools, outs, samples)


def _check_samples(samples: Tensor, x: Tensor, dims: int) -> None:
    """torch's checks of given _random_samples, in its order."""
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != dims:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {dims}; got "
                           f"{samples.shape[2]}.")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """Max pooling over windows whose starts are drawn at random (one rand per sample,
    channel and dimension, as torch draws them), to output_size or input size * ratio."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fractional_max_pool2d_with_indices, (input, kernel_size,
            output_size, output_ratio, return_indices, _random_samples), {})
        if heard is not _modes.PASS:
            return heard
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                _random_samples, 2)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fractional_max_pool2d, (input, kernel_size, output_size,
            output_ratio, return_indices, _random_samples), {})
        if heard is not _modes.PASS:
            return heard
    values, indices = fractional_max_pool2d_with_indices(input, kernel_size, output_size,
                                                         output_ratio, True, _random_samples)
    return (values, indices) if return_indices else values


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """fractional_max_pool2d_with_indices over three dimensions."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fractional_max_pool3d_with_indices, (input, kernel_size,
            output_size, output_ratio, return_indices, _random_samples), {})
        if heard is not _modes.PASS:
            return heard
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                _random_samples, 3)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fractional_max_pool3d, (input, kernel_size, output_size,
            output_ratio, return_indices, _random_samples), {})
        if heard is not _modes.PASS:
            return heard
    values, indices = fractional_max_pool3d_with_indices(input, kernel_size, output_size,
                                                         output_ratio, True, _random_samples)
    return (values, indices) if return_indices else values


class _FractionalMaxPoolNd(Module):
    """kernel_size, output_size or output_ratio (one of them), return_indices, and an
    optional fixed _random_samples buffer, as torch keeps them."""

    _dims = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        dims, title = self._dims, type(self).__name__
        self.kernel_size = _tuple(kernel_size, dims)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, dims) if output_size is not None else None
        self.output_ratio = (_float_tuple(output_ratio, dims) if output_ratio is not None
                             else None)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{title} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        function = fractional_max_pool2d if self._dims == 2 else fractional_max_pool3d
        return function(input, self.kernel_size, self.output_size, self.output_ratio,
                        self.return_indices, _random_samples=self._random_samples)


def _float_tuple(value: Any, n: int) -> tuple:
    return tuple(value) if isinstance(value, Sequence) else (value,) * n


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) or (C, H, W) input."""
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, D, H, W) or (C, D, H, W) input."""
    _dims = 3
