"""torch.istft, Tensor.istft and Tensor.stft against torch: the signal back from its stft
(windows, hops, centring, lengths, batches, normalisation, two-sided and complex output), the
node and gradients through it, torch's warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime
from runtime import fft as runtime_fft

_RNG = np.random.default_rng(5)


def _spectrum(shape, n_fft, hop, window, onesided=True, dtype=np.complex128):
    """torch's stft of a random signal (the oracle makes the input)."""
    signal = torch.tensor(_RNG.standard_normal(shape))
    win = None if window is None else torch.tensor(window)
    spectrum = torch.stft(signal, n_fft, hop, window=win, return_complex=True,
                          onesided=onesided)
    return spectrum.numpy().astype(dtype)


def _both(spectrum, window, grad=False, **kwargs):
    """istft in gradgen and torch: (values, node, gradient of the input)."""
    results = []
    for lib in (runtime, torch):
        x = lib.tensor(spectrum, requires_grad=grad)
        w = None if window is None else lib.tensor(window)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.istft(x, window=w, **kwargs)
        gradient = None
        if grad:
            weights = lib.tensor(np.cos(np.arange(y.numel()) * 0.7).reshape(tuple(y.shape)),
                                 dtype=y.dtype)
            weighted = y * weights
            loss = lib.view_as_real(weighted).sum() if y.is_complex() else weighted.sum()
            gradient = lib.autograd.grad(loss, x)[0].numpy()
        results.append((y.detach().numpy(), y.grad_fn.name() if y.grad_fn else None,
                        gradient))
    return results


def _same(results, rtol=1e-10, atol=1e-12):
    (ours, our_node, our_grad), (theirs, their_node, their_grad) = results
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    assert our_node == their_node
    if our_grad is not None:
        np.testing.assert_allclose(our_grad, their_grad, rtol=rtol, atol=atol)


_HANN16 = np.hanning(18)[1:-1]


@pytest.mark.parametrize(("shape", "n_fft", "hop", "window", "kwargs"), [
    ((64,), 16, 4, _HANN16, {}),
    ((3, 50), 16, 4, _HANN16, {}),
    ((64,), 16, 8, _HANN16, {"normalized": True}),
    ((64,), 16, 4, None, {}),
    ((64,), 16, 4, _HANN16, {"length": 60}),
    ((64,), 16, 4, _HANN16, {"length": 70}),
    ((64,), 16, 4, _HANN16[3:13], {"win_length": 10}),
    ((40,), 9, 3, np.hanning(11)[1:-1], {}),
])
def test_istft_inverts_stft(shape, n_fft, hop, window, kwargs) -> None:
    win = window if "win_length" not in kwargs else np.pad(window, (3, 3))
    spectrum = _spectrum(shape, n_fft, hop, win if window is not None else None)
    _same(_both(spectrum, window, grad=True, n_fft=n_fft, hop_length=hop, **kwargs))


def test_istft_two_sided_and_complex() -> None:
    spectrum = _spectrum((48,), 8, 2, np.hanning(10)[1:-1], onesided=False)
    window = np.hanning(10)[1:-1]
    _same(_both(spectrum, window, grad=True, n_fft=8, hop_length=2))
    _same(_both(spectrum, window, grad=True, n_fft=8, hop_length=2, return_complex=True))
    _same(_both(spectrum, window, n_fft=8, hop_length=2, center=False, length=40))


def test_istft_complex64() -> None:
    spectrum = _spectrum((64,), 16, 4, _HANN16, dtype=np.complex64)
    _same(_both(spectrum, _HANN16.astype(np.float32), n_fft=16, hop_length=4), rtol=1e-5,
          atol=1e-6)


def test_tensor_methods() -> None:
    signal = _RNG.standard_normal(64)
    outputs = []
    for lib in (runtime, torch):
        x = lib.tensor(signal)
        w = lib.tensor(_HANN16)
        spectrum = x.stft(16, 4, window=w, return_complex=True)
        outputs.append((spectrum.numpy(), spectrum.istft(16, 4, window=w).numpy()))
    np.testing.assert_allclose(outputs[0][0], outputs[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outputs[0][1], outputs[1][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outputs[0][1], signal, atol=1e-12)


def test_istft_warnings() -> None:
    spectrum = _spectrum((64,), 16, 4, None)
    runtime_fft._warned_istft.clear()
    messages = []
    for lib in (runtime, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.istft(lib.tensor(spectrum), 16, 4)
            lib.istft(lib.tensor(spectrum), 16, 4, window=lib.ones(16, dtype=lib.float64),
                      center=False, length=90)
        messages.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    ours, theirs = messages
    # torch warns once a process: only what it still says can be compared
    assert set(theirs) <= set(ours) and len(ours) == 2


def _error(call, spectrum):
    caught = []
    for lib in (runtime, torch):
        with pytest.raises(Exception) as error, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(lib, lib.tensor(spectrum))
        caught.append(error.value)
    ours, theirs = caught
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours).split(" (Triggered")[0] == str(theirs)


_S = _spectrum((64,), 16, 4, _HANN16)


@pytest.mark.parametrize(("call", "spectrum"), [
    (lambda lib, s: lib.istft(s.real, 16, 4), _S),
    (lambda lib, s: lib.istft(s[:0], 16, 4), _S),
    (lambda lib, s: lib.istft(s[0], 16, 4), _S),
    (lambda lib, s: lib.istft(s, 16, 4, onesided=False), _S),
    (lambda lib, s: lib.istft(s, 10, 4), _S),
    (lambda lib, s: lib.istft(s, 16, 0), _S),
    (lambda lib, s: lib.istft(s, 16, 4, win_length=20), _S),
    (lambda lib, s: lib.istft(s, 16, 4, window=lib.ones(8, dtype=lib.float64)), _S),
    (lambda lib, s: lib.istft(s, 16, 4, window=lib.ones(16, dtype=lib.float64),
                              return_complex=True), _S),
    (lambda lib, s: lib.istft(s, 16, 4, window=lib.zeros(16, dtype=lib.float64)), _S),
    (lambda lib, s: lib.istft(s, 16, 4, window=lib.hann_window(16, dtype=lib.float64),
                              center=False), _S),
    (lambda lib, s: lib.istft(s[None, None], 16, 4), _S),
    (lambda lib, s: lib.istft(s, 16.0, 4), _S),
    (lambda lib, s: lib.istft(s, True, 4), _S),
    (lambda lib, s: lib.istft(s, 16, 4, window=3), _S),
])
def test_istft_errors(call, spectrum) -> None:
    _error(call, spectrum)
