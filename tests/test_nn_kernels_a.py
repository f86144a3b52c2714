"""nn kernels A (issue 27): torch's convolution, pooling and grid-sampling ops of its spec,
through their public names, against torch: values, gradients, node names and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime


def _pair(shape: tuple, seed: int) -> tuple:
    data = np.random.default_rng(seed).standard_normal(shape)
    return (torch.tensor(data, requires_grad=True), runtime.tensor(data, requires_grad=True))


def _module(library: object, path: str) -> object:
    for part in path.split("."):
        library = getattr(library, part)
    return library


# (function path under torch / runtime, tensor shapes, other arguments, keyword arguments)
CALLS = [
    ("conv3d", [(2, 3, 4, 5, 4), (4, 3, 2, 2, 2), (4,)], (1, 1), {}),
    ("conv3d", [(3, 5, 4, 6), (2, 3, 3, 1, 2)], (), {"stride": 2, "dilation": (1, 2, 1)}),
    ("conv_transpose1d", [(2, 3, 5), (3, 2, 3), (2,)], (2, 1, 1), {}),
    ("conv_transpose2d", [(2, 4, 3, 3), (4, 3, 2, 2)], (), {"stride": 2, "groups": 2,
                                                            "output_padding": 1}),
    ("conv_transpose3d", [(1, 2, 2, 3, 2), (2, 3, 2, 1, 2), (3,)], (1, 0, 0, 1, 2), {}),
    ("conv_tbc", [(7, 2, 3), (3, 3, 4), (4,)], (1,), {}),
    ("conv_tbc", [(5, 1, 2), (2, 2, 3), (3,)], (), {}),
    ("_convolution", [(2, 3, 6, 5), (4, 3, 3, 2), (4,)],
     ([1, 2], [1, 0], [1, 1], False, [0, 0], 1, False, False, True, True), {}),
    ("_convolution", [(2, 4, 3, 3), (4, 1, 2, 2)],
     (None, [2, 1], [0, 1], [1, 2], True, [1, 0], 2, False, False, True, True), {}),
    ("nn.functional.unfold", [(2, 3, 6, 5)], ((2, 3),), {"dilation": (2, 1), "stride": 2}),
    ("nn.functional.unfold", [(3, 5, 5)], (2,), {"padding": 1}),
    ("nn.functional.fold", [(2, 12, 20)], ((6, 5), 2), {}),
    ("nn.functional.fold", [(18, 9)], ((7, 6), (3, 2)), {"dilation": (2, 1), "padding": (1, 2),
                                                         "stride": (2, 3)}),
    ("nn.functional.max_pool3d", [(2, 2, 4, 5, 4)], (2,), {}),
    ("nn.functional.max_pool3d", [(2, 5, 6, 5)], ((3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 1, 2),
                                                  True), {}),
    ("nn.functional.avg_pool3d", [(1, 2, 5, 6, 5)], ((3, 2, 2), (2, 1, 2), (1, 1, 0), True,
                                                     False), {}),
    ("nn.functional.avg_pool3d", [(2, 4, 4, 3)], ((3, 3, 2),), {"divisor_override": 5,
                                                                 "padding": (1, 0, 1)}),
    ("nn.functional.adaptive_avg_pool3d", [(2, 2, 5, 7, 6)], ((2, 3, 4),), {}),
    ("nn.functional.adaptive_avg_pool3d", [(2, 3, 2, 4)], ((5, None, 1),), {}),
    ("nn.functional.adaptive_max_pool3d", [(2, 2, 5, 7, 6)], ((2, 3, 4),), {}),
    ("nn.functional.adaptive_max_pool3d", [(2, 3, 2, 4)], ((5, 3, 1),), {}),
]


@pytest.mark.parametrize(("path", "shapes", "args", "kwargs"), CALLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_call_against_torch(path: str, shapes: list, args: tuple, kwargs: dict) -> None:
    """Same value, node name and gradients as torch's function of the same name."""
    pairs = [_pair(shape, seed) for seed, shape in enumerate(shapes)]
    y_t = _module(torch, path)(*(t for t, _ in pairs), *args, **kwargs)
    y_r = _module(runtime, path)(*(r for _, r in pairs), *args, **kwargs)
    np.testing.assert_allclose(y_r.detach().numpy(), y_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert y_r.grad_fn.name() == y_t.grad_fn.name()
    cotangent = np.random.default_rng(9).standard_normal(tuple(y_t.shape))
    y_t.backward(torch.tensor(cotangent))
    y_r.backward(runtime.tensor(cotangent))
    for t, r in pairs:
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def _outcome(function, module) -> tuple:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = function(module)
    except Exception as error:  # noqa: BLE001 - the class and message are compared
        return type(error).__name__, str(error)
    return "ok", tuple(result.shape)


BAD_CALLS = [
    lambda m: m.conv_tbc(m.ones(7, 2, 3), m.ones(3, 2, 4), m.ones(4), 1),
    lambda m: m.conv_tbc(m.ones(7, 2), m.ones(3, 3, 4), m.ones(4), 1),
    lambda m: m.conv_tbc(m.ones(7, 2, 3), m.ones(3, 3), m.ones(4), 1),
    lambda m: m.conv_tbc(m.ones(7, 2, 3), m.ones(3, 3, 4), m.ones(5), 1),
    lambda m: m.conv_tbc(m.ones(2, 2, 3), m.ones(5, 3, 4), m.ones(4), 0),
    lambda m: m.conv_tbc(m.ones(2, 2, 3), m.ones(3, 3, 4), m.ones(4), 0),
    lambda m: m.conv_tbc(m.ones(2, 2, 3), m.ones(3, 3, 4), m.ones(4, 1), 0),
    lambda m: m.conv3d(m.ones(2, 3, 4, 4), m.ones(2, 3, 2, 2, 2)),
    lambda m: m.conv_transpose2d(m.ones(1, 2, 3, 3), m.ones(2, 2, 2, 2), stride=2,
                                 output_padding=2),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), [2]),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), (2, 3, 1)),
    lambda m: m.nn.functional.unfold(m.ones(6, 5), 2),
    lambda m: m.nn.functional.unfold(m.ones(5), 2),
    lambda m: m.nn.functional.unfold(m.ones(1, 2, 3, 4, 5), 2),
    lambda m: m.nn.functional.unfold(m.ones(0, 4, 5), 2),
    lambda m: m.nn.functional.unfold(m.ones(0, 3, 4, 5), 2),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), (0, 2)),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), 2, dilation=(0, 1)),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), 2, padding=(-1, 0)),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), 2, stride=(0, 1)),
    lambda m: m.nn.functional.unfold(m.ones(2, 3, 6, 5), (7, 2)),
    lambda m: m.nn.functional.unfold(m.ones(1, 1, 4, 4, dtype=m.int64), 2),
    lambda m: m.nn.functional.unfold(m.ones(1, 1, 3, 3, dtype=m.bool), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 12, 20), (6, 6), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 13, 21), (6, 5), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 12, 20), (6, 5), (3, 2)),
    lambda m: m.nn.functional.fold(m.ones(1, 2, 12, 20), (6, 5), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 12, 20), (0, 5), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 12, 20), (6, 5, 1), 2),
    lambda m: m.nn.functional.fold(m.ones(2, 0, 20), (6, 5), 2),
    lambda m: m.nn.functional.fold(m.ones(0, 12, 20), (6, 5), 2),
    lambda m: m.nn.functional.fold(m.ones(1, 4, 4, dtype=m.int64), 3, 2),
    lambda m: m.nn.functional.adaptive_avg_pool3d(m.ones(1, 1, 1, 1, 1), (-1, 0, 2)),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.ones(1, 1, 1, 1, 1), (-1, 0, 2)),
    lambda m: m.nn.functional.adaptive_avg_pool3d(m.ones(1, 1, 1, 1, 1), (0, 1, 2)),
    lambda m: m.nn.functional.adaptive_max_pool3d(m.ones(1, 1, 2, 2, 2), (2, 2, 0)),
    lambda m: m.nn.functional.adaptive_avg_pool3d(m.ones(1, 1, 2, 2, 2, dtype=m.int64), 1),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.tensor([[[[0, 1], [2, 30]]]]),
                                           2),
    lambda m: m.nn.functional.max_unpool3d(m.ones(1, 1, 1, 1, 2), m.tensor([[[[[0, 9]]]]]), 2),
    lambda m: m.nn.functional.max_unpool3d(m.ones(1, 1, 1, 1, 2),
                                           m.tensor([[[[[0, 1]]]]], dtype=m.int32), 2),
    lambda m: m.nn.functional.max_unpool2d(m.ones(1, 1, 2, 2), m.tensor([[[[0, 1]]]]), 2),
]


@pytest.mark.parametrize("call", BAD_CALLS, ids=[str(i) for i in range(len(BAD_CALLS))])
def test_bad_call_against_torch(call) -> None:
    """The same exception class and message as torch (or the same shape)."""
    assert _outcome(call, runtime) == _outcome(call, torch)


def test_fold_of_bools_is_an_or() -> None:
    """Overlapping blocks of a bool tensor combine as torch's: True where any is."""
    data = np.random.default_rng(0).random((1, 4, 4)) < 0.3
    theirs = torch.nn.functional.fold(torch.tensor(data), 3, 2)
    ours = runtime.nn.functional.fold(runtime.tensor(data), 3, 2)
    assert ours.dtype == runtime.bool
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_against_torch(dims: int) -> None:
    """Pool with indices, then unpool (torch's max_unpool2d / 3d op, 1-d through the 2-d
    one): the same values, node and gradient."""
    shape = (2, 3) + (6,) * dims
    results = []
    for library in (torch, runtime):
        x = library.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        pool = getattr(library.nn.functional, f"max_pool{dims}d")
        unpool = getattr(library.nn.functional, f"max_unpool{dims}d")
        values, indices = pool(x, 2, return_indices=True)
        y = unpool(values * 1, indices, 2, output_size=(7,) * dims)
        y.backward(library.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))))
        results.append((y.detach().numpy(), y.grad_fn.name(), x.grad.numpy()))
    (y_t, name_t, grad_t), (y_r, name_r, grad_r) = results
    np.testing.assert_allclose(y_r, y_t, rtol=1e-12)
    assert name_r == name_t
    np.testing.assert_allclose(grad_r, grad_t, rtol=1e-12)


@pytest.mark.parametrize(("dims", "shape", "options"), [
    (2, (2, 3, 11, 9), {"kernel_size": (2, 3), "output_size": (5, 4)}),
    (2, (3, 10, 10), {"kernel_size": 3, "output_ratio": (0.5, 0.5)}),
    (3, (2, 2, 7, 8, 9), {"kernel_size": (2, 3, 2), "output_size": (4, 3, 5)}),
    (3, (2, 6, 6, 6), {"kernel_size": 2, "output_ratio": 0.5}),
])
def test_fractional_max_pool_nodes(dims: int, shape: tuple, options: dict) -> None:
    """Given the same random samples, the same values, indices, node and gradient."""
    batch = shape[0] if len(shape) == dims + 2 else 1
    channels = shape[-dims - 1]
    samples = np.random.default_rng(2).random((batch, channels, dims))
    results = []
    for library in (torch, runtime):
        x = library.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
        function = getattr(library.nn.functional, f"fractional_max_pool{dims}d")
        y, indices = function(x, return_indices=True, _random_samples=library.tensor(samples),
                              **options)
        y.backward(library.ones_like(y))
        results.append((y.detach().numpy(), indices.numpy(), y.grad_fn.name(), x.grad.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# -- grid sampling and affine grids -----------------------------------------------------------

GRID_CASES = [(mode, padding, align, dims) for dims in (2, 3)
              for mode in ("bilinear", "nearest", "bicubic") for padding in
              ("zeros", "border", "reflection") for align in (False, True)
              if not (dims == 3 and mode == "bicubic")]


@pytest.mark.parametrize(("mode", "padding", "align", "dims"), GRID_CASES,
                         ids=[f"{m}-{p}-{a}-{d}d" for m, p, a, d in GRID_CASES])
def test_grid_sample_against_torch(mode: str, padding: str, align: bool, dims: int) -> None:
    """Values, node, gradients of input and grid, and the second-order gradients, as torch's
    (the grid reaches beyond [-1, 1], where the padding modes differ)."""
    rng = np.random.default_rng(dims)
    data = rng.standard_normal((2, 3) + (4, 5, 3)[:dims])
    points = rng.uniform(-1.6, 1.6, (2,) + (3, 2, 2)[:dims] + (dims,))
    cotangent = rng.standard_normal((2, 3) + (3, 2, 2)[:dims])
    weights = [rng.standard_normal(data.shape), rng.standard_normal(points.shape)]
    results = []
    for library in (torch, runtime):
        x = library.tensor(data, requires_grad=True)
        grid = library.tensor(points, requires_grad=True)
        y = library.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=padding,
                                              align_corners=align)
        gx, gg = library.autograd.grad(y, (x, grid), library.tensor(cotangent),
                                       create_graph=True)
        total = (gx * library.tensor(weights[0])).sum() + (gg * library.tensor(weights[1])).sum()
        second = library.autograd.grad(total, (x, grid), allow_unused=True,
                                       materialize_grads=True)
        results.append([y.detach().numpy(), gx.detach().numpy(), gg.detach().numpy(),
                        *(s.numpy() for s in second), y.grad_fn.name()])
    for ours, theirs in zip(results[1], results[0], strict=True):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize(("size", "align"), [
    ((2, 3, 4, 5), False), ((2, 3, 4, 5), True), ((1, 1, 3, 1), False),
    ((2, 1, 2, 3, 4), True), ((1, 2, 3, 2, 2), False)])
def test_affine_grid_against_torch(size: tuple, align: bool) -> None:
    dims = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((size[0], dims, dims + 1))
    cotangent = np.random.default_rng(1).standard_normal((size[0], *size[2:], dims))
    results = []
    for library in (torch, runtime):
        t = library.tensor(theta, requires_grad=True)
        grid = library.nn.functional.affine_grid(t, size, align_corners=align)
        grid.backward(library.tensor(cotangent))
        results.append((grid.detach().numpy(), t.grad.numpy(), grid.grad_fn.name()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)
    assert results[1][2] == results[0][2]


def test_float32_grid_sampling_and_the_cpu_fallback() -> None:
    """float32: torch.grid_sampler, torch.grid_sampler_2d and torch's float32-only CPU
    fallback agree with torch to float32 rounding."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    points = rng.uniform(-1.2, 1.2, (2, 3, 3, 2)).astype(np.float32)
    for name in ("grid_sampler", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback"):
        for mode, padding in ((0, 0), (1, 1), (2, 2)):
            theirs = getattr(torch, name)(torch.tensor(data), torch.tensor(points), mode,
                                          padding, False)
            ours = getattr(runtime, name)(runtime.tensor(data), runtime.tensor(points), mode,
                                          padding, False)
            assert ours.dtype == runtime.float32
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5, atol=2e-6)


GRID_BAD_CALLS = [
    lambda m: m.grid_sampler(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 2, dtype=m.float64), 0, 0,
                             False),
    lambda m: m.grid_sampler(m.ones(2, 3, 4, 5), m.ones(1, 3, 2, 2), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 3), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(2, 3, 0, 5), m.ones(2, 3, 2, 2), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(2, 0, 4, 5), m.ones(2, 3, 2, 2), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(0, 3, 4, 5), m.ones(0, 3, 2, 2), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(3, 4, 5), m.ones(3, 2, 2), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 2, 3), 0, 0, False),
    lambda m: m.grid_sampler(m.ones(1, 2, 3, 3, 3), m.ones(1, 2, 2, 2, 3), 2, 0, False),
    lambda m: m.grid_sampler(m.ones(2, 3, 4, 5, dtype=m.int64),
                             m.ones(2, 3, 2, 2, dtype=m.int64), 0, 0, False),
    lambda m: m.grid_sampler_2d(m.ones(1, 2, 3, 3, 3), m.ones(1, 2, 2, 2, 3), 0, 0, False),
    lambda m: m.grid_sampler_3d(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 2), 0, 0, False),
    lambda m: m.nn.functional.grid_sample(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 2), mode="x"),
    lambda m: m.nn.functional.grid_sample(m.ones(2, 3, 4, 5), m.ones(2, 3, 2, 2),
                                          padding_mode="x"),
    lambda m: m.affine_grid_generator(m.ones(2, 3, 3), [2, 3, 4, 5], False),
    lambda m: m.affine_grid_generator(m.ones(2, 2, 3), [2, 3, 4], False),
    lambda m: m.affine_grid_generator(m.ones(3, 2, 3), [2, 3, 4, 5], False),
    lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3, dtype=m.int64), [2, 3, 4, 5],
                                          align_corners=False),
    lambda m: m.nn.functional.affine_grid(m.ones(2, 3, 3), [2, 3, 4, 5], align_corners=False),
    lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3), [2, 3, 4, 5, 6],
                                          align_corners=False),
    lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3), [2, 3, 4], align_corners=False),
    lambda m: m.nn.functional.affine_grid(m.ones(2, 2, 3), [2, 3, 0, 5], align_corners=False),
]


@pytest.mark.parametrize("call", GRID_BAD_CALLS, ids=[str(i) for i in range(len(GRID_BAD_CALLS))])
def test_grid_bad_call_against_torch(call) -> None:
    assert _outcome(call, runtime) == _outcome(call, torch)


@pytest.mark.parametrize("function", ["grid_sample", "affine_grid"])
def test_align_corners_warning(function: str) -> None:
    """Without align_corners both warn as torch does, with torch's message."""
    messages = []
    for library in (torch, runtime):
        args = ((library.ones(1, 1, 2, 2), library.zeros(1, 1, 1, 2)) if function ==
                "grid_sample" else (library.zeros(1, 2, 3), [1, 1, 2, 2]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(library.nn.functional, function)(*args)
        messages.append([str(w.message) for w in caught])
    assert messages[1] == messages[0] and messages[0]


# -- antialiased resizing ---------------------------------------------------------------------

RESIZES = [("bilinear", {"size": (4, 5)}), ("bicubic", {"size": (4, 5)}),
           ("lanczos", {"size": (4, 5)}), ("bilinear", {"size": (4, 5), "align_corners": True}),
           ("bicubic", {"scale_factor": 0.4}), ("lanczos", {"scale_factor": (0.5, 1.7)}),
           ("bicubic", {"size": (12, 3), "align_corners": True})]


@pytest.mark.parametrize(("mode", "options"), RESIZES,
                         ids=[f"{m}-{i}" for i, (m, _) in enumerate(RESIZES)])
def test_antialiased_interpolate_against_torch(mode: str, options: dict) -> None:
    data = np.random.default_rng(0).standard_normal((2, 3, 9, 7))
    results = []
    for library in (torch, runtime):
        x = library.tensor(data, requires_grad=True)
        y = library.nn.functional.interpolate(x, mode=mode, antialias=True, **options)
        y.backward(library.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape))))
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-12)
    assert results[1][2] == results[0][2]


def _nn(library: object, name: str) -> object:
    """torch keeps its internal nn ops in torch._C._nn; gradgen in its top namespace."""
    return getattr(library._C._nn if library is torch else library, name)


RESIZE_CALLS = [
    lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), size=(2, 2), mode="lanczos"),
    lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), size=(2, 2), mode="lanczos",
                                          antialias=True, align_corners=True),
    lambda m: m.nn.functional.interpolate(m.ones(1, 4, 4), size=(2,), mode="linear",
                                          antialias=True),
    lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4), size=(2, 2), antialias=True),
    lambda m: m.nn.functional.interpolate(m.ones(1, 1, 4, 4, 4), size=(2, 3, 2), mode="area"),
    lambda m: _nn(m, "_upsample_bilinear2d_aa")(m.ones(1, 1, 5, 6), None, False, [0.5, 0.7]),
    lambda m: _nn(m, "_upsample_bicubic2d_aa")(m.ones(1, 1, 5, 6), [2, 3], False, [0.5, 0.7]),
    lambda m: _nn(m, "_upsample_lanczos2d_aa")(m.ones(1, 1, 5, 6), None, False, None),
    lambda m: _nn(m, "_upsample_bilinear2d_aa")(m.ones(1, 1, 5, 6), [2, 3], False),
    lambda m: _nn(m, "_upsample_bilinear2d_aa")(m.ones(1, 1, 4, 4, dtype=m.int64), [2, 3], False),
    lambda m: _nn(m, "_upsample_bicubic2d_aa")(m.ones(1, 4, 4), [2, 3], False),
    lambda m: _nn(m, "_upsample_lanczos2d_aa")(m.ones(1, 0, 4, 4), [2, 3], False),
    lambda m: _nn(m, "_upsample_lanczos2d_aa")(m.ones(1, 1, 4, 4), [0, 3], False),
    lambda m: _nn(m, "_upsample_lanczos2d_aa")(m.ones(0, 1, 4, 4), [2, 3], False),
]


@pytest.mark.parametrize("call", RESIZE_CALLS, ids=[str(i) for i in range(len(RESIZE_CALLS))])
def test_resize_call_against_torch(call) -> None:
    assert _outcome(call, runtime) == _outcome(call, torch)


def test_max_pool2d_op_against_torch() -> None:
    """The spec's max_pool2d (torch's MPS kernel) gives torch's CPU values, and its backward
    op the gradient torch's max_pool2d_with_indices gives."""
    from generated import ops

    data = np.random.default_rng(0).standard_normal((2, 3, 7, 6))
    args = ([3, 2], [2, 1], [1, 1], [2, 1], True)
    theirs = torch.ops.aten.max_pool2d(torch.tensor(data, requires_grad=True), *args)
    ours = ops.max_pool2d(runtime.tensor(data, requires_grad=True), *args)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    x = torch.tensor(data, requires_grad=True)
    cotangent = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    torch.ops.aten.max_pool2d(x, *args).backward(torch.tensor(cotangent))
    grad = ops.max_pool2d_backward(runtime.tensor(cotangent), runtime.tensor(data), *args)
    np.testing.assert_allclose(grad.numpy(), x.grad.numpy(), rtol=1e-12)
