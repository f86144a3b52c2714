"""The float arithmetic of PyTorch's compiled CPU sampling kernels, on numpy arrays.

To give the same bits as torch, a transformation must round where torch's machine code
rounds. Its compiler fuses `a * b + c` into one fused multiply-add (one rounding), which
numpy has no ufunc for: `fma32` and `fma64` compute it exactly. Its float32 normal kernel
uses polynomial approximations of log, sin and cos evaluated in float32 (`avx2_log`,
`avx2_sincos`), and its float64 kernels call the C library's log, log1p, sin and cos, which
numpy's own vectorised versions do not always match to the last bit (`libm`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["fma32", "fma64", "avx2_log", "avx2_sincos", "libm"]

_F32 = np.float32
_F64 = np.float64


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s, e with s = a + b rounded and s + e = a + b exactly (Knuth's TwoSum)."""
    s = a + b
    b_virtual = s - a
    e = (a - (s - b_virtual)) + (b - b_virtual)
    return s, e


_BELOW_FLOAT32 = np.uint64(0x1FFFFFFF)  # the float64 significand bits float32 drops
_HALF_FLOAT32_STEP = np.uint64(0x10000000)  # ... when they are exactly half a float32 step


def _float64(x: np.ndarray | float) -> np.ndarray | np.float64:
    return np.asarray(x, _F64) if isinstance(x, np.ndarray) else _F64(x)


def fma32(a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """a * b + c on float32 values (or float32 values held in float64), rounded once to
    float32, as a fused multiply-add.

    The float64 product of two float32 values is exact, so only the float64 sum rounds;
    rounding it again to float32 is wrong only when the sum was inexact and landed exactly
    halfway between two float32 values. Those sums are moved one float64 step toward the
    exact value first.
    """
    a, b, c = _float64(a), _float64(b), _float64(c)
    total = a * b
    total += c
    halfway = (total.view(np.uint64) & _BELOW_FLOAT32) == _HALF_FLOAT32_STEP
    if halfway.any():
        s, e = _two_sum(np.broadcast_to(a * b, total.shape)[halfway],
                        np.broadcast_to(c, total.shape)[halfway])
        toward = np.where(e > 0, np.inf, np.where(e < 0, -np.inf, s))
        total[halfway] = np.nextafter(s, toward)
    return total.astype(_F32)


_SPLITTER = _F64(2.0**27 + 1)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hi + lo = a exactly, each with at most 26 significant bits (Veltkamp)."""
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def _round_to_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to the neighbour with an odd last bit when inexact (round-to-odd)."""
    s, e = _two_sum(a, b)
    bits = s.view(np.int64)
    even_and_inexact = (e != 0) & ((bits & 1) == 0)
    if even_and_inexact.any():
        toward = np.where((e > 0) == (s > 0), 1, -1)
        s = np.where(even_and_inexact, (bits + toward).view(_F64), s)
    return s


def fma64(a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """a * b + c on float64 values, rounded once, as a fused multiply-add.

    Boldo and Melquiond's emulation: the product split exactly into two doubles (Dekker),
    the three-term sum gathered exactly with TwoSum, its tail rounded to odd so that the
    final rounding to nearest is the one a hardware FMA makes.
    """
    a, b, c = (np.asarray(x, _F64) for x in (a, b, c))
    high = a * b
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    low = ((a_hi * b_hi - high) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    t_high, t_low = _two_sum(c, low)
    v_high, v_low = _two_sum(high, t_high)
    return v_high + _round_to_odd_sum(t_low, v_low)


# Cephes's single-precision log and sin/cos, as PyTorch's AVX2 normal kernel evaluates
# them (its avx_mathfun header): the same constants, operations and fused multiply-adds.
_LOG_POLYNOMIAL = [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                   1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                   3.3333331174e-1]
_LOG_Q1 = _F32(-2.12194440e-4)
_LOG_Q2 = _F32(0.693359375)
_SQRT_HALF = _F32(0.707106781186547524)
_HALF_BITS = np.array(0.5, _F32).view(np.int32)


def avx2_log(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal float32 values, bit for bit as torch's AVX2 kernel."""
    bits = x.view(np.int32)
    exponent = ((bits >> 23) - 0x7F).astype(_F32) + _F32(1)
    mantissa = ((bits & ~0x7F800000) | _HALF_BITS).view(_F32)  # in [0.5, 1)
    below = mantissa < _SQRT_HALF
    exponent = exponent - below.astype(_F32)
    m = (mantissa - _F32(1)) + np.where(below, mantissa, _F32(0))
    z = m * m
    m_wide = m.astype(_F64)  # converted once for the eight fused steps below
    y = np.full_like(m, _F32(_LOG_POLYNOMIAL[0]))
    for coefficient in _LOG_POLYNOMIAL[1:]:
        y = fma32(y, m_wide, _F32(coefficient))
    y = y * m
    y = fma32(y, z, exponent * _LOG_Q1)
    y = y - z * _F32(0.5)
    return (m + y) + exponent * _LOG_Q2


_FOUR_OVER_PI = _F32(1.27323954473516)
_PI_PARTS = [_F32(-0.78515625), _F32(-2.4187564849853515625e-4), _F32(-3.77489497744594108e-8)]
_COS_POLYNOMIAL = [_F32(2.443315711809948e-5), _F32(-1.388731625493765e-3),
                   _F32(4.166664568298827e-2)]
_SIN_POLYNOMIAL = [_F32(-1.9515295891e-4), _F32(8.3321608736e-3), _F32(-1.6666654611e-1)]


def avx2_sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sin x, cos x) of non-negative float32 values, bit for bit as torch's AVX2 kernel."""
    octant = (x * _FOUR_OVER_PI).astype(np.int32)
    octant = (octant + 1) & ~1
    y = octant.astype(_F32)
    # x - octant·π/4 in three steps; the first two products are exact in float32, so
    # fusing them changes nothing.
    x = x + y * _PI_PARTS[0]
    x = x + y * _PI_PARTS[1]
    x = fma32(y, _PI_PARTS[2], x)
    z = x * x
    z_wide = z.astype(_F64)  # converted once for the fused steps below
    cos_poly = fma32(_COS_POLYNOMIAL[0], z_wide, _COS_POLYNOMIAL[1])
    cos_poly = fma32(cos_poly, z_wide, _COS_POLYNOMIAL[2]) * z
    cos_poly = fma32(cos_poly, z_wide, -(z * _F32(0.5))) + _F32(1)
    sin_poly = fma32(_SIN_POLYNOMIAL[0], z_wide, _SIN_POLYNOMIAL[1])
    sin_poly = fma32(sin_poly, z_wide, _SIN_POLYNOMIAL[2]) * z
    sin_poly = fma32(sin_poly, x, x)
    swap = (octant & 2) != 0
    sin = np.where(swap, cos_poly, sin_poly)
    cos = np.where(swap, sin_poly, cos_poly)
    # The signs, as the kernel sets them: bit 2 of the octant moved to the sign bit.
    sin_sign = ((octant & 4) << 29).view(np.uint32)
    cos_sign = ((~(octant - 2) & 4) << 29).view(np.uint32)
    return ((sin.view(np.uint32) ^ sin_sign).view(_F32),
            (cos.view(np.uint32) ^ cos_sign).view(_F32))


def libm(function: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    """`function` (one of `math`'s, which call the C library) on each float64 of `x`.

    It runs in C, one call per element: slower than a ufunc, but the C library's own
    rounding, which torch's kernels get and numpy's vectorised log does not always give.
    """
    flat = np.fromiter(map(function, x.ravel().tolist()), _F64, count=x.size)
    return flat.reshape(x.shape)
