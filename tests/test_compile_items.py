"""`.item()` in a compiled step: the float it gives the step is a line of the generated step
(`return vN.item()`) only where the step returns it untouched and holds it nowhere else; any
other use (arithmetic, a comparison, `max`, formatting, `math.isnan`), or the float kept in
a variable or a container, runs the step eagerly. Either way the caller gets eager's plain
floats, call after call."""

from __future__ import annotations

import math

import pytest

import runtime

HISTORY: list[float] = []  # a container of the module's that a step appends its loss to


def _train():
    runtime.manual_seed(0)
    model = runtime.nn.Linear(30, 2)
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x = runtime.ones(16, 30)

    def train():
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        return loss

    return train


def _steps(train):
    def appended():
        HISTORY.append(train().item())
        return HISTORY[-1]

    def kept_and_appended():
        value = train().item()
        HISTORY.append(value)
        return value

    def maximum():
        return max(train().item(), 0.0)

    def checked():
        loss = train()
        if math.isnan(loss.item()):
            raise ValueError("nan")
        return loss.item()

    def formatted():
        value = train().item()
        return f"{value:.3f}"

    def with_a_tensor():
        loss = train()
        return loss.item(), (loss.detach(),)

    def twice():
        loss = train()
        return loss.item(), loss.item()

    def by_name():
        return {"loss": train().item()}

    class Trainer:
        def step(self):
            return train().item()

    return {"appended": appended, "kept_and_appended": kept_and_appended, "maximum": maximum,
            "checked": checked, "formatted": formatted, "with_a_tensor": with_a_tensor,
            "twice": twice, "by_name": by_name, "method": Trainer().step}


def _plain(value):
    """A step's result as comparable values, with each number's type."""
    if isinstance(value, tuple | list):
        return tuple(map(_plain, value))
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, runtime.Tensor):
        return value.detach().numpy().tobytes()
    return type(value), value


# What each step does: compiled (None) or a fallback whose reason names this.
EXPECTED = {"appended": "item()", "kept_and_appended": "item()", "maximum": "item()",
            "checked": "item()", "formatted": "item()", "with_a_tensor": None, "twice": None,
            "by_name": "returns a dict", "method": None}


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_an_item_is_returned_untouched_or_the_step_runs_eagerly(kind):
    HISTORY.clear()
    compiled = runtime.compile(_steps(_train())[kind])
    got = [_plain(compiled()) for _ in range(3)]
    compiled_history = list(HISTORY)
    HISTORY.clear()
    eager = _steps(_train())[kind]
    assert got == [_plain(eager()) for _ in range(3)]
    assert compiled_history == HISTORY
    if EXPECTED[kind] is None:
        assert compiled.fallback_reason is None and compiled.traces == 1
        assert ".item()" in compiled.code
    else:
        assert EXPECTED[kind] in compiled.fallback_reason
