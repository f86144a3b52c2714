"""torch.optim.swap_in_optimizer_params_and_state against torch: a step inside the block
moves the stand-in tensors and the given state_dict's tensors, never the live ones, and the
optimizer is as before on exit; malformed state_dicts give torch's errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import runtime as rt


def _setup(lib):
    rng = np.random.default_rng(4)
    w = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = lib.tensor(rng.standard_normal(2), requires_grad=True)
    optimizer = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.05}], lr=0.1)
    for _ in range(2):
        optimizer.zero_grad()
        (w.sum(0) * b).pow(2).sum().backward()
        optimizer.step()
    return w, b, optimizer


def _run(lib):
    w, b, optimizer = _setup(lib)
    live = [w.detach().clone(), b.detach().clone()]
    saved = optimizer.state_dict()
    saved = {"state": {k: {n: t.clone() for n, t in v.items()} for k, v in saved["state"].items()},
             "param_groups": copy.deepcopy(saved["param_groups"])}
    saved["param_groups"][1]["lr"] = 0.5
    stand_ins = {"w": w.detach().clone() + 1, "b": b.detach().clone() - 1}
    for tensor in stand_ins.values():
        tensor.grad = lib.ones(tuple(tensor.shape), dtype=tensor.dtype)
    lrs = []
    with lib.optim.swap_in_optimizer_params_and_state(optimizer, stand_ins, saved):
        lrs.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
    lrs.append([group["lr"] for group in optimizer.param_groups])
    assert optimizer.param_groups[0]["params"][0] is w
    assert w.tolist() == live[0].tolist() and b.tolist() == live[1].tolist()
    return ([t.detach().numpy() for t in stand_ins.values()],
            [saved["state"][i]["exp_avg"].numpy() for i in (0, 1)],
            [float(saved["state"][i]["step"]) for i in (0, 1)], lrs)


def test_swap_in_like_torch():
    ours, theirs = _run(rt), _run(torch)
    for mine, expected in zip(ours[:2], theirs[:2], strict=True):
        for p, q in zip(mine, expected, strict=True):
            np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)
    assert ours[2:] == theirs[2:]


BAD = [
    lambda sd: 3,
    lambda sd: {**sd, "state": []},
    lambda sd: {**sd, "state": {0: 1}},
    lambda sd: {**sd, "param_groups": {}},
    lambda sd: {**sd, "param_groups": sd["param_groups"][:1]},
    lambda sd: {**sd, "param_groups": [3, sd["param_groups"][1]]},
    lambda sd: {**sd, "param_groups": [{**sd["param_groups"][0], "params": ["a"]},
                                       sd["param_groups"][1]]},
    lambda sd: {**sd, "param_groups": [{**sd["param_groups"][0], "params": [0, 1]},
                                       sd["param_groups"][1]]},
    lambda sd: {**sd, "param_groups": [{**sd["param_groups"][0], "extra": 1},
                                       sd["param_groups"][1]]},
    lambda sd: {**sd, "state": {**sd["state"], 7: {}}},
]


@pytest.mark.parametrize("change", BAD)
def test_swap_in_errors_like_torch(change):
    messages = []
    for lib in (torch, rt):
        w, b, optimizer = _setup(lib)
        with pytest.raises(RuntimeError) as error, \
                lib.optim.swap_in_optimizer_params_and_state(
                    optimizer, {"w": w, "b": b}, change(optimizer.state_dict())):
            pass
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_swap_in_needs_state_and_enough_tensors_like_torch():
    messages = []
    for lib in (torch, rt):
        w = lib.ones(2, requires_grad=True)
        fresh = lib.optim.SGD([w], lr=0.1)
        with pytest.raises(RuntimeError) as first, \
                lib.optim.swap_in_optimizer_params_and_state(fresh, {"w": w},
                                                             fresh.state_dict()):
            pass
        w, b, optimizer = _setup(lib)
        with pytest.raises(RuntimeError) as second, \
                lib.optim.swap_in_optimizer_params_and_state(optimizer, {"w": w},
                                                             optimizer.state_dict()):
            pass
        messages.append((str(first.value), str(second.value)))
    assert messages[0] == messages[1]
