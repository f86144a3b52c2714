"""torch.fft's real functions against torch: fftfreq, rfftfreq (values bit for bit, dtypes,
requires_grad, out=, errors) and fftshift, ifftshift (values, node, gradients)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime


@pytest.mark.parametrize("function", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize(("n", "d"), [(1, 1.0), (2, 1.0), (5, 1.0), (8, 0.1), (9, 2.5),
                                      (0, 1.0), (4, 0.0), (7, -0.3)])
@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_frequencies(function: str, n: int, d: float, dtype: str | None) -> None:
    ours = getattr(runtime.fft, function)(n, d, dtype=dtype and getattr(runtime, dtype))
    theirs = getattr(torch.fft, function)(n, d, dtype=dtype and getattr(torch, dtype))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_frequencies_options_out_and_errors() -> None:
    for lib in (runtime, torch):
        grown = lib.fft.fftfreq(4, requires_grad=True)
        assert grown.requires_grad and grown.is_leaf
        out = lib.empty(3)
        assert lib.fft.rfftfreq(5, 0.5, out=out) is out
    np.testing.assert_array_equal(runtime.fft.rfftfreq(5, 0.5).numpy(),
                                  torch.fft.rfftfreq(5, 0.5).numpy())
    for call in (lambda lib: lib.fft.fftfreq(3, dtype=lib.int64),
                 lambda lib: lib.fft.rfftfreq(3, dtype=lib.int64),
                 lambda lib: lib.fft.fftfreq(-1)):
        messages = []
        for lib in (runtime, torch):
            with pytest.raises(RuntimeError) as error:
                call(lib)
            messages.append(str(error.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("function", ["fftshift", "ifftshift"])
@pytest.mark.parametrize(("shape", "dim"), [((5,), None), ((4, 5), None), ((4, 5), 1),
                                            ((4, 5), -2), ((3, 4, 5), (0, 2)),
                                            ((3, 4, 5), [-1, 0, 1]), ((0, 3), None)])
def test_shifts(function: str, shape: tuple, dim) -> None:
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    results = []
    for lib in (runtime, torch):
        x = lib.tensor(data, requires_grad=True)
        y = getattr(lib.fft, function)(x, dim)
        weights = lib.tensor(np.cos(np.arange(y.numel())).reshape(shape))
        (y * weights).sum().backward()
        results.append((y.grad_fn.name(), y.detach().numpy(), x.grad.numpy()))
    assert results[0][0] == results[1][0]
    for ours, theirs in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_shift_is_undone_by_its_inverse() -> None:
    x = runtime.arange(35.0).reshape(5, 7)
    np.testing.assert_array_equal(runtime.fft.ifftshift(runtime.fft.fftshift(x)).numpy(),
                                  x.numpy())


def test_shift_errors() -> None:
    for call, error_type in ((lambda lib: lib.fft.fftshift(lib.tensor(3.0)), RuntimeError),
                             (lambda lib: lib.fft.fftshift(lib.ones(2, 3), dim=3), IndexError),
                             (lambda lib: lib.fft.ifftshift([1, 2]), TypeError)):
        messages = []
        for lib in (runtime, torch):
            with pytest.raises(error_type) as error:
                call(lib)
            messages.append(str(error.value))
        assert messages[0] == messages[1]


def test_a_missing_name_says_so() -> None:
    with pytest.raises(AttributeError, match=r"torch\.fft\.fftx is not in gradgen \(yet\)"):
        runtime.fft.fftx  # noqa: B018
    assert runtime.fft.Tensor is runtime.Tensor
