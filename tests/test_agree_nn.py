"""gradgen beside torch on the inputs of OpInfo's reference samples where the two used to
differ (nn activations, pow, heaviside, igamma...): NaN and infinite inputs, zero bases,
the edges of the domain. Each case runs the same numbers through both libraries."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import runtime

NAN, INF = float("nan"), float("inf")


def _same(got: object, want: object) -> None:
    got_array = got.detach().numpy() if isinstance(got, runtime.Tensor) else np.asarray(got)
    want_array = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got_array.shape == want_array.shape
    np.testing.assert_allclose(got_array, want_array, rtol=1e-7, atol=1e-7, equal_nan=True)


def _both(function: Callable, *arrays: np.ndarray) -> None:
    """function(library, *tensors) in torch and in gradgen, compared."""
    want = function(torch, *(torch.tensor(a) for a in arrays))
    got = function(runtime, *(runtime.tensor(a) for a in arrays))
    if isinstance(want, tuple | list):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    else:
        _same(got, want)


def _grads(library, function, inputs, order):
    """d(sum(function(inputs) * w))/d(inputs) (and its gradient for order 2)."""
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    out = function(library, *leaves)
    weights = library.tensor(np.linspace(-1.5, 2.0, out.numel()).reshape(tuple(out.shape)))
    grads = library.autograd.grad((out * weights).sum(), leaves, create_graph=order == 2,
                                  allow_unused=True)
    if order == 1:
        return grads
    present = [g for g in grads if g is not None and g.requires_grad]
    total = sum((g * g.detach().sign()).sum() for g in present)
    return library.autograd.grad(total, leaves, allow_unused=True)


def _compare_grads(function, arrays, order):
    want = _grads(torch, function, [torch.tensor(a) for a in arrays], order)
    got = _grads(runtime, function, [runtime.tensor(a) for a in arrays], order)
    for g, w in zip(got, want, strict=True):
        if w is None or g is None:
            assert (w if g is None else g) is None or not np.any((w if g is None else g).numpy())
            continue
        _same(g, w)


# -- pow: the gradient in the exponent at a zero base ------------------------------------


def test_pow_second_order_at_a_zero_base_is_torchs_nan():
    base = np.array([0.0, 0.0, -0.0, 0.0, 2.0])
    exponent = np.array([1.0, 1.5707963267948966, 3.14159, 0.0, 0.5])
    _compare_grads(lambda lib, a, b: lib.pow(a, b), [base, exponent], 2)
    _compare_grads(lambda lib, a, b: lib.pow(a, b), [base, exponent], 1)


@pytest.mark.parametrize("number", [0.0, 2.5, -1.5])
def test_pow_of_a_number_base_first_and_second_order(number):
    exponent = np.array([-1.0, 0.0, 0.5, 2.0])
    _compare_grads(lambda lib, b: lib.pow(number, b), [exponent], 1)
    _compare_grads(lambda lib, b: lib.pow(number, b), [exponent], 2)


# -- heaviside and igamma at NaN --------------------------------------------------------


def test_heaviside_of_nan_is_zero():
    x = np.array([NAN, NAN, NAN, 0.0, -1.0, 2.0, 0.0])
    values = np.array([INF, -INF, NAN, NAN, 3.0, 4.0, 5.0])
    _both(lambda lib, a, b: lib.heaviside(a, b), x, values)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_edges_in_torchs_order(name):
    a = np.array([INF, NAN, NAN, 1.0, NAN, 0.0, INF, -1.0, 0.0, 0.0, 2.0])
    x = np.array([NAN, INF, NAN, NAN, 0.0, NAN, INF, NAN, 0.0, 3.0, 0.5])
    _both(lambda lib, p, q: getattr(lib, name)(p, q), a, x)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
@pytest.mark.parametrize("a", [250.0, 1e4, 1e8, 1e17, 1e20])
def test_igamma_for_large_a_near_x(name, a):
    """Where x rounds to a + 1 the continued fraction divided by zero; torch uses Temme's
    uniform expansion for a > 200 and |x - a| / a < 4.5 / sqrt(a)."""
    x = a * (1 + np.linspace(-4.4, 4.4, 23) / np.sqrt(a))
    _both(lambda lib, p, q: getattr(lib, name)(p, q), np.full_like(x, a), x)


# -- the activations' gradients at NaN: torch's vector code and scalar tail ---------------

EXTREMAL = np.array([INF, INF, INF, -INF, -INF, -INF, NAN, NAN, NAN])


def _every_third_nan(count: int) -> np.ndarray:
    values = np.linspace(-3.0, 3.0, count)
    values[::3] = NAN
    return values


ACTIVATIONS = {
    "elu": lambda lib, x: lib.nn.functional.elu(x, alpha=0.8),
    "celu": lambda lib, x: lib.nn.functional.celu(x, alpha=0.8),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("values", [EXTREMAL, _every_third_nan(64), _every_third_nan(37),
                                    np.full(20, NAN)], ids=["9", "64", "37", "20nan"])
def test_activation_at_nan(name, values):
    function = ACTIVATIONS[name]
    _both(function, values)
    _compare_grads(function, [values], 1)
    _compare_grads(function, [values], 2)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_forward_mode_at_nan(name):
    function = ACTIVATIONS[name]
    values = _every_third_nan(37)
    tangent = np.linspace(1.0, 2.0, 37)
    results = []
    for library in (torch, runtime):
        forward_ad = library.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(library.tensor(values), library.tensor(tangent))
            results.append(forward_ad.unpack_dual(function(library, dual)).tangent)
    _same(results[1], results[0])


def test_backward_kernels_at_nan_in_float32():
    values = _every_third_nan(41).astype(np.float32)
    grad = np.linspace(-1.0, 1.0, 41).astype(np.float32)
    for call in (lambda lib, g, x: lib.ops.aten.hardtanh_backward(g, x, -1.0, 1.0)
                 if lib is torch else lib.hardtanh_backward(g, x, -1.0, 1.0),
                 lambda lib, g, x: lib.ops.aten.elu_backward(g, 0.8, 1.0, 1.0, False, x)
                 if lib is torch else lib.elu_backward(g, 0.8, 1.0, 1.0, False, x)):
        _both(call, grad, values)


def test_celu_takes_its_alpha_as_a_float32_in_the_gradient():
    values = np.array([0.0, -0.3, -2.0, 1.0])
    _compare_grads(lambda lib, x: lib.nn.functional.celu(x, alpha=0.8), [values], 1)
    _compare_grads(lambda lib, x: lib.nn.functional.celu(x, alpha=0.3), [values], 2)


def test_elu_in_place_uses_elu_backward_of_the_result():
    values = np.array([-2.0, -0.5, 0.0, 0.5, NAN])
    for alpha in (0.8, 1.0):
        _compare_grads(lambda lib, x, alpha=alpha: lib.nn.functional.elu(x * 1, alpha=alpha,
                                                                         inplace=True),
                       [values], 1)
    for library in (torch, runtime):  # a negative alpha in place: torch's refusal
        x = library.tensor([-1.0, 1.0], requires_grad=True)
        y = library.nn.functional.elu(x * 1, alpha=-0.5, inplace=True)
        with pytest.raises(RuntimeError, match="negative slope"):
            y.sum().backward()


def test_prelu_forward_mode_with_a_weight_without_tangent():
    """torch's undefined tangent of the weight is a zero tensor: weight_t * self_p is zero
    even where self is infinite or NaN (the JVP is a where whose branch is such a sum)."""
    values = np.array([INF, 1.0, -INF, -2.0, NAN, 0.0, -0.0, 3.0, NAN])
    tangent = np.linspace(-1.0, 1.0, 9)
    results = []
    for library in (torch, runtime):
        forward_ad = library.autograd.forward_ad
        weight = library.tensor(0.25, dtype=library.float64)
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(library.tensor(values), library.tensor(tangent))
            out = library.nn.functional.prelu(dual, weight)
            results.append(forward_ad.unpack_dual(out).tangent)
    _same(results[1], results[0])


def test_embedding_with_sparse_true_runs_forward_and_refuses_backward():
    """torch's forward ignores sparse=True (only its gradient is sparse): gradgen's forward
    gives torch's values, and its backward, which would be sparse, raises."""
    weight = np.arange(15.0).reshape(5, 3)
    indices = np.array([[0, 2], [4, 2]])
    _both(lambda lib, w, i: lib.nn.functional.embedding(i, w, sparse=True), weight, indices)
    _both(lambda lib, w, i: lib.nn.functional.embedding(i, w, sparse=True, max_norm=1.0,
                                                      padding_idx=0), weight, indices)
    w = runtime.tensor(weight, requires_grad=True)
    out = runtime.nn.functional.embedding(runtime.tensor(indices), w, sparse=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        out.sum().backward()


def test_mish_second_order_above_exps_range_is_torchs_nan():
    values = np.array([1001.2, 800.0, 30.0, 1.5, -3.0, -1001.2])
    function = ACTIVATIONS_MORE["mish"]
    _compare_grads(function, [values], 1)
    _compare_grads(function, [values], 2)


def test_sinc_gradient_in_torchs_order_of_operations():
    values = np.array([0.0, 1e-170, -5.5e-7, 1e-3, 0.5, 2.0, -3.25])
    _compare_grads(ACTIVATIONS_MORE["sinc"], [values], 1)


ACTIVATIONS_MORE = {
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "sinc": lambda lib, x: lib.sinc(x),
}


@pytest.mark.parametrize("n", [0, 1])
def test_digamma_and_trigamma_in_numpy_at_their_edges(n):
    """Computed elementwise in numpy now (a reference sample has a million elements); at a
    tiny negative x the reflection keeps pi x (torch's modf), and trigamma at a tiny x is
    infinite instead of overflowing Python's float."""
    values = np.array([-4.97e-158, -2.3e-74, 1e-200, -1e-200, 0.0, -0.0, INF, -INF, NAN, -3.0,
                       -2.5, 0.5, 9.75, 10.0, 1e17, 1e300, 1e-320])
    _both(lambda lib, x: lib.polygamma(n, x), values)
    grid = np.linspace(-40.0, 40.0, 4001)
    _both(lambda lib, x: lib.polygamma(n, x), grid)


def test_zeta_at_its_edges_in_torchs_order():
    """zeta(nan, -inf) is inf (torch tests q <= 0 before NaN); an overflowing power is inf
    (Python's raised OverflowError); s = inf runs the summation as torch's does."""
    values = [NAN, INF, -INF, 0.0, -0.0, 1.0, 2.0, -2.0, -2.5, 0.5, 1e-300, -1e-300, 1e300,
              3.0, 9.5, 1.5, -1.5]
    s = np.array([a for a in values for _ in values])
    q = np.array([b for _ in values for b in values])
    _both(lambda lib, x, y: lib.special.zeta(x, y), s, q)


def test_erfcx_and_log_ndtr_far_in_the_tail():
    """erfcx above 50 as torch computes it (2 x erfcx(x) - 2/sqrt(pi) cancels as torch's, in
    the second order), and log_ndtr's t * t as torch rounds it (its gradient
    exp(-(result + x²/2)) magnifies the last bit far in the lower tail)."""
    far = np.array([1e20, 1e8, 5e7, 75.0, 51.0, 30.0, 1.0, -3.0])
    _compare_grads(lambda lib, x: lib.special.erfcx(x), [far], 2)
    _both(lambda lib, x: lib.special.erfcx(x), np.geomspace(20.0, 1e300, 500))
    tail = np.array([-4988429.2, -1e4, -40.0, -1.5, -0.5, 2.0])
    _compare_grads(lambda lib, x: lib.special.log_ndtr(x), [tail], 1)


@pytest.mark.parametrize("options", [{"sparse": True},
                                     {"sparse": True, "padding_idx": 0, "max_norm": 1.0}])
def test_embedding_bag_forward_with_gradient_options_gradgen_lacks(options):
    """A sparse gradient gradgen lacks (scale_grad_by_freq's gradient is torch's:
    tests/test_nnx_embedding_bag.py)."""
    weight = np.arange(25.0).reshape(5, 5) / 10
    indices = np.array([0, 2, 4, 1, 3, 3])
    offsets = np.array([0, 4])
    for mode in ("sum", "mean"):
        _both(lambda lib, w, i, o, mode=mode: lib.nn.functional.embedding_bag(
                  i, w, o, mode=mode, **options),
              weight, indices, offsets)
    w = runtime.tensor(weight, requires_grad=True)
    out = runtime.nn.functional.embedding_bag(runtime.tensor(indices), w,
                                              runtime.tensor(offsets), **options)
    with pytest.raises(NotImplementedError, match="embedding_bag"):
        out.sum().backward()


def test_erfinv_of_nan_is_nan():
    values = np.array([NAN, -NAN, 0.5, -0.999, 1.0, -1.0, 1.5, INF])
    _both(lambda lib, x: lib.erfinv(x), values)
    _compare_grads(lambda lib, x: lib.erfinv(x), [values], 1)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_polygamma_of_higher_order_on_a_grid(n):
    """zeta (polygamma's from order 2) is summed elementwise in numpy now: torch's values on
    a grid that crosses the poles, the negative axis and large x."""
    grid = np.concatenate([np.linspace(-12.0, 40.0, 2081), [1e-300, 1e6, -60.5, NAN, INF]])
    _both(lambda lib, x: lib.polygamma(n, x), grid)


def test_zeta_on_a_grid():
    s = np.repeat(np.array([1.0, 1.5, 2.0, 3.0, 7.5, 12.0]), 400)
    q = np.tile(np.linspace(-20.0, 60.0, 400), 6)
    _both(lambda lib, x, y: lib.special.zeta(x, y), s, q)
