"""torch.utils.checkpoint against torch's: the same gradients as the plain call, the
forward run a second time in backward, the random state preserved, torch's warnings and
errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime as rt
from tests.oracle import same


def _net(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(0.3),
                             lib.nn.Linear(8, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))


def _grads(lib: Any, run: Any, reentrant: bool | None) -> dict:
    """Loss, input gradient and parameter gradients of `run(model, x)`, and how many times
    the model's first layer ran."""
    model = _net(lib)
    calls = []
    model[0].register_forward_hook(lambda *_: calls.append(1))
    lib.manual_seed(1)
    x = lib.randn(5, 4, dtype=lib.float32, requires_grad=True)
    lib.manual_seed(2)
    loss = run(lib, model, x, reentrant).pow(2).sum()
    forward_calls = len(calls)
    loss.backward()
    return {"loss": loss.detach().numpy(), "x": x.grad.numpy(),
            "params": [p.grad.numpy() for p in model.parameters()],
            "calls": (forward_calls, len(calls)), "after": lib.rand(3).numpy()}


def _plain(lib: Any, model: Any, x: Any, reentrant: Any) -> Any:
    return model(x)


def _checkpointed(lib: Any, model: Any, x: Any, reentrant: Any) -> Any:
    h = lib.utils.checkpoint.checkpoint(model[:3], x, use_reentrant=reentrant)
    return model[3:](h)


def _sequential(lib: Any, model: Any, x: Any, reentrant: Any) -> Any:
    return lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=reentrant)


def _assert_same(ours: dict, theirs: dict) -> None:
    assert ours["calls"] == theirs["calls"]
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=1e-6)
    np.testing.assert_allclose(ours["x"], theirs["x"], rtol=1e-5, atol=1e-7)
    for a, b in zip(ours["params"], theirs["params"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(ours["after"], theirs["after"])


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("run", [_checkpointed, _sequential])
def test_gradients_equal_the_plain_ones_and_forward_runs_twice(run: Any, reentrant: bool) -> None:
    ours = _grads(rt, run, reentrant)
    _assert_same(ours, _grads(torch, run, reentrant))
    plain = _grads(rt, _plain, reentrant)
    # dropout inside the checkpoint draws the same mask again (preserve_rng_state)
    np.testing.assert_allclose(ours["x"], plain["x"], rtol=1e-6, atol=1e-7)
    for a, b in zip(ours["params"], plain["params"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert plain["calls"] == (1, 1)
    assert ours["calls"] == (1, 2)


def _without_rng_preservation(lib: Any) -> Any:
    lib.manual_seed(0)
    x = lib.ones(6, requires_grad=True)

    def noisy(v: Any) -> Any:
        return v * lib.rand(6)

    y = lib.utils.checkpoint.checkpoint(noisy, x, use_reentrant=True, preserve_rng_state=False)
    y.sum().backward()
    return (y.detach().numpy(), x.grad.numpy())


def test_preserve_rng_state_false_draws_new_numbers_in_backward() -> None:
    (y_ours, g_ours), (y_theirs, g_theirs) = (_without_rng_preservation(rt),
                                              _without_rng_preservation(torch))
    np.testing.assert_array_equal(y_ours, y_theirs)
    np.testing.assert_array_equal(g_ours, g_theirs)
    assert not np.array_equal(g_ours, y_ours)  # backward's draw differs from forward's


def test_non_reentrant_takes_keywords_and_works_with_autograd_grad() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        scale = lib.tensor(2.0)

        def f(v: Any, *, power: int) -> Any:
            return (v * scale) ** power

        y = lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False, power=3)
        (grad,) = lib.autograd.grad(y.sum(), x)
        return y.tolist(), grad.tolist()

    assert same(program)[0][0] == "returns"


def test_node_of_the_reentrant_variant() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(lambda v: v.exp(), x, use_reentrant=True)
        return type(y.grad_fn).__name__

    assert same(program)[0] == ("returns", "CheckpointFunctionBackward")


ERRORS = {
    "keywords with reentrant": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda v, k: v, lib.ones(1, requires_grad=True), use_reentrant=True, k=1),
    "context_fn with reentrant": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda v: v, lib.ones(1, requires_grad=True), use_reentrant=True, debug=True),
    "sequential keywords": lambda lib: lib.utils.checkpoint.checkpoint_sequential(
        [lambda v: v], 1, lib.ones(1), use_reentrant=True, other=1),
    "no input requires grad": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda v: v * 2, lib.ones(2), use_reentrant=True).requires_grad,
    "nothing to backprop": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda v: v.detach(), lib.ones(2, requires_grad=True),
        use_reentrant=True).sum().backward(),
    "use_reentrant not given": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda v: v * 2, lib.ones(2, requires_grad=True)).tolist(),
    "sequential use_reentrant not given": lambda lib: lib.utils.checkpoint.checkpoint_sequential(
        [lambda v: v * 2, lambda v: v + 1], 2, lib.ones(2, requires_grad=True)).tolist(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_and_warnings_as_torch(case: str) -> None:
    same(ERRORS[case])


def test_detach_variable() -> None:
    def program(lib: Any) -> Any:
        a = lib.ones(2, requires_grad=True) * 2
        out = lib.utils.checkpoint.detach_variable((a, 3, lib.zeros(1)))
        return [(type(o).__name__, getattr(o, "requires_grad", None),
                 getattr(o, "grad_fn", None) is None) for o in out]

    assert same(program)[0][0] == "returns"
    same(lambda lib: lib.utils.checkpoint.detach_variable([lib.ones(1)]))
