"""Pooling layers (MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d)
and their functional forms (max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d,
adaptive_max_pool1d/2d).

The 2-d functions call the spec ops max_pool2d_with_indices, avg_pool2d,
_adaptive_avg_pool2d and adaptive_max_pool2d; the 1-d ones are those over a height of one
(unsqueeze, the 2-d op, squeeze: PyTorch's graph shows SqueezeBackward1 on top for them
too). As in PyTorch,
adaptive average pooling to 1 x 1 is a mean over the last two dims.

The functions live here rather than in runtime/nn/functional.py, which only re-exports
names: functional imports this module, so the layers cannot import functional back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d",
    "avg_pool2d", "max_pool1d", "max_pool2d",
]


def _stride(stride: Any) -> Any:
    """torch.nn.functional's stride=None (the kernel size) as the ops' empty list."""
    return () if stride is None else stride


# -- functions --------------------------------------------------------------------------------

def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The maximum of each window; with return_indices also where it is (into H * W)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool2d, (input, kernel_size, stride, padding, dilation,
            ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    output, indices = ops.max_pool2d_with_indices(input, kernel_size, _stride(stride),
                                                  padding, dilation, ceil_mode)
    return (output, indices) if return_indices else output


def _one_int(value: Any, name: str, op: str) -> int:
    """A 1-d pooling argument given as an int or a sequence of one int."""
    if isinstance(value, Sequence):
        if len(value) != 1:
            raise RuntimeError(f"{op}() argument '{name}' should contain one int "
                               f"(got {len(value)})")
        value = value[0]
    return int(value)


def _max_pool1d_check(input: Tensor, kernel: Any, stride: Any, padding: Any, dilation: Any,
                      ceil_mode: bool) -> tuple[int, int, int, int]:
    """PyTorch's max_pool1d checks and messages, in its order (its 1-d kernel has its own)."""
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")
    values = []
    for name, value in (("kernel_size", kernel), ("stride", stride), ("padding", padding),
                        ("dilation", dilation)):
        if isinstance(value, Sequence):
            if len(value) > 1 or (not value and name != "stride"):
                raise RuntimeError(f"max_pool1d() {name} must be an int, list of ints or tuple "
                                   f"of ints of size 1 but got size {len(value)}")
            value = value[0] if value else None
        values.append(value)
    k, s, p, d = values
    s = k if s is None else s
    for name, value in (("kernel_size", k), ("stride", s), ("dilation", d)):
        if value < 1:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got "
                               f"{value}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    span = input.shape[-1] + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= input.shape[-1] + p:
        out -= 1
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    return k, s, p, d


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """max_pool2d over a height of one."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(max_pool1d, (input, kernel_size, stride, padding, dilation,
            ceil_mode, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    k, s, p, d = _max_pool1d_check(input, kernel_size, stride, padding, dilation, ceil_mode)
    output, indices = ops.max_pool2d_with_indices(ops.unsqueeze(input, -2), (1, k), (1, s),
                                                  (0, p), (1, d), ceil_mode)
    output = ops.squeeze(output, -2)
    return (output, ops.squeeze(indices, -2)) if return_indices else output


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window (see the avg_pool2d kernel for what it divides by)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(avg_pool2d, (input, kernel_size, stride, padding, ceil_mode,
            count_include_pad, divisor_override), {})
        if heard is not _modes.PASS:
            return heard
    return ops.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode,
                          count_include_pad, divisor_override)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """avg_pool2d over a height of one."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(avg_pool1d, (input, kernel_size, stride, padding, ceil_mode,
            count_include_pad), {})
        if heard is not _modes.PASS:
            return heard
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    k = _one_int(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or stride == () or stride == [] else _one_int(stride, "stride",
                                                                          "avg_pool1d")
    p = _one_int(padding, "padding", "avg_pool1d")
    output = ops.avg_pool2d(ops.unsqueeze(input, -2), (1, k), (1, s), (0, p), ceil_mode,
                            count_include_pad, None)
    return ops.squeeze(output, -2)


def _adaptive_sizes(input: Tensor, output_size: Any) -> list:
    """An adaptive pooling's output_size as a list: an int twice, a pair's None entries the
    input's size. A sequence needs an input with more dimensions than it has entries (a
    ValueError, from torch's Python layer, before the kernel's RuntimeError about 3D/4D)."""
    if not isinstance(output_size, Sequence):
        return [output_size, output_size]
    sizes = list(output_size)
    if input.ndim <= len(sizes):  # torch's Python wrapper checks this before its kernel
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    if len(sizes) == 2:
        sizes = [input.shape[-2 + i] if size is None else size for i, size in enumerate(sizes)]
    return sizes


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to `output_size` (an int, or a pair whose None entries keep the
    input's size): output cell i reads rows floor(i H / out) to ceil((i + 1) H / out)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_avg_pool2d, (input, output_size), {})
        if heard is not _modes.PASS:
            return heard
    sizes = _adaptive_sizes(input, output_size)
    if sizes == [1, 1]:  # PyTorch's shortcut, taken before any check of the input
        return ops.mean(input, [-1, -2], True)
    return ops._adaptive_avg_pool2d(input, sizes)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool2d over a height of one."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_avg_pool1d, (input, output_size), {})
        if heard is not _modes.PASS:
            return heard
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    size = _one_int(output_size, "output_size", "adaptive_avg_pool1d")
    return ops.squeeze(adaptive_avg_pool2d(ops.unsqueeze(input, -2), (1, size)), -2)


def adaptive_max_pool2d(input: Tensor, output_size: Any,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling to `output_size` over the windows adaptive_avg_pool2d averages; with
    return_indices also where each maximum is (into H * W)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool2d, (input, output_size, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    output, indices = ops.adaptive_max_pool2d(input, _adaptive_sizes(input, output_size))
    return (output, indices) if return_indices else output


def adaptive_max_pool1d(input: Tensor, output_size: Any,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """adaptive_max_pool2d over a height of one."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(adaptive_max_pool1d, (input, output_size, return_indices), {})
        if heard is not _modes.PASS:
            return heard
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    size = _one_int(output_size, "output_size", "adaptive_max_pool1d")
    output, indices = ops.adaptive_max_pool2d(ops.unsqueeze(input, -2), (1, size))
    output = ops.squeeze(output, -2)
    return (output, ops.squeeze(indices, -2)) if return_indices else output


# -- layers -----------------------------------------------------------------------------------

class _MaxPoolNd(Module):
    """What MaxPool1d and MaxPool2d share: the arguments kept as given (stride defaulting
    to the kernel size), as torch keeps them."""

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

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Max pooling over (N, C, L) or (C, L) input."""

    def forward(self, input: Tensor) -> Any:
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """Max pooling over (N, C, H, W) or (C, H, W) input."""

    def forward(self, input: Tensor) -> Any:
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """Average pooling over (N, C, L) or (C, L) input; keeps its sizes as 1-tuples."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(value: Any) -> tuple:
    return tuple(value) if isinstance(value, Sequence) else (value,)


class AvgPool2d(Module):
    """Average pooling over (N, C, H, W) or (C, H, W) input."""

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
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Average pooling of (N, C, L) or (C, L) input to a given length."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """Average pooling of (N, C, H, W) or (C, H, W) input to a given size."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(Module):
    """What AdaptiveMaxPool1d and AdaptiveMaxPool2d share."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) input to a given length."""

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) input to a given size."""

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)
