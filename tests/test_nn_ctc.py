"""F.ctc_loss and CTCLoss against PyTorch: values and gradients for each reduction, padded
and concatenated targets, unbatched input, repeated labels, empty targets, impossible
alignments (inf, or zero with zero_infinity), torch's gradient for log-probabilities that do
not come from a log_softmax, the module's repr, and the argument errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same

X = np.random.default_rng(0).standard_normal((7, 3, 5))
PADDED = np.array([[1, 2, 2, 4], [3, 3, 0, 0], [4, 1, 1, 1]])
LENGTHS = ([7, 5, 6], [4, 2, 3])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("log_softmax", [True, False])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "tensor lengths"])
def test_ctc_loss_values_and_gradients(reduction: str, log_softmax: bool, layout: str) -> None:
    def program(lib: Any) -> list:
        logits = lib.tensor(X, requires_grad=True)
        log_probs = logits.log_softmax(2) if log_softmax else logits
        inputs, targets = LENGTHS
        labels = lib.tensor(PADDED)
        if layout == "concatenated":
            labels = lib.tensor(np.concatenate([PADDED[n, :k] for n, k in enumerate(targets)]))
        if layout == "tensor lengths":
            inputs, targets = lib.tensor(inputs), lib.tensor(targets)
        loss = lib.nn.functional.ctc_loss(log_probs, labels, inputs, targets,
                                          reduction=reduction)
        loss.sum().backward()
        return [loss, logits.grad]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_blank_empty_targets_and_impossible_alignments(zero_infinity: bool) -> None:
    targets = np.array([[1, 1, 2], [2, 3, 4], [0, 0, 0], [3, 2, 1]])

    def program(lib: Any) -> list:
        logits = lib.tensor(np.random.default_rng(1).standard_normal((4, 4, 5)),
                            requires_grad=True)
        loss = lib.nn.functional.ctc_loss(logits.log_softmax(2), lib.tensor(targets),
                                          [3, 4, 2, 2], [3, 3, 0, 3], blank=0,
                                          reduction="none", zero_infinity=zero_infinity)
        if zero_infinity:
            loss.sum().backward()
        return [loss, logits.grad]

    close(program, 1e-10, 1e-12)


def test_ctc_loss_float32_unbatched_other_blank_and_module() -> None:
    def program(lib: Any) -> list:
        logits = lib.tensor(X[:, 0].astype("float32"), requires_grad=True)
        module = lib.nn.CTCLoss(blank=4, zero_infinity=True)
        loss = module(logits.log_softmax(1), lib.tensor([0, 1, 1, 2]), lib.tensor(7),
                      lib.tensor(4))
        loss.backward()
        unreduced = lib.nn.functional.ctc_loss(logits.log_softmax(1), lib.tensor([3, 1]),
                                               lib.tensor(6), lib.tensor(2), blank=2,
                                               reduction="none")
        return [loss, unreduced, logits.grad, repr(module), module.blank, module.reduction]

    close(program, 1e-5, 1e-6)


def test_ctc_trains_a_small_model_as_torch() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 5)
        optimizer = lib.optim.Adam(model.parameters(), lr=0.05)
        features = lib.tensor(np.random.default_rng(2).standard_normal((6, 2, 3)),
                              dtype=lib.float32)
        criterion = lib.nn.CTCLoss()
        losses = []
        for _ in range(5):
            optimizer.zero_grad()
            loss = criterion(model(features).log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                             [6, 6], [2, 2])
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return [*losses, model.weight]

    close(program, 1e-5, 1e-6)


CTC_ERRORS = [
    "F.ctc_loss(lp, t, [5, 5], [2, 2], blank=4)",
    "F.ctc_loss(lp, t, [5, 5], [2, 2], blank=-1)",
    "F.ctc_loss(lp, t, [5], [2, 2])",
    "F.ctc_loss(lp, t, [5, 5], [2])",
    "F.ctc_loss(lp, t, [6, 5], [2, 2])",
    "F.ctc_loss(lp, t, [5, 5], [3, 2])",
    "F.ctc_loss(lp, t, [5, 5], [2, -1])",
    "F.ctc_loss(lp, t, [5, 5], [2, 2], reduction='avg')",
    "F.ctc_loss(lp, lib.tensor([1, 2, 3]), [5, 5], [2, 2])",
    "F.ctc_loss(lp[0], t, [5, 5], [2, 2])",
]


@pytest.mark.parametrize("call", CTC_ERRORS)
def test_ctc_loss_errors_are_torch_s(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841 - read by eval
        lp = lib.zeros(5, 2, 4)  # noqa: F841 - read by eval
        t = lib.tensor([[1, 2], [3, 3]])  # noqa: F841 - read by eval
        return eval(call).tolist()

    same(program)
