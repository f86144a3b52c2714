"""runtime.optim against torch.optim: the same parameters, gradients and options must give
the same parameters after every step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime as rt
from tests.oracle import least_squares, least_squares_loss

STEPS = 15


def _problem(lib, dtype):
    return least_squares(lib, dtype, seed=0)


_loss = least_squares_loss


def _run(lib, optimizer_name, kwargs, dtype, groups=None):
    """Parameters after each of STEPS optimizer steps, as numpy arrays."""
    x, w, b, y = _problem(lib, dtype)
    params = [w, b] if groups is None else [{"params": [w], **groups[0]},
                                           {"params": [b], **groups[1]}]
    optimizer = getattr(lib.optim, optimizer_name)(params, **kwargs)
    history = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        _loss(x, w, b, y).backward()
        optimizer.step()
        history.append([np.array(p.detach().numpy()) for p in (w, b)])
    return history


CASES = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
]


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_matches_torch_float64(name, kwargs):
    """In float64 the update formulas must agree to rounding."""
    ours = _run(rt, name, kwargs, rt.float64)
    theirs = _run(torch, name, kwargs, torch.float64)
    for step, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        for a, e in zip(mine, expected, strict=True):
            np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_matches_torch_float32(name, kwargs):
    ours = _run(rt, name, kwargs, rt.float32)
    theirs = _run(torch, name, kwargs, torch.float32)
    for a, e in zip(ours[-1], theirs[-1], strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_param_groups_with_their_own_lr(name):
    groups = [{"lr": 0.1}, {"lr": 0.001, "weight_decay": 0.2}]
    kwargs = {"lr": 0.01, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    ours = _run(rt, name, kwargs, rt.float64, groups)
    theirs = _run(torch, name, kwargs, torch.float64, groups)
    for a, e in zip(ours[-1], theirs[-1], strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-10)


def test_param_groups_take_defaults():
    w = rt.zeros(2, requires_grad=True)
    b = rt.zeros(2, requires_grad=True)
    optimizer = rt.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["params"] == [b]
    assert optimizer.param_groups[1]["momentum"] == 0.9
    c = rt.zeros(1, requires_grad=True)
    optimizer.add_param_group({"params": [c], "lr": 1.0})
    assert optimizer.param_groups[2]["lr"] == 1.0
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        optimizer.add_param_group({"params": [w]})


def _state_dict_after(lib, name, kwargs, steps):
    x, w, b, y = _problem(lib, lib.float64)
    optimizer = getattr(lib.optim, name)([w, b], **kwargs)
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(x, w, b, y).backward()
        optimizer.step()
    return optimizer, (x, w, b, y)


@pytest.mark.parametrize(("name", "kwargs"), [("SGD", {"lr": 0.01, "momentum": 0.9}),
                                              ("Adam", {"lr": 0.05, "amsgrad": True}),
                                              ("AdamW", {"lr": 0.05})])
def test_state_dict_like_torch(name, kwargs):
    ours, _ = _state_dict_after(rt, name, kwargs, 3)
    theirs, _ = _state_dict_after(torch, name, kwargs, 3)
    mine, expected = ours.state_dict(), theirs.state_dict()
    assert mine["state"].keys() == expected["state"].keys()
    for index, state in expected["state"].items():
        assert mine["state"][index].keys() == state.keys()
        for key, value in state.items():
            np.testing.assert_allclose(mine["state"][index][key].numpy(), value.numpy(),
                                       rtol=1e-10)
    for group, expected_group in zip(mine["param_groups"], expected["param_groups"],
                                     strict=True):
        for key, value in group.items():
            assert expected_group[key] == value, key


@pytest.mark.parametrize(("name", "kwargs"), [("SGD", {"lr": 0.01, "momentum": 0.9}),
                                              ("Adam", {"lr": 0.05, "amsgrad": True})])
def test_load_state_dict_resumes_training(name, kwargs):
    """Three steps, save, load into a fresh optimizer, three more: as six steps in torch."""
    first, (x, w, b, y) = _state_dict_after(rt, name, kwargs, 3)
    saved = first.state_dict()
    second = getattr(rt.optim, name)([w, b], lr=123.0)
    second.load_state_dict(saved)
    assert second.param_groups[0]["lr"] == kwargs["lr"]
    assert second.param_groups[0]["params"] == [w, b]
    for _ in range(3):
        second.zero_grad()
        _loss(x, w, b, y).backward()
        second.step()
    _, (_, tw, tb, _) = _state_dict_after(torch, name, kwargs, 6)
    np.testing.assert_allclose(w.detach().numpy(), tw.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.detach().numpy(), tb.detach().numpy(), rtol=1e-10)


def test_load_state_dict_checks_groups():
    w = rt.zeros(2, requires_grad=True)
    optimizer = rt.optim.SGD([w], lr=0.1)
    other = rt.optim.SGD([w, rt.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optimizer.load_state_dict(other.state_dict())


def test_step_is_in_place_without_graph():
    w = rt.nn.Parameter(rt.ones(3))
    optimizer = rt.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    version = w._version
    optimizer.step()
    assert w._version > version
    assert w.grad_fn is None and w.is_leaf and w.requires_grad
    assert isinstance(w, rt.nn.Parameter)


def test_zero_grad():
    w = rt.ones(3, requires_grad=True)
    optimizer = rt.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    grad = w.grad
    optimizer.zero_grad(set_to_none=False)
    assert w.grad is grad and grad.tolist() == [0.0, 0.0, 0.0]
    optimizer.zero_grad()
    assert w.grad is None


def test_step_with_closure():
    w = rt.ones(3, requires_grad=True)
    optimizer = rt.optim.SGD([w], lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert optimizer.step(closure).item() == 3.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 0.8, 0.8], rtol=1e-6)


@pytest.mark.parametrize(("name", "kwargs"), [
    ("SGD", {"lr": -1.0}),
    ("SGD", {"lr": 0.1, "momentum": -0.5}),
    ("SGD", {"lr": 0.1, "weight_decay": -1.0}),
    ("SGD", {"lr": 0.1, "nesterov": True}),
    ("Adam", {"lr": -1.0}),
    ("Adam", {"eps": -1.0}),
    ("Adam", {"betas": (1.0, 0.9)}),
    ("Adam", {"betas": (0.9, -0.1)}),
    ("AdamW", {"weight_decay": -0.1}),
])
def test_invalid_options_raise_like_torch(name, kwargs):
    with pytest.raises(ValueError) as expected:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as error:
        getattr(rt.optim, name)([rt.zeros(1, requires_grad=True)], **kwargs)
    assert str(error.value) == str(expected.value)


def test_bad_params_raise_like_torch():
    for params, exception in [([], ValueError), (rt.zeros(1), TypeError)]:
        with pytest.raises(exception) as error:
            rt.optim.SGD(params, lr=0.1)
        torch_params = torch.zeros(1) if isinstance(params, rt.Tensor) else params
        with pytest.raises(exception) as expected:
            torch.optim.SGD(torch_params, lr=0.1)
        assert str(error.value) == str(expected.value)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_amsgrad_keeps_its_maximum_in_place_like_torch(name):
    """The running maximum of the second moment is updated in place, as PyTorch's
    `torch.maximum(..., out=...)` does: the same tensor from step to step, its version
    counter moving once a step."""
    found = []
    for lib in (rt, torch):
        w = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
        optimizer = getattr(lib.optim, name)([w], lr=0.05, amsgrad=True)
        seen = []
        for _ in range(3):
            optimizer.zero_grad()
            (w * lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)).pow(2).sum().backward()
            optimizer.step()
            maximum = optimizer.state[w]["max_exp_avg_sq"]
            seen.append((id(maximum), maximum._version))
        found.append(([identity == seen[0][0] for identity, _ in seen],
                      [version for _, version in seen]))
    assert found[0] == found[1] == ([True, True, True], [1, 2, 3])
