"""gradgen beside torch on the linear algebra and reduction samples of OpInfo's reference
inputs that used to disagree (tests/opinfo_agreement.py measures them all): each case here
is one of those inputs, or the same kind of input, compared with the installed torch."""

from __future__ import annotations

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
