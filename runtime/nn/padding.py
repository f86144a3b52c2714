"""Padding layers: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad in
1, 2 and 3 dimensions, each a call of F.pad with its mode.

`padding` is kept as a tuple of 2, 4 or 6 ints (an int repeated), (left, right) for the
last dimension first, as torch keeps it; its repr shows that tuple.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runtime._tensor import Tensor
from runtime.composite import pad
from runtime.nn.module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]


def _amounts(padding: Any, dims: int) -> tuple:
    """An int for every side, or the sides as given."""
    if isinstance(padding, Iterable):
        return tuple(padding)
    return (padding,) * (2 * dims)


class _PadNd(Module):
    """A padding layer over the last `_dims` dimensions, in F.pad's `_mode`."""

    _mode = "constant"
    _dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dimension with a constant."""
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dimensions with a constant."""
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dimensions with a constant."""
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dimension with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dimensions with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dimensions with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dimension with its mirror image (the edge not repeated)."""
    _mode, _dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pad the last two dimensions with their mirror image."""
    _mode, _dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pad the last three dimensions with their mirror image."""
    _mode, _dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pad the last dimension by repeating its edge values."""
    _mode, _dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pad the last two dimensions by repeating their edge values."""
    _mode, _dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pad the last three dimensions by repeating their edge values."""
    _mode, _dims = "replicate", 3


class _CircularPadNd(_PadNd):
    """Circular padding checks the input's dimensions itself (a ValueError)."""

    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got "
                             f"{input.dim()}D input)")
        return pad(input, self.padding, self._mode)


class CircularPad1d(_CircularPadNd):
    """Pad the last dimension by wrapping around."""
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dimensions by wrapping around."""
    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dimensions by wrapping around."""
    _dims = 3
