"""`x[index] = value` against PyTorch: basic indexing writes through a view (copy_),
integer and boolean arrays through index_put_ (IndexPutBackward0 on a graph)."""

from __future__ import annotations

import pytest

from tests.oracle import same


def test_basic_and_advanced_writes() -> None:
    def program(lib):
        x = lib.zeros(3, 4)
        x[0] = 1.0
        x[1, 2] = 5
        x[:, 3] = lib.tensor([7.0, 8.0, 9.0])
        x[x > 6] = -1.0
        x[[0, 2], 1] = 2.0
        x[..., 0] = lib.tensor(4.0)
        return x.tolist(), x._version
    same(program)


def test_index_put_is_recorded_on_a_graph() -> None:
    def program(lib):
        w = lib.ones(3, requires_grad=True)
        y = w * 2
        y[lib.tensor([True, False, True])] = 0.0
        y.sum().backward()
        return y.grad_fn.name(), y.tolist(), w.grad.tolist()
    same(program)


@pytest.mark.parametrize("index", [0, slice(0, 2), (slice(None), 1)], ids=str)
def test_a_leaf_that_requires_grad_refuses_a_write(index) -> None:
    def program(lib):
        w = lib.ones(2, 3, requires_grad=True)
        w[index] = 3.0
    same(program)


def test_no_grad_writes_into_a_leaf() -> None:
    def program(lib):
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            w[0] = 3.0
            w[lib.tensor([1])] = 2.0
        return w.tolist(), w._version, w.requires_grad
    same(program)


def test_a_value_of_the_wrong_shape() -> None:
    def program(lib):
        x = lib.zeros(3, 4)
        x[0] = lib.ones(5)
    same(program)


def test_a_value_with_leading_ones_and_a_broadcast_value() -> None:
    def program(lib):
        x = lib.zeros(3, 4)
        x[0] = lib.ones(1, 4)  # the leading 1 is dropped, as numpy does
        x[1:] = lib.ones(1, 1, 4) * 2  # and the rest expanded to the target
        x[:, 1] = 5.0
        return x.tolist()
    same(program)


def test_gradient_of_a_broadcast_value() -> None:
    def program(lib):
        v = lib.ones(1, 4, requires_grad=True)
        x = lib.zeros(3, 4) * 1
        x[1:] = v * 2
        (x * lib.arange(12.0).reshape(3, 4)).sum().backward()
        return [x.grad_fn.name(), v.grad.tolist()]
    same(program)
