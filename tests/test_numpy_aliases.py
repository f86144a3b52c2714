"""The numpy-style keyword names torch's argument parser accepts beside a parameter's own
(`dim`: `axis`, `keepdim`: `keepdims`, `input`: `x`, `a`, `x1`; `other`: `x2`), on the calls
that go through overload resolution (runtime/dispatch.py), compared with torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime

VALUES = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5

CALLS = [
    lambda lib, a: a.sum(1, keepdims=True),
    lambda lib, a: a.sum(axis=0),
    lambda lib, a: lib.sum(a, axis=1),
    lambda lib, a: lib.sum(a, axis=1, keepdims=True),
    lambda lib, a: lib.sum(input=a, dim=1),
    lambda lib, a: lib.sum(x=a, dim=1),
    lambda lib, a: lib.sum(a=a, axis=0),
    lambda lib, a: lib.sum(x1=a, axis=0, keepdim=True),
    lambda lib, a: a.mean(axis=0, keepdims=True),
    lambda lib, a: lib.mean(a, axis=(0, 1)),
    lambda lib, a: lib.max(a, axis=0)[0],
    lambda lib, a: a.max(axis=1, keepdims=True)[1],
]


@pytest.mark.parametrize("index", range(len(CALLS)))
def test_an_alias_binds_as_in_torch(index: int) -> None:
    expected = CALLS[index](torch, torch.tensor(VALUES))
    got = CALLS[index](runtime, runtime.tensor(VALUES))
    assert tuple(got.shape) == tuple(expected.shape)
    assert np.array_equal(got.numpy(), expected.numpy())


def test_an_alias_reaches_the_backward() -> None:
    a = runtime.tensor(VALUES, requires_grad=True)
    a.sum(axis=1, keepdims=True).pow(2).sum().backward()
    t = torch.tensor(VALUES, requires_grad=True)
    t.sum(1, keepdim=True).pow(2).sum().backward()
    assert a.grad_fn is None and np.array_equal(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.sum(a, axis="x"),  # a wrong value given by its alias
    lambda lib, a: lib.sum(a, axes=1),  # no such name
    lambda lib, a: lib.mean(a, dim=0, axis=0),  # a parameter named twice
])
def test_a_wrong_keyword_is_a_type_error_as_in_torch(call) -> None:
    with pytest.raises(TypeError) as expected:
        call(torch, torch.tensor(VALUES))
    with pytest.raises(TypeError) as got:
        call(runtime, runtime.tensor(VALUES))
    name = str(expected.value).split("(", 1)[0]
    assert str(got.value).startswith(name + "(")
    if "invalid combination" in str(expected.value):
        assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]
