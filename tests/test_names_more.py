"""torch names issue 28 still lacked, each against torch 2.13 (tests/names_oracle.py): the
`*_copy` functions, sym_* on Python numbers, the deprecated linear algebra's errors, and the
other functions of the torch namespace."""

from __future__ import annotations

import pytest

from tests.names_oracle import same

# -- the *_copy functions -------------------------------------------------------------------

COPIES = {
    "alias_copy": lambda t, x: t.alias_copy(x),
    "diagonal_copy": lambda t, x: t.diagonal_copy(x, 1, 2, 0),
    "diagonal_copy_default": lambda t, x: t.diagonal_copy(x),
    "expand_copy": lambda t, x: t.expand_copy(x, (2, 2, 3, 4)),
    "permute_copy": lambda t, x: t.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda t, x: t.select_copy(x, 1, -1),
    "slice_copy": lambda t, x: t.slice_copy(x, 2, 1, None, 2),
    "slice_copy_default": lambda t, x: t.slice_copy(x),
    "squeeze_copy": lambda t, x: t.squeeze_copy(x.unsqueeze(1)),
    "squeeze_copy_dim": lambda t, x: t.squeeze_copy(x.unsqueeze(1), 1),
    "squeeze_copy_dims": lambda t, x: t.squeeze_copy(x.unsqueeze(1), (0, 1)),
    "t_copy": lambda t, x: t.t_copy(x[0]),
    "transpose_copy": lambda t, x: t.transpose_copy(x, 0, 2),
    "unfold_copy": lambda t, x: t.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda t, x: t.unsqueeze_copy(x, -1),
    "view_copy": lambda t, x: t.view_copy(x, (6, -1)),
    "split_copy": lambda t, x: t.split_copy(x, 3, 2),
    "split_with_sizes_copy": lambda t, x: t.split_with_sizes_copy(x, [1, 3], 2),
    "unbind_copy": lambda t, x: t.unbind_copy(x, 1),
}


@pytest.mark.parametrize("name", COPIES)
def test_copy_values_node_and_gradient(name):
    def program(t):
        x = t.arange(24.0).reshape(2, 3, 4).requires_grad_()
        y = COPIES[name](t, x)
        parts = y if isinstance(y, tuple) else (y,)
        weights = [t.arange(float(p.numel())).reshape(p.shape) for p in parts]
        total = sum((p * w).sum() for p, w in zip(parts, weights, strict=True))
        total.backward()
        fresh = [p.is_contiguous() and p.data_ptr() != x.data_ptr() for p in parts]
        return y, x.grad, fresh, [p.output_nr for p in parts]

    same(program)


@pytest.mark.parametrize("name", COPIES)
def test_copy_is_not_a_view(name):
    def program(t):
        x = t.arange(24.0).reshape(2, 3, 4)
        y = COPIES[name](t, x)
        parts = y if isinstance(y, tuple) else (y,)
        for p in parts:
            p.fill_(-1)
        return x, [p._base is None for p in parts]

    same(program)


def test_copies_under_no_grad_and_of_constants():
    def program(t):
        x = t.ones(2, 3, requires_grad=True)
        with t.no_grad():
            a = t.t_copy(x)
        b = t.permute_copy(t.ones(2, 3), (1, 0))
        return a, b, t.unbind_copy(t.ones(2, 2, dtype=t.int64)), t.split_copy(x.detach(), 1)

    same(program)


def test_copy_out_and_second_order():
    def program(t):
        x = t.arange(6.0).reshape(2, 3)
        out = t.empty(0)
        result = t.t_copy(x, out=out)
        leaf = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = t.unsqueeze_copy(leaf * leaf, 0)
        (g,) = t.autograd.grad(y.sum(), leaf, create_graph=True)
        (gg,) = t.autograd.grad(g.sum(), leaf)
        return result is out, out, g, gg

    same(program)


def test_copy_forward_mode():
    def program(t):
        ad = t.autograd.forward_ad
        with ad.dual_level():
            x = ad.make_dual(t.arange(6.0).reshape(2, 3), t.ones(2, 3) * 2)
            y = t.transpose_copy(x, 0, 1)
            return ad.unpack_dual(y).tangent

    import torch

    program(torch)  # torch's first dual tensor imports modules that warn: once, before
    same(program)


def test_copy_out_of_a_tensor_that_requires_grad():
    def program(t):
        x = t.ones(2, 3, requires_grad=True)
        out = t.empty(0)
        result = t.t_copy(x, out=out)
        outcome = [result is out, out, out.is_leaf]
        try:
            out.sum().backward()
        except RuntimeError as error:
            outcome.append(str(error))
        return outcome

    same(program)


def test_detach_copy():
    def program(t):
        x = t.ones(2, requires_grad=True)
        y = t.detach_copy(x * 2)
        outcome = [y, y.grad_fn.name(), y._base is None]
        try:
            y.sum().backward()
        except RuntimeError as error:
            outcome.append(str(error))
        with t.no_grad():
            outcome.append(t.detach_copy(x))
        return outcome

    same(program)


ERRORS = {
    "slice_step": lambda t, x: t.slice_copy(x, 2, 0, 10, 0),
    "select_range": lambda t, x: t.select_copy(x, 0, 5),
    "t_3d": lambda t, x: t.t_copy(x),
    "transpose_dim": lambda t, x: t.transpose_copy(x, 0, 3),
    "view_size": lambda t, x: t.view_copy(x, (5, 5)),
    "expand_sizes": lambda t, x: t.expand_copy(x, (3,)),
    "diagonal_same": lambda t, x: t.diagonal_copy(x, 0, 0, 0),
    "indices": lambda t, x: t.indices_copy(x),
    "values": lambda t, x: t.values_copy(x),
    "out_bad": lambda t, x: t.t_copy(x[0], out=t.zeros(4, 3, dtype=t.int64)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_copy_errors(name):
    same(lambda t: ERRORS[name](t, t.arange(24.0).reshape(2, 3, 4)))


DTYPE_VIEWS = {
    "same_size": lambda t, x: t.view_copy(x, t.int32),
    "same_size_strided": lambda t, x: t.view_copy(x.t(), t.int32),
    "smaller": lambda t, x: t.view_copy(x, t.uint8),
    "larger": lambda t, x: t.view_copy(x.reshape(3, 2), t.float64),
    "larger_odd": lambda t, x: t.view_copy(x, t.float64),
    "scalar": lambda t, x: t.view_copy(x[0, 0], t.float64),
    "strided_smaller": lambda t, x: t.view_copy(x.reshape(3, 2).t(), t.float16),
    "no_graph": lambda t, x: t.view_copy(x.requires_grad_(), t.float32),
}


@pytest.mark.parametrize("name", DTYPE_VIEWS)
def test_view_copy_to_a_dtype(name):
    same(lambda t: DTYPE_VIEWS[name](t, t.arange(6.0).reshape(2, 3)))
