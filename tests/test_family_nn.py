"""The nn family of torch's spec (issue 27): the layers and functions around its new ops,
against torch: reprs, state-dict keys, values, gradients, graph node names and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime
import runtime.nn.functional as F

# (layer name, constructor arguments, input shape)
LAYERS = [
    ("Hardshrink", (), (2, 5)),
    ("Hardshrink", (0.3,), (2, 5)),
    ("Softshrink", (0.25,), (2, 5)),
    ("Threshold", (0.1, 20.0), (2, 5)),
    ("Threshold", (0.1, -2.0, True), (2, 5)),
    ("CELU", (0.5,), (2, 5)),
    ("CELU", (1.0, True), (2, 5)),
    ("SELU", (), (2, 5)),
    ("SELU", (True,), (2, 5)),
    ("Softsign", (), (2, 5)),
    ("Tanhshrink", (), (2, 5)),
    ("Upsample", ((5, 7),), (1, 2, 3, 4)),
    ("Upsample", (None, 2.0, "bilinear"), (1, 2, 3, 4)),
    ("Upsample", (None, (1.5, 2.5), "bicubic", True), (1, 2, 3, 4)),
    ("Upsample", (None, 1.7, "trilinear"), (1, 2, 2, 3, 3)),
    ("Upsample", (9, None, "linear", True), (2, 3, 4)),
    ("Upsample", (None, 2.3, "nearest-exact"), (2, 3, 4)),
    ("UpsamplingNearest2d", (None, 2), (1, 2, 3, 4)),
    ("UpsamplingBilinear2d", ((5, 6),), (1, 2, 3, 4)),
    ("PixelShuffle", (2,), (2, 8, 3, 2)),
    ("PixelUnshuffle", (2,), (2, 2, 4, 6)),
    ("ChannelShuffle", (3,), (2, 6, 2, 2)),
]


@pytest.mark.parametrize(("name", "args", "shape"), LAYERS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LAYERS)])
def test_layer_against_torch(name: str, args: tuple, shape: tuple) -> None:
    """Same repr, no state, same output and gradient, same node name, as torch's layer."""
    theirs, ours = getattr(torch.nn, name)(*args), getattr(runtime.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    data = np.random.default_rng(0).standard_normal(shape)
    x_t = torch.tensor(data, requires_grad=True)
    x_r = runtime.tensor(data, requires_grad=True)
    y_t, y_r = theirs(x_t * 1), ours(x_r * 1)  # (* 1: the in-place layers need a non-leaf)
    np.testing.assert_allclose(y_r.detach().numpy(), y_t.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    assert y_r.grad_fn.name() == y_t.grad_fn.name()
    cotangent = np.random.default_rng(1).standard_normal(tuple(y_t.shape))
    y_t.backward(torch.tensor(cotangent))
    y_r.backward(runtime.tensor(cotangent))
    np.testing.assert_allclose(x_r.grad.numpy(), x_t.grad.numpy(), rtol=1e-12, atol=1e-12)


def _outcome(function, module) -> tuple:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(module)
    except Exception as error:  # noqa: BLE001 - the class and message are compared
        return type(error).__name__, str(error)
    return "ok", tuple(result.shape)


BAD_CALLS = [
    lambda m: m.nn.functional.softshrink(m.ones(3, dtype=m.float64), -1.0),
    lambda m: m.nn.functional.softshrink(m.ones(3, dtype=m.int64)),
    lambda m: m.nn.functional.hardshrink(m.ones(3, dtype=m.int64)),
    lambda m: m.nn.functional.celu(m.ones(3), 0.0),
    lambda m: m.nn.functional.threshold(m.ones(3, dtype=m.bool), 0, 1),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=4, scale_factor=2.0),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3)),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=(4, 5)),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=4, mode="bilinear"),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3, 4), size=4, mode="linear"),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=4, align_corners=True),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=0),
    lambda m: m.nn.functional.interpolate(m.ones(1, 0, 3), size=4),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3, dtype=m.int64), size=4),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=4, mode="cubic"),
    lambda m: m.nn.functional.interpolate(m.ones(2, 3), size=4),
    lambda m: m.nn.functional.interpolate(m.ones(1, 2, 3), size=4,
                                          recompute_scale_factor=True),
    lambda m: m.nn.functional.pixel_shuffle(m.ones(2, 5, 4, 6), 2),
    lambda m: m.nn.functional.pixel_shuffle(m.ones(5, 4), 2),
    lambda m: m.nn.functional.pixel_shuffle(m.ones(2, 4, 4, 6), 0),
    lambda m: m.nn.functional.pixel_unshuffle(m.ones(2, 5, 3, 6), 2),
    lambda m: m.nn.functional.pixel_unshuffle(m.ones(2, 5, 4, 5), 2),
    lambda m: m.nn.functional.channel_shuffle(m.ones(2, 5, 4), 2),
    lambda m: m.nn.functional.channel_shuffle(m.ones(2, 6, 4), 0),
    lambda m: m.nn.functional.channel_shuffle(m.ones(6, 4), 2),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=[str(i) for i in range(len(BAD_CALLS))])
def test_errors_as_torch(call) -> None:
    """Bad arguments raise torch's exception class with torch's message."""
    assert _outcome(call, runtime) == _outcome(call, torch)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_soft_margin_loss_layer(reduction: str) -> None:
    """SoftMarginLoss: torch's repr, value, gradient and node name."""
    theirs = torch.nn.SoftMarginLoss(reduction=reduction)
    ours = runtime.nn.SoftMarginLoss(reduction=reduction)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(2)
    data, target = rng.standard_normal((3, 4)), np.sign(rng.standard_normal((3, 4)))
    x_t, x_r = torch.tensor(data, requires_grad=True), runtime.tensor(data, requires_grad=True)
    y_t, y_r = theirs(x_t, torch.tensor(target)), ours(x_r, runtime.tensor(target))
    np.testing.assert_allclose(y_r.detach().numpy(), y_t.detach().numpy(), rtol=1e-12)
    assert y_r.grad_fn.name() == y_t.grad_fn.name() == "SoftMarginLossBackward0"
    y_t.sum().backward()
    y_r.sum().backward()
    np.testing.assert_allclose(x_r.grad.numpy(), x_t.grad.numpy(), rtol=1e-12)


def test_inplace_threshold_value_above_threshold() -> None:
    """threshold_ with a value above the threshold: the gradient follows the input before the
    write (the node keeps a copy, as torch's), not the result."""
    data = [-2.0, -0.7, 0.1, 0.3, 0.9, 4.0]
    grads = []
    for module in (torch, runtime):
        leaf = module.tensor(data, dtype=module.float64, requires_grad=True)
        out = leaf * 1
        module.nn.functional.threshold(out, 0.2, 20.0, inplace=True)
        out.sum().backward()
        assert out.grad_fn.name() == "ThresholdBackward1"
        grads.append(leaf.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    assert list(grads[1]) == [0, 0, 0, 1, 1, 1]


def test_interpolate_scale_factor_sizes_and_positions() -> None:
    """A scale factor sets the output size (int(size * factor)) and, without
    recompute_scale_factor, the source positions too, as torch's .vec overloads do."""
    data = np.arange(2 * 7, dtype=np.float64).reshape(1, 2, 7)
    for recompute in (None, True):
        for mode in ("nearest", "linear", "nearest-exact"):
            want = torch.nn.functional.interpolate(
                torch.tensor(data), scale_factor=1.37, mode=mode,
                recompute_scale_factor=recompute)
            got = F.interpolate(runtime.tensor(data), scale_factor=1.37, mode=mode,
                                recompute_scale_factor=recompute)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), [
    ("Conv3d", (2, 4, (2, 3, 2)), {"stride": (1, 2, 1), "padding": 1, "dilation": (2, 1, 1),
                                   "groups": 2}, (2, 2, 4, 5, 4)),
    ("Conv3d", (3, 2, 2), {"bias": False, "padding_mode": "replicate", "padding": 1},
     (3, 4, 3, 3)),
    ("ConvTranspose3d", (2, 4, 2), {"stride": 2, "output_padding": 1}, (2, 2, 3, 2, 3)),
])
def test_conv3d_layers(name: str, args: tuple, kwargs: dict, shape: tuple) -> None:
    """Conv3d and ConvTranspose3d draw torch's parameters, keep torch's state-dict keys and
    repr, and compute torch's output and gradients."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    runtime.manual_seed(0)
    ours = getattr(runtime.nn, name)(*args, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
    data = np.random.default_rng(0).standard_normal(shape)
    x_t, x_r = torch.tensor(data, requires_grad=True), runtime.tensor(data, requires_grad=True)
    y_t, y_r = theirs(x_t), ours(x_r)
    np.testing.assert_allclose(y_r.detach().numpy(), y_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    y_t.sum().backward()
    y_r.sum().backward()
    np.testing.assert_allclose(x_r.grad.numpy(), x_t.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-10, atol=1e-12)
