"""The random ops of the spec-breadth block (helper random): torch.normal with tensor
arguments, random_, poisson, _standard_gamma, rrelu_with_noise...: under a seed, torch's
numbers bit for bit, torch's nodes and gradients, torch's errors."""

from __future__ import annotations

import pytest
import torch

import runtime
from tests.oracle import same, same_outcome, values


def _seeded(call):
    """A program: seed, `call(lib)`, then a draw from the default stream (so the op must have
    taken as many words as torch's), and one from a seeded Generator."""
    def program(lib):
        lib.manual_seed(11)
        first = call(lib)
        generator = lib.Generator().manual_seed(5)
        second = lib.empty(3).normal_(generator=generator)
        return repr(values([first, lib.rand(2), second]))
    return program


# -- torch.normal with tensor arguments ------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(lib.zeros(3, 4)),
    lambda lib: lib.normal(lib.arange(20.0), 0.5),
    lambda lib: lib.normal(lib.arange(6.0, dtype=lib.float64).reshape(2, 3), 2.0),
    lambda lib: lib.normal(lib.zeros(4, 3).t(), 1.0),
    lambda lib: lib.normal(1.5, lib.linspace(0.1, 2, 17)),
    lambda lib: lib.normal(-1.0, lib.ones(5, dtype=lib.float64)),
    lambda lib: lib.normal(0.5, lib.arange(4)),
    lambda lib: lib.normal(lib.zeros(2, 1), lib.linspace(0.1, 2, 3)),
    lambda lib: lib.normal(lib.zeros(17), lib.ones(17)),
    lambda lib: lib.normal(lib.zeros(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.float64), lib.ones(())),
    lambda lib: lib.normal(lib.zeros(()), lib.ones(())),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.float16), 1.0),
    lambda lib: lib.normal(mean=lib.zeros(3), std=2.0),
    lambda lib: lib.normal(lib.zeros(0), 1.0),
    lambda lib: lib.normal(0.0, 1.0, (2, 3)),
    lambda lib: lib.normal(2.0, 3.0, size=(4,), dtype=lib.float64),
    lambda lib: lib.normal(lib.zeros(3), 1.0, generator=lib.Generator().manual_seed(3)),
    lambda lib: lib.normal(lib.zeros(3), 1.0, out=lib.empty(3)),
    lambda lib: lib.normal(lib.zeros(3), 1.0, out=lib.empty(3, dtype=lib.float64)),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.float64), 2.0, out=lib.empty(2, 3)),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.float64), lib.ones(3), out=lib.empty(3)),
    lambda lib: lib.normal(1.0, lib.ones(3), out=lib.empty(2)),
    lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3), out=lib.empty(0, dtype=lib.float64)),
    lambda lib: lib.normal(0.0, 1.0, (2,), out=lib.empty(2, dtype=lib.float64)),
])
def test_normal_draws_torchs_numbers(call):
    same(_seeded(call))


@pytest.mark.parametrize("call, node", [
    (lambda lib, m, s: lib.normal(m, 1.0), "NormalBackward1"),
    (lambda lib, m, s: lib.normal(0.5, s), "NormalBackward2"),
    (lambda lib, m, s: lib.normal(m, s), "NormalBackward3"),
    (lambda lib, m, s: lib.normal(m[:1], s), "NormalBackward3"),
])
def test_normal_nodes_and_zero_gradients(call, node):
    def program(lib):
        m = lib.tensor([0.2, 0.5, 0.9], requires_grad=True)
        s = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, requires_grad=True)
        y = call(lib, m, s)
        (y * 3).sum().backward()
        return y.grad_fn.name(), y.requires_grad, repr(values([m.grad, s.grad]))

    assert same(program)[0][1][0] == node


def test_normal_forward_mode_gives_zero_tangents():
    def program(lib):
        import_ad = lib.autograd.forward_ad
        with import_ad.dual_level():
            m = import_ad.make_dual(lib.zeros(3), lib.ones(3))
            s = import_ad.make_dual(lib.ones(3), lib.ones(3))
            tangents = [import_ad.unpack_dual(y).tangent
                        for y in (lib.normal(m, 1.0), lib.normal(0.0, s), lib.normal(m, s))]
        return repr(values(tangents))

    same_outcome(program)  # (torch warns once, on its first forward AD)


@pytest.mark.parametrize("call", [
    lambda lib: lib.normal(lib.zeros(3), -1.0),
    lambda lib: lib.normal(lib.zeros(3), float("nan")),
    lambda lib: lib.normal(0.0, lib.tensor([1.0, -1.0])),
    lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, float("nan")])),
    lambda lib: lib.normal(lib.zeros(3, dtype=lib.int64), 1.0),
    lambda lib: lib.normal(0.0, lib.ones(2, dtype=lib.bool)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), lib.ones(2)),
    lambda lib: lib.normal(lib.zeros(0, dtype=lib.int64), lib.ones(0)),
    lambda lib: lib.normal(lib.zeros(0, dtype=lib.int64), 1.0),
    lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    lambda lib: lib.normal(lib.zeros(2), 1.0, generator=3),
    lambda lib: lib.normal(),
    lambda lib: lib.normal(std=lib.ones(3)),
    lambda lib: lib.normal(1.0, 2.0),
    lambda lib: lib.normal(lib.zeros(2, requires_grad=True), 1.0, out=lib.empty(2)),
    lambda lib: lib.normal(lib.zeros(3), 1.0, out=lib.empty(0)),
    lambda lib: lib.normal(lib.zeros(3), -1.0, out=lib.empty(0)),
    lambda lib: lib.normal(lib.zeros(3), 1.0, out=lib.empty(3, dtype=lib.int64)),
    lambda lib: lib.normal(lib.zeros(3), 1.0, out=3),
])
def test_normal_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- multinomial -------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.multinomial(lib.tensor([0.1, 0.6, 0.3]), 5, True),
    lambda lib: lib.multinomial(lib.tensor([1.0, 2, 3, 4]), 3),
    lambda lib: lib.multinomial(lib.rand(4, 6), 6),
    lambda lib: lib.multinomial(lib.rand(4, 6, dtype=lib.float64), 20, replacement=True),
    lambda lib: lib.rand(3, 5).multinomial(1),
    lambda lib: lib.rand(2, 5).multinomial(4, True, generator=lib.Generator().manual_seed(2)),
    lambda lib: lib.multinomial(lib.rand(0, 3), 2),
])
def test_multinomial_draws_torchs_numbers(call):
    same(_seeded(call))


def test_multinomial_records_no_node():
    def program(lib):
        p = lib.tensor([0.2, 0.5, 0.3], requires_grad=True)
        drawn = lib.multinomial(p * 2, 2)
        return drawn.grad_fn, drawn.requires_grad, str(drawn.dtype)

    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
    lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    lambda lib: lib.multinomial(lib.ones(3), 0),
    lambda lib: lib.multinomial(lib.ones(3), 4),
    lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 3, True),
    lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    lambda lib: lib.multinomial(lib.ones(3), 1, generator=1),
    lambda lib: lib.ones(3).multinomial(),
])
def test_multinomial_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- random_ -------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3, 4).random_(),
    lambda lib: lib.empty(3, 4, dtype=lib.float64).random_(),
    lambda lib: lib.empty(5, dtype=lib.int64).random_(),
    lambda lib: lib.empty(5, dtype=lib.int32).random_(),
    lambda lib: lib.empty(5, dtype=lib.uint8).random_(),
    lambda lib: lib.empty(5, dtype=lib.bool).random_(),
    lambda lib: lib.empty(5).random_(10),
    lambda lib: lib.empty(4, 3).t().random_(100),
    lambda lib: lib.empty(5, dtype=lib.int64).random_(-7, 7),
    lambda lib: lib.empty(5).random_(3, None),
    lambda lib: lib.empty(5, dtype=lib.int64).random_(-(2**63), None),
    lambda lib: lib.empty(5, dtype=lib.int16).random_(to=9),
    lambda lib: lib.empty(5).random_(2, 6, generator=lib.Generator().manual_seed(4)),
    lambda lib: lib.empty(0).random_(),
    lambda lib: lib.empty(5).random_(0, 2**25),
    lambda lib: lib.empty(40, dtype=lib.float16).random_().float(),
    lambda lib: lib.empty(40, dtype=lib.bfloat16).random_().float(),
    lambda lib: lib.empty(5, dtype=lib.bfloat16).random_(-300, 300).float(),
    lambda lib: lib.empty(5, dtype=lib.float16).random_(3, None).float(),
    lambda lib: lib.empty(50, dtype=lib.bfloat16).random_(-(2**63), None).float(),
    lambda lib: lib.empty(5, dtype=lib.float16).random_(0, 100000).float(),
    lambda lib: lib.empty(5, dtype=lib.int8).random_(-200, 5),
])
def test_random__draws_torchs_numbers(call):
    same(_seeded(call))


@pytest.mark.parametrize("call, node", [
    (lambda y: y.random_(1, 5), "RandomBackward0"),
    (lambda y: y.random_(1, None), "RandomBackward0"),
    (lambda y: y.random_(5), "RandomBackward1"),
    (lambda y: y.random_(), "RandomBackward2"),
])
def test_random__nodes_and_zero_gradients(call, node):
    def program(lib):
        x = lib.tensor([0.2, 0.5, 0.9], requires_grad=True)
        y = call(x * 1.0)
        (y * 2).sum().backward()
        return y.grad_fn.name(), repr(values(x.grad))

    assert same(program)[0][1][0] == node


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).random_(5, 2),
    lambda lib: lib.empty(3, dtype=lib.uint8).random_(0, 300),
    lambda lib: lib.empty(3, dtype=lib.int32).random_(-(2**63), None),
    lambda lib: lib.empty(3, dtype=lib.bool).random_(-(2**63), None),
    lambda lib: lib.empty(3).random_(2**24 + 1, 2**24 + 2),
    lambda lib: lib.tensor([1.0], requires_grad=True).random_(),
    lambda lib: lib.empty(3, dtype=lib.float16).random_(-(2**63), None),
    lambda lib: lib.empty(3, dtype=lib.bfloat16).random_(0, 2**40),
])
def test_random__errors(call):
    same(lambda lib: repr(values(call(lib))))


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(3).random_(generator=3),
    lambda lib: lib.empty(3).random_(1.5),
    lambda lib: lib.empty(3).random_(1, 2, 3),
])
def test_random__bad_arguments(call):
    """torch's TypeError; its first line (torch then lists its Python signatures, gradgen
    the schemas of the spec's overloads)."""
    def program(lib):
        try:
            call(lib)
        except TypeError as error:
            return str(error).split("\n")[0]
        return None

    assert same(program)[0][1] is not None


# -- poisson, _standard_gamma, _standard_gamma_grad ---------------------------------------------

EDGE_RATES = [0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 1e4, 1e30, float("inf")]
EDGE_ALPHAS = [1.0, 0.5, 0.01, 3.5, 100.0, 0.0, -1.0, -2.0 / 3.0, float("nan"), float("inf"),
               -float("inf")]


@pytest.mark.parametrize("call", [
    lambda lib: lib.poisson(lib.tensor(EDGE_RATES)),
    lambda lib: lib.poisson(lib.tensor(EDGE_RATES, dtype=lib.float64)),
    lambda lib: lib.poisson(lib.rand(3, 4) * 20),
    lambda lib: lib.poisson(lib.rand(4, 3).t() * 5),
    lambda lib: lib.poisson(lib.full((3,), 4.0), lib.Generator().manual_seed(1)),
    lambda lib: lib.poisson(lib.zeros(0)),
    lambda lib: lib.poisson(lib.full((5,), 3.0, dtype=lib.float16)).float(),
    lambda lib: lib.poisson(lib.full((5,), 30.0, dtype=lib.bfloat16)).float(),
    lambda lib: lib.normal(lib.zeros(20, dtype=lib.bfloat16), 1.0).float(),
    lambda lib: lib.multinomial(lib.ones(3, 5, dtype=lib.bfloat16), 7, True),
    lambda lib: lib._standard_gamma(lib.tensor(EDGE_ALPHAS)),
    lambda lib: lib._standard_gamma(lib.tensor(EDGE_ALPHAS, dtype=lib.float64)),
    lambda lib: lib._standard_gamma(lib.rand(3, 4) * 4),
    lambda lib: lib._standard_gamma(lib.full((3,), 2.0), generator=lib.Generator().manual_seed(1)),
])
def test_poisson_and_gamma_draw_torchs_numbers(call):
    same(_seeded(call))


@pytest.mark.parametrize("rates", [[1.0, 2.0, -1.0, 3.0], [[1.0, -2.0], [3.0, 4.0]],
                                   [float("nan"), 1.0]])
def test_poisson_draws_up_to_an_invalid_rate(rates):
    """torch's kernel checks each rate as it draws: the rates before the first invalid one
    (in the tensor's logical order) take their words from the stream."""
    def program(lib):
        lib.manual_seed(0)
        x = lib.tensor(rates)
        try:
            lib.poisson(x.t() if x.ndim == 2 else x)
        except RuntimeError as error:
            return str(error), repr(values(lib.rand(2)))
        return None

    assert same(program)[0][1] is not None


def test_poisson_node_and_zero_gradient():
    def program(lib):
        rates = lib.tensor([0.5, 4.0, 30.0], requires_grad=True)
        drawn = lib.poisson(rates * 2)
        (drawn * 3).sum().backward()
        return drawn.grad_fn.name(), repr(values(rates.grad))

    same(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_node_and_gradient(dtype):
    def program(lib):
        lib.manual_seed(2)
        alpha = lib.tensor([0.3, 1.0, 2.5, 40.0], dtype=getattr(lib, dtype), requires_grad=True)
        sample = lib._standard_gamma(alpha)
        (sample * lib.arange(4.0, dtype=alpha.dtype)).sum().backward()
        return sample.grad_fn.name(), repr(values([sample, alpha.grad]))

    same(program)


def test_standard_gamma_grad_values_and_its_missing_derivative():
    def program(lib):
        alpha = lib.tensor([0.05, 0.5, 1.0, 3.0, 50.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.01, 0.3, 1.0, 2.0, 60.0], dtype=lib.float64)
        grad = lib._standard_gamma_grad(alpha, x)
        result = [grad.grad_fn.name(), repr(values(grad))]
        try:
            grad.sum().backward()
        except NotImplementedError as error:
            result.append(str(error))
        return result

    same(program)


def test_standard_gamma_refuses_forward_mode():
    def program(lib):
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            alpha = forward_ad.make_dual(lib.ones(3), lib.ones(3))
            try:
                lib._standard_gamma(alpha)
            except NotImplementedError as error:
                # (what follows says how to add one: torch's and gradgen's own words)
                return str(error).split(" yet")[0]
        return None

    assert same_outcome(program)[1] is not None


@pytest.mark.parametrize("call", [
    lambda lib: lib.poisson(lib.tensor([1.0, float("nan")])),
    lambda lib: lib.poisson(lib.tensor([1.0, -2.0])),
    lambda lib: lib.poisson(lib.tensor([1, 2])),
    lambda lib: lib.poisson(lib.zeros(0, dtype=lib.int64)),
    lambda lib: lib.poisson(lib.ones(2), generator=3),
    lambda lib: lib._standard_gamma(lib.tensor([1, 2])),
    lambda lib: lib._standard_gamma(lib.ones(2), generator=3),
    lambda lib: lib._standard_gamma_grad(lib.ones(2), lib.ones(3)),
    lambda lib: lib._standard_gamma_grad(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib._standard_gamma_grad(lib.tensor([1, 2]), lib.ones(2)),
    lambda lib: lib._standard_gamma_grad(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib._standard_gamma(lib.ones(2, dtype=lib.float16)),
    lambda lib: lib._standard_gamma(lib.ones(2, dtype=lib.bfloat16)),
    lambda lib: lib._standard_gamma_grad(lib.ones(2, dtype=lib.float16),
                                         lib.ones(2, dtype=lib.float16)),
])
def test_poisson_and_gamma_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- rrelu_with_noise --------------------------------------------------------------------------

def _aten(lib, name):
    """torch's internal op `name` (torch.ops.aten's), or gradgen's of that name."""
    return getattr(torch.ops.aten, name) if lib is torch else getattr(lib, name)


RRELU_INPUT = [[-2.0, -0.5, 0.0, 1.5], [3.0, -1e-3, -7.0, 0.25], [-0.0, 2.0, -4.0, -1.0]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.rrelu(x, training=True),
    lambda lib, x: lib.nn.functional.rrelu(x, 0.05, 0.9, True),
    lambda lib, x: lib.rrelu(x.t(), 0.1, 0.3, True),
    lambda lib, x: lib.rrelu(x, 0.2, 0.2, True, generator=lib.Generator().manual_seed(3)),
    lambda lib, x: lib.nn.functional.rrelu(x),
    lambda lib, x: lib.nn.functional.rrelu_(x.clone(), training=True),
    lambda lib, x: lib.rrelu_(x.clone(), 0.1, 0.4),
])
def test_rrelu_draws_torchs_numbers(call, dtype):
    same(_seeded(lambda lib: call(lib, lib.tensor(RRELU_INPUT, dtype=getattr(lib, dtype)))))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("call, node", [
    (lambda lib, x, t: lib.nn.functional.rrelu(x, 0.1, 0.3, t), "RreluWithNoiseBackward0"),
    (lambda lib, x, t: lib.rrelu(x, 0.1, 0.3, t), "RreluWithNoiseBackward0"),
    (lambda lib, x, t: lib.nn.functional.rrelu(x * 1, 0.1, 0.3, t, True),
     "RreluWithNoiseBackward1"),
    (lambda lib, x, t: lib.nn.RReLU(0.1, 0.3).train(t)(x), "RreluWithNoiseBackward0"),
])
def test_rrelu_nodes_and_gradients(call, node, training):
    def program(lib):
        lib.manual_seed(4)
        x = lib.tensor(RRELU_INPUT, dtype=lib.float64, requires_grad=True)
        y = call(lib, x, training)
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
        return y.grad_fn.name(), repr(values([y, x.grad]))

    assert same(program)[0][1][0] == node


@pytest.mark.parametrize("training", [True, False])
def test_rrelu_with_noise_ops_against_torchs(training):
    def program(lib):
        lib.manual_seed(6)
        x = lib.tensor(RRELU_INPUT, requires_grad=True)
        noise, kept = lib.full((3, 4), 7.0), lib.full((3, 4), 7.0)
        y = _aten(lib, "rrelu_with_noise")(x, noise, 0.1, 0.3, training)
        z, noise_out = _aten(lib, "rrelu_with_noise_functional")(x, kept, 0.1, 0.3, training)
        w = _aten(lib, "rrelu_with_noise_")(x * 1, lib.zeros(3, 4), 0.1, 0.3, training)
        grads = lib.autograd.grad((y.sum(), z.sum(), w.sum()), x)
        return ([t.grad_fn.name() for t in (y, z, w)], noise_out.grad_fn,
                repr(values([y, noise, z, kept, noise_out, w, grads])))

    same(program)


@pytest.mark.parametrize("training, self_is_result", [(True, False), (False, False),
                                                      (False, True)])
def test_rrelu_with_noise_backward_and_its_double_backward(training, self_is_result):
    def program(lib):
        grad = lib.tensor(RRELU_INPUT, dtype=lib.float64, requires_grad=True).flip(0)
        x = lib.tensor(RRELU_INPUT, dtype=lib.float64, requires_grad=True)
        noise = lib.linspace(0.1, 0.4, 12, dtype=lib.float64).reshape(3, 4)
        y = _aten(lib, "rrelu_with_noise_backward")(grad, x, noise, 0.1, 0.4, training,
                                                     self_is_result)
        first = lib.autograd.grad(y.pow(2).sum(), (grad, x), create_graph=True)
        return y.grad_fn.name(), repr(values([y, *first]))

    same(program)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.3, 0.1, True),
    lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.3, 0.1),
    lambda lib: lib.nn.functional.rrelu(lib.ones(3, dtype=lib.int64), training=True),
    lambda lib: lib.nn.functional.rrelu(-lib.ones(3, dtype=lib.bool)),
    lambda lib: _aten(lib, "rrelu_with_noise")(lib.ones(4), lib.empty(3), 0.1, 0.3, True),
    lambda lib: _aten(lib, "rrelu_with_noise")(lib.ones(4), lib.empty(3), 0.1, 0.3, False),
    lambda lib: _aten(lib, "rrelu_with_noise")(lib.ones(4), lib.empty(4, dtype=lib.float64),
                                              0.1, 0.3, True),
    lambda lib: _aten(lib, "rrelu_with_noise")(-lib.ones(4), lib.empty(4), 0.3, 0.1, True),
    lambda lib: lib.rrelu(lib.ones(3), generator=2),
    lambda lib: lib.nn.functional.rrelu_(lib.ones(3, requires_grad=True), training=True),
])
def test_rrelu_errors(call):
    same(lambda lib: repr(values(call(lib))))


# -- _fused_dropout ------------------------------------------------------------------------------

def _fused_dropout(lib):
    """torch._fused_dropout: torch has only a CUDA kernel, and on the CPU the decomposition
    its compiler uses (torch._decomp), which gradgen's kernel follows."""
    from torch._decomp import decomposition_table

    if lib is torch:
        return decomposition_table[torch.ops.aten._fused_dropout.default]
    return lib._fused_dropout


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("make, p", [
    (lambda lib, d: lib.arange(20.0, dtype=d).reshape(4, 5), 0.7),
    (lambda lib, d: lib.arange(20.0, dtype=d).reshape(4, 5).t(), 0.3),
    (lambda lib, d: lib.ones(3, 17, dtype=d), 0.5),
    (lambda lib, d: lib.ones(6, dtype=d), 1.0),
    (lambda lib, d: lib.ones(6, dtype=d), 0.0),
    (lambda lib, d: lib.ones(0, dtype=d), 0.5),
])
def test_fused_dropout_draws_as_torchs_decomposition(make, p, dtype):
    same(_seeded(lambda lib: list(_fused_dropout(lib)(make(lib, getattr(lib, dtype)), p))))


def test_fused_dropout_node_and_gradient():
    def program(lib):
        lib.manual_seed(9)
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        out, mask = lib._fused_dropout(x, 0.6)
        out.backward(lib.arange(12.0).reshape(3, 4))
        return out.grad_fn.name(), mask.requires_grad, repr(values([out, mask, x.grad]))

    name, mask_requires_grad, drawn = program(runtime)
    assert name == "FusedDropoutBackward0" and not mask_requires_grad
    torch.manual_seed(9)
    x = torch.arange(12.0).reshape(3, 4)
    out, mask = _fused_dropout(torch)(x, 0.6)
    # torch's formula: grad * (mask.type_as(grad) * (1. / p))
    grad = torch.arange(12.0).reshape(3, 4) * (mask.float() * (1.0 / 0.6))
    assert drawn == repr(values([out, mask, grad]))


@pytest.mark.parametrize("call", [
    lambda lib: _fused_dropout(lib)(lib.arange(4), 0.5),
    lambda lib: _fused_dropout(lib)(lib.tensor([True]), 0.5),
])
def test_fused_dropout_errors(call):
    same(lambda lib: repr(values(call(lib))))


def test_rrelu_in_a_compiled_step_draws_as_eager():
    """nn.RReLU in training inside runtime.compile: the step is compiled (no fallback) and
    draws the same slopes as eager, step after step."""
    def make():
        runtime.manual_seed(5)
        model = runtime.nn.Sequential(runtime.nn.Linear(6, 8), runtime.nn.RReLU(0.1, 0.3),
                                      runtime.nn.Linear(8, 3))
        optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            optimizer.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            optimizer.step()
            return loss
        return model, step

    batches = [runtime.linspace(-1, 1, 24).reshape(4, 6) * (i + 1) for i in range(4)]
    eager_model, eager_step = make()
    eager = [eager_step(x).detach().numpy().tobytes() for x in batches]
    model, step = make()
    compiled = runtime.compile(step)
    losses = [compiled(x).detach().numpy().tobytes() for x in batches]
    assert compiled.fallback_reason is None
    assert losses == eager and len(set(losses)) == len(batches)
    for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
        assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes()
