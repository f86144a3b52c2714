"""torch.as_strided and its family against torch: views by storage geometry that alias
their base (writes reach it, the version counter is shared), the storage offset a view
starts from, torch's errors for geometries out of bounds, and gradients (first order,
second order, forward mode) where the view repeats elements or the input is itself a
strided or expanded view."""

from __future__ import annotations

import pytest

from tests.oracle import close, same


def test_a_view_aliases_its_base_and_shares_its_version() -> None:
    def program(lib):
        x = lib.arange(10.0)
        v = x.as_strided((2, 3), (1, 2), 1)
        v.mul_(-1)
        w = lib.as_strided(x, size=(3,), stride=(3,))
        return (v.tolist(), x.tolist(), w.tolist(), x._version, v._version, v._base is x,
                v.storage_offset(), v.stride(), v.is_contiguous())
    same(program)


def test_the_storage_offset_is_the_storage_s_not_the_view_s() -> None:
    def program(lib):
        x = lib.arange(12.0)
        y = x[2:].view(2, 5)
        return (y.as_strided((2,), (1,)).tolist(), y.as_strided((2,), (1,), 0).tolist(),
                y.as_strided((3,), (4,)).storage_offset(),
                y.t().as_strided((2, 2), (1, 5)).tolist(),
                x.unfold(0, 3, 2)[1:].as_strided((2,), (1,)).tolist(),
                x[2:].unfold(0, 3, 2).storage_offset(),
                x[3:].expand(2, 9).as_strided((3,), (1,)).tolist())
    same(program)


def test_an_empty_or_zero_dim_geometry() -> None:
    def program(lib):
        x = lib.arange(10.0)
        return (x.as_strided((), (), 9).tolist(), x.as_strided((3,), (0,), 9).tolist(),
                list(x.as_strided((0, 5), (100, 100), 100).shape),
                list(lib.empty(0).as_strided((0,), (1,)).shape))
    same(program)


@pytest.mark.parametrize("size, stride, offset", [
    ((20,), (1,), None), ((2,), (1,), 11), ((), (), 10), ((2, 3), (1,), None),
    ((2, -3), (-1, 1), None), ((30,), (-1,), None), ((2,), (1,), -1), ((-2,), (1,), -1),
    ((-2,), (1,), 20), ((2, 0), (1, 1), -1), ((5,), (2,), 1),
])
def test_torch_s_errors_for_a_geometry_that_does_not_fit(size, stride, offset) -> None:
    def program(lib):
        x = lib.arange(10.0)
        return x.as_strided(size, stride, offset).tolist()
    same(program)


def test_an_expanded_base_has_the_storage_of_what_it_expands() -> None:
    def program(lib):
        b = lib.tensor([1.0, 2.0]).expand(3, 2)
        return b.as_strided((2,), (1,)).tolist(), b.as_strided((3,), (1,)).tolist()
    same(program)


def test_the_gradient_adds_up_where_the_view_repeats_elements() -> None:
    def program(lib):
        x = lib.arange(1.0, 11.0, requires_grad=True)
        y = x * 2
        v = y.as_strided((3, 4), (2, 1), 1)
        (v * lib.arange(12.0).view(3, 4)).sum().backward()
        return v.grad_fn.name(), x.grad.tolist()
    same(program)


def test_the_gradient_of_a_strided_input() -> None:
    def program(lib):
        x = lib.arange(12.0, requires_grad=True)
        y = (x * 1).view(3, 4).t()[1:]
        v = y.as_strided((2, 3), (3, 1), 2)
        (v * lib.arange(6.0).view(2, 3)).sum().backward()
        return x.grad.tolist()
    same(program)


def test_the_gradient_of_an_expanded_input_is_shared_out() -> None:
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.expand(4, 3)
        v = y.as_strided((2, 2), (1, 1), 1)
        (v * lib.tensor([[1.0, 10.0], [100.0, 1000.0]])).sum().backward()
        return x.grad.tolist()
    same(program)


def test_second_order_and_forward_mode() -> None:
    def program(lib):
        x = lib.arange(1.0, 9.0, dtype=lib.float64, requires_grad=True)
        v = (x * x).as_strided((3, 3), (2, 1), 1)
        (g,) = lib.autograd.grad((v * v).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x.detach(), lib.ones(8, dtype=lib.float64))
            out = (dual * 3).as_strided((2, 2), (1, 3), 2)
            tangent = lib.autograd.forward_ad.unpack_dual(out).tangent
        return g.tolist(), gg.tolist(), tangent.tolist()
    close(program)


def test_as_strided_copy_is_fresh_memory_with_the_view_s_gradient() -> None:
    def program(lib):
        x = lib.arange(10.0, requires_grad=True)
        c = lib.as_strided_copy(x * 1, (2, 2), (1, 2), 2)
        c.mul(lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        out = lib.empty(2)
        lib.as_strided_copy(x.detach(), (2,), (3,), 1, out=out)
        return (c.tolist(), c.grad_fn.name(), c._base is None, c.is_contiguous(), x.grad.tolist(),
                out.tolist())
    same(program)


def test_view_as_real_copy_and_view_as_complex_copy() -> None:
    def program(lib):
        z = lib.arange(6.0, dtype=lib.float64).view(3, 2)
        c = lib.view_as_complex_copy(z)
        w = c.detach().requires_grad_()
        r = lib.view_as_real_copy(w)
        (r * lib.arange(6.0, dtype=lib.float64).view(3, 2)).sum().backward()
        return (c.tolist(), c._base is None, str(c.dtype), r.grad_fn.name(), r._base is None,
                w.grad.tolist())
    same(program)


@pytest.mark.parametrize("name, make", [
    ("view_as_complex_copy", lambda lib: lib.ones(3)),
    ("view_as_real_copy", lambda lib: lib.ones(3)),
    ("view_as_complex_copy", lambda lib: lib.ones(3, 2, requires_grad=True)),
])
def test_view_as_copies_refuse_as_torch(name, make) -> None:
    def program(lib):
        return getattr(lib, name)(make(lib)).tolist()
    same(program)


def test_as_strided_scatter_writes_into_a_copy_laid_out_as_torch_s_clone() -> None:
    def program(lib):
        y = lib.arange(10.0)
        src = lib.arange(3.0) + 100
        transposed = lib.arange(12.0).view(3, 4).t()
        expanded = lib.tensor([1.0, 2.0]).expand(3, 2)
        results = [lib.as_strided_scatter(y[2:], src, (3,), (1,)),
                   lib.as_strided_scatter(transposed, src, (3,), (1,)),
                   lib.as_strided_scatter(expanded, src, (3,), (1,), 3),
                   y.as_strided_scatter(lib.ones(3, dtype=lib.int64), (3,), (1,), 1),
                   lib.as_strided_scatter(y, lib.tensor(7.0), (), (), 9),
                   lib.as_strided_scatter(y[2:], -src, (3,), (1,), 0),
                   lib.as_strided_scatter(y[2:5], -src, (3,), (1,), 7),
                   lib.as_strided_scatter(transposed.t()[:, 1:3], -src[:2], (2,), (1,))]
        return ([r.tolist() for r in results], [r.stride() for r in results],
                [r.storage_offset() for r in results], y.tolist())
    same(program)


@pytest.mark.parametrize("src_size, size, stride, offset", [
    ((3,), (2,), (1,), None), ((3,), (3,), (1,), 9), ((3,), (3,), (0,), 1),
    ((2, 2), (2, 2), (-1, 1), None),
])
def test_as_strided_scatter_errors(src_size, size, stride, offset) -> None:
    def program(lib):
        return lib.as_strided_scatter(lib.arange(10.0), lib.ones(src_size), size, stride,
                                      offset).tolist()
    same(program)


def test_as_strided_scatter_gradients_are_torch_s() -> None:
    """torch's gradient for self is grad inside the written region (not the derivative,
    which is zero there: torch's own gradcheck of the op fails); gradgen gives torch's."""
    def program(lib):
        a = lib.arange(9.0).view(3, 3).requires_grad_()
        s = (lib.arange(4.0) + 100).view(2, 2).requires_grad_()
        r = lib.as_strided_scatter(a, s, (2, 2), (1, 2), 1)
        (r * (lib.arange(9.0).view(3, 3) + 1)).sum().backward()
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(a.detach(), lib.ones(3, 3))
            out = lib.as_strided_scatter(dual, s.detach(), (2,), (4,))
            tangent = lib.autograd.forward_ad.unpack_dual(out).tangent
        return r.tolist(), r.grad_fn.name(), a.grad.tolist(), s.grad.tolist(), tangent.tolist()
    same(program)


def test_as_strided_in_place_makes_self_the_view() -> None:
    def program(lib):
        x = lib.arange(1.0, 11.0, requires_grad=True)
        y = x * 1
        w = y[2:]
        returned = w.as_strided_((2, 3), (1, 2), 1)
        facts = (returned is w, list(w.shape), w.stride(), w.storage_offset(), w.grad_fn.name(),
                 y.grad_fn.name(), w._version, y._version, w._base is y)
        (w * lib.arange(6.0).view(2, 3)).sum().backward()
        z = lib.arange(10.0)
        z.as_strided_((3,), (3,), 1)
        z.add_(100)
        a = lib.arange(1.0, 7.0, requires_grad=True)
        b = a * 2
        b.as_strided_((2, 2), (1, 1))
        (b * b).sum().backward()
        return facts, x.grad.tolist(), z.tolist(), z._version, a.grad.tolist()
    same(program)


def test_as_strided_in_place_refusals_leave_the_tensor_unchanged() -> None:
    def program(lib):
        outcomes = []
        for make, size in ((lambda: lib.arange(1.0, 11.0, requires_grad=True), (2,)),
                           (lambda: lib.arange(10.0), (20,))):
            x = make()
            try:
                x.as_strided_(size, (1,))
            except RuntimeError as error:
                outcomes.append((str(error), list(x.shape), x.stride(), x._version))
        return outcomes
    same(program)


def test_as_strided_in_place_forward_mode() -> None:
    def program(lib):
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(lib.arange(6.0), lib.arange(6.0) * 10)
            e = dual * 1
            e.as_strided_((2, 2), (2, 1), 1)
            return forward_ad.unpack_dual(e).tangent.tolist(), e.tolist()
    same(program)


def test_a_copy_prints_the_node_torch_prints() -> None:
    def program(lib):
        x = lib.arange(6.0, requires_grad=True)
        copies = [lib.as_strided_copy(x, (2, 2), (1, 2)), lib.t_copy(x.view(2, 3)),
                  lib.view_copy(x, (3, 2))]
        names = [type(c.grad_fn).__name__ for c in copies]
        return [repr(c).split("grad_fn=")[1] for c in copies], names
    same(program)


@pytest.mark.parametrize("make_view", [
    lambda lib, y: y[:3].expand(2, 3),  # repeats elements: its gradient adds up
    lambda lib, y: y.as_strided((3, 3), (2, 1), 1),  # overlaps itself
    lambda lib, y: y.view(3, 4).t()[1:],
    lambda lib, y: y[::3],
])
def test_a_view_regenerated_after_its_base_changed_in_place(make_view) -> None:
    """The view's grad_fn becomes AsStridedBackward0 through the base (torch's regenerated
    view), whatever the view's geometry; first and second order."""
    def program(lib):
        x = lib.arange(1.0, 13.0, dtype=lib.float64, requires_grad=True)
        y = x * 1
        v = make_view(lib, y)
        y.mul_(2)
        weights = lib.arange(v.numel(), dtype=lib.float64).view(v.shape)
        loss = (v * v * weights).sum()
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return v.grad_fn.name(), g.tolist(), gg.tolist()
    same(program)
