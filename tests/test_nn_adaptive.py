"""AdaptiveLogSoftmaxWithLoss against PyTorch: the parameters torch's generator draws,
outputs, losses and gradients (batched and one sample), log_prob, predict, the repr and
state_dict keys, a few training steps, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same

# With the default div_value the last cluster's hidden size is 8 // 4**2 = 0: torch warns
# that initialising its zero-element Linear is a no-op, and so does gradgen (checked in
# test_a_zero_element_cluster_warns_as_torch); the other tests need not repeat it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Initializing zero-element tensors is a no-op:UserWarning")


def test_a_zero_element_cluster_warns_as_torch() -> None:
    import torch

    import runtime

    for lib in (torch, runtime):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            _model(lib)


def _model(lib: Any, **options: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], **options)


@pytest.mark.parametrize("options", [{}, {"div_value": 2.0, "head_bias": True}])
def test_output_loss_and_gradients(options: dict) -> None:
    x = np.random.default_rng(1).standard_normal((6, 8)).astype("float32")

    def program(lib: Any) -> list:
        model = _model(lib, **options)
        input = lib.tensor(x, requires_grad=True)
        output, loss = model(input, lib.tensor([0, 4, 11, 2, 7, 5]))
        loss.backward()
        single = model(input[0].detach(), lib.tensor(9))
        return [output, loss, input.grad, *[p.grad for p in model.parameters()],
                *model.parameters(), *single, repr(model), list(model.state_dict())]

    close(program)


def test_log_prob_predict_and_training() -> None:
    x = np.random.default_rng(2).standard_normal((5, 8)).astype("float32")

    def program(lib: Any) -> list:
        model = _model(lib, head_bias=True)
        input = lib.tensor(x)
        log_prob = model.log_prob(input)
        first = model.predict(input)
        with lib.no_grad():
            model.head.bias[3:] += 5.0
        second = model.predict(input)
        with lib.no_grad():
            model.head.bias[4:] -= 20.0
        third = model.predict(input)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = model(input, lib.tensor([1, 10, 4, 0, 8])).loss
            loss.backward()
            optimizer.step()
            losses.append(loss)
        return [log_prob, log_prob.exp().sum(1), first, second, third, *losses]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [])",
    "lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [5, 3])",
    "lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [0, 3])",
    "lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 12])",
    "lib.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 3])",
    "model(lib.zeros(3, 8), lib.tensor([0, 1]))",
    "model(lib.zeros(3, 2, 8), lib.tensor([0, 1, 2]))",
    "model(lib.zeros(3, 8), lib.tensor(1))",
    "model(lib.zeros(3, 8), lib.tensor([[1]]))",
    "model(lib.zeros(3, 8), lib.tensor([0, 12, 2]))",
    "model(lib.zeros(3, 8), lib.tensor([0, -1, 2]))",
])
def test_errors_are_torch_s(call: str) -> None:
    def program(lib: Any) -> Any:
        model = _model(lib)  # noqa: F841 - read by eval
        return repr(eval(call))

    same(program)
