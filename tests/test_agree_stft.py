"""stft's centre padding is torch's reflection_pad1d, so a first-order gradient made with
create_graph=True is in the input's graph (its node keeps the input), and the second order
is torch's: zeros, where a pad made of slices left the gradient outside the graph."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime

SIGNAL = np.random.default_rng(3).standard_normal((2, 40))


def _second_order(lib: Any, center: bool, batched: bool) -> list:
    x = lib.tensor(SIGNAL if batched else SIGNAL[0], requires_grad=True)
    y = lib.stft(x, n_fft=8, hop_length=3, window=lib.hann_window(8, dtype=lib.float64),
                 center=center, return_complex=True)
    weights = lib.tensor(np.random.default_rng(4).standard_normal(tuple(y.shape) + (2,)))
    (grad,) = lib.autograd.grad((lib.view_as_real(y) * weights).sum(), x, create_graph=True)
    facts = [grad.detach().numpy().copy(), grad.requires_grad]
    if grad.requires_grad:
        (second,) = lib.autograd.grad((grad * grad).sum(), x, allow_unused=True)
        facts.append(None if second is None else second.numpy().copy())
    return facts


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("batched", [True, False])
def test_second_order_through_stft(center: bool, batched: bool) -> None:
    want = _second_order(torch, center, batched)
    got = _second_order(runtime, center, batched)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    assert got[1:2] == want[1:2]
    if len(want) == 3:
        assert (got[2] is None) == (want[2] is None)
        if want[2] is not None:
            np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-12)


def test_the_centre_padding_is_a_reflection_pad_node() -> None:
    for lib, name in ((torch, "ReflectionPad1DBackward0"), (runtime, "ReflectionPad1DBackward0")):
        x = lib.tensor(SIGNAL[0], requires_grad=True)
        y = lib.stft(x, n_fft=8, window=lib.ones(8, dtype=lib.float64), return_complex=True)
        names, stack, seen = set(), [y.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            names.add(type(node).__name__)
            stack.extend(n for n, _ in node.next_functions)
        assert name in names, (lib.__name__, names)
