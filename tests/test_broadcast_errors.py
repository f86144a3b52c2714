"""Shapes that do not broadcast give torch's RuntimeError, never numpy's ValueError: every
op of the spec with two Tensor inputs, called on shapes (3,) and (4,), and a few of them
(functions, methods, in place) against torch's message."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import runtime
from generated.ops import OVERLOADS

# An internal op whose own check torch runs first (its error is about the norm's dims).
LEFT_OUT = {"_weight_norm_interface"}
PAIRS = sorted(name for name, overload in OVERLOADS.items()
               if sum(p.type == "Tensor" for p in overload.params) == 2
               and len(overload.params) <= 3 and name not in LEFT_OUT)


def test_there_are_ops_to_check() -> None:
    assert len(PAIRS) > 50


@pytest.mark.parametrize("name", PAIRS)
def test_no_numpy_error_escapes(name: str) -> None:
    overload = OVERLOADS[name]
    first, second = (p.name for p in overload.params if p.type == "Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            overload.wrapper(**{first: runtime.ones(3), second: runtime.ones(4)})
        except (RuntimeError, TypeError, NotImplementedError):
            pass  # torch's kinds of error (the message is checked below for some)


@pytest.mark.parametrize("call", [
    lambda t: t.maximum(t.ones(3), t.ones(4)),
    lambda t: t.logical_and(t.ones(3), t.ones(4)),
    lambda t: t.dist(t.ones(3), t.ones(4)),
    lambda t: t.pow(t.ones(3), t.ones(4)),
    lambda t: t.ones(3).add_(t.ones(4)),
    lambda t: t.ones(2, 3).mul_(t.ones(4)),
    lambda t: t.nn.functional.mse_loss(t.ones(3), t.ones(4)),
])
def test_the_message_is_torch_s(call: Any) -> None:
    messages = []
    for lib in (runtime, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mse_loss warns of the sizes first, in both
            with pytest.raises(RuntimeError) as error:
                call(lib)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
