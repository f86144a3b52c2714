"""nn.utils' weight and spectral normalisation (the older hooks and the parametrizations),
parametrize and orthogonal, against torch: state-dict keys, reprs, class names, values and
gradients after the same seed (to rounding: torch's weight norm is a fused kernel and its
QR is MKL's), warnings and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import same


def compare(program: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """program(lib) returns a list of items: tensors are compared to within rtol / atol
    (after detach), everything else exactly."""
    expected, actual = program(torch), program(runtime)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, runtime.Tensor)
            assert str(a.dtype) == str(e.dtype) and tuple(a.shape) == tuple(e.shape)
            np.testing.assert_allclose(a.detach().numpy(), e.detach().numpy(), rtol=rtol,
                                       atol=atol)
        else:
            assert a == e


def _quiet(lib: Any) -> None:
    lib.manual_seed(0)


# -- the older hooks --------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("make, dim", [
    (lambda nn: nn.Linear(3, 4), 0), (lambda nn: nn.Linear(3, 4), None),
    (lambda nn: nn.Conv2d(2, 3, 3), 1), (lambda nn: nn.Conv1d(2, 3, 3), 2),
    (lambda nn: nn.Conv2d(2, 3, 3), -1)])
def test_weight_norm_hook(make: Any, dim: Any) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.weight_norm(make(lib.nn), dim=dim)
        x = lib.randn(2, 2, 5) if isinstance(module, lib.nn.Conv1d) else (
            lib.randn(1, 2, 5, 5) if isinstance(module, lib.nn.Conv2d) else lib.randn(2, 3))
        y = module(x)
        y.pow(2).sum().backward()
        keys = list(module.state_dict())
        names = [name for name, _ in module.named_parameters()]
        grads = [module.weight_g.grad, module.weight_v.grad]
        lib.nn.utils.remove_weight_norm(module)
        return [keys, names, repr(module), y, *grads, module.weight,
                list(module.state_dict())]
    compare(program)


def test_weight_norm_warns_and_errors() -> None:
    def program(lib: Any) -> tuple:
        module = lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
        try:
            lib.nn.utils.weight_norm(module)
        except RuntimeError as error:
            first = str(error)
        try:
            lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2), "weight")
        except ValueError as error:
            second = str(error)
        return first, second
    same(program)  # the FutureWarnings too


@pytest.mark.parametrize("make, shape, dim", [
    (lambda nn: nn.Linear(3, 4), (2, 3), None), (lambda nn: nn.Conv2d(2, 3, 3), (1, 2, 4, 4), None),
    (lambda nn: nn.ConvTranspose2d(2, 3, 3), (1, 2, 4, 4), None),
    (lambda nn: nn.Conv2d(2, 3, 3), (1, 2, 4, 4), 2)])
def test_spectral_norm_hook(make: Any, shape: tuple, dim: Any) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.spectral_norm(make(lib.nn), n_power_iterations=2, dim=dim)
        x = lib.randn(shape)
        outputs = [module(x) for _ in range(3)]
        outputs[-1].sum().backward()
        module.eval()
        evaluated = module(x)
        keys = list(module.state_dict())
        buffers = [module.weight_u, module.weight_v]
        grad = module.weight_orig.grad
        lib.nn.utils.remove_spectral_norm(module)
        return [keys, *outputs, evaluated, *buffers, grad, module.weight,
                list(module.state_dict())]
    compare(program)


def test_spectral_norm_hook_errors() -> None:
    def program(lib: Any) -> list:
        messages = []
        module = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))
        for call in (lambda: lib.nn.utils.spectral_norm(module),
                     lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), "bias"),
                     lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias"),
                     lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2),
                                                        n_power_iterations=0),
                     lambda: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))):
            try:
                call()
                messages.append(None)
            except Exception as error:  # noqa: BLE001 - the class is compared
                messages.append((type(error).__name__, str(error)))
        return messages
    same(program)


# -- parametrizations -------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm(dim: Any) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4), dim=dim)
        y = module(lib.randn(2, 3))
        y.pow(2).sum().backward()
        originals = module.parametrizations.weight
        return [repr(module), type(module).__name__, list(module.state_dict()), y,
                originals.original0, originals.original1, originals.original0.grad,
                originals.original1.grad, module.weight]
    compare(program)


@pytest.mark.parametrize("make, shape", [(lambda nn: nn.Linear(3, 4), (2, 3)),
                                         (lambda nn: nn.Conv2d(2, 3, 3), (1, 2, 4, 4)),
                                         (lambda nn: nn.ConvTranspose1d(2, 3, 2), (1, 2, 4))])
def test_parametrized_spectral_norm(make: Any, shape: tuple) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.parametrizations.spectral_norm(make(lib.nn))
        x = lib.randn(shape)
        outputs = [module(x) for _ in range(2)]
        outputs[-1].sum().backward()
        norm = module.parametrizations.weight[0]
        module.eval()
        return [repr(module), list(module.state_dict()), *outputs, module(x), norm._u, norm._v,
                module.parametrizations.weight.original.grad]
    compare(program, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rows, cols, orthogonal_map", [
    (3, 3, None), (5, 3, None), (3, 5, None), (4, 4, "cayley"), (5, 2, "cayley"),
    (2, 5, "matrix_exp"), (4, 4, "householder")])
def test_orthogonal(rows: int, cols: int, orthogonal_map: Any) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(cols, rows),
                                                          orthogonal_map=orthogonal_map)
        weight = module.weight
        gram = weight @ weight.T if rows <= cols else weight.T @ weight
        y = module(lib.randn(2, cols))
        y.pow(2).sum().backward()
        return [list(module.state_dict()), repr(module), weight, gram, y,
                module.parametrizations.weight.original.grad,
                module.parametrizations.weight[0].base]
    compare(program, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rows, cols", [(5, 3), (3, 5), (4, 4)])
def test_orthogonal_householder_without_trivialization(rows: int, cols: int) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        module = lib.nn.utils.parametrizations.orthogonal(
            lib.nn.Linear(cols, rows), orthogonal_map="householder", use_trivialization=False)
        weight = module.weight
        weight.pow(2).sum().backward()
        original = module.parametrizations.weight.original
        return [list(module.state_dict()), weight, original, original.grad]
    compare(program, rtol=1e-4, atol=1e-5)


def test_orthogonal_assignment_and_removal() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(1)
        module = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(4, 4))
        target = lib.linalg.qr(lib.randn(4, 4))[0]
        module.weight = target
        assigned = module.weight
        lib.nn.utils.parametrize.remove_parametrizations(module, "weight")
        return [assigned, type(module).__name__, list(module.state_dict()), module.weight,
                isinstance(module.weight, lib.nn.Parameter)]
    compare(program, rtol=1e-4, atol=1e-5)


def test_orthogonal_errors() -> None:
    def program(lib: Any) -> list:
        messages = []
        orthogonal = lib.nn.utils.parametrizations.orthogonal
        for call in (lambda: orthogonal(lib.nn.Linear(2, 2), "bias"),
                     lambda: orthogonal(lib.nn.Linear(2, 2), "nothing"),
                     lambda: orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr")):
            try:
                call()
            except ValueError as error:
                messages.append(str(error))
        return messages
    same(program)


class _Symmetric:
    """A parametrization module class, built with either library."""

    @staticmethod
    def make(lib: Any) -> Any:
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        class Scale(lib.nn.Module):
            def forward(self, X):
                return 2 * X

            def right_inverse(self, X):
                return X / 2

        return Symmetric, Scale


def test_register_parametrization_and_cache() -> None:
    def program(lib: Any) -> list:
        Symmetric, Scale = _Symmetric.make(lib)
        parametrize = lib.nn.utils.parametrize
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 3)
        parametrize.register_parametrization(module, "weight", Symmetric())
        parametrize.register_parametrization(module, "weight", Scale())
        with parametrize.cached():
            same_object = module.weight is module.weight
        weight = module.weight
        module.weight = weight * 0 + 4.0  # Symmetric has no right_inverse
        return [same_object, module.weight is module.weight, weight, repr(module),
                list(module.state_dict()), parametrize.is_parametrized(module),
                parametrize.is_parametrized(module, "bias"),
                parametrize.type_before_parametrizations(module).__name__]
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        program(runtime)
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        program(torch)


def test_register_parametrization_with_right_inverse() -> None:
    def program(lib: Any) -> list:
        _, Scale = _Symmetric.make(lib)
        parametrize = lib.nn.utils.parametrize
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 2)
        before = module.weight.detach().clone()
        parametrize.register_parametrization(module, "weight", Scale())
        original = module.parametrizations.weight.original
        module.weight = lib.ones(2, 3)
        after = module.weight
        parametrize.remove_parametrizations(module, "weight", leave_parametrized=False)
        return [before, original, after, module.weight, type(module).__name__,
                list(module.state_dict())]
    compare(program)


def test_parametrization_errors() -> None:
    def program(lib: Any) -> list:
        parametrize = lib.nn.utils.parametrize

        class Shrink(lib.nn.Module):
            def forward(self, X):
                return X[:1]

        messages = []
        for call in (lambda: parametrize.register_parametrization(lib.nn.Linear(2, 2), "w",
                                                                  Shrink()),
                     lambda: parametrize.register_parametrization(lib.nn.Linear(2, 2),
                                                                  "weight", Shrink()),
                     lambda: parametrize.remove_parametrizations(lib.nn.Linear(2, 2),
                                                                 "weight")):
            try:
                call()
            except ValueError as error:
                messages.append(str(error).split("Linear")[0])
        return messages
    same(program)


@pytest.mark.parametrize("shape, dim", [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1),
                                        ((2, 3, 4), -1), ((2, 3, 4), 2)])
def test_norm_except_dim_and_weight_norm_function(shape: tuple, dim: int) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        v = lib.randn(shape, requires_grad=True)
        norms = lib.norm_except_dim(v, 2, dim)
        g = (norms.detach() * 2).requires_grad_()
        w = lib._weight_norm(v, g, dim)
        w.pow(3).sum().backward()
        return [norms, w, v.grad, g.grad, lib.norm_except_dim(v, 3, dim)]
    compare(program)


def test_orthogonal_assignment_errors() -> None:
    def program(lib: Any) -> list:
        messages = []
        module = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3),
                                                          use_trivialization=False)
        other = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3))
        for call in (lambda: setattr(module, "weight", lib.eye(3)),
                     lambda: setattr(other, "weight", lib.eye(4))):
            try:
                call()
            except (NotImplementedError, ValueError) as error:
                messages.append((type(error).__name__, str(error)))
        return messages
    same(program)
