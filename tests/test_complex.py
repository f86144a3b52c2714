"""Complex dtypes (complex64, complex128) against torch: names, promotion, factories,
printing, parts and conjugates, arithmetic, the ops torch refuses, and autograd through the
complex family of the spec (view_as_real, view_as_complex, complex, polar, _conj_physical)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import runtime
from tests.oracle import close, same, same_outcome

# -- dtypes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["complex64", "complex128", "cfloat", "cdouble"])
def test_dtype_names(name: str) -> None:
    same(lambda lib: (repr(getattr(lib, name)), getattr(lib, name).is_complex,
                      getattr(lib, name).is_floating_point, getattr(lib, name).itemsize,
                      repr(getattr(lib, name).to_real()), getattr(lib, name).is_signed))


def test_to_complex_and_real() -> None:
    same(lambda lib: [repr(d.to_complex()) for d in (lib.float32, lib.float64, lib.float16)])
    same(lambda lib: [repr(d.to_real()) for d in (lib.float32, lib.int64, lib.complex128)])
    same(lambda lib: lib.int64.to_complex())


PROMOTIONS = [
    ("float64", "complex64"), ("complex64", "float64"), ("int64", "complex64"),
    ("float16", "complex64"), ("bool", "complex128"), ("complex64", "complex128"),
    ("float32", "complex64"),
]


@pytest.mark.parametrize(("a", "b"), PROMOTIONS)
def test_promote_types(a: str, b: str) -> None:
    same(lambda lib: repr(lib.promote_types(getattr(lib, a), getattr(lib, b))))


@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(2, dtype=lib.float64) * 1j,
    lambda lib: lib.ones(2) * 1j,
    lambda lib: lib.ones(2, dtype=lib.int64) * 1j,
    lambda lib: 2j + lib.arange(3),
    lambda lib: lib.ones(2) + lib.tensor(1j, dtype=lib.complex128),
    lambda lib: lib.ones(2, dtype=lib.float64) + lib.tensor(1j, dtype=lib.complex64),
    lambda lib: lib.ones(2, dtype=lib.int64) + lib.tensor(1j, dtype=lib.complex128),
    lambda lib: lib.tensor(2.0, dtype=lib.float64) * lib.tensor([1j, 2]),
])
def test_type_promotion(program: Any) -> None:
    same(lambda lib: (repr(program(lib).dtype), program(lib).tolist()))


def test_result_type() -> None:
    same(lambda lib: repr(lib.result_type(lib.tensor([1j]), 1.0)))
    same(lambda lib: repr(lib.result_type(lib.ones(2, dtype=lib.float64), 1j)))
    same(lambda lib: repr(lib.result_type(lib.ones(2, dtype=lib.int32), 1j)))


def test_default_complex_dtype_follows_default_float() -> None:
    def program(lib: Any) -> Any:
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return repr(lib.tensor([1j]).dtype), repr((lib.ones(2) * 1j).dtype), \
                repr(lib.full((2,), 1j).dtype)
        finally:
            lib.set_default_dtype(previous)
    same(program)


# -- factories ---------------------------------------------------------------------------------

@pytest.mark.parametrize("program", [
    lambda lib: lib.tensor([1 + 2j]),
    lambda lib: lib.tensor([1, 1j]),
    lambda lib: lib.tensor(1j),
    lambda lib: lib.tensor([1, 2.5], dtype=lib.complex128),
    lambda lib: lib.tensor(np.array([1 + 2j])),
    lambda lib: lib.tensor(np.complex64(1j)),
    lambda lib: lib.zeros(2, 3, dtype=lib.cfloat),
    lambda lib: lib.ones(2, dtype=lib.cdouble),
    lambda lib: lib.full((2,), 1j),
    lambda lib: lib.full((2,), 3, dtype=lib.complex64),
    lambda lib: lib.from_numpy(np.array([1j, 2])),
    lambda lib: lib.ones(2).cfloat(),
    lambda lib: lib.arange(3).cdouble(),
    lambda lib: lib.tensor([1 + 2j]).cdouble().cfloat(),
])
def test_factories(program: Any) -> None:
    same(lambda lib: (repr(program(lib).dtype), program(lib).tolist()))


def test_type_strings() -> None:
    same(lambda lib: (lib.ones(2, dtype=lib.cfloat).type(), lib.ones(2, dtype=lib.cdouble).type()))


def test_casting_to_real_warns_and_keeps_the_real_part() -> None:
    same(lambda lib: lib.tensor([1 + 2j, -3j]).to(lib.float32).tolist())


def test_scalars_out_of_a_complex_tensor() -> None:
    same(lambda lib: (lib.tensor([1 + 2j]).item(), complex(lib.tensor(2.0)),
                      float(lib.tensor(2 + 0j)), lib.tensor([1 + 2j, 3j]).tolist(),
                      bool(lib.tensor(0j)), bool(lib.tensor(1j))))
    same(lambda lib: float(lib.tensor(1 + 2j)))
    same(lambda lib: int(lib.tensor(1 + 2j)))
    same(lambda lib: lib.tensor(1 + 2j).__index__())


# -- printing ----------------------------------------------------------------------------------

REPRS = [
    lambda lib: lib.ones(2) * 1j,
    lambda lib: lib.tensor([1 + 2j, -3.5 - 0.25j, 0j]),
    lambda lib: lib.tensor([[1e-5 + 2j, 3e6 - 1j], [0j, -1j]]),
    lambda lib: lib.tensor(1 + 2j),
    lambda lib: lib.tensor([1 + 2j], dtype=lib.complex128),
    lambda lib: lib.zeros(0, dtype=lib.cfloat),
    lambda lib: lib.zeros(2, 0, dtype=lib.cdouble),
    lambda lib: lib.arange(60.0).reshape(3, 20) * (1 + 0.5j),
    lambda lib: lib.arange(3000.0) * (1 - 1j),
    lambda lib: lib.tensor([float("nan") + 1j, float("inf") - 2j]),
    lambda lib: lib.tensor([-0.0 - 0.0j, 1.5 + 0j]),
    lambda lib: lib.tensor([[1.23456 + 7.7j]]).requires_grad_(),
    lambda lib: lib.tensor([[1e-9 + 1j, 2.0 + 1e9j]]),
]


@pytest.mark.parametrize("program", REPRS)
def test_repr(program: Any) -> None:
    same(lambda lib: repr(program(lib)))


def test_repr_under_float64_default() -> None:
    def program(lib: Any) -> Any:
        previous = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            return [repr(lib.tensor([1j])), repr(lib.tensor([1j], dtype=lib.complex64)),
                    repr(lib.zeros(0, dtype=lib.complex128))]
        finally:
            lib.set_default_dtype(previous)
    same(program)


# -- parts, conjugates, predicates -------------------------------------------------------------

def _z(lib: Any) -> Any:
    return lib.tensor([[1 + 2j, 3 - 4j, -0.5j], [2.5 + 0j, -1 - 1j, 0j]])


@pytest.mark.parametrize("program", [
    lambda lib: _z(lib).real,
    lambda lib: _z(lib).imag,
    lambda lib: lib.real(_z(lib)),
    lambda lib: lib.imag(_z(lib)),
    lambda lib: _z(lib).abs(),
    lambda lib: _z(lib).angle(),
    lambda lib: _z(lib).conj() * 1,
    lambda lib: lib.conj_physical(_z(lib)),
    lambda lib: _z(lib).conj().resolve_conj(),
    lambda lib: _z(lib).sgn(),
    lambda lib: lib.view_as_real(_z(lib)),
    lambda lib: lib.view_as_complex(lib.arange(12.0).reshape(3, 2, 2)),
    lambda lib: lib.complex(lib.ones(2), lib.arange(2.0)),
    lambda lib: lib.complex(lib.ones(2, 1, dtype=lib.float64), lib.arange(3.0, dtype=lib.float64)),
    lambda lib: lib.polar(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -2.0])),
    lambda lib: lib.ones(2).real,
    lambda lib: lib.ones(2).angle(),
])
def test_parts_and_conjugates(program: Any) -> None:
    close(program)


def test_conj_bit() -> None:
    same(lambda lib: (_z(lib).conj().is_conj(), _z(lib).is_conj(), _z(lib).conj().conj().is_conj(),
                      _z(lib).conj().resolve_conj().is_conj(), _z(lib).conj_physical().is_conj(),
                      lib.ones(2).conj().is_conj(), lib.is_conj(_z(lib).conj()),
                      _z(lib).is_complex(), lib.is_complex(_z(lib)), lib.ones(2).is_complex()))


def test_real_and_imag_are_views() -> None:
    def program(lib: Any) -> Any:
        z = _z(lib)
        z.real[0, 0] = 10.0
        z.imag[1, 1] = 7.0
        view = lib.view_as_real(z)
        view[0, 1, 1] = -9.0
        return z.tolist()
    same(program)


def test_conj_physical_in_place() -> None:
    def program(lib: Any) -> Any:
        z = _z(lib)
        z.conj_physical_()
        return z.tolist()
    same(program)


@pytest.mark.parametrize("program", [
    lambda lib: lib.imag(lib.ones(2)),
    lambda lib: lib.view_as_real(lib.ones(2)),
    lambda lib: lib.view_as_complex(lib.ones(3)),
    lambda lib: lib.view_as_complex(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.view_as_complex(lib.ones(2, 2).t()),
    lambda lib: lib.view_as_complex(lib.ones(3, 2)[:, :1].expand(3, 2).contiguous()[::1, :]),
    lambda lib: lib.view_as_complex(lib.ones(3, 3, 2)[:, :, :].transpose(0, 1)),
    lambda lib: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.complex(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
    lambda lib: _z(lib).sign(),
])
def test_errors_of_the_complex_family(program: Any) -> None:
    same_outcome(lambda lib: program(lib).tolist())


# -- arithmetic --------------------------------------------------------------------------------

def _w(lib: Any) -> Any:
    return lib.tensor([[0.5 - 1j, 2 + 0.25j, 1j], [1.5 + 0j, -2 + 3j, 0.75 - 0.5j]])


@pytest.mark.parametrize("program", [
    lambda lib: _z(lib) + _w(lib),
    lambda lib: _z(lib) - _w(lib),
    lambda lib: _z(lib) * _w(lib),
    lambda lib: _z(lib) / _w(lib),
    lambda lib: _z(lib) * 1j,
    lambda lib: _z(lib) / (1 + 1j),
    lambda lib: -_z(lib),
    lambda lib: _w(lib).exp(),
    lambda lib: _w(lib).log(),
    lambda lib: _w(lib).sqrt(),
    lambda lib: _w(lib) ** 2,
    lambda lib: _w(lib) ** 0.5,
    lambda lib: _w(lib) ** _z(lib),
    lambda lib: _w(lib).reciprocal(),
    lambda lib: _w(lib).sum(),
    lambda lib: _w(lib).sum(0),
    lambda lib: _w(lib).mean(),
    lambda lib: _w(lib).mean(1),
    lambda lib: _w(lib) @ _z(lib).t(),
    lambda lib: lib.matmul(_z(lib).t(), _w(lib)),
    lambda lib: _w(lib).sigmoid(),
    lambda lib: _w(lib).tanh(),
    lambda lib: _w(lib).sin(),
    lambda lib: _w(lib).cos(),
    lambda lib: _z(lib) == _w(lib),
    lambda lib: _z(lib) != 0,
    lambda lib: _z(lib).to(lib.complex128) * lib.ones(3, dtype=lib.float32),
    lambda lib: _z(lib) + lib.arange(3),
    lambda lib: _w(lib).prod(),
    lambda lib: _w(lib).cumsum(1),
    lambda lib: _w(lib).flip(0),
    lambda lib: lib.cat([_z(lib), _w(lib)]),
    lambda lib: lib.stack([_z(lib), _w(lib)]).reshape(-1)[3:7],
])
def test_arithmetic(program: Any) -> None:
    close(program, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("program", [
    lambda lib: _z(lib) < _w(lib),
    lambda lib: _z(lib) <= 1,
    lambda lib: _z(lib) > _w(lib),
    lambda lib: _z(lib) >= _w(lib),
    lambda lib: _z(lib).to(lib.complex128) < 0,
    lambda lib: _z(lib).max(),
    lambda lib: _z(lib).min(),
    lambda lib: _z(lib).max(0),
    lambda lib: _z(lib).min(1),
    lambda lib: _z(lib).amax(),
    lambda lib: _z(lib).amin(),
    lambda lib: _z(lib).argmax(),
    lambda lib: _z(lib).argmin(),
    lambda lib: lib.maximum(_z(lib), _w(lib)),
    lambda lib: lib.minimum(_z(lib), _w(lib)),
    lambda lib: lib.relu(_z(lib)),
    lambda lib: _z(lib).sort(),
    lambda lib: _z(lib).clamp(0, 1),
    lambda lib: _z(lib).clamp(min=0),
    lambda lib: _z(lib).clamp(max=0),
])
def test_what_torch_refuses_for_complex(program: Any) -> None:
    same_outcome(lambda lib: program(lib).tolist())


def test_requires_grad_on_complex() -> None:
    same(lambda lib: (lib.tensor([1j], requires_grad=True).requires_grad,
                      repr(lib.zeros(2, dtype=lib.cfloat).requires_grad_())))


# -- autograd: a real loss of complex inputs ---------------------------------------------------

def _grads(lib: Any, loss: Any, *leaves: Any) -> list:
    return [g for g in lib.autograd.grad(loss, leaves, allow_unused=True)]


def _leaf(lib: Any, values: Any, dtype: Any = None) -> Any:
    return lib.tensor(values, dtype=dtype or lib.complex128, requires_grad=True)


GRADIENTS = [
    # view_as_real and the real / imaginary parts
    lambda lib: (lambda z: _grads(lib, (lib.view_as_real(z) ** 3).sum(), z))(
        _leaf(lib, [1 + 2j, -0.5 + 1j])),
    lambda lib: (lambda z: _grads(lib, (z.real * z.imag ** 2).sum(), z))(
        _leaf(lib, [1 + 2j, -0.5 + 1j])),
    lambda lib: (lambda z: _grads(lib, lib.real(z).exp().sum() + lib.imag(z).sum(), z))(
        _leaf(lib, [[1 + 2j], [-0.5 + 1j]])),
    # view_as_complex, complex, polar
    lambda lib: (lambda x: _grads(lib, (lib.view_as_complex(x) * (2 + 1j)).real.sum(), x))(
        _leaf(lib, [[1.0, 2.0], [3.0, -1.0]], lib.float64)),
    lambda lib: (lambda a, b: _grads(lib, lib.view_as_real(lib.complex(a, b) * (1 - 2j)).pow(2)
                                     .sum(), a, b))(
        _leaf(lib, [1.0, 2.0], lib.float64), _leaf(lib, [0.5, -1.0], lib.float64)),
    lambda lib: (lambda r, t: _grads(lib, lib.view_as_real(lib.polar(r, t) * (0.5 + 1j)).pow(3)
                                     .sum(), r, t))(
        _leaf(lib, [1.0, 2.0], lib.float64), _leaf(lib, [0.5, -1.0], lib.float64)),
    # conjugates
    lambda lib: (lambda z: _grads(lib, lib.view_as_real(z.conj_physical()).pow(3).sum(), z))(
        _leaf(lib, [1 + 2j, -0.5 + 1j])),
    lambda lib: (lambda z: _grads(lib, z.conj().imag.pow(3).sum(), z))(
        _leaf(lib, [1 + 2j, -0.5 + 1j])),
]


@pytest.mark.parametrize("program", GRADIENTS)
def test_gradients(program: Any) -> None:
    close(program, rtol=1e-7, atol=1e-9)


def test_grad_fn_names() -> None:
    same(lambda lib: [type(t.grad_fn).__name__ if lib is runtime else t.grad_fn.name()
                      for t in (lib.view_as_real(_leaf(lib, [1j])),
                                lib.view_as_complex(_leaf(lib, [[1.0, 2.0]], lib.float64)),
                                lib.complex(_leaf(lib, [1.0], lib.float64),
                                            _leaf(lib, [1.0], lib.float64)),
                                lib.polar(_leaf(lib, [1.0], lib.float64),
                                          _leaf(lib, [1.0], lib.float64)))])


# -- torch.linalg.eig, eigvals -----------------------------------------------------------------

_A = [[2.0, 1.0, 0.5], [0.3, -1.0, 2.0], [1.0, 0.2, 0.7]]  # real, with complex eigenvalues
_B = [[4.0, 1.0], [2.0, 3.0]]  # real eigenvalues


@pytest.mark.parametrize("program", [
    lambda lib: list(lib.linalg.eig(lib.tensor(_A, dtype=lib.float64))),
    lambda lib: list(lib.linalg.eig(lib.tensor(_B))),
    lambda lib: list(lib.linalg.eig(lib.tensor(_A, dtype=lib.float64) * (1 + 0.5j))),
    lambda lib: lib.linalg.eigvals(lib.tensor(_A, dtype=lib.float64)),
    lambda lib: lib.linalg.eigvals(lib.stack([lib.tensor(_B), lib.tensor(_B).t()])),
])
def test_eig_values(program: Any) -> None:
    close(program, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("program", [
    lambda lib: lib.linalg.eig(lib.ones(3)),
    lambda lib: lib.linalg.eig(lib.ones(2, 3)),
    lambda lib: lib.linalg.eigvals(lib.ones(2, 3)),
    lambda lib: lib.linalg.eig(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.linalg.eig(lib.tensor([[1.0, float("nan")], [0.0, 1.0]])),
])
def test_eig_errors(program: Any) -> None:
    same_outcome(lambda lib: program(lib)[0].tolist())


def _eig_loss(lib: Any, A: Any) -> Any:
    """A real loss invariant under the eigenvectors' phases (torch refuses others)."""
    values, vectors = lib.linalg.eig(A)
    return (lib.view_as_real(values) ** 2).sum() + (vectors.abs() ** 3).sum()


@pytest.mark.parametrize("program", [
    lambda lib: (lambda A: _grads(lib, _eig_loss(lib, A), A))(_leaf(lib, _A, lib.float64)),
    lambda lib: (lambda A: _grads(lib, _eig_loss(lib, A), A))(
        _leaf(lib, [[1 + 1j, 2 - 1j], [0.5j, -1 + 0.25j]])),
    lambda lib: (lambda A: _grads(lib, lib.view_as_real(lib.linalg.eigvals(A)).pow(3).sum(), A))(
        _leaf(lib, _A, lib.float64)),
])
def test_eig_gradients(program: Any) -> None:
    close(program, rtol=1e-6, atol=1e-8)
