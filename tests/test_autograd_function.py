"""torch.autograd.Function against PyTorch: the same custom Functions, written once against
either library, give the same values, gradients, node names, errors and warnings."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import runtime
from runtime import engine
from tests.oracle import observe, same


def same_outcome(program: Any) -> None:
    """What `program` returns or raises is the same with both libraries; warnings are not
    compared (torch's first forward-AD call warns about its own internals)."""
    assert observe(program, runtime)[0] == observe(program, torch)[0]


def rounded(tensor: Any, digits: int = 5) -> Any:
    """A tensor's values as Python numbers, rounded: what two libraries may compare."""
    if tensor is None:
        return None
    values = tensor.detach().tolist()
    if isinstance(values, float):
        return round(values, digits)
    return [round(v, digits) if isinstance(v, float) else rounded_list(v, digits) for v in values]


def rounded_list(values: Any, digits: int) -> Any:
    if isinstance(values, list):
        return [rounded_list(v, digits) for v in values]
    return round(values, digits) if isinstance(values, float) else values


def legendre(lib: Any) -> type:
    """The custom Function of PyTorch's "Learning PyTorch with Examples"."""

    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    return LegendrePolynomial3


@pytest.fixture(params=["arrays", "tensors"])
def backward_kind(request: pytest.FixtureRequest) -> Any:
    """Run each test with gradgen's raw backward (on arrays) and with its Tensor backward."""
    if request.param == "arrays":
        yield
    else:
        with engine.tensor_backward():
            yield


def test_legendre_polynomial(backward_kind: Any) -> None:
    def program(lib):
        P3 = legendre(lib).apply
        x = lib.linspace(-1, 1, 5, dtype=lib.float64)
        c = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        d = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        y = P3(c + d * x)
        loss = y.pow(2).sum()
        loss.backward()
        return [rounded(y), rounded(c.grad), rounded(d.grad), y.grad_fn.name(),
                type(y.grad_fn).__name__, repr(y.grad_fn).split(" object")[0],
                [None if n is None else n.name() for n, _ in y.grad_fn.next_functions],
                y.grad_fn.needs_input_grad, repr(y).split("\n")[-1][-35:]]
    same(program)


def test_the_tutorial_s_training_loop_learns_the_same() -> None:
    def program(lib):
        P3 = legendre(lib).apply
        x = lib.linspace(-3.0, 3.0, 50, dtype=lib.float64)
        y = lib.sin(x)
        a, b, c, d = (lib.full((), v, dtype=lib.float64, requires_grad=True)
                      for v in (0.0, -1.0, 0.0, 0.3))
        losses = []
        for _ in range(30):
            y_pred = a + b * P3(c + d * x)
            loss = (y_pred - y).pow(2).sum()
            losses.append(round(loss.item(), 8))
            loss.backward()
            with lib.no_grad():
                for p in (a, b, c, d):
                    p -= 5e-4 * p.grad
                    p.grad = None
        return losses, [round(p.item(), 8) for p in (a, b, c, d)]
    same(program)


def test_a_non_tensor_input_and_its_none_gradient(backward_kind: Any) -> None:
    def program(lib):
        class MulConstant(lib.autograd.Function):
            @staticmethod
            def forward(ctx, tensor, constant):
                ctx.constant = constant
                return tensor * constant

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output * ctx.constant, None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = MulConstant.apply(x, 3.0)
        y.sum().backward()
        return [rounded(y), rounded(x.grad), len(y.grad_fn.next_functions),
                y.grad_fn.needs_input_grad]
    same(program)


def test_keyword_arguments_and_defaults() -> None:
    def program(lib):
        seen = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0, y=None):
                seen.append(ctx.needs_input_grad)
                return x * k if y is None else x * k + y

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None, grad

        x = lib.ones(2, requires_grad=True)
        y = lib.zeros(2, requires_grad=True)
        out = Scale.apply(x, k=3.0, y=y)
        out.sum().backward()
        seen += [rounded(out), rounded(x.grad), rounded(y.grad),
                 len(out.grad_fn.next_functions)]
        Scale.apply(x).sum().backward()  # the extra None gradients are dropped
        seen.append(rounded(x.grad))
        return seen
    same(program)


def test_the_newer_style_with_setup_context() -> None:
    def program(lib):
        seen = []

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(x, power=3):
                seen.append(lib.is_grad_enabled())
                return x ** power

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, power = inputs
                seen.append((len(inputs), power, rounded(output), lib.is_grad_enabled()))
                ctx.save_for_backward(x)
                ctx.power = power

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return grad * ctx.power * x ** (ctx.power - 1), None

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Cube.apply(x)
        y.sum().backward()
        z = Cube.apply(x, power=2)
        seen += [rounded(y), rounded(x.grad), y.grad_fn.name(), rounded(z)]
        return seen
    same(program)


def test_forward_runs_without_grad_and_backward_with_create_graph_s_mode() -> None:
    def program(lib):
        modes = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                modes.append(("forward", lib.is_grad_enabled()))
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                modes.append(("backward", lib.is_grad_enabled()))
                return grad * 2

        x = lib.ones(2, requires_grad=True)
        Probe.apply(x).sum().backward()
        g, = lib.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
        with lib.no_grad():
            y = Probe.apply(x)
        return modes, y.requires_grad, y.grad_fn, g.requires_grad
    same(program)


def test_several_outputs_non_tensor_outputs_and_materialized_grads(backward_kind: Any) -> None:
    def program(lib):
        received = []

        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, "note", x * 3, (x * 2).long()

            @staticmethod
            def backward(ctx, ga, gnote, gb, glong):
                received.append([rounded(ga), gnote, rounded(gb), rounded(glong)])
                return ga + gb

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, note, b, whole = Split.apply(x)
        a.sum().backward()
        return [note, rounded(x.grad), a.output_nr, b.output_nr, whole.requires_grad,
                repr(whole), received]
    same(program)


def test_set_materialize_grads_false_gives_none(backward_kind: Any) -> None:
    def program(lib):
        received = []

        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x.clone(), x.clone()

            @staticmethod
            def backward(ctx, ga, gb):
                received.append([rounded(ga), rounded(gb)])
                return ga if gb is None else ga + gb

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, _ = Twice.apply(x)
        a.sum().backward()
        return received, rounded(x.grad)
    same(program)


def test_mark_non_differentiable(backward_kind: Any) -> None:
    def program(lib):
        received = []

        class MaxWithIndex(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, indices = x.max(0)
                ctx.mark_non_differentiable(indices)
                ctx.save_for_backward(x, indices)
                return values, indices

            @staticmethod
            def backward(ctx, grad_values, grad_indices):
                x, indices = ctx.saved_tensors
                received.append(rounded(grad_indices))
                return lib.zeros_like(x).index_add(0, indices.reshape(1), grad_values.reshape(1))

        x = lib.tensor([1.0, 5.0, 3.0], requires_grad=True)
        values, indices = MaxWithIndex.apply(x)
        values.backward()
        return [rounded(values), repr(indices), indices.requires_grad, values.requires_grad,
                rounded(x.grad), received]
    same(program)


def test_an_input_returned_as_it_is_becomes_a_view() -> None:
    def program(lib):
        class Same(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return grad * x

        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y = Same.apply(x)
        y.sum().backward()
        with lib.no_grad():
            z = Same.apply(x)
        w = Same.apply(lib.ones(2))
        return [y is x, y._base is x, y.grad_fn.name(), rounded(x.grad), z is x,
                z.requires_grad, w.requires_grad]
    same(program)


def test_mark_dirty(backward_kind: Any) -> None:
    def program(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        leaf = lib.ones(2, requires_grad=True)
        z = leaf * 3
        out = AddOne.apply(z)
        seen = [out is z, z._version, z.grad_fn.name(), rounded(z)]
        (out * out).sum().backward()
        seen.append(rounded(leaf.grad))
        with lib.no_grad():
            plain = lib.ones(2)
            seen.append([AddOne.apply(plain) is plain, rounded(plain)])
        return seen
    same(program)


def test_mark_dirty_on_a_view() -> None:
    def program(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        leaf = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        base = leaf * 1
        view = base[:2]
        out = Double.apply(view)
        (base * lib.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
        return [out is view, out.grad_fn.name(), base.grad_fn.name(), rounded(base),
                rounded(leaf.grad)]
    same(program)


@pytest.mark.parametrize("case", ["leaf", "view of a leaf", "two outputs from a view",
                                  "not an input", "not a tensor"])
def test_mark_dirty_errors_and_warnings(case: str) -> None:
    def program(lib):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if case == "not an input":
                    y = x.clone()
                    ctx.mark_dirty(y)
                    return y
                if case == "not a tensor":
                    ctx.mark_dirty(3)
                    return x * 1
                x.add_(1)
                ctx.mark_dirty(x)
                return (x, x * 2) if case == "two outputs from a view" else x

            @staticmethod
            def backward(ctx, *grads):
                return grads[0]

        leaf = lib.ones(4, requires_grad=True)
        target = {"leaf": leaf, "view of a leaf": leaf[:2],
                  "two outputs from a view": (leaf * 1)[:2]}.get(case, leaf)
        try:
            out = Dirty.apply(target)
        except RuntimeError as error:
            if case == "not a tensor":  # torch's message ends in the middle: compare its start
                return str(error)[:len("mark_dirty can only accept variables")]
            raise
        return out.grad_fn.name()
    same(program)


def test_saved_tensors_check_the_version() -> None:
    def program(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        x = lib.ones(2, requires_grad=True)
        y = Exp.apply(x)
        with lib.no_grad():
            y.mul_(2)
        y.sum().backward()
    same(program)


def test_a_saved_input_is_checked_too() -> None:
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return 2 * x * grad

        z = lib.ones(2, requires_grad=True) * 1
        y = Square.apply(z)
        z.add_(1)
        y.sum().backward()
    same(program)


def test_saved_tensors_are_freed_after_backward() -> None:
    def program(lib):
        P3 = legendre(lib)
        x = lib.tensor([0.5], requires_grad=True)
        y = P3.apply(x)
        saved = rounded(y.grad_fn.saved_tensors[0])
        y.backward(retain_graph=True)
        again = rounded(y.grad_fn.saved_tensors[0])
        y.backward()
        return saved, again, y.grad_fn.saved_tensors
    same(program)


def test_saving_none_an_intermediate_and_a_non_tensor() -> None:
    def program(lib):
        class Save(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, what):
                t = x * 2
                ctx.save_for_backward(t, None) if what == "ok" else ctx.save_for_backward(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                t, nothing = ctx.saved_tensors
                return grad * t, None

        x = lib.ones(2, requires_grad=True)
        y = Save.apply(x, "ok")
        saved = [rounded(t) for t in y.grad_fn.saved_tensors]
        y.sum().backward()
        result = [saved, rounded(x.grad)]
        with lib.no_grad():
            result.append(rounded(Save.apply(x, "bad")))  # nothing is saved without a graph
        Save.apply(x, "bad")
        return result
    same(program)


@pytest.mark.parametrize("returned", ["too many", "extra nones", "not none for a number",
                                      "a number", "a list", "wrong shape", "broadcastable"])
def test_what_backward_returns_is_checked(returned: str) -> None:
    def program(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, grad):
                return {"too many": (grad, None, grad), "extra nones": (grad, None, None, None),
                        "not none for a number": (grad, grad), "a number": (3, None),
                        "a list": [grad, None], "wrong shape": (grad[:1], None),
                        "broadcastable": (grad.sum(), None)}[returned]

        x = lib.ones(2, requires_grad=True)
        Bad.apply(x, 2).sum().backward()
        return rounded(x.grad)
    same(program)


@pytest.mark.parametrize("missing", ["backward", "forward", "both backward and vjp", "jvp"])
def test_what_a_function_must_define(missing: str) -> None:
    def program(lib):
        if missing == "backward":
            class F(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 1
        elif missing == "forward":
            class F(lib.autograd.Function):
                pass
        elif missing == "both backward and vjp":
            class F(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 1

                @staticmethod
                def backward(ctx, grad):
                    return grad

                @staticmethod
                def vjp(ctx, grad):
                    return grad
        else:
            class F(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x * 1

            with lib.autograd.forward_ad.dual_level():
                dual = lib.autograd.forward_ad.make_dual(lib.ones(2), lib.ones(2))
                return F.apply(dual)
        F.apply(lib.ones(2, requires_grad=True)).sum().backward()
    if missing == "jvp":
        same_outcome(program)
    else:
        same(program)


def test_vjp_may_stand_for_backward() -> None:
    def program(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 3

            @staticmethod
            def vjp(ctx, grad):
                return grad * 3

        x = lib.ones(2, requires_grad=True)
        F.apply(x).sum().backward()
        return rounded(x.grad)
    same(program)


def test_instantiating_a_function_is_deprecated() -> None:
    same(lambda lib: type(legendre(lib)()).__name__)


def test_once_differentiable() -> None:
    def program(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return 2 * x * grad

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        y = Square.apply(x)
        gx, = lib.autograd.grad(y, x, lib.ones(2, requires_grad=True), create_graph=True)
        seen += [rounded(gx), gx.grad_fn.name(), repr(gx.grad_fn).split(" object")[0],
                 len(gx.grad_fn.next_functions)]
        plain, = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        seen.append(plain.requires_grad)
        Square.apply(x).sum().backward()
        seen.append(rounded(x.grad))
        try:
            gx.sum().backward()
        except RuntimeError as error:
            seen.append(str(error))
        return seen
    same(program)


def test_a_differentiable_backward_differentiates_again(backward_kind: Any) -> None:
    def program(lib):
        P3 = legendre(lib).apply
        x = lib.tensor([0.25, -0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = P3(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return rounded(g), g.grad_fn.name(), rounded(gg)
    same(program)


def test_gradcheck_and_gradgradcheck_pass() -> None:
    P3 = legendre(runtime)
    x = runtime.tensor([0.25, -0.5, 1.5], dtype=runtime.float64, requires_grad=True)
    assert runtime.autograd.gradcheck(P3.apply, (x,))
    assert runtime.autograd.gradgradcheck(P3.apply, (x,))


def test_gradcheck_finds_a_wrong_backward() -> None:
    class Wrong(runtime.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    x = runtime.tensor([0.25, -0.5], dtype=runtime.float64, requires_grad=True)
    with pytest.raises(runtime.autograd.GradcheckError, match="Jacobian mismatch"):
        runtime.autograd.gradcheck(Wrong.apply, (x,))
    assert not runtime.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


def test_hooks_on_the_node_and_on_its_outputs() -> None:
    def program(lib):
        calls = []

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                calls.append(("backward", rounded(grad)))
                return grad * 2

        x = lib.ones(2, requires_grad=True)
        y = Double.apply(x)
        y.grad_fn.register_hook(lambda gi, go: calls.append(("post", rounded(gi[0]),
                                                             rounded(go[0]))))
        y.grad_fn.register_prehook(lambda go: calls.append(("pre", rounded(go[0]))))
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return calls, rounded(x.grad)
    same(program)


def test_forward_mode_with_jvp() -> None:
    def program(lib):
        fwad = lib.autograd.forward_ad
        seen = []

        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x, y)
                ctx.k = k
                return x * y * k, x + y

            @staticmethod
            def jvp(ctx, x_t, y_t, k_t):
                x, y = ctx.saved_tensors
                seen.append([rounded(x_t), rounded(y_t), k_t])
                return (x_t * y + x * y_t) * ctx.k, x_t + y_t

            @staticmethod
            def backward(ctx, ga, gb):
                return None, None, None

        x = lib.tensor([1.0, 2.0])
        with fwad.dual_level():
            dual = fwad.make_dual(x, lib.tensor([1.0, 0.5]))
            product, total = Scaled.apply(dual, lib.tensor([3.0, 4.0]), 2.0)
            seen += [rounded(fwad.unpack_dual(product).tangent),
                     rounded(fwad.unpack_dual(total).tangent), rounded(product)]
        return seen
    same_outcome(program)


@pytest.mark.parametrize("returned", ["too few", "a number"])
def test_what_jvp_returns_is_checked(returned: str) -> None:
    def program(lib):
        fwad = lib.autograd.forward_ad

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def jvp(ctx, x_t):
                return x_t * 2 if returned == "too few" else (3, x_t)

            @staticmethod
            def backward(ctx, ga, gb):
                return ga

        with fwad.dual_level():
            F.apply(fwad.make_dual(lib.ones(2), lib.ones(2)))
    same_outcome(program)


def test_a_node_written_for_tensors_gets_tensors_with_grad_mode_off() -> None:
    """A Node subclass with `apply(self, grads)`: the raw backward wraps arrays for it."""
    seen = []

    class Twice(runtime.autograd.Node):
        def apply(self, grads: list) -> list:
            seen.append((type(grads[0]).__name__, runtime.is_grad_enabled()))
            return [grads[0] * 2]

    assert not Twice.runs_on_arrays
    x = runtime.ones(2, requires_grad=True)
    y = x * 1
    node = Twice()
    node.set_next_edges((runtime.node.gradient_edge(y),))
    z = runtime.ones(2)
    runtime.recording.set_history(z, node)
    z.sum().backward()
    assert seen == [("Tensor", False)]
    assert x.grad.tolist() == [2.0, 2.0]
