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
