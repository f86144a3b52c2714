"""convert_conv2d_weight_memory_format and convert_conv3d_weight_memory_format, as
torch.nn.utils.memory_format. A memory format orders a tensor's elements in memory (channels
last suits some CPU kernels); gradgen keeps every tensor in one order, so converting changes
what torch's does observably: each convolution weight gets a fresh copy of its values, the
same Parameter object keeps them, the module is returned, and a format of the wrong rank is
refused with torch's error. The strides torch would report are not modelled."""

from __future__ import annotations

from typing import Any

from runtime.grad_mode import no_grad
from runtime.nn.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

# torch's memory formats by their printed names: the rank each requires, if any.
_RANKS = {"torch.channels_last": (4, "channels_last"),
          "torch.channels_last_3d": (5, "channels_last_3d")}


def _check(weight: Any, memory_format: Any) -> None:
    name = str(memory_format)
    if name == "torch.preserve_format":
        raise RuntimeError("Unsupported memory formatPreserve")
    if name in _RANKS and weight.dim() != _RANKS[name][0]:
        rank, short = _RANKS[name]
        raise RuntimeError(f"required rank {rank} tensor to use {short} format")


def _convert(module: Any, memory_format: Any, kinds: tuple) -> Any:
    if isinstance(module, kinds):
        _check(module.weight, memory_format)
        with no_grad():
            module.weight.data = module.weight.detach().clone()
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module: Any, memory_format: Any) -> Any:
    """Give the weights of every Conv2d and ConvTranspose2d in `module` the memory format
    (see the module's docstring); returns `module`."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Any, memory_format: Any) -> Any:
    """The same for every Conv3d and ConvTranspose3d; returns `module`."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
