"""Convolution layers (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d) and their
functional forms (conv1d, conv2d, conv_transpose1d, conv_transpose2d).

The functions take torch.nn.functional's signatures and reduce every call to the one spec
op `convolution` (ConvolutionBackward0 in the graph, as in PyTorch): an unbatched input is
given a batch dim of one and loses it again (UnsqueezeBackward0 / SqueezeBackward1 around
the convolution, as PyTorch records them), and padding='same' becomes numbers. The layers
hold the weight (out_channels, in_channels / groups, *kernel_size) and the bias, drawn as
PyTorch draws them, and call the functions. A padding_mode other than 'zeros' pads the
input with F.pad first (ReflectionPad2dBackward0 and the like in the graph) and convolves
without padding, as PyTorch does. The transposed layers keep their weight the other way
round, (in_channels, out_channels / groups, *kernel_size), and call the same op with
transposed=True; their forward can take the output size wanted instead of output_padding.

The functions live here rather than in runtime/nn/functional.py, which only re-exports
names: functional imports this module, so the layers cannot import functional back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from generated import ops
from runtime import composite, factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn import init
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(value: Any, count: int) -> tuple:
    """An int as `count` copies of itself; a sequence as a tuple (as torch's _pair)."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(value)
    return (value,) * count


def _same_padding(input: Tensor, weight: Tensor, stride: tuple, dilation: tuple,
                  ) -> tuple[list[int], list[bool]]:
    """padding='same' as numbers: per dim the total d * (k - 1), split evenly. When the
    total is odd, PyTorch pads one more on the right; here the padding is the larger half
    on both sides, and `trim` marks the dims whose first output must then be dropped."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    padding, trim = [], []
    for d, k in zip(dilation, weight.shape[2:], strict=False):
        total = d * (k - 1)
        padding.append(total - total // 2)
        trim.append(total % 2 == 1)
    if any(trim):
        warn_at_caller("Using padding='same' with even kernel lengths and odd dilation may "
                       "require a zero-padded copy of the input be created")
    return padding, trim


def _conv(name: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None,
          stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    """conv1d / conv2d: checks the input's rank, batches an unbatched input, resolves a
    padding string and calls the convolution op."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but "
            f"got input of size: {list(input.shape)}")
    stride, dilation = _ntuple(stride, dims), _ntuple(dilation, dims)
    trim = [False] * dims
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "valid":
            padding = (0,) * dims
        else:
            padding, trim = _same_padding(input, weight, stride, dilation)
    padding = _ntuple(padding, dims)
    unbatched = input.ndim == dims + 1
    if unbatched:
        input = ops.unsqueeze(input, 0)
    result = ops.convolution(input, weight, bias, stride, padding, dilation, False,
                             (0,) * dims, groups)
    if any(trim):
        result = result[(slice(None), slice(None))
                        + tuple(slice(1, None) if t else slice(None) for t in trim)]
    return ops.squeeze(result, 0) if unbatched else result


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-d convolution over (N, C, L) or (C, L) input, as torch.nn.functional.conv1d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv1d, (input, weight, bias, stride, padding, dilation, groups),
            {})
        if heard is not _modes.PASS:
            return heard
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-d convolution over (N, C, H, W) or (C, H, W) input, as torch.nn.functional.conv2d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv2d, (input, weight, bias, stride, padding, dilation, groups),
            {})
        if heard is not _modes.PASS:
            return heard
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-d convolution over (N, C, D, H, W) or (C, D, H, W) input, as
    torch.nn.functional.conv3d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv3d, (input, weight, bias, stride, padding, dilation, groups),
            {})
        if heard is not _modes.PASS:
            return heard
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None,
                    stride: Any, padding: Any, output_padding: Any, groups: int,
                    dilation: Any) -> Tensor:
    """conv_transpose1d / conv_transpose2d: batches an unbatched input and calls the
    convolution op with transposed=True."""
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but "
            f"got input of size: {list(input.shape)}")
    unbatched = input.ndim == dims + 1
    if unbatched:
        input = ops.unsqueeze(input, 0)
    result = ops.convolution(input, weight, bias, _ntuple(stride, dims),
                             _ntuple(padding, dims), _ntuple(dilation, dims), True,
                             _ntuple(output_padding, dims), groups)
    return ops.squeeze(result, 0) if unbatched else result


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-d transposed convolution ("deconvolution") over (N, C, L) or (C, L) input, as
    torch.nn.functional.conv_transpose1d (note groups comes before dilation)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv_transpose1d, (input, weight, bias, stride, padding,
            output_padding, groups, dilation), {})
        if heard is not _modes.PASS:
            return heard
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-d transposed convolution over (N, C, H, W) or (C, H, W) input, as
    torch.nn.functional.conv_transpose2d: the gradient of conv2d with respect to its input,
    as a layer (it upsamples by the stride)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv_transpose2d, (input, weight, bias, stride, padding,
            output_padding, groups, dilation), {})
        if heard is not _modes.PASS:
            return heard
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-d transposed convolution over (N, C, D, H, W) or (C, D, H, W) input, as
    torch.nn.functional.conv_transpose3d."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(conv_transpose3d, (input, weight, bias, stride, padding,
            output_padding, groups, dilation), {})
        if heard is not _modes.PASS:
            return heard
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


class _ConvNd(Module):
    """What Conv1d and Conv2d share: torch's attributes, checks, initialisation and repr."""

    _dims = 0
    _transposed = False
    _function = staticmethod(conv2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        dims = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, dims)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self._check_padding_mode(padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, dims)
        self.stride = _ntuple(stride, dims)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, dims)
        self.dilation = _ntuple(dilation, dims)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, dims)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._reversed_padding()
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(factories.empty(shape + self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(factories.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _check_padding_mode(self, padding_mode: str) -> None:
        """Every layer takes the four modes (the transposed ones refuse all but 'zeros')."""
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")

    def _reversed_padding(self) -> list[int]:
        """The padding as F.pad takes it (last dim first, left then right), as torch keeps it
        for the non-zero padding modes."""
        if isinstance(self.padding, str):
            if self.padding == "valid":
                return [0, 0] * self._dims
            result = []
            for d, k in reversed(list(zip(self.dilation, self.kernel_size, strict=True))):
                total = d * (k - 1)
                result += [total // 2, total - total // 2]
            return result
        return [p for p in reversed(self.padding) for _ in range(2)]

    def reset_parameters(self) -> None:
        """PyTorch's default: kaiming_uniform_(a=√5) on the weight, i.e.
        U(-1/√fan_in, 1/√fan_in) with fan_in = in_channels / groups * prod(kernel_size), and
        the bias from the same range."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode != "zeros":
            padded = composite.pad(input, self._reversed_padding_repeated_twice,
                                   mode=self.padding_mode)
            return type(self)._function(padded, self.weight, self.bias, self.stride,
                                        (0,) * self._dims, self.dilation, self.groups)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-d convolution layer: (N, in_channels, L) -> (N, out_channels, L_out)."""

    _dims = 1
    _function = staticmethod(conv1d)


class Conv2d(_ConvNd):
    """2-d convolution layer: (N, in_channels, H, W) -> (N, out_channels, H_out, W_out)."""

    _dims = 2
    _function = staticmethod(conv2d)


class Conv3d(_ConvNd):
    """3-d convolution layer: (N, in_channels, D, H, W) -> (N, out_channels, D_out, H_out,
    W_out)."""

    _dims = 3
    _function = staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: torch's argument order (output_padding
    after padding, dilation after bias), 'zeros' padding only, and a forward that turns a
    requested output size into output_padding."""

    _transposed = True
    _function = staticmethod(conv_transpose2d)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _check_padding_mode(self, padding_mode: str) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")

    def _output_padding(self, input: Tensor, output_size: Any) -> list[int]:
        """The output_padding that makes the output `output_size` (spatial dims, or all
        dims): every size from the smallest output up to stride - 1 more maps back to the
        same input size under the plain convolution, so any of them can be asked for."""
        dims = self._dims
        if output_size is None:
            return list(self.output_padding)
        leading = 2 if input.ndim == dims + 2 else 1
        output_size = list(output_size)
        if len(output_size) == leading + dims:
            output_size = output_size[leading:]
        if len(output_size) != dims:
            raise ValueError(
                f"ConvTranspose{dims}D: for {input.ndim}D input, output_size must have {dims} "
                f"or {leading + dims} elements (got {len(output_size)})")
        smallest = [(input.shape[d + leading] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(dims)]
        largest = [size + self.stride[d] - 1 for d, size in enumerate(smallest)]
        for size, low, high in zip(output_size, smallest, largest, strict=True):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{smallest} to {largest} (for an input of {input.shape[2:]})")
        return [size - low for size, low in zip(output_size, smallest, strict=True)]

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution layer: (N, in_channels, L) -> (N, out_channels, L_out),
    L_out = (L - 1) * stride - 2 * padding + dilation * (kernel_size - 1) + output_padding
    + 1."""

    _dims = 1
    _function = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution layer (upsampling, as DCGAN's generator uses it):
    (N, in_channels, H, W) -> (N, out_channels, H_out, W_out), each spatial size as
    ConvTranspose1d's."""

    _dims = 2
    _function = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution layer: (N, in_channels, D, H, W) -> (N, out_channels,
    D_out, H_out, W_out), each spatial size as ConvTranspose1d's."""

    _dims = 3
    _function = staticmethod(conv_transpose3d)
