"""3-d max / average / adaptive pooling, LP pooling, max unpooling, fold / unfold and the
F.*_with_indices names against torch: values, indices, gradients, layer reprs and errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle import close, same


def _run(lib: Any, name: str, shape: tuple, args: tuple, kwargs: dict) -> list:
    """F.name(x, *args, **kwargs) on a seeded x; the output(s) and x's gradient."""
    lib.manual_seed(0)
    x = lib.randn(shape, dtype=lib.float64, requires_grad=True)
    result = getattr(lib.nn.functional, name)(x, *args, **kwargs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    (outputs[0] * outputs[0]).sum().backward()
    return [*outputs, x.grad]


CASES = [
    ("max_pool3d", (2, 2, 5, 6, 7), (3, 2, 1), {"return_indices": True}),
    ("max_pool3d", (2, 4, 5, 6), ((2, 3, 2), (1, 2, 2), (1, 1, 0), 2, True, True), {}),
    ("max_pool3d", (1, 1, 4, 4, 4), (2,), {"ceil_mode": True, "stride": 3}),
    ("max_pool3d_with_indices", (1, 2, 3, 4, 5), (2,), {}),
    ("avg_pool3d", (2, 2, 5, 6, 7), (3, 2, 1), {}),
    ("avg_pool3d", (2, 2, 5, 6, 7), (3, 2, 1, True, False), {}),
    ("avg_pool3d", (2, 5, 6, 7), ((3, 2, 2), 2, (1, 0, 1), True, True, 5), {}),
    ("adaptive_avg_pool3d", (2, 2, 5, 6, 7), ((3, 4, 5),), {}),
    ("adaptive_avg_pool3d", (2, 5, 6, 7), ((8, None, 2),), {}),
    ("adaptive_avg_pool3d", (2, 2, 3, 3, 3), (1,), {}),
    ("adaptive_max_pool3d", (2, 2, 5, 6, 7), ((3, 4, 5), True), {}),
    ("adaptive_max_pool3d_with_indices", (2, 3, 4, 2), (2,), {}),
    ("max_pool1d_with_indices", (2, 3, 9), (3, 2, 1), {}),
    ("max_pool2d_with_indices", (2, 3, 6, 7), (3, 2, 1), {}),
    ("adaptive_max_pool1d_with_indices", (2, 3, 9), (4,), {}),
    ("adaptive_max_pool2d_with_indices", (2, 3, 6, 7), ((3, 2),), {}),
    ("lp_pool1d", (2, 2, 7), (3, 2, 2, True), {}),
    ("lp_pool2d", (2, 2, 5, 6), (2, 2), {}),
    ("lp_pool2d", (2, 5, 6), (1.5, (2, 3), 1), {}),
    ("lp_pool3d", (2, 2, 5, 6, 4), (2, 2), {}),
    ("unfold", (2, 3, 5, 6), ((2, 3), 2, 1, (2, 1)), {}),
    ("unfold", (3, 4, 4), (2,), {}),
    ("fold", (2, 12, 12), ((4, 5), 2, 1, 0, 1), {}),
    ("fold", (12, 9), ((5, 5), 2, 1, 1, 2), {}),
]


@pytest.mark.parametrize("name, shape, args, kwargs", CASES)
def test_functions(name: str, shape: tuple, args: tuple, kwargs: dict) -> None:
    close(lambda lib: _run(lib, name, shape, args, kwargs), rtol=1e-7, atol=1e-9)


def test_max_pool_ties_pick_the_first() -> None:
    def program(lib: Any) -> list:
        x = lib.tensor([[[[[1.0, 1.0], [1.0, 0.0]], [[1.0, 1.0], [0.0, 1.0]]]]],
                       requires_grad=True)
        values, indices = lib.nn.functional.max_pool3d(x, 2, return_indices=True)
        values.sum().backward()
        return [values, indices, x.grad]
    close(program)


def test_unpooling() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        F = lib.nn.functional
        x = lib.randn(2, 3, 5, 6)
        pooled, indices = F.max_pool2d(x, 2, return_indices=True)
        pooled.requires_grad_()
        restored = F.max_unpool2d(pooled, indices, 2, output_size=(5, 6))
        (restored * restored).sum().backward()
        x3 = lib.randn(1, 2, 4, 4, 4)
        pooled3, indices3 = F.max_pool3d(x3, 2, return_indices=True)
        x1 = lib.randn(2, 3, 8)
        pooled1, indices1 = F.max_pool1d(x1, 2, return_indices=True)
        unbatched, unbatched_indices = F.max_pool2d(lib.randn(3, 4, 4), 2, return_indices=True)
        return [restored, pooled.grad, lib.nn.MaxUnpool3d(2)(pooled3, indices3),
                F.max_unpool1d(pooled1, indices1, 2, output_size=[2, 3, 9]),
                lib.nn.MaxUnpool2d(2)(unbatched, unbatched_indices)]
    close(program)


@pytest.mark.parametrize("make", [
    lambda nn: nn.MaxPool3d(2), lambda nn: nn.MaxPool3d((1, 2, 3), stride=1, padding=0,
                                                        dilation=2, ceil_mode=True),
    lambda nn: nn.AvgPool3d(3, 2, 1, count_include_pad=False),
    lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), lambda nn: nn.AdaptiveMaxPool3d(2, True),
    lambda nn: nn.LPPool1d(2, 3), lambda nn: nn.LPPool2d(1.5, (2, 2), stride=1),
    lambda nn: nn.LPPool3d(2, 2, ceil_mode=True), lambda nn: nn.MaxUnpool1d(2),
    lambda nn: nn.MaxUnpool2d((2, 3), 1, 1), lambda nn: nn.MaxUnpool3d(2, padding=1),
    lambda nn: nn.Fold((4, 5), 2), lambda nn: nn.Unfold((2, 3), dilation=2, padding=1,
                                                        stride=2),
])
def test_layer_reprs(make: Any) -> None:
    same(lambda lib: [repr(make(lib.nn)), list(make(lib.nn).state_dict()),
                      sorted(k for k in vars(make(lib.nn)) if not k.startswith("_")
                             and k != "training")])


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.MaxPool3d(2, return_indices=True), (1, 2, 4, 4, 4)),
    (lambda nn: nn.AvgPool3d(3, 2, 1), (2, 5, 5, 5)),
    (lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), (1, 2, 4, 5, 6)),
    (lambda nn: nn.AdaptiveMaxPool3d(2), (2, 3, 3, 3)),
    (lambda nn: nn.LPPool2d(2, 2), (1, 2, 4, 4)),
    (lambda nn: nn.Unfold(2), (1, 2, 4, 4)),
    (lambda nn: nn.Fold((3, 3), 2), (1, 8, 4)),
])
def test_layers(make: Any, shape: tuple) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        x = lib.randn(shape, requires_grad=True)
        result = make(lib.nn)(x)
        output = result[0] if isinstance(result, tuple) else result
        output.sum().backward()
        return [*(result if isinstance(result, tuple) else [result]), x.grad]
    close(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.max_pool3d(lib.randn(1, 1, 4, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.avg_pool3d(lib.randn(1, 1, 4, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.max_pool3d(lib.randn(4, 4), 2),
    lambda lib: lib.nn.functional.avg_pool3d(lib.randn(4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_avg_pool3d(lib.randn(4, 4), 2),
    lambda lib: lib.nn.functional.adaptive_max_pool3d(lib.randn(4, 4), 2),
    lambda lib: lib.nn.functional.max_pool3d(lib.randn(1, 1, 4, 4, 4), 5),
    lambda lib: lib.nn.functional.fold(lib.randn(1, 12, 5), (3, 3), 2),
    lambda lib: lib.nn.functional.fold(lib.randn(1, 5, 4), (3, 3), 2),
    lambda lib: lib.nn.functional.max_unpool2d(lib.randn(1, 1, 2, 2),
                                               lib.tensor([[[[0, 1], [2, 30]]]]), 2),
    lambda lib: lib.nn.functional.max_unpool2d(lib.randn(1, 1, 2, 2),
                                               lib.tensor([[[[0, 1], [2, 3]]]]), 2,
                                               output_size=(9, 9)),
    lambda lib: lib.nn.functional.max_unpool2d(lib.randn(1, 1, 2, 2),
                                               lib.tensor([[[[0, 1], [2, 3]]]]), 2,
                                               output_size=(4, 4, 4)),
])
def test_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


# -- fractional max pooling -------------------------------------------------------------------

@pytest.mark.parametrize("dims, shape, kernel, options", [
    (2, (2, 3, 11, 9), (2, 3), {"output_size": (5, 4)}),
    (2, (3, 10, 10), 3, {"output_ratio": (0.5, 0.5)}),
    (2, (1, 2, 8, 9), 2, {"output_ratio": (0.7, 0.4)}),
    (3, (2, 2, 7, 8, 9), (2, 3, 2), {"output_size": (4, 3, 5)}),
    (3, (2, 6, 6, 6), 2, {"output_ratio": 0.5}),
])
def test_fractional_max_pool_draws_as_torch(dims: int, shape: tuple, kernel: Any,
                                            options: dict) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(3)
        x = lib.randn(shape, requires_grad=True)
        function = getattr(lib.nn.functional, f"fractional_max_pool{dims}d")
        values, indices = function(x, kernel, return_indices=True, **options)
        values.pow(2).sum().backward()
        layer = getattr(lib.nn, f"FractionalMaxPool{dims}d")(kernel, **options)
        return [values, indices, x.grad, layer(x),
                lib.rand(2)]
    close(program, rtol=0, atol=0)


def test_fractional_max_pool_with_given_samples() -> None:
    def program(lib: Any) -> list:
        x = lib.arange(2 * 81.0).reshape(1, 2, 9, 9)
        samples = lib.tensor([[[0.9, 0.1], [0.25, 0.75]]])
        values, indices = lib.nn.functional.fractional_max_pool2d_with_indices(
            x, 2, (3, 4), None, True, samples)
        layer = lib.nn.FractionalMaxPool2d(2, output_size=(3, 4), return_indices=True,
                                           _random_samples=samples)
        more = lib.nn.functional.fractional_max_pool2d(x, 2, (3, 4), _random_samples=lib.cat(
            [samples, lib.rand(2, 2, 2)]))
        return [values, indices, *layer(x), list(layer.state_dict()), repr(layer), more]
    close(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 9, 9), 3,
                                                        output_size=8),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(1, 1, 5, 5, 5), 3,
                                                        output_size=4),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 9, 9), 2,
                                                        output_ratio=(0.5, 0.5, 0.5)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 9, 9), 2),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(1, 1, 9, 9), 2, output_size=3, _random_samples=lib.rand(1, 2, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 1, 9, 9), 2,
                                                        output_ratio=0.5),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 8, 8), 2, output_size=4, _random_samples=lib.rand(1, 3, 2)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 8, 8), 2, output_size=4, _random_samples=lib.rand(2, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.randn(2, 3, 8, 8), 2, output_size=4, _random_samples=lib.rand(2, 3)),
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, 3, 0.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=1.5),
])
def test_fractional_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def test_torch_level_names() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        x = lib.randn(2, 3, 8, requires_grad=True)
        values, indices = lib.adaptive_max_pool1d(x, 3)
        pooled, positions = lib.max_pool1d_with_indices(x, 2, [], 0, 1, True)
        (values.sum() + pooled.sum()).backward()
        return [values, indices, pooled, positions, x.grad,
                lib.max_pool3d(lib.randn(1, 2, 4, 4, 4), 2, [1, 2, 2], 1)]
    close(program)
