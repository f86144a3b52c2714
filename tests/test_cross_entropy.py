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


SPATIAL = [
    ("sequence", (2, 3, 4), (2, 4)),
    ("image", (2, 3, 2, 2), (2, 2, 2)),
    ("volume", (2, 3, 2, 1, 2), (2, 2, 1, 2)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(("scores", "targets"), [c[1:] for c in SPATIAL],
                         ids=[c[0] for c in SPATIAL])
def test_more_than_two_dimensions_go_through_nll_loss2d(scores, targets, reduction) -> None:
    rng = np.random.default_rng(len(scores))
    logits, classes = rng.standard_normal(scores), rng.integers(0, scores[1], targets)
    classes.reshape(-1)[0] = -100

    def run_one(lib):
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(classes), reduction=reduction,
                                               weight=lib.tensor(WEIGHT[:scores[1]]))
        loss.sum().backward()
        names = [loss.grad_fn.name()] + [n.name() for n, _ in loss.grad_fn.next_functions if n]
        return loss.detach().numpy(), x.grad.numpy(), names

    ours, theirs = run_one(runtime), run_one(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("target_shape", [(2, 5), (3, 4)], ids=str)
def test_mismatched_targets_say_so_like_torch(target_shape) -> None:
    def message(lib):
        with pytest.raises((RuntimeError, ValueError)) as caught:
            lib.nn.functional.nll_loss(lib.zeros(2, 3, 4), lib.zeros(*target_shape,
                                                                     dtype=lib.int64))
        return type(caught.value).__name__, str(caught.value)
    assert message(runtime) == message(torch)


@pytest.mark.parametrize("scores, targets, options", [
    ((3, 4), [1, 7, -2], {}),  # the first target out of bounds is named
    ((3, 4), [1, -5, 9], dict(ignore_index=-5)),  # an ignored target is not checked
    ((4,), 4, {}),  # one sample, its classes along the only dimension
    ((2, 3), [-1, 0], dict(reduction="sum")),
], ids=["first", "ignored", "one-sample", "negative"])
def test_a_target_out_of_bounds_is_named_like_torch(scores, targets, options) -> None:
    def message(lib):
        with pytest.raises(IndexError) as caught:
            lib.nn.functional.cross_entropy(lib.zeros(*scores), lib.tensor(targets), **options)
        return str(caught.value)
    assert message(runtime) == message(torch)
