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


# -- predicates, memory facts, identities of a real tensor -------------------------------------

def _tensors(t):
    return [t.tensor([[1.0, -2.0], [3.0, 4.0]]), t.tensor([1, 2], dtype=t.int64),
            t.tensor([3], dtype=t.int32), t.tensor([True]), t.tensor([7], dtype=t.uint8),
            t.tensor(2.5, dtype=t.float64), t.tensor([0.0]), t.tensor([], dtype=t.float16)]


@pytest.mark.parametrize("attribute", [
    "is_signed()", "is_complex()", "is_conj()", "is_neg()", "is_meta", "is_maia", "itemsize",
    "nbytes", "get_device()", "ndimension()", "is_inference()", "name", "dim_order()",
    "storage_offset()", "is_nonzero()", "conj()", "resolve_conj()", "resolve_neg()",
    "conj_physical()", "real", "imag", "positive()", "byte()", "ravel()", "square()", "msort()",
    "adjoint()", "H", "grad_dtype",
])
def test_tensor_attributes(attribute):
    def program(t):
        found = []
        for x in _tensors(t):
            if x.ndim == 0 and attribute in ("adjoint()", "H"):
                continue  # torch warns once a process there: tested below
            try:
                found.append(eval(f"x.{attribute}"))  # noqa: S307 - the attribute under test
            except Exception as error:  # noqa: BLE001 - compared with torch's
                found.append((type(error).__name__, str(error)))
        return found

    same(program)


@pytest.mark.parametrize("name", ["is_signed", "is_complex", "is_conj", "is_neg", "is_nonzero",
                                  "is_inference", "get_device", "conj", "resolve_conj",
                                  "resolve_neg", "conj_physical", "positive", "real", "imag",
                                  "ravel", "square", "msort", "adjoint"])
def test_torch_functions_of_attributes(name):
    def program(t):
        found = []
        for x in [*_tensors(t), 3, None]:
            if name == "adjoint" and getattr(x, "ndim", 1) == 0:
                continue  # torch warns once a process there
            try:
                found.append(getattr(t, name)(x))
            except Exception as error:  # noqa: BLE001 - compared with torch's
                found.append((type(error).__name__, str(error)))
        return found

    same(program)


def test_identities_are_the_tensor_itself():
    def program(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        return [f(x) is x for f in (t.conj, t.resolve_conj, t.resolve_neg, t.conj_physical,
                                     t.positive, t.real, lambda v: v.real, lambda v: v.conj())]

    same(program)


def test_is_same_size():
    same(lambda t: t.ones(2, 3).is_same_size(t.zeros(2, 3, dtype=t.int64)))
    same(lambda t: t.is_same_size(t.ones(2, 3), t.ones(3, 2)))
    same(lambda t: t.ones(2).is_same_size(3))
    same(lambda t: t.is_same_size(t.ones(2), None))


def test_storage_offset_and_data_ptr_of_views():
    def program(t):
        x = t.arange(12.0).reshape(3, 4)
        views = [x, x[1], x[1:, 2:], x.t(), x[:, 1], x.view(-1)[5:]]
        pointer = x.data_ptr()
        return [(v.storage_offset(), v.data_ptr() - pointer, v.const_data_ptr() == v.data_ptr())
                for v in views]

    same(program)


def test_dim_order_of_strided_views():
    def program(t):
        x = t.ones(2, 3, 4)
        return [x.dim_order(), x.permute(2, 0, 1).dim_order(), x.transpose(0, 1).dim_order(),
                t.ones(1, 3).t().dim_order(), t.ones(3, 1).dim_order(), t.ones(()).dim_order(),
                x.expand(2, 2, 3, 4).dim_order() if False else None,
                t.ones(4, 1, 3).permute(1, 2, 0).dim_order()]

    same(program)


def test_square_and_ravel_gradients():
    def build(t):
        x = t.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=t.float64, requires_grad=True)
        return t.square(x) + x.t().ravel().reshape(2, 2) + x.square(), (x,)

    grads(build)
    same(lambda t: (t.square(t.tensor([1.0, 2.0], requires_grad=True)).grad_fn.name(),
                    t.ravel(t.ones(2, 3, requires_grad=True).t()).grad_fn.name(),
                    t.msort(t.ones(3, requires_grad=True)).grad_fn.name(),
                    t.ones(2, 3, requires_grad=True).H.grad_fn.name()))
    same(lambda t: t.tensor([1.0, -3.0]).square_())
    same(lambda t: t.tensor([1.0, -3.0], requires_grad=True).square_())
    same(lambda t: t.tensor([1.0, -3.0], requires_grad=True).conj_physical_())
    same(lambda t: t.ones(2, 3, 4).H)


def test_msort():
    same(lambda t: t.msort(t.tensor([[3, 1, 2], [0, 5, -1], [2, 2, 9]])))

    def build(t):
        x = t.tensor([[3.0, 1.0], [0.5, 5.0], [2.0, -2.0]], dtype=t.float64,
                     requires_grad=True)
        return x.msort() * t.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=t.float64), (x,)

    grads(build)


def test_volatile_warns():
    same(lambda t: t.ones(2).volatile)


def test_grad_dtype_of_a_non_leaf():
    same(lambda t: (t.ones(2, requires_grad=True) * 2).grad_dtype)


# -- Python callbacks, as_subclass -------------------------------------------------------------

def test_apply_map_map2():
    def program(t):
        a = t.tensor([1.0, 2.0, 3.0])
        b = t.tensor([1, 2, 5])
        c = t.ones(2, 3)
        return (a.apply_(lambda v: v * 2 + 0.5) is a, a, b.apply_(lambda v: v * 1.7), b,
                c.map_(t.tensor([1.0, 2.0, 3.0]), lambda p, q: p * q - 1),
                t.tensor([1.0, 2.0]).map2_(t.tensor([3.0, 4.0]), t.tensor([5.0, 6.0]),
                                            lambda p, q, r: p + q * r),
                t.tensor([True, False]).apply_(lambda v: not v))

    same(program)


@pytest.mark.parametrize("program", [
    lambda t: t.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda t: t.ones(2, requires_grad=True).map_(t.ones(2), lambda p, q: p),
    lambda t: t.ones(3).map_(t.ones(2, 3), lambda p, q: p),
    lambda t: t.ones(3).map_(t.ones(3, dtype=t.int64), lambda p, q: p),
    lambda t: t.ones(3).map2_(t.ones(3), t.ones(3, dtype=t.float64), lambda p, q, r: p),
    lambda t: t.ones(3).map2_(t.ones(3, dtype=t.float64), t.ones(3), lambda p, q, r: p),
    lambda t: t.ones(3).map2_(3, t.ones(3), lambda p, q, r: p),
    lambda t: t.ones(3).map_(3, lambda p, q: p),
])
def test_callback_errors(program):
    same(program)


def test_apply_under_no_grad():
    def program(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        with t.no_grad():
            x.apply_(lambda v: v + 1)
        return x

    same(program)


def test_as_subclass():
    def program(t):
        class Marked(t.Tensor):
            pass

        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = x.as_subclass(Marked)
        z = (y * 3).sum()
        z.backward()
        x.data[0] = 5.0  # the same data
        return (type(y).__name__, isinstance(y, t.Tensor), y.grad_fn.name(), y.is_leaf,
                y.requires_grad, x.grad, y)

    same(program)
    same(lambda t: t.ones(2).as_subclass(int))


@pytest.mark.parametrize("name", ["logical_not_", "bitwise_not_", "logical_and_", "logical_or_"])
def test_in_place_without_derivative_writes_into_a_leaf(name):
    def program(t):
        x = t.tensor([1.0, 0.0], requires_grad=True) if "logical" in name else \
            t.tensor([1, 0])
        args = () if name.endswith("not_") else (t.tensor([1.0, 1.0]),)
        getattr(x, name)(*args)
        y = t.tensor([1.0, 0.0], requires_grad=True) * 2
        if "logical" in name:
            getattr(y, name)(*args)
        return x, x.is_leaf, y, y.grad_fn.name()

    same(program)


# -- fill_diagonal_, new, resize, post-accumulate hooks ----------------------------------------

@pytest.mark.parametrize("program", [
    lambda t: t.zeros(3, 3).fill_diagonal_(2),
    lambda t: t.zeros(5, 3).fill_diagonal_(2),
    lambda t: t.zeros(7, 3).fill_diagonal_(2, wrap=True),
    lambda t: t.zeros(3, 5).fill_diagonal_(2, wrap=True),
    lambda t: t.zeros(2, 2, 2).fill_diagonal_(1),
    lambda t: t.zeros(3, 3, dtype=t.int64).fill_diagonal_(1.7),
    lambda t: t.zeros(4, 3).t().fill_diagonal_(5),
    lambda t: t.zeros(2, 3, 2).fill_diagonal_(1),
    lambda t: t.zeros(3).fill_diagonal_(1),
    lambda t: t.zeros(2, 2, requires_grad=True).fill_diagonal_(1),
])
def test_fill_diagonal(program):
    same(program)


def test_new():
    same(lambda t: t.ones(2, dtype=t.int32).new([1, 2]))
    same(lambda t: t.ones(2, dtype=t.float64).new((1.5, 2)))
    same(lambda t: t.ones(2, dtype=t.int32).new(2, 3).shape)
    same(lambda t: (t.ones(2, dtype=t.int32).new().dtype, t.ones(2).new().shape))
    same(lambda t: t.ones(2, dtype=t.int64).new(t.Size([2, 1])).shape)
    same(lambda t: t.ones(2, dtype=t.int32).new(2, 3).dtype)


def test_resize():
    same(lambda t: t.arange(6.0).resize_(2, 3))
    same(lambda t: t.arange(6.0).resize_((4,)))
    same(lambda t: t.arange(6.0).resize_as_(t.ones(3, 2)))
    same(lambda t: t.arange(6.0, requires_grad=True).resize_(2, 3))
    same(lambda t: t.arange(6.0).resize(2, 3))
    same(lambda t: (t.arange(6.0, requires_grad=True) * 1).resize(3, 2).shape)

    def program(t):
        x = t.arange(6.0)
        version = x._version
        x.resize_(3, 2)
        return x._version > version, x.shape

    same(program)


def test_new_empty_strided_nonzero_static_unsafe_chunk():
    same(lambda t: (t.ones(2, 2).new_empty_strided((2, 3), (1, 2)).stride(),
                    t.ones(2, dtype=t.int64).new_empty_strided((2,), (1,)).dtype))
    same(lambda t: t.tensor([0, 3, 0, 1]).nonzero_static(size=3))
    same(lambda t: [c.shape for c in t.ones(5, 2).unsafe_chunk(2)])
    same(lambda t: t.unsafe_chunk(t.arange(5.0), 3))
    same(lambda t: t.unsafe_split(t.arange(5.0), 2))
    same(lambda t: t.arange(6.0).reshape(2, 3).unsafe_split(1, 1))


def test_post_accumulate_grad_hook():
    def program(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        handle = x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        (x * 3).sum().backward()
        (x * x).sum().backward()
        handle.remove()
        (x * 3).sum().backward()
        return seen, x.grad, type(handle).__name__

    same(program)
    same(lambda t: (t.ones(2, requires_grad=True) * 1).register_post_accumulate_grad_hook(print))
    same(lambda t: t.ones(2).register_post_accumulate_grad_hook(print))

    def in_backward_step(t):  # the optimizer-in-backward pattern of torch's tutorials
        w = t.tensor([1.0, -2.0], requires_grad=True)

        def step(p):
            with t.no_grad():
                p.add_(p.grad, alpha=-0.1)
            p.grad = None

        w.register_post_accumulate_grad_hook(step)
        for _ in range(3):
            (w * w).sum().backward()
        return w, w.grad

    same(in_backward_step)


def test_function_forms_of_methods():
    def program(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        detached = t.detach(y)
        t.detach_(y)
        z = t.zeros(3)
        t.index_put_(z, (t.tensor([0, 2]),), t.tensor(5.0))
        w = t.zeros(3)
        t.index_put_(w, (t.tensor([1, 1]),), t.tensor(2.0), accumulate=True)
        return detached, detached.requires_grad, y.grad_fn, y.requires_grad, z, w, \
            t.resize_as_(t.arange(4.0), t.ones(2, 2))

    same(program)
    same(lambda t: t.detach("a"))
