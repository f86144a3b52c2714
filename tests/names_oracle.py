"""One helper for the name tests (tests/test_torch_names.py, tests/test_tensor_names.py): a
program run with torch and with runtime must give the same values, dtypes, shapes, grad_fn
names and gradients, or raise the same exception class with the same message."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch  # the oracle

import runtime


def describe(value: Any) -> Any:
    """A result as plain data: a tensor as its dtype, shape, values, requires_grad and grad_fn
    name; containers item by item; a dtype, size or device as its string."""
    if isinstance(value, torch.Tensor | runtime.Tensor):
        grad_fn = value.grad_fn.name() if value.grad_fn is not None else None
        # (torch's gradient known to be zero is a ZeroTensor: numpy() needs force=True)
        array = value.detach().numpy(force=True) if isinstance(value, torch.Tensor) else \
            value.detach().numpy()
        return ("tensor", str(value.dtype), tuple(value.shape), array.copy(),
                value.requires_grad, grad_fn)
    if isinstance(value, list | tuple):
        return (type(value).__name__ if type(value) in (list, tuple) else "tuple",
                [describe(v) for v in value])
    if isinstance(value, torch.dtype | runtime.dtype | torch.device | runtime.device):
        return str(value)
    if isinstance(value, torch.Size | runtime.Size):
        return ("size", tuple(value))
    return value


def observe(program: Callable[[Any], Any], lib: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = ("returns", describe(program(lib)))
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            outcome = ("raises", type(error).__name__, str(error))
    return outcome, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                     for w in caught]


def _assert_equal(ours: Any, theirs: Any, rtol: float, atol: float, path: str) -> None:
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), path
        assert ours.shape == theirs.shape, path
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=path,
                                   equal_nan=True)
    elif isinstance(theirs, list | tuple):
        assert isinstance(ours, list | tuple) and len(ours) == len(theirs), (path, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_equal(a, b, rtol, atol, f"{path}[{i}]")
    elif isinstance(theirs, float) and isinstance(ours, float):
        assert ours == theirs or np.isclose(ours, theirs, rtol=rtol, atol=atol), (path, ours)
    else:
        assert ours == theirs, (path, ours, theirs)


def same(program: Callable[[Any], Any], rtol: float = 1e-6, atol: float = 1e-7) -> Any:
    """Run `program(torch)` and `program(runtime)`; assert they agree; return torch's."""
    theirs = observe(program, torch)
    ours = observe(program, runtime)
    _assert_equal(ours, theirs, rtol, atol, "result")
    return theirs


def grads(build: Callable[[Any], tuple], rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """`build(lib)` gives (output, leaves): the gradients of output.sum() (and the output)
    must agree with torch's."""
    def program(lib: Any) -> Any:
        output, leaves = build(lib)
        output.sum().backward() if output.ndim else output.backward()
        return output, [leaf.grad for leaf in leaves]

    same(program, rtol, atol)
