"""torch.special against torch itself: every function's values over a sweep of inputs (edge
cases included), the nodes and gradients of the differentiable ones, out=, the Tensor methods
the new ops bring (i0, logit, igamma...) and the errors torch raises."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import runtime

SPECIAL_NAMES = sorted(torch.special.__all__)

# Inputs per kind of function: a wide sweep for the entire functions, a positive one for
# those defined on (0, inf), the unit interval for the inverse CDFs and logit.
WIDE = np.concatenate([np.linspace(-12, 12, 97), [0.0, -0.0, 1e-300, 0.5, 1.0, -1.0, 40.0,
                                                  -40.0, math.inf, -math.inf, math.nan]])
POSITIVE = np.concatenate([np.geomspace(1e-6, 60, 61), [0.0, 1.0, 5.0, 25.0, math.inf,
                                                         math.nan, -1.0]])
UNIT = np.concatenate([np.linspace(0, 1, 41), [1e-12, 1 - 1e-12, -0.5, 1.5, math.nan]])

UNARY = {
    "airy_ai": np.concatenate([np.linspace(-30, 110, 281), [-2.09, 2.09, 8.3203353, math.inf,
                                                            -math.inf, math.nan]]),
    "bessel_j0": np.concatenate([WIDE, [4.999999, 5.0, 5.000001, 300.0]]),
    "bessel_j1": np.concatenate([WIDE, [4.999999, 5.0, 5.000001, 300.0]]),
    "bessel_y0": POSITIVE, "bessel_y1": POSITIVE,
    "digamma": WIDE, "entr": WIDE, "erf": WIDE, "erfc": WIDE, "erfcx": WIDE,
    "erfinv": np.linspace(-1, 1, 41), "exp2": WIDE, "expit": WIDE, "expm1": WIDE,
    "gammaln": WIDE, "i0": WIDE, "i0e": WIDE, "i1": WIDE, "i1e": WIDE,
    "log1p": POSITIVE, "log_ndtr": WIDE, "logit": UNIT,
    "modified_bessel_i0": WIDE, "modified_bessel_i1": WIDE,
    "modified_bessel_k0": POSITIVE, "modified_bessel_k1": POSITIVE,
    "scaled_modified_bessel_k0": POSITIVE, "scaled_modified_bessel_k1": POSITIVE,
    "ndtr": WIDE, "ndtri": UNIT, "psi": WIDE, "round": WIDE * 1.37, "sinc": WIDE,
    "spherical_bessel_j0": np.concatenate([WIDE, [0.49, 0.5, 0.51]]),
}
POLYNOMIALS = [n for n in SPECIAL_NAMES if n.endswith(("_t", "_u", "_v", "_w", "_h", "_he", "_l",
                                                       "_p")) and "polynomial" in n]
BINARY = ["gammainc", "gammaincc", "xlogy", "xlog1py", "zeta"]


def _compare(ours, theirs, rtol: float, atol: float) -> None:
    assert ours.dtype == getattr(runtime, str(theirs.dtype).split(".")[1])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=atol)


def test_every_function_of_torch_special_is_there() -> None:
    assert sorted(runtime.special.__all__) == SPECIAL_NAMES
    assert all(callable(getattr(runtime.special, name)) for name in SPECIAL_NAMES)
    assert runtime.special.Tensor is runtime.Tensor
    with pytest.raises(AttributeError, match="torch.special.nothing"):
        runtime.special.nothing  # noqa: B018


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_values(name: str, dtype: str) -> None:
    values = UNARY[name].astype(dtype)
    ours = getattr(runtime.special, name)(runtime.tensor(values))
    theirs = getattr(torch.special, name)(torch.tensor(values))
    # float32: torch computes in float32, gradgen mostly in float64 and rounds once
    if dtype == "float32":
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5, atol=2e-6)
    else:
        _compare(ours, theirs, rtol=2e-13, atol=1e-15)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"round"}))
def test_unary_integer_input_gives_the_default_float(name: str) -> None:
    values = np.array([0, 1, 2, 3]) if name not in ("logit", "ndtri") else np.array([0, 1])
    ours = getattr(runtime.special, name)(runtime.tensor(values))
    theirs = getattr(torch.special, name)(torch.tensor(values))
    _compare(ours, theirs, rtol=1e-6, atol=1e-7)


DEGREES = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 30, 2.7, math.inf, -math.inf,
                    1e30, 100, 600])
POINTS = np.concatenate([np.linspace(-3, 3, 61), [1.0, -1.0, 0.0, 0.5, 1e-9, math.inf,
                                                  -math.inf]])


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_values(name: str) -> None:
    x, n = np.meshgrid(POINTS, DEGREES)
    ours = getattr(runtime.special, name)(runtime.tensor(x), runtime.tensor(n))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    _compare(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float32_and_scalar_forms(name: str) -> None:
    x = np.linspace(-1.5, 1.5, 13).astype("float32")
    n = np.array([0, 1, 2, 5, 9, 12], dtype="int64")
    ours, theirs = getattr(runtime.special, name), getattr(torch.special, name)
    got = ours(runtime.tensor(x)[:, None], runtime.tensor(n))
    want = theirs(torch.tensor(x)[:, None], torch.tensor(n))
    assert got.dtype == runtime.float32 and want.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    _compare(ours(runtime.tensor(x.astype("float64")), 4),
             theirs(torch.tensor(x.astype("float64")), 4), 1e-12, 1e-12)
    _compare(ours(0.25, runtime.tensor(n)), theirs(0.25, torch.tensor(n)), 1e-4, 1e-5)
    _compare(ours(runtime.tensor([1, 2, 3]), runtime.tensor([2, 3, 4])),
             theirs(torch.tensor([1, 2, 3]), torch.tensor([2, 3, 4])), 1e-6, 1e-6)


def test_polynomials_and_bessel_functions_are_not_differentiable() -> None:
    x = runtime.tensor([0.5, 1.5], requires_grad=True)
    assert not runtime.special.bessel_j0(x).requires_grad
    assert not runtime.special.chebyshev_polynomial_t(x, 3).requires_grad
    assert not torch.special.chebyshev_polynomial_t(torch.tensor([0.5], requires_grad=True),
                                                    3).requires_grad


BINARY_INPUTS = {
    "gammainc": (np.linspace(0.1, 8, 9), np.linspace(0.0, 12, 7)),
    "gammaincc": (np.linspace(0.1, 8, 9), np.linspace(0.0, 12, 7)),
    "xlogy": (np.array([0.0, -1.5, 2.0, 3.0]), np.array([0.0, 0.5, 2.0, -1.0, math.nan])),
    "xlog1py": (np.array([0.0, -1.5, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0, -2.0, math.nan])),
    "zeta": (np.array([1.0, 1.5, 2.0, 4.5, 0.5]), np.array([0.5, 1.0, 3.0, -2.0, -1.5])),
}


@pytest.mark.parametrize("name", BINARY)
def test_binary_values(name: str) -> None:
    a, b = BINARY_INPUTS[name]
    a, b = a[:, None], b[None, :]
    _compare(getattr(runtime.special, name)(runtime.tensor(a), runtime.tensor(b)),
             getattr(torch.special, name)(torch.tensor(a), torch.tensor(b)), 1e-8, 1e-12)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "zeta"])
def test_binary_scalar_forms(name: str) -> None:
    b = np.array([0.5, 2.0, 3.5])
    ours, theirs = getattr(runtime.special, name), getattr(torch.special, name)
    _compare(ours(2.0, runtime.tensor(b)), theirs(2.0, torch.tensor(b)), 1e-12, 1e-14)
    _compare(ours(runtime.tensor(b + 1), 2.0), theirs(torch.tensor(b + 1), 2.0), 1e-12, 1e-14)


def test_reductions_and_softmax() -> None:
    data = np.random.default_rng(0).standard_normal((3, 4))
    ours, theirs = runtime.tensor(data), torch.tensor(data)
    _compare(runtime.special.logsumexp(ours, 1), torch.special.logsumexp(theirs, 1), 1e-12, 0)
    _compare(runtime.special.logsumexp(ours, (0, 1), keepdim=True),
             torch.special.logsumexp(theirs, (0, 1), keepdim=True), 1e-12, 0)
    _compare(runtime.special.softmax(ours, 0), torch.special.softmax(theirs, 0), 1e-12, 0)
    _compare(runtime.special.log_softmax(ours, -1), torch.special.log_softmax(theirs, -1),
             1e-12, 0)
    _compare(runtime.special.softmax(runtime.tensor([1, 2]), 0, dtype=runtime.float64),
             torch.special.softmax(torch.tensor([1, 2]), 0, dtype=torch.float64), 1e-12, 0)
    _compare(runtime.special.log_softmax(ours.float(), 1, dtype=runtime.float64),
             torch.special.log_softmax(theirs.float(), 1, dtype=torch.float64), 1e-6, 0)
    _compare(runtime.special.multigammaln(ours.abs() + 2, 3),
             torch.special.multigammaln(theirs.abs() + 2, 3), 1e-12, 0)
    _compare(runtime.special.polygamma(2, ours.abs() + 0.5),
             torch.special.polygamma(2, theirs.abs() + 0.5), 1e-10, 0)
    _compare(runtime.special.round(ours * 10, decimals=1),
             torch.special.round(theirs * 10, decimals=1), 0, 0)


# -- gradients: the node torch records and the gradient it gives

GRADIENTS = [
    ("digamma", (), lambda x: x.abs() + 0.5), ("psi", (), lambda x: x.abs() + 0.5),
    ("entr", (), lambda x: x.abs() + 0.1), ("erf", (), None), ("erfc", (), None),
    ("erfcx", (), None), ("erfinv", (), lambda x: x.tanh() * 0.9), ("exp2", (), None),
    ("expit", (), None), ("expm1", (), None), ("gammaln", (), lambda x: x.abs() + 0.5),
    ("i0", (), None), ("i0e", (), None), ("i1", (), None), ("i1e", (), None),
    ("log1p", (), lambda x: x.abs()), ("log_ndtr", (), None), ("ndtr", (), None),
    ("logit", (), lambda x: x.sigmoid()), ("logit", (0.2,), lambda x: x.sigmoid()),
    ("ndtri", (), lambda x: x.sigmoid()), ("round", (), None), ("sinc", (), None),
    ("multigammaln", (2,), lambda x: x.abs() + 2), ("logsumexp", (1,), None),
    ("softmax", (1,), None), ("log_softmax", (0,), None),
]


@pytest.mark.parametrize(("name", "extra", "domain"), GRADIENTS,
                         ids=[f"{n}{e}" for n, e, _ in GRADIENTS])
def test_gradients_as_torch(name: str, extra: tuple, domain) -> None:
    data = np.random.default_rng(1).standard_normal((3, 4)) * 1.5
    results = []
    for lib in (runtime, torch):
        x = lib.tensor(data, requires_grad=True)
        inner = x if domain is None else domain(x)
        y = getattr(lib.special, name)(inner, *extra)
        (grad,) = lib.autograd.grad(y, x, lib.ones_like(y) * 0.5 + y.detach())
        results.append((y.grad_fn.name(), y.detach().numpy(), grad.numpy()))
    (our_node, our_value, our_grad), (node, value, grad) = results
    assert our_node == node
    np.testing.assert_allclose(our_value, value, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(our_grad, grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "xlogy", "xlog1py", "zeta"])
def test_binary_gradients_as_torch(name: str) -> None:
    rng = np.random.default_rng(2)
    a, b = rng.uniform(1.2, 3.0, (3, 1)), rng.uniform(0.3, 4.0, (4,))
    results = []
    for lib in (runtime, torch):
        other = lib.tensor(b, requires_grad=True)
        first = lib.tensor(a, requires_grad=name in ("xlogy", "xlog1py"))
        y = getattr(lib.special, name)(first, other)
        grads = lib.autograd.grad(y.sum(), [t for t in (first, other) if t.requires_grad])
        results.append((y.grad_fn.name(), [g.numpy() for g in grads]))
    assert results[0][0] == results[1][0]
    for ours, theirs in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("name", "what"), [("gammainc", "igamma: input"),
                                            ("gammaincc", "igammac: input"), ("zeta", "zeta")])
def test_gradient_torch_does_not_implement(name: str, what: str) -> None:
    message = f"the derivative for '{what}' is not implemented."
    for lib in (runtime, torch):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        y = getattr(lib.special, name)(x, lib.tensor([1.5, 0.5]))
        with pytest.raises(NotImplementedError) as error:
            y.sum().backward()
        assert str(error.value) == message


def test_second_order_of_i1_and_logit() -> None:
    data = np.array([-2.0, -0.3, 0.4, 1.7])
    results = []
    for lib in (runtime, torch):
        x = lib.tensor(data, requires_grad=True)
        (g,) = lib.autograd.grad(lib.special.i1(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        u = lib.tensor([0.2, 0.4, 0.6, 0.8], requires_grad=True)
        (h,) = lib.autograd.grad(lib.special.logit(u, 0.3).sum(), u, create_graph=True)
        (hh,) = lib.autograd.grad(h.sum(), u)
        results.append([t.detach().numpy() for t in (g, gg, h, hh)])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_tensor_methods_and_in_place_forms() -> None:
    data = np.array([0.1, 0.35, 0.8])
    for method in ("i0", "logit", "sinc", "xlogy"):
        args = (2.0,) if method == "xlogy" else ()
        ours = getattr(runtime.tensor(data), method)(*args)
        theirs = getattr(torch.tensor(data), method)(*args)
        _compare(ours, theirs, 1e-12, 0)
    ours, theirs = runtime.tensor(data), torch.tensor(data)
    ours.logit_(0.2), theirs.logit_(0.2)
    _compare(ours, theirs, 1e-12, 0)
    runtime.i0_(ours), torch.i0_(theirs)
    _compare(ours, theirs, 1e-12, 0)
    ours.igamma_(runtime.tensor(2.0)), theirs.igamma_(torch.tensor(2.0))
    _compare(ours, theirs, 1e-12, 0)
    assert not hasattr(runtime.Tensor, "special_entr")
    assert hasattr(torch.Tensor, "special_entr") is False


def test_out() -> None:
    for lib in (runtime, torch):
        out = lib.empty(3)
        result = lib.special.bessel_j0(lib.tensor([0.5, 1.0, 2.0]), out=out)
        assert result is out
    ours, theirs = runtime.empty(3), torch.empty(3)
    runtime.special.ndtr(runtime.tensor([0.5, 1.0, 2.0]), out=ours)
    torch.special.ndtr(torch.tensor([0.5, 1.0, 2.0]), out=theirs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    ours, theirs = runtime.empty(2, dtype=runtime.int64), torch.empty(2, dtype=torch.int64)
    errors = []
    for lib, out in ((runtime, ours), (torch, theirs)):
        with pytest.raises(RuntimeError) as error:
            lib.special.erfcx(lib.tensor([0.5, 1.0]), out=out)
        errors.append(str(error.value))
    assert errors[0] == errors[1]


def test_errors_as_torch() -> None:
    for name in ("bessel_j0", "ndtr", "entr", "erf", "expit", "gammaln", "i0", "logit", "i1e"):
        messages = []
        for lib in (runtime, torch):
            with pytest.raises(TypeError) as error:
                getattr(lib.special, name)("a")
            messages.append(str(error.value))
        assert messages[0] == messages[1], name
    for lib in (runtime, torch):
        with pytest.raises(NotImplementedError, match='"igamma_cpu" not implemented for'):
            lib.special.gammainc(lib.tensor([1, 2]), lib.tensor([1, 2]))
        with pytest.raises(NotImplementedError, match='"round_vml_cpu" not implemented for'):
            lib.special.round(lib.tensor([1, 2]))
