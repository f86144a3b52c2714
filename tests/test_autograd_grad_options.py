"""torch.autograd.grad's and backward's less common arguments against torch: inputs as a
dict, is_grads_batched, and the deprecated only_inputs and grad_variables (with their
warnings), in torch's positional order."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch

import runtime


def _caught(call: object) -> tuple[object, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


def _arrays(result: object) -> object:
    if isinstance(result, dict):
        return {k: _arrays(v) for k, v in result.items()}
    if isinstance(result, tuple | list):
        return [_arrays(v) for v in result]
    return None if result is None else result.detach().numpy()


def _cases(lib: object) -> dict:
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    unused = lib.ones(2, dtype=lib.float64, requires_grad=True)
    eye = lib.eye(3, dtype=lib.float64)

    def y() -> object:
        return x**2 * x.sin()

    return {
        "dict inputs": lambda: lib.autograd.grad(y(), {"a": x}, lib.ones(3, dtype=lib.float64)),
        "batched": lambda: lib.autograd.grad(y(), x, eye, is_grads_batched=True),
        "batched, positional": lambda: lib.autograd.grad(y(), [x, unused], eye, None, False,
                                                         True, True, True),
        "batched, materialized": lambda: lib.autograd.grad(y(), [x, unused], eye,
                                                           is_grads_batched=True,
                                                           materialize_grads=True),
        "batched, scalar output": lambda: lib.autograd.grad(
            y().sum(), x, lib.arange(4.0, dtype=lib.float64), is_grads_batched=True),
        "batched, second order": lambda: lib.autograd.grad(
            lib.autograd.grad(y(), x, eye, is_grads_batched=True, create_graph=True)[0].sum(),
            x),
        "only_inputs False": lambda: lib.autograd.grad(y().sum(), x, only_inputs=False),
        "only_inputs True": lambda: lib.autograd.grad(y().sum(), x, only_inputs=True),
    }


@pytest.mark.parametrize("case", list(_cases(torch)))
def test_grad_as_torch(case: str) -> None:
    (theirs, their_warnings), (ours, our_warnings) = (_caught(_cases(lib)[case])
                                                      for lib in (torch, runtime))
    assert our_warnings == their_warnings
    theirs, ours = _arrays(theirs), _arrays(ours)
    assert type(ours) is type(theirs)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        theirs, ours = list(theirs.values()), list(ours.values())
    for mine, expected in zip(ours, theirs, strict=True):
        if expected is None:
            assert mine is None
        else:
            np.testing.assert_allclose(mine, expected, rtol=1e-12)


def test_backward_grad_variables_as_torch() -> None:
    grads = []
    for lib in (torch, runtime):
        x = lib.ones(2, requires_grad=True)
        _, caught = _caught(lambda x=x, lib=lib: lib.autograd.backward(
            (x * 3).sum(), grad_variables=lib.tensor(2.0)))
        grads.append((x.grad.tolist(), caught))
        with pytest.raises(RuntimeError, match=r"`grad_tensors` and `grad_variables` "
                           r"\(deprecated\) arguments both passed to `backward\(\)`. Please "
                           "only use `grad_tensors`."):
            lib.autograd.backward((x * 3).sum(), grad_tensors=lib.tensor(1.0),
                                  grad_variables=lib.tensor(1.0))
    assert grads[1] == grads[0]


@pytest.mark.parametrize("name", ["grad", "backward"])
def test_parameters_in_torch_order(name: str) -> None:
    theirs = inspect.signature(getattr(torch.autograd, name)).parameters
    ours = inspect.signature(getattr(runtime.autograd, name)).parameters
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind)
                                                         for p in theirs.values()]
