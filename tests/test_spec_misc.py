"""The spec-breadth ops of the reductions / indexing / random / linalg block (helper misc):
their public names, values, dtypes and errors against torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import observe, same, same_outcome, values

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


# -- mode, aminmax, block_diag, isnan, histc ------------------------------------------------

MODE_VALUES = [[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [0.0, 7.0, 0.0, 7.0, 0.0]]


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.mode(x),
    lambda lib, x: lib.mode(x, 0),
    lambda lib, x: x.mode(keepdim=True),
    lambda lib, x: lib.mode(x.long(), dim=-1),
    lambda lib, x: lib.mode(x > 2),
    lambda lib, x: lib.mode(lib.tensor(3.0)),
    lambda lib, x: lib.mode(lib.zeros(0)),
    lambda lib, x: lib.mode(lib.zeros(2, 0), 0),
    lambda lib, x: lib.mode(lib.zeros(2, 0), 1),
    lambda lib, x: lib.mode(lib.zeros(0, 0), 0),
    lambda lib, x: lib.mode(x, 2),
])
def test_mode(call):
    same(lambda lib: repr(values(call(lib, lib.tensor(MODE_VALUES)))))


def test_mode_gradient_goes_to_the_returned_index():
    def program(lib):
        x = lib.tensor(MODE_VALUES, requires_grad=True)
        result = lib.mode(x, 1)
        result.values.sum().backward()
        return repr(values([result.values, result.indices, x.grad])), \
            type(result).__name__, result.values.grad_fn.name()

    same(program)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.aminmax(x),
    lambda lib, x: lib.aminmax(x, dim=1),
    lambda lib, x: x.aminmax(dim=0, keepdim=True),
    lambda lib, x: lib.aminmax(x, keepdim=True),
    lambda lib, x: lib.aminmax(lib.tensor(2.0), dim=0, keepdim=True),
    lambda lib, x: lib.aminmax(x > 0),
    lambda lib, x: lib.aminmax(lib.zeros(0)),
    lambda lib, x: lib.aminmax(lib.zeros(2, 0), dim=1),
    lambda lib, x: lib.aminmax(lib.zeros(2, 0), dim=0),
    lambda lib, x: lib.aminmax(x, dim=3),
])
def test_aminmax(call):
    same(lambda lib: repr(values(tuple(call(lib, lib.tensor(MODE_VALUES))))))


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_aminmax_gradient_shares_ties(dim):
    def program(lib):
        x = lib.tensor(MODE_VALUES, requires_grad=True)
        low, high = lib.aminmax(x, dim=dim)
        (low * 2 + high * 3).sum().backward()
        return repr(values(x.grad)), low.grad_fn.name()

    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.block_diag(),
    lambda lib: lib.block_diag(lib.ones(2, 2), lib.tensor(3.0), lib.ones(3),
                               lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.block_diag(lib.ones(2, 2, 2)),
    lambda lib: lib.block_diag(lib.zeros(0, 3), lib.ones(2, 2)),
    lambda lib: lib.block_diag(lib.zeros(0), lib.ones(2, 2)),
    lambda lib: lib.block_diag(lib.tensor([1, 2]), lib.tensor([[True]])),
])
def test_block_diag(call):
    same(lambda lib: repr(values(call(lib))))


def test_block_diag_gradients():
    def program(lib):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.tensor(5.0, requires_grad=True)
        c = lib.tensor([6.0, 7.0, 8.0], requires_grad=True)
        y = lib.block_diag(a, b, c)
        (y * lib.arange(24.0).reshape(4, 6)).sum().backward()
        return repr(values([a.grad, b.grad, c.grad])), y.grad_fn.name()

    same(program)


def test_isnan_and_histc_names():
    def program(lib):
        x = lib.tensor([1.0, float("nan"), 2.5, -1.0, 0.5])
        return repr(values([lib.isnan(x), x.isnan(), lib.isnan(lib.tensor([1, 2])),
                            lib.histc(x.nan_to_num(0.0), bins=4), x[:1].histc(3)]))

    same(program)


# -- cholesky, cholesky_inverse ---------------------------------------------------------------

SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, -0.2], [0.5, -0.2, 2.0]]


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_node_and_gradient(upper):
    def program(lib):
        a = lib.tensor(SPD, dtype=lib.float64, requires_grad=True)
        factor = lib.cholesky(a, upper)
        (factor * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return factor.grad_fn.name(), values([factor, a.grad])

    expected, actual = program(torch), program(runtime)
    assert actual[0] == expected[0] == "CholeskyBackward0"
    for a, e in zip(actual[1], expected[1], strict=True):
        np.testing.assert_allclose(a[1], e[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse(upper):
    def program(lib):
        a = lib.tensor(SPD, dtype=lib.float64)
        factor = lib.linalg.cholesky(a, upper=upper).requires_grad_()
        inverse = lib.cholesky_inverse(factor, upper)
        (inverse * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return inverse.grad_fn.name(), values([inverse, factor.grad, factor.cholesky_inverse()])

    expected, actual = program(torch), program(runtime)
    assert actual[0] == expected[0] == "CholeskyInverseBackward0"
    for a, e in zip(actual[1], expected[1], strict=True):
        np.testing.assert_allclose(a[1], e[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda lib: lib.cholesky_inverse(lib.ones(2, 3)),
    lambda lib: lib.cholesky_inverse(lib.tensor([[1.0, 0.0], [2.0, 0.0]])),
    lambda lib: lib.cholesky_inverse(lib.ones(2, 2, dtype=lib.int64)),
    lambda lib: lib.cholesky_inverse(lib.ones(2, 2, dtype=lib.bool)),
    lambda lib: lib.cholesky_inverse(lib.ones(3)),
])
def test_cholesky_inverse_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- the small entries: sub.Scalar, div.Scalar_mode, polygamma_, _lazy_clone, slice_inverse ---

def test_small_entries():
    def program(lib):
        x = lib.tensor([[0.5, 1.5, 2.5], [3.0, 4.0, 5.5]], requires_grad=True)
        y = x.clone()
        y.polygamma_(1)
        z = lib.div(x, 2.0, rounding_mode="floor") + x.sub(1.5, alpha=2) + x._lazy_clone()
        (y.sum() + z.sum()).backward()
        return (values([y, z, x.grad, x.detach().polygamma(2)]), y.grad_fn.name(),
                lib._lazy_clone(x).grad_fn.name())

    expected, actual = program(torch), program(runtime)
    assert actual[1:] == expected[1:] == ("PolygammaBackward1", "LazyCloneBackward0")
    for a, e in zip(actual[0], expected[0], strict=True):
        assert a[0] == e[0]
        np.testing.assert_allclose(a[1], e[1], rtol=1e-6)


def test_slice_inverse_of_a_slice():
    def program(lib):
        base = lib.arange(15.0).reshape(5, 3)
        return repr(values(lib.slice_inverse(base[1:3], base, 0, 1, 3)))

    same(program)


# -- the in-place random ops: torch's numbers, nodes and errors -------------------------------

@pytest.mark.parametrize("draw", [
    lambda lib, x: x.uniform_(),
    lambda lib, x: x.uniform_(-2, 3),
    lambda lib, x: x.normal_(),
    lambda lib, x: x.normal_(1.5, 0.25),
    lambda lib, x: x.bernoulli_(),
    lambda lib, x: x.bernoulli_(0.3),
    lambda lib, x: x.bernoulli_(lib.linspace(0, 1, 20).reshape(4, 5)),
    lambda lib, x: x.exponential_(),
    lambda lib, x: x.exponential_(2.5),
    lambda lib, x: x.t().uniform_(),
    lambda lib, x: x.double().normal_(),
    lambda lib, x: lib.bernoulli(lib.linspace(0, 1, 20).reshape(4, 5)),
    lambda lib, x: x.cauchy_(),
    lambda lib, x: x.double().cauchy_(1.0, 2.5),
    lambda lib, x: x.log_normal_(),
    lambda lib, x: x.double().log_normal_(0.5, 0.25),
    lambda lib, x: x.geometric_(0.3),
    lambda lib, x: x.long().geometric_(0.05),
    lambda lib, x: x.t().geometric_(0.9),
])
def test_random_ops_draw_torchs_numbers(draw):
    def program(lib):
        lib.manual_seed(11)
        first = draw(lib, lib.empty(4, 5))
        generator = lib.Generator().manual_seed(5)
        second = lib.empty(3, 7).uniform_(generator=generator)
        return repr(values([first, second, lib.rand(2)]))

    same(program)


@pytest.mark.parametrize("call, node", [
    (lambda lib, y: y.uniform_(), "UniformBackward0"),
    (lambda lib, y: y.normal_(), "NormalBackward0"),
    (lambda lib, y: y.bernoulli_(0.5), "BernoulliBackward2"),
    (lambda lib, y: y.bernoulli_(lib.full((3,), 0.5)), "BernoulliBackward1"),
    (lambda lib, y: y.exponential_(), "ExponentialBackward0"),
    (lambda lib, y: lib.bernoulli(y.clamp(0, 1)), "BernoulliBackward0"),
    (lambda lib, y: y.cauchy_(), "CauchyBackward0"),
    (lambda lib, y: y.log_normal_(), "LogNormalBackward0"),
    (lambda lib, y: y.geometric_(0.5), "GeometricBackward0"),
])
def test_random_ops_nodes_and_zero_gradients(call, node):
    def program(lib):
        x = lib.tensor([0.2, 0.5, 0.9], requires_grad=True)
        y = call(lib, x * 1.0)
        y.sum().backward()
        return y.grad_fn.name(), repr(values(x.grad))

    assert same(program)[0][1][0] == node


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).uniform_(2, 1),
    lambda lib: lib.empty(3, dtype=lib.int64).uniform_(),
    lambda lib: lib.empty(3).normal_(0, -1),
    lambda lib: lib.empty(3, dtype=lib.int64).normal_(),
    lambda lib: lib.empty(3).bernoulli_(1.5),
    lambda lib: lib.empty(3).bernoulli_(lib.tensor([0.5, 2.0, 0.1])),
    lambda lib: lib.empty(3).bernoulli_(lib.tensor([1, 0, 1])),
    lambda lib: lib.empty(3).exponential_(0),
    lambda lib: lib.empty(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.empty(3).uniform_(generator=3),
    lambda lib: lib.tensor([1.0], requires_grad=True).uniform_(),
    lambda lib: lib.empty(0).normal_(),
    lambda lib: lib.empty(3).cauchy_(0, 0),
    lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(3).geometric_(1),
    lambda lib: lib.empty(3, dtype=lib.bool).geometric_(0.5),
    lambda lib: lib.empty(3).log_normal_(0, 0),
    lambda lib: lib.empty(3, dtype=lib.int64).log_normal_(),
])
def test_random_ops_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- index_reduce -----------------------------------------------------------------------------

INDEX_SELF = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
INDEX_SOURCE = [[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]]


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_values_and_gradients(reduce, include_self):
    def program(lib):
        x = lib.tensor(INDEX_SELF, dtype=lib.float64, requires_grad=True)
        s = lib.tensor(INDEX_SOURCE, dtype=lib.float64, requires_grad=True)
        y = x.index_reduce(0, lib.tensor([2, 2]), s, reduce, include_self=include_self)
        (y * lib.arange(9.0, dtype=lib.float64).reshape(3, 3)).sum().backward()
        return repr(values([y, x.grad, s.grad])), y.grad_fn.name()

    assert same_outcome(program)[1][1] == "IndexReduceBackward0"


@pytest.mark.parametrize("call", [
    lambda lib, x, i, s: lib.index_reduce(x, 0, i, s, "sum"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, i.float(), s, "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, lib.tensor([5, 0]), s, "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, lib.tensor([[0]]), s, "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, i, s[:1], "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, i, s.double(), "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 2, i, s, "prod"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, lib.tensor([-1, 0]), s, "prod"),
    lambda lib, x, i, s: lib.index_reduce(x.long(), 0, i, s.long(), "mean"),
    lambda lib, x, i, s: lib.index_reduce(x, 0, i, s[:, :2], "prod"),
    lambda lib, x, i, s: x.clone().index_reduce_(1, lib.tensor([0, 0, 2]), s.t(), "amax"),
])
def test_index_reduce_cases(call):
    same_outcome(lambda lib: repr(values(call(lib, lib.tensor(INDEX_SELF), lib.tensor([2, 0]),
                                              lib.tensor(INDEX_SOURCE)))))


# -- the unique family ------------------------------------------------------------------------

UNIQUE_ROWS = [[3.0, 1.0, 3.0], [2.0, 1.0, 2.0], [3.0, 1.0, 3.0]]


@pytest.mark.parametrize("call", [
    lambda lib, x: lib._unique(x, return_inverse=True),
    lambda lib, x: lib._unique(x, False, False),
    lambda lib, x: lib._unique2(x, True, True, True),
    lambda lib, x: lib._unique2(lib.tensor([float("nan"), float("nan"), 1.0]), True, True, True),
    lambda lib, x: lib.unique(x, dim=1, return_inverse=True, return_counts=True),
    lambda lib, x: lib.unique(x.long(), return_counts=True),
    lambda lib, x: lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1]), True, True),
    lambda lib, x: lib.unique_consecutive(x, True, True, 0),
    lambda lib, x: x.unique_consecutive(dim=1, return_counts=True),
    lambda lib, x: lib.unique_consecutive(lib.zeros(0), True, True),
])
def test_unique_family(call):
    same(lambda lib: repr(values(call(lib, lib.tensor(UNIQUE_ROWS)))))


def test_unique_has_no_derivative():
    def program(lib):
        x = lib.tensor([1.0, 2.0, 1.0], requires_grad=True)
        result = lib._unique2(x)
        name = result[0].grad_fn.name()
        result[0].sum().backward()
        return name

    same(program)


# -- masked_scatter_backward and the unsafe indexing ops -------------------------------------

@pytest.mark.parametrize("sizes", [[12], [3, 5], [2, 2]])
def test_masked_scatter_backward(sizes):
    """torch binds it in torch.ops.aten only; gradgen as a function, as its other backward
    ops."""
    def program(op, lib):
        x = lib.tensor(SELF, dtype=lib.float32)
        return values(op(x, x > 0, sizes))

    expected = observe(lambda lib: program(torch.ops.aten.masked_scatter_backward, lib), torch)
    actual = observe(lambda lib: program(runtime.masked_scatter_backward, lib), runtime)
    assert repr(actual) == repr(expected)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib._unsafe_index(x, [lib.tensor([0, 2, 0])]),
    lambda lib, x: lib._unsafe_index(x, [lib.tensor([1, 0]), lib.tensor([[1, 0], [3, 3]])]),
    lambda lib, x: lib._unsafe_index_put(x, [lib.tensor([0, 0])], lib.tensor([5.0]), True),
    lambda lib, x: lib._unsafe_index_put(x, [lib.tensor([0, 1])], lib.ones(3, 4)),
    lambda lib, x: lib._unsafe_masked_index(
        x, lib.tensor([[True], [False], [True]]), [lib.tensor([[0], [9], [2]])], -1.0),
    lambda lib, x: lib._unsafe_masked_index_put_accumulate(
        x, lib.tensor([[True], [False], [True]]), [lib.tensor([[0], [9], [2]])],
        lib.ones(3, 1, 4)),
])
def test_unsafe_indexing(call):
    same(lambda lib: repr(values(call(lib, lib.tensor(SELF, dtype=lib.float32)))))


def test_unsafe_masked_index_gradient():
    def program(lib):
        x = lib.tensor(SELF, requires_grad=True)
        y = lib._unsafe_masked_index(x, lib.tensor([[True], [False], [True]]),
                                     [lib.tensor([[0], [9], [2]])], 0.5)
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 1, 4)).sum().backward()
        return repr(values([y, x.grad])), y.grad_fn.name()

    same(program)


# -- matmul, linear, linear_backward (spec ops without a Python name, as torch's) -------------

@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4,)), ((2, 3, 4), (4,)),
                                    ((3,), (2, 3, 5)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_op_against_torch(shapes):
    from generated import ops

    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s) for s in shapes)
    x, y = (runtime.tensor(v, requires_grad=True) for v in (a, b))
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
    result, expected = ops.matmul(x, y), torch.matmul(tx, ty)
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    weights = rng.standard_normal(tuple(expected.shape))
    (result * runtime.tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    assert result.grad_fn.name() == "MatmulBackward0"
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)


def test_linear_op_and_its_backward_against_torch():
    from generated import ops

    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (5, 4), (5,))]
    ours = [runtime.tensor(v, requires_grad=True) for v in arrays]
    theirs = [torch.tensor(v, requires_grad=True) for v in arrays]
    result = ops.linear(*ours)
    expected = torch.nn.functional.linear(*theirs)
    np.testing.assert_allclose(result.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    result.sum().backward()
    expected.sum().backward()
    assert result.grad_fn.name() == "LinearBackward0"
    for mine, torchs in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), torchs.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        ops.matmul(runtime.tensor(2.0), ours[1])
