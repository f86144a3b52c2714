"""geqrf, orgqr (linalg.householder_product), ormqr, nuclear_norm and native_norm against
torch: values, dtypes, the node torch records, gradients (first and second order), torch's
warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime
from runtime import old_linalg

_RNG = np.random.default_rng(11)


def _tensors(lib, arrays, grad):
    return [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]


def _compare(call, *arrays, grad=True, rtol=1e-9, atol=1e-10, second_order=False):
    """call(lib, *tensors) for both: the same values, dtype, node and gradients."""
    found = []
    for lib in (runtime, torch):
        tensors = _tensors(lib, arrays, grad)
        result = call(lib, *tensors)
        node = result.grad_fn.name() if result.grad_fn is not None else None
        grads = []
        if grad and result.requires_grad:
            leaves = [t for t in tensors if t.requires_grad]
            cotangent = lib.tensor(np.cos(np.arange(result.numel()) + 0.3).reshape(
                tuple(result.shape)), dtype=result.dtype)
            first = lib.autograd.grad(result, leaves, cotangent, create_graph=second_order)
            grads = [g.detach().numpy() for g in first]
            if second_order:
                total = sum((g * g).sum() for g in first)
                grads += [g.numpy() for g in lib.autograd.grad(total, leaves)]
        found.append((node, result.detach().numpy(), grads))
    (our_node, ours, our_grads), (their_node, theirs, their_grads) = found
    assert our_node == their_node
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    assert len(our_grads) == len(their_grads)
    for a, b in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _same_error(call, *arrays) -> None:
    caught = []
    for lib in (runtime, torch):
        with pytest.raises(Exception) as error:
            call(lib, *[lib.tensor(a) for a in arrays])
        caught.append(error.value)
    ours, theirs = caught
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours) == str(theirs)


def _qr(shape, dtype=np.float64):
    """geqrf's (a, tau) of a random matrix, from torch (the oracle)."""
    a, tau = torch.geqrf(torch.tensor(_RNG.standard_normal(shape).astype(dtype)))
    return a.numpy(), tau.numpy()


# -- geqrf --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (5, 1), (0, 3), (2, 0, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_geqrf(shape, dtype) -> None:
    data = _RNG.standard_normal(shape).astype(dtype)
    ours, theirs = runtime.geqrf(runtime.tensor(data)), torch.geqrf(torch.tensor(data))
    assert type(ours).__name__ == "geqrf" and ours._fields == ("a", "tau")
    for mine, other in ((ours.a, theirs.a), (ours.tau, theirs.tau)):
        assert mine.numpy().dtype == other.numpy().dtype and mine.shape == other.shape
        np.testing.assert_allclose(mine.numpy(), other.numpy(), rtol=1e-4, atol=1e-5)
    method = runtime.tensor(data).geqrf()
    np.testing.assert_array_equal(method.a.numpy(), ours.a.numpy())


def test_geqrf_node_has_no_derivative() -> None:
    for lib in (runtime, torch):
        x = lib.tensor(_RNG.standard_normal((3, 3)), requires_grad=True)
        a, tau = lib.geqrf(x)
        assert a.grad_fn.name() == "GeqrfBackward0" and tau.grad_fn is a.grad_fn
        with pytest.raises(NotImplementedError,
                           match="the derivative for 'geqrf' is not implemented"):
            a.sum().backward()


@pytest.mark.parametrize(("call", "arrays"), [
    (lambda lib, x: lib.geqrf(x), [np.ones(3)]),
    (lambda lib, x: lib.geqrf(x), [np.ones((3, 3), np.int64)]),
    (lambda lib, x: lib.geqrf(x.half()), [np.ones((3, 3))]),
])
def test_geqrf_errors(call, arrays) -> None:
    _same_error(call, *arrays)


# -- orgqr / householder_product ---------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 5, 2)])
def test_orgqr_makes_q(shape) -> None:
    a, tau = _qr(shape)
    _compare(lambda lib, a, t: lib.orgqr(a, t), a, tau, second_order=True)
    _compare(lambda lib, a, t: a.orgqr(t), a, tau)
    _compare(lambda lib, a, t: lib.linalg.householder_product(a, t[..., :1]), a, tau)


def test_orgqr_errors() -> None:
    a, tau = _qr((4, 3))
    _same_error(lambda lib, a, t: lib.orgqr(a, t), a.astype(np.int64), tau.astype(np.int64))
    _same_error(lambda lib, a, t: lib.orgqr(a.float(), t), a, tau)
    _same_error(lambda lib, a, t: lib.orgqr(a.T, t), a, tau)
    _same_error(lambda lib, a, t: lib.orgqr(a, t[0]), a, tau)


# -- ormqr --------------------------------------------------------------------------------------

@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4, 2)])
def test_ormqr(shape, left, transpose) -> None:
    a, tau = _qr(shape)
    m = shape[-2]
    other = _RNG.standard_normal(shape[:-2] + ((m, 2) if left else (2, m)))
    _compare(lambda lib, a, t, c: lib.ormqr(a, t, c, left, transpose), a, tau, other,
             second_order=True)
    _compare(lambda lib, a, t, c: a.ormqr(t, c, left=left, transpose=transpose),
             a, tau, other)


def test_ormqr_float32() -> None:
    a, tau = _qr((4, 3), np.float32)
    other = _RNG.standard_normal((4, 3)).astype(np.float32)
    _compare(lambda lib, a, t, c: lib.ormqr(a, t, c), a, tau, other, rtol=1e-5, atol=1e-5)


def _ormqr_case(a_shape, tau_shape, other_shape, **kwargs):
    arrays = [np.ones(a_shape), np.ones(tau_shape), np.ones(other_shape)]
    return lambda lib, a, t, c: lib.ormqr(a, t, c, **kwargs), arrays


@pytest.mark.parametrize(("case"), [
    _ormqr_case((4,), (3,), (4, 2)),
    _ormqr_case((4, 3), (3,), (4,)),
    _ormqr_case((4, 3), (3,), (2, 4)),
    _ormqr_case((4, 3), (3,), (4, 2), left=False),
    _ormqr_case((4, 3), (2,), (4, 2)),
    _ormqr_case((4, 3), (2,), (2, 4), left=False),
    _ormqr_case((4, 3), (1, 3), (4, 2)),
    _ormqr_case((4, 3), (3,), (1, 4, 2)),
    _ormqr_case((2, 4, 3), (3, 3), (2, 4, 2)),
    _ormqr_case((2, 4, 3), (2, 3), (3, 4, 2)),
    _ormqr_case((4, 3), (), (4, 2)),
])
def test_ormqr_errors(case) -> None:
    call, arrays = case
    _same_error(call, *arrays)


def test_ormqr_dtype_errors() -> None:
    a, tau = _qr((4, 3))
    other = np.ones((4, 2))
    _same_error(lambda lib, a, t, c: lib.ormqr(a, t.float(), c), a, tau, other)
    _same_error(lambda lib, a, t, c: lib.ormqr(a, t, c.float()), a, tau, other)
    _same_error(lambda lib, a, t, c: lib.ormqr(a.long(), t.long(), c.long()), a, tau, other)


# -- nuclear_norm, native_norm --------------------------------------------------------------

@pytest.mark.parametrize(("shape", "args", "kwargs"), [
    ((3, 4), (), {}), ((3, 4), (True,), {}), ((2, 3, 4), (), {}),
    ((2, 3, 4), ((0, 2),), {}), ((2, 3, 4), ((2, 0), True), {}),
    ((2, 3, 4), (), {"dim": (1, 2), "keepdim": False}),
])
def test_nuclear_norm(shape, args, kwargs) -> None:
    """Values, gradients and the node (with keepdim, torch's PermuteBackward0)."""
    data = _RNG.standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare(lambda lib, x: lib.nuclear_norm(x, *args, **kwargs), data)
        _compare(lambda lib, x: lib.linalg.matrix_norm(x, 2, (0, -1), True), data)


def test_nuclear_norm_warns_once_and_out() -> None:
    message = ("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
               "will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    old_linalg._warned.clear()
    data = _RNG.standard_normal((3, 4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runtime.nuclear_norm(runtime.tensor(data))
        runtime.nuclear_norm(runtime.tensor(data), (0, 1))
        out = runtime.empty(0, dtype=runtime.float64)
        runtime.nuclear_norm(runtime.tensor(data), out=out)
    assert [str(w.message) for w in caught] == [message, message]
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nuclear_norm(torch.tensor(data))
    assert all(str(w.message).startswith(message) for w in theirs)
    np.testing.assert_allclose(out.numpy(), torch.linalg.matrix_norm(torch.tensor(data),
                                                                      "nuc").numpy())
    _same_error(lambda lib, x: lib.nuclear_norm(x, (1,)), data)
    _same_error(lambda lib, x: lib.nuclear_norm(x.long()), data)
    _same_error(lambda lib, x: lib.nuclear_norm(x, 5), data)
    _same_error(lambda lib, x: lib.nuclear_norm(x, (0, 1), 3), data)
    _same_error(lambda lib, x: lib.nuclear_norm(x, "a"), data)
    _same_error(lambda lib, x: lib.orgqr(x, 3), data)
    _same_error(lambda lib, x: lib.orgqr(3, x), data)
    _same_error(lambda lib, x: lib.native_norm(3), data)


def test_native_norm_dense_is_refused() -> None:
    """torch has native_norm for sparse tensors only: its dispatcher's error, up to the list
    of its registered kernels."""
    for args in ((), (2,), (2, [1], False, "float64")):
        caught = []
        for lib in (runtime, torch):
            dtype = getattr(lib, args[3]) if len(args) == 4 else None
            call = (*args[:3], dtype) if dtype is not None else args
            with pytest.raises(NotImplementedError) as error:
                lib.native_norm(lib.tensor([[1.0, 2.0], [3.0, 4.0]]), *call)
            caught.append(str(error.value))
        ours, theirs = caught
        cut = theirs.index(" is only available for these backends")
        assert ours[:cut] == theirs[:cut]


@pytest.mark.parametrize(("which", "left", "transpose"), [
    ("orgqr", True, False), ("ormqr", True, False), ("ormqr", True, True),
    ("ormqr", False, False), ("ormqr", False, True)])
def test_complex_householder_gradients(which, left, transpose) -> None:
    """Complex reflectors: Q = H_1 … H_k with H = I - tau v vᴴ, and the gradients through the
    conjugate transposes, as torch's."""
    data = _RNG.standard_normal((2, 4, 3)) + 1j * _RNG.standard_normal((2, 4, 3))
    a, tau = (t.numpy() for t in torch.geqrf(torch.tensor(data)))
    other = _RNG.standard_normal((2, 4, 2) if left else (2, 2, 4)) * (1 - 0.5j)
    found = []
    for lib in (runtime, torch):
        inputs = [lib.tensor(x, requires_grad=True) for x in (a, tau, other)]
        if which == "orgqr":
            result, inputs = lib.orgqr(*inputs[:2]), inputs[:2]
        else:
            result = lib.ormqr(*inputs, left, transpose)
        weights = lib.tensor(np.cos(np.arange(result.numel() * 2)).reshape(
            (*result.shape, 2)))
        loss = (lib.view_as_real(result) * weights).sum()
        found.append([result.detach().numpy()] +
                     [g.numpy() for g in lib.autograd.grad(loss, inputs)])
    for ours, theirs in zip(*found, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
