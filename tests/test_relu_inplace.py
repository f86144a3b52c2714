"""F.relu(x, inplace=True) and nn.ReLU(inplace=True) against torch: the input overwritten
and returned, the gradient through it, and torch's refusal on a leaf that requires grad
(both were refused or ignored before: F.relu took no `inplace`)."""

from __future__ import annotations

import pytest
import torch

import runtime


@pytest.mark.parametrize("form", ["functional", "module"])
def test_relu_in_place_as_torch(form: str) -> None:
    outcomes = []
    for lib in (torch, runtime):
        def relu(x, lib=lib):
            if form == "functional":
                return lib.nn.functional.relu(x, inplace=True)
            return lib.nn.ReLU(inplace=True)(x)

        x = lib.tensor([-1.0, 0.5, 2.0, -3.0])
        version = x._version
        y = relu(x)
        leaf = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        hidden = leaf * 2
        out = relu(hidden)
        (out * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        with pytest.raises(RuntimeError) as refused:
            relu(lib.tensor([1.0], requires_grad=True))
        outcomes.append((y is x, x.tolist(), x._version - version, out is hidden,
                         type(out.grad_fn).__name__, leaf.grad.tolist(), str(refused.value)))
    assert outcomes[1] == outcomes[0]


def test_relu_out_of_place_is_unchanged() -> None:
    x = runtime.tensor([-1.0, 2.0])
    y = runtime.nn.functional.relu(x)
    assert y is not x and x.tolist() == [-1.0, 2.0] and y.tolist() == [0.0, 2.0]
    assert repr(runtime.nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))
