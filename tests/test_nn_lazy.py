"""Lazy modules, UninitializedParameter / UninitializedBuffer, nn.Buffer and nn.Container
against torch: reprs before and after the first forward, the class a module becomes,
state-dict keys, initial values after the same seed, gradients, load_state_dict into a lazy
module, warnings and errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle import close, same

LAZY = [
    ("LazyLinear", (3,), {}, (2, 4)), ("LazyLinear", (2,), {"bias": False}, (5,)),
    ("LazyConv1d", (4, 3), {}, (2, 3, 7)), ("LazyConv2d", (4, 3), {"padding": 1}, (1, 2, 5, 5)),
    ("LazyConv2d", (4, 2), {"groups": 2, "bias": False}, (2, 6, 4)),
    ("LazyConv3d", (2, 2), {}, (1, 2, 3, 3, 3)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (3, 2), {"output_padding": 1, "stride": 2}, (1, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {"bias": False}, (2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)), ("LazyBatchNorm2d", (), {"momentum": 0.5},
                                           (2, 3, 2, 2)),
    ("LazyBatchNorm1d", (), {"affine": False}, (4, 3, 2)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (2, 3, 2, 2)),
]


@pytest.mark.parametrize("name, args, options, shape", LAZY)
def test_lazy_modules(name: str, args: tuple, options: dict, shape: tuple) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = getattr(lib.nn, name)(*args, **options)
        before = [repr(module), type(module).__name__, list(module.state_dict()),
                  [repr(p) for p in module.parameters()], module.has_uninitialized_params()]
        x = lib.randn(shape, requires_grad=True)
        y = module(x)
        y.pow(2).sum().backward()
        after = [repr(module), type(module).__name__, list(module.state_dict()),
                 hasattr(module, "has_uninitialized_params"), y, x.grad]
        return before + after + [p.detach() for p in module.parameters()] + [
            p.grad for p in module.parameters()] + [b for b in module.buffers()]
    close(program, rtol=1e-4, atol=1e-5)  # batch norm's input gradient cancels to ~1e-4


def test_lazy_module_inside_a_model_trains_like_torch() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(1)
        model = lib.nn.Sequential(lib.nn.LazyConv2d(4, 3), lib.nn.ReLU(), lib.nn.Flatten(),
                                  lib.nn.LazyLinear(2))
        x = lib.randn(3, 2, 5, 5)
        model(x)  # the dry run that initialises
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return [repr(model), *losses]
    close(program)


def test_load_state_dict_into_lazy_module() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        source = lib.nn.Linear(5, 3)
        lazy = lib.nn.LazyLinear(3)
        lazy.load_state_dict(source.state_dict())
        still_lazy = [type(lazy).__name__, repr(lazy), tuple(lazy.weight.shape)]
        y = lazy(lib.ones(2, 5))
        return [*still_lazy, type(lazy).__name__, repr(lazy), y, source(lib.ones(2, 5))]
    close(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.LazyLinear(3).weight.shape,
    lambda lib: lib.nn.LazyConv2d(3, 2)(lib.ones(3)),
    lambda lib: lib.nn.LazyConv1d(4, 2, groups=2)(lib.ones(2, 3, 5)),
    lambda lib: lib.nn.LazyLinear(3).weight.share_memory_(),
])
def test_lazy_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


def test_uninitialized_tensors() -> None:
    def program(lib: Any) -> list:
        parameter = lib.nn.UninitializedParameter()
        buffer = lib.nn.UninitializedBuffer()
        plain = [repr(parameter), repr(buffer), parameter.requires_grad, buffer.requires_grad,
                 str(parameter.dtype), isinstance(parameter, lib.nn.Parameter),
                 isinstance(buffer, lib.Tensor), tuple(parameter.size())]
        parameter.materialize((2, 3))
        buffer.materialize((4,), dtype=lib.float64)
        return plain + [type(parameter).__name__, tuple(parameter.shape), type(buffer).__name__,
                        tuple(buffer.shape), str(buffer.dtype), parameter.requires_grad]
    same(program)


def test_buffer() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.Module()
        module.kept = lib.nn.Buffer(lib.ones(2))
        module.dropped = lib.nn.Buffer(lib.zeros(3), persistent=False)
        source = lib.ones(2, requires_grad=True)
        marked = lib.nn.Buffer(source)
        module.plain = lib.zeros(1)
        return [list(module.state_dict()), [name for name, _ in module.named_buffers()],
                isinstance(module.kept, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer),
                type(module.kept).__name__, marked.requires_grad, marked is source,
                tuple(lib.nn.Buffer().shape), "plain" in dict(module.named_buffers())]
    same(program)


def test_container() -> None:
    def program(lib: Any) -> list:
        container = lib.nn.Container(first=lib.nn.Linear(2, 2), second=lib.nn.ReLU())
        return [repr(container), list(container.state_dict())]
    same(program)  # with the FutureWarning


@pytest.mark.parametrize("kwargs", [
    {"dtype": "float64", "device": "cpu"}, {"factory_kwargs": {"dtype": 2}, "device": "cpu"},
    {"dtype": 1, "factory_kwargs": {"dtype": 2}}, {"foo": 1}, None, {},
])
def test_factory_kwargs(kwargs: Any) -> None:
    same(lambda lib: lib.nn.factory_kwargs(kwargs))


def test_rnn_cell_base_is_exported() -> None:
    same(lambda lib: [lib.nn.RNNCellBase.__name__,
                      issubclass(lib.nn.GRUCell, lib.nn.RNNCellBase),
                      issubclass(lib.nn.RNNCellBase, lib.nn.Module)])
