"""Tensor attributes torch has and gradgen lacked (issue 28, part 5), each against torch:
in-place variants, other names of existing methods, predicates and conversions."""

from __future__ import annotations

import pytest

from tests.names_oracle import grads, same

# -- in-place comparisons, logical and bitwise ops ---------------------------------------------

COMPARISONS = ["eq_", "ge_", "gt_", "le_", "lt_", "ne_"]


@pytest.mark.parametrize("name", COMPARISONS)
@pytest.mark.parametrize("other", [2.0, 2, "tensor", "broadcast"])
def test_comparison_in_place(name, other):
    def program(t):
        x = t.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
        y = {"tensor": t.tensor([[1.5, 2.0, 0.0], [3.0, 0.0, 9.0]]),
             "broadcast": t.tensor([2.0, 2.0, 1.0])}.get(other, other)
        result = getattr(x, name)(y)
        return result is x, x

    same(program)


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_in_place_keeps_dtype_and_history(name):
    def program(t):
        ints = t.tensor([1, 2, 3])
        getattr(ints, name)(t.tensor([2.5, 2.0, 1.0]))
        leaf = t.tensor([1.0, 2.0], requires_grad=True)
        x = leaf * 2
        getattr(x, name)(t.tensor([2.0, 1.0], requires_grad=True))
        x.sum().backward()
        return ints, x, leaf.grad, x._version

    same(program)


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_in_place_errors(name):
    same(lambda t: getattr(t.tensor([1.0, 2.0], requires_grad=True), name)(1.0))  # a leaf
    same(lambda t: getattr(t.ones(2), name)(t.ones(3, 2)))  # self cannot grow


@pytest.mark.parametrize("program", [
    lambda t: t.tensor([True, False, True]).logical_and_(t.tensor([True, True, False])),
    lambda t: t.tensor([1.0, 0.0, 2.0]).logical_or_(t.tensor([0.0, 0.0, 1.0])),
    lambda t: t.tensor([1.0, 0.0, -2.0]).logical_not_(),
    lambda t: t.tensor([1, 0, 5]).logical_not_(),
    lambda t: t.tensor([5, 3, 12]).bitwise_and_(t.tensor([1, 2, 4])),
    lambda t: t.tensor([5, 3, 12]).bitwise_or_(t.tensor([1, 2, 4])),
    lambda t: t.tensor([5, 3, 12]).bitwise_xor_(t.tensor([1, 2, 4])),
    lambda t: t.tensor([5, 3, 12]).bitwise_not_(),
    lambda t: t.tensor([True, False]).bitwise_not_(),
    lambda t: t.tensor([5, 3, 12]).bitwise_and_(3),
    lambda t: t.ones(2).bitwise_and_(t.ones(2)),
    lambda t: t.ones(2).bitwise_not_(),
    lambda t: t.ones(2).bitwise_not(),
])
def test_logical_and_bitwise_in_place(program):
    same(lambda t: (program(t),))


def test_addmm_in_place():
    same(lambda t: t.ones(2, 3).addmm_(t.ones(2, 4), t.ones(4, 3), beta=2, alpha=0.5))

    def build(t):
        bias = t.tensor([[0.5, -1.0, 2.0], [1.0, 1.0, 0.0]], requires_grad=True)
        a = t.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
        b = t.tensor([[0.5, 1.0, -1.5], [2.0, 0.0, 1.0]], requires_grad=True)
        out = bias * 1
        out.addmm_(a, b, beta=0.5, alpha=2)
        return out, (bias, a, b)

    grads(build)
    same(lambda t: t.ones(2, 3).addmm_(t.ones(2, 4), t.ones(5, 3)))


def test_index_add_and_scatter_add_in_place():
    same(lambda t: t.zeros(3, 2).index_add_(0, t.tensor([0, 2, 0]), t.ones(3, 2), alpha=3))
    same(lambda t: t.zeros(3, 2).scatter_add_(0, t.tensor([[0, 2]]), t.ones(1, 2)))

    def build(t):
        base = t.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        source = t.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
        out = base * 1
        out.index_add_(0, t.tensor([2, 0]), source, alpha=2)
        out.scatter_add_(1, t.tensor([[1], [0], [1]]), base)
        return out, (base, source)

    grads(build)
    same(lambda t: t.zeros(3, 2).index_add_(0, t.tensor([0, 5]), t.ones(2, 2)))
    same(lambda t: t.zeros(3, 2).index_add(0, t.tensor([0, -1]), t.ones(2, 2)))


@pytest.mark.parametrize("name", ["acosh_", "asinh_", "atanh_"])
def test_inverse_hyperbolic_in_place(name):
    values = {"acosh_": [1.5, 2.0, 3.0]}.get(name, [-0.5, 0.0, 0.25])
    same(lambda t: getattr(t.tensor(values), name)())
    same(lambda t: getattr(t, name)(t.tensor(values, dtype=t.float64)))

    def program(t):  # torch has no derivative for these: its node raises in backward
        x = t.tensor(values, requires_grad=True) * 1
        getattr(x, name)()
        name_of_node = x.grad_fn.name()
        x.sum().backward()
        return name_of_node

    same(program)


def test_xlogy_in_place_function():
    same(lambda t: t.xlogy_(t.tensor([0.0, 1.5, 2.0]), 3))
    same(lambda t: t.tensor([0.0, 1.5, 2.0]).xlogy_(t.tensor([1.0, 0.5, 2.0])))
