"""torch._ctc_loss (both overloads) and its backward op against torch 2.13, and F.ctc_loss
made of it as torch's ctc_loss is (CtcLossBackward0 under the reduction's nodes)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from tests.names_oracle import same


def _log_probs(t, frames=6, batch=3, classes=5):
    t.manual_seed(0)
    return t.randn(frames, batch, classes, dtype=t.float64).log_softmax(2).detach()


CASES = {
    "padded": ([[1, 2, 2], [3, 1, 0], [4, 4, 4]], [6, 5, 6], [3, 2, 3], False),
    "concatenated": ([1, 2, 2, 3, 1, 4], [6, 4, 2], [3, 2, 1], False),
    "infeasible": ([[1, 1, 1], [2, 3, 0], [4, 0, 0]], [6, 6, 2], [3, 2, 1], True),
    "empty_target": ([[1, 2], [0, 0], [3, 0]], [6, 3, 0], [2, 0, 1], False),
}


@pytest.mark.parametrize("tensors", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_ctc_loss_op_and_gradient(case, tensors):
    targets, inputs, lengths, zero_infinity = CASES[case]

    def program(t):
        log_probs = _log_probs(t).requires_grad_()
        make = (lambda v: t.tensor(v)) if tensors else list
        nll, log_alpha = t._ctc_loss(log_probs, t.tensor(targets), make(inputs), make(lengths),
                                     0, zero_infinity)
        weights = t.linspace(0.5, 1.5, 3, dtype=t.float64)
        (nll.nan_to_num(posinf=0.0) * weights).sum().backward()
        # log_alpha where torch's kernel writes it: each sample's frames and states
        written = [log_alpha[n, :inputs[n], :2 * lengths[n] + 1] for n in range(3)]
        return [nll, nll.grad_fn.name(), log_alpha.requires_grad, *written, log_probs.grad]

    same(program)


def _backward_op(lib):
    return lib.ops.aten._ctc_loss_backward if lib is torch else lib._ctc_loss_backward


def test_backward_op_against_torchs():
    def program(t):
        log_probs = _log_probs(t)
        targets = t.tensor([[1, 2, 2], [3, 1, 0], [1, 1, 1]])
        nll, log_alpha = t._ctc_loss(log_probs, targets, [6, 5, 3], [3, 2, 3])
        grad = t.tensor([1.0, -2.0, 0.5], dtype=t.float64)
        return [_backward_op(t)(grad, log_probs, targets, [6, 5, 3], [3, 2, 3], nll, log_alpha,
                                0, zero_infinity)
                for zero_infinity in (False, True)]

    same(program)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_functional_nodes_and_gradients(reduction, zero_infinity):
    def program(t):
        log_probs = _log_probs(t).requires_grad_()
        loss = t.nn.functional.ctc_loss(log_probs, t.tensor([[1, 1, 1], [2, 3, 0], [4, 0, 0]],
                                                            dtype=t.int32),
                                        t.tensor([6, 6, 2]), t.tensor([3, 2, 1]),
                                        reduction=reduction, zero_infinity=zero_infinity)
        names, node = [], loss.grad_fn
        while node is not None and node.name() != "CtcLossBackward0":
            names.append(node.name())
            node = next((f for f, _ in node.next_functions if f is not None), None)
        finite = loss.nan_to_num(posinf=0.0)
        finite.sum().backward()
        return [loss, names, node.name(), log_probs.grad]

    same(program)


def test_unbatched():
    def program(t):
        log_probs = _log_probs(t)[:, 0].requires_grad_()
        loss = t.nn.functional.ctc_loss(log_probs, t.tensor([1, 2, 2]), [6], [3],
                                        reduction="none")
        loss.backward()
        return [loss, loss.grad_fn.name(), log_probs.grad]

    same(program)


def test_log_alpha_is_minus_infinity_where_torch_writes_nothing():
    """torch leaves those entries of log_alpha as never-written memory; gradgen fills them
    with -inf (log 0): no alignment reaches them."""
    _, log_alpha = runtime._ctc_loss(_log_probs(runtime), runtime.tensor([[1, 2], [3, 0],
                                                                          [4, 4]]),
                                     [6, 2, 6], [2, 1, 2])
    assert np.all(np.isneginf(log_alpha[1, 2:].numpy()))
    assert np.all(np.isneginf(log_alpha[1, :, 3:].numpy()))
