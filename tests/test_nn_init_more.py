"""nn.init's dirac_, eye_, sparse_ and the deprecated un-suffixed names against torch: the
same numbers bit for bit after the same seed, the same warnings and errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle import same


@pytest.mark.parametrize("shape, groups", [((4, 3, 5), 1), ((3, 16, 5, 5), 1),
                                           ((6, 2, 3, 3), 3), ((2, 4, 3, 3, 3), 2),
                                           ((5, 5, 4, 2, 1), 1)])
def test_dirac(shape: tuple, groups: int) -> None:
    def program(lib: Any) -> tuple:
        w = lib.nn.Parameter(lib.randn(shape))
        result = lib.nn.init.dirac_(w, groups)
        return result is w, w.requires_grad, w.tolist(), w.grad_fn is None
    same(program)


def test_dirac_passes_input_through_a_convolution() -> None:
    def program(lib: Any) -> list:
        conv = lib.nn.Conv2d(3, 3, 3, padding=1, bias=False)
        lib.nn.init.dirac_(conv.weight)
        x = lib.arange(48.0).reshape(1, 3, 4, 4)
        return conv(x).tolist()
    same(program)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye(shape: tuple) -> None:
    def program(lib: Any) -> tuple:
        w = lib.nn.Parameter(lib.randn(shape, dtype=lib.float64))
        result = lib.nn.init.eye_(w)
        return result is w, w.requires_grad, str(w.dtype), w.tolist()
    same(program)


@pytest.mark.parametrize("shape, sparsity, std", [((6, 4), 0.5, 0.01), ((10, 3), 0.1, 1.0),
                                                  ((3, 7), 0.9, 0.2), ((5, 5), 0.0, 0.01)])
def test_sparse(shape: tuple, sparsity: float, std: float) -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(11)
        w = lib.empty(shape)
        lib.nn.init.sparse_(w, sparsity, std)
        return w.numpy().tobytes(), lib.rand(2).tolist()  # the stream continues alike
    same(program)


def test_sparse_with_generator() -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(3)
        generator = lib.Generator().manual_seed(5)
        w = lib.empty(4, 6)
        lib.nn.init.sparse_(w, 0.5, generator=generator)
        return w.numpy().tobytes(), lib.rand(2).tolist()
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3)),
    lambda lib: lib.nn.init.dirac_(lib.empty(3, 3, 3), groups=2),
    lambda lib: lib.nn.init.eye_(lib.empty(3, 3, 3)),
    lambda lib: lib.nn.init.sparse_(lib.empty(3), 0.1),
])
def test_errors(call: Any) -> None:
    assert same(call)[0][0] == "raises"


@pytest.mark.parametrize("name, args", [
    ("uniform", (-1.0, 2.0)), ("normal", (0.5, 2.0)), ("constant", (0.25,)),
    ("xavier_uniform", ()), ("xavier_normal", (2.0,)), ("kaiming_uniform", ()),
    ("kaiming_normal", (0.1, "fan_out")), ("sparse", (0.3,)), ("eye", ()),
])
def test_deprecated_names(name: str, args: tuple) -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(4)
        w = lib.empty(5, 6)
        init = getattr(lib.nn.init, name)
        result = init(w, *args)
        return init.__name__, result is w, w.numpy().tobytes()
    same(program)  # the FutureWarning's class and text too


def test_deprecated_dirac_and_orthogonal_warn() -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(4)
        w = lib.empty(4, 2, 3)
        lib.nn.init.dirac(w)
        lib.nn.init.orthogonal(lib.empty(3, 3))
        return w.tolist(), lib.rand(1).tolist()
    same(program)
