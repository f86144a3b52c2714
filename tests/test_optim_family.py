"""Adamax, NAdam, RAdam, ASGD and Rprop against torch.optim: the same parameters after each
of 50 steps, the same state_dict (keys, dtypes, values), defaults and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime as rt
from tests.test_optim_more import _after, _problem, _train

STEPS = 50

CASES = [
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adamax", {"maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"maximize": True}),
    ("RAdam", {}),  # rho_t crosses 5 at step 6: both branches run
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 10, "weight_decay": 0.1}),
    ("ASGD", {"maximize": True, "t0": 3}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"maximize": True}),
]
NAMES = ["Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]


@pytest.mark.parametrize(("name", "kwargs"), CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fifty_steps_match_torch(name, kwargs, dtype):
    def run(lib):
        problem = _problem(lib, getattr(lib, dtype))
        optimizer = getattr(lib.optim, name)([problem[1], problem[2]], **kwargs)
        return _train(optimizer, problem, STEPS)

    ours, theirs = run(rt), run(torch)
    rtol = 1e-11 if dtype == "float64" else 2e-5
    assert len(ours) == len(theirs) == STEPS
    for step, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        for p, q in zip(mine, expected, strict=True):
            assert p.dtype == q.dtype
            np.testing.assert_allclose(p, q, rtol=rtol, atol=rtol, err_msg=f"step {step}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("steps", [0, 3])
def test_state_dict_like_torch(name, steps):
    mine = _after(rt, name, {}, steps)[0].state_dict()
    expected = _after(torch, name, {}, steps)[0].state_dict()
    assert mine["state"].keys() == expected["state"].keys()
    for index, state in expected["state"].items():
        assert list(mine["state"][index]) == list(state)
        for key, value in state.items():
            assert str(mine["state"][index][key].dtype) == str(value.dtype), key
            assert tuple(mine["state"][index][key].shape) == tuple(value.shape), key
            np.testing.assert_allclose(mine["state"][index][key].numpy(), value.numpy(),
                                       rtol=1e-10)
    for group, expected_group in zip(mine["param_groups"], expected["param_groups"],
                                     strict=True):
        for key, value in group.items():
            assert expected_group[key] == value, key


@pytest.mark.parametrize("name", NAMES)
def test_load_state_dict_resumes_training(name):
    first, problem = _after(rt, name, {}, 4)
    second = getattr(rt.optim, name)([problem[1], problem[2]])
    second.load_state_dict(first.state_dict())
    ours = _train(second, problem, 4)[-1]
    _, (_, w, b, _) = _after(torch, name, {}, 8)
    for p, q in zip(ours, [w.detach().numpy(), b.detach().numpy()], strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_defaults_like_torch(name):
    ours = getattr(rt.optim, name)([rt.zeros(1, requires_grad=True)]).defaults
    theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults
    assert ours == {k: v for k, v in theirs.items() if k in ours}
    assert set(theirs) - set(ours) <= {"foreach", "differentiable", "capturable", "fused"}


@pytest.mark.parametrize(("name", "kwargs"), [
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}), ("Adamax", {"weight_decay": -1.0}),
    ("NAdam", {"momentum_decay": -1.0}), ("NAdam", {"betas": (0.9, 1.5)}),
    ("RAdam", {"lr": -0.1}), ("RAdam", {"weight_decay": -1}),
    ("ASGD", {"lr": -1.0}), ("ASGD", {"weight_decay": -1.0}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.5, 1.2)}), ("Rprop", {"etas": (0.5, 0.9)}),
])
def test_invalid_options_raise_like_torch(name, kwargs):
    with pytest.raises(ValueError) as expected:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as error:
        getattr(rt.optim, name)([rt.zeros(1, requires_grad=True)], **kwargs)
    assert str(error.value) == str(expected.value)


@pytest.mark.parametrize("name", NAMES)
def test_closure_and_repr_like_torch(name):
    def program(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        optimizer = getattr(lib.optim, name)([w])

        def closure():
            optimizer.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        return loss.item(), w.detach().numpy().copy(), repr(optimizer)

    ours, theirs = program(rt), program(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    mine = {line.strip() for line in ours[2].splitlines()}
    assert mine <= {line.strip() for line in theirs[2].splitlines()}
