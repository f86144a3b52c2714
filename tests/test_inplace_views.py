"""In-place ops through views, against PyTorch: the base's history becomes CopySlices
around the op's node, and views reach their gradient through the base
(AsStridedBackward0), on the raw and on the Tensor form of the backward."""

from __future__ import annotations

import pytest

import runtime
from runtime import engine
from tests.oracle import same


def both_paths(program) -> None:
    """Compare with torch on the raw backward, then on the Tensor form."""
    same(program)
    with engine.tensor_backward():
        same(program)


def test_an_op_through_a_row_view() -> None:
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        y = x * 1
        v = y[0]
        v.mul_(2)
        names = (y.grad_fn.name(), v.grad_fn.name(), repr(y.grad_fn).split(" object")[0])
        (y * y).sum().backward()
        return names, x.grad.tolist()
    both_paths(program)


def test_setitem_on_a_non_leaf_with_a_value_that_requires_grad() -> None:
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([10.0], requires_grad=True)
        z = x * 2
        z[1:2] = w * 3
        z.sum().backward()
        return z.grad_fn.name(), x.grad.tolist(), w.grad.tolist()
    both_paths(program)


def test_a_view_taken_before_its_base_changes() -> None:
    def program(lib):
        a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = a * 2
        c = b[2:]
        b.add_(1)
        loss = (c * c).sum()
        loss.backward()
        return c.grad_fn.name(), c.tolist(), a.grad.tolist()
    both_paths(program)


def test_a_base_that_did_not_require_grad() -> None:
    def program(lib):
        base = lib.zeros(2, 3)
        p = lib.ones(3, requires_grad=True)
        base[0].add_(p)
        (base * 2).sum().backward()
        return base.grad_fn.name(), base.requires_grad, base.is_leaf, p.grad.tolist()
    both_paths(program)


def test_augmented_assignment_on_a_column() -> None:
    def program(lib):
        q = lib.ones(2, 2, requires_grad=True)
        r = q + 0
        r[:, 0] += 5
        (r ** 2).sum().backward()
        return q.grad.tolist(), r.tolist()
    both_paths(program)


def test_a_transposed_view() -> None:
    def program(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        y = x.exp()
        z = y * 1
        z.t()[1].mul_(3)
        z.sum().backward()
        return [round(v, 5) for row in x.grad.tolist() for v in row]
    both_paths(program)


def test_create_graph_through_copy_slices_says_it_cannot() -> None:
    x = runtime.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[0].mul_(3)
    message = "cannot differentiate torch::autograd::CopySlices a second time"
    with pytest.raises(RuntimeError, match=message):
        runtime.autograd.grad(y.pow(2).sum(), x, create_graph=True)
