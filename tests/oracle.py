"""Running one program through torch and through runtime, and comparing what it does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
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


def same_outcome(program: Callable[[Any], Any]) -> tuple:
    """`same`, comparing what `program` returns or raises but not its warnings: for programs
    whose torch warnings are given once per process (TORCH_WARN_ONCE), which another test
    may already have drawn."""
    expected = observe(program, torch)[0]
    assert observe(program, runtime)[0] == expected
    return expected


def values(result: Any) -> Any:
    """Tensors (and lists / tuples of them) as (dtype name, numpy array); others as they are."""
    if isinstance(result, torch.Tensor | runtime.Tensor):
        return str(result.dtype), result.detach().numpy()
    if isinstance(result, list | tuple):
        return [values(r) for r in result]
    return result


def _assert_close(actual: Any, expected: Any, rtol: float, atol: float) -> None:
    if isinstance(expected, list):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _assert_close(a, e, rtol, atol)
    elif isinstance(expected, tuple):
        assert actual[0] == expected[0]  # dtype
        assert actual[1].shape == expected[1].shape
        np.testing.assert_allclose(actual[1], expected[1], rtol=rtol, atol=atol)
    else:
        assert actual == expected


def close(program: Callable[[Any], Any], rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """`program(lib)` gives the same dtypes, shapes and other values with torch and runtime,
    and tensor values equal to within rtol / atol."""
    _assert_close(values(program(runtime)), values(program(torch)), rtol, atol)


def tiny_model(lib: Any) -> Any:
    """The seed example's TinyModel (examples/seed_tinymodel.py), built with `lib`."""

    class TinyModel(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = lib.nn.Linear(1000, 100)
            self.relu = lib.nn.ReLU()
            self.layer2 = lib.nn.Linear(100, 10)

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    return TinyModel()


def least_squares(lib: Any, dtype: Any, seed: int) -> tuple:
    """A least-squares problem (x, w, b, y) whose w and b require grad, the same data in
    either library: the optimizer tests' problem."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape) for shape in [(6, 4), (4, 3), (3,), (6, 3)]]
    x, w, b, y = (lib.tensor(a, dtype=dtype) for a in arrays)
    w.requires_grad_(True)
    b.requires_grad_(True)
    return x, w, b, y


def least_squares_loss(x: Any, w: Any, b: Any, y: Any) -> Any:
    return (x.mm(w) + b - y).pow(2).sum()
