"""runtime.compile's guards on the plain values a step reads through the objects it names
(runtime/compile/reads.py): `cfg.alpha`, `self.scale`, `config["gamma"]`, a list's item, an
optimizer's learning rate read by the step's own arithmetic. Each change between two calls
must give eager's result, bit for bit; a change to a value the step does not read must not
make a new trace."""

from __future__ import annotations

import types

import numpy as np

import runtime
from runtime.compile import reads


class Settings:
    """A plain object holding numbers, as a config class or an argparse Namespace does."""


def _model_and_optimizer(lr: float = 0.1):
    runtime.manual_seed(0)
    model = runtime.nn.Sequential(runtime.nn.Linear(4, 3), runtime.nn.Tanh(),
                                  runtime.nn.Linear(3, 2))
    return model, runtime.optim.SGD(model.parameters(), lr=lr)


def _bits(model) -> list[bytes]:
    return [p.detach().numpy().tobytes() for p in model.parameters()]


def _compiled_like_eager(program, *args):
    """Run `program(compiled, *args)` eagerly and compiled (each returns its losses, its
    parameters' bits and the step it ran): the same losses and bits; the compiled step."""
    eager_losses, eager_bits, _ = program(False, *args)
    losses, bits, compiled = program(True, *args)
    assert losses == eager_losses
    assert bits == eager_bits
    return compiled


INPUT = runtime.tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))

# The globals the steps below read (each test sets them afresh).
cfg = Settings()
config: dict = {}
schedule: list = []
epoch = 0


def _global_program(compiled: bool, changes: dict):
    """A step that reads numbers through a global object (and an object inside it), a
    global dict, a global list at a global index and the optimizer's learning rate; the
    `changes` (step index -> function) run between calls. Returns the losses' bits, the
    parameters' bits and the compiled step."""
    global cfg, config, schedule, epoch
    model, optimizer = _model_and_optimizer()
    cfg = Settings()
    cfg.alpha, cfg.unread = 0.5, 0
    cfg.inner = Settings()
    cfg.inner.beta = 2.0
    config = {"gamma": 1.0, "name": "run"}
    schedule, epoch = [1.0, 0.5], 0

    def step():
        optimizer.zero_grad()
        scale = cfg.alpha * cfg.inner.beta * config["gamma"] * schedule[epoch]
        loss = (model(INPUT) * scale).pow(2).sum() * optimizer.param_groups[0]["lr"]
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    losses = []
    for index in range(10):
        if index in changes:
            changes[index](model, optimizer)
        cfg.unread += 1  # read by no line of the step: no new trace
        losses.append(run().detach().numpy().tobytes())
    return losses, _bits(model), run


def _set(holder: str, name: str, value):
    """A change that sets `name` of the object the test calls `holder` to `value`."""
    def change(model, optimizer):
        target = {"cfg": cfg, "inner": cfg.inner, "config": config,
                  "optimizer": optimizer.param_groups[0]}[holder]
        if isinstance(target, dict):
            target[name] = value
        else:
            setattr(target, name, value)
    return change


def _append_to_schedule(model, optimizer):
    schedule.append(0.25)


def _next_epoch(model, optimizer):
    global epoch
    epoch += 1


def test_numbers_read_through_a_global_object_dict_list_and_optimizer_are_guarded():
    changes = {2: _set("cfg", "alpha", 0.25), 3: _set("inner", "beta", 3.0),
               4: _set("config", "gamma", -1.0), 5: _set("optimizer", "lr", 0.01),
               6: _next_epoch, 7: _append_to_schedule, 8: _set("cfg", "alpha", 1)}
    compiled = _compiled_like_eager(_global_program, changes)
    # One trace, and one for each change (the int 1 for the float 0.25 is one too; the
    # appended item is read by no line, but the list's length is guarded).
    assert compiled.traces == 1 + len(changes)
    assert compiled.fallback_reason is None


def test_without_changes_one_trace_serves_every_call():
    compiled = _compiled_like_eager(_global_program, {})
    assert compiled.traces == 1


class Trainer:
    """A step written as a method: what it reads hangs off `self`."""

    def __init__(self) -> None:
        self.model, self.optimizer = _model_and_optimizer()
        self.scale = 1.0
        self.global_step = 0  # counted outside the step, read by no line of it

    def loss_of(self, x):
        return (self.model(x) * self.scale).sum()

    def step(self, x):
        self.optimizer.zero_grad()
        loss = self.loss_of(x)
        loss.backward()
        self.optimizer.step()
        return loss


def _trainer_program(compiled: bool):
    trainer = Trainer()
    other = _model_and_optimizer()[0]
    run = runtime.compile(trainer.step) if compiled else trainer.step
    losses = []
    for index in range(8):
        if index == 3:
            trainer.scale = 2.0  # read in a method the step calls
        if index == 5:
            trainer.model = other  # the step reaches another module through self
            trainer.optimizer = runtime.optim.SGD(other.parameters(), lr=0.1)
        trainer.global_step += 1
        losses.append(run(INPUT).detach().numpy().tobytes())
    return losses, _bits(trainer.model), run


def test_a_bound_method_step_guards_what_it_reads_through_self():
    compiled = _compiled_like_eager(_trainer_program)
    assert compiled.traces == 3  # the first call, the new scale, the new model


def test_a_step_that_changes_a_value_it_reads_stays_right():
    """A step that counts its own calls in a value it reads traces again at every call (the
    trace took the value before it ran), then runs eagerly once the cache is full: slower,
    and still eager's result."""
    def program(compiled):
        model, optimizer = _model_and_optimizer()
        counter = Settings()
        counter.calls = 0

        def step():
            optimizer.zero_grad()
            counter.calls += 1
            loss = (model(INPUT) * counter.calls).sum()
            loss.backward()
            optimizer.step()
            return loss

        run = runtime.compile(step) if compiled else step
        return [run().detach().numpy().tobytes() for _ in range(12)], _bits(model), run

    eager = program(False)
    compiled = program(True)
    assert compiled[:2] == eager[:2]
    assert compiled[2].fallback_reason == "the cache of 8 traces is full (guards kept failing)"


def test_generated_guard_agrees_with_the_plain_checks_on_reads():
    """Each kind of read (an attribute's value, an object's identity, a dict's item, a
    list's length and item) fails the generated guard."""
    losses, bits, compiled = _global_program(True, {})
    entry = compiled.last
    kinds = {(read.kind, read.expected[0]) for read in entry.reads}
    assert {("attribute", "value"), ("attribute", "object"), ("item", "value"),
            ("length", "length")} <= kinds
    inner = cfg.inner
    changes = [
        (lambda: setattr(cfg, "alpha", 0.75), lambda: setattr(cfg, "alpha", 0.5)),
        (lambda: setattr(cfg, "inner", Settings()), lambda: setattr(cfg, "inner", inner)),
        (lambda: config.update(gamma=2.0), lambda: config.update(gamma=1.0)),
        (lambda: config.pop("name"), lambda: config.update(name="run")),
        (lambda: schedule.__setitem__(0, 3.0), lambda: schedule.__setitem__(0, 1.0)),
        (lambda: schedule.append(1.0), lambda: schedule.pop()),
        (lambda: delattr(cfg, "alpha"), lambda: setattr(cfg, "alpha", 0.5)),
    ]
    assert entry.holds()
    for change, undo in changes:
        change()
        assert not entry.holds(), change
        undo()
        assert entry.holds(), undo


def test_reads_follow_attribute_names_the_code_reads_only():
    holder = Settings()
    holder.used, holder.unused, holder.tensor = 1.0, 2.0, INPUT
    holder.nested = types.SimpleNamespace(used=3.0, deeper=types.SimpleNamespace(used=4.0))

    def step():
        return holder.used + holder.nested.deeper.used

    found = reads.plain_reads([holder], [step])
    described = [(read.key, read.expected[0]) for read in found]
    assert ("used", "value") in described and ("nested", "object") in described
    assert ("deeper", "object") in described
    assert all(key not in ("unused", "tensor") for key, _ in described)
    # A dict larger than MAX_ITEMS is not walked; a smaller one is, item by item.
    large = {index: float(index) for index in range(reads.MAX_ITEMS + 1)}
    assert reads.plain_reads([large], [step]) == []
    assert len(reads.plain_reads([{"a": 1.0}], [step])) == 1


class Defaults:
    """Numbers held by a class: read on the class, or on an instance that has none of its
    own."""

    alpha = 0.5
    beta = 2.0


defaults = Defaults()


def _class_program(compiled: bool):
    model, optimizer = _model_and_optimizer()
    Defaults.alpha, Defaults.beta = 0.5, 2.0
    vars(defaults).clear()

    def step():
        optimizer.zero_grad()
        loss = (model(INPUT) * Defaults.alpha * defaults.beta).sum()
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    changes = {2: lambda: setattr(Defaults, "alpha", 0.25),  # on the class read directly
               3: lambda: setattr(defaults, "beta", 3.0),  # the instance's own, now
               5: lambda: setattr(Defaults, "beta", -1.0)}  # shadowed: no change
    losses = []
    for index in range(7):
        if index in changes:
            changes[index]()
        losses.append(run().detach().numpy().tobytes())
    return losses, _bits(model), run


def test_numbers_held_by_a_class_are_guarded():
    compiled = _compiled_like_eager(_class_program)
    # The first call, the class's alpha, the instance's own beta; the class's beta changed
    # once the instance shadowed it is read by no line, but was guarded: one more.
    assert compiled.traces == 4


class Encoder(runtime.nn.Module):
    """A module whose forward calls a method of its own class."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = runtime.nn.Linear(4, 3)

    def squash(self, x):
        return x.tanh()

    def forward(self, x):
        return self.squash(self.layer(x))


def _patched_method_program(compiled: bool):
    runtime.manual_seed(0)
    model = Encoder()
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    original = Encoder.squash

    def step():
        optimizer.zero_grad()
        loss = model(INPUT).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    losses = []
    try:
        for index in range(6):
            if index == 3:
                Encoder.squash = lambda self, x: x.sigmoid()
            losses.append(run().detach().numpy().tobytes())
    finally:
        Encoder.squash = original
    return losses, _bits(model), run


def test_a_method_patched_on_a_module_class_makes_a_new_trace():
    compiled = _compiled_like_eager(_patched_method_program)
    assert compiled.traces == 2


SCALE = 2.0  # a global read only inside a generator expression of the step below


def _nested_code_program(compiled: bool):
    global SCALE
    SCALE = 2.0
    model, optimizer = _model_and_optimizer()
    halves = (INPUT[:4], INPUT[4:])

    def step(a, b):
        optimizer.zero_grad()
        loss = sum((model(x) * SCALE).sum() for x in (a, b))  # SCALE: the genexpr's read
        loss.backward()
        optimizer.step()
        return loss

    run = runtime.compile(step) if compiled else step
    losses = []
    for index in range(4):
        if index == 2:
            SCALE = -1.0
        losses.append(run(*halves).detach().numpy().tobytes())
    return losses, _bits(model), run


def test_a_global_read_in_nested_code_is_guarded():
    """The globals a comprehension, generator expression or lambda of the step reads are
    the step's too: a changed one makes a new trace (it was a constant the trace kept)."""
    compiled = _compiled_like_eager(_nested_code_program)
    assert compiled.traces == 2
