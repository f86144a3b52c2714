"""runtime.modes.heard: the mode check written once, for hand-written functions and methods
(tensor_attributes' conversions x.byte(), x.cfloat(), ...)."""

from __future__ import annotations

import pytest

import runtime
from runtime import modes
from runtime.overrides import TorchFunctionMode


class _Log(TorchFunctionMode):
    def __init__(self, answer: object = None) -> None:
        super().__init__()
        self.calls: list = []
        self.answer = answer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append((func.__name__, len(args), dict(kwargs or {})))
        return self.answer if self.answer is not None else func(*args, **(kwargs or {}))


@pytest.mark.parametrize(("name", "dtype"), [
    ("cfloat", "torch.complex64"), ("cdouble", "torch.complex128"), ("byte", "torch.uint8"),
    ("char", "torch.int8"), ("short", "torch.int16")])
def test_a_conversion_is_heard_as_itself(name: str, dtype: str) -> None:
    x = runtime.ones(2)
    with _Log() as log:
        converted = getattr(x, name)()
    assert str(converted.dtype) == dtype
    assert log.calls[0] == (name, 1, {})  # then the `to` it runs, heard by no one
    assert len(log.calls) == 1
    with _Log(answer="answered") as log:
        assert getattr(x, name)(memory_format=None) == "answered"
    assert log.calls == [(name, 1, {"memory_format": None})]


def test_the_decorator_keeps_the_name_and_passes_without_a_mode() -> None:
    @modes.heard
    def twice(value: int, *, times: int = 2) -> int:
        """Doubles."""
        return value * times

    assert twice.__name__ == "twice" and twice.__doc__ == "Doubles."
    assert modes.consults(twice) and modes.consults(runtime.Tensor.byte)
    assert twice(3) == 6 and twice(3, times=3) == 9
    with _Log(answer=-1) as log:
        assert twice(3, times=3) == -1
    assert log.calls == [("twice", 1, {"times": 3})]


def test_runtime_modes_hear_a_runtime_step() -> None:
    heard = []

    class Runtime(modes.OpMode):
        hears_runtime = True

        def hear_runtime(self, func, args, kwargs):  # (it stays on its stack meanwhile)
            heard.append((func.__name__, args))
            return "answered"

    @modes.heard(by=modes.RUNTIME)
    def step(value: int) -> int:
        return value + 1

    with _Log() as log:  # a function mode does not hear a runtime step
        assert step(1) == 2
    assert log.calls == []
    with Runtime():
        assert step(1) == "answered"
    assert heard == [("step", (1,))]
