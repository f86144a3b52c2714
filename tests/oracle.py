"""Running one program through torch and through runtime, and comparing what it does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torch  # the oracle

import runtime


def observe(program: Callable[[Any], Any], lib: Any) -> tuple:
    """What `program(lib)` returns or raises, and the warnings it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple = ("returns", program(lib))
        except Exception as error:
            outcome = ("raises", type(error).__name__, str(error))
    # PyTorch's C++ warnings end with where they were raised: not compared.
    return outcome, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                     for w in caught]


def same(program: Callable[[Any], Any]) -> tuple:
    """Run `program` with torch and with runtime; what it returns (plain Python values or
    strings), raises and warns must be equal."""
    expected = observe(program, torch)
    assert observe(program, runtime) == expected
    return expected
