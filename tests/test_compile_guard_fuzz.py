"""runtime.compile's guards under drawn changes: between calls of a training step, a drawn
sequence of changes to the world the step reads (the learning rate and momentum, train
and eval mode, a frozen parameter, a replaced parameter, a forward hook, dropout's p, a
global and a config attribute the step reads, the batch size, a hook on a parameter) is
made in an eager twin and in the compiled step's world alike (or, in the second test, in
a world whose step calls its model compiled on its own: runtime/compile/joint.py). After
every call both must hold the same bits: loss, parameters, gradients. A guard that misses
a change shows as a difference; one that fires too often only makes traces (up to the
cache, then eager)."""

from __future__ import annotations

import numpy as np
import pytest

import runtime

nn = runtime.nn

SEQUENCES, MODEL_SEQUENCES, CALLS = 40, 30, 14


class Config:
    """A plain object whose attribute the step reads."""

    def __init__(self) -> None:
        self.weight = 1.0


SCALE = 1.0  # a global the step reads (each world sets its own before its calls)


class World:
    """A model, its optimizer, a config, and what the changes need to undo themselves."""

    def __init__(self, compile_model: bool = False) -> None:
        runtime.manual_seed(0)
        self.model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.25),
                                   nn.Linear(8, 3))
        self.optimizer = runtime.optim.SGD(self.model.parameters(), lr=0.05)
        self.config = Config()
        self.handles: list = []
        self.batch = 6
        self.scale = 1.0
        config, model, optimizer = self.config, self.model, self.optimizer
        forward = runtime.compile(model) if compile_model else model

        def step(x, y):
            optimizer.zero_grad()
            loss = ((forward(x) - y).pow(2) * config.weight * SCALE).mean()
            loss.backward()
            optimizer.step()
            return loss

        self.step = step

    def data(self, generator: np.random.Generator):
        x = generator.standard_normal((self.batch, 4)).astype(np.float32)
        y = generator.standard_normal((self.batch, 3)).astype(np.float32)
        return runtime.tensor(x), runtime.tensor(y)


def _learning_rate(world: World, value: float) -> None:
    world.optimizer.param_groups[0]["lr"] = value


def _momentum(world: World, value: float) -> None:
    world.optimizer.param_groups[0]["momentum"] = value


def _mode(world: World, value: float) -> None:
    world.model.train(value < 0.5)


def _freeze(world: World, value: float) -> None:
    world.model[0].bias.requires_grad_(value < 0.5)


def _replace(world: World, value: float) -> None:
    with runtime.no_grad():
        world.model[3].weight = nn.Parameter(world.model[3].weight * value)
    world.optimizer.param_groups[0]["params"] = list(world.model.parameters())


def _forward_hook(world: World, value: float) -> None:
    if world.handles:
        world.handles.pop().remove()
    else:
        world.handles.append(world.model[1].register_forward_hook(
            lambda module, args, out: out * 2))


def _dropout(world: World, value: float) -> None:
    world.model[2].p = round(value / 2, 2)


def _config(world: World, value: float) -> None:
    world.config.weight = value


def _global(world: World, value: float) -> None:
    world.scale = value


def _batch(world: World, value: float) -> None:
    world.batch = 6 if value < 0.5 else 3


def _tensor_hook(world: World, value: float) -> None:
    world.handles.append(world.model[0].weight.register_hook(lambda grad: grad * value))


CHANGES = [_learning_rate, _momentum, _mode, _freeze, _replace, _forward_hook, _dropout,
           _config, _global, _batch, _tensor_hook]


def _run(sequence: list[tuple[int, int, float]], compiled: str | None) -> list[list[bytes]]:
    """The calls' bits, the step eager (None), compiled ("step") or calling its model
    compiled ("model")."""
    global SCALE
    world = World(compile_model=compiled == "model")
    run = runtime.compile(world.step) if compiled == "step" else world.step
    generator = np.random.default_rng(1)
    runtime.manual_seed(2)  # dropout's draws
    seen = []
    for call in range(CALLS):
        for at, change, value in sequence:
            if at == call:
                CHANGES[change](world, value)
        SCALE = world.scale
        loss = run(*world.data(generator))
        model = world.model
        seen.append([loss.detach().numpy().tobytes()] +
                    [p.detach().numpy().tobytes() for p in model.parameters()] +
                    [p.grad.numpy().tobytes() if p.grad is not None else b""
                     for p in model.parameters()])
    return seen


def _sequence(seed: int) -> list[tuple[int, int, float]]:
    generator = np.random.default_rng(seed)
    return [(int(generator.integers(1, CALLS)), int(generator.integers(len(CHANGES))),
             float(np.round(generator.uniform(0.1, 0.9), 2))) for _ in range(6)]


@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_drawn_changes_between_calls_give_eager_bits(seed):
    _compiled_like_eager(_sequence(seed), "step")


@pytest.mark.parametrize("seed", range(SEQUENCES, SEQUENCES + MODEL_SEQUENCES))
def test_drawn_changes_with_the_model_compiled_give_eager_bits(seed):
    _compiled_like_eager(_sequence(seed), "model")


def _compiled_like_eager(sequence: list[tuple[int, int, float]], what: str) -> None:
    eager = _run(sequence, None)
    compiled = _run(sequence, what)
    for call, (expected, got) in enumerate(zip(eager, compiled, strict=True)):
        assert got == expected, (call, [(a, CHANGES[c].__name__, v) for a, c, v in sequence])
