"""runtime.autograd.functional against torch.autograd.functional.

Each test runs one program with `torch` and with `runtime` on the same float64 data and
compares what it observed: the structure of the result (a Tensor, a tuple, a tuple of
tuples), every tensor's shape, dtype, requires_grad and values (to 1e-6 relative), or
the error's type and message.

The functions are real ones: the seed's squared-error loss of a two-layer ReLU network
as a function of its weights, a softmax cross-entropy as a function of logits and of
weights, and a small tanh MLP as a function of its input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

import runtime

LIBRARIES = (torch, runtime)
RTOL = 1e-6
ATOL = 1e-12  # for entries that are zero in exact arithmetic

_rng = np.random.default_rng(0)
DATA = {
    # the seed's TinyModel, small: Linear(20, 8) -> ReLU -> Linear(8, 3), a batch of 5
    "x": _rng.standard_normal((5, 20)),
    "target": _rng.standard_normal((5, 3)),
    "w1": _rng.standard_normal((8, 20)) * 0.3,
    "b1": _rng.standard_normal(8) * 0.3,
    "w2": _rng.standard_normal((3, 8)) * 0.3,
    "b2": _rng.standard_normal(3) * 0.3,
    # a classifier: 6 samples, 4 features, 5 classes
    "logits": _rng.standard_normal((6, 5)),
    "features": _rng.standard_normal((6, 4)),
    "wc": _rng.standard_normal((5, 4)) * 0.5,
    "bc": _rng.standard_normal(5) * 0.5,
    "labels": np.array([0, 3, 1, 4, 4, 2]),
    # a tanh MLP 4 -> 6 -> 3 and one input for it
    "u": _rng.standard_normal(4),
    "m1": _rng.standard_normal((6, 4)) * 0.5,
    "c1": _rng.standard_normal(6) * 0.5,
    "m2": _rng.standard_normal((3, 6)) * 0.5,
    "c2": _rng.standard_normal(3) * 0.5,
    # cotangents and tangents
    "v_out": _rng.standard_normal(3),
    "v_u": _rng.standard_normal(4),
}


def t(lib: Any, name: str, requires_grad: bool = False) -> Any:
    """The named array of DATA as a fresh tensor of `lib` (labels as int64)."""
    array = DATA[name]
    dtype = lib.int64 if array.dtype.kind == "i" else lib.float64
    return lib.tensor(array.tolist(), dtype=dtype, requires_grad=requires_grad)


def weights(lib: Any) -> tuple:
    return tuple(t(lib, name) for name in ("w1", "b1", "w2", "b2"))


# -- the functions ---------------------------------------------------------------------------

def seed_loss(lib: Any) -> Callable:
    """The seed's loss, (target - model(x)).pow(2).sum(), as a function of the weights."""
    x, target = t(lib, "x"), t(lib, "target")

    def loss(w1, b1, w2, b2):
        hidden = lib.nn.functional.relu(lib.nn.functional.linear(x, w1, b1))
        return (target - lib.nn.functional.linear(hidden, w2, b2)).pow(2).sum()

    return loss


def cross_entropy_of_logits(lib: Any) -> Callable:
    labels = t(lib, "labels")
    return lambda logits: lib.nn.functional.cross_entropy(logits, labels)


def cross_entropy_of_weights(lib: Any) -> Callable:
    features, labels = t(lib, "features"), t(lib, "labels")

    def loss(w, b):
        return lib.nn.functional.cross_entropy(lib.nn.functional.linear(features, w, b), labels)

    return loss


def mlp(lib: Any) -> Callable:
    """A tanh MLP 4 -> 6 -> 3 as a function of its input."""
    m1, c1, m2, c2 = (t(lib, name) for name in ("m1", "c1", "m2", "c2"))
    return lambda u: lib.tanh(u @ m1.t() + c1) @ m2.t() + c2


def mlp_two_outputs(lib: Any) -> Callable:
    """The MLP's output and its squared norm: a tuple of two outputs."""
    net = mlp(lib)

    def f(u):
        out = net(u)
        return out, out.pow(2).sum()

    return f


# -- running a program in both libraries -----------------------------------------------------

def observe(program: Callable[[Any], Any], lib: Any) -> tuple:
    try:
        return ("returns", plain(program(lib)))
    except Exception as error:  # the error is part of what is compared
        return ("raises", type(error).__name__, str(error))


def plain(value: Any) -> Any:
    """A result as plain data: a tensor as ("tensor", shape, dtype, requires_grad, values)."""
    if isinstance(value, torch.Tensor | runtime.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype), value.requires_grad,
                np.asarray(value.detach().tolist(), dtype=float))
    if isinstance(value, tuple | list):
        return type(value)(plain(v) for v in value)
    return value


def assert_same(expected: Any, actual: Any, where: str = "result") -> None:
    if isinstance(expected, tuple) and expected and expected[0] == "tensor":
        assert isinstance(actual, tuple) and actual[0] == "tensor", (
            f"{where}: runtime gives {actual!r}, torch gives a tensor")
        assert expected[1:4] == actual[1:4], (
            f"{where}: runtime gives (shape, dtype, requires_grad) {actual[1:4]}, torch "
            f"gives {expected[1:4]}")
        np.testing.assert_allclose(actual[4], expected[4], rtol=RTOL, atol=ATOL, err_msg=where)
    elif isinstance(expected, list | tuple):
        assert type(expected) is type(actual) and len(expected) == len(actual), (
            f"{where}: runtime gives {actual!r}, torch gives {expected!r}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: runtime gives {actual!r}, torch gives {expected!r}"


def same(program: Callable[[Any], Any]) -> tuple:
    """Run `program` with torch and runtime; they must agree. Returns torch's outcome."""
    expected = observe(program, torch)
    actual = observe(program, runtime)
    assert_same(expected, actual)
    return expected


def returns(program: Callable[[Any], Any]) -> Any:
    outcome = same(program)
    assert outcome[0] == "returns", outcome
    return outcome[1]


def raises(program: Callable[[Any], Any]) -> tuple[str, str]:
    outcome = same(program)
    assert outcome[0] == "raises", outcome
    return outcome[1], outcome[2]


def F(lib: Any) -> Any:
    return lib.autograd.functional


# -- the real functions ----------------------------------------------------------------------

def test_seed_loss_jacobian_and_hessian_of_the_weights() -> None:
    jac = returns(lambda lib: F(lib).jacobian(seed_loss(lib), weights(lib)))
    assert [block[1] for block in jac] == [(8, 20), (8,), (3, 8), (3,)]
    hess = returns(lambda lib: F(lib).hessian(seed_loss(lib), weights(lib)))
    assert [[block[1] for block in row] for row in hess][1] == [(8, 8, 20), (8, 8), (8, 3, 8),
                                                                 (8, 3)]


def test_seed_loss_vjp_vhp_hvp_and_jvp_of_the_weights() -> None:
    def tangents(lib):
        return tuple(w * 0.5 - 0.1 for w in weights(lib))

    returns(lambda lib: F(lib).vjp(seed_loss(lib), weights(lib)))
    returns(lambda lib: F(lib).jvp(seed_loss(lib), weights(lib), tangents(lib)))
    returns(lambda lib: F(lib).vhp(seed_loss(lib), weights(lib), tangents(lib)))
    returns(lambda lib: F(lib).hvp(seed_loss(lib), weights(lib), tangents(lib)))


def test_hvp_equals_vhp_and_the_hessian_times_v() -> None:
    f = seed_loss(runtime)
    ws = weights(runtime)
    v = tuple(runtime.ones_like(w) * 0.1 for w in ws)
    _, hv = F(runtime).hvp(f, ws, v)
    _, vh = F(runtime).vhp(f, ws, v)
    hess = F(runtime).hessian(f, ws)
    for i in range(len(ws)):
        by_blocks = sum(
            (hess[i][j].reshape(ws[i].numel(), ws[j].numel()) @ v[j].reshape(-1))
            for j in range(len(ws)))
        np.testing.assert_allclose(hv[i].reshape(-1).tolist(), by_blocks.tolist(), rtol=RTOL,
                                   atol=ATOL)
        np.testing.assert_allclose(vh[i].tolist(), hv[i].tolist(), rtol=RTOL, atol=ATOL)


def test_cross_entropy_of_the_logits() -> None:
    def direction(lib):
        return t(lib, "logits") * 0.3 + 0.2

    returns(lambda lib: F(lib).jacobian(cross_entropy_of_logits(lib), t(lib, "logits")))
    returns(lambda lib: F(lib).hessian(cross_entropy_of_logits(lib), t(lib, "logits")))
    for name in ("vhp", "hvp", "jvp"):
        returns(lambda lib, name=name: getattr(F(lib), name)(
            cross_entropy_of_logits(lib), t(lib, "logits"), direction(lib)))
    returns(lambda lib: F(lib).vjp(cross_entropy_of_logits(lib), t(lib, "logits"),
                                   lib.tensor(2.0, dtype=lib.float64)))


def test_cross_entropy_of_the_weights() -> None:
    def params(lib):
        return t(lib, "wc"), t(lib, "bc")

    def direction(lib):
        return t(lib, "wc").flip(0), t(lib, "bc") - 1

    returns(lambda lib: F(lib).jacobian(cross_entropy_of_weights(lib), params(lib)))
    returns(lambda lib: F(lib).hessian(cross_entropy_of_weights(lib), params(lib)))
    for name in ("vhp", "hvp", "jvp"):
        returns(lambda lib, name=name: getattr(F(lib), name)(
            cross_entropy_of_weights(lib), params(lib), direction(lib)))
    returns(lambda lib: F(lib).vjp(cross_entropy_of_weights(lib), params(lib)))


def test_mlp_of_its_input() -> None:
    jac = returns(lambda lib: F(lib).jacobian(mlp(lib), t(lib, "u")))
    assert jac[1] == (3, 4)
    returns(lambda lib: F(lib).vjp(mlp(lib), t(lib, "u"), t(lib, "v_out")))
    returns(lambda lib: F(lib).jvp(mlp(lib), t(lib, "u"), t(lib, "v_u")))
    returns(lambda lib: F(lib).hessian(lambda u: mlp(lib)(u).pow(2).sum(), t(lib, "u")))


def test_jacobian_matches_jvp_columns_and_vjp_rows() -> None:
    """J e_k (jvp) is column k and e_kᵀ J (vjp) row k of the jacobian."""
    f, u = mlp(runtime), t(runtime, "u")
    jac = F(runtime).jacobian(f, u)
    for k in range(4):
        e = runtime.eye(4, dtype=runtime.float64)[k]
        _, column = F(runtime).jvp(f, u, e)
        np.testing.assert_allclose(column.tolist(), jac[:, k].tolist(), rtol=RTOL, atol=ATOL)
    for k in range(3):
        e = runtime.eye(3, dtype=runtime.float64)[k]
        _, row = F(runtime).vjp(f, u, e)
        np.testing.assert_allclose(row.tolist(), jac[k].tolist(), rtol=RTOL, atol=ATOL)


# -- the structure of the results ------------------------------------------------------------

def shape_of(value: Any) -> Any:
    """The nesting of a plain result: "T" for a tensor, tuples kept."""
    if isinstance(value, tuple) and value and value[0] == "tensor":
        return "T"
    return tuple(shape_of(v) for v in value)


@pytest.mark.parametrize(("inputs_tuple", "outputs_tuple", "expected"), [
    (False, False, "T"),
    (True, False, ("T",)),
    (False, True, ("T", "T")),
    (True, True, (("T",), ("T",))),
])
def test_jacobian_structure(inputs_tuple, outputs_tuple, expected) -> None:
    def program(lib):
        f = mlp_two_outputs(lib) if outputs_tuple else mlp(lib)
        u = t(lib, "u")
        if inputs_tuple:
            return F(lib).jacobian(lambda a: f(a), (u,))
        return F(lib).jacobian(f, u)

    assert shape_of(returns(program)) == expected


def test_jacobian_of_two_inputs_and_two_outputs() -> None:
    def program(lib):
        net = mlp(lib)
        return F(lib).jacobian(lambda a, b: (net(a * b), (a - b).pow(3)),
                               (t(lib, "u"), t(lib, "v_u")))

    jac = returns(program)
    assert shape_of(jac) == (("T", "T"), ("T", "T"))
    assert [[block[1] for block in row] for row in jac] == [[(3, 4), (3, 4)], [(4, 4), (4, 4)]]


@pytest.mark.parametrize("inputs_tuple", [False, True])
def test_hessian_structure(inputs_tuple) -> None:
    def program(lib):
        f = lambda u: mlp(lib)(u).pow(2).sum()  # noqa: E731
        u = t(lib, "u")
        return F(lib).hessian(f, (u,) if inputs_tuple else u)

    assert shape_of(returns(program)) == ((("T",),) if inputs_tuple else "T")


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
@pytest.mark.parametrize("inputs_tuple", [False, True])
def test_products_structure(name, inputs_tuple) -> None:
    def program(lib):
        u, v = t(lib, "u"), t(lib, "v_u")
        if name in ("vhp", "hvp"):
            f = lambda a: mlp(lib)(a).pow(2).sum()  # noqa: E731
        else:
            f = lambda a: mlp(lib)(a).sum()  # noqa: E731
        if name == "vjp":
            v = None  # the output has one element
        elif inputs_tuple:
            v = (v,)
        return getattr(F(lib), name)(f, (u,) if inputs_tuple else u, v)

    out, result = returns(program)
    assert shape_of(out) == "T"
    # jvp's result is shaped like the outputs, the others' like the inputs
    assert shape_of(result) == (("T",) if inputs_tuple and name != "jvp" else "T")


def test_vjp_and_jvp_with_tuple_outputs() -> None:
    def program(lib):
        f = mlp_two_outputs(lib)
        u = t(lib, "u")
        v_out = (t(lib, "v_out"), lib.tensor(0.5, dtype=lib.float64))
        return F(lib).vjp(f, u, v_out), F(lib).jvp(f, u, t(lib, "v_u"))

    (out, vjp_result), (out2, jvp_result) = returns(program)
    assert shape_of(out) == shape_of(out2) == ("T", "T")
    assert shape_of(vjp_result) == "T"
    assert shape_of(jvp_result) == ("T", "T")


def test_lists_are_not_tuples() -> None:
    """torch takes only a tuple as a tuple: a list of tensors is a type error."""
    assert raises(lambda lib: F(lib).jacobian(lambda a, b: a * b, [t(lib, "u"), t(lib, "v_u")])
                  )[0] == "TypeError"
    assert raises(lambda lib: F(lib).vjp(lambda a: [a, a], t(lib, "u")))[0] == "TypeError"
    assert raises(lambda lib: F(lib).jvp(lambda a: a, t(lib, "u"), [t(lib, "v_u")])
                  )[0] == "TypeError"
    assert raises(lambda lib: F(lib).hessian(lambda a: a.sum(), (t(lib, "u"), 2.0))
                  )[0] == "TypeError"


# -- create_graph ----------------------------------------------------------------------------

def test_without_create_graph_results_are_detached() -> None:
    def program(lib):
        u = t(lib, "u", requires_grad=True)
        return (F(lib).vjp(mlp(lib), u, t(lib, "v_out")),
                F(lib).jacobian(mlp(lib), u),
                F(lib).hvp(lambda a: mlp(lib)(a).pow(2).sum(), u, u))

    (out, vjp_result), jac, (out2, hvp_result) = returns(program)
    assert not out[3] and not vjp_result[3] and not jac[3] and not hvp_result[3]


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_create_graph_products_can_be_differentiated_again(name) -> None:
    """With create_graph the product is a function of the caller's tensors (the input and
    v): its gradient with respect to them is a higher derivative, compared with torch."""
    def program(lib):
        u = t(lib, "u", requires_grad=True)
        if name in ("vhp", "hvp"):
            f = lambda a: mlp(lib)(a).pow(2).sum()  # noqa: E731
            v = t(lib, "v_u", requires_grad=True)
        elif name == "jvp":
            f, v = mlp(lib), t(lib, "v_u", requires_grad=True)
        else:
            f, v = mlp(lib), t(lib, "v_out", requires_grad=True)
        out, result = getattr(F(lib), name)(f, u, v, create_graph=True)
        again = lib.autograd.grad(result.pow(2).sum(), (u, v))
        return out, result, again

    out, result, again = returns(program)
    assert out[3] and result[3]


def test_create_graph_hessian_gives_third_derivatives() -> None:
    def program(lib):
        u = t(lib, "u", requires_grad=True)
        hess = F(lib).hessian(lambda a: mlp(lib)(a).pow(2).sum(), u, create_graph=True)
        (third,) = lib.autograd.grad((hess * hess).sum(), u)
        return hess, third

    hess, third = returns(program)
    assert hess[3]


def test_create_graph_jacobian_of_the_weights() -> None:
    def program(lib):
        w, b = t(lib, "wc", requires_grad=True), t(lib, "bc", requires_grad=True)
        jac_w, jac_b = F(lib).jacobian(cross_entropy_of_weights(lib), (w, b), create_graph=True)
        return jac_w, jac_b, lib.autograd.grad(jac_w.pow(2).sum() + jac_b.sum(), (w, b))

    returns(program)


def test_create_graph_keeps_inputs_that_do_not_require_grad_out_of_the_graph() -> None:
    def program(lib):
        u = t(lib, "u")  # requires_grad=False: the result has a graph, but not back to u
        out, result = F(lib).vjp(mlp(lib), u, t(lib, "v_out"), create_graph=True)
        return out, result, u.grad

    returns(program)


def test_function_closing_over_its_input_sees_a_constant() -> None:
    """The input is passed as a new tensor, so the closed-over one is a constant (torch#32576)."""
    def program(lib):
        u = t(lib, "u", requires_grad=True)
        return F(lib).jacobian(lambda a: a * u, u), F(lib).vjp(lambda a: (a * u).sum(), u)

    returns(program)


def test_grad_mode_of_the_caller() -> None:
    """Works under no_grad (the function is run with grad enabled) and leaves it disabled."""
    def program(lib):
        with lib.no_grad():
            results = (F(lib).vjp(mlp(lib), t(lib, "u"), t(lib, "v_out")),
                       F(lib).hessian(lambda a: mlp(lib)(a).pow(2).sum(), t(lib, "u")),
                       F(lib).hvp(lambda a: mlp(lib)(a).pow(2).sum(), t(lib, "u"), t(lib, "v_u")))
            return results, lib.is_grad_enabled()

    returns(program)


# -- strict mode -----------------------------------------------------------------------------

STRICT_CASES = {
    # an output that does not require grad
    "vjp_constant_output": lambda lib, strict: F(lib).vjp(
        lambda a: lib.ones(3, dtype=lib.float64), t(lib, "u"), t(lib, "v_out"), strict=strict),
    "jvp_constant_output": lambda lib, strict: F(lib).jvp(
        lambda a: lib.ones(3, dtype=lib.float64), t(lib, "u"), t(lib, "v_u"), strict=strict),
    "jacobian_detached_output": lambda lib, strict: F(lib).jacobian(
        lambda a: mlp(lib)(a).detach(), t(lib, "u"), strict=strict),
    # an output independent of one input
    "vjp_unused_input": lambda lib, strict: F(lib).vjp(
        lambda a, b: mlp(lib)(a), (t(lib, "u"), t(lib, "v_u")), t(lib, "v_out"), strict=strict),
    "jvp_unused_input": lambda lib, strict: F(lib).jvp(
        lambda a, b: mlp(lib)(a), (t(lib, "u"), t(lib, "v_u")), (t(lib, "u"), t(lib, "v_u")),
        strict=strict),
    "jacobian_unused_input": lambda lib, strict: F(lib).jacobian(
        lambda a, b: (mlp(lib)(a), a * b), (t(lib, "u"), t(lib, "v_u")), strict=strict),
    "vhp_unused_input": lambda lib, strict: F(lib).vhp(
        lambda a, b: a.pow(3).sum(), (t(lib, "u"), t(lib, "v_u")), (t(lib, "u"), t(lib, "v_u")),
        strict=strict),
    "hvp_unused_input": lambda lib, strict: F(lib).hvp(
        lambda a, b: a.pow(3).sum(), (t(lib, "u"), t(lib, "v_u")), (t(lib, "u"), t(lib, "v_u")),
        strict=strict),
    "hessian_unused_input": lambda lib, strict: F(lib).hessian(
        lambda a, b: a.pow(3).sum(), (t(lib, "u"), t(lib, "v_u")), strict=strict),
    # a linear function: its jacobian does not depend on the input
    "hessian_linear": lambda lib, strict: F(lib).hessian(
        lambda w: (w * t(lib, "wc")).sum(), t(lib, "wc"), strict=strict),
    "vhp_linear": lambda lib, strict: F(lib).vhp(
        lambda a: (a * 3).sum(), t(lib, "u"), t(lib, "v_u"), strict=strict),
    "hvp_linear_in_one_input": lambda lib, strict: F(lib).hvp(
        lambda a, b: a.pow(2).sum() + b.sum(), (t(lib, "u"), t(lib, "v_u")),
        (t(lib, "u"), t(lib, "v_u")), strict=strict),
    # with create_graph: a first derivative independent of the input
    "vjp_linear_create_graph": lambda lib, strict: F(lib).vjp(
        lambda a: a * 2, t(lib, "u"), t(lib, "v_u"), strict=strict, create_graph=True),
    "jvp_linear_create_graph": lambda lib, strict: F(lib).jvp(
        lambda a: a * 2, t(lib, "u"), t(lib, "v_u"), strict=strict, create_graph=True),
    "jacobian_linear_create_graph": lambda lib, strict: F(lib).jacobian(
        lambda a, b: (a * b.sum(), a * 2), (t(lib, "u"), t(lib, "v_u")), strict=strict,
        create_graph=True),
    # vectorize and strict together are refused
    "jacobian_vectorize_strict": lambda lib, strict: F(lib).jacobian(
        mlp(lib), t(lib, "u"), strict=strict, vectorize=True),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_strict_errors(case) -> None:
    error_type, _ = raises(lambda lib: STRICT_CASES[case](lib, True))
    assert error_type == "RuntimeError"


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_without_strict_the_same_calls_succeed(case) -> None:
    """What strict refuses, the default mode computes (zeros for independent inputs)."""
    returns(lambda lib: STRICT_CASES[case](lib, False))


def test_strict_accepts_functions_that_depend_on_every_input() -> None:
    def program(lib):
        args = (t(lib, "wc"), t(lib, "bc"))
        f = cross_entropy_of_weights(lib)
        return (F(lib).jacobian(f, args, strict=True),
                F(lib).hessian(f, args, strict=True),
                F(lib).vhp(f, args, args, strict=True),
                F(lib).hvp(f, args, args, strict=True, create_graph=True),
                F(lib).jvp(mlp(lib), t(lib, "u"), t(lib, "v_u"), strict=True,
                           create_graph=True))

    returns(program)


# -- v ---------------------------------------------------------------------------------------

V_CASES = {
    "vjp_wrong_shape": lambda lib: F(lib).vjp(mlp(lib), t(lib, "u"), t(lib, "u")),
    "vjp_wrong_shape_tuple_outputs": lambda lib: F(lib).vjp(
        mlp_two_outputs(lib), t(lib, "u"), (t(lib, "v_out"), t(lib, "v_out"))),
    "vjp_tuple_of_two_for_one_output": lambda lib: F(lib).vjp(
        mlp(lib), t(lib, "u"), (t(lib, "v_out"), t(lib, "v_out"))),
    "vjp_one_for_two_outputs": lambda lib: F(lib).vjp(
        mlp_two_outputs(lib), t(lib, "u"), t(lib, "v_out")),
    "vjp_none_for_a_vector_output": lambda lib: F(lib).vjp(mlp(lib), t(lib, "u")),
    "vjp_none_for_two_outputs": lambda lib: F(lib).vjp(
        lambda a: (a.sum(), a.sum()), t(lib, "u")),
    "vjp_v_not_a_tensor": lambda lib: F(lib).vjp(mlp(lib), t(lib, "u"), [1.0, 2.0, 3.0]),
    "jvp_wrong_shape": lambda lib: F(lib).jvp(mlp(lib), t(lib, "u"), t(lib, "v_out")),
    "jvp_wrong_shape_tuple_inputs": lambda lib: F(lib).jvp(
        lambda a, b: a * b, (t(lib, "u"), t(lib, "v_u")), (t(lib, "u"), t(lib, "v_out"))),
    "jvp_tuple_too_short": lambda lib: F(lib).jvp(
        lambda a, b: a * b, (t(lib, "u"), t(lib, "v_u")), (t(lib, "u"),)),
    "jvp_none_for_a_vector_input": lambda lib: F(lib).jvp(mlp(lib), t(lib, "u")),
    "vhp_none_for_a_vector_input": lambda lib: F(lib).vhp(
        lambda a: a.pow(3).sum(), t(lib, "u")),
    "hvp_wrong_shape": lambda lib: F(lib).hvp(
        lambda a: a.pow(3).sum(), t(lib, "u"), t(lib, "v_out")),
    "vhp_two_for_one_input": lambda lib: F(lib).vhp(
        lambda a: a.pow(3).sum(), t(lib, "u"), (t(lib, "u"), t(lib, "u"))),
    "vhp_vector_output": lambda lib: F(lib).vhp(mlp(lib), t(lib, "u"), t(lib, "u")),
    "hvp_tuple_output": lambda lib: F(lib).hvp(
        lambda a: (a.sum(),), t(lib, "u"), t(lib, "u")),
    "hessian_vector_output": lambda lib: F(lib).hessian(mlp(lib), t(lib, "u")),
    "hessian_tuple_output": lambda lib: F(lib).hessian(
        lambda a: (a.pow(3).sum(),), t(lib, "u")),
}


@pytest.mark.parametrize("case", sorted(V_CASES))
def test_argument_errors(case) -> None:
    raises(V_CASES[case])


def test_v_may_be_none_for_one_element() -> None:
    def program(lib):
        s = lib.tensor([0.7], dtype=lib.float64)
        scalar = lib.tensor(0.3, dtype=lib.float64)
        return (F(lib).vjp(lambda a: (a * t(lib, "u")).pow(2).sum(), s),
                F(lib).jvp(lambda a: a.exp() * t(lib, "u"), scalar),
                F(lib).vhp(lambda a: a.pow(4).sum(), s),
                F(lib).hvp(lambda a: a.pow(4).sum(), (scalar,)))

    returns(program)


# -- vectorize and strategy ------------------------------------------------------------------

def test_vectorize_computes_the_same_jacobian_and_hessian() -> None:
    """gradgen has no vmap: vectorize=True computes the rows one by one, which gives what
    torch's vectorized computation gives."""
    def program(lib):
        return (F(lib).jacobian(mlp_two_outputs(lib), t(lib, "u"), vectorize=True),
                F(lib).jacobian(lambda a, b: a * b.sum(), (t(lib, "u"), t(lib, "v_u")),
                                vectorize=True, create_graph=True),
                F(lib).hessian(cross_entropy_of_weights(lib), (t(lib, "wc"), t(lib, "bc")),
                               vectorize=True))

    returns(program)


def test_unknown_strategies_are_assertion_errors() -> None:
    assert raises(lambda lib: F(lib).jacobian(mlp(lib), t(lib, "u"), strategy="backward")
                  )[0] == "AssertionError"
    assert raises(lambda lib: F(lib).hessian(
        lambda a: a.pow(3).sum(), t(lib, "u"), outer_jacobian_strategy="backward")
                  )[0] == "AssertionError"


def test_output_without_elements() -> None:
    """torch stacks no rows and fails; so does runtime."""
    raises(lambda lib: F(lib).jacobian(lambda a: a[:0], t(lib, "u")))
