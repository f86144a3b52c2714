"""torch.nn.functional's remaining names (Tensor, assert_int_or_pair, conv_tbc,
native_channel_shuffle) against torch 2.13, and why torch.ModuleDict / torch.ParameterDict
are not counted by the census (they are TorchScript's, not torch.nn's)."""

from __future__ import annotations

import pytest
import torch

import runtime
from bench import census
from tests.names_oracle import grads, same


def _functional(lib):
    return lib.nn.functional


def test_functional_tensor_is_the_tensor_class():
    same(lambda t: [_functional(t).Tensor is t.Tensor,
                    isinstance(t.ones(2), _functional(t).Tensor)])


@pytest.mark.parametrize("arg", [3, (2, 3), [1, 1], (1, 2, 3), [], "ab", "abc"])
def test_assert_int_or_pair(arg):
    same(lambda t: _functional(t).assert_int_or_pair(arg, "kernel_size",
                                                     "{} must be an int or a pair"))


def test_assert_int_or_pair_refuses_what_has_no_length():
    same(lambda t: _functional(t).assert_int_or_pair(2.5, "stride", "{} bad"))


def test_functional_conv_tbc_is_torchs_conv_tbc():
    def build(t):
        gen = t.Generator().manual_seed(0)
        x = t.randn(5, 2, 3, generator=gen, dtype=t.float64).requires_grad_()
        w = t.randn(3, 3, 4, generator=gen, dtype=t.float64).requires_grad_()
        b = t.randn(4, generator=gen, dtype=t.float64).requires_grad_()
        return _functional(t).conv_tbc(x, w, b, 1), [x, w, b]

    same(lambda t: _functional(t).conv_tbc is t.conv_tbc)
    grads(build)


def test_functional_native_channel_shuffle():
    def program(t):
        x = t.arange(16.0).reshape(1, 4, 2, 2).requires_grad_()
        y = _functional(t).native_channel_shuffle(x, 2)
        try:
            y.sum().backward()
        except RuntimeError as error:
            refused = str(error)
        return [y, y.grad_fn.name(), refused,
                _functional(t).native_channel_shuffle is t.native_channel_shuffle]

    same(program)


def test_top_level_module_and_parameter_dicts_are_torchscripts():
    """torch.ModuleDict is torch._C.ModuleDict (a ScriptModule's submodules), not
    torch.nn.ModuleDict: the census leaves the two out as TorchScript, and gradgen's
    torch namespace does not offer nn's containers under those names."""
    for name in ("ModuleDict", "ParameterDict"):
        assert getattr(torch, name) is getattr(torch._C, name)
        assert getattr(torch, name) is not getattr(torch.nn, name)
        with pytest.raises(TypeError, match="incompatible constructor arguments"):
            getattr(torch, name)({})
        assert not hasattr(runtime, name)
    row = census.census(("torch", "torch.nn"))
    assert not {"ModuleDict", "ParameterDict"} & {*row[0].present, *row[0].missing}
    assert {"ModuleDict", "ParameterDict"} <= set(row[1].present)
