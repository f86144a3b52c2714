"""torch.* names gradgen lacked (issue 28, part 5), each against torch: values, dtypes,
grad_fn names, gradients and errors."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

import runtime
from tests.names_oracle import grads, same

# -- other names of existing ops ----------------------------------------------------------------

UNARY = ["absolute", "arccos", "arcsin", "arctan", "arcsinh", "arctanh", "fix", "negative"]
BINARY = ["arctan2", "divide", "greater", "greater_equal", "less", "less_equal", "multiply",
          "not_equal", "subtract", "true_divide"]


def _unary_input(t, name):
    return t.tensor([[0.25, -0.5, 0.75], [1.5, -2.25, 0.0]]) if name != "arccosh" else \
        t.tensor([[1.25, 2.5, 3.0], [1.5, 2.25, 4.0]])


@pytest.mark.parametrize("name", [*UNARY, "arccosh"])
def test_unary_other_names(name):
    same(lambda t: getattr(t, name)(_unary_input(t, name)))
    same(lambda t: getattr(_unary_input(t, name), name)())

    def in_place(t):
        x = _unary_input(t, name)
        return getattr(x, f"{name}_")() is x, x

    same(in_place)
    if name not in ("absolute", "fix", "negative"):
        same(lambda t: getattr(t, name)(_unary_input(t, name).double()))


@pytest.mark.parametrize("name", [*UNARY, "arccosh"])
def test_unary_other_names_gradients(name):
    if name == "fix":  # trunc: zero gradient
        pass

    def build(t):
        x = _unary_input(t, name).double().requires_grad_()
        return getattr(t, name)(x), (x,)

    grads(build)


@pytest.mark.parametrize("name", ["arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
                                  "clip", "fix", "negative"])
def test_in_place_functions(name):
    def program(t):
        x = _unary_input(t, name if name != "clip" else "arccos")
        result = getattr(t, f"{name}_")(x, -0.5, 0.5) if name == "clip" else \
            getattr(t, f"{name}_")(x)
        return result is x, x

    same(program)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", ["tensor", "broadcast", "number"])
def test_binary_other_names(name, other):
    def operands(t):
        x = t.tensor([[0.25, -0.5, 0.75], [1.5, -2.25, 3.0]])
        y = {"tensor": t.tensor([[0.5, -0.5, 2.0], [1.0, 4.0, 3.0]]),
             "broadcast": t.tensor([0.5, -0.5, 2.0]), "number": 2}[other]
        return x, y

    if name == "arctan2" and other == "number":
        same(lambda t: t.arctan2(*operands(t)))  # torch wants a tensor there
        return
    same(lambda t: getattr(t, name)(*operands(t)))
    same(lambda t: getattr(operands(t)[0], name)(operands(t)[1]))

    def in_place(t):
        x, y = operands(t)
        return getattr(x, f"{name}_")(y) is x, x

    same(in_place)


@pytest.mark.parametrize("name", ["arctan2", "divide", "multiply", "subtract", "true_divide"])
def test_binary_other_names_gradients(name):
    def build(t):
        x = t.tensor([[0.25, -0.5, 0.75], [1.5, -2.25, 3.0]], dtype=t.float64,
                     requires_grad=True)
        y = t.tensor([0.5, -1.5, 2.0], dtype=t.float64, requires_grad=True)
        return getattr(t, name)(x, y), (x, y)

    grads(build)


def test_keywords_of_other_names():
    x = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
    same(lambda t: t.divide(t.tensor(x), t.tensor(2.0), rounding_mode="floor"))
    same(lambda t: t.tensor(x).divide_(t.tensor(-4.0), rounding_mode="trunc"))
    same(lambda t: t.subtract(t.tensor(x), t.tensor(1.5), alpha=2))
    same(lambda t: t.tensor(x).subtract_(t.tensor(1.5), alpha=-1))
    same(lambda t: t.clip(t.tensor(x), min=-1.5))
    same(lambda t: t.clip(t.tensor(x), max=t.tensor([0.0, 1.0, 2.0])))
    same(lambda t: t.tensor(x).clip_(-1, 1))
    same(lambda t: t.tensor(x).clip(max=2.5))
    same(lambda t: t.multiply(2, 3))
    same(lambda t: t.true_divide(input=t.tensor(x), other=t.tensor(3.0)))


@pytest.mark.parametrize("program", [
    lambda t: t.arccos("a"),
    lambda t: t.arctan2(t.ones(2), None),
    lambda t: t.ones(2, dtype=t.int64).divide_(2),
    lambda t: t.ones(2, requires_grad=True).negative_(),
    lambda t: t.clip(t.ones(2)),
    lambda t: t.ones(2).greater(t.ones(3)),
])
def test_errors_under_other_names(program):
    same(program)


def test_other_names_record_the_named_op():
    def program(t):
        x = t.tensor([0.5, -0.25], requires_grad=True)
        return [getattr(t, name)(x).grad_fn.name() for name in ("arccos", "negative", "fix")] \
            + [t.multiply(x, x).grad_fn.name(), t.clip(x, 0, 1).grad_fn.name(),
               t.swapaxes(x[None], 0, 1).grad_fn.name()]

    same(program)


def test_swapaxes_swapdims():
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    same(lambda t: t.swapaxes(t.tensor(x), 0, 1))
    same(lambda t: t.swapaxes(t.tensor(x), axis0=1, axis1=0))
    same(lambda t: t.swapdims(t.tensor(x), dim0=0, dim1=-1))
    same(lambda t: t.tensor(x).swapaxes(axis0=0, axis1=1))
    same(lambda t: t.tensor(x).swapdims(0, 1))
    same(lambda t: t.tensor(x).swapaxes_(0, 1))
    same(lambda t: t.tensor(x).swapdims_(1, 0))
    same(lambda t: t.swapaxes(t.tensor(x), 0, 2))

    def build(t):
        w = t.tensor(x, requires_grad=True)
        return t.swapaxes(w, 0, 1) * t.tensor([[1.0, 2.0]]), (w,)

    grads(build)


def test_concat_concatenate():
    def tensors(t):
        return [t.tensor([[1.0, 2.0]]), t.tensor([[3.0, 4.0], [5.0, 6.0]])]

    same(lambda t: t.concat(tensors(t)))
    same(lambda t: t.concat(tensors(t), dim=0))
    same(lambda t: t.concatenate(tensors(t), axis=0))
    same(lambda t: t.concatenate(tensors(t), 0))
    same(lambda t: t.concat(tensors(t), 1))

    def out(t):
        result = t.empty(3, 2)
        t.concat(tensors(t), out=result)
        return result

    same(out)

    def build(t):
        a = t.tensor([[1.0, 2.0]], requires_grad=True)
        b = t.tensor([[3.0, 4.0]], requires_grad=True)
        return t.concatenate([a, b], axis=0) * t.tensor([[1.0], [3.0]]), (a, b)

    grads(build)


# -- composites: shapes ------------------------------------------------------------------------

def _shaped(t):
    return [t.tensor(1.5), t.tensor([1.0, 2.0]), t.tensor([[1.0, 2.0, 3.0]]),
            t.ones(2, 1, 3)]


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast(name):
    same(lambda t: [getattr(t, name)(x).shape for x in _shaped(t)])
    same(lambda t: getattr(t, name)(*_shaped(t)))
    same(lambda t: getattr(t, name)(_shaped(t)))
    same(lambda t: getattr(t, name)(t.tensor([1.0]), 3))

    def build(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(t, name)(x)
        return y * t.arange(1.0, 3.0).reshape(y.shape), (x,)

    grads(build)


def test_broadcast_shapes_and_tensors():
    same(lambda t: t.broadcast_shapes((2, 1), (3,), 1))
    same(lambda t: t.broadcast_shapes())
    same(lambda t: t.broadcast_shapes([4, 1, 3], (2, 1), t.Size([1])))
    same(lambda t: t.broadcast_shapes((2,), (3,)))
    same(lambda t: t.broadcast_shapes((2, 3), (4, 1), (5, 1, 1)))
    same(lambda t: t.broadcast_tensors(t.ones(2, 1), t.arange(3.0)))
    same(lambda t: t.broadcast_tensors(t.ones(2), t.ones(3)))

    def build(t):
        a = t.tensor([[1.0], [2.0]], requires_grad=True)
        b = t.tensor([3.0, 4.0, 5.0], requires_grad=True)
        x, y = t.broadcast_tensors(a, b)
        return x * y, (a, b)

    grads(build)


@pytest.mark.parametrize("sections", [2, 3, [1, 3], (0, 2, 2, 7), "tensor"])
def test_tensor_split(sections):
    def program(t):
        x = t.arange(14.0).reshape(7, 2)
        cuts = t.tensor([1, 4]) if sections == "tensor" else sections
        return t.tensor_split(x, cuts), x.tensor_split(cuts, dim=0), \
            t.tensor_split(x.t(), cuts, 1)

    same(program)


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
def test_hsplit_vsplit_dsplit(name):
    same(lambda t: getattr(t, name)(t.arange(24.0).reshape(2, 2, 6), 2))
    same(lambda t: getattr(t.arange(24.0).reshape(2, 2, 6), name)([1, 3]))
    same(lambda t: getattr(t, name)(t.arange(24.0).reshape(2, 2, 6), 5))
    same(lambda t: getattr(t, name)(t.arange(4.0), 2))
    same(lambda t: getattr(t, name)(t.tensor(1.0), 1))


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_stacks(name):
    same(lambda t: getattr(t, name)([t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0])]))
    same(lambda t: getattr(t, name)((t.tensor([[1.0], [2.0]]), t.tensor([[3.0], [4.0]]))))
    same(lambda t: getattr(t, name)([t.tensor(1.0), t.tensor(2.0)]))
    same(lambda t: getattr(t, name)([t.ones(2), t.ones(3)]))

    def build(t):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        b = t.tensor([3.0, 4.0], requires_grad=True)
        out = getattr(t, name)([a, b])
        return out * t.arange(1.0, out.numel() + 1).reshape(out.shape), (a, b)

    grads(build)


def test_tile_fliplr_take_along_dim():
    same(lambda t: t.tile(t.tensor([1, 2]), (2, 2)))
    same(lambda t: t.tensor([[1, 2], [3, 4]]).tile(2))
    same(lambda t: t.tensor([[1, 2], [3, 4]]).tile(1, 2, 2))
    same(lambda t: t.fliplr(t.arange(6).reshape(2, 3)))
    same(lambda t: t.fliplr(t.arange(3)))
    x = [[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]]
    same(lambda t: t.take_along_dim(t.tensor(x), t.tensor(x).argsort(1), 1))
    same(lambda t: t.take_along_dim(t.tensor(x), t.tensor([0, 5])))
    same(lambda t: t.take_along_dim(t.tensor(x), t.tensor([[0], [2]]), dim=1))
    same(lambda t: t.take_along_dim(t.tensor(x), t.tensor([[0, 1, 1]]), 0))
    same(lambda t: t.take_along_dim(t.tensor(x), t.tensor([1.0]), 0))

    def build(t):
        w = t.tensor(x, requires_grad=True)
        return (t.tile(w, (2, 1)).sum(0) + t.fliplr(w)[0]
                + t.take_along_dim(w, t.tensor([[2], [0]]), 1).sum()), (w,)

    grads(build)


# -- composites: products and statistics -------------------------------------------------------

@pytest.mark.parametrize("shapes", [((2, 2), (2, 3)), ((3,), (2,)), ((2, 1, 2), (3, 2)),
                                    ((), (2,))])
def test_kron(shapes):
    def build(t):
        a = t.arange(1.0, 1 + math.prod(shapes[0])).reshape(shapes[0]).requires_grad_()
        b = (t.arange(1.0, 1 + math.prod(shapes[1])) * 0.5).reshape(shapes[1]).requires_grad_()
        return t.kron(a, b), (a, b)

    grads(build)


def test_inner_and_tensordot():
    def build(t):
        a = t.arange(6.0).reshape(2, 3).requires_grad_()
        b = t.arange(12.0).reshape(4, 3).requires_grad_()
        c = t.arange(24.0).reshape(3, 4, 2).requires_grad_()
        return (t.inner(a, b).sum() + t.tensordot(a, c, 1).sum()
                + t.tensordot(b.t(), c, ([0], [1])).sum()
                + t.tensordot(a, b, dims=([1], [1])).sum() + t.inner(a, t.tensor(2.0)).sum()), \
            (a, b, c)

    grads(build)
    same(lambda t: t.inner(t.ones(2, 3), t.ones(3, 2)))
    same(lambda t: t.tensordot(t.ones(2, 3), t.ones(3, 2), 3))
    same(lambda t: t.tensordot(t.ones(2, 3), t.ones(2, 3), 2).grad_fn)
    same(lambda t: t.inner(t.arange(3), t.arange(3)))


@pytest.mark.parametrize("arguments", [{}, {"n": 2}, {"dim": 0}, {"n": 0},
                                       {"prepend": "p"}, {"append": "p", "n": 3}])
def test_diff(arguments):
    def build(t):
        x = t.tensor([[1.0, 4.0, 9.0, 16.0], [2.0, -1.0, 0.5, 3.0]], requires_grad=True)
        kwargs = {k: (t.tensor([[0.5], [1.5]]) if v == "p" else v) for k, v in arguments.items()}
        if "dim" in kwargs:
            kwargs = {"dim": 0}
        return t.diff(x, **kwargs), (x,)

    grads(build)
    same(lambda t: t.diff(t.tensor([True, False, False, True])))
    same(lambda t: t.tensor([1, 5, 2]).diff())
    same(lambda t: t.diff(t.tensor(1.0)))


@pytest.mark.parametrize("arguments", [{}, {"correction": 0}, {"correction": 5},
                                       {"fweights": "f"}, {"aweights": "a"},
                                       {"fweights": "f", "aweights": "a"}])
def test_cov(arguments):
    def build(t):
        x = t.tensor([[0.0, 1.0, 2.0, 4.0], [2.0, 1.5, 0.0, -1.0], [1.0, 1.0, 3.0, 0.5]],
                     dtype=t.float64, requires_grad=True)
        kwargs = {k: t.tensor([1, 2, 1, 3]) if v == "f" else
                  t.tensor([0.5, 1.0, 2.0, 1.5], dtype=t.float64) if v == "a" else v
                  for k, v in arguments.items()}
        return t.cov(x, **kwargs), (x,)

    grads(build)
    same(lambda t: t.cov(t.tensor([1.0, 2.0, 4.0])))
    same(lambda t: t.tensor([[1.0, 2.0], [3.0, 1.0]]).cov(correction=0))


def test_corrcoef():
    def build(t):
        x = t.tensor([[0.0, 1.0, 2.0, 4.0], [2.0, 1.5, 0.0, -1.0], [1.0, 1.0, 3.0, 0.5]],
                     dtype=t.float64, requires_grad=True)
        return t.corrcoef(x), (x,)

    grads(build)
    same(lambda t: t.corrcoef(t.tensor([1.0, 2.0, 4.0])))
    same(lambda t: t.tensor([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]).corrcoef())


def test_nanmean():
    x = [[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]]
    same(lambda t: t.nanmean(t.tensor(x)))
    same(lambda t: t.nanmean(t.tensor(x), 1))
    same(lambda t: t.tensor(x).nanmean(dim=0, keepdim=True))
    same(lambda t: t.nanmean(t.tensor([1, 2])))

    def build(t):
        w = t.tensor(x, dtype=t.float64, requires_grad=True)
        return t.nanmean(w, 1), (w,)

    grads(build)


def test_float_power():
    same(lambda t: t.float_power(t.tensor([1.0, 2.0, 3.0]), 2))
    same(lambda t: t.float_power(t.tensor([1, 2, 3]), t.tensor([0.5, 2.0, -1.0])))
    same(lambda t: t.float_power(2, t.tensor([1, 2])))
    same(lambda t: t.tensor([1.5, 2.0]).float_power(3))
    same(lambda t: t.tensor([1.5, 2.0], dtype=t.float64).float_power_(2))
    same(lambda t: t.tensor([1.5, 2.0]).float_power_(2))

    def build(t):
        x = t.tensor([1.5, 2.0], requires_grad=True)
        return t.float_power(x, 3), (x,)

    grads(build)


# -- composites: matrices and indexing ---------------------------------------------------------

def test_diag_and_diagflat():
    same(lambda t: t.diag(t.tensor([1.0, 2.0]), 1))
    same(lambda t: t.diag(t.arange(9.0).reshape(3, 3), -1))
    same(lambda t: t.arange(9.0).reshape(3, 3).diag())
    same(lambda t: t.diag(t.ones(2, 2, 2)))
    same(lambda t: t.diagflat(t.tensor([[1.0, 2.0], [3.0, 4.0]])))
    same(lambda t: t.tensor([1.0, 2.0]).diagflat(-1))

    def build(t):
        v = t.tensor([1.0, 2.0], requires_grad=True)
        m = t.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        return t.diag(v).sum() + t.diag(m).sum() * 2 + t.diagflat(m, 1).sum(), (v, m)

    grads(build)


def test_det_logdet_slogdet_matrix_exp_pinverse():
    a = [[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 1.0, 1.5]]
    negative = [[0.0, 1.0], [1.0, 0.0]]
    same(lambda t: (t.det(t.tensor(a)), t.tensor(a).det(), t.logdet(t.tensor(negative)),
                    t.tensor(a).logdet(), tuple(t.slogdet(t.tensor(negative))),
                    tuple(t.tensor(a).slogdet())), rtol=1e-5)

    def build(t):
        m = t.tensor(a, dtype=t.float64, requires_grad=True)
        return (t.det(m) + t.logdet(m) + t.slogdet(m)[1] + t.matrix_exp(m * 0.1).sum()
                + t.pinverse(m[:2]).sum() + m.pinverse().sum()), (m,)

    grads(build, rtol=1e-6, atol=1e-9)


def test_cartesian_prod_combinations():
    same(lambda t: t.cartesian_prod(t.tensor([1, 2]), t.tensor([3, 4, 5])))
    same(lambda t: t.cartesian_prod(t.tensor([1, 2])))
    same(lambda t: t.cartesian_prod(t.tensor([1, 2]), t.tensor([[3]])))
    same(lambda t: t.combinations(t.tensor([1, 2, 3, 4])))
    same(lambda t: t.combinations(t.tensor([1.0, 2.0, 3.0]), r=3))
    same(lambda t: t.combinations(t.tensor([1.0, 2.0, 3.0]), 2, with_replacement=True))
    same(lambda t: t.combinations(t.tensor([1.0, 2.0]), r=0))
    same(lambda t: t.combinations(t.tensor([1.0, 2.0]), r=3))

    def build(t):
        a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = t.tensor([0.5, -1.0], requires_grad=True)
        return t.cartesian_prod(a, b).prod(1) + 0 * t.combinations(a).sum(), (a, b)

    same(lambda t: t.cartesian_prod(t.ones(2, requires_grad=True), t.ones(2)).grad_fn.name())
    same(lambda t: t.combinations(t.ones(3, requires_grad=True)).grad_fn.name())

    def build2(t):
        a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return t.combinations(a, with_replacement=True).prod(1), (a,)

    grads(build2)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    def build(t):
        a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = t.tensor([0.5, -1.0], requires_grad=True)
        c = t.tensor(4.0, requires_grad=True)
        x, y, z = t.meshgrid(a, b, c, indexing=indexing)
        return x * y + z * t.arange(float(x.numel())).reshape(x.shape), (a, b, c)

    grads(build)
    same(lambda t: t.meshgrid([t.tensor([1, 2]), t.tensor([3, 4, 5])], indexing=indexing))
    same(lambda t: t.meshgrid(t.tensor([1, 2]), indexing=indexing))


def test_meshgrid_errors_and_warning():
    same(lambda t: t.meshgrid(t.tensor([1, 2]), t.tensor([3])))
    same(lambda t: t.meshgrid(t.tensor([1, 2]), indexing="ab"))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("arguments", [(3, 3), (4, 3, 1), (3, 5, -1), (0, 3), (3, 3, 5)])
def test_triangle_indices(name, arguments):
    same(lambda t: getattr(t, name)(*arguments))
    same(lambda t: getattr(t, name)(*arguments, dtype=t.int32))


def test_types():
    same(lambda t: [t.can_cast(a, b) for a in (t.float32, t.int64, t.bool, t.uint8)
                    for b in (t.float64, t.int32, t.bool, t.float16)])
    same(lambda t: [t.promote_types(a, b) for a in (t.float32, t.int64, t.bool, t.uint8)
                    for b in (t.float64, t.int32, t.bool, t.float16)])
    same(lambda t: [t.result_type(a, b) for a, b in
                    ((t.ones(2), 2.5), (t.ones(2, dtype=t.int64), 2.5), (2, 3),
                     (t.ones(2, dtype=t.int32), t.ones(2, dtype=t.float64)), (1.0, 2),
                     (t.tensor(1.0), t.tensor([1], dtype=t.int64)), (True, False),
                     (t.ones(2, dtype=t.uint8), -1))])
    same(lambda t: t.can_cast(t.float32, 3))


def test_predicates_without_gradient():
    x = [1.0, -0.0, 0.0, float("-inf"), float("inf"), float("nan"), -2.5]
    for name in ("isneginf", "isposinf", "isreal", "signbit"):
        same(lambda t, name=name: getattr(t, name)(t.tensor(x)))
        same(lambda t, name=name: getattr(t.tensor([1, -2, 0]), name)())
        same(lambda t, name=name: getattr(t, name)(t.tensor(x, requires_grad=True)))
        same(lambda t, name=name: getattr(t, name)([1.0]))


# -- results without a gradient: counting, searching, integer ops ------------------------------

@pytest.mark.parametrize("program", [
    lambda t: t.bincount(t.tensor([0, 1, 1, 3])),
    lambda t: t.bincount(t.tensor([0, 1, 1, 3]), t.tensor([0.5, 1.0, 1.0, 2.0])),
    lambda t: t.bincount(t.tensor([0, 1, 1, 3]), t.tensor([0.5, 1.0, 1.0, 2.0],
                                                          dtype=t.float64)),
    lambda t: t.bincount(t.tensor([0, 1, 1, 3]), t.tensor([1, 2, 3, 4]), minlength=6),
    lambda t: t.tensor([2, 2, 0], dtype=t.int32).bincount(),
    lambda t: t.bincount(t.tensor([], dtype=t.int64)),
    lambda t: t.bincount(t.tensor([-1])),
    lambda t: t.bincount(t.tensor([1.0])),
    lambda t: t.bincount(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.bincount(t.tensor([1]), minlength=-1),
    lambda t: t.bincount(t.tensor([1, 2]), t.ones(3)),
    lambda t: t.histc(t.tensor([1.0, 2.0, 2.0, 5.0]), 4),
    lambda t: t.histc(t.tensor([1.0, 2.0, 2.0, 5.0, -1.0, 7.0]), 3, 0, 6),
    lambda t: t.tensor([0.1, 0.25, 0.9, 1.0], dtype=t.float64).histc(bins=5, min=0, max=1),
    lambda t: t.histc(t.tensor([3.0, 3.0]), 4),
    lambda t: t.histc(t.tensor([1, 2]), 3),
    lambda t: t.histc(t.tensor([1.0, 2.0]), 4, 2, 1),
    lambda t: t.histc(t.tensor([1.0, 2.0]), -1),
    lambda t: t.bucketize(t.tensor([1, 5, 9]), t.tensor([1, 3, 5, 7])),
    lambda t: t.bucketize(t.tensor([[1.0, 5.0], [9.0, 0.0]]), t.tensor([1.0, 3.0, 5.0, 7.0]),
                          right=True, out_int32=True),
    lambda t: t.bucketize(3, t.tensor([1, 3, 5, 7])),
    lambda t: t.searchsorted(t.tensor([[1, 3, 5], [2, 4, 6]]), t.tensor([[3], [5]])),
    lambda t: t.searchsorted(t.tensor([1, 3, 5]), 3, side="right"),
    lambda t: t.searchsorted(t.tensor([1.0, 3.0, 5.0]), t.tensor([3.0, 0.0, 9.0]), right=True),
    lambda t: t.searchsorted(t.tensor([5, 1, 3]), t.tensor([2, 4]), sorter=t.tensor([1, 2, 0])),
    lambda t: t.searchsorted(t.tensor([1, 3]), t.tensor([2]), side="middle"),
    lambda t: t.isin(t.tensor([1, 2, 3]), t.tensor([2, 5])),
    lambda t: t.isin(t.tensor([1.0, 2.0, 3.0]), 2),
    lambda t: t.isin(2, t.tensor([2, 3])),
    lambda t: t.isin(t.tensor([[1, 2], [3, 4]]), t.tensor([2, 4]), invert=True),
    lambda t: t.unravel_index(t.tensor([4, 7]), (2, 4)),
    lambda t: t.unravel_index(t.tensor(9), (2, 3)),
    lambda t: t.unravel_index(t.tensor([[1], [5]]), t.Size([3, 2])),
    lambda t: t.unravel_index(t.tensor([1.0]), (2, 3)),
])
def test_counting_and_searching(program):
    same(program)


@pytest.mark.parametrize("program", [
    lambda t: t.gcd(t.tensor([4, 6, 0, -8]), t.tensor([6, 9, 5, 12])),
    lambda t: t.lcm(t.tensor([4, -6, 0]), t.tensor([6, 9, 3])),
    lambda t: t.tensor([4, 6], dtype=t.int32).gcd(t.tensor([2, 4], dtype=t.int32)),
    lambda t: t.gcd(t.ones(2), t.ones(2)),
    lambda t: t.lcm(t.tensor([2]), t.tensor([1.0])),
    lambda t: t.logical_xor(t.tensor([1.0, 0.0, 2.0]), t.tensor([1, 1, 0])),
    lambda t: t.tensor([True, False]).logical_xor(t.tensor([True])),
    lambda t: t.logical_xor(t.ones(2), t.ones(3)),
    lambda t: t.heaviside(t.tensor([-1.0, 0.0, 2.0]), t.tensor([0.5])),
    lambda t: t.heaviside(t.tensor([-1, 0, 2]), t.tensor([7])),
    lambda t: t.heaviside(t.tensor([-1.0, 0.0, 2.0]), t.tensor([1])),
    lambda t: t.tensor([-1.0, 0.0, 2.0]).heaviside(t.tensor(0.25)),
])
def test_integer_and_logical_ops(program):
    same(program)


def test_in_place_integer_and_logical_ops():
    def program(t):
        a, b = t.tensor([4, 6, 9]), t.tensor([6, 4, 3])
        x = t.tensor([1.0, 0.0, 3.0])
        y = t.tensor([-1.0, 0.0, 2.0])
        return (t.gcd_(a, t.tensor([2, 4, 6])) is a, a, b.lcm_(t.tensor([4, 6, 9])), b,
                x.logical_xor_(t.tensor([1, 1, 0])), y.heaviside_(t.tensor([0.5])), y)

    same(program)
    same(lambda t: t.ones(2, requires_grad=True).logical_xor_(t.ones(2)))


# -- composites: repeats, integrals, powers ----------------------------------------------------

def _chain(tensor, length=4):
    names, node = [], tensor.grad_fn
    while node is not None and len(names) < length:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


@pytest.mark.parametrize("call", [
    lambda t, x: t.repeat_interleave(x, 2),
    lambda t, x: t.repeat_interleave(x, 3, dim=1),
    lambda t, x: x.repeat_interleave(t.tensor([1, 0]), dim=0),
    lambda t, x: t.repeat_interleave(x, t.tensor([2]), dim=-1),
    lambda t, x: t.repeat_interleave(x, t.tensor(2)),
])
def test_repeat_interleave(call):
    def build(t):
        x = t.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = call(t, x)
        return y * t.arange(float(y.numel())).reshape(y.shape), (x,)

    grads(build)
    same(lambda t: _chain(call(t, t.ones(2, 3, requires_grad=True))))


def test_repeat_interleave_counts_and_errors():
    same(lambda t: t.repeat_interleave(t.tensor([2, 0, 3])))
    same(lambda t: t.repeat_interleave(t.ones(2, 3), t.tensor([1, 2, 3]), dim=0))
    same(lambda t: t.repeat_interleave(t.ones(2), -1))
    same(lambda t: t.repeat_interleave(t.tensor([1.0, 2.0])))
    same(lambda t: t.repeat_interleave(t.tensor([[1, 2]])))
    same(lambda t: t.repeat_interleave(t.tensor([-1, 2])))
    same(lambda t: t.repeat_interleave(t.ones(3), t.tensor([1, -1, 1])))


def test_cross():
    def build(t):
        a = t.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        b = t.tensor([[4.0, 5.0, 6.0], [1.0, 1.0, 0.0]], requires_grad=True)
        return t.cross(a, b, dim=1) + a.cross(b, 1), (a, b)

    grads(build)

    def without_dim(t: Any) -> Any:
        # torch gives its deprecation warning once per process (another test of the run may
        # have drawn it): the values are compared here, the warning below
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return t.cross(t.ones(3, 2), t.arange(6.0).reshape(3, 2))

    same(without_dim)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg"):
        runtime.cross(runtime.ones(3, 2), runtime.ones(3, 2))
    same(lambda t: t.cross(t.ones(2, 2), t.ones(2, 2), dim=1))


@pytest.mark.parametrize("arguments", [{}, {"dx": 0.5}, {"x": "1d"}, {"x": "2d"},
                                       {"dim": 0}, {"dim": 0, "x": "col"}])
@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_rules(name, arguments):
    def build(t):
        y = t.tensor([[1.0, 4.0, 9.0, 16.0], [2.0, -1.0, 0.5, 3.0], [0.0, 1.0, 0.0, 1.0]],
                     requires_grad=True)
        kwargs = dict(arguments)
        x = kwargs.pop("x", None)
        if x == "1d":
            kwargs["x"] = t.tensor([0.0, 0.5, 2.0, 2.5])
        elif x == "2d":
            kwargs["x"] = t.tensor([[0.0, 1.0, 1.5, 3.0]]).expand(3, 4)
        elif x == "col":
            kwargs["x"] = t.tensor([0.0, 2.0, 3.0])
        if name == "trapz" and "x" in kwargs:
            return t.trapz(y, kwargs.pop("x"), **kwargs), (y,)
        return getattr(t, name)(y, **kwargs), (y,)

    grads(build)
    same(lambda t: _chain(build(t)[0], 4))


def test_vander():
    same(lambda t: t.vander(t.tensor([1, 2, 3])))
    same(lambda t: t.vander(t.tensor([1.0, 2.0, 3.0]), N=4, increasing=True))
    same(lambda t: t.vander(t.tensor([1.0, 2.0]), N=0))
    same(lambda t: t.vander(t.ones(2, 2)))

    same(lambda t: _chain(t.vander(t.ones(3, requires_grad=True)), 3))

    def program(t):  # torch's vander cannot be differentiated: it writes over what it saved
        y = t.vander(t.tensor([1.0, -2.0, 0.5], requires_grad=True), 4)
        try:
            y.sum().backward()
        except RuntimeError as error:
            return str(error).split(":")[0]
        return "no error"

    same(program)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    def build(t):
        m = t.tensor([[1.0, 0.5], [-0.25, 1.5]], dtype=t.float64, requires_grad=True)
        return t.matrix_power(m, n) + m.matrix_power(n), (m,)

    grads(build, rtol=1e-6, atol=1e-9)
    same(lambda t: _chain(t.matrix_power(t.eye(2, requires_grad=True) * 2, n), 3))
    same(lambda t: t.matrix_power(t.ones(2, 3, 3), n).shape)


def test_matrix_power_errors():
    same(lambda t: t.matrix_power(t.ones(3), 2))
    same(lambda t: t.matrix_power(t.ones(2, 3), 2))


def test_aminmax():
    same(lambda t: tuple(t.aminmax(t.tensor([[1, 3], [2, 0]]), dim=0)))
    same(lambda t: tuple(t.tensor([[1.0, 3.0], [2.0, 0.0]]).aminmax()))
    same(lambda t: tuple(t.aminmax(t.tensor([[1.0, 3.0], [2.0, 0.0]]), dim=1, keepdim=True)))
    same(lambda t: tuple(t.aminmax(t.tensor([[1.0, 3.0]]), keepdim=True)))
    same(lambda t: t.aminmax(t.tensor([])))

    def program(t):  # gradgen records AminBackward0/AmaxBackward0 where torch has one node
        x = t.tensor([[1.0, 3.0], [3.0, 0.0]], requires_grad=True)
        low, high = t.aminmax(x, dim=1)
        (low * 2 + high).sum().backward()
        return x.grad

    same(program)


# -- process switches and small factories ------------------------------------------------------

def test_anomaly_switches():
    def program(t):
        found = [t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled()]
        t.set_anomaly_enabled(True, False)
        found += [t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled()]
        t.set_anomaly_enabled(False)
        return found + [t.is_anomaly_enabled(), t.is_anomaly_check_nan_enabled()]

    same(program)


def test_warn_always_and_precision():
    def program(t):
        found = [t.is_warn_always_enabled(), t.get_float32_matmul_precision()]
        t.set_warn_always(True)
        t.set_float32_matmul_precision("medium")
        found += [t.is_warn_always_enabled(), t.get_float32_matmul_precision()]
        t.set_float32_matmul_precision("fastest")
        found.append(t.get_float32_matmul_precision())
        t.set_warn_always(False)
        t.set_float32_matmul_precision("highest")
        return found + [t.set_flush_denormal(False), t.init_num_threads()]

    same(program)


def test_autocast_reported_off():
    def program(t):
        return [t.is_autocast_enabled(), t.is_autocast_enabled("cpu"), t.is_autocast_cpu_enabled(),
                t.is_autocast_cache_enabled(), t.get_autocast_dtype("cpu"),
                t.get_autocast_cpu_dtype(), t.get_autocast_gpu_dtype(), t.clear_autocast_cache(),
                t.set_autocast_enabled(False), t.set_autocast_cpu_enabled(False)]

    same(program)


def test_autocast_cannot_be_turned_on():
    import runtime

    with pytest.raises(NotImplementedError, match="gradgen has no autocast"):
        runtime.set_autocast_enabled(True)
    with pytest.raises(NotImplementedError, match="gradgen has no autocast"):
        runtime.set_autocast_enabled("cpu", True)
    assert not runtime.is_autocast_enabled()


def test_typename_and_is_storage():
    same(lambda t: [t.typename(t.ones(2, dtype=t.int64)), t.typename(t.ones(2)), t.typename(3),
                    t.typename("a"), t.typename(t.float32), t.is_storage(t.ones(2)),
                    t.is_storage(3)])


def test_scalar_tensor_and_range():
    same(lambda t: [t.scalar_tensor(3), t.scalar_tensor(2.5, dtype=t.float64),
                    t.scalar_tensor(True), t.scalar_tensor(3, dtype=t.int64),
                    t.scalar_tensor(1.5, requires_grad=True)])
    same(lambda t: t.range(0, 1, 0.25))
    same(lambda t: t.range(1, 4, dtype=t.int64))
    same(lambda t: t.range(5, 1, -2))
    same(lambda t: t.range(1, 4, 0))
    same(lambda t: t.range(4, 1))


def test_empty_strided_and_permuted_layout():
    same(lambda t: [t.empty_strided((2, 3), (1, 2)).stride(), t.empty_strided((2, 3), (1, 2)).shape,
                    t.empty_strided((2, 3), (3, 1), dtype=t.int64).dtype,
                    t.empty_permuted((2, 3, 4), (2, 0, 1)).stride(),
                    t.empty_permuted((2, 3, 4), (0, 1, 2)).is_contiguous()])


def test_nonzero_static():
    same(lambda t: t.nonzero_static(t.tensor([[0, 1], [1, 1]]), size=2))
    same(lambda t: t.nonzero_static(t.tensor([0.0, 1.5]), size=3, fill_value=9))
    same(lambda t: t.nonzero_static(t.tensor([0, 1]), size=0))
    same(lambda t: t.nonzero_static(t.tensor([0, 1]), size=-1))


# -- spec entries: copysign, sgn, nan_to_num, frexp, ldexp_ -------------------------------------

def test_copysign():
    x = [1.5, -2.0, 0.0, -0.0, 3.0]
    same(lambda t: t.copysign(t.tensor(x), t.tensor([-1.0, 1.0, -1.0, 1.0, -0.0])))
    same(lambda t: t.copysign(t.tensor(x), -2))
    same(lambda t: t.tensor([1, -2, 3]).copysign(t.tensor([-1, 1, -1])))
    same(lambda t: t.tensor(x).copysign_(-1.0))
    same(lambda t: t.tensor([1, 2]).copysign_(-1.0))

    def build(t):
        a = t.tensor(x, dtype=t.float64, requires_grad=True)
        b = t.tensor([-1.0, 1.0, -1.0, 2.0, -3.0], dtype=t.float64, requires_grad=True)
        return t.copysign(a, b) + a.copysign(-1.5), (a, b)

    grads(build)


def test_sgn():
    same(lambda t: t.sgn(t.tensor([-1.5, 0.0, 2.0, float("nan")])))
    same(lambda t: t.tensor([-3, 0, 4]).sgn())
    same(lambda t: t.tensor([-1.5, 0.0, 2.0]).sgn_())

    def build(t):
        a = t.tensor([-1.5, 0.5, 2.0], requires_grad=True)
        return t.sgn(a) * 3, (a,)

    grads(build)


def test_nan_to_num():
    x = [1.0, float("nan"), float("inf"), float("-inf"), -2.5]
    same(lambda t: t.nan_to_num(t.tensor(x)))
    same(lambda t: t.nan_to_num(t.tensor(x, dtype=t.float64), nan=0.5, posinf=2.0, neginf=-3.0))
    same(lambda t: t.tensor(x).nan_to_num(posinf=1e30))
    same(lambda t: t.tensor([1, 2]).nan_to_num())

    def in_place(t):
        y = t.tensor(x)
        return t.nan_to_num_(y, 1.0) is y, y, t.tensor(x).nan_to_num_(neginf=0.0)

    same(in_place)

    def build(t):
        a = t.tensor(x, requires_grad=True)
        return t.nan_to_num(a) * 2, (a,)

    grads(build)


def test_frexp_and_ldexp_in_place():
    x = [0.75, -6.0, 1024.5, 0.0, 3.0]
    same(lambda t: tuple(t.frexp(t.tensor(x))))
    same(lambda t: tuple(t.tensor(x, dtype=t.float64).frexp()))
    same(lambda t: t.frexp(t.tensor([1, 2])))

    def build(t):
        a = t.tensor(x, requires_grad=True)
        return t.frexp(a).mantissa * 2, (a,)

    grads(build)
    same(lambda t: t.ldexp_(t.tensor([1.0, 2.0]), t.tensor([1, 3])))
    same(lambda t: t.tensor([1.0, -2.0]).ldexp_(t.tensor([2, -1])))


# -- torch.autograd's switches -----------------------------------------------------------------

def test_multithreading_switch():
    def program(t):
        found = [t.autograd.is_multithreading_enabled()]
        with t.autograd.set_multithreading_enabled(False):
            found.append(t.autograd.is_multithreading_enabled())
        found.append(t.autograd.is_multithreading_enabled())
        t.autograd.set_multithreading_enabled(False)
        found.append(t.autograd.is_multithreading_enabled())
        t.autograd.set_multithreading_enabled(True)
        return found + [t.autograd.is_multithreading_enabled(),
                        t.autograd.is_view_replay_enabled()]

    same(program)


def test_kineto_and_profiler_activity():
    import runtime

    assert runtime.autograd.kineto_available() is False  # gradgen's profiler is its own
    assert runtime.autograd.ProfilerActivity is runtime.profiler.ProfilerActivity
    same(lambda t: t.autograd.ProfilerActivity.CPU.name)


# -- the older linalg names --------------------------------------------------------------------

def _values_only(program):
    """Compare what the program returns or raises, not its warnings (torch warns once a
    process for these, whichever test calls them first)."""
    import torch

    import runtime
    from tests import names_oracle

    ours, theirs = names_oracle.observe(program, runtime)[0], \
        names_oracle.observe(program, torch)[0]
    names_oracle._assert_equal(ours, theirs, 1e-5, 1e-6, "result")


_A = [[2.0, 1.0, 0.5], [1.0, 3.0, -1.0], [0.0, 1.0, 1.5], [1.0, 1.0, 1.0]]
_SPD = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]


@pytest.mark.parametrize("program", [
    lambda t: (lambda r: (r.S, r.U.abs(), r.V.abs(), type(r).__name__))(t.svd(t.tensor(_A))),
    lambda t: [x.shape for x in t.svd(t.tensor(_A), some=False)],
    lambda t: tuple(t.svd(t.tensor(_A), compute_uv=False)),
    lambda t: t.tensor(_SPD).svd().S,
    lambda t: (lambda r: (r.Q.abs(), r.R.abs(), type(r).__name__))(t.qr(t.tensor(_A))),
    lambda t: [x.shape for x in t.qr(t.tensor(_A), some=False)],
    lambda t: t.lu(t.tensor(_SPD)),
    lambda t: t.tensor(_SPD).lu(get_infos=True),
    lambda t: t.lu_solve(t.ones(3, 2), *t.lu(t.tensor(_SPD))),
    lambda t: t.ones(3, 1).lu_solve(*t.lu(t.tensor(_SPD))),
    lambda t: t.cholesky(t.tensor(_SPD)),
    lambda t: t.tensor(_SPD).cholesky(upper=True),
    lambda t: t.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]])),
])
def test_older_linalg_names(program):
    _values_only(program)


def test_older_linalg_gradients():
    def program(t):
        a = t.tensor(_A, dtype=t.float64, requires_grad=True)
        s = t.tensor(_SPD, dtype=t.float64, requires_grad=True)
        loss = (t.svd(a).S.sum() + t.qr(a).R.diagonal().abs().sum()
                + t.lu_solve(t.ones(3, 1, dtype=t.float64), *t.lu(s)).sum()
                + t.cholesky(s).sum())
        loss.backward()
        return a.grad, s.grad

    _values_only(program)


def test_older_linalg_names_warn_once():
    import warnings

    import runtime
    from runtime import tensor_functions

    tensor_functions._warned.discard("qr")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runtime.qr(runtime.eye(2))
        runtime.qr(runtime.eye(2))
    assert [str(w.message).split("\n")[0] for w in caught] == [
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release."]


def test_logcumsumexp():
    x = [[0.5, -1.0, 2.0, 30.0], [-50.0, 1.0, 1.0, 0.0]]
    same(lambda t: t.logcumsumexp(t.tensor(x), 1))
    same(lambda t: t.tensor(x, dtype=t.float64).logcumsumexp(dim=0))
    same(lambda t: t.logcumsumexp(t.tensor([float("-inf"), 1.0]), 0))
    same(lambda t: t.logcumsumexp(t.tensor(2.0), 0))
    same(lambda t: t.logcumsumexp(t.tensor([1, 2]), 0))
    same(lambda t: t.logcumsumexp(t.ones(2), 1))

    def build(t):
        a = t.tensor(x, dtype=t.float64, requires_grad=True)
        return t.logcumsumexp(a, 1) * t.tensor([1.0, -2.0, 0.5, 3.0], dtype=t.float64), (a,)

    grads(build)


@pytest.mark.parametrize("program", [
    lambda t: t.unique(t.tensor([3, 1, 2, 3, 1, 5])),
    lambda t: t.unique(t.tensor([3, 1, 2, 3, 1, 5]), sorted=False),
    lambda t: t.unique(t.tensor([[3, 1], [2, 3]]), return_inverse=True, return_counts=True),
    lambda t: t.unique(t.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True,
                       return_counts=True),
    lambda t: t.tensor([[1, 2, 1], [3, 4, 3]]).unique(dim=1, return_counts=True),
    lambda t: t.unique(t.tensor([1.0, float("nan"), float("nan"), 2.0])),
    lambda t: t.unique(t.tensor(3)),
    lambda t: t.unique(t.tensor([], dtype=t.int64), return_counts=True),
    lambda t: t.unique_consecutive(t.tensor([1, 1, 2, 2, 3, 1, 1]), return_inverse=True,
                                   return_counts=True),
    lambda t: t.unique_consecutive(t.tensor([[1, 2], [1, 2], [0, 5], [1, 2]]), dim=0,
                                   return_counts=True),
    lambda t: t.tensor([[1, 1, 2], [3, 3, 4]]).unique_consecutive(dim=1, return_inverse=True),
    lambda t: t.unique_consecutive(t.tensor([[1, 1], [2, 2]])),
])
def test_unique(program):
    same(program)


_Q = [[1.0, 5.0, 2.0, 8.0, -1.0], [3.0, float("nan"), 1.0, 0.0, 2.5]]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantiles(name, interpolation):
    def run(t, *args, **kwargs):
        return getattr(t, name)(*args, interpolation=interpolation, **kwargs)

    same(lambda t: run(t, t.tensor(_Q), 0.4, dim=1))
    same(lambda t: run(t, t.tensor(_Q), 0.5))
    same(lambda t: run(t, t.tensor(_Q[0]), t.tensor([0.25, 0.5, 0.9])))
    same(lambda t: run(t, t.tensor(_Q), t.tensor([0.1, 0.9]), dim=0, keepdim=True))
    same(lambda t: run(t, t.tensor(_Q), 0.5, dim=1, keepdim=True))
    same(lambda t: run(t, t.tensor(_Q, dtype=t.float64), 0.75, keepdim=True))
    same(lambda t: run(t, t.tensor([float("nan")] * 2), 0.5))

    def build(t):
        x = t.tensor([[1.0, 5.0, 2.0, 8.0, -1.0], [3.0, 4.0, 1.0, 0.0, 2.5]], dtype=t.float64,
                     requires_grad=True)
        # (gradgen's graph is another than torch's: one gather per q; `* 1` compares values)
        return run(t, x, t.tensor([0.3, 0.8], dtype=t.float64), dim=1) * 1, (x,)

    grads(build)


@pytest.mark.parametrize("program", [
    lambda t: t.quantile(t.tensor([1.0, 2.0]), 1.5),
    lambda t: t.quantile(t.tensor([1.0, 2.0]), t.tensor([1.5])),
    lambda t: t.quantile(t.tensor([1, 2]), 0.5),
    lambda t: t.quantile(t.tensor([1.0]), 0.5, interpolation="foo"),
    lambda t: t.quantile(t.tensor([1.0]), t.tensor([0.5], dtype=t.float64)),
    lambda t: t.quantile(t.tensor([]), 0.5),
    lambda t: t.tensor([3.0, 1.0, 2.0]).quantile(0.5),
    lambda t: t.tensor([3.0, float("nan"), 2.0]).nanquantile(0.5),
])
def test_quantile_errors_and_methods(program):
    same(program)


def test_masked_scatter():
    mask = [True, False, True]
    same(lambda t: t.masked_scatter(t.zeros(2, 3), t.tensor(mask), t.arange(6.0).reshape(2, 3)))
    same(lambda t: t.zeros(2, 3).masked_scatter(t.tensor(mask), t.arange(10.0)))
    same(lambda t: t.zeros(3).masked_scatter(t.ones(2, 3, dtype=t.bool), t.arange(6.0)))
    same(lambda t: t.zeros(2, 3).masked_scatter_(t.tensor(mask), t.arange(4.0)))
    same(lambda t: t.zeros(2, 3).masked_scatter(t.tensor([1, 0, 1]), t.ones(6)))
    same(lambda t: t.zeros(2, 3).masked_scatter(t.tensor(mask), t.ones(6, dtype=t.float64)))
    same(lambda t: t.zeros(2, 3).masked_scatter(t.tensor(mask), t.ones(3)))

    def build(t):
        s = t.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        src = t.tensor([0.5, -1.0, 2.0, 3.0, 7.0], requires_grad=True)
        out = s.masked_scatter(t.tensor(mask), src)
        return out * t.tensor([[1.0, 2.0, 3.0]]), (s, src)

    grads(build)


# -- windows -----------------------------------------------------------------------------------

WINDOWS = ["hann_window", "hamming_window", "bartlett_window", "blackman_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, length, periodic, dtype):
    same(lambda t: getattr(t, name)(length, periodic, dtype=getattr(t, dtype)),
         rtol=1e-6, atol=2e-7)


def test_window_options_and_errors():
    same(lambda t: t.hamming_window(7, True, 0.5, 0.3))
    same(lambda t: t.hamming_window(7, False, 0.6))
    same(lambda t: t.kaiser_window(9, True, 8.0, dtype=t.float64))
    same(lambda t: t.hann_window(3, requires_grad=True))
    for name in WINDOWS:
        same(lambda t, name=name: getattr(t, name)(-1))
        same(lambda t, name=name: getattr(t, name)(3, dtype=t.int64))


@pytest.mark.parametrize("program", [
    lambda t: t.bitwise_left_shift(t.tensor([1, -8, 5, 3]), t.tensor([1, 2, 63, 64])),
    lambda t: t.bitwise_right_shift(t.tensor([1, -8, 5, 3]), t.tensor([1, 2, 63, 64])),
    lambda t: t.bitwise_right_shift(t.tensor([1, -8, 5, 3]), -1),
    lambda t: t.bitwise_left_shift(t.tensor([1, -8, 5, 3]), -1),
    lambda t: t.bitwise_left_shift(t.tensor([1, 2], dtype=t.int32), 31),
    lambda t: t.bitwise_left_shift(t.tensor([1, 2], dtype=t.uint8), 7),
    lambda t: t.bitwise_left_shift(3, t.tensor([1, 2])),
    lambda t: t.tensor([True]).bitwise_left_shift(1),
    lambda t: t.tensor([[4], [16]]).bitwise_right_shift(t.tensor([1, 2])),
    lambda t: t.bitwise_left_shift(t.ones(2), 1),
    lambda t: t.tensor([1, 2]).bitwise_left_shift_(1.5),
    lambda t: (lambda x: (x.bitwise_left_shift_(2), x))(t.tensor([1, 3])),
    lambda t: (lambda x: (x.bitwise_right_shift_(t.tensor([1, 0])), x))(t.tensor([-7, 3])),
    lambda t: t.argwhere(t.tensor([[0, 1], [2, 0]])),
    lambda t: t.tensor(3.0).argwhere(),
    lambda t: t.argwhere(t.tensor([0.0, float("nan"), -1.0])),
])
def test_shifts_and_argwhere(program):
    same(program)


def test_set_default_tensor_type():
    from tests import names_oracle

    def program(t):
        t.set_default_tensor_type(t.DoubleTensor)
        found = [t.get_default_dtype(), t.ones(1).dtype]
        t.set_default_tensor_type("torch.FloatTensor")
        found.append(t.get_default_dtype())
        try:
            t.set_default_tensor_type(t.LongTensor)
        except TypeError as error:
            found.append(str(error))
        t.set_default_dtype(t.float32)
        return found

    # (torch warns once a process: the values only)
    import torch

    import runtime

    assert names_oracle.observe(program, runtime)[0] == names_oracle.observe(program, torch)[0]


def test_resize_as_copy():
    same(lambda t: t.tensor([1.0, 2.0]).resize_as(t.ones(2, 1)))


def test_angle():
    same(lambda t: t.angle(t.tensor([-1.0, 0.0, 2.0, float("nan"), -0.0, float("-inf")])))
    same(lambda t: t.tensor([-1, 2, 0]).angle())
    same(lambda t: t.angle(t.tensor([True, False])))

    def build(t):
        x = t.tensor([-1.5, 0.5, 2.0], dtype=t.float64, requires_grad=True)
        return t.angle(x) + x, (x,)

    grads(build)
