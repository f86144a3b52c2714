"""Pixel and channel shuffles: F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle and the
layers PixelShuffle, PixelUnshuffle, ChannelShuffle, each calling its spec op
(PixelShuffleBackward0, PixelUnshuffleBackward0, ChannelShuffleBackward0 in the graph);
F.native_channel_shuffle (torch.native_channel_shuffle), the same values without a
derivative."""

from __future__ import annotations

from generated import ops
from generated.ops import channel_shuffle, pixel_shuffle, pixel_unshuffle
from runtime import grad_mode
from runtime._tensor import Tensor
from runtime.nn.module import Module
from runtime.node import gradient_edge
from runtime.view_copies import _NotImplemented

__all__ = ["ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "channel_shuffle",
           "native_channel_shuffle", "pixel_shuffle", "pixel_unshuffle"]


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """channel_shuffle without a derivative: torch's node for it refuses a backward."""
    with grad_mode.no_grad():
        result = ops.channel_shuffle(input, groups)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = _NotImplemented("native_channel_shuffle", (gradient_edge(input),))
        node._input_metadata = ((result._data.shape, result._data.dtype),)
        result.grad_fn = node
    return result


class PixelShuffle(Module):
    """(*, C r², H, W) -> (*, C, H r, W r) (sub-pixel convolution's upsampling)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return ops.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r², H, W): PixelShuffle undone."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return ops.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """(N, g C', *) -> (N, C' g, *): the channels of `groups` groups interleaved."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return ops.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
