"""runtime.compile guards what a step reaches through objects (`self.model`, `self.opt`,
`self.x`, a dict or list it names) by where it found it, as Dynamo guards `L['self'].x`:
such a step compiles, equals eager bit for bit, and rebinding any link makes a new trace.
Eager gradgen is checked against torch on the same programs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime

STEPS = 20


def _weights(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(20, 10), (20,), (5, 20), (5,)]
    return [rng.uniform(-0.3, 0.3, shape).astype(np.float32) for shape in shapes]


def _data(batch: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((batch, 10)).astype(np.float32),
            rng.standard_normal((batch, 5)).astype(np.float32))


def _trainer_class(lib):
    class TinyModel(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = lib.nn.Linear(10, 20)
            self.relu = lib.nn.ReLU()
            self.fc2 = lib.nn.Linear(20, 5)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    class Trainer:
        """The step written over `self.` attributes, as trainer classes are."""

        def __init__(self, batch: int = 16, seed: int = 0) -> None:
            self.model = TinyModel()
            with lib.no_grad():
                for parameter, value in zip(self.model.parameters(), _weights(seed),
                                            strict=True):
                    parameter.copy_(lib.tensor(value))
            self.opt = lib.optim.SGD(self.model.parameters(), lr=0.01)
            x, y = _data(batch)
            self.x, self.y = lib.tensor(x), lib.tensor(y)

        def step(self):
            self.opt.zero_grad()
            loss = (self.y - self.model(self.x)).pow(2).sum()
            loss.backward()
            self.opt.step()
            return loss

    return Trainer


def _bits(model) -> list[bytes]:
    return [p.detach().numpy().tobytes() for p in model.parameters()]


def _run_both(change=None, steps: int = STEPS):
    """An eager and a compiled trainer, stepped together; `change(trainer, lib, k)` before
    step k changes both alike. Returns the compiled step and the eager and compiled losses."""
    Trainer = _trainer_class(runtime)
    eager, compiled_trainer = Trainer(), Trainer()
    compiled = runtime.compile(compiled_trainer.step)
    losses = []
    for k in range(steps):
        if change is not None:
            change(eager, k)
            change(compiled_trainer, k)
        want, got = eager.step(), compiled()
        assert got.detach().numpy().tobytes() == want.detach().numpy().tobytes(), k
        assert _bits(compiled_trainer.model) == _bits(eager.model), k
        losses.append(want.item())
    return compiled, compiled_trainer, losses


def test_a_step_over_self_attributes_compiles_and_equals_eager():
    compiled, trainer, losses = _run_both()
    assert compiled.fallback_reason is None
    assert compiled.traces == 1
    assert "self.x" in compiled.code and "self.y" in compiled.code
    # eager gradgen as torch computes it (the oracle), over the same 20 steps
    TorchTrainer = _trainer_class(torch)
    reference = TorchTrainer()
    expected = [reference.step().item() for _ in range(STEPS)]
    np.testing.assert_allclose(losses, expected, rtol=1e-5)
    for ours, theirs in zip(trainer.model.parameters(), reference.model.parameters(),
                            strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_the_generated_guard_agrees_with_the_plain_checks():
    Trainer = _trainer_class(runtime)
    trainer = Trainer()
    compiled = runtime.compile(trainer.step)
    compiled()
    entry = compiled.last
    assert entry.holds()
    for rebind in (lambda: setattr(trainer, "x", runtime.zeros(3, 10)),
                   lambda: setattr(trainer.model, "fc1", runtime.nn.Linear(10, 20)),
                   lambda: setattr(trainer, "opt", runtime.optim.SGD(
                       trainer.model.parameters(), lr=0.01)),
                   lambda: setattr(trainer, "model", _trainer_class(runtime)().model)):
        saved = (trainer.x, trainer.model, trainer.model.fc1, trainer.opt)
        rebind()
        assert not entry.holds()
        trainer.x, trainer.model, trainer.opt = saved[0], saved[1], saved[3]
        trainer.model.fc1 = saved[2]
        assert entry.holds()


def test_rebinding_self_x_reads_the_new_tensor_and_a_new_shape_retraces():
    def change(trainer, k):
        if k == 5:  # same metadata: the same trace reads the new tensor
            trainer.x = runtime.tensor(_data(16, seed=7)[0])
        if k == 10:  # another batch size: a new trace
            x, y = _data(32, seed=8)
            trainer.x, trainer.y = runtime.tensor(x), runtime.tensor(y)

    compiled, _, _ = _run_both(change)
    assert compiled.traces == 2
    assert compiled.fallback_reason is None


def test_rebinding_a_submodule_retraces():
    def change(trainer, k):
        if k == 6:
            fresh = runtime.nn.Linear(10, 20)
            with runtime.no_grad():
                fresh.weight.copy_(runtime.tensor(_weights(3)[0]))
                fresh.bias.copy_(runtime.tensor(_weights(3)[1]))
            trainer.model.fc1 = fresh
            trainer.opt = runtime.optim.SGD(trainer.model.parameters(), lr=0.01)

    compiled, _, _ = _run_both(change)
    assert compiled.traces == 2
    assert compiled.fallback_reason is None


@pytest.mark.parametrize("make", [
    lambda params: runtime.optim.SGD(params, lr=0.02, momentum=0.9),
    lambda params: runtime.optim.Adam(params, lr=1e-3),
    lambda params: runtime.optim.AdamW(params, lr=1e-3, weight_decay=0.1),
], ids=["SGD momentum", "Adam", "AdamW"])
def test_rebinding_the_optimizer_retraces(make):
    def change(trainer, k):
        if k == 4:
            trainer.opt = make(trainer.model.parameters())

    compiled, _, _ = _run_both(change)
    assert compiled.traces >= 2
    assert compiled.fallback_reason is None


def test_rebinding_the_model_retraces():
    Trainer = _trainer_class(runtime)

    def change(trainer, k):
        if k == 3:
            trainer.model = Trainer(seed=5).model
            trainer.opt = runtime.optim.SGD(trainer.model.parameters(), lr=0.01)

    compiled, _, _ = _run_both(change, steps=8)
    assert compiled.traces == 2
    assert compiled.fallback_reason is None


def test_tensors_in_a_dict_and_an_object_named_by_a_closure():
    """A batch in a dict the step names, a model and optimizer held by an object in a
    closure cell: each guarded along its chain, each batch found anew."""
    def make():
        trainer = _trainer_class(runtime)()
        # (Copies: the same tensor at two places, trainer.x and batch["x"], would be
        # guarded at both: test_a_tensor_found_at_two_places_is_guarded_at_both.)
        batch = {"x": trainer.x.clone(), "y": trainer.y.clone()}

        def step():
            trainer.opt.zero_grad()
            loss = (batch["y"] - trainer.model(batch["x"])).pow(2).sum()
            loss.backward()
            trainer.opt.step()
            return loss

        return trainer, batch, step

    eager, eager_batch, eager_step = make()
    mine, batch, step = make()
    compiled = runtime.compile(step)
    for k in range(8):
        if k == 4:
            for holder in (eager_batch, batch):
                holder["x"] = runtime.tensor(_data(16, seed=11)[0])
        assert compiled().detach().numpy().tobytes() == \
            eager_step().detach().numpy().tobytes(), k
        assert _bits(mine.model) == _bits(eager.model), k
    assert compiled.fallback_reason is None
    assert compiled.traces == 1


def test_a_step_that_rebinds_its_own_attribute_runs_eagerly():
    """`self.h = ...` in the step is Python the generated code would not repeat."""
    class Recurrent:
        def __init__(self) -> None:
            self.cell = runtime.nn.Linear(4, 4)
            with runtime.no_grad():
                self.cell.weight.copy_(runtime.tensor(np.eye(4, dtype=np.float32) * 0.5))
                self.cell.bias.fill_(0.25)
            self.h = runtime.ones(2, 4)

        def step(self):
            self.h = self.cell(self.h).detach()
            return self.h.sum()

    eager, mine = Recurrent(), Recurrent()
    compiled = runtime.compile(mine.step)
    for _ in range(4):
        assert compiled().item() == eager.step().item()
    assert "rebinds self.h" in compiled.fallback_reason
    assert np.array_equal(mine.h.numpy(), eager.h.numpy())


@pytest.mark.parametrize("lib", [runtime, torch], ids=["gradgen", "torch"])
def test_a_member_set_again_keeps_its_place(lib):
    """`model.fc1 = Linear(...)` keeps fc1 first among the children and parameters, as in
    torch (the guards compare a module's members in order: set back, they hold again)."""
    model = _trainer_class(lib)().model
    model.fc1 = lib.nn.Linear(10, 20)
    model.extra = lib.nn.Parameter(lib.zeros(1))
    model.extra = lib.nn.Parameter(lib.ones(1))
    model.fc2 = lib.nn.Linear(20, 5)
    names = [name for name, _ in model.named_parameters()]
    torch_model = _trainer_class(torch)().model
    torch_model.fc1 = torch.nn.Linear(10, 20)
    torch_model.extra = torch.nn.Parameter(torch.zeros(1))
    torch_model.extra = torch.nn.Parameter(torch.ones(1))
    torch_model.fc2 = torch.nn.Linear(20, 5)
    assert names == [name for name, _ in torch_model.named_parameters()]
    assert list(model._modules) == list(torch_model._modules)


def test_compile_has_one_engine_and_small_functions():
    """runtime/compile/ traces the backward with the engine's GraphTask (no loop, ready
    heap or sum_to of its own), and no function there is above complexity 15 (issue 30)."""
    from pathlib import Path

    from radon.complexity import cc_visit

    folder = Path(runtime.__file__).parent / "compile"
    too_complex = []
    for path in sorted(folder.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "heapq" not in text and "_sequence_nr, next(" not in text, path.name
        stack = list(cc_visit(text))
        while stack:
            block = stack.pop()
            stack.extend(getattr(block, "closures", ()))
            if block.complexity > 15:
                too_complex.append(f"{path.name}:{block.lineno} {block.fullname}")
    assert too_complex == []


def test_a_module_tensor_attribute_and_a_batch_tuple_on_self():
    """A module's plain tensor attribute (not a parameter or buffer) is held as the module's
    attributes are, by identity, and checked by its metadata; a batch kept as a tuple on
    self is read from the tuple, which is guarded by identity and length."""
    class Shifted(runtime.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = runtime.nn.Linear(4, 3)
            with runtime.no_grad():
                self.fc.weight.copy_(runtime.tensor(_weights(2)[2][:3, :4]))
                self.fc.bias.fill_(0.125)
            self.shift = runtime.ones(3) * 0.5

        def forward(self, x):
            return self.fc(x) + self.shift

    class Holder:
        def __init__(self) -> None:
            self.model = Shifted()
            self.batch = (runtime.tensor(_data(6)[0][:, :4]), runtime.ones(6, 3))

        def step(self):
            x, y = self.batch
            return (self.model(x) - y).pow(2).sum()

    eager, mine = Holder(), Holder()
    compiled = runtime.compile(mine.step)
    for k in range(6):
        if k == 2:
            for holder in (eager, mine):
                holder.model.shift = runtime.ones(3) * 2  # the module's attribute: a new trace
        if k == 4:
            for holder in (eager, mine):
                holder.batch = (holder.batch[0] * 3, holder.batch[1])  # a new tuple
        assert compiled().item() == eager.step().item(), k
    assert compiled.fallback_reason is None
    assert compiled.traces == 3
    reference = torch.nn.Linear(4, 3)
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(_weights(2)[2][:3, :4]))
        reference.bias.fill_(0.125)
    x = torch.tensor(_data(6)[0][:, :4]) * 3
    expected = (reference(x) + torch.ones(3) * 2 - torch.ones(6, 3)).pow(2).sum().item()
    np.testing.assert_allclose(compiled().item(), expected, rtol=1e-6)


def test_a_tensor_found_at_two_places_is_guarded_at_both():
    """`self.x` and `self.batch[0]` are one tensor when traced: the step reads the first,
    so rebinding the second alone makes a new trace. A parameter also kept on self
    (`self.w`) is held as the module's, and rebinding `self.w` makes a new trace too."""
    class Twice:
        def __init__(self) -> None:
            self.model = runtime.nn.Linear(4, 2)
            with runtime.no_grad():
                self.model.weight.copy_(runtime.tensor(_weights(4)[2][:2, :4]))
                self.model.bias.fill_(0.25)
            self.x = runtime.tensor(_data(3)[0][:, :4])
            self.batch = [self.x]
            self.w = self.model.weight

        def step(self):
            return (self.model(self.x) + self.model(self.batch[0]) + self.w.sum()).sum()

    eager, mine = Twice(), Twice()
    compiled = runtime.compile(mine.step)
    for k in range(5):
        if k == 2:
            first = compiled.last
            for holder in (eager, mine):
                holder.batch[0] = holder.x * 2
            assert not first.holds()
        if k == 3:
            for holder in (eager, mine):
                holder.w = runtime.ones(2, 4)
        assert compiled().item() == eager.step().item(), k
    assert compiled.fallback_reason is None
    assert compiled.traces == 3  # the first, batch[0] rebound alone, self.w rebound
