"""RMSprop, Adagrad and Adadelta (and SGD's Nesterov option) against torch.optim: the same
parameters after every step, the same state_dict, the same errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime as rt
from tests.oracle import least_squares, least_squares_loss

STEPS = 12


def _problem(lib, dtype):
    return least_squares(lib, dtype, seed=1)


_loss = least_squares_loss


def _train(optimizer, problem, steps):
    x, w, b, y = problem
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(x, w, b, y).backward()
        optimizer.step()
        history.append([np.array(p.detach().numpy()) for p in (w, b)])
    return history


def _run(lib, name, kwargs, dtype, groups=None):
    problem = _problem(lib, dtype)
    _, w, b, _ = problem
    params = [w, b] if groups is None else [{"params": [w], **groups[0]},
                                           {"params": [b], **groups[1]}]
    optimizer = getattr(lib.optim, name)(params, **kwargs)
    return _train(optimizer, problem, STEPS)


CASES = [
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.05, "alpha": 0.9, "eps": 1e-6}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.2, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-4, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4}),
    ("Adadelta", {"weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}),
]


@pytest.mark.parametrize(("name", "kwargs"), CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_torch(name, kwargs, dtype):
    ours = _run(rt, name, kwargs, getattr(rt, dtype))
    theirs = _run(torch, name, kwargs, getattr(torch, dtype))
    rtol = 1e-12 if dtype == "float64" else 1e-6
    for step, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        for p, q in zip(mine, expected, strict=True):
            assert p.dtype == q.dtype
            np.testing.assert_allclose(p, q, rtol=rtol, atol=rtol, err_msg=f"step {step}")


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta"])
def test_param_groups_with_their_own_options(name):
    groups = [{"lr": 0.05, "weight_decay": 0.1}, {"lr": 0.2}]
    ours = _run(rt, name, {"lr": 0.01}, rt.float64, groups)
    theirs = _run(torch, name, {"lr": 0.01}, torch.float64, groups)
    np.testing.assert_allclose(ours[-1][0], theirs[-1][0], rtol=1e-12)
    np.testing.assert_allclose(ours[-1][1], theirs[-1][1], rtol=1e-12)


def _after(lib, name, kwargs, steps):
    problem = _problem(lib, lib.float64)
    optimizer = getattr(lib.optim, name)([problem[1], problem[2]], **kwargs)
    _train(optimizer, problem, steps)
    return optimizer, problem


STATE_CASES = [("RMSprop", {"momentum": 0.9, "centered": True}), ("RMSprop", {}),
               ("Adagrad", {"lr_decay": 0.1}), ("Adadelta", {}),
               ("SGD", {"lr": 0.1, "momentum": 0.5, "nesterov": True})]


@pytest.mark.parametrize(("name", "kwargs"), STATE_CASES)
@pytest.mark.parametrize("steps", [0, 3])
def test_state_dict_like_torch(name, kwargs, steps):
    """state keyed by parameter index, param_groups with index lists: torch's layout, with
    the same state tensors (dtype and value) and the same hyper-parameters."""
    mine = _after(rt, name, kwargs, steps)[0].state_dict()
    expected = _after(torch, name, kwargs, steps)[0].state_dict()
    assert list(mine) == ["state", "param_groups"]
    assert mine["state"].keys() == expected["state"].keys()
    for index, state in expected["state"].items():
        assert list(mine["state"][index]) == list(state)
        for key, value in state.items():
            assert str(mine["state"][index][key].dtype) == str(value.dtype), key
            np.testing.assert_allclose(mine["state"][index][key].numpy(), value.numpy(),
                                       rtol=1e-10)
    for group, expected_group in zip(mine["param_groups"], expected["param_groups"],
                                     strict=True):
        assert group["params"] == expected_group["params"] == [0, 1]
        for key, value in group.items():
            assert expected_group[key] == value, key


@pytest.mark.parametrize(("name", "kwargs"), STATE_CASES)
def test_load_state_dict_resumes_training(name, kwargs):
    """Four steps, state_dict, a fresh optimizer loads it, four more: as eight in torch."""
    first, problem = _after(rt, name, kwargs, 4)
    saved = first.state_dict()
    second = getattr(rt.optim, name)([problem[1], problem[2]], lr=123.0)
    second.load_state_dict(saved)
    assert second.param_groups[0]["lr"] == first.param_groups[0]["lr"]
    ours = _train(second, problem, 4)[-1]
    _, (_, w, b, _) = _after(torch, name, kwargs, 8)
    theirs = [w.detach().numpy(), b.detach().numpy()]
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-10)


def test_a_torch_state_dict_loads_into_gradgen():
    """torch's optimizer state_dict (tensors converted) drives gradgen's optimizer on."""
    theirs, _ = _after(torch, "RMSprop", {"momentum": 0.9}, 3)
    state = theirs.state_dict()
    converted = {"state": {i: {k: rt.tensor(v.numpy()) for k, v in s.items()}
                           for i, s in state["state"].items()},
                 "param_groups": state["param_groups"]}
    ours, problem = _after(rt, "RMSprop", {"momentum": 0.9}, 3)
    fresh = rt.optim.RMSprop([problem[1], problem[2]])
    fresh.load_state_dict(converted)
    assert fresh.param_groups[0]["momentum"] == 0.9
    np.testing.assert_allclose(fresh.state[problem[1]]["square_avg"].numpy(),
                               ours.state[problem[1]]["square_avg"].numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta"])
def test_add_param_group_like_torch(name):
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        c = lib.ones(3, requires_grad=True)
        optimizer = getattr(lib.optim, name)([a], lr=0.5)
        optimizer.add_param_group({"params": [c], "lr": 0.1})
        (a.sum() + (c * c).sum()).backward()
        optimizer.step()
        groups = [{k: v for k, v in g.items() if k != "params"}
                  for g in optimizer.state_dict()["param_groups"]]
        return a.detach().numpy(), c.detach().numpy(), groups
    ours, theirs = program(rt), program(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    for group, expected in zip(ours[2], theirs[2], strict=True):
        assert group == {k: v for k, v in expected.items() if k in group}
        assert group["lr"] == expected["lr"]


@pytest.mark.parametrize(("name", "kwargs"), [
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -1.0}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -0.5}),
    ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"weight_decay": -1.0}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1.0}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("SGD", {"lr": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.9, "dampening": 0.1}),
])
def test_invalid_options_raise_like_torch(name, kwargs):
    with pytest.raises(ValueError) as expected:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as error:
        getattr(rt.optim, name)([rt.zeros(1, requires_grad=True)], **kwargs)
    assert str(error.value) == str(expected.value)


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta"])
def test_defaults_like_torch(name):
    ours = getattr(rt.optim, name)([rt.zeros(1, requires_grad=True)]).defaults
    theirs = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)]).defaults
    assert ours == {k: v for k, v in theirs.items() if k in ours}
    assert set(theirs) - set(ours) <= {"foreach", "differentiable", "capturable", "fused"}


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adadelta"])
def test_step_skips_parameters_without_grad_and_records_no_graph(name):
    a = rt.ones(2, requires_grad=True)
    b = rt.ones(2, requires_grad=True)
    optimizer = getattr(rt.optim, name)([a, b])
    (a * 3).sum().backward()
    optimizer.step()
    assert a.grad_fn is None and a.requires_grad
    assert not np.array_equal(a.detach().numpy(), np.ones(2))
    np.testing.assert_array_equal(b.detach().numpy(), np.ones(2))


# -- nn.utils: gradients clipped by value, parameters as one vector --------------------------

def _model_with_grads(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    x = lib.tensor(np.linspace(-2, 2, 6).reshape(2, 3), dtype=lib.float32)
    (model(x) * 10).pow(2).sum().backward()
    return model


@pytest.mark.parametrize("clip_value", [0.5, 3, 1e-3])
def test_clip_grad_value_like_torch(clip_value):
    ours, theirs = _model_with_grads(rt), _model_with_grads(torch)
    rt.nn.utils.clip_grad_value_(ours.parameters(), clip_value)
    torch.nn.utils.clip_grad_value_(theirs.parameters(), clip_value)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        # (the float32 gradients themselves agree to rounding, before any clipping)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5)
        assert np.abs(p.grad.numpy()).max() <= clip_value


def test_parameters_to_vector_like_torch_and_differentiable():
    ours, theirs = _model_with_grads(rt), _model_with_grads(torch)
    mine = rt.nn.utils.parameters_to_vector(ours.parameters())
    expected = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(mine.detach().numpy(), expected.detach().numpy())
    assert type(mine.grad_fn).__name__ == type(expected.grad_fn).__name__ == "CatBackward0"
    weights = rt.arange(float(mine.numel()))
    (mine * weights).sum().backward()
    first = next(iter(ours.parameters()))
    flat = weights[:first.numel()].view_as(first)
    np.testing.assert_allclose(first.grad.numpy(),
                               _model_with_grads(rt)[0].weight.grad.numpy() + flat.numpy())


def test_vector_to_parameters_like_torch():
    ours, theirs = _model_with_grads(rt), _model_with_grads(torch)
    count = sum(p.numel() for p in theirs.parameters())
    rt.nn.utils.vector_to_parameters(rt.arange(float(count)) / 7, ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(float(count)) / 7, theirs.parameters())
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert tuple(p.shape) == tuple(q.shape) and p.requires_grad and p.is_leaf
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    messages = []
    for lib in (rt, torch):
        with pytest.raises(TypeError) as error:
            lib.nn.utils.vector_to_parameters([1.0], [lib.zeros(1)])
        messages.append(str(error.value))
    assert messages[0] == messages[1]
