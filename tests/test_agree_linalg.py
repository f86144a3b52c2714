"""gradgen beside torch on the linear algebra and reduction samples of OpInfo's reference
inputs that used to disagree (tests/opinfo_agreement.py measures them all): each case here
is one of those inputs, or the same kind of input, compared with the installed torch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import runtime


def _pair(array: np.ndarray, requires_grad: bool = False) -> tuple[Any, Any]:
    """The same float64 values as a torch tensor and a gradgen tensor."""
    return (torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad),
            runtime.tensor(array, dtype=runtime.float64, requires_grad=requires_grad))


def _tangents(library: Any, function: Any, primal: np.ndarray, tangent: np.ndarray) -> list:
    forward_ad = library.autograd.forward_ad
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(library.tensor(primal, dtype=library.float64),
                                    library.tensor(tangent, dtype=library.float64))
        outputs = function(library, dual)
        return [forward_ad.unpack_dual(o).tangent.detach().numpy().copy() for o in outputs]


def _assert_close(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-7)


# -- linalg.svd's forward mode with full_matrices=True -------------------------------------

@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (2, 5, 3), (0, 3), (3, 0), (0, 5, 3),
                                   (0, 0)])
def test_svd_full_matrices_tangents(shape: tuple) -> None:
    """torch's tangents of the first k singular vectors, zeros for the other m - k (n - k)
    columns of U (rows of Vh); of an empty matrix, zeros. (Wide matrices are left out:
    numpy's LAPACK and torch's MKL give their singular vectors other signs.)"""
    generator = np.random.default_rng(0)
    primal, tangent = generator.standard_normal(shape), generator.standard_normal(shape)

    def svd(library: Any, A: Any) -> Any:  # noqa: N803
        return library.linalg.svd(A, full_matrices=True)

    _assert_close(_tangents(runtime, svd, primal, tangent),
                  _tangents(torch, svd, primal, tangent))


# -- torch.norm's matrix norms ----------------------------------------------------------

def _outcome(library: Any, call: Any, array: np.ndarray) -> Any:
    """The value, or the exception's class and message."""
    try:
        return call(library, library.tensor(array, dtype=library.float64)).numpy()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error)


@pytest.mark.parametrize("call", [
    lambda t, x: t.norm(x[0], "nuc"),
    lambda t, x: t.norm(x, "nuc", (1, 2)),  # OpInfo's nuc_batched
    lambda t, x: t.norm(x, p="nuc", dim=(0, 2), keepdim=True),
    lambda t, x: x.norm("nuc", (2, 1)),
    lambda t, x: t.norm(x, "nuc"),  # a 3-d input without dims: matrix_norm's error
    lambda t, x: t.norm(x, "fro", (0, 1, 2)),
    lambda t, x: t.norm(x, "foo"),
    lambda t, x: t.linalg.matrix_norm(x[0, 0], "foo"),  # the order is checked first
    lambda t, x: t.linalg.matrix_norm(x, True),
    lambda t, x: t.linalg.matrix_norm(x, 3.0), lambda t, x: t.linalg.matrix_norm(x, 2.5),
    lambda t, x: t.linalg.norm(x[0], -3),
])
def test_norm_matrix_orders(call: Any) -> None:
    """torch.norm hands a string order other than a Frobenius norm over at most two dims to
    linalg.matrix_norm (gradgen raised NotImplementedError)."""
    x = np.random.default_rng(1).standard_normal((5, 4, 3))
    got, want = _outcome(runtime, call, x), _outcome(torch, call, x)
    if isinstance(want, tuple):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)


def test_nuclear_norm_gradients() -> None:
    x = np.random.default_rng(2).standard_normal((5, 5, 5))
    grads = []
    for library in (torch, runtime):
        a = library.tensor(x, dtype=library.float64, requires_grad=True)
        library.norm(a, "nuc", (1, 2)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-7, atol=1e-7)


# -- matrix norms of empty matrices; amax and amin over an empty dim ------------------------

@pytest.mark.parametrize("shape", [(0, 0), (5, 0), (0, 5), (3, 0, 4)])
@pytest.mark.parametrize("ord", [math.inf, -math.inf, 1, -1, 2, -2, "nuc", "fro"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_matrix_norms_of_empty_matrices(shape: tuple, ord: Any, keepdim: bool) -> None:
    """torch's largest column (row) sum or singular value of an empty matrix is 0; its
    smallest is amin's error, naming the dim as amin was given it."""
    dim = (0, 1) if len(shape) == 3 else None

    def call(t: Any, x: Any) -> Any:
        return t.linalg.norm(x, ord, dim=dim, keepdim=keepdim)

    x = np.zeros(shape)
    got, want = _outcome(runtime, call, x), _outcome(torch, call, x)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [
    lambda t: t.amin(t.zeros(0), 0), lambda t: t.amin(t.zeros(0)),
    lambda t: t.amin(t.zeros(0), []), lambda t: t.amin(t.zeros(0, 3), -2),
    lambda t: t.amin(t.zeros(0, 3), [1, 0]), lambda t: t.amax(t.zeros(2, 0, 3), [-2, 0]),
    lambda t: t.amax(t.zeros(0, 0), (0, 1)),
])
def test_amax_amin_name_the_empty_dim_as_given(call: Any) -> None:
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(want.type) as got:
        call(runtime)
    assert str(got.value) == str(want.value)


# -- linalg.eig's forward mode; complex linalg.solve's gradients (eigvals' second order) ----

def _phases(V: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The unit factors D with W = V D (eigenvectors are defined up to one per column)."""
    rows = np.argmax(np.abs(V), axis=-2)[..., None, :]
    ratio = np.take_along_axis(W, rows, -2) / np.take_along_axis(V, rows, -2)
    return ratio / np.abs(ratio)


@pytest.mark.parametrize("shape,complex_input", [((3, 3), False), ((2, 4, 4), False),
                                                 ((5, 5), False), ((3, 3), True)])
def test_eig_tangents(shape: tuple, complex_input: bool) -> None:
    """torch's linalg_eig_jvp: dL the diagonal of V⁻¹ dA V, dV with unit columns kept; the
    eigenvectors' tangents compared once gradgen's phases are turned into torch's."""
    generator = np.random.default_rng(3)

    def draw() -> np.ndarray:
        real = generator.standard_normal(shape)
        return real + 1j * generator.standard_normal(shape) if complex_input else real

    primal, tangent = draw(), draw()
    results = []
    for library in (runtime, torch):
        forward_ad = library.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(library.tensor(primal), library.tensor(tangent))
            L, V = library.linalg.eig(dual)
            results.append([forward_ad.unpack_dual(L).tangent.numpy(), V.detach().numpy(),
                             forward_ad.unpack_dual(V).tangent.numpy()])
    (dL, V, dV), (want_dL, want_V, want_dV) = results
    np.testing.assert_allclose(dL, want_dL, rtol=1e-7, atol=1e-7)
    D = _phases(V, want_V)  # noqa: N806
    np.testing.assert_allclose(V * D, want_V, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(dV * D, want_dV, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("left,b_shape", [(True, (3, 3)), (True, (3, 2)), (True, (3,)),
                                           (False, (3, 3)), (False, (2, 3))])
def test_complex_solve_gradients(left: bool, b_shape: tuple) -> None:
    """A's and B's gradients through the conjugate transpose (Aᴴ, Xᴴ), as torch's."""
    generator = np.random.default_rng(4)
    A = generator.standard_normal((3, 3)) + 1j * generator.standard_normal((3, 3))  # noqa: N806
    B = generator.standard_normal(b_shape) + 1j * generator.standard_normal(b_shape)  # noqa: N806
    grads = []
    for library in (runtime, torch):
        a, b = library.tensor(A, requires_grad=True), library.tensor(B, requires_grad=True)
        X = library.linalg.solve_ex(a, b, left=left)[0]  # noqa: N806
        weights = library.tensor(np.random.default_rng(5).standard_normal(
            (*X.shape, 2)))
        loss = (library.view_as_real(X.resolve_conj()) * weights).sum()
        grads.append([g.resolve_conj().numpy() for g in library.autograd.grad(loss, (a, b))])
    for got, want in zip(*grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)


def test_eigvals_second_order() -> None:
    """OpInfo's linalg.eigvals gradgrad sample kind: a real matrix with complex eigenvalues;
    the second order goes through the complex solve of linalg_eig's backward."""
    generator = np.random.default_rng(0)
    A, w, v = (generator.standard_normal(s) for s in ((4, 4), (4, 2), (4, 4)))  # noqa: N806
    second = []
    for library in (runtime, torch):
        a = library.tensor(A, requires_grad=True)
        loss = (library.view_as_real(library.linalg.eigvals(a)) * library.tensor(w)).sum()
        g, = library.autograd.grad(loss, a, create_graph=True)
        second.append(library.autograd.grad((g * library.tensor(v)).sum(), a)[0].numpy())
    np.testing.assert_allclose(second[0], second[1], rtol=1e-7, atol=1e-7)


# -- linalg.det of 1 x 1 matrices ---------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (3, 1, 1)])
def test_det_of_one_by_one_has_no_second_order(shape: tuple) -> None:
    """det A = A: torch's gradient is grad itself, so it does not depend on A (a second
    order finds no path to A), in gradgen as in torch."""
    values = np.random.default_rng(6).standard_normal(shape)
    for library in (runtime, torch):
        a = library.tensor(values, requires_grad=True)
        g, = library.autograd.grad(library.linalg.det(a).sum(), a, create_graph=True)
        assert not g.requires_grad, library.__name__
        np.testing.assert_array_equal(g.detach().numpy(), np.ones(shape))


# -- linalg.householder_product with no reflector ---------------------------------------------

@pytest.mark.parametrize("a_shape,tau_shape", [((0, 0), (0,)), ((5, 5), (0,)),
                                               ((2, 4, 3), (2, 0))])
def test_householder_product_without_reflectors(a_shape: tuple, tau_shape: tuple) -> None:
    """The identity's first n columns, an output of A and tau that requires grad (torch's
    node), with no gradient for them; an infinity in A changes nothing."""
    values = np.random.default_rng(7).standard_normal(a_shape)
    if values.size:
        values.flat[0] = np.inf
    results = []
    for library in (runtime, torch):
        a = library.tensor(values, requires_grad=True)
        tau = library.zeros(tau_shape, dtype=library.float64, requires_grad=True)
        Q = library.linalg.householder_product(a, tau)  # noqa: N806
        assert Q.requires_grad, library.__name__
        grads = library.autograd.grad(Q.sum(), (a, tau), allow_unused=True)
        results.append((Q.detach().numpy(), [None if g is None or not g.numel() or
                                             not g.abs().sum() else g for g in grads]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1] == [None, None]


# -- cholesky_inverse's forward mode ---------------------------------------------------------

@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky_inverse_tangent_is_torchs(upper: bool, batch: tuple) -> None:
    """torch's cholesky_inverse_jvp, term for term (-X dF X Fᵀ and its transpose)."""
    generator = np.random.default_rng(8)
    factor = np.tril(generator.standard_normal((*batch, 3, 3))) + 3 * np.eye(3)
    if upper:
        factor = np.swapaxes(factor, -1, -2)

    def inverse(library: Any, F: Any) -> Any:  # noqa: N803
        return [library.cholesky_inverse(F, upper=upper)]

    tangent = generator.standard_normal(factor.shape)
    _assert_close(_tangents(runtime, inverse, factor, tangent),
                  _tangents(torch, inverse, factor, tangent))


# -- logsumexp's forward mode ---------------------------------------------------------------

@pytest.mark.parametrize("values,dim", [
    (np.zeros(0), 0),  # OpInfo's empty sample: 0 / 0
    (np.array([[1000.0, 1000.0], [-2.0, 3.0]]), 1),
    (np.array([[-np.inf, -np.inf], [-np.inf, 1.0]]), 1),
    (np.array([[np.inf, 1.0], [2.0, 3.0]]), (0, 1)),
])
def test_logsumexp_tangent_is_torchs(values: np.ndarray, dim: Any) -> None:
    def logsumexp(library: Any, x: Any) -> Any:
        return [library.logsumexp(x, dim)]

    tangent = np.random.default_rng(9).standard_normal(values.shape)
    got, want = (_tangents(library, logsumexp, values, tangent) for library in (runtime, torch))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-7, atol=1e-7, equal_nan=True)


# -- prod of a 0-dim tensor ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [lambda t, x: t.prod(x), lambda t, x: t.prod(x, 0),
                                  lambda t, x: x.prod(dim=-1, keepdim=True)])
def test_prod_of_a_number_has_no_second_order(call: Any) -> None:
    """torch's prod_backward of a 0-dim input is grad itself: no second-order path."""
    for library in (runtime, torch):
        x = library.tensor(0.0, dtype=library.float64,
                           requires_grad=True)
        g, = library.autograd.grad(call(library, x), x, create_graph=True)
        assert not g.requires_grad, library.__name__
        assert float(g) == 1.0


# -- cov's argument checks ---------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"fweights": np.ones((5, 5), np.float32)}, {"aweights": np.ones((5, 5), np.float32)},
    {"fweights": np.ones(5, np.float32)}, {"aweights": np.ones(5, np.int64)},
    {"fweights": np.ones(1, np.int64)}, {"aweights": np.ones(1, np.float32)},
    {"fweights": -np.ones(5, np.int64)}, {"aweights": -np.ones(5, np.float32)},
    {"fweights": np.zeros(5, np.int64)}, {"aweights": np.ones(5, np.bool_)},
    {"input": np.ones(5, np.bool_)}, {"input": np.ones((2, 2, 2), np.float32)},
])
def test_cov_argument_errors(kwargs: dict) -> None:
    """torch's checks of cov's input, fweights and aweights, class and message."""
    arrays = {"input": np.arange(5, dtype=np.float32), **kwargs}
    with pytest.raises(RuntimeError) as want:
        torch.cov(**{k: torch.from_numpy(v) for k, v in arrays.items()})
    with pytest.raises(RuntimeError) as got:
        runtime.cov(**{k: runtime.tensor(v) for k, v in arrays.items()})
    assert str(got.value) == str(want.value)


def test_cov_weights_gradients() -> None:
    """float64 observations with int32 fweights and float32 aweights (OpInfo's samples):
    the float32 gradient of aweights as torch rounds it (torch's order of operations)."""
    generator = np.random.default_rng(10)
    x = generator.standard_normal((2, 3))
    frequencies = np.array([1, 3, 2], np.int32)
    reliabilities = generator.random(3).astype(np.float32)
    grads = []
    for library in (runtime, torch):
        a = library.tensor(x, requires_grad=True)
        aw = library.tensor(reliabilities, requires_grad=True)
        c = library.cov(a, correction=2, fweights=library.tensor(frequencies), aweights=aw)
        weights = library.tensor(np.random.default_rng(11).standard_normal((2, 2)))
        grads.append([g.numpy() for g in library.autograd.grad((c * weights).sum(), (a, aw))])
    for got, want in zip(*grads, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7)


# -- searchsorted of empty batches -----------------------------------------------------------

@pytest.mark.parametrize("sequence_shape,values_shape", [((0, 0), (0, 0)), ((0, 3), (0, 2)),
                                                         ((2, 0), (2, 3)), ((0, 0, 0), (0, 0, 0)),
                                                         ((2, 0, 4), (2, 0, 1))])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_empty_batches(sequence_shape: tuple, values_shape: tuple,
                                    right: bool) -> None:
    sequence = np.sort(np.random.default_rng(12).standard_normal(sequence_shape), -1)
    values = np.random.default_rng(13).standard_normal(values_shape)
    got = runtime.searchsorted(runtime.tensor(sequence), runtime.tensor(values), right=right)
    want = torch.searchsorted(torch.tensor(sequence), torch.tensor(values), right=right)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- svd_lowrank and pca_lowrank: torch's draws, torch's values up to the wide SVD's signs -----

@pytest.mark.parametrize("name,kwargs", [("svd_lowrank", {"q": 2}), ("svd_lowrank", {"q": 3}),
                                         ("pca_lowrank", {"q": 2, "center": True})])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 6)])
def test_lowrank_is_torchs_up_to_one_sign_per_singular_pair(name: str, kwargs: dict,
                                                            shape: tuple) -> None:
    """The same random matrix (torch's stream) and the same steps: the singular values
    agree, and U and V agree up to one sign per singular pair, the sign that the SVD of
    the small wide matrix B = Qᴴ A takes. (torch's LAPACK, MKL, and numpy's, OpenBLAS,
    choose those signs differently for wide matrices: the one known cause of OpInfo's
    svd_lowrank and pca_lowrank disagreements.)"""
    values = np.random.default_rng(14).standard_normal(shape)
    results = []
    for library in (runtime, torch):
        library.manual_seed(42)
        results.append([t.numpy() for t in getattr(library, name)(library.tensor(values),
                                                                  **kwargs)])
    (U, S, V), (want_U, want_S, want_V) = results  # noqa: N806
    np.testing.assert_allclose(S, want_S, rtol=1e-7, atol=1e-7)
    signs = np.sign(np.sum(U * want_U, axis=-2, keepdims=True))
    np.testing.assert_allclose(U * signs, want_U, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(V * signs, want_V, rtol=1e-6, atol=1e-7)
