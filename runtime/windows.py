"""Window functions for signal processing (torch.hann_window & co): factories of a 1-D float
tensor, periodic by default (the first `window_length` points of a window one longer),
computed in the requested dtype in torch's order of operations."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime import dtypes, factories
from runtime._tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _dtype(name: str, dtype: Any) -> Any:
    dtype = dtype or dtypes.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{_CPP.get(dtype.name, dtype.name)}, device=cpu, layout=Strided "
                           "(default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    return dtype


_CPP = {"int64": "long int", "int32": "int", "bool": "bool", "uint8": "unsigned char"}


def _window(name: str, window_length: int, periodic: bool, dtype: Any, requires_grad: bool,
            shape: Any) -> Tensor:
    """The window `shape(points, length)` gives, in dtype; the trivial lengths as torch."""
    dtype = _dtype(name, dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    kind = dtype.numpy.type
    if window_length <= 1:
        values = np.ones(window_length, dtype=kind)
    else:
        length = window_length + 1 if periodic else window_length
        values = shape(np.arange(length, dtype=kind), length, kind)[:window_length]
    return factories.tensor(values, dtype=dtype, requires_grad=requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2πn / (N - 1))."""
    def shape(n: np.ndarray, length: int, kind: type) -> np.ndarray:
        return np.cos(n * kind(math.pi * 2.0 / (length - 1))) * kind(-beta) + kind(alpha)
    return _window("hamming_window", window_length, periodic, dtype, requires_grad, shape)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hamming window with alpha = beta = 0.5."""
    def shape(n: np.ndarray, length: int, kind: type) -> np.ndarray:
        return np.cos(n * kind(math.pi * 2.0 / (length - 1))) * kind(-0.5) + kind(0.5)
    return _window("hann_window", window_length, periodic, dtype, requires_grad, shape)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The triangle: up from 0 to 1 at the middle, then down."""
    def shape(n: np.ndarray, length: int, kind: type) -> np.ndarray:
        window = n * kind(2.0 / (length - 1))
        half = ((length - 1) >> 1) + 1
        window[half:] = window[half:] * kind(-1) + kind(2)
        return window
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad, shape)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """0.42 - 0.5 cos(2πn / (N - 1)) + 0.08 cos(4πn / (N - 1))."""
    def shape(n: np.ndarray, length: int, kind: type) -> np.ndarray:
        angle = n * kind(math.pi / (length - 1))
        return (np.cos(angle * kind(4)) * kind(0.08) - np.cos(angle * kind(2)) * kind(0.5)
                + kind(0.42))
    return _window("blackman_window", window_length, periodic, dtype, requires_grad, shape)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """I0(β √(1 - ((n - a)/a)²)) / I0(β), a = (N - 1) / 2 (I0: the modified Bessel function)."""
    def shape(n: np.ndarray, length: int, kind: type) -> np.ndarray:
        middle = kind((length - 1) / 2.0)
        inside = np.sqrt(np.abs(kind(1) - ((n - middle) / middle) ** kind(2)))
        return (np.i0(kind(beta) * inside) / np.i0(kind(beta))).astype(kind)
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, shape)
