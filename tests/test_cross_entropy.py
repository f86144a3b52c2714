"""cross_entropy's label smoothing and probability targets against PyTorch: values,
gradients and the grad_fn PyTorch's decomposition ends in."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the oracle

import runtime

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((4, 5))
CLASSES = np.array([0, 2, -100, 4])
WEIGHT = RNG.uniform(0.5, 2.0, 5)
PROBABILITIES = RNG.uniform(0, 1, (4, 5))
PROBABILITIES /= PROBABILITIES.sum(1, keepdims=True)

CASES = [
    ("smoothing", CLASSES, dict(label_smoothing=0.1)),
    ("smoothing-sum", CLASSES, dict(label_smoothing=0.2, reduction="sum")),
    ("smoothing-none", CLASSES, dict(label_smoothing=0.1, reduction="none")),
    ("smoothing-weight", CLASSES, dict(label_smoothing=0.3, weight=WEIGHT)),
    ("smoothing-weight-sum", CLASSES, dict(label_smoothing=0.1, weight=WEIGHT, reduction="sum")),
    ("probabilities", PROBABILITIES, {}),
    ("probabilities-sum", PROBABILITIES, dict(reduction="sum")),
    ("probabilities-none", PROBABILITIES, dict(reduction="none")),
    ("probabilities-smoothing", PROBABILITIES, dict(label_smoothing=0.1)),
    ("probabilities-weight", PROBABILITIES, dict(weight=WEIGHT)),
]


def run(lib, target: np.ndarray, options: dict) -> tuple:
    options = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
    logits = lib.tensor(LOGITS, requires_grad=True)
    loss = lib.nn.functional.cross_entropy(logits, lib.tensor(target), **options)
    loss.sum().backward()
    return loss.detach().numpy(), logits.grad.numpy(), loss.grad_fn.name()


@pytest.mark.parametrize(("target", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cross_entropy_matches_torch(target, options) -> None:
    ours, theirs = run(runtime, target, options), run(torch, target, options)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2] == theirs[2]


def test_the_module_passes_label_smoothing() -> None:
    logits = runtime.tensor(LOGITS, requires_grad=True)
    loss = runtime.nn.CrossEntropyLoss(label_smoothing=0.1)(logits, runtime.tensor(CLASSES))
    expected = torch.nn.CrossEntropyLoss(label_smoothing=0.1)(torch.tensor(LOGITS),
                                                              torch.tensor(CLASSES))
    assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
