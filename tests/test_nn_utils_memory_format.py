"""torch.nn.utils.convert_conv2d/3d_weight_memory_format against torch: the module comes
back, every convolution keeps its Parameter and values, the output is unchanged, and a
format of the wrong rank gives torch's error. gradgen has no memory-format objects of its
own, so torch's are passed to both (the functions read only their names)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime as rt


def _model(lib, three_d):
    nn = lib.nn
    lib.manual_seed(0)
    if three_d:
        return nn.Sequential(nn.Conv3d(2, 3, 2), nn.ConvTranspose3d(3, 2, 2), nn.Conv2d(2, 2, 1))
    return nn.Sequential(nn.Conv2d(2, 3, 3), nn.Sequential(nn.ConvTranspose2d(3, 2, 2)),
                         nn.Conv3d(2, 2, 1))


def _convert(lib, three_d):
    name = "convert_conv3d_weight_memory_format" if three_d else \
        "convert_conv2d_weight_memory_format"
    return getattr(lib.nn.utils, name)


@pytest.mark.parametrize("three_d", [False, True])
def test_convert_keeps_parameters_and_values_like_torch(three_d):
    form = torch.channels_last_3d if three_d else torch.channels_last
    ours, theirs = _model(rt, three_d), _model(torch, three_d)
    before = [p for p in ours.parameters()]
    assert _convert(rt, three_d)(ours, form) is ours
    assert _convert(torch, three_d)(theirs, form) is theirs
    assert [p for p in ours.parameters()] == before
    assert all(isinstance(p, rt.nn.Parameter) for p in ours.parameters())
    for (name, a), (other, b) in zip(ours.state_dict().items(), theirs.state_dict().items(),
                                     strict=True):
        assert name == other
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
    shape = (1, 2, 4, 4, 4) if three_d else (1, 2, 5, 5)
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours, theirs = ours[:2], theirs[:2]  # the two convolutions of the converted kind
    np.testing.assert_allclose(ours(rt.tensor(data)).detach().numpy(),
                               theirs(torch.tensor(data)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize(("three_d", "form"), [(False, "channels_last_3d"),
                                               (True, "channels_last"),
                                               (False, "preserve_format"),
                                               (True, "preserve_format")])
def test_convert_refuses_a_wrong_format_like_torch(three_d, form):
    memory_format = getattr(torch, form)
    with pytest.raises(RuntimeError) as theirs:
        _convert(torch, three_d)(_model(torch, three_d), memory_format)
    with pytest.raises(RuntimeError) as ours:
        _convert(rt, three_d)(_model(rt, three_d), memory_format)
    assert str(ours.value) == str(theirs.value)


def test_convert_with_contiguous_format_like_torch():
    ours = rt.nn.utils.convert_conv2d_weight_memory_format(rt.nn.Conv2d(1, 1, 2),
                                                           torch.contiguous_format)
    theirs = torch.nn.utils.convert_conv2d_weight_memory_format(torch.nn.Conv2d(1, 1, 2),
                                                                torch.contiguous_format)
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    assert repr(ours) == repr(theirs)
