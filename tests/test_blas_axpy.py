"""An optimizer's large in-place update, `p.add_(g, alpha=a)`, goes through BLAS's axpy
(runtime/blas.py): one pass and one rounding, torch's bits but for a few elements at the
end of each block a BLAS thread takes (its kernel's scalar remainder rounds twice, as
numpy's two passes do on every element). The cases axpy must not take (a small, strided,
read-only or partly overlapping array, alpha 0) keep numpy's two passes, whose results they
had before; a compiled step calls the kernel and keeps eager's bits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from runtime import blas, kernels


def _pair(n: int, dtype, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype))


def test_numpys_bundled_blas_is_found() -> None:
    # numpy's Linux wheels (the pinned numpy) bundle OpenBLAS; without it every update
    # would silently take the slower path, so its absence here is a failure.
    assert blas.AVAILABLE


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [blas.MIN_SIZE, 100_000])
@pytest.mark.parametrize("alpha", [-1e-3, 0.37, -2.5])
def test_a_large_update_has_torchs_bits(dtype, n, alpha) -> None:
    p, g = _pair(n, dtype)
    p[:3] = [np.inf, -np.inf, np.nan]
    expected = torch.from_numpy(p.copy())
    expected.add_(torch.from_numpy(g), alpha=alpha)
    ours = runtime.tensor(p.copy())
    with runtime.no_grad():
        ours.add_(runtime.tensor(g), alpha=alpha)
    assert kernels.adds_in_one_pass(ours._data, g, alpha)
    two_passes = _two_passes(p, g, alpha)
    differ = _differ(ours.numpy(), expected.numpy())
    assert len(differ) <= 64 * 4 and len(differ) < len(_differ(two_passes, expected.numpy())) / 20
    # each in the last elements of a BLAS thread's block (a remainder of its vector loop),
    # rounded twice there, as numpy's two passes round every element
    assert np.array_equal(ours.numpy()[differ], two_passes[differ])


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))


def _two_passes(p: np.ndarray, g: np.ndarray, alpha: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return p + alpha * g


@pytest.mark.parametrize("case", ["small", "strided", "read-only", "overlapping", "alpha 0"])
def test_what_axpy_must_not_take_keeps_numpys_two_passes(case) -> None:
    n = 2 * blas.MIN_SIZE
    p, g = _pair(n + 2, np.float32, seed=1)
    alpha = -0.01
    if case == "small":
        p, g = p[:blas.MIN_SIZE - 1].copy(), g[:blas.MIN_SIZE - 1].copy()
    elif case == "strided":
        p, g = p[::2], g[::2]
    elif case == "read-only":
        p, g = p[:n].copy(), g[:n].copy()
        g.flags.writeable = False
    elif case == "overlapping":  # g is p shifted by one element
        g = p[1:n + 1]
        p = p[:n]
    else:
        p, g, alpha = p[:n].copy(), g[:n].copy(), 0.0
        g[0] = np.inf  # 0 * inf is NaN in torch and numpy; BLAS would skip the product
    expected = _two_passes(p.copy(), g.copy(), alpha)
    assert not kernels.adds_in_one_pass(p, g, alpha)
    kernels.add_Tensor_(p, g, alpha)
    assert np.array_equal(p, expected, equal_nan=True)
    if case == "alpha 0":
        assert np.isnan(p[0])


def test_a_tensor_updated_with_itself() -> None:
    p, _ = _pair(blas.MIN_SIZE, np.float32)
    expected = torch.from_numpy(p.copy())
    expected.add_(expected, alpha=0.5)
    ours = runtime.tensor(p.copy())
    with runtime.no_grad():
        ours.add_(ours, alpha=0.5)
    assert len(_differ(ours.numpy(), expected.numpy())) <= 64 * 4


def test_sgd_on_a_large_weight_agrees_with_torch_and_compiled_with_eager() -> None:
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((100, 200)).astype(np.float32)
    x = rng.standard_normal((8, 200)).astype(np.float32)

    def make(lib):
        w = lib.tensor(w0.copy(), requires_grad=True)
        opt = lib.optim.SGD([w], lr=1e-4)

        def step(inputs):
            opt.zero_grad()
            loss = (inputs @ w.t()).pow(2).sum()
            loss.backward()
            opt.step()
            return loss

        return w, step

    (w_eager, eager), (w_torch, theirs), (w_compiled, compiled) = \
        make(runtime), make(torch), make(runtime)
    fast = runtime.compile(compiled)
    for _ in range(5):
        eager(runtime.tensor(x))
        theirs(torch.tensor(x))
        fast(runtime.tensor(x))
    assert fast.fallback_reason is None
    assert "kernels.add_Tensor_" in fast.code  # the update: the kernel's own call
    assert np.array_equal(w_eager.detach().numpy(), w_compiled.detach().numpy())
    np.testing.assert_allclose(w_eager.detach().numpy(), w_torch.detach().numpy(),
                               rtol=1e-4, atol=1e-5)
