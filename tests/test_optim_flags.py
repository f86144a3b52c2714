"""The implementation flags every torch optimizer takes (foreach, fused, capturable,
differentiable): the same signatures and state-dict layout as torch, torch's refusals, and
the same numbers wherever torch's chosen kernel computes as its default one does."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch

import runtime

NAMES = sorted(name for name in dir(torch.optim)
               if isinstance(getattr(torch.optim, name), type)
               and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
               and name != "Optimizer")
FLAGGED = [name for name in NAMES
           if "foreach" in inspect.signature(getattr(torch.optim, name)).parameters
           and name not in ("Adafactor",)]


def _parameters(name: str) -> list[inspect.Parameter]:
    return list(inspect.signature(getattr(runtime.optim, name).__init__).parameters.values())


@pytest.mark.parametrize("name", NAMES)
def test_signature_and_state_dict_as_torch(name: str) -> None:
    theirs = inspect.signature(getattr(torch.optim, name).__init__).parameters.values()
    assert [(p.name, p.kind) for p in _parameters(name)] == [(p.name, p.kind) for p in theirs]
    groups = []
    for lib in (torch, runtime):
        optimizer = getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2, 2))])
        groups.append(list(optimizer.state_dict()["param_groups"][0].items()))
    assert groups[1] == groups[0]


def _run(lib: object, name: str, steps: int = 20, **flags: object) -> np.ndarray:
    rng = np.random.default_rng(0)
    start = rng.standard_normal((6, 4)).astype(np.float32)
    grads = [rng.standard_normal((6, 4)).astype(np.float32) for _ in range(steps)]
    param = lib.nn.Parameter(lib.tensor(start))
    options = {"lr": 0.01, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    optimizer = getattr(lib.optim, name)([param], **options, **flags)
    for grad in grads:
        param.grad = lib.tensor(grad)
        optimizer.step()
    return param.detach().numpy()


# torch's foreach kernels compute these as its default loop does, bit for bit (NAdam, RAdam
# and ASGD's round differently; gradgen computes the loop's form: optimizer.check_fused).
SAME_FOREACH = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "RMSprop", "Rprop", "SGD"]


@pytest.mark.parametrize("name", SAME_FOREACH)
def test_foreach_steps_as_torch(name: str) -> None:
    """gradgen's steps are its default ones, bit for bit; torch's within float32 rounding
    (its add with an alpha rounds once: runtime/kernels.py, add_Tensor)."""
    ours = _run(runtime, name, foreach=True)
    np.testing.assert_array_equal(ours, _run(runtime, name))
    np.testing.assert_allclose(ours, _run(torch, name, foreach=True), rtol=1e-5, atol=1e-6)


def test_fused_sgd_steps_as_torch() -> None:
    ours = _run(runtime, "SGD", fused=True)
    np.testing.assert_array_equal(ours, _run(runtime, "SGD"))
    np.testing.assert_allclose(ours, _run(torch, "SGD", fused=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", [n for n in FLAGGED
                                  if "fused" in inspect.signature(getattr(torch.optim, n))
                                  .parameters])
def test_fused_refusals_as_torch(name: str) -> None:
    for lib in (torch, runtime):
        param = [lib.nn.Parameter(lib.ones(2))]
        with pytest.raises(RuntimeError, match="^`fused` and `foreach` cannot be `True` "
                           "together.$"):
            getattr(lib.optim, name)(param, fused=True, foreach=True)
        with pytest.raises(RuntimeError, match="^`fused` does not support `differentiable`$"):
            getattr(lib.optim, name)(param, fused=True, foreach=True, differentiable=True)


@pytest.mark.parametrize("name", [n for n in FLAGGED
                                  if "capturable" in inspect.signature(getattr(torch.optim, n))
                                  .parameters])
def test_capturable_refused_on_the_cpu_as_torch(name: str) -> None:
    messages = []
    for lib in (torch, runtime):
        param = lib.nn.Parameter(lib.ones(3))
        optimizer = getattr(lib.optim, name)([param], capturable=True)
        optimizer.step()  # no gradient yet: nothing to refuse
        param.grad = lib.ones(3)
        with pytest.raises(AssertionError) as raised:
            optimizer.step()
        messages.append(str(raised.value))
        assert lib.equal(param.detach(), lib.ones(3))  # left unchanged
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name", FLAGGED)
def test_differentiable_updates_a_leaf_as_an_in_place_op(name: str) -> None:
    for lib in (torch, runtime):
        param = lib.nn.Parameter(lib.ones(3))
        param.grad = lib.full((3,), 0.5)
        optimizer = getattr(lib.optim, name)([param], differentiable=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                           "used in an in-place operation."):
            optimizer.step()


@pytest.mark.parametrize(("name", "options"), [("SGD", {"momentum": 0.9}), ("Adam", {}),
                                               ("Adam", {"amsgrad": True}), ("RMSprop", {})])
def test_differentiable_step_records_its_update(name: str, options: dict) -> None:
    """A step over a non-leaf tensor is part of the graph: the gradient of a loss after the
    step reaches the tensor it was made from, through the update (a meta-learning step)."""
    results = []
    for lib in (torch, runtime):
        base = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        weight = base * 2
        weight.grad = (weight * weight).detach()  # any gradient, not part of the graph
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that weight is not a leaf
            optimizer = getattr(lib.optim, name)([weight], lr=0.1, differentiable=True)
        optimizer.step()
        (weight * weight).sum().backward()
        results.append((weight.detach().numpy(), base.grad.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_a_state_dict_without_the_flags_loads_and_steps(name: str) -> None:
    """A state dict saved before the flags existed (an older gradgen or torch) takes the
    optimizer's defaults for them, as torch's __setstate__ fills them in."""
    param = runtime.nn.Parameter(runtime.ones(3))
    optimizer = getattr(runtime.optim, name)([param], lr=0.1)
    old = optimizer.state_dict()
    for key in ("foreach", "fused", "capturable", "differentiable"):
        old["param_groups"][0].pop(key, None)
    fresh = getattr(runtime.optim, name)([param], lr=0.1)
    fresh.load_state_dict(old)
    assert fresh.state_dict()["param_groups"] == optimizer.state_dict()["param_groups"]
    param.grad = runtime.ones(3)
    fresh.step()
    assert param.detach().tolist() != [1.0, 1.0, 1.0]
