"""Every optimizer of runtime.optim under runtime.compile: traced through its own code, it
compiles and equals eager bit for bit over 20 steps, or runs eagerly and says why.

RAdam and ASGD choose on the numbers of their step (RAdam's rectification once
`rho_t > 5`, ASGD's averaging once its `mu` leaves 1) with runtime.optim.optimizer's
`select` rather than an `if`: the generated step makes the choice at each call, on that
call's step count (runtime/compile/numbers.py's Condition)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import runtime
from runtime.optim.optimizer import Optimizer, scalar_state

STEPS = 20


def _model(lib, bias: bool = True):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(12, 16, bias=bias), lib.nn.Tanh(),
                              lib.nn.Linear(16, 4, bias=bias))
    rng = np.random.default_rng(3)
    with lib.no_grad():
        for parameter in model.parameters():
            parameter.copy_(lib.tensor(rng.standard_normal(tuple(parameter.shape))
                                       .astype(np.float32) * 0.3))
    return model


def _step(lib, name: str | type, bias: bool = True, **options):
    model = _model(lib, bias)
    cls = name if isinstance(name, type) else getattr(lib.optim, name)
    optimizer = cls(model.parameters(), **options)

    def step(x, target):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        return loss

    return model, step


def _batches(lib, count: int = STEPS):
    rng = np.random.default_rng(2)
    return [(lib.tensor(rng.standard_normal((8, 12)).astype(np.float32)),
             lib.tensor(rng.integers(0, 4, 8))) for _ in range(count)]


def _bits(model) -> list[bytes]:
    return [p.detach().numpy().tobytes() for p in model.parameters()]


@pytest.mark.parametrize("name, options", [
    ("RAdam", {"lr": 1e-2}),
    ("RAdam", {"lr": 1e-2, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 1e-2, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("ASGD", {"lr": 5e-2}),
    # mu leaves 1 after t0 steps: the averaging's choice changes during the 20 steps
    ("ASGD", {"lr": 5e-2, "t0": 4, "lambd": 1e-2, "alpha": 0.5, "weight_decay": 0.1}),
])
def test_radam_and_asgd_compile_and_equal_eager_over_20_steps(name, options):
    """The choice made on the step count changes between steps (RAdam's rectification from
    the sixth step with beta2 0.999, the third with 0.9; ASGD's averaging after t0) and
    the one trace follows it: losses and parameters are eager's, bit for bit, and close to
    torch's."""
    eager_model, eager_step = _step(runtime, name, **options)
    model, step = _step(runtime, name, **options)
    torch_model, torch_step = _step(torch, name, **options)
    compiled = runtime.compile(step)
    for index, ((x, t), (tx, tt)) in enumerate(zip(_batches(runtime), _batches(torch),
                                                    strict=True)):
        expected, got, reference = eager_step(x, t), compiled(x, t), torch_step(tx, tt)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _bits(model) == _bits(eager_model), index
        assert compiled.fallback_reason is None, compiled.fallback_reason
        np.testing.assert_allclose(got.detach().numpy(), reference.item(), rtol=1e-4)
    assert compiled.traces == 1
    assert " if " in compiled.code  # the choice, made at each call
    for p, q in zip(model.parameters(), torch_model.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-3,
                                   atol=1e-5)


class _Branching(Optimizer):
    """A user's optimizer that takes an `if` on its step count: later calls could not take
    that branch anew, so the step runs eagerly, and says why."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    def _make_state(self, param, group):
        self.state[param]["step"] = scalar_state(0.0)

    def step(self):
        with runtime.no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if not self.state[param]:
                        self._make_state(param, group)
                    state = self.state[param]
                    state["step"] += 1
                    scale = 2.0 if state["step"].item() > 3 else 1.0
                    param.add_(param.grad, alpha=-group["lr"] * scale)


def test_an_if_on_the_step_count_runs_eagerly_and_says_so():
    eager_model, eager_step = _step(runtime, _Branching, lr=0.1)
    model, step = _step(runtime, _Branching, lr=0.1)
    compiled = runtime.compile(step)
    for x, target in _batches(runtime, 6):
        assert compiled(x, target).item() == eager_step(x, target).item()
        assert _bits(model) == _bits(eager_model)
    assert compiled.fallback_reason.startswith(
        "in _Branching.step: the step's Python uses a number it reads afresh at each call")
    assert "an `if` on a comparison of it" in compiled.fallback_reason


def _closure_step():
    model = _model(runtime)
    optimizer = runtime.optim.LBFGS(model.parameters(), lr=0.1, max_iter=2)
    x, target = _batches(runtime, 1)[0]

    def step():
        def closure():
            optimizer.zero_grad()
            loss = runtime.nn.functional.cross_entropy(model(x), target)
            loss.backward()
            return loss
        return optimizer.step(closure)

    return step


# Each optimizer of runtime.optim: None where it compiles, else the start of its reason.
EXPECTED = {
    "ASGD": None, "Adadelta": None, "Adagrad": None, "Adam": None, "AdamW": None,
    "Adamax": None, "NAdam": None, "RAdam": None, "RMSprop": None, "Rprop": None, "SGD": None,
    # Its Newton-Schulz iterations are numpy on the gradient's array, outside the kernels.
    "Muon": "in Muon.step: the step makes a tensor outside the spec's kernels",
    # It reads its parameter's norm as a Python number (`param.norm(2).item()`).
    "Adafactor": "in Adafactor.step: the step's Python uses a number it reads afresh",
    "LBFGS": "optimizer.step(closure): the closure runs eagerly",
    # gradgen has no sparse gradients: with dense ones it raises torch's error, compiled too.
    "SparseAdam": RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead"),
}


def test_every_optimizer_compiles_or_says_why():
    """The list is runtime.optim's: an optimizer added later must be added here, compiled
    or with its reason."""
    names = sorted(name for name, value in vars(runtime.optim).items()
                   if inspect.isclass(value) and issubclass(value, Optimizer)
                   and value is not Optimizer)
    assert names == sorted(EXPECTED)
    for name in names:
        if name == "LBFGS":
            steps, batches = [_closure_step(), _closure_step()], [()] * 4
        else:
            steps = [_step(runtime, name, bias=name != "Muon", lr=1e-2)[1] for _ in range(2)]
            batches = _batches(runtime, 4)
        eager, compiled = steps[0], runtime.compile(steps[1])
        if isinstance(EXPECTED[name], Exception):
            for run in (eager, compiled):
                with pytest.raises(type(EXPECTED[name])) as raised:
                    run(*batches[0])
                assert str(raised.value) == str(EXPECTED[name])
            continue
        for arguments in batches:
            expected, got = eager(*arguments), compiled(*arguments)
            assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), name
        reason = compiled.fallback_reason
        if EXPECTED[name] is None:
            assert reason is None, (name, reason)
        else:
            assert reason is not None and reason.startswith(EXPECTED[name]), (name, reason)
