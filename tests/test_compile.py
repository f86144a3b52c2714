"""runtime.compile: compiled training steps equal eager gradgen bit for bit, and every guard
takes effect (tests compare eager with compiled, and both with torch)."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime
from runtime.compile import CompiledStep

ROOT = Path(__file__).resolve().parent.parent
# torch's error for a Scalar argument float32 cannot hold (a learning rate of 1e39).
OVERFLOW_FLOAT = "value cannot be converted to type float without overflow"
STEPS = 20
LEARNING_RATE = 0.1  # a global a step reads (test_a_hand_written_update_...)


def _weights(sizes: list[tuple[int, int]], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    found = []
    for fan_in, fan_out in sizes:
        bound = 1 / np.sqrt(fan_in)
        found.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        found.append(rng.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    return found


def _mlp(lib, sizes: list[tuple[int, int]], dropout: float = 0.0):
    layers = []
    for index, (fan_in, fan_out) in enumerate(sizes):
        layers.append(lib.nn.Linear(fan_in, fan_out))
        if index < len(sizes) - 1:
            layers.append(lib.nn.ReLU())
            if dropout:
                layers.append(lib.nn.Dropout(dropout))
    model = lib.nn.Sequential(*layers)
    with lib.no_grad():
        for parameter, value in zip(model.parameters(), _weights(sizes), strict=True):
            parameter.copy_(lib.tensor(value))
    return model


def _tiny_step(lib, batch: int = 16, lr: float = 1e-3):
    """The seed's TinyModel step: MSE by hand, SGD."""
    model = _mlp(lib, [(30, 20), (20, 5)])
    optimizer = lib.optim.SGD(model.parameters(), lr=lr)
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((batch, 30)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((batch, 5)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        loss = (y - model(x)).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    return model, optimizer, step


def _classifier_step(lib, optimizer_class: str | type = "Adam", dropout: float = 0.0,
                     cross_entropy: bool = False, **options):
    """An MLP with cross-entropy (or a squared error from 0.5, the target unused); the batch is
    an argument of the step."""
    model = _mlp(lib, [(12, 16), (16, 16), (16, 4)], dropout)
    cls = optimizer_class if isinstance(optimizer_class, type) else \
        getattr(lib.optim, optimizer_class)
    optimizer = cls(model.parameters(), **options)

    def step(x, target):
        optimizer.zero_grad()
        if cross_entropy:
            loss = lib.nn.functional.cross_entropy(model(x), target)
        else:
            loss = (model(x) - 0.5).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return model, optimizer, step


def _batches(lib, count: int = STEPS, batch: int = 8):
    rng = np.random.default_rng(2)
    return [(lib.tensor(rng.standard_normal((batch, 12)).astype(np.float32)),
             lib.tensor(rng.integers(0, 4, batch))) for _ in range(count)]


def _bits(model) -> list[bytes]:
    return [p.detach().numpy().tobytes() for p in model.parameters()]


def _same(a: list[bytes], b: list[bytes]) -> bool:
    return len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))


def test_tinymodel_sgd_bitwise_equal_to_eager_over_20_steps():
    eager_model, _, eager_step = _tiny_step(runtime)
    model, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    torch_model, _, torch_step = _tiny_step(torch)
    for index in range(STEPS):
        expected, got, reference = eager_step(), compiled(), torch_step()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
        assert np.allclose(got.detach().numpy(), reference.item(), rtol=1e-4)
        assert compiled.fallback_reason is None, compiled.fallback_reason
    assert compiled.traces == 1
    for p, q in zip(model.parameters(), torch_model.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-6)


def test_tinymodel_grads_and_versions_as_eager():
    eager_model, _, eager_step = _tiny_step(runtime)
    model, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    for _ in range(3):
        eager_step()
        compiled()
    for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
        assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes()
        assert p._version == q._version
        assert not np.shares_memory(p.grad.numpy(), p.detach().numpy())


def test_returned_loss_is_this_steps_value():
    _, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    losses = [compiled() for _ in range(4)]
    values = [loss.item() for loss in losses]
    assert len(set(values)) == 4  # each step's own loss, not one buffer overwritten


@pytest.mark.parametrize("optimizer, options", [
    ("Adam", {"lr": 1e-2}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.01, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-3, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.1}),
    ("RMSprop", {"lr": 1e-2, "momentum": 0.9, "centered": True}),
    ("Adagrad", {"lr": 5e-2, "lr_decay": 1e-3}),
])
def test_mlp_cross_entropy_bitwise_equal_to_eager(optimizer, options):
    options = {"cross_entropy": True, **options}
    eager_model, _, eager_step = _classifier_step(runtime, optimizer, **options)
    model, _, step = _classifier_step(runtime, optimizer, **options)
    torch_model, _, torch_step = _classifier_step(torch, optimizer, **options)
    compiled = runtime.compile(step)
    # SGD's first step makes its momentum buffers, copies of the first gradients, and
    # runs unlike the later ones: it runs eagerly and the next call traces (as torch.compile
    # recompiles there). The other optimizers' state is made before their step is traced.
    first_eager = optimizer == "SGD"
    for index, ((x, t), (tx, tt)) in enumerate(zip(_batches(runtime), _batches(torch),
                                                    strict=True)):
        expected, got, reference = eager_step(x, t), compiled(x, t), torch_step(tx, tt)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
        if index == 0 and first_eager:
            assert compiled.fallback_reason == "SGD made its state in this step"
        else:
            assert compiled.fallback_reason is None, compiled.fallback_reason
        np.testing.assert_allclose(got.detach().numpy(), reference.item(), rtol=1e-4)
    assert compiled.traces == 1 + first_eager
    for p, q in zip(model.parameters(), torch_model.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-3, atol=1e-5)


def test_dropout_draws_fresh_in_eager_order():
    runtime.manual_seed(5)
    eager_model, _, eager_step = _classifier_step(runtime, "Adam", dropout=0.3, lr=0.01,
                                                  cross_entropy=True)
    eager_losses = [eager_step(x, t).detach().numpy().tobytes() for x, t in _batches(runtime)]
    runtime.manual_seed(5)
    model, _, step = _classifier_step(runtime, "Adam", dropout=0.3, lr=0.01, cross_entropy=True)
    compiled = runtime.compile(step)
    losses = [compiled(x, t).detach().numpy().tobytes() for x, t in _batches(runtime)]
    assert compiled.fallback_reason is None
    assert losses == eager_losses
    assert _same(_bits(model), _bits(eager_model))
    assert len(set(losses)) == STEPS
    # torch draws dropout masks from the same stream, bit for bit
    torch.manual_seed(5)
    torch_model, _, torch_step = _classifier_step(torch, "Adam", dropout=0.3, lr=0.01,
                                                  cross_entropy=True)
    reference = [torch_step(x, t).item() for x, t in _batches(torch)]
    np.testing.assert_allclose([np.frombuffer(v, np.float32)[0] for v in losses], reference,
                               rtol=1e-4)


def _pair(make=_tiny_step):
    eager = make(runtime)
    compiled = make(runtime)
    return eager, compiled, runtime.compile(compiled[2])


def test_guard_learning_rate_change_takes_effect():
    (eager_model, eager_opt, eager_step), (model, opt, _), compiled = _pair()
    for index in range(6):
        if index == 3:
            eager_opt.param_groups[0]["lr"] = 0.05
            opt.param_groups[0]["lr"] = 0.05
        eager_step()
        compiled()
        assert _same(_bits(model), _bits(eager_model)), index
    assert compiled.traces == 1  # the update reads lr at every step


def test_guard_momentum_change_retraces():
    (eager_model, eager_opt, eager_step), (model, opt, _), compiled = _pair()
    for index in range(6):
        if index == 3:
            eager_opt.param_groups[0]["weight_decay"] = 0.1
            opt.param_groups[0]["weight_decay"] = 0.1
        eager_step()
        compiled()
        assert _same(_bits(model), _bits(eager_model)), index
    assert compiled.traces == 2


def test_guard_shape_change_retraces():
    eager_model, _, eager_step = _classifier_step(runtime, "SGD", lr=0.1)
    model, _, step = _classifier_step(runtime, "SGD", lr=0.1)
    compiled = runtime.compile(step)
    for batch in (8, 8, 5, 5, 8):
        x, t = _batches(runtime, 1, batch)[0]
        got, expected = compiled(x, t), eager_step(x, t)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
        assert _same(_bits(model), _bits(eager_model))
    assert compiled.traces == 2


def test_guard_eval_mode_retraces():
    """Dropout in training mode, then eval mode: each run on its own from the same seed,
    since both draw from the default generator."""
    def run(compiled: bool):
        runtime.manual_seed(3)
        model, _, step = _classifier_step(runtime, "SGD", dropout=0.5, lr=0.1)
        if compiled:
            step = runtime.compile(step)
        losses = []
        for index, (x, t) in enumerate(_batches(runtime, 6)):
            if index == 3:
                model.eval()
            losses.append(step(x, t).detach().numpy().tobytes())
        return model, step, losses

    eager_model, _, expected = run(False)
    model, compiled, got = run(True)
    assert got == expected
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.traces == 2
    assert compiled.fallback_reason is None
    assert "bernoulli_" not in compiled.code  # eval mode: no dropout


def test_guard_hook_falls_back_to_eager():
    (eager_model, _, eager_step), (model, _, _), compiled = _pair()
    seen = []
    for index in range(5):
        if index == 2:
            for m in (eager_model, model):
                m[0].weight.register_hook(lambda g: g * 2)
            model[2].bias.register_hook(lambda g: seen.append(1))
        eager_step()
        compiled()
        assert _same(_bits(model), _bits(eager_model)), index
    assert "hook" in compiled.fallback_reason
    assert len(seen) == 3  # the hook ran at every step after it was added


def test_guard_grad_mode():
    (eager_model, _, eager_step), (model, _, _), compiled = _pair()
    compiled()
    eager_step()
    with runtime.no_grad(), pytest.raises(RuntimeError) as error:
        compiled()
    with runtime.no_grad(), pytest.raises(RuntimeError) as eager_error:
        eager_step()
    assert str(error.value) == str(eager_error.value)
    with torch.no_grad(), pytest.raises(RuntimeError) as torch_error:
        (torch.ones(1) * 2).sum().backward()
    assert str(error.value) == str(torch_error.value)


def test_item_in_step_falls_back_with_reason():
    model, optimizer, _ = _tiny_step(runtime)
    eager_model, eager_optimizer, _ = _tiny_step(runtime)
    x = runtime.ones(16, 30)

    def make(m, o):
        def step():
            o.zero_grad()
            loss = m(x).pow(2).sum()
            if loss.item() > 0:  # data-dependent Python control flow
                loss.backward()
                o.step()
            return loss.item()
        return step

    compiled = runtime.compile(make(model, optimizer))
    eager = make(eager_model, eager_optimizer)
    for _ in range(3):
        assert compiled() == eager()
    assert "item()" in compiled.fallback_reason
    assert compiled.code is None
    assert _same(_bits(model), _bits(eager_model))


def _item_steps(lib_model, optimizer, x):
    """Steps that return `.item()` values in the ways a trace may keep (returned at once)
    and may not (used, or kept in a variable first)."""
    def train():
        optimizer.zero_grad()
        loss = lib_model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss

    def returned():
        return train().item()

    def both():
        loss = train()
        size = loss.detach().abs()
        return loss.item(), size.item(), 3

    def kept():
        value = train().item()
        return value

    def used():
        return train().item() * 2

    return {"returned": returned, "both": both, "kept": kept, "used": used}


@pytest.mark.parametrize("kind", ["returned", "both", "kept", "used"])
def test_a_returned_item_is_a_line_of_the_step(kind):
    """`return loss.item()` (alone, or in a tuple of such values) compiles: the generated
    step returns `vN.item()`, eager's floats. A float the step keeps in a variable or
    computes with stops the trace (Python could do anything with it), and the step runs
    eagerly, with eager's results."""
    model, optimizer, _ = _tiny_step(runtime)
    eager_model, eager_optimizer, _ = _tiny_step(runtime)
    x = runtime.ones(16, 30)
    compiled = runtime.compile(_item_steps(model, optimizer, x)[kind])
    eager = _item_steps(eager_model, eager_optimizer, x)[kind]
    for _ in range(4):
        got, expected = compiled(), eager()
        assert got == expected and type(got) is type(expected)
    assert _same(_bits(model), _bits(eager_model))
    if kind in ("returned", "both"):
        assert compiled.fallback_reason is None and compiled.traces == 1
        assert re.search(r"return \(?v\d+\.item\(\)", compiled.code)
    else:
        assert "item()" in compiled.fallback_reason


SEED_GRADIENT = None  # a global gradient a step gives backward() (set by the test below)


def _seeded_backward_run(compiled: bool, how: str):
    global SEED_GRADIENT
    runtime.manual_seed(0)
    model = runtime.nn.Sequential(runtime.nn.Linear(4, 3), runtime.nn.Tanh())
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x, v = runtime.randn(5, 4), runtime.randn(5, 3)
    SEED_GRADIENT = v * 2

    def step(x, v):
        optimizer.zero_grad()
        y = model(x)
        if how == "ones_like":
            y.backward(runtime.ones_like(y))
        elif how == "argument":
            y.backward(v)
        elif how == "global":
            y.backward(SEED_GRADIENT)
        else:
            y.backward(v.double())
        optimizer.step()
        return y.detach()

    run = runtime.compile(step) if compiled else step
    outputs = [run(x, v).numpy().tobytes() for _ in range(3)]
    grads = [p.grad.numpy().tobytes() for p in model.parameters()]
    return outputs, _bits(model), grads, run


@pytest.mark.parametrize("how", ["ones_like", "argument", "global", "float64"])
def test_backward_with_a_gradient(how):
    """`y.backward(v)` (a vector-Jacobian product, as the tutorials' `y.backward(v)`): the
    seed is v, made in the step, an argument or a global; the same bits as eager. A seed
    of another dtype than y's runs eagerly."""
    eager = _seeded_backward_run(False, how)
    compiled = _seeded_backward_run(True, how)
    assert compiled[:3] == eager[:3]
    if how == "float64":
        assert "backward() with a gradient other than" in compiled[3].fallback_reason
    else:
        assert compiled[3].fallback_reason is None and compiled[3].traces == 1


def _alias_update_run(compiled: bool, how: str):
    runtime.manual_seed(0)
    model = runtime.nn.Linear(3, 2)
    x = runtime.randn(4, 3)

    def step():
        model.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        for p in model.parameters():  # a hand-written update through an alias of p
            alias = p.data if how == "data" else p.detach()
            alias.add_(p.grad, alpha=-0.1)
        return loss

    run = runtime.compile(step) if compiled else step
    losses = [run().detach().numpy().tobytes() for _ in range(4)]
    return losses, _bits(model), [p._version for p in model.parameters()], run


@pytest.mark.parametrize("how", ["data", "detach"])
def test_an_update_through_an_alias_of_a_parameter(how):
    """`p.data.add_(...)` and `p.detach().add_(...)` write into p's array; `detach()`
    shares p's version counter (as in torch), `.data` does not: the compiled step moves
    the counters eager moves."""
    eager = _alias_update_run(False, how)
    compiled = _alias_update_run(True, how)
    assert compiled[3].fallback_reason is None and compiled[3].traces == 1
    assert compiled[:3] == eager[:3]


def _inplace_step(model, optimizer, x, on_input: bool):
    def step():
        optimizer.zero_grad()
        if on_input:
            x.mul_(0.5)  # changes the step's own input: not compiled
        hidden = model[0](x)
        hidden.relu_()  # an intermediate the step made: replayed in order
        loss = model[2](hidden).sum()
        loss.backward()
        optimizer.step()
        return loss

    return step


@pytest.mark.parametrize("on_input", [False, True])
def test_inplace_ops_in_forward(on_input):
    model, optimizer, _ = _tiny_step(runtime)
    eager_model, eager_optimizer, _ = _tiny_step(runtime)
    x, eager_x = runtime.ones(16, 30), runtime.ones(16, 30)
    compiled = runtime.compile(_inplace_step(model, optimizer, x, on_input))
    eager = _inplace_step(eager_model, eager_optimizer, eager_x, on_input)
    for _ in range(4):
        got, expected = compiled(), eager()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
        assert _same(_bits(model), _bits(eager_model))
    assert x.numpy().tobytes() == eager_x.numpy().tobytes()
    if on_input:
        assert "in-place" in compiled.fallback_reason
    else:
        assert compiled.fallback_reason is None
        assert "in place" in compiled.code


def _state_bits(model) -> list[bytes]:
    return [t.detach().numpy().tobytes() for t in (*model.parameters(), *model.buffers())]


def _versions(model) -> list[int]:
    grads = [p.grad._version for p in model.parameters() if p.grad is not None]
    return [t._version for t in (*model.parameters(), *model.buffers())] + grads


@pytest.mark.parametrize("clip", ["norm", "value", None])
def test_batch_norm_running_stats_and_gradient_clipping(clip):
    """BatchNorm in training mode writes its running stats and counter in place, and
    clip_grad_norm_ / clip_grad_value_ scale or clamp `.grad` in place: each write is a
    line of the step, with the version counter's move; 20 steps give eager's parameters,
    buffers, gradients and versions, bit for bit."""
    def make():
        runtime.manual_seed(2)
        model = runtime.nn.Sequential(runtime.nn.Linear(12, 8), runtime.nn.BatchNorm1d(8),
                                      runtime.nn.ReLU(), runtime.nn.Linear(8, 4))
        optimizer = runtime.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)

        def step(x, target):
            optimizer.zero_grad()
            loss = runtime.nn.functional.cross_entropy(model(x), target)
            loss.backward()
            if clip == "norm":
                runtime.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            elif clip == "value":
                runtime.nn.utils.clip_grad_value_(model.parameters(), 0.01)
            optimizer.step()
            return loss

        return model, step

    (eager_model, eager_step), (model, step) = make(), make()
    compiled = runtime.compile(step)
    for index, (x, target) in enumerate(_batches(runtime)):
        got, expected = compiled(x, target), eager_step(x, target)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _state_bits(model) == _state_bits(eager_model), index
        assert [p.grad.numpy().tobytes() for p in model.parameters()] == \
            [p.grad.numpy().tobytes() for p in eager_model.parameters()], index
        assert _versions(model) == _versions(eager_model), index
        # (SGD's first step makes its momentum buffers: it runs eagerly, the next traces.)
        assert compiled.fallback_reason == ("SGD made its state in this step" if index == 0
                                            else None), index
    assert compiled.traces == 2
    assert "model.1.running_mean" in compiled.code
    if clip:
        assert "# after backward" in compiled.code


def test_a_hand_written_update_and_zero_grad_are_lines_of_the_step():
    """The tutorials' loop: `p.grad = None` by hand, then `p -= lr * p.grad` under
    no_grad. Both are lines of the step (a `.grad = None` the trace did not see left the
    last step's gradient to be added to, a wrong result); 10 steps give eager's bits,
    gradients and versions; a new learning rate (a global the step names) traces again."""
    def make():
        model = _mlp(runtime, [(12, 6), (6, 4)])
        x = _batches(runtime, 1)[0][0]

        def step():
            for p in model.parameters():
                p.grad = None
            loss = model(x).pow(2).mean()
            loss.backward()
            with runtime.no_grad():
                for p in model.parameters():
                    p -= LEARNING_RATE * p.grad
            return loss

        return model, step

    global LEARNING_RATE
    (eager_model, eager_step), (model, step) = make(), make()
    compiled = runtime.compile(step)
    try:
        for index in range(10):
            if index == 6:
                LEARNING_RATE = 0.5
            got, expected = compiled(), eager_step()
            assert got.item() == expected.item(), index
            assert _same(_bits(model), _bits(eager_model)), index
            assert [p.grad.numpy().tobytes() for p in model.parameters()] == \
                [p.grad.numpy().tobytes() for p in eager_model.parameters()], index
            assert _versions(model) == _versions(eager_model), index
            assert compiled.fallback_reason is None, index
    finally:
        LEARNING_RATE = 0.1
    assert compiled.traces == 2
    assert "._grad = None" in compiled.code and "sub_Tensor_" in compiled.code


def test_a_scheduled_optimizer_is_still_seen():
    """An lr scheduler wraps `optimizer.step` on the instance (as torch's does): the
    update still goes through its template, and each new learning rate takes effect."""
    def make():
        model, optimizer, step = _classifier_step(runtime, "Adam", lr=0.05)
        scheduler = runtime.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
        return model, step, scheduler

    (eager_model, eager_step, eager_scheduler), (model, step, scheduler) = make(), make()
    compiled = runtime.compile(step)
    for index, (x, target) in enumerate(_batches(runtime, 8)):
        assert compiled(x, target).item() == eager_step(x, target).item(), index
        scheduler.step()
        eager_scheduler.step()
        assert _same(_bits(model), _bits(eager_model)), index
        assert compiled.fallback_reason is None, index
    assert compiled.traces == 1


def test_data_assignment_in_the_step_runs_eagerly():
    model, optimizer, _ = _tiny_step(runtime)

    def step():
        optimizer.zero_grad()
        model[0].weight.data = runtime.full((20, 30), 0.01)
        loss = model(runtime.ones(2, 30)).sum()
        loss.backward()
        optimizer.step()
        return loss

    compiled = runtime.compile(step)
    compiled(), compiled()
    assert compiled.fallback_reason == "`.data =` in the step"


def test_a_module_attribute_set_in_the_step_runs_eagerly():
    """A module attribute the step sets anew (a scale decayed at every step, which the
    forward reads): the generated step would neither read the new value nor set the
    next; the guard, made after the step, would find the value the step left. Eager."""
    class Scaled(runtime.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = runtime.nn.Linear(3, 1)
            self.scale = 1.0

        def forward(self, x):
            return self.layer(x) * self.scale

    def make():
        runtime.manual_seed(1)
        model = Scaled()
        optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            optimizer.zero_grad()
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
            model.scale = model.scale * 0.5
            return loss

        return model, step

    (eager_model, eager_step), (model, step) = make(), make()
    compiled = runtime.compile(step)
    x = runtime.ones(2, 3)
    for index in range(12):
        assert compiled(x).item() == eager_step(x).item(), index
        assert model.scale == eager_model.scale, index
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason == "a module's attribute set or deleted in the step (scale)"

    # A step that begins with `model.train()` sets the flag it holds already: compiled.
    model, _, step = _classifier_step(runtime, "SGD", dropout=0.5, lr=0.1)

    def train_step(x, target):
        model.train()
        return step(x, target)

    compiled = runtime.compile(train_step)
    for x, target in _batches(runtime, 3):
        compiled(x, target)
    assert compiled.fallback_reason is None
    # After `model.eval()` (a validation pass between epochs), the step's `model.train()`
    # flips the flag: that call runs eagerly, and the next one runs the trace again.
    model.eval()
    compiled(x, target)
    assert "training" in compiled.fallback_reason
    compiled(x, target)
    assert compiled.fallback_reason is None


def test_seeding_in_the_step_runs_eagerly():
    """A step that seeds the generator draws the same dropout mask at every step in eager
    mode; the generated step would draw on: eager, with its result."""
    def make():
        model, _, step = _classifier_step(runtime, "SGD", dropout=0.5, lr=0.1)

        def seeded(x, target):
            runtime.manual_seed(7)
            return step(x, target)

        return model, seeded

    (eager_model, eager_step), (model, step) = make(), make()
    compiled = runtime.compile(step)
    for x, target in _batches(runtime, 4):
        assert compiled(x, target).item() == eager_step(x, target).item()
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason == "the step seeds or sets the state of a random generator"


def test_requires_grad_changed_in_the_step():
    """A step that freezes a layer (`requires_grad_(False)` on its parameters): the first
    call flips the flags and runs eagerly, the next finds them set and is traced; the
    results are eager's. An argument made to require grad: eager each time."""
    def make():
        model, _, step = _classifier_step(runtime, "SGD", lr=0.1)

        def frozen(x, target):
            for p in model[0].parameters():
                p.requires_grad_(False)
            return step(x, target)

        return model, frozen

    (eager_model, eager_step), (model, step) = make(), make()
    compiled = runtime.compile(step)
    reasons = []
    for x, target in _batches(runtime, 4):
        assert compiled(x, target).item() == eager_step(x, target).item()
        reasons.append(compiled.fallback_reason)
    assert _same(_bits(model), _bits(eager_model))
    assert reasons == ["requires_grad changed in the step on a tensor it did not make",
                       None, None, None]

    w = runtime.ones(3)

    def grad_of_input(x):
        x.requires_grad_()
        (x * w).sum().backward()
        return x.grad

    compiled = runtime.compile(grad_of_input)
    for _ in range(3):
        x = runtime.tensor([1.0, 2.0, 3.0])
        assert compiled(x).tolist() == [1.0, 1.0, 1.0] and x.requires_grad
    assert compiled.fallback_reason.startswith("requires_grad changed")


def test_a_hyperparameter_of_another_type_traces_again():
    """betas set to numpy float64s equal to the Python floats traced: equal, but the
    kernels compute with them otherwise (a strong scalar), and the update's lines wrote
    the traced floats in: the guard compares hyperparameters by identity."""
    eager_model, eager_optimizer, eager_step = _classifier_step(runtime, "Adam", lr=1e-2)
    model, optimizer, step = _classifier_step(runtime, "Adam", lr=1e-2)
    compiled = runtime.compile(step)
    for index, (x, target) in enumerate(_batches(runtime, 8)):
        if index == 3:
            for o in (eager_optimizer, optimizer):
                o.param_groups[0]["betas"] = (np.float64(0.9), np.float64(0.999))
        assert compiled(x, target).item() == eager_step(x, target).item(), index
        assert _same(_bits(model), _bits(eager_model)), index
    assert compiled.traces == 2


def test_an_out_argument_in_the_step_is_a_line_of_it():
    """out= into a tensor the step made (or an optimizer's state: AMSGrad's maximum) is a
    line of the step, its result copied in, as an in-place op's is: compiled, equal."""
    def make():
        w = runtime.ones(3, requires_grad=True)
        optimizer = runtime.optim.SGD([w], lr=0.1)

        def step(x):
            optimizer.zero_grad()
            buffer = x * 0
            runtime.mul(x, 2, out=buffer)
            loss = (w * buffer).sum()
            loss.backward()
            optimizer.step()
            return loss

        return step

    eager_step, step = make(), make()
    compiled = runtime.compile(step)
    x = runtime.tensor([1.0, 2.0, 3.0])
    for _ in range(3):
        assert compiled(x).item() == eager_step(x).item()
    assert compiled.fallback_reason is None and "np.copyto(" in compiled.code


def test_fullgraph_makes_a_fallback_an_error():
    x = runtime.ones(2, requires_grad=True)

    @runtime.compile(fullgraph=True)
    def step():
        loss = (x * 2).sum()
        loss.backward(retain_graph=True)
        return loss

    with pytest.raises(RuntimeError, match="retain_graph"):
        step()


def test_code_reads_as_numpy_with_provenance():
    _, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    assert isinstance(compiled, CompiledStep)
    compiled()
    code = compiled.code
    assert "# AddmmBackward0: mat1: mm_mat1_backward(grad, mat2, mat1.shape" in code
    assert "# ReluBackward0: self: threshold_backward(grad, result, 0)" in code
    assert "._grad = new(" in code and "AccumulateGrad: model.0.weight.grad" in code
    assert re.search(r"v1 = \(x\d @ v0\).__iadd__\(x\d\) +# forward: addmm -> AddmmBackward0",
                     code)
    assert "SGD.step: add_Tensor_, in place" in code
    # pow's backward copies (pow(x, 1)), and the next line makes a new array of the copy:
    # it reads the original instead.
    assert ".copy()" not in code and re.search(r"= f32_2 \* v\d+ +# PowBackward0", code)
    # The forward's forms are `quiet` (their kernels warn of nothing: torch's never do), so
    # the forward runs with numpy's warnings off from its first line, the loss's
    # subtraction included, in one block with the backward.
    assert re.search(r"q = quiet\(\).*\n    try:\n        v0 = x\d\.T ", code)
    assert re.search(r"\n        v\d+ = x\d - v\d+ ", code)
    # the forward, backward and update in that one block: each parameter's product by -lr
    # and its sum run with the warnings off, as in the kernel (an overflow is inf,
    # silently, as in torch)
    assert code.count("q = quiet()") == 1
    assert re.search(r"try:\n(        .*\n)*        u0 = n0 \* r\d+ .*\n        x\d \+= u0", code)
    compile(code, "<check>", "exec")  # it is Python


def test_command_prints_the_code(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch\n"
        "model = torch.nn.Linear(3, 2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "x = torch.ones(4, 3)\n"
        "@torch.compile\n"
        "def train_step():\n"
        "    optimizer.zero_grad()\n"
        "    loss = model(x).pow(2).mean()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    return loss\n"
        "for _ in range(2):\n"
        "    train_step()\n"
    )
    done = subprocess.run([sys.executable, "-m", "runtime.compile", str(program)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "def train_step():" in done.stdout
    assert "MeanBackward0" in done.stdout


# A step that reads its batch from module globals, as a training loop's body often does.
batch_x = batch_t = None
loop_model = loop_optimizer = None


def _loop_step():
    loop_optimizer.zero_grad()
    loss = runtime.nn.functional.cross_entropy(loop_model(batch_x), batch_t)
    loss.backward()
    loop_optimizer.step()
    return loss


def test_globals_rebound_each_step_are_read_each_step():
    global batch_x, batch_t, loop_model, loop_optimizer
    results = []
    for compiled in (False, True):
        loop_model, loop_optimizer, _ = _classifier_step(runtime, "Adam", lr=0.01)
        step = runtime.compile(_loop_step) if compiled else _loop_step
        losses = []
        for batch_x, batch_t in _batches(runtime, 8):  # noqa: B007 - globals the step reads
            losses.append(step().detach().numpy().tobytes())
        results.append((losses, _bits(loop_model)))
        if compiled:
            assert step.traces == 1 and step.fallback_reason is None
            assert "the step's global batch_x" in step.code
    assert results[0][0] == results[1][0]
    assert _same(results[0][1], results[1][1])


def test_guard_rebound_model_and_replaced_parameter():
    global batch_x, batch_t, loop_model, loop_optimizer
    batch_x, batch_t = _batches(runtime, 1)[0]
    loop_model, loop_optimizer, _ = _classifier_step(runtime, "SGD", lr=0.1)
    step = runtime.compile(_loop_step)
    step()
    step()
    loop_model, loop_optimizer, _ = _classifier_step(runtime, "SGD", lr=0.1)
    eager_model, eager_optimizer, _ = _classifier_step(runtime, "SGD", lr=0.1)
    got = step()
    loop_model, loop_optimizer = eager_model, eager_optimizer
    expected = _loop_step()
    assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
    assert step.traces == 2
    # a parameter replaced inside the model: a new trace, the new parameter used
    for model in (eager_model,):
        with runtime.no_grad():
            new = runtime.nn.Parameter(model[0].weight.detach() * 0.5)
        model[0].weight = new
    loop_model, loop_optimizer = eager_model, runtime.optim.SGD(eager_model.parameters(), lr=0.1)
    before = step.traces
    step()
    assert step.traces == before + 1
    assert new.grad is not None


def test_guard_requires_grad_and_anomaly_mode():
    (eager_model, _, eager_step), (model, _, _), compiled = _pair()
    for index in range(6):
        if index == 2:
            eager_model[0].bias.requires_grad_(False)
            model[0].bias.requires_grad_(False)
        if index == 4:
            with runtime.autograd.set_detect_anomaly(True):
                got, expected = compiled(), eager_step()
            assert "anomaly" in compiled.fallback_reason
        else:
            got, expected = compiled(), eager_step()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
        assert _same(_bits(model), _bits(eager_model)), index
    assert model[0].bias.grad is None
    assert compiled.traces == 3


def test_docs_show_the_code_the_command_prints(tmp_path):
    """docs/compile.md quotes a program and the code `python -m runtime.compile` prints for
    it: the quote must be what the command prints now."""
    import re

    blocks = re.findall(r"```\n(.*?)```", (ROOT / "docs" / "compile.md").read_text(), re.S)
    # The step compiled whole, and the model compiled on its own: each program (it begins
    # with its import), then the code printed for it.
    pairs = [(program, code) for program, code in zip(blocks, blocks[1:], strict=False)
             if program.startswith("import torch")]
    assert len(pairs) == 2
    for program, code in pairs:
        path = tmp_path / "prog.py"
        path.write_text(program)
        done = subprocess.run([sys.executable, "-m", "runtime.compile", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout == code


def test_printing_in_the_step_keeps_it_eager(capsys):
    """Python effects are not replayed: a step that prints a tensor runs eagerly, so it
    prints at every step, as without compile."""
    _, _, step = _tiny_step(runtime)

    def logged():
        loss = step()
        print(loss)
        return loss

    compiled = runtime.compile(logged)
    for _ in range(3):
        compiled()
    assert capsys.readouterr().out.count("tensor(") == 3
    assert "printing a tensor" in compiled.fallback_reason


def test_unsupported_steps_fall_back_with_reasons():
    w = runtime.ones(3, requires_grad=True)

    class Square(runtime.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    def with_grad():
        return runtime.autograd.grad((w * 3).sum(), w)[0]

    def with_function():
        w.grad = None
        loss = Square.apply(w).sum()
        loss.backward()
        return w.grad

    for step, reason in ((with_grad, "autograd.grad"), (with_function, "not a node of the spec")):
        compiled = runtime.compile(step)
        for _ in range(2):
            np.testing.assert_array_equal(compiled().numpy(), step().numpy())
        assert reason in compiled.fallback_reason
    with_torch = torch.ones(3, requires_grad=True)
    assert torch.autograd.grad((with_torch * 3).sum(), with_torch)[0].tolist() == \
        with_grad().tolist()


class _MySGD(runtime.optim.SGD):
    """A user's optimizer: a subclass with its own step."""

    def step(self, closure=None):
        return super().step(closure)


class _SignSGD(runtime.optim.Optimizer):
    """A user's optimizer written from the base class: p -= lr * sign(grad)."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, {"lr": lr})

    @runtime.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad.sign(), alpha=-group["lr"])


@pytest.mark.parametrize("cls", [_SignSGD, _MySGD], ids=["_SignSGD", "_MySGD"])
def test_an_optimizer_without_a_template_is_traced_through_its_own_code(cls):
    """Its ops are lines of the update; its learning rate, a Python float, is read at
    every step: a new one makes no new trace."""
    eager_model, eager_optimizer, eager_step = _classifier_step(runtime, cls, lr=0.01)
    model, optimizer, step = _classifier_step(runtime, cls, lr=0.01)
    compiled = runtime.compile(step)
    for index, (x, target) in enumerate(_batches(runtime, 6)):
        if index == 3:
            for group in (*eager_optimizer.param_groups, *optimizer.param_groups):
                group["lr"] = 0.05
        assert compiled(x, target).item() == eager_step(x, target).item()
        assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason is None
    assert compiled.traces == 1  # (the new learning rate is read at every step)
    assert f"{cls.__name__}.step: add_Tensor_, in place" in compiled.code


class _CountingSGD(runtime.optim.Optimizer):
    """A user's optimizer that keeps its step count as a Python number."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, {"lr": lr})
        self.count = 0

    @runtime.no_grad()
    def step(self, closure=None):
        self.count += 1
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"] / self.count)


def test_an_optimizer_that_changes_its_python_state_runs_eagerly_and_says_so():
    eager_model, _, eager_step = _classifier_step(runtime, _CountingSGD, lr=0.01)
    model, _, step = _classifier_step(runtime, _CountingSGD, lr=0.01)
    compiled = runtime.compile(step)
    for x, target in _batches(runtime, 4):
        assert compiled(x, target).item() == eager_step(x, target).item()
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason.startswith("_CountingSGD.step changes the optimizer's "
                                               "Python state")


@pytest.mark.parametrize("name", ["Rprop", "Adamax"])
def test_the_newer_optimizers_compile_or_say_why(name):
    """Rprop and Adamax, traced through their own code, equal eager bit for bit: their
    state is made before the traced step, and Adamax's step count, read as a Python
    number (`.item()`), is read at every call."""
    eager_model, _, eager_step = _classifier_step(runtime, name, lr=0.01)
    model, _, step = _classifier_step(runtime, name, lr=0.01)
    compiled = runtime.compile(step)
    for x, target in _batches(runtime, 6):
        assert compiled(x, target).item() == eager_step(x, target).item()
        assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason is None and compiled.traces == 1


def test_amsgrad_with_an_int_learning_rate_compiles():
    """AMSGrad (its maximum written with out=) with an int learning rate, which the guard
    holds by identity (a constant of the trace): compiled, equal to eager."""
    eager_model, _, eager_step = _classifier_step(runtime, "Adam", lr=1, amsgrad=True)
    model, _, step = _classifier_step(runtime, "Adam", lr=1, amsgrad=True)
    compiled = runtime.compile(step)
    for x, target in _batches(runtime, 3):
        assert compiled(x, target).item() == eager_step(x, target).item()
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.fallback_reason is None and compiled.traces == 1
    assert "lr0" not in compiled.code and "np.copyto(" in compiled.code


class _Recurrent(runtime.nn.Module):
    """An RNN classifier: its first hidden state is made in its forward (zeros)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = getattr(runtime.nn, kind)(6, 8, batch_first=True)
        self.head = runtime.nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_a_recurrent_step_compiles_and_equals_eager(kind):
    """The RNN modules make their first hidden state with a factory inside the step: a
    line of the step (`np.zeros(...)`), not a fallback; 20 steps give eager's bits."""
    models = []
    for _ in range(2):
        runtime.manual_seed(5)
        models.append(_Recurrent(kind))
    eager_model, model = models
    steps = []
    for m in models:
        optimizer = runtime.optim.Adam(m.parameters(), lr=1e-2)

        def step(x, target, m=m, optimizer=optimizer):
            optimizer.zero_grad()
            loss = runtime.nn.functional.cross_entropy(m(x), target)
            loss.backward()
            optimizer.step()
            return loss

        steps.append(step)
    compiled = runtime.compile(steps[1])
    rng = np.random.default_rng(4)
    for index in range(STEPS):
        x = runtime.tensor(rng.standard_normal((4, 5, 6)).astype(np.float32))
        target = runtime.tensor(rng.integers(0, 3, 4))
        got, expected = compiled(x, target), steps[0](x, target)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert compiled.fallback_reason is None, index
    assert _same(_bits(model), _bits(eager_model))
    assert compiled.traces == 1
    assert "np.zeros((1, 4, 8), " in compiled.code


def _gan(compiled: bool) -> tuple:
    """pytorch/examples' DCGAN step, small: two optimizers, three backwards, the noise
    drawn in the step (torch.randn), a label made by `full` and refilled in place, and
    the fake batch detached for the discriminator."""
    runtime.manual_seed(0)
    nn = runtime.nn
    generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh())
    critic = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1),
                           nn.Sigmoid())
    criterion = nn.BCELoss()
    optimizer_c = runtime.optim.Adam(critic.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizer_g = runtime.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))

    def step(real):
        critic.zero_grad()
        label = runtime.full((real.size(0),), 1.0, dtype=real.dtype)
        error_real = criterion(critic(real).view(-1), label)
        error_real.backward()
        fake = generator(runtime.randn(real.size(0), 4))
        label.fill_(0.0)
        error_fake = criterion(critic(fake.detach()).view(-1), label)
        error_fake.backward()
        optimizer_c.step()
        generator.zero_grad()
        label.fill_(1.0)
        error_g = criterion(critic(fake).view(-1), label)
        error_g.backward()
        optimizer_g.step()
        return error_real + error_fake, error_g

    run = runtime.compile(step) if compiled else step
    data = runtime.randn(STEPS, 6, 8)
    losses = [tuple(v.item() for v in run(data[index])) for index in range(STEPS)]
    return losses, _bits(generator) + _bits(critic), getattr(run, "fallback_reason", None)


def _vae(compiled: bool) -> tuple:
    """pytorch/examples' VAE step, small: the reparameterisation draws with randn_like."""
    runtime.manual_seed(0)
    nn, functional = runtime.nn, runtime.nn.functional
    encoder, mean, log_variance = nn.Linear(12, 8), nn.Linear(8, 2), nn.Linear(8, 2)
    decoder = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 12), nn.Sigmoid())
    model = nn.ModuleList([encoder, mean, log_variance, decoder])
    optimizer = runtime.optim.Adam(model.parameters(), lr=1e-3)

    def step(data):
        optimizer.zero_grad()
        hidden = functional.relu(encoder(data))
        mu, logvar = mean(hidden), log_variance(hidden)
        z = mu + runtime.randn_like(logvar) * runtime.exp(0.5 * logvar)
        loss = functional.binary_cross_entropy(decoder(z), data, reduction="sum") - \
            0.5 * runtime.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    data = runtime.rand(STEPS, 5, 12)
    losses = [run(data[index]).item() for index in range(STEPS)]
    return losses, _bits(model), getattr(run, "fallback_reason", None)


@pytest.mark.parametrize("program", [_gan, _vae])
def test_steps_that_draw_in_the_step_compile_and_equal_eager(program):
    """torch.randn and randn_like in the step are lines that draw again at every call,
    from the same generator in eager's order: 20 steps give eager's losses and bits."""
    expected, expected_bits, _ = program(False)
    got, bits, reason = program(True)
    assert reason is None
    assert got == expected and bits == expected_bits


def test_factories_in_the_step_are_lines_of_it():
    """zeros, full, arange, new_ones, ones_like and a number written into a tensor, made in
    the step: fresh arrays at each step (the step writes into one), equal to eager's; with
    requires_grad=True, eager."""
    def make():
        w = runtime.ones(4, requires_grad=True)
        optimizer = runtime.optim.SGD([w], lr=0.1)

        def step(x):
            optimizer.zero_grad()
            offset = runtime.zeros(4)
            offset[1] = 2.0  # written in place: a new array at each step
            scale = runtime.full((4,), 0.5) + runtime.arange(4) + x.new_ones(4) + \
                runtime.ones_like(x)
            loss = ((w * x + offset) * scale).pow(2).sum()
            loss.backward()
            optimizer.step()
            return loss, offset

        return w, step

    (eager_w, eager_step), (w, step) = make(), make()
    compiled = runtime.compile(step)
    x = runtime.tensor([1.0, -2.0, 3.0, 0.5])
    offsets = []
    for _ in range(4):
        (loss, offset), (expected, _) = compiled(x), eager_step(x)
        offsets.append(offset)
        assert loss.item() == expected.item()
        assert w.detach().numpy().tobytes() == eager_w.detach().numpy().tobytes()
        assert compiled.fallback_reason is None
    assert offsets[0] is not offsets[1] and offsets[0]._data is not offsets[1]._data
    assert offsets[-1].tolist() == [0.0, 2.0, 0.0, 0.0]
    assert "np.zeros((4,), " in compiled.code and ".copy()" in compiled.code

    def grad_leaf_in_step():
        v = runtime.zeros(3, requires_grad=True)
        (v * 2).sum().backward()
        return v.grad

    eager = runtime.compile(grad_leaf_in_step)
    for _ in range(2):
        assert eager().tolist() == [2.0, 2.0, 2.0]
    assert "requires_grad=True" in eager.fallback_reason


def test_cache_size_then_eager():
    eager_model, _, eager_step = _classifier_step(runtime, "SGD", lr=0.1)
    model, _, step = _classifier_step(runtime, "SGD", lr=0.1)
    compiled = runtime.compile(step)
    for batch in range(1, 11):
        x, t = _batches(runtime, 1, batch)[0]
        got, expected = compiled(x, t), eager_step(x, t)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes()
    assert compiled.traces == 8
    assert "cache" in compiled.fallback_reason
    assert _same(_bits(model), _bits(eager_model))


def test_forward_ad_level_is_a_guard():
    (eager_model, _, eager_step), (model, _, _), compiled = _pair()
    compiled()
    eager_step()
    with runtime.autograd.forward_ad.dual_level():
        compiled()
        eager_step()
        assert "forward-AD" in compiled.fallback_reason
    compiled()
    eager_step()
    assert compiled.fallback_reason is None
    assert _same(_bits(model), _bits(eager_model))


def test_numpy_warnings_as_in_eager():
    """A diverging run (inf, then NaN): the compiled steps warn as the eager ones do."""
    import warnings

    found = []
    for compiled in (False, True):
        _, _, step = _tiny_step(runtime, lr=1e4)
        step = runtime.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = [step().detach().numpy().tobytes() for _ in range(8)]
        found.append((losses, sorted({(w.category, str(w.message)) for w in caught})))
    assert found[0] == found[1]
    assert np.isnan(np.frombuffer(found[1][0][-1], np.float32)).all()


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_an_inference_function_compiles_when_nothing_it_returns_requires_grad(mode):
    """A forward alone (no backward) under no_grad: its lines are the whole function, and
    it returns eager's tensors, bit for bit (in train mode dropout draws again at every
    call, in eager's order); under inference_mode, whose tensors the generated code does
    not make, it runs eagerly."""
    def make():
        runtime.manual_seed(0)
        model = _mlp(runtime, [(12, 16), (16, 4)], dropout=0.5)
        getattr(model, mode)()

        def predict(x):
            with runtime.no_grad():
                scores = model(x)
                return scores.argmax(1), runtime.softmax(scores, 1)

        def infer(x):
            with runtime.inference_mode():
                return model(x)

        return predict, infer

    (eager, eager_infer), (predict, infer) = make(), make()
    compiled, compiled_infer = runtime.compile(predict), runtime.compile(infer)
    for x, _ in _batches(runtime, 4):
        runtime.manual_seed(3)
        got = compiled(x)
        runtime.manual_seed(3)
        expected = eager(x)
        assert [t.numpy().tobytes() for t in got] == [t.numpy().tobytes() for t in expected]
        assert [t.dtype for t in got] == [t.dtype for t in expected]
        assert not any(t.requires_grad for t in got)
        assert compiled_infer(x).is_inference() and eager_infer(x).is_inference()
    assert compiled.fallback_reason is None and compiled.traces == 1
    assert "backward" not in compiled.code and "kernels.argmax(" in compiled.code
    assert compiled_infer.fallback_reason == ("the step returns an inference tensor (made "
                                              "under torch.inference_mode())")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile's own imports
def test_compiling_a_module_keeps_it_a_module():
    model = _mlp(runtime, [(4, 3)])
    compiled = runtime.compile(model)
    x = runtime.ones(2, 4)
    assert [p.shape for p in compiled.parameters()] == [p.shape for p in model.parameters()]
    for _ in range(2):
        assert compiled(x).detach().numpy().tobytes() == model(x).detach().numpy().tobytes()
    # A forward whose result requires grad: a generated forward, and a generated backward
    # at its node (tests/test_compile_joint.py).
    assert compiled.fallback_reason is None
    assert compiled(x).grad_fn.name() == "CompiledFunctionBackward"
    reference = torch.compile(_mlp(torch, [(4, 3)]))
    assert [tuple(p.shape) for p in reference.parameters()] == \
        [tuple(p.shape) for p in compiled.parameters()]


def _scaled_steps(lib):
    """A step whose result depends on a closed-over number and a module's plain attribute,
    with setters to change both between calls."""
    model = _mlp(lib, [(30, 20), (20, 5)])
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(2)
    x = lib.tensor(rng.standard_normal((4, 30)).astype(np.float32))
    model.scale = 1.0
    scale = 2.0

    def step():
        optimizer.zero_grad()
        loss = (model(x) - scale - model.scale).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    def set_scale(value):
        nonlocal scale
        scale = value

    return model, step, set_scale


def test_a_changed_number_the_step_names_or_a_module_attribute_retraces():
    eager_model, eager_step, eager_set = _scaled_steps(runtime)
    model, step, set_scale = _scaled_steps(runtime)
    compiled = runtime.compile(step)
    changes = [None, None, ("scale", 3.0), None, ("attribute", 0.5), None, ("scale", 3)]
    for change in changes:
        if change and change[0] == "scale":
            eager_set(change[1])
            set_scale(change[1])
        elif change:
            eager_model.scale = model.scale = change[1]
        assert compiled().item() == eager_step().item(), change
        assert _same(_bits(model), _bits(eager_model)), change
    assert compiled.fallback_reason is None
    assert compiled.traces == 4  # the first, and one per change (3 is an int, not 3.0)


def test_a_tensor_read_through_a_container_is_read_there_at_every_call():
    """`batches[0]`: the list is guarded (its identity, its length), the tensor found there
    at every call and guarded by its metadata, as an argument is (Dynamo's source guards).
    """
    model = _mlp(runtime, [(30, 20), (20, 5)])
    rng = np.random.default_rng(3)
    batches = [runtime.tensor(rng.standard_normal((4, 30)).astype(np.float32))]

    def step():
        return model(batches[0]).pow(2).sum()

    compiled = runtime.compile(step)
    first = compiled().item()
    assert compiled.fallback_reason is None
    assert "batches[0]" in compiled.code
    batches[0] = batches[0] * 2  # the same metadata: the same trace, the new tensor
    assert compiled().item() == step().item() != first
    assert compiled.traces == 1 and compiled.fallback_reason is None
    batches[0] = runtime.tensor(rng.standard_normal((7, 30)).astype(np.float32))
    assert compiled().item() == step().item()  # another shape: a new trace
    assert compiled.traces == 2
    batches.append(batches[0])  # the list's length is guarded: a new trace, still right
    assert compiled().item() == step().item()
    assert compiled.traces == 3


# -- the speed work (issue 14's goals): each rewrite keeps eager's bits ----------------------

def test_generated_guard_agrees_with_the_plain_checks():
    """The guard is generated code (runtime/compile/guards.py): after every change to what
    the step depends on, each of these changes makes it fail, and undoing the change makes
    it pass again."""
    model, optimizer, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    compiled()
    entry = compiled.last
    assert entry.holds()
    weight = model[0].weight

    def replace_weight():
        model[0].weight = runtime.nn.Parameter(weight.detach().clone())

    def restore_weight():
        # (Module.__setattr__ moves a replaced parameter to the end: put it back in place.)
        parameters = model[0]._parameters
        bias = parameters["bias"]
        parameters.clear()
        parameters.update(weight=weight, bias=bias)

    changes = [
        (lambda: model.train(False), lambda: model.train(True)),
        (lambda: setattr(model[1], "inplace", True), lambda: setattr(model[1], "inplace", False)),
        (lambda: setattr(model[0], "extra", 1), lambda: delattr(model[0], "extra")),
        (lambda: weight.requires_grad_(False), lambda: weight.requires_grad_(True)),
        (replace_weight, restore_weight),
        (lambda: optimizer.param_groups[0].update(momentum=0.5),
         lambda: optimizer.param_groups[0].update(momentum=0)),
        (lambda: optimizer.param_groups[0].update(lr=np.float64(1e-3)),
         lambda: optimizer.param_groups[0].update(lr=1e-3)),
        (lambda: optimizer.state[weight].update(momentum_buffer=weight.detach().clone()),
         lambda: optimizer.state.pop(weight)),
    ]
    handle = None

    def hook():
        nonlocal handle
        handle = model[2].register_forward_hook(lambda *args: None)

    changes.append((hook, lambda: handle.remove()))
    # The weight's array replaced by one of another shape, then by the traced one again
    # (the guard's weak reference to the traced array holds again).
    traced = weight.detach()
    changes.append((lambda: setattr(weight, "data", runtime.zeros(20, 29)),
                    lambda: setattr(weight, "data", traced)))
    # A submodule swapped inside `_modules`, and an attribute the forward may call set to
    # another object of the same type.
    last, other = model[2], runtime.nn.Linear(20, 5)
    changes.append((lambda: model.__setitem__(2, other), lambda: model.__setitem__(2, last)))
    changes.append((lambda: setattr(model[1], "act", runtime.tanh),
                    lambda: setattr(model[1], "act", runtime.relu)))
    model[1].act = runtime.relu
    compiled()
    entry = compiled.last
    assert entry.holds()
    for index, (change, undo) in enumerate(changes):
        change()
        assert entry.holds() is False, index
        undo()
        assert entry.holds() is True, index
    assert "def guard():" in entry.guard_code


def test_a_forward_patched_on_the_class_traces_again():
    """`Model.forward = ...` after the trace: the guard holds the class's forward."""
    class Model(runtime.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = runtime.nn.Linear(3, 1)

        def forward(self, x):
            return self.layer(x)

    model, x = Model(), runtime.ones(2, 3)
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)

    def step():
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        return loss

    compiled = runtime.compile(step)
    compiled(), compiled()
    assert compiled.last.holds()
    original = Model.forward
    try:
        Model.forward = lambda self, x: self.layer(x) * 100
        assert compiled.last.holds() is False
        expected = (model(x) * 1).sum().item()
        assert compiled().item() == expected
        assert compiled.traces == 2
    finally:
        Model.forward = original


def _twin_steps(loss_of):
    """An eager step and a compiled one, each on its own one-layer model with SGD: zero_grad,
    `loss_of(model, *args)`, backward, step. (eager model, eager step), (model, compiled)."""
    def make():
        model = _mlp(runtime, [(12, 4)])
        optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)

        def step(*args):
            optimizer.zero_grad()
            loss = loss_of(model, *args)
            loss.backward()
            optimizer.step()
            return loss

        return model, step

    (eager_model, eager_step), (model, step) = make(), make()
    return (eager_model, eager_step), (model, runtime.compile(step))


def test_tuple_and_list_arguments_are_guarded_item_by_item():
    """A tuple or list argument (an RNN's hidden state, a batch) is read item by item: its
    type, length and each item are guarded as arguments are, and both forms of the guard
    agree; every call gives eager's bits."""
    def loss_of(model, batch, scale):
        x, target = batch
        return (model(x) * scale[0] - target).pow(2).sum()

    (eager_model, eager_step), (model, compiled) = _twin_steps(loss_of)
    x, target = _batches(runtime, 1)[0][0], runtime.ones(8, 4)
    entries = []
    calls = [((x, target), (2.0,)), ((x, target), (2.0,)), ([x, target], (2.0,)),
             ((x, target), (3.0,)), ((x[:4], target[:4]), (3.0,)), ((x, target, x), (3.0,)),
             ((x, target), (2.0,))]
    for index, args in enumerate(calls):
        if index:
            previous = compiled.last
            holds = previous.holds(args)
            assert holds is (index == 1), index
        if index == 5:  # three items where the step unpacks two: eager's error
            with pytest.raises(ValueError):
                compiled(*args)
            continue
        got, expected = compiled(*args), eager_step(*args)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
        assert compiled.fallback_reason is None, index
        entries.append(compiled.last)
    # The tuple, the list, 3.0, 4 rows, the three items (whose trace raised, as eager
    # does); the last call finds the first entry again.
    assert compiled.traces == 5 and entries[-1] is entries[0]


def test_a_dict_argument_is_guarded_by_its_keys_and_items():
    """A batch passed as a dict of str keys: its keys in their order and each item are
    guarded (a key with quotes and a newline reaches the code as a literal); every call
    gives eager's bits."""
    key = "in'put\n"

    def loss_of(model, batch):
        return (model(batch[key]) - batch["target"]).pow(2).sum() * batch["weight"]

    (eager_model, eager_step), (model, compiled) = _twin_steps(loss_of)
    x, target = _batches(runtime, 1)[0][0], runtime.ones(8, 4)
    batches = [{key: x, "target": target, "weight": 1.0}] * 2 + [
        {"target": target, key: x, "weight": 1.0},  # the same items, another key order
        {key: x, "target": target, "weight": 0.5}, {key: x, "target": target[:1], "weight": 0.5}]
    for index, batch in enumerate(batches):
        entry = compiled.last
        if entry is not None:
            assert entry.holds((batch,)) is (index == 1)
        got, expected = compiled(batch), eager_step(batch)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
        assert compiled.fallback_reason is None, index
    assert compiled.traces == 4
    assert repr(key) in compiled.code


def test_a_repeated_call_checks_its_arguments_and_modes_in_the_guard():
    """A call like the previous one runs that entry after its guard alone, which checks
    the arguments (a tensor's layout, dtype and requires_grad; a number's type and value:
    2, 2.0 and True each trace anew) and the global modes; both forms of the guard agree
    on each, and every call gives eager's bits."""
    def loss_of(model, x, k):
        return (model(x) * k).pow(2).sum() / 3  # numbers that stand for tensors

    (eager_model, eager_step), (model, compiled) = _twin_steps(loss_of)
    x = _batches(runtime, 1)[0][0]
    calls = [(x, 2), (x, 2), (x, 2.0), (x, True), (x, 3), (x.t().contiguous().t(), 3),
             (x.detach().requires_grad_(), 3), (x[:5], 3), (x, 3)]
    entries = []
    for index, args in enumerate(calls):
        if index:
            # The previous call's entry (its guard, and its plain checks) on these arguments:
            # only the second call is like the one before it.
            previous = compiled.last
            assert previous.holds(args) is (index == 1), index
        got, expected = compiled(*args), eager_step(*args)
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
        assert compiled.fallback_reason is None, index
        entries.append(compiled.last)
    # A trace each for 2, 2.0, True, 3, other strides, requires_grad, 5 rows; the last call
    # finds the entry of (x, 3) again.
    assert compiled.traces == len(set(map(id, entries))) == 7
    assert entries[-1] is entries[4]
    with runtime.no_grad():
        assert compiled.last.holds((x, 3)) is False
    with runtime.autograd.set_detect_anomaly(True):
        assert compiled.last.holds((x, 3)) is False
    assert compiled.last.holds((x, 3)) is True


class _Block(runtime.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = runtime.nn.Linear(3, 3)
        self.act = runtime.relu

    def forward(self, x):
        return self.act(self.linear(x))


def _swapping_run(compiled: bool) -> list[bytes]:
    """Two steps, a layer swapped (`model[1] = ...`), a step, a function attribute swapped
    (`block.act = torch.tanh`), two steps: the losses."""
    runtime.manual_seed(0)
    model = runtime.nn.Sequential(_Block(), runtime.nn.Linear(3, 1))
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x = runtime.randn(4, 3)

    def step():
        optimizer.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    losses = [run(), run()]
    model[1] = runtime.nn.Linear(3, 1)
    losses.append(run())
    model[0].act = runtime.tanh
    losses += [run(), run()]
    if compiled:
        assert run.traces == 3 and run.fallback_reason is None
    return [loss.detach().numpy().tobytes() for loss in losses]


def test_a_swapped_submodule_or_function_attribute_traces_again():
    """`model[1] = nn.Linear(...)` keeps `model._modules` the same dict with another module
    in it, and `self.act = torch.tanh` another function of the same type: either way the
    compiled step must run what eager runs now, not what it traced."""
    assert _swapping_run(compiled=True) == _swapping_run(compiled=False)


@pytest.mark.parametrize("lr", [np.float64(0.05), -1.0, 1])
def test_learning_rate_of_another_type_or_value_as_eager(lr):
    """SGD's update skips the kernel's dispatch for a Python float learning rate (plain
    numpy); another type retraces to the kernel, and lr == -1 (alpha == 1) stays plain:
    every step equals eager's bits."""
    (eager_model, eager_opt, eager_step), (model, opt, _), compiled = _pair()
    for index in range(5):
        if index == 2:
            eager_opt.param_groups[0]["lr"] = opt.param_groups[0]["lr"] = lr
        got, expected = compiled(), eager_step()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)), index
    assert compiled.traces == (1 if type(lr) is float else 2)
    assert ("lr0 = O0.param_groups[0]['lr']" in compiled.code) is (type(lr) is float)


def _special_steps(compiled: bool, dtype, make_optimizer, calls: int, seed: int) -> tuple:
    """`calls` optimizer steps (compiled or eager) on one parameter holding infinities,
    NaN, a signed zero and the largest float, whose gradient (of `(p * c).sum()`) is c,
    holding the same kinds and the smallest normal float: (the parameter, the
    optimizer, the step as run, (numpy's warnings, the message of the RuntimeError a step
    raised or None)). A hyperparameter the dtype cannot hold raises torch's error."""
    import warnings

    base = np.random.default_rng(seed).standard_normal(50).astype(dtype)
    base[:4] = [np.inf, -0.0, np.nan, np.finfo(dtype).max]
    scale = np.random.default_rng(seed + 1).standard_normal(50).astype(dtype)
    scale[:6] = [-np.inf, 0.0, 1.0, np.finfo(dtype).max, np.nan, np.finfo(dtype).tiny]
    param = runtime.nn.Parameter(runtime.tensor(base))
    c = runtime.tensor(scale)
    optimizer = make_optimizer(param)

    def step():
        optimizer.zero_grad()
        (param * c).sum().backward()
        optimizer.step()

    run = runtime.compile(step) if compiled else step
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for _ in range(calls):
                run()
        except RuntimeError as raised:
            error = str(raised)
    return param, optimizer, run, (sorted(str(w.message) for w in caught), error)


def _plain_update_run(compiled: bool, dtype, lr: float) -> tuple:
    """Two plain SGD steps (see _special_steps): the parameter's bits and the warnings."""
    def make(param):
        optimizer = runtime.optim.SGD([param], lr=0.1)
        optimizer.param_groups[0]["lr"] = lr  # (the constructor refuses a negative one)
        return optimizer

    param, _, run, warned = _special_steps(compiled, dtype, make, 2, 4)
    if compiled and warned[1] is None:
        # the parameter's array, as read (alpha == 1: the kernel, which adds unscaled)
        assert re.search(r"\n +(x0 \+= u\d+ |kernels\.add_Tensor_\(x0, )", run.code)
    return param.detach().numpy().tobytes(), warned


@pytest.mark.parametrize("lr", [1e-3, -1.0, 1e30, -2.5, 1e39, float("nan")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_sgd_update_is_the_kernels(dtype, lr):
    """The update the step writes for plain SGD (`n = -lr` as a 0-d array of the parameter's
    dtype, `u = n * grad`, then `p += u` with numpy's warnings off) against eager's kernel:
    the same bits, infinities, NaNs and signed zeros included, and the same numpy warnings
    (the product's, not the sum's); 1e39, which float32 cannot hold, raises torch's error in
    both; lr == -1 is alpha == 1, which the kernel adds unscaled."""
    got = _plain_update_run(True, dtype, lr)
    assert got == _plain_update_run(False, dtype, lr)
    overflows = dtype is np.float32 and lr == 1e39
    assert got[1][1] == (OVERFLOW_FLOAT if overflows else None)


def _update_run(compiled: bool, dtype, options: dict) -> tuple:
    """Three steps of an optimizer (Adam unless `cls` says; see _special_steps): the bits
    of the parameter and its state, their versions, and numpy's warnings."""
    cls = getattr(runtime.optim, options.pop("cls", "Adam"))
    param, optimizer, run, warned = _special_steps(
        compiled, dtype, lambda p: cls([p], **options), 3, 6)
    if compiled and warned[1] is None:
        assert run.fallback_reason is None and "# update" in run.code
    state = optimizer.state[param]
    tensors = [param, *(state[key] for key in sorted(state))]
    return [t.detach().numpy().tobytes() for t in tensors], [t._version for t in tensors], \
        warned


@pytest.mark.parametrize("options", [
    {"lr": 1e-3}, {"lr": 10.0, "betas": (0.5, 0.25), "eps": 1e-30},
    {"lr": 1e300},  # float64: the update's product overflows: numpy warns, as the kernel's does
    {"lr": 1e-2, "weight_decay": 0.5, "maximize": True},
    {"cls": "AdamW", "lr": 1e-2, "weight_decay": 0.1},
    {"cls": "AdamW", "lr": 1e-2, "weight_decay": 0},
    {"cls": "AdamW", "lr": 1e300},  # the decay factor's cast overflows: it warns
    {"lr": 1e-2, "amsgrad": True}, {"cls": "AdamW", "lr": 1e300, "amsgrad": True},
    {"cls": "RMSprop", "lr": 1e-2}, {"cls": "RMSprop", "lr": 1e300, "momentum": 0.9},
    {"cls": "RMSprop", "lr": 1e-2, "centered": True, "weight_decay": 0.1, "maximize": True},
    {"cls": "RMSprop", "lr": 1e-2, "centered": True, "momentum": 0.5, "alpha": 0.5},
    {"cls": "Adagrad", "lr": 1e-2}, {"cls": "Adagrad", "lr": 1e300, "lr_decay": 0.1},
    {"cls": "Adagrad", "lr": 1e-2, "weight_decay": 0.1, "maximize": True,
     "initial_accumulator_value": 0.5},
    {"cls": "Adadelta"}, {"cls": "Adadelta", "lr": 1e300, "rho": 0.5},
    {"cls": "Adadelta", "lr": 0.5, "eps": 1e-30, "weight_decay": 0.1, "maximize": True},
    # hyperparameters float32 cannot hold (they stay Python floats, which warn at each
    # call as the kernels' do) or holds only as zero
    {"lr": 1e-2, "eps": 1e39}, {"cls": "RMSprop", "lr": 1e-2, "eps": 1e-46, "alpha": 1e-46},
    {"cls": "Adadelta", "weight_decay": 1e39, "eps": 1e-46},
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_update_in_numpy_is_the_kernels(dtype, options):
    """Adam's, AdamW's, RMSprop's and Adagrad's updates as numpy lines against eager's
    kernels: the same bits of the parameter and its state, infinities, NaNs and signed
    zeros included, the same version counters and the same numpy warnings; a learning rate
    or weight decay float32 cannot hold raises torch's error in both (as torch's Adam,
    RMSprop, Adagrad and Adadelta do)."""
    got = _update_run(True, dtype, dict(options))
    assert got == _update_run(False, dtype, dict(options))
    huge = options.get("lr", 0) >= 1e300 or options.get("weight_decay", 0) >= 1e39
    assert got[2][1] == (OVERFLOW_FLOAT if huge and dtype is np.float32 else None)


def test_numpy_forms_from_the_spec_are_written_and_equal_eager():
    """The spec's `numpy:` forms (t: self.T, mm: self @ mat2, relu: np.maximum(self, 0),
    threshold_backward's bitwise AND for float32) replace the kernel calls in the code, and
    the step stays bitwise equal to eager and to the same step compiled without the
    optimisations."""
    eager_model, _, eager_step = _tiny_step(runtime)
    model, _, step = _tiny_step(runtime)
    plain_model, _, plain_step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    plain = CompiledStep(plain_step, optimizations=False)
    for index in range(STEPS):
        expected, got, other = eager_step(), compiled(), plain()
        assert got.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert other.detach().numpy().tobytes() == expected.detach().numpy().tobytes(), index
        assert _same(_bits(model), _bits(eager_model)) and \
            _same(_bits(plain_model), _bits(eager_model)), index
    code = compiled.code
    assert "= x0.T" in code and "= np.maximum(v1, f32_0)" in code and " @ x3" in code
    assert "kernels.mm(" not in code and "kernels.t(" not in code
    assert "kernels.threshold_backward(" not in code and ".view('i4') & (v" in code
    assert "kernels.mm(" in plain.code and "kernels.relu(" in plain.code
    assert "kernels.threshold_backward(" in plain.code


def test_a_numpy_form_that_disagrees_keeps_the_kernel(monkeypatch):
    """A form is written only where the traced call shows it gives the kernel's result:
    a wrong dtype, or a wrong value, and the line stays a kernel call."""
    import ast

    from runtime.compile import forms

    table = dict(forms.forms())
    table["mm"] = (table["mm"][0]._replace(
        tree=ast.parse("np.matmul(self, mat2).astype(np.float64)", mode="eval")),)
    table["relu"] = (table["relu"][0]._replace(tree=ast.parse("np.maximum(self, 1)",
                                                              mode="eval")),)
    table["addmm"] = (table["addmm"][0]._replace(tree=ast.parse(
        "(mat1 @ mat2).__iadd__(self + 0.5)", mode="eval")),)
    monkeypatch.setattr(forms, "forms", lambda: table)
    eager_model, _, eager_step = _tiny_step(runtime)
    model, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    for index in range(4):
        assert compiled().item() == eager_step().item()
        assert _same(_bits(model), _bits(eager_model)), index
    assert "kernels.mm(" in compiled.code and "kernels.relu(" in compiled.code
    assert "kernels.addmm(" in compiled.code
    assert ".T" in compiled.code  # t's form still agrees


@pytest.mark.parametrize("form, message", [
    ("self + os", "reads 'os', which is neither an argument"),
    ("np.load(self)", "numpy's ufuncs only, not np.load"),
    ("self.__iadd__(mat2)", "only into a product it makes (a @ b)"),
    ("self.T.__iadd__(mat2)", "only into a product it makes (a @ b)"),
    ("self.tofile(mat2)", "may not read .tofile"),
    ("self.__class__", "may not read .__class__"),
    ("lambda: self", "may not contain Lambda"),
    ("(x := self)", "may not contain NamedExpr"),
    ("print(self)", "ufuncs and an array's methods only"),
    ("self @", "must be a Python expression"),
    ("[{form: self @ mat2, when: self == 1}]", "when reads 'self', which is not a non-Tensor"),
    ("[{form: self @ mat2, when: alpha(1)}]", "when may not contain Call"),
    ("[{form: self @ mat2, when: self.shape == 2}]",
     "when may read a Tensor argument's .dtype only (like self.dtype == 'float32'), "
     "not self.shape"),
    ("[{form: self @ mat2, when: alpha.dtype == 1}]", "not alpha.dtype"),
    ("[{form: self @ mat2, when: self.dtype.__class__ == 1}]", "not self.dtype.__class__"),
    ("[{form: self @ mat2, when: alpha == 1, quiet: 1}]", "quiet must be true or false"),
    ("[{form: self @ mat2, loud: true}]", "a mapping with `form` and optionally"),
    ("[{when: alpha == 1}]", "a mapping with `form` and optionally"),
    ("[{form: np.load(self)}]", "numpy's ufuncs only, not np.load"),
])
def test_the_spec_checks_numpy_forms(form, message):
    from codegen.load import parse_spec
    from codegen.model import NumpyForm, SpecError

    text = ("- name: mm(Tensor self, Tensor mat2, *, Scalar alpha=1) -> Tensor\n"
            "  self: grad\n  mat2: grad\n"
            f"  result: self_t\n  numpy: {form if form.startswith('[') else repr(form)}\n")
    with pytest.raises(SpecError, match=re.escape(message)):
        parse_spec(text, "spec.yaml", frozenset())
    good = text.replace(text[text.index("numpy: "):], "numpy: 'self @ mat2'\n")
    assert parse_spec(good, "spec.yaml", frozenset())[0].numpy_forms == \
        (NumpyForm("self @ mat2"),)
    listed = text.replace(text[text.index("numpy: "):], "numpy:\n    - {form: self @ mat2, "
                          "when: alpha == 1, quiet: true}\n    - self @ mat2 * alpha\n")
    assert parse_spec(listed, "spec.yaml", frozenset())[0].numpy_forms == \
        (NumpyForm("self @ mat2", "alpha == 1", True), NumpyForm("self @ mat2 * alpha"))
    typed = listed.replace("when: alpha == 1", "when: self.dtype == 'float32' and "
                           "mat2.dtype == 'float32'")
    assert parse_spec(typed, "spec.yaml", frozenset())[0].numpy_forms[0].when == \
        "self.dtype == 'float32' and mat2.dtype == 'float32'"


def _two_backwards(lib, clip: bool = False):
    """A step with two backward passes into one Linear (the second accumulates into the
    .grad the first set), or one, then the head's gradients clipped in place."""
    model = _mlp(lib, [(6, 4)])
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.tensor(np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        if not clip:
            model(x).pow(2).sum().backward()
        loss = model(x * 2).sum()
        loss.backward()
        if clip:
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.01)
        optimizer.step()
        return loss

    return model, optimizer, step


@pytest.mark.parametrize("clip", [False, True])
def test_the_update_reads_a_grad_from_its_variable_only_while_it_is_known(clip):
    """The update reads `.grad` as the step left it: the backward's variable (`r0 = g11`)
    where the step set `.grad` from it and nothing since can have replaced it (the
    TinyModel); after a second backward's accumulate, or gradients clipped in place, the
    `.grad` as it is. Either way the step equals eager, bit for bit."""
    _, _, step = _tiny_step(runtime)
    tiny = runtime.compile(step)
    tiny()
    assert re.search(r"r0 = g\d+ +# model.0.weight.grad, as backward left it", tiny.code)
    (eager_model, _, eager_step), (model, _, _), compiled = _pair(
        functools.partial(_two_backwards, clip=clip))
    for index in range(4):
        assert compiled().item() == eager_step().item(), index
        assert _same(_bits(model), _bits(eager_model)), index
    assert compiled.fallback_reason is None
    assert ("accumulate(T" in compiled.code) is not clip
    # (A .grad that a later line reads or adds to is set where the backward set it.)
    code = compiled.code
    assert code.index("._grad = new(") < code.index("# update")


def test_bias_gradient_ones_and_grad_slots_written_directly():
    """A bias's gradient is `c @ g` with the ones vector made once (kernels.sum_to's own
    product), and `.grad` emptied by zero_grad is set without accumulate(); with
    set_to_none=False the accumulate stays (the slot holds last step's tensor)."""
    _, _, step = _tiny_step(runtime)
    compiled = runtime.compile(step)
    compiled()
    code = compiled.code
    assert "._grad = new(" in code and "accumulate(" not in code
    assert any(line.split("#")[0].strip().endswith(f"@ {v}") for line in code.splitlines()
               for v in ("g3",))
    eager_model, eager_opt, _ = _tiny_step(runtime)
    model, opt, _ = _tiny_step(runtime)
    rng = np.random.default_rng(1)
    x = runtime.tensor(rng.standard_normal((16, 30)).astype(np.float32))

    def keeping(model, opt):
        def step():
            opt.zero_grad(set_to_none=False)
            loss = model(x).pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        return step

    eager, compiled = keeping(eager_model, eager_opt), runtime.compile(keeping(model, opt))
    for index in range(4):
        assert compiled().item() == eager().item()
        assert _same(_bits(model), _bits(eager_model)), index
        for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
            assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes()
    assert "accumulate(" in compiled.code


def _special_values(value):
    """A float array with infinities, NaN, signed zeros and a value whose square overflows
    float32 written over its first elements (as many as fit)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f" or not value.size:
        return value
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3e38, -1e20], value.dtype)
    flat = value.copy().reshape(-1)
    count = min(flat.size, specials.size)
    flat[:count] = specials[:count]
    return flat.reshape(value.shape)


def _run_quietly_or_not(function, quiet):
    import warnings

    from runtime import kernels

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            if quiet:
                with kernels.silenced():
                    result = function()
            else:
                result = function()
    return result, sorted(str(w.message) for w in caught)


def test_every_numpy_form_is_its_kernel():
    """Each `numpy:` form of the spec, on each sample of its op where its `when` holds, in
    float64 and float32, and with infinities, NaN, signed zeros and overflowing values
    written in: where it gives the kernel's dtype and shape (which depend on nothing the
    guards do not keep: elsewhere the trace never writes it), the same bits, and the same
    numpy warnings (a `quiet` form runs with them off, so its kernel must warn of nothing
    either)."""
    from codegen.verify import load, samples
    from runtime import kernels
    from runtime.compile import forms

    table = forms.forms()
    by_kernel = {info.name.replace(".", "_"): info for info in load()}
    checked = set()
    for name, entries in table.items():
        info = by_kernel[name]
        for sample in samples(info):
            for dtype in (np.float64, np.float32):
                for special in (False, True):
                    values = {k: v.astype(dtype) if isinstance(v, np.ndarray) and
                              v.dtype.kind == "f" else v for k, v in sample.args.items()}
                    if special:
                        values = {k: _special_values(v) for k, v in values.items()}
                    args = tuple(values.get(p, entries[0].defaults.get(p))
                                 for p in entries[0].params)
                    expected, warned = _run_quietly_or_not(
                        functools.partial(getattr(kernels, name), *args), False)
                    for form in entries:
                        bound = {**form.defaults, **dict(zip(form.params, args, strict=True))}
                        if form.when is not None and not eval(  # noqa: S307
                                compile(form.when, "<when>", "eval"), {}, bound):
                            continue
                        got, form_warned = _run_quietly_or_not(
                            lambda form=form, bound=bound: eval(  # noqa: S307
                                compile(form.tree, "<form>", "eval"), {"np": np}, bound),
                            form.quiet)
                        where = (name, ast_text(form), sample.index, dtype, special)
                        if type(got) is not np.ndarray or got.dtype != expected.dtype or \
                                got.shape != expected.shape:
                            continue  # never written for these shapes and dtypes (forms.py)
                        assert np.ascontiguousarray(got).tobytes() == \
                            np.ascontiguousarray(expected).tobytes(), where
                        assert form_warned == warned, where
                        checked.add((name, ast_text(form)))
                        break  # the first form that applies is the one written
    unchecked = {(name, ast_text(form)) for name, entries in table.items()
                 for form in entries} - checked
    assert not unchecked and len(table) >= 10


def ast_text(form):
    import ast

    return ast.unparse(form.tree)


@pytest.mark.parametrize("name", ["np", "kernels", "v0", "c1"])
def test_a_step_named_as_a_name_of_the_generated_code(name):
    """The generated function takes the step's name, unless that would shadow a name its
    code reads (numpy as `np`, a variable `v0`): then it is `step`."""
    results = []
    for compiled in (False, True):
        model, _, step = _tiny_step(runtime)
        step.__name__ = name
        run = runtime.compile(step) if compiled else step
        losses = [run().detach().numpy().tobytes() for _ in range(3)]
        results.append((losses, _bits(model)))
    assert results[0] == results[1]
    assert run.fallback_reason is None and run.code.startswith("def step():")


history: list = []


def test_a_step_that_appends_to_a_global_list():
    """A step that keeps its losses in a global list changes what its guards read: each
    call runs eagerly (the list grows at every call, as in eager), the reason says why,
    and tracing stops once the cache is full (a trace that stops counts too)."""
    model, _, step = _tiny_step(runtime)

    def keeping():
        loss = step()
        history.append(loss.detach())
        return loss

    history.clear()
    compiled = runtime.compile(keeping)
    for _ in range(12):
        compiled()
    assert len(history) == 12 and compiled.traces == 8
    assert compiled.fallback_reason == (
        "the cache of 8 traces is full (guards kept failing; the last trace stopped: the step "
        "changes what history holds (a list, dict or set: Python that later calls would not "
        "repeat))")


def test_the_returned_loss_carries_eagers_spent_node():
    """The loss a compiled step returns prints as eager's does (`grad_fn=<SumBackward0>`),
    requires grad, and a second backward raises eager's error: its graph was spent by the
    step's backward."""
    results = []
    for compiled in (False, True):
        _, _, step = _tiny_step(runtime)
        run = runtime.compile(step) if compiled else step
        for _ in range(3):
            loss = run()
        with pytest.raises(RuntimeError) as error:
            loss.backward()
        results.append((repr(loss).split("grad_fn=")[1], loss.grad_fn.name(),
                        loss.requires_grad, loss.is_leaf, str(error.value)))
    assert results[0] == results[1]
    assert run.fallback_reason is None


def test_a_returned_loss_whose_graph_saved_nothing_runs_eagerly():
    """`(w + 1).sum()` saves no tensor: after the step's backward, another backward through
    the returned loss works in eager (and in torch), adding to `.grad`. The generated code
    keeps no graph, so such a step runs eagerly, and the second backward works as in eager."""
    def plus_one_step(lib):
        w = lib.ones(3, requires_grad=True)
        optimizer = lib.optim.SGD([w], lr=0.1)

        def step():
            optimizer.zero_grad()
            loss = (w + 1).sum()
            loss.backward()
            optimizer.step()
            return loss

        return w, step

    grads = []
    for lib, compiled in ((torch, False), (runtime, False), (runtime, True)):
        w, step = plus_one_step(lib)
        run = runtime.compile(step) if compiled else step
        for _ in range(3):
            loss = run()
        loss.backward()
        grads.append(w.grad.tolist())
    assert grads[0] == grads[1] == grads[2] == [2.0, 2.0, 2.0]
    assert run.fallback_reason == (
        "the step returns a tensor whose graph held no saved tensors (in eager another "
        "backward through it works; the generated code makes no graph)")


def test_a_returned_graph_the_backward_did_not_walk_runs_eagerly():
    """A step that also returns a tensor whose graph its backward did not walk (another
    model's output) runs eagerly: a later backward through that graph works, as in eager."""
    model, _, step = _tiny_step(runtime)
    other = runtime.nn.Linear(30, 2)
    x = runtime.ones(4, 30)

    def both():
        return step(), other(x)

    compiled = runtime.compile(both)
    for _ in range(3):
        loss, out = compiled()
    out.sum().backward()
    assert other.weight.grad is not None and loss.grad_fn.name() == "SumBackward0"
    assert compiled.fallback_reason == (
        "the step returns a tensor whose graph its backward did not walk (the generated code "
        "makes no graph for a later backward)")


def test_numbers_beside_arrays_become_named_0d_arrays():
    """The optimisation's rule (optimize.py): a Python number beside an array becomes a 0-d
    array of the dtype numpy converts it to, where the traced values give the same bits;
    a number numpy would refuse or overflow on, a bool, a power's exponent, a line that
    calls a kernel or writes with `out=` stay as they were."""
    import ast

    from runtime.compile.emit import Line, Source
    from runtime.compile.optimize import _numbers_as_arrays

    traced = {"a": np.arange(-3, 3, dtype=np.int8), "f": np.linspace(-1, 1, 6, dtype=np.float32),
              "d": np.linspace(-1, 1, 6)}
    cases = {
        "f * 2": "f * f32_2", "2 * d": "f64_2 * d", "np.maximum(f, 0)": "np.maximum(f, f32_0)",
        "f <= -0.5": "f <= f32_m0_5", "a * 2.5": "a * f64_2_5", "(a > 0).view('i1') - 1":
        "(a > i8_0).view('i1') - i8_1", "a + 300": "a + 300", "f * 1e300": "f * 1e+300",
        "f * True": "f * True", "f ** 2": "f ** 2", "kernels.mul(f, 2)": "kernels.mul(f, 2)",
        "np.add(f, 2, out=f)": "np.add(f, 2, out=f)", "a[0] + 1": "a[0] + 1",
    }
    source = Source(lines=[Line((f"r{i}",), ast.parse(text, mode="eval").body, (), "",
                                "backward") for i, text in enumerate(cases)],
                    traced=dict(traced))
    _numbers_as_arrays(source)
    assert [ast.unparse(line.tree) for line in source.lines] == list(cases.values())
    for name in ("f32_2", "f64_2", "f32_0", "f32_m0_5", "f64_2_5", "i8_0", "i8_1"):
        value = source.namespace[name]
        assert value.ndim == 0 and not value.flags.writeable
        assert value.dtype.name == {"f": "float", "i": "int"}[name[0]] + name[1:].split("_")[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numbers_as_arrays_keep_eager_bits_and_warnings(dtype):
    """The TinyModel's step, its input holding infinities, NaN, -0.0 and a value whose square
    overflows: the compiled step (`f32_2 * v5`, `np.maximum(v1, f32_0)`) gives eager's
    loss and parameters, bit for bit, and the same numpy warnings: none from the backward,
    which the engine runs with them off (the traced call's and the step's backward lines
    too; before, their matrix products warned of the NaN)."""
    import warnings

    def run(compiled):
        model = _mlp(runtime, [(6, 5), (5, 3)]).to(getattr(runtime, np.dtype(dtype).name))
        optimizer = runtime.optim.SGD(model.parameters(), lr=0.01)
        values = np.random.default_rng(4).standard_normal((4, 6)).astype(dtype)
        values[0, :4] = [np.inf, np.nan, -0.0, 1e30 if dtype == np.float32 else 1e200]
        x, y = runtime.tensor(values), runtime.ones(4, 3, dtype=model[0].weight.dtype)

        def step():
            optimizer.zero_grad()
            loss = (y - model(x)).pow(2).sum()
            loss.backward()
            optimizer.step()
            return loss

        run = runtime.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            losses = [run().detach().numpy().tobytes() for _ in range(3)]
        if compiled:
            prefix = "f32" if dtype == np.float32 else "f64"
            assert f"{prefix}_2 * v" in run.code and f"np.maximum(v1, {prefix}_0)" in run.code
        return losses, _bits(model), sorted(str(w.message) for w in caught)

    assert run(True) == run(False)


@pytest.mark.parametrize("lr", [0.5, 1e39])
def test_a_learning_rate_float32_cannot_hold_is_refused(lr):
    """SGD's `-lr` is a 0-d array of the parameters' dtype where it converts without
    overflow; a finite learning rate float32 cannot hold (1e39), set after the step was
    compiled, raises torch's error in the compiled step as in eager and in torch, the
    weights left as they were, and nothing warns."""
    import warnings

    def run(module, compiled):
        weights = [module.ones(3, requires_grad=True), module.ones(2, requires_grad=True)]
        optimizer = module.optim.SGD(weights, lr=0.1)

        def step():
            optimizer.zero_grad()
            (weights[0].sum() + weights[1].sum() * 2).backward()
            optimizer.step()

        run = runtime.compile(step) if compiled else step
        run()  # (traced here, at lr 0.1)
        optimizer.param_groups[0]["lr"] = lr
        before = [w.detach().numpy().tobytes() for w in weights]
        error = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                for _ in range(2):
                    run()
            except RuntimeError as raised:
                error = str(raised)
        if compiled:
            assert run.fallback_reason is None and "abs(-lr0)" in run.code
        after = [w.detach().numpy().tobytes() for w in weights]
        return after, sorted(str(w.message) for w in caught), error, after == before

    got, expected = run(runtime, True), run(runtime, False)
    assert got == expected
    assert expected[1:] == run(torch, False)[1:]
    assert expected[2] == (OVERFLOW_FLOAT if lr == 1e39 else None)
    assert expected[3] is (lr == 1e39)


def test_a_number_read_afresh_writes_the_arithmetic_done_on_it():
    """A Number (the learning rate, a step count) keeps the source of each arithmetic on
    it, which evaluates to the same float; numbers of other types stay outside."""
    import ast

    from runtime.compile.emit import reads_of
    from runtime.compile.numbers import Number

    lr = Number(0.01, ast.Name("lr0", ast.Load()))
    step = Number(3.0, ast.Name("n0", ast.Load()))
    alpha = -lr / (1 - 0.9 ** step)
    assert type(alpha) is Number and reads_of(alpha.tree) == ("lr0", "n0")
    text = ast.unparse(alpha.tree)
    assert text == "-lr0 / (1 - 0.9 ** n0)"
    assert eval(text, {"lr0": 0.01, "n0": 3.0}) == float(alpha) == -0.01 / (1 - 0.9 ** 3.0)
    assert type(lr * np.ones(2)) is np.ndarray  # (no trace listening: nothing stops)
