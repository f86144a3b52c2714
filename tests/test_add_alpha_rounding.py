"""add and sub with an alpha, out of place, round as torch's CPU kernels do: self + alpha *
other as one fused multiply-add, alpha first converted to the result dtype. Below
runtime.blas.MIN_SIZE elements the emulation is exact, so every bit is torch's; from there
BLAS's axpy computes it on a copy of self, fused except the scalar remainder of each BLAS
thread's block (tests/test_blas_axpy.py measures that remainder for the in-place update)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from runtime import blas


def _both(op, a, b, alpha):
    expected = getattr(torch, op)(torch.from_numpy(a), b if np.isscalar(b) else
                                  torch.from_numpy(b), alpha=alpha).numpy()
    got = getattr(runtime, op)(runtime.from_numpy(a), b if np.isscalar(b) else
                               runtime.from_numpy(b), alpha=alpha).numpy()
    return got, expected


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 7, 8, 31, 100, 1000, blas.MIN_SIZE - 1])
def test_out_of_place_add_with_alpha_is_torchs_bits(op, dtype, size):
    rng = np.random.default_rng(size)
    for _ in range(5):
        a = rng.standard_normal(size).astype(dtype)
        b = (rng.standard_normal(size) * rng.choice([1e-4, 1.0, 1e4])).astype(dtype)
        alpha = float(rng.standard_normal())
        got, expected = _both(op, a, b, alpha)
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_and_number_operands_are_fused_too(dtype):
    """An `other` broadcast along outer dimensions, and a Python number: torch's bits. (One
    broadcast along the innermost dimension, (6, 1) against (6, 40), is left out: torch's loop
    then rounds the tail of each row twice, which gradgen does not model: a last-bit
    difference on a few elements a row.)"""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 40)).astype(dtype)
    for b in (rng.standard_normal(40).astype(dtype), rng.standard_normal((1, 40)).astype(dtype),
              float(rng.standard_normal()), -3):
        for op in ("add", "sub"):
            got, expected = _both(op, a, b, float(rng.standard_normal()))
            assert got.tobytes() == expected.tobytes()
    a = rng.standard_normal((3, 4, 40)).astype(dtype)
    got, expected = _both("add", a, rng.standard_normal((3, 1, 40)).astype(dtype), 0.37)
    assert got.tobytes() == expected.tobytes()


def test_infinities_and_nan_as_torch():
    a = np.array([np.inf, -np.inf, np.nan, 1.0, 0.0, -0.0, 3e38], np.float32)
    b = np.array([1.0, np.inf, 0.0, np.inf, -0.0, 0.0, 3e38], np.float32)
    for alpha in (0.5, -2.0, 0.0, float("inf")):
        got, expected = _both("add", a, b, alpha)
        np.testing.assert_array_equal(got, expected)  # (NaN where torch has NaN)
        numbers = ~np.isnan(expected)  # signed zeros too; a NaN's sign bit is the CPU's
        assert (np.signbit(got) == np.signbit(expected))[numbers].all(), alpha


def test_a_large_out_of_place_add_leaves_its_operands_unchanged():
    rng = np.random.default_rng(4)
    a = rng.standard_normal(blas.MIN_SIZE * 2).astype(np.float32)
    b = rng.standard_normal(blas.MIN_SIZE * 2).astype(np.float32)
    x, y = runtime.from_numpy(a.copy()), runtime.from_numpy(b.copy())
    result = runtime.add(x, y, alpha=-0.01)
    assert x.numpy().tobytes() == a.tobytes() and y.numpy().tobytes() == b.tobytes()
    expected = torch.add(torch.from_numpy(a), torch.from_numpy(b), alpha=-0.01).numpy()
    # fused everywhere but BLAS's remainders (fewer than 32 elements a thread)
    assert (result.numpy() != expected).sum() < 64
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
