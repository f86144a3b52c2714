"""Error inputs of OpInfo's reference suite that gradgen answered otherwise than torch:
each raises torch's exception class with torch's message (issue 27's error inputs)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import torch

import runtime


def _long(lib: Any) -> Any:
    return lib.ones(3, dtype=lib.int64)


def _unbound(name: str, lib: Any) -> Any:
    return getattr(lib.Tensor, name)(2, _long(lib))


CASES: dict[str, Callable[[Any], Any]] = {
    "left shift of two numbers": lambda t: t.bitwise_left_shift(2, 3),
    "right shift of two numbers": lambda t: t.bitwise_right_shift(2.5, 3),
    "gcd of a number": lambda t: t.gcd(_long(t), 2),
    "lcm of a number": lambda t: t.lcm(_long(t), 2),
    "gcd method of a number": lambda t: _long(t).gcd(2),
    "lcm_ method of a number": lambda t: _long(t).lcm_(2),
    "hsplit by a string": lambda t: t.hsplit(t.ones(5, 5, 5), "abc"),
    "vsplit by a float": lambda t: t.vsplit(t.ones(5, 5, 5), 2.5),
    "dsplit by None": lambda t: t.dsplit(t.ones(5, 5, 5), None),
    "hstack of nothing": lambda t: t.hstack(()),
    "vstack of nothing": lambda t: t.vstack([]),
    "dstack of nothing": lambda t: t.dstack(()),
    "column_stack of nothing": lambda t: t.column_stack(()),
    "row_stack of nothing": lambda t: t.row_stack(()),
    **{f"unbound {name} of a number": functools.partial(_unbound, name)
       for name in ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__")},
    "unbound __rxor__ of a float": lambda t: t.Tensor.__rxor__(2.5, _long(t)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_same_error_as_torch(case: str) -> None:
    outcomes = []
    for lib in (torch, runtime):
        with pytest.raises(Exception) as caught:
            CASES[case](lib)
        outcomes.append((type(caught.value).__name__, str(caught.value)))
    assert outcomes[1] == outcomes[0]


def test_reflected_operators_still_work() -> None:
    """The check on self costs the operators nothing they did: a number on the left."""
    for lib in (torch, runtime):
        x = lib.tensor([1, 2, 3])
        assert (2 + x).tolist() == [3, 4, 5] and (2 * x).tolist() == [2, 4, 6]
        assert (6 & x).tolist() == [0, 2, 2] and (4 | x).tolist() == [5, 6, 7]
        assert (1 ^ x).tolist() == [0, 3, 2] and (2 - x).tolist() == [1, 0, -1]
        assert lib.Tensor.__rsub__(x, 2).tolist() == [1, 0, -1]
