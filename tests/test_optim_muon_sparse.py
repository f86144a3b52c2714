"""Muon and SparseAdam against torch.optim: Muon's parameters over 50 steps on 2-d weights,
state_dict layout, defaults and errors; SparseAdam's options, errors and its refusal of
dense gradients (gradgen has no sparse gradients)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import runtime as rt

STEPS = 50


def _raises_like(ours_call, theirs_call):
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(Exception) as ours:
        ours_call()
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def _problem(lib, dtype, shape):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((8, shape[0])), dtype=dtype)
    w = lib.tensor(rng.standard_normal(shape) * 0.5, dtype=dtype, requires_grad=True)
    v = lib.tensor(rng.standard_normal((shape[1], 2)), dtype=dtype, requires_grad=True)
    y = lib.tensor(rng.standard_normal((8, 2)), dtype=dtype)
    return x, w, v, y


def _train(lib, kwargs, dtype, shape, steps=STEPS):
    x, w, v, y = _problem(lib, dtype, shape)
    optimizer = lib.optim.Muon([w, v], **kwargs)
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        (x.mm(w).tanh().mm(v) - y).pow(2).mean().backward()
        optimizer.step()
        history.append([p.detach().numpy().copy() for p in (w, v)])
    return history, optimizer


CASES = [
    ({}, (5, 3)),
    ({"lr": 0.02}, (3, 7)),
    ({"lr": 0.02, "nesterov": False, "momentum": 0.9}, (6, 6)),
    ({"lr": 0.01, "weight_decay": 0.0, "adjust_lr_fn": "match_rms_adamw"}, (4, 9)),
    ({"lr": 0.01, "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5}, (9, 4)),
]


@pytest.mark.parametrize(("kwargs", "shape"), CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_muon_matches_torch_over_50_steps(kwargs, shape, dtype):
    """The Newton-Schulz iteration rounds to bfloat16 at every operation: gradients one ulp
    apart (numpy's and torch's matmuls add in different orders) can flip one rounding in a
    long run, which moves a weight by about lr·2⁻⁹; hence a bound of 1e-4 rather than the
    last bits (test_newton_schulz_bit_for_bit_like_torch checks the iteration exactly)."""
    ours, _ = _train(rt, kwargs, getattr(rt, dtype), shape)
    theirs, _ = _train(torch, kwargs, getattr(torch, dtype), shape)
    tol = 1e-4
    for step, (mine, expected) in enumerate(zip(ours, theirs, strict=True)):
        for p, q in zip(mine, expected, strict=True):
            assert p.dtype == q.dtype
            np.testing.assert_allclose(p, q, rtol=tol, atol=tol, err_msg=f"step {step}")


def test_newton_schulz_bit_for_bit_like_torch():
    from torch.optim._muon import _zeropower_via_newtonschulz

    from runtime.optim.muon import _newton_schulz

    rng = np.random.default_rng(0)
    for index in range(60):
        shape = [(4, 9), (5, 3), (6, 6), (9, 4), (1, 7), (16, 12)][index % 6]
        grad = rng.standard_normal(shape) * 10 ** rng.uniform(-3, 2)
        for dtype in (np.float64, np.float32):
            expected = _zeropower_via_newtonschulz(torch.tensor(grad.astype(dtype)),
                                                   (3.4445, -4.775, 2.0315), 5, 1e-7)
            ours = _newton_schulz(grad.astype(np.float32), (3.4445, -4.775, 2.0315), 5, 1e-7)
            np.testing.assert_array_equal(ours, expected.float().numpy())


def test_muon_defaults_and_state_dict_like_torch():
    assert str(inspect.signature(rt.optim.Muon.__init__).parameters["lr"].default) == \
        str(inspect.signature(torch.optim.Muon.__init__).parameters["lr"].default)
    _, mine = _train(rt, {}, rt.float32, (5, 3), steps=2)
    _, expected = _train(torch, {}, torch.float32, (5, 3), steps=2)
    assert mine.defaults == expected.defaults
    ours, theirs = mine.state_dict(), expected.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert ours["state"].keys() == theirs["state"].keys()
    for index, state in theirs["state"].items():
        assert list(ours["state"][index]) == list(state)
        np.testing.assert_allclose(ours["state"][index]["momentum_buffer"].numpy(),
                                   state["momentum_buffer"].numpy(), rtol=1e-5, atol=1e-7)
    assert repr(rt.optim.Muon([rt.zeros(2, 2)])) == repr(torch.optim.Muon([torch.zeros(2, 2)]))


@pytest.mark.parametrize("kwargs", [{"lr": -1.0}, {"momentum": -0.5}, {"weight_decay": -1.0},
                                    {"adjust_lr_fn": "other"}])
def test_muon_options_refused_like_torch(kwargs):
    _raises_like(lambda: rt.optim.Muon([rt.zeros(2, 2)], **kwargs),
                 lambda: torch.optim.Muon([torch.zeros(2, 2)], **kwargs))


def test_muon_refuses_what_torch_refuses():
    _raises_like(lambda: rt.optim.Muon([rt.zeros(2, 2), rt.zeros(3)]),
                 lambda: torch.optim.Muon([torch.zeros(2, 2), torch.zeros(3)]))

    def bad_step(lib, kwargs):
        p = lib.zeros(2, 3, requires_grad=True)
        p.grad = lib.ones(2, 3)
        lib.optim.Muon([p], **kwargs).step()

    for kwargs in ({"ns_steps": 100}, {"ns_coefficients": (1.0, 2.0)}):
        _raises_like(lambda k=kwargs: bad_step(rt, k), lambda k=kwargs: bad_step(torch, k))


# -- SparseAdam ----------------------------------------------------------------------------------

def test_sparse_adam_refuses_dense_gradients_like_torch():
    def step(lib):
        p = lib.ones(3, requires_grad=True)
        optimizer = lib.optim.SparseAdam([p])
        optimizer.step()  # no gradient yet: nothing to do
        p.sum().backward()
        try:
            optimizer.step()
        finally:
            assert p.tolist() == [1.0, 1.0, 1.0] and not optimizer.state

    _raises_like(lambda: step(rt), lambda: step(torch))


@pytest.mark.parametrize("kwargs", [{"lr": 0.0}, {"eps": 0.0}, {"betas": (1.0, 0.9)},
                                    {"betas": (0.9, -0.1)}])
def test_sparse_adam_options_refused_like_torch(kwargs):
    _raises_like(lambda: rt.optim.SparseAdam([rt.zeros(2)], **kwargs),
                 lambda: torch.optim.SparseAdam([torch.zeros(2)], **kwargs))


def test_sparse_adam_defaults_repr_and_state_dict_like_torch():
    mine = rt.optim.SparseAdam([rt.zeros(2)], lr=0.01)
    expected = torch.optim.SparseAdam([torch.zeros(2)], lr=0.01)
    assert mine.defaults == expected.defaults
    assert repr(mine) == repr(expected)
    assert mine.state_dict() == expected.state_dict()
