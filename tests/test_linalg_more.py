"""The rest of torch.linalg (diagonal, matmul, matrix_power, matrix_rank, multi_dot, tensorinv,
tensorsolve, vander, vecdot, cond, householder_product) and nan_to_num, against torch:
values, the node torch records, gradients, and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import runtime


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _both(function, *arrays: np.ndarray, grad: bool = True, **kwargs):
    """function(lib, *tensors) for gradgen and torch: (node name, value, gradients)."""
    results = []
    for lib in (runtime, torch):
        tensors = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        y = function(lib, *tensors, **kwargs)
        node = y.grad_fn.name() if y.grad_fn is not None else None
        leaves = [t for t in tensors if t.requires_grad]
        grads = []
        if leaves and y.requires_grad:
            cotangent = lib.tensor(np.cos(np.arange(y.numel()).reshape(tuple(y.shape)) + 0.5))
            grads = [g.numpy() for g in lib.autograd.grad(y, leaves, cotangent)]
        results.append((node, y.detach().numpy(), grads))
    return results


def _same(results, rtol: float = 1e-10, atol: float = 1e-12, node: bool = True) -> None:
    (our_node, ours, our_grads), (their_node, theirs, their_grads) = results
    if node:
        assert our_node == their_node
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    assert len(our_grads) == len(their_grads)
    for a, b in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _same_error(function, *arrays, **kwargs) -> None:
    caught = []
    for lib in (runtime, torch):
        tensors = [lib.tensor(a) for a in arrays]
        with pytest.raises(Exception) as error:
            function(lib, *tensors, **kwargs)
        caught.append(error)
    ours, theirs = caught
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(("shape", "kwargs"), [((3, 4), {}), ((2, 3, 4), {"offset": 1}),
                                               ((4, 3, 2), {"dim1": 0, "dim2": 2})])
def test_diagonal(shape, kwargs) -> None:
    _same(_both(lambda lib, A: lib.linalg.diagonal(A, **kwargs), _data(*shape)))


def test_diagonal_errors() -> None:
    _same_error(lambda lib, A: lib.linalg.diagonal(A), _data(3))


def test_matmul() -> None:
    _same(_both(lambda lib, a, b: lib.linalg.matmul(a, b), _data(2, 3, 4), _data(4, 5, seed=1)))
    _same(_both(lambda lib, a, b: lib.linalg.matmul(a, b), _data(4), _data(4, 5, seed=1)))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 11, -1, -2, -3])
def test_matrix_power(n: int) -> None:
    A = _data(2, 3, 3) * 0.7 + np.eye(3) * 2
    _same(_both(lambda lib, A: lib.linalg.matrix_power(A, n), A), rtol=1e-9)


def test_matrix_power_errors_and_integers() -> None:
    _same_error(lambda lib, A: lib.linalg.matrix_power(A, 2), _data(3))
    _same_error(lambda lib, A: lib.linalg.matrix_power(A, 2), _data(3, 2))
    _same_error(lambda lib, A: lib.linalg.matrix_power(A, -1), np.zeros((3, 3)))
    _same_error(lambda lib, A: lib.linalg.matrix_power(A, -1), np.ones((2, 2), dtype=np.int64))
    _same(_both(lambda lib, A: lib.linalg.matrix_power(A, 3), np.arange(4).reshape(2, 2)))


@pytest.mark.parametrize("kwargs", [{}, {"hermitian": True}, {"tol": 0.5}, {"atol": 0.5},
                                    {"rtol": 0.3}, {"atol": 0.1, "rtol": 0.2}, {"atol": 0.0}])
def test_matrix_rank(kwargs) -> None:
    low_rank = _data(3, 4, 2) @ _data(3, 2, 4, seed=1)  # rank 2 (of 4)
    low_rank[0] += np.diag([0.0, 0.0, 0.4, 0.8])
    if kwargs.get("hermitian"):
        low_rank = low_rank + low_rank.transpose(0, 2, 1)
    _same(_both(lambda lib, A: lib.linalg.matrix_rank(A, **kwargs), low_rank))


def test_matrix_rank_tensor_tolerances_and_errors() -> None:
    A = _data(2, 3, 3)
    results = []
    for lib in (runtime, torch):
        atol = lib.tensor([0.5, 2.0], dtype=lib.float64)
        results.append(lib.linalg.matrix_rank(lib.tensor(A), atol=atol).numpy())
    np.testing.assert_array_equal(*results)
    _same_error(lambda lib, A: lib.linalg.matrix_rank(A), _data(3))
    _same_error(lambda lib, A: lib.linalg.matrix_rank(A), np.ones((2, 2), dtype=np.int64))


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4)], [(2, 3), (3, 4), (4, 5)],
                                    [(5, 2), (2, 6), (6, 3)], [(3,), (3, 4), (4,)],
                                    [(3,), (3, 4), (4, 2), (2, 6), (6, 1), (1, 5)],
                                    [(4, 3), (3, 5), (5, 2), (2,)]])
def test_multi_dot(shapes) -> None:
    arrays = [_data(*s, seed=i) for i, s in enumerate(shapes)]
    _same(_both(lambda lib, *ts: lib.linalg.multi_dot(ts), *arrays))


def test_multi_dot_errors() -> None:
    md = lambda lib, *ts: lib.linalg.multi_dot(list(ts))  # noqa: E731
    _same_error(md, _data(2, 2))
    _same_error(md)
    _same_error(md, _data(2, 2, 2), _data(2, 2))
    _same_error(md, _data(2, 2), _data(2), _data(2, 2))
    _same_error(md, _data(2, 2), _data(2, 2, 2))
    _same_error(md, _data(2, 2).astype(np.float32), _data(2, 2))
    _same_error(md, _data(2, 3), _data(4, 5))


def test_tensorinv_and_tensorsolve() -> None:
    A = (_data(4, 6, 24) + np.eye(24).reshape(4, 6, 24) * 3).reshape(4, 6, 8, 3)
    _same(_both(lambda lib, A: lib.linalg.tensorinv(A, ind=2), A), node=False)
    B = _data(2, 3, 6) + np.eye(6).reshape(2, 3, 6) * 3
    _same(_both(lambda lib, A, b: lib.linalg.tensorsolve(A, b), B, _data(2, 3, seed=1)),
          node=False)
    C = np.moveaxis(_data(2, 3, 6, seed=2) + np.eye(6).reshape(2, 3, 6) * 3, 2, 0)
    _same(_both(lambda lib, A, b: lib.linalg.tensorsolve(A, b, dims=(0,)), C, _data(2, 3)),
          node=False)
    _same_error(lambda lib, A: lib.linalg.tensorinv(A, ind=0), A)
    _same_error(lambda lib, A: lib.linalg.tensorinv(A, ind=1), _data(4, 5))
    _same_error(lambda lib, A: lib.linalg.tensorinv(A, ind=2), np.zeros((2, 2, 4)))
    _same_error(lambda lib, A, b: lib.linalg.tensorsolve(A, b), _data(2, 3, 5), _data(2, 3))


@pytest.mark.parametrize("N", [None, 2, 5])
def test_vander(N) -> None:
    _same(_both(lambda lib, x: lib.linalg.vander(x, N=N), _data(2, 4)))
    _same(_both(lambda lib, x: lib.linalg.vander(x, N=N), np.arange(1, 5)))


def test_vander_errors() -> None:
    _same_error(lambda lib, x: lib.linalg.vander(x), np.array(2.0))
    _same_error(lambda lib, x: lib.linalg.vander(x, N=1), _data(3))
    _same_error(lambda lib, x: lib.linalg.vander(x), np.array([True, False]))


def test_vecdot() -> None:
    _same(_both(lambda lib, x, y: lib.linalg.vecdot(x, y), _data(4), _data(4, seed=1)))
    _same(_both(lambda lib, x, y: lib.linalg.vecdot(x, y), _data(3, 4), _data(4, seed=1)))
    _same(_both(lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), _data(3, 4), _data(3, 1)))
    _same_error(lambda lib, x, y: lib.linalg.vecdot(x, y), np.arange(2), np.arange(2))
    _same_error(lambda lib, x, y: lib.linalg.vecdot(x, y), _data(2).astype(np.float32),
                _data(2))
    _same_error(lambda lib, x, y: lib.linalg.vecdot(x, y), _data(4), _data(3, 3))


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"])
def test_cond(p) -> None:
    A = _data(2, 3, 3) + np.eye(3)
    # torch writes the inverse in place for 1, inf and 'fro', so those have no gradient
    differentiable = p in (None, 2, -2, "nuc")
    _same(_both(lambda lib, A: lib.linalg.cond(A, p), A, grad=differentiable), rtol=1e-9)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours = runtime.linalg.cond(runtime.tensor(singular), p).numpy()
    theirs = torch.linalg.cond(torch.tensor(singular), p).numpy()
    assert (np.isinf(ours) and np.isinf(theirs)) or ours == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize("p", [1, -math.inf, "fro"])
def test_cond_backward_refused_as_torch(p) -> None:
    messages = []
    for lib in (runtime, torch):
        A = lib.tensor(_data(2, 3, 3) + np.eye(3), requires_grad=True)
        y = lib.linalg.cond(A, p)
        assert y.grad_fn.name() == "NanToNumBackward0"
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_cond_rectangular_empty_and_errors() -> None:
    _same(_both(lambda lib, A: lib.linalg.cond(A), _data(2, 3)), rtol=1e-9)
    _same(_both(lambda lib, A: lib.linalg.cond(A, 1), np.zeros((2, 0, 0)), grad=False))
    _same_error(lambda lib, A: lib.linalg.cond(A), _data(3))
    _same_error(lambda lib, A: lib.linalg.cond(A, 3), _data(3, 3))
    _same_error(lambda lib, A: lib.linalg.cond(A, "abc"), _data(3, 3))
    _same_error(lambda lib, A: lib.linalg.cond(A, "fro"), _data(2, 3))
    _same_error(lambda lib, A: lib.linalg.cond(A, 1), _data(2, 3))


@pytest.mark.parametrize(("shape", "k"), [((4, 3), 2), ((4, 3), 3), ((2, 5, 3), 3),
                                          ((3, 3), 1)])
def test_householder_product(shape, k) -> None:
    tau = _data(*shape[:-2], k, seed=3) * 0.5
    _same(_both(lambda lib, A, t: lib.linalg.householder_product(A, t), _data(*shape), tau),
          node=False)


def test_householder_product_gives_qr_q() -> None:
    A = _data(5, 3)
    geqrf = torch.geqrf(torch.tensor(A))
    ours = runtime.linalg.householder_product(runtime.tensor(geqrf.a.numpy()),
                                              runtime.tensor(geqrf.tau.numpy()))
    np.testing.assert_allclose(ours.numpy(), torch.linalg.qr(torch.tensor(A)).Q.numpy(),
                               atol=1e-12)


def test_householder_product_errors() -> None:
    hp = lambda lib, A, t: lib.linalg.householder_product(A, t)  # noqa: E731
    _same_error(hp, _data(3), _data(1))
    _same_error(hp, _data(2, 3), _data(1))
    _same_error(hp, _data(3, 2), _data(3))
    _same_error(hp, _data(2, 3, 2), _data(3, 1))


def test_nan_to_num() -> None:
    x = np.array([1.5, math.nan, math.inf, -math.inf, -2.0])
    _same(_both(lambda lib, x: lib.nan_to_num(x), x))
    _same(_both(lambda lib, x: lib.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0), x))
    _same(_both(lambda lib, x: x.nan_to_num(posinf=9.0), x.astype(np.float32)))
    for lib in (runtime, torch):
        y = lib.tensor(x)
        y.nan_to_num_(0.5)
        np.testing.assert_array_equal(y.numpy(), np.nan_to_num(x, nan=0.5,
                                                               posinf=np.finfo(float).max,
                                                               neginf=np.finfo(float).min))


def test_every_name_of_torch_linalg_but_the_complex_and_ldl_ones() -> None:
    missing = {name for name in dir(torch.linalg) if not name.startswith("_")
               and callable(getattr(torch.linalg, name)) and not hasattr(runtime.linalg, name)}
    assert missing <= {"eig", "eigvals", "ldl_factor", "ldl_factor_ex", "ldl_solve"}


@pytest.mark.parametrize("op", ["mul", "add", "sub", "div", "lt", "eq"])
def test_binary_ops_refuse_shapes_that_do_not_broadcast(op: str) -> None:
    """torch's RuntimeError, not numpy's ValueError (vecdot of mismatched shapes met it)."""
    _same_error(lambda lib, a, b: getattr(lib, op)(a, b), _data(4), _data(3, 3))
    _same_error(lambda lib, a, b: getattr(lib, op)(a, b), _data(4).astype(np.float32),
                _data(2))


def _symmetric(*shape: int, seed: int = 0) -> np.ndarray:
    A = _data(*shape, seed=seed)
    return A + np.swapaxes(A, -1, -2)


@pytest.mark.parametrize("seed", range(12))
def test_ldl_factor_and_solve(seed: int) -> None:
    n = 2 + seed % 6
    A = _symmetric(3, n, n, seed=seed)
    if seed % 3 == 0:  # small diagonals: 2x2 pivots
        A[..., np.arange(n), np.arange(n)] *= 0.01
    B = _data(3, n, 2, seed=seed + 50)
    results = []
    for lib in (runtime, torch):
        LD, pivots, info = lib.linalg.ldl_factor_ex(lib.tensor(A))
        X = lib.linalg.ldl_solve(LD, pivots, lib.tensor(B))
        results.append([t.numpy() for t in (LD, pivots, info, X)])
    (LD, pivots, info, X), (tLD, tpivots, tinfo, tX) = results
    np.testing.assert_array_equal(pivots, tpivots)
    assert pivots.dtype == tpivots.dtype and info.dtype == tinfo.dtype
    np.testing.assert_array_equal(info, tinfo)
    np.testing.assert_allclose(LD, tLD, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(X, tX, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.einsum("bij,bjk->bik", A, X), B, atol=1e-9)


def test_ldl_factor_named_results_singular_and_errors() -> None:
    A = _symmetric(4, 4)
    ours, theirs = runtime.linalg.ldl_factor(runtime.tensor(A)), torch.linalg.ldl_factor(
        torch.tensor(A))
    np.testing.assert_allclose(ours.LD.numpy(), theirs.LD.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    singular = np.zeros((3, 3))
    np.testing.assert_array_equal(runtime.linalg.ldl_factor_ex(runtime.tensor(singular)).info,
                                  torch.linalg.ldl_factor_ex(torch.tensor(singular)).info)
    _same_error(lambda lib, A: lib.linalg.ldl_factor(A), singular)
    _same_error(lambda lib, A: lib.linalg.ldl_factor_ex(A, check_errors=True), singular)
    _same_error(lambda lib, A: lib.linalg.ldl_factor(A), _data(3))
    _same_error(lambda lib, A: lib.linalg.ldl_factor(A), _data(3, 2))
    _same_error(lambda lib, A: lib.linalg.ldl_factor(A), np.ones((2, 2), dtype=np.int64))
    LD, pivots = torch.linalg.ldl_factor(torch.tensor(A))
    for B, piv in ((_data(4), pivots), (_data(4, 1).astype(np.float32), pivots),
                   (_data(4, 1), pivots[:3]), (_data(4, 1), pivots.float()),
                   (_data(3, 1), pivots)):
        _same_error(lambda lib, L, p, b: lib.linalg.ldl_solve(L, p, b), LD.numpy(),
                    piv.numpy(), B)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_ldl_of_empty_matrices(shape) -> None:
    results = []
    for lib in (runtime, torch):
        LD, pivots, info = lib.linalg.ldl_factor_ex(lib.zeros(*shape, dtype=lib.float64))
        X = lib.linalg.ldl_solve(LD, pivots, lib.zeros(*shape[:-1], 2, dtype=lib.float64))
        results.append([(tuple(t.shape), str(t.dtype)) for t in (LD, pivots, info, X)])
    assert results[0] == results[1]
