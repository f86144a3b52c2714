"""Channel and alpha dropout, and the padding layers, against torch: each program is written
once and run with `torch` and with `runtime` (tests/oracle.py), comparing values bit for bit
(dropout draws torch's stream), gradients, graphs, reprs, warnings and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import same

DROPOUT_FORMS = [
    ("feature_dropout", (2, 3, 4)), ("feature_dropout", (5, 7)),
    ("feature_dropout", (3, 4, 5, 6)), ("alpha_dropout", (2, 3, 4)),
    ("alpha_dropout", (40, 50)), ("alpha_dropout", (6,)),
    ("feature_alpha_dropout", (3, 4, 5, 6)), ("feature_alpha_dropout", (4, 9)),
]


def _draw(lib: Any, shape: tuple, dtype: str) -> Any:
    lib.manual_seed(7)
    return lib.randn(shape, dtype=getattr(lib, dtype), requires_grad=True)


def _result(output: Any, leaf: Any) -> tuple:
    """Output values (bytes: bit for bit), grad_fn name and the gradient of a weighted sum."""
    weights = output.detach() * 0 + 1.5
    (output * weights).sum().backward()
    return (output.detach().numpy().tobytes(), str(output.dtype), tuple(output.shape),
            output.grad_fn.name() if output.grad_fn else None, leaf.grad.numpy().tobytes())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, shape", DROPOUT_FORMS)
@pytest.mark.parametrize("p", [0.3, 0.8])
def test_torch_level_forms(name: str, shape: tuple, dtype: str, p: float) -> None:
    def program(lib: Any) -> tuple:
        x = _draw(lib, shape, dtype)
        return _result(getattr(lib, name)(x, p, True), x)
    same(program)


@pytest.mark.parametrize("name", ["feature_dropout_", "alpha_dropout_",
                                  "feature_alpha_dropout_"])
def test_torch_level_inplace(name: str) -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(2)
        x = lib.randn(3, 4, 5)
        y = getattr(lib, name)(x, 0.4, True)
        return y is x, x.numpy().tobytes()
    same(program)


@pytest.mark.parametrize("p, train, shape", [(0.0, True, (2, 3)), (0.5, False, (2, 3)),
                                             (1.0, True, (2, 3)), (0.5, True, (0, 3))])
@pytest.mark.parametrize("name", ["feature_dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_torch_level_edges(name: str, p: float, train: bool, shape: tuple) -> None:
    def program(lib: Any) -> tuple:
        x = lib.ones(shape, requires_grad=True)
        y = getattr(lib, name)(x, p, train)
        return y is x, y.tolist(), y.grad_fn.name() if y.grad_fn else None
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.feature_dropout(lib.ones(3), 0.5, True),
    lambda lib: lib.feature_alpha_dropout(lib.ones(3), 0.5, True),
    lambda lib: lib.alpha_dropout(lib.ones(3), 1.5, True),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(3), 0.5),
    lambda lib: lib.nn.functional.dropout1d(lib.ones(2, 3, 4, 5), 0.5),
    lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4), -0.5),
    lambda lib: lib.nn.functional.alpha_dropout(lib.ones(2, 3), 2.0, True),
    lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(2, 3), -1.0),
    lambda lib: lib.nn.Dropout2d(1.5),
    lambda lib: lib.nn.AlphaDropout(-0.1),
])
def test_errors(call: Any) -> None:
    outcome, _ = same(call)
    assert outcome[0] == "raises"


FUNCTIONAL = [("dropout1d", (2, 3, 8)), ("dropout1d", (3, 8)), ("dropout2d", (2, 3, 4, 5)),
              ("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3, 4, 5, 6)),
              ("dropout3d", (2, 3, 2, 4, 5)), ("dropout3d", (3, 2, 4, 5)),
              ("dropout3d", (3, 4, 5)), ("alpha_dropout", (4, 6)),
              ("feature_alpha_dropout", (2, 5, 3))]


@pytest.mark.parametrize("name, shape", FUNCTIONAL)
def test_functional(name: str, shape: tuple) -> None:
    def program(lib: Any) -> tuple:
        x = _draw(lib, shape, "float32")
        return _result(getattr(lib.nn.functional, name)(x, 0.4, True), x)
    same(program)  # also compares the deprecation warnings of dropout2d / dropout3d


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d"])
def test_functional_inplace(name: str) -> None:
    shape = {"dropout1d": (3, 8), "dropout2d": (2, 3, 4, 5), "dropout3d": (3, 2, 4, 5)}[name]

    def program(lib: Any) -> tuple:
        lib.manual_seed(1)
        x = lib.randn(shape)
        y = getattr(lib.nn.functional, name)(x, 0.5, True, True)
        return y is x, tuple(x.shape), x.numpy().tobytes()
    same(program)


def test_functional_alpha_defaults_to_eval() -> None:
    def program(lib: Any) -> tuple:
        x = lib.ones(3, 4)
        F = lib.nn.functional
        return F.alpha_dropout(x) is x, F.feature_alpha_dropout(x, 0.9) is x
    assert same(program)[0] == ("returns", (True, True))


@pytest.mark.parametrize("name, shape", [
    ("Dropout1d", (2, 3, 8)), ("Dropout2d", (2, 3, 4, 5)), ("Dropout3d", (2, 3, 2, 4, 5)),
    ("AlphaDropout", (5, 6)), ("FeatureAlphaDropout", (2, 5, 3, 3))])
def test_layers(name: str, shape: tuple) -> None:
    def program(lib: Any) -> tuple:
        layer = getattr(lib.nn, name)(0.25)
        x = _draw(lib, shape, "float32")
        trained = _result(layer(x), x)
        layer.eval()
        return (repr(layer), repr(getattr(lib.nn, name)(p=0.1, inplace=True)), trained,
                layer(x) is x, list(layer.state_dict()))
    same(program)


def test_alpha_dropout_layer_ignores_inplace() -> None:
    def program(lib: Any) -> tuple:
        lib.manual_seed(0)
        x = lib.randn(4, 4)
        y = lib.nn.AlphaDropout(0.5, inplace=True)(x)
        return y is x, y.numpy().tobytes()
    same(program)


# -- padding layers ---------------------------------------------------------------------------

PADDINGS = [
    ("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad1d", ((1, -1),), (3, 5)),
    ("ZeroPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)), ("ZeroPad3d", (1,), (2, 2, 3, 4)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 5)), ("ConstantPad2d", ((1, 0, 2, 1), -1.0), (3, 4, 5)),
    ("ConstantPad3d", ((1, 1, 0, 2, 1, 0), 2.0), (1, 2, 3, 4, 5)),
    ("ReflectionPad1d", ((3, 1),), (2, 3, 5)), ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReflectionPad3d", ((1, 2, 0, 1, 2, 1),), (1, 2, 3, 4, 5)),
    ("ReplicationPad1d", (3,), (3, 5)), ("ReplicationPad2d", ((0, 3, 2, 1),), (2, 3, 4, 5)),
    ("ReplicationPad3d", (2,), (2, 3, 4, 5)),
    ("CircularPad1d", ((2, 3),), (2, 3, 5)), ("CircularPad2d", (1,), (3, 4, 5)),
    ("CircularPad3d", ((1, 0, 2, 1, 0, 2),), (1, 2, 3, 4, 5)),
]


@pytest.mark.parametrize("name, args, shape", PADDINGS)
def test_padding_layers(name: str, args: tuple, shape: tuple) -> None:
    def program(lib: Any) -> tuple:
        layer = getattr(lib.nn, name)(*args)
        x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                       requires_grad=True)
        y = layer(x)
        (y * y).sum().backward()
        return (repr(layer), layer.padding, y.tolist(), x.grad.tolist(),
                list(layer.state_dict()), type(layer).__mro__[1].__name__ == "Module")
    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.CircularPad2d(1)(lib.ones(5)),
    lambda lib: lib.nn.CircularPad1d(1)(lib.ones(1, 2, 3, 4)),
    lambda lib: lib.nn.CircularPad3d(1)(lib.ones(2, 3, 4)),
    lambda lib: lib.nn.ReflectionPad1d(3)(lib.ones(2, 3, 3)),
    lambda lib: lib.nn.ReflectionPad2d(1)(lib.ones(3)),
    lambda lib: lib.nn.ReplicationPad3d(1)(lib.ones(2, 3)),
    lambda lib: lib.nn.ConstantPad1d((1, 2, 3), 0.0)(lib.ones(2, 3)),
    lambda lib: lib.nn.ZeroPad2d((1, 2, 3))(lib.ones(2, 3)),
])
def test_padding_errors(call: Any) -> None:
    outcome, _ = same(call)
    assert outcome[0] == "raises"
