"""More positional arguments than an op takes: torch's TypeError, for functions and methods.

torch's parser says "mul() takes 2 positional arguments but 3 were given" (or "takes from
2 to 3", or, for a method of no arguments, "TensorBase.relu() takes no arguments (1
given)"); where it binds several signatures and none or several could take as many
arguments, "received an invalid combination of arguments" (compared on its first line).
"""

from __future__ import annotations

import pytest
import torch

import runtime

CASES = [
    # one signature: functions, then methods (self not counted)
    "t.mul(a, b, 3)", "a.mul(b, 3)", "a.mul_(b, 2)", "t.sub(a, b, 1, 2)",
    "t.relu(a, 1)", "a.relu(1)", "a.relu_(1)", "t.exp(a, 1)", "a.exp(1, 2)", "a.t(1)",
    "t.t(a, 1)", "m.mm(m, m)", "t.dot(a, b, 1)", "a.dot(b, 1)", "t.cat([a, b], 0, 1)",
    "t.transpose(m, 0, 1, 2)", "m.transpose(0, 1, 2)", "t.index_add(a, 0, i, b, 1, 2)",
    "t.maximum(a, b, a)", "a.maximum(b, a)", "a.view(1, 2, 3, 4)",
    # several overloads: the one that could take so many, or torch's list
    "t.sum(a, 0, True, None, 4)", "a.sum(0, True, None, 4)", "t.div(a, b, 1, 2)",
    "a.div(b, 1, 2)", "t.pow(a, 2, 3)", "t.clamp(a, 0, 1, 2)", "a.clamp(0, 1, 2)",
    "t.lerp(a, b, 0.5, 1)", "a.lerp(b, 0.5, 1)",
]


def _outcome(library, code: str) -> tuple[str, str]:
    values = {"t": library, "a": library.ones(2), "b": library.ones(2),
              "m": library.ones(2, 2), "i": library.tensor([0, 1])}
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the class is compared
        eval(code, values)
    return type(caught.value).__name__, str(caught.value).splitlines()[0]


@pytest.mark.parametrize("code", CASES)
def test_too_many_positional_arguments_as_torch(code: str) -> None:
    assert _outcome(runtime, code) == _outcome(torch, code)


def test_the_arguments_are_left_unchanged() -> None:
    a = runtime.ones(2)
    with pytest.raises(TypeError):
        a.mul_(runtime.ones(2), 2)
    assert a.tolist() == [1.0, 1.0] and a._version == 0
