"""PyTorch's CPU sampling kernels on numpy arrays: how each distribution turns a generator's
32- and 64-bit words into numbers, in torch's order of draws and with its rounding.

`generator` is a runtime.random.Generator (any object with `draw32`, `draw64` and the
`next_double_normal_sample` cache). Every sampler returns a new flat array of `count`
values in the order torch's kernel writes them, a tensor's memory order; `place` puts them
there. torch 2.13's CPU kernels are the reference: where a kernel depends on the CPU,
the comment says which variant this is.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from runtime.cpu_math import avx2_log, avx2_sincos, fma32, fma64, libm

__all__ = [
    "memory_order", "place", "uniform", "normal", "bernoulli_scalar", "bernoulli_tensor",
    "exponential", "random_from_to", "random_full_range", "random_default", "randperm",
    "multinomial", "cauchy", "log_normal", "geometric",
]

_F32 = np.float32
_F64 = np.float64
_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_TWO_PI = 2.0 * math.pi
_CHUNK = 1 << 16  # elements per pass of the float32 normal kernel: temporaries stay in cache


def memory_order(array: np.ndarray) -> list[int]:
    """The axes of `array` from the slowest to the fastest in memory: the order in which
    torch's kernels visit a tensor's elements."""
    return sorted(range(array.ndim), key=lambda axis: -abs(array.strides[axis]))


def place(values: np.ndarray, layout: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A C-ordered array of `layout`'s shape holding `values` where torch writes them into
    `layout`: the i-th value at the i-th element of `layout`'s memory."""
    result = np.empty(layout.shape, dtype)
    view = result.transpose(memory_order(layout))
    view[...] = values.reshape(view.shape)
    return result


# -- uniform ------------------------------------------------------------------------------------

def _unit_float32(generator: Any, count: int) -> np.ndarray:
    """[0, 1) float32: the low 24 bits of a 32-bit word, times 2^-24."""
    return (generator.draw32(count) & _MASK24).astype(_F32) * _F32(2.0**-24)


def _unit_float64(generator: Any, count: int) -> np.ndarray:
    """[0, 1) float64: the low 53 bits of a 64-bit word, times 2^-53."""
    return (generator.draw64(count) & _MASK53).astype(_F64) * 2.0**-53


def uniform(generator: Any, count: int, dtype: np.dtype, low: float = 0.0,
            high: float = 1.0) -> np.ndarray:
    """U(low, high): x * (high - low) + low, fused, with the bounds in `dtype` (uniform_).
    float16 and bfloat16 take float32's values, rounded; one rounded up to `high` is `low`."""
    if np.dtype(dtype).itemsize == 2:  # float16, bfloat16
        values = _round(uniform(generator, count, np.dtype(_F32), low, high), dtype)
        low, high = (_round(np.array([bound], _F32), dtype) for bound in (low, high))
        return np.where(values == high, low, values)
    if dtype == _F32:
        x = _unit_float32(generator, count)
        low, high = _F32(low), _F32(high)
        return x if (low, high) == (0, 1) else fma32(x, high - low, low)
    x = _unit_float64(generator, count)
    return x if (low, high) == (0, 1) else fma64(x, high - low, low)


# -- normal -------------------------------------------------------------------------------------

def normal(generator: Any, count: int, dtype: np.dtype, mean: float = 0.0, std: float = 1.0,
           contiguous: bool = True) -> np.ndarray:
    """N(mean, std²) as torch's normal_ kernel fills a tensor of `count` elements.

    A contiguous tensor of 16 or more elements is filled with uniforms, then transformed
    16 at a time by Box-Muller (the last 16 from fresh uniforms when `count` is not a
    multiple of 16); anything else draws one Box-Muller pair per two elements, keeping the
    pair's second value in the generator for the next call.
    """
    reduced = np.dtype(dtype).itemsize == 2  # float16, bfloat16
    if contiguous and count >= 16:
        if dtype == _F32:
            return _fill_float32(generator, count, _F32(mean), _F32(std))
        if reduced:
            return _fill_reduced(generator, count, np.dtype(dtype), mean, std)
        return _fill_float64(generator, count, mean, std)
    values = _serial_normal(generator, count, mean, std)
    return _round(values.astype(_F32), dtype) if reduced else values.astype(dtype)


def _round(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 values rounded to `dtype` (to nearest, ties to even)."""
    return np.asarray(values, _F32).astype(dtype)


def _fill_reduced(generator: Any, count: int, dtype: np.dtype, mean: float,
                  std: float) -> np.ndarray:
    """torch's fill for float16 and bfloat16: each block of 16 drawn as float32 uniforms and
    transformed as float32's (its AVX2 Box-Muller), then rounded to `dtype`; when `count`
    is not a multiple of 16, a last block of 16 fresh uniforms gives the last 16 values."""
    whole = count - count % 16
    uniforms = _unit_float32(generator, whole + (16 if count % 16 else 0))
    normals = _box_muller_float32(uniforms, _F32(mean), _F32(std))
    if count % 16:
        normals = np.concatenate([normals[:count - 16], normals[whole:]])
    return _round(normals, dtype)


def _fill_float32(generator: Any, count: int, mean: np.float32, std: np.float32) -> np.ndarray:
    """torch's AVX2 float32 fill (which CPUs with AVX2 or AVX512 run)."""
    values = _unit_float32(generator, count)
    whole = count - count % 16
    for start in range(0, whole, _CHUNK):
        stop = min(start + _CHUNK, whole)
        values[start:stop] = _box_muller_float32(values[start:stop], mean, std)
    if count % 16:
        values[count - 16:] = _box_muller_float32(_unit_float32(generator, 16), mean, std)
    return values


def _box_muller_float32(uniforms: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """Each block of 16 uniforms: the first 8 give the radii, the last 8 the angles."""
    blocks = uniforms.reshape(-1, 16)
    radius = np.sqrt(_F32(-2) * avx2_log(_F32(1) - blocks[:, :8]))
    sin, cos = avx2_sincos(_F32(_TWO_PI) * blocks[:, 8:])
    result = np.concatenate([radius * cos, radius * sin], axis=1)
    if (mean, std) != (0, 1):
        result = fma32(result, std, mean)
    return result.reshape(-1)


def _fill_float64(generator: Any, count: int, mean: float, std: float) -> np.ndarray:
    """torch's scalar fill, in float64 with the C library's log, cos and sin."""
    values = _unit_float64(generator, count)
    whole = count - count % 16
    values[:whole] = _box_muller_float64(values[:whole], mean, std)
    if count % 16:
        values[count - 16:] = _box_muller_float64(_unit_float64(generator, 16), mean, std)
    return values


def _box_muller_float64(uniforms: np.ndarray, mean: float, std: float) -> np.ndarray:
    """As _box_muller_float32, in float64: radii from the first 8 of each 16, angles from
    the last 8."""
    blocks = uniforms.reshape(-1, 16)
    radius = np.sqrt(-2.0 * libm(math.log, 1.0 - blocks[:, :8]))
    theta = _TWO_PI * blocks[:, 8:]
    result = np.concatenate([radius * libm(math.cos, theta), radius * libm(math.sin, theta)],
                            axis=1)
    if (mean, std) != (0, 1):
        result = fma64(result, std, mean)
    return result.reshape(-1)


def _serial_normal(generator: Any, count: int, mean: float, std: float) -> np.ndarray:
    """torch's normal_distribution<double>, one element at a time, vectorised.

    A pair of uniforms u1, u2 gives r = √(-2 log1p(-u2)) and θ = 2π u1: r cos θ is the
    element, r sin θ is kept in the generator and is the next element (in this call or
    the next one).
    """
    cached = generator.next_double_normal_sample
    head = [] if cached is None or count == 0 else [cached]
    if head:
        generator.next_double_normal_sample = None
    pairs = (count - len(head) + 1) // 2
    u = _unit_float64(generator, 2 * pairs).reshape(pairs, 2)
    radius = np.sqrt(-2.0 * libm(math.log1p, -u[:, 1]))
    theta = _TWO_PI * u[:, 0]
    interleaved = np.stack([radius * libm(math.cos, theta), radius * libm(math.sin, theta)],
                           axis=1).reshape(-1)
    values = np.concatenate([np.asarray(head, _F64), interleaved])
    if values.size > count:
        generator.next_double_normal_sample = float(values[count])
    values = values[:count]
    return values if (mean, std) == (0, 1) else fma64(values, std, mean)


# -- bernoulli and exponential ------------------------------------------------------------------

def bernoulli_scalar(generator: Any, count: int, p: float) -> np.ndarray:
    """True with probability p: a float64 uniform below p.

    torch's released builds draw so on every CPU; its MKL variant of this kernel is
    compiled only into builds that define FBCODE_CAFFE2.
    """
    return _unit_float64(generator, count) < p


def bernoulli_tensor(generator: Any, p: np.ndarray) -> np.ndarray:
    """True with probability p[i] for each element of the float array p (its memory order
    flattened): a float64 uniform for float64 p, a float32 one otherwise."""
    flat = p.reshape(-1)
    if p.dtype == _F64:
        return _unit_float64(generator, flat.size) < flat
    return _unit_float32(generator, flat.size) < flat.astype(_F32)


def exponential(generator: Any, count: int, lambd: float) -> np.ndarray:
    """Exp(lambd), in float64: -1/lambd * log1p(-u) for a float64 uniform u."""
    return (-1.0 / lambd) * libm(math.log1p, -_unit_float64(generator, count))


# -- integers -----------------------------------------------------------------------------------

# torch draws a 64-bit word per value once the range reaches 2^28 (fewer biased values).
_WIDE_RANGE = 1 << 28


def random_from_to(generator: Any, count: int, span: int, low: int) -> np.ndarray:
    """Integers in [low, low + span): a word modulo span, plus low, as int64."""
    words = generator.draw64(count) if span >= _WIDE_RANGE else generator.draw32(count)
    offsets = words % np.uint64(span)
    return (offsets + np.uint64(low % 2**64)).view(np.int64)


def random_full_range(generator: Any, count: int) -> np.ndarray:
    """Every int64 value equally likely: a 64-bit word read as int64."""
    return generator.draw64(count).view(np.int64)


def random_default(generator: Any, count: int, dtype: np.dtype) -> np.ndarray:
    """random_() with no bounds: [0, 2^mantissa] for floats, [0, max] for integers."""
    if dtype == np.bool_:
        return (generator.draw32(count) & np.uint64(1)).astype(np.bool_)
    if dtype == _F64:
        return (generator.draw64(count) % np.uint64(2**53 + 1)).astype(_F64)
    if dtype == np.int64:
        return (generator.draw64(count) % np.uint64(2**63)).astype(np.int64)
    if dtype == _F32:
        return (generator.draw32(count) % np.uint64(2**24 + 1)).astype(_F32)
    if dtype.kind in "fV":  # float16, bfloat16: 32-bit words, [0, 2^digits]
        digits = np.finfo(dtype).nmant + 1
        return (generator.draw32(count) % np.uint64(2**digits + 1)).astype(dtype)
    top = np.uint64(int(np.iinfo(dtype).max) + 1)
    return (generator.draw32(count) % top).astype(dtype)


# Below 2^32 / 20 torch swaps with 32-bit words; from there on it uses 64-bit words and the
# inside-out form of the shuffle.
_RANDPERM_WIDE = (1 << 32) // 20


def randperm(generator: Any, n: int) -> np.ndarray:
    """A random permutation of 0..n-1 as torch's Fisher-Yates shuffle makes it (int64)."""
    if n >= _RANDPERM_WIDE:
        return _randperm_inside_out(generator, n)
    result = list(range(n))
    if n > 1:
        swaps = generator.draw32(n - 1) % (n - np.arange(n - 1, dtype=np.uint64))
        for i, offset in enumerate(swaps.tolist()):
            j = i + offset
            result[i], result[j] = result[j], result[i]
    return np.array(result, np.int64)


def _randperm_inside_out(generator: Any, n: int) -> np.ndarray:
    picks = (generator.draw64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    result = list(range(n))
    for i, z in enumerate(picks):
        result[i] = result[z]
        result[z] = i
    return np.array(result, np.int64)


# -- multinomial --------------------------------------------------------------------------------

def multinomial(generator: Any, probs: np.ndarray, num_samples: int,
                replacement: bool) -> np.ndarray:
    """Category indices (int64) drawn from each row of the 2-D float array `probs`.

    Without replacement, or for one sample, torch takes the top-k of p / q with q ~ Exp(1)
    (drawn in probs' dtype); with replacement, a float64 uniform per sample is looked up in
    the row's normalised cumulative sums (kept in probs' dtype, the last one set to 1).
    """
    if not replacement or num_samples == 1:
        q = exponential(generator, probs.size, 1.0).astype(probs.dtype).reshape(probs.shape)
        keys = probs / q
        order = np.argsort(-keys, axis=-1, kind="stable")
        return order[:, :num_samples].astype(np.int64)
    cumulative = np.cumsum(probs, axis=-1, dtype=probs.dtype)
    cumulative = cumulative / cumulative[:, -1:]
    cumulative[:, -1] = 1
    u = _unit_float64(generator, probs.shape[0] * num_samples).reshape(-1, num_samples)
    rows = [np.searchsorted(row.astype(_F64), samples, side="left")
            for row, samples in zip(cumulative, u, strict=True)]
    return np.array(rows, np.int64).reshape(probs.shape[0], num_samples)


# -- cauchy, log-normal, geometric (torch's serial kernels, in float64) --------------------------

def _log(u: np.ndarray) -> np.ndarray:
    """The C library's log, and -inf at 0 (math.log refuses 0)."""
    return np.where(u > 0, libm(math.log, np.where(u > 0, u, 1.0)), -np.inf)


def cauchy(generator: Any, count: int, median: float, sigma: float) -> np.ndarray:
    """median + sigma tan(π (u - 1/2)) for float64 uniforms u."""
    u = _unit_float64(generator, count)
    return median + sigma * libm(math.tan, math.pi * (u - 0.5))


def log_normal(generator: Any, count: int, mean: float, std: float) -> np.ndarray:
    """exp of N(mean, std²) drawn one by one (torch's serial normal_distribution<double>);
    beyond float64's range, inf."""
    x = _serial_normal(generator, count, mean, std)
    finite = x < 709.782712893384  # log of float64's largest value
    return np.where(finite, libm(math.exp, np.where(finite, x, 0.0)), np.inf)


def geometric(generator: Any, count: int, p: float) -> np.ndarray:
    """Trials up to the first success of Bernoulli(p): ceil(log u / log1p(-p))."""
    return np.ceil(_log(_unit_float64(generator, count)) / math.log1p(-p))
