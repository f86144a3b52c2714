"""The spec-breadth ops of the reductions / indexing / random / linalg block (helper misc):
their public names, values, dtypes and errors against torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import same, values

RNG = np.random.default_rng(7)
SELF = RNG.standard_normal((3, 4))
SRC = RNG.standard_normal((3, 2))
INDEX = [[0, 0], [1, 3], [2, 0]]


def _t(lib, array, dtype=None):
    return lib.tensor(array, dtype=dtype if dtype is not None else lib.float64)


# -- scatter_reduce -------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_values_and_gradients(reduce, include_self):
    def program(lib):
        x = _t(lib, SELF).requires_grad_()
        s = _t(lib, SRC).requires_grad_()
        y = lib.scatter_reduce(x, 1, lib.tensor(INDEX), s, reduce, include_self=include_self)
        (y * _t(lib, np.arange(12.0).reshape(3, 4))).sum().backward()
        return values([y, x.grad, s.grad]), y.grad_fn.name()

    expected, actual = program(torch), program(runtime)
    assert actual[1] == expected[1] == "ScatterReduceBackward0"
    for a, e in zip(actual[0], expected[0], strict=True):
        assert a[0] == e[0]
        np.testing.assert_allclose(a[1], e[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_dtypes(dtype, reduce):
    def program(lib):
        d = getattr(lib, dtype)
        x = lib.tensor([[1, -2, 3, 0], [5, 6, -7, 8]], dtype=d)
        s = lib.tensor([[4, -7, 2], [0, 3, 3]], dtype=d)
        index = lib.tensor([[0, 0, 2], [3, 3, 3]])
        return [values(x.scatter_reduce(1, index, s, reduce, include_self=flag)).__repr__()
                for flag in (True, False)]

    same(program)


@pytest.mark.parametrize("case", [
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, s, "foo"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, s, "add"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i.float(), s, "sum"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, s.float(), "sum"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i + 5, s, "sum"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 3, i, s, "sum"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i[0], s, "sum"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, s[:, :1], "sum"),
    lambda lib, x, i, s: x.scatter_reduce(1, i, s, reduce="amax", include_self=False),
    lambda lib, x, i, s: x.clone().scatter_reduce_(1, i, s, "mean"),
    lambda lib, x, i, s: lib.scatter_reduce(lib.tensor([True]), 0, lib.tensor([0]),
                                            lib.tensor([True]), "mean"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i[:, :0], s[:, :0], "prod",
                                            include_self=False),
    lambda lib, x, i, s: lib.scatter_reduce(lib.tensor(2.0), 0, lib.tensor(0),
                                            lib.tensor(5.0), "prod"),
    lambda lib, x, i, s: lib.scatter_reduce(x, 1, i, lib.cat([s, s], 1), "sum"),
])
def test_scatter_reduce_cases(case):
    same(lambda lib: repr(values(case(lib, _t(lib, SELF), lib.tensor(INDEX), _t(lib, SRC)))))


def test_scatter_reduce_nan_and_out():
    def program(lib):
        x = lib.tensor([1.0, float("nan"), 3.0])
        s = lib.tensor([4.0, float("nan"), 0.5])
        out = lib.empty(3)
        lib.scatter_reduce(x, 0, lib.tensor([0, 0, 1]), s, "amax", out=out)
        return repr(values([lib.scatter_reduce(x, 0, lib.tensor([0, 2, 1]), s, "amin"), out]))

    same(program)
