"""torch.memory_format, its four values, and the layouts they ask for, on numpy arrays.

A gradgen tensor's strides are its numpy array's, so a memory format is a choice of strides
for a copy: `contiguous_format` row-major (C order), `channels_last` with the channels
fastest (N, H, W, C in memory for an N, C, H, W tensor; `channels_last_3d` likewise for 5-D
tensors), and `preserve_format` the source's own strides where they are dense and do not
overlap (else dense strides in the order of the source's), as torch's `empty_like` chooses
them. `clone`, `contiguous` and `to` (and `.float()` & co) take these.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class memory_format:  # noqa: N801 - torch's name
    """How a tensor's elements are laid out in memory (torch.contiguous_format & co)."""

    __slots__ = ("_name",)

    def __new__(cls, *args: Any, **kwargs: Any) -> memory_format:
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> memory_format:
        value = object.__new__(cls)
        value._name = name
        return value

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


contiguous_format = memory_format._make("contiguous_format")
preserve_format = memory_format._make("preserve_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")

# The dimensions of a channels-last layout, the fastest first: C, then W, H (D), N.
_CHANNELS_LAST = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """An array's strides in elements, as a tensor's `stride()`."""
    return tuple(step // array.itemsize for step in array.strides)


def check_rank(format_: Any, ndim: int) -> None:
    """torch's error for a channels-last format asked of a tensor of another rank."""
    if format_ in _CHANNELS_LAST and ndim != _CHANNELS_LAST[format_][0]:
        rank = _CHANNELS_LAST[format_][0]
        raise RuntimeError(f"required rank {rank} tensor to use {format_._name} format")


def _channels_last_strides(shape: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    strides = [0] * len(shape)
    step = 1
    for dim in order:
        strides[dim] = step
        step *= shape[dim]
    return tuple(strides)


def is_contiguous(array: np.ndarray, format_: Any) -> bool:
    """`tensor.is_contiguous(memory_format=format_)`: the elements lie in that format's
    order with no gaps (dimensions of size 1 may have any stride, as in torch)."""
    if format_ is contiguous_format or format_ is None:
        return bool(array.flags.c_contiguous)
    if format_ not in _CHANNELS_LAST or array.ndim != _CHANNELS_LAST[format_][0]:
        return False
    strides, step = element_strides(array), 1
    for dim in _CHANNELS_LAST[format_][1]:
        if array.shape[dim] != 1:
            if strides[dim] != step:
                return False
            step *= array.shape[dim]
    return True


def _is_dense(array: np.ndarray) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill a block of memory once, in
    some order of the dimensions."""
    strides = element_strides(array)
    if array.ndim == 1:
        return array.shape[0] < 2 or strides[0] == 1
    order = sorted(range(array.ndim), key=lambda d: (array.shape[d] < 2, strides[d]))
    step = 1
    for dim in order:
        if array.shape[dim] < 2:
            return True
        if strides[dim] != step:
            return False
        step *= array.shape[dim]
    return True


def _stride_order_swaps(shape: tuple, strides: tuple, first: int, second: int) -> int:
    """torch's comparison of two dimensions for infer_dense_strides: 1 if `first` is the
    faster one (so the two swap), -1 if it is the slower, 0 if a stride of 0 or a tie
    leaves their order."""
    if strides[first] == 0 or strides[second] == 0:
        return 0
    if strides[first] != strides[second]:
        return -1 if strides[first] < strides[second] else 1
    return 1 if shape[first] > shape[second] else 0


def _dense_strides_in_order(array: np.ndarray) -> tuple[int, ...]:
    """torch's infer_dense_strides: the strides of a dense tensor whose dimensions lie in
    memory in the order of `array`'s strides (the fastest last)."""
    shape, strides = array.shape, element_strides(array)
    order = list(range(array.ndim - 1, -1, -1))  # the fastest dimension first
    for i in range(1, array.ndim):  # an insertion sort, as torch's
        moving = i
        for before in range(i - 1, -1, -1):
            swap = _stride_order_swaps(shape, strides, order[before], order[moving])
            if swap > 0:
                order[before], order[moving] = order[moving], order[before]
                moving = before
            elif swap < 0:
                break
    result, step = [0] * array.ndim, 1
    for dim in order:
        result[dim] = step
        step *= max(shape[dim], 1)
    return tuple(result)


def strides_for(format_: Any, source: np.ndarray) -> tuple[int, ...] | None:
    """The strides (in elements) of a copy of `source` in `format_`, None for row-major."""
    if format_ is preserve_format:
        return element_strides(source) if _is_dense(source) else \
            _dense_strides_in_order(source)
    if format_ in _CHANNELS_LAST:
        return _channels_last_strides(source.shape, _CHANNELS_LAST[format_][1])
    return None


def laid_out(array: np.ndarray, strides: tuple[int, ...] | None) -> np.ndarray:
    """`array`'s values in fresh memory with these strides (row-major for None)."""
    if strides is None:
        return array if array.flags.c_contiguous else np.ascontiguousarray(array)
    if strides == element_strides(array) and array.flags.owndata:
        return array
    extent = 1 + sum((size - 1) * step for size, step in zip(array.shape, strides,
                                                              strict=True) if size)
    memory = np.empty((extent if array.size else 0) * array.itemsize, np.uint8)
    result = np.ndarray(array.shape, array.dtype, buffer=memory,
                        strides=tuple(step * array.itemsize for step in strides))
    result[...] = array
    return result
