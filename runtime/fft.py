"""torch.fft, its real part: the sample frequencies (fftfreq, rfftfreq) and the shifts that
put the zero frequency in the middle (fftshift, ifftshift).

The transforms themselves (fft, ifft, rfft, irfft, hfft and their 2-d and n-d forms) give or
take complex tensors, and gradgen has no complex dtypes yet: they are not in gradgen, and
asking for one says so.
"""

from __future__ import annotations

from typing import Any

from runtime import dtypes, factories
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute

__all__ = ["fftfreq", "fftshift", "ifftshift", "rfftfreq"]


def _frequencies(name: str, count: int, n: int, d: float, out: Any, dtype: Any,
                 requires_grad: bool, **options: Any) -> Any:
    """arange(count) (its upper half made negative for fftfreq), then times 1 / (n d) in
    the result's dtype, as torch computes it."""
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if out is not None:
        return _out.call(name, _frequencies, (name, count, n, d, None, dtype, False),
                         options, out)
    steps = factories.arange(count, dtype=dtype if dtype is not None
                             else dtypes.get_default_dtype(), **options)
    if name == "fftfreq" and n > 0:
        steps[(n + 1) // 2:] = factories.arange(-(n // 2), 0, dtype=steps.dtype)
    scale = 1.0 / (n * d) if n * d != 0 else float("inf")
    return (steps * scale).detach().requires_grad_(requires_grad)


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None,
            requires_grad: bool = False, **options: Any) -> Any:
    """The frequencies of an n-point FFT with sample spacing d: [0, 1, ..., -2, -1] / (n d)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _frequencies("fftfreq", n, n, d, out, dtype, requires_grad, **options)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None,
             requires_grad: bool = False, **options: Any) -> Any:
    """The non-negative frequencies of an n-point real FFT: [0, 1, ..., n // 2] / (n d)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n // 2 + 1}: "
                           f"[{n // 2 + 1}]")
    return _frequencies("rfftfreq", n // 2 + 1, n, d, out, dtype, requires_grad, **options)


def _shift(input: Any, dim: Any, inverse: bool) -> Any:
    if not isinstance(input, Tensor):
        name = "fft_ifftshift" if inverse else "fft_fftshift"
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) \
        else list(dim)
    sizes = [input.shape[d] if -input.ndim <= d < input.ndim else 0 for d in dims]
    shifts = [(size + 1) // 2 if inverse else size // 2 for size in sizes]
    return input.roll(shifts, dims)


def fftshift(input: Any, dim: Any = None) -> Any:
    """Rolls each of `dim` (every dim by default) by half its size: the zero frequency of an
    fft's output to the middle (RollBackward0)."""
    return _shift(input, dim, False)


def ifftshift(input: Any, dim: Any = None) -> Any:
    """fftshift undone: rolls by half the size, rounded up, backwards."""
    return _shift(input, dim, True)


def __getattr__(name: str) -> Any:
    if name == "Tensor":  # torch.fft re-exports torch.Tensor
        return Tensor
    raise missing_attribute(__name__, name)
