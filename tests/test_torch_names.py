"""torch.* names gradgen lacked (issue 28, part 5), each against torch: values, dtypes,
grad_fn names, gradients and errors."""

from __future__ import annotations

import pytest

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
    lambda t: t.arccos(t.ones(2), 3),
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
