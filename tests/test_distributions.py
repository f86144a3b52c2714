"""torch.distributions against torch's: samples bit for bit under the same seed, log_prob,
entropy, moments, cdf/icdf, their gradients (float64), shapes, reprs and errors."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import runtime as rt
from tests.oracle import same, same_outcome

RNG = np.random.default_rng(7)


def _tensor(lib: Any, array: Any, grad: bool = False) -> Any:
    return lib.tensor(np.asarray(array), dtype=lib.float64, requires_grad=grad)


def _positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 3.0, shape)


def _simplex(*shape: int) -> np.ndarray:
    weights = RNG.uniform(0.1, 1.0, shape)
    return weights / weights.sum(-1, keepdims=True)


def _lower_cholesky(n: int) -> np.ndarray:
    return np.tril(RNG.normal(size=(n, n)) * 0.3) + np.eye(n) * 1.5


# name -> (constructor, parameter arrays, a value inside the support, keyword arguments)
CASES: dict[str, tuple] = {
    "Normal": (lambda D, a, b: D.Normal(a, b), [RNG.normal(size=(2, 3)), _positive(2, 3)],
               RNG.normal(size=(2, 3))),
    "Uniform": (lambda D, a, b: D.Uniform(a, a + b), [RNG.normal(size=(3,)), _positive(3)],
                None),
    "Bernoulli-probs": (lambda D, p: D.Bernoulli(probs=p), [RNG.uniform(0.1, 0.9, (4,))],
                        np.array([0.0, 1.0, 1.0, 0.0])),
    "Bernoulli-logits": (lambda D, x: D.Bernoulli(logits=x), [RNG.normal(size=(2, 2))],
                         np.array([[1.0, 0.0], [0.0, 1.0]])),
    "Categorical-probs": (lambda D, p: D.Categorical(probs=p), [_simplex(2, 4)],
                          np.array([3.0, 0.0])),
    "Categorical-logits": (lambda D, x: D.Categorical(logits=x), [RNG.normal(size=(5,))],
                           np.array([4.0])),
    "Exponential": (lambda D, r: D.Exponential(r), [_positive(3)], _positive(3)),
    "Gamma": (lambda D, c, r: D.Gamma(c, r), [_positive(2, 3), _positive(2, 3)],
              _positive(2, 3)),
    "Beta": (lambda D, a, b: D.Beta(a, b), [_positive(3), _positive(3)],
             RNG.uniform(0.1, 0.9, (3,))),
    "Dirichlet": (lambda D, c: D.Dirichlet(c), [_positive(2, 3)], _simplex(2, 3)),
    "MultivariateNormal-scale_tril": (
        lambda D, m, s: D.MultivariateNormal(m, scale_tril=s),
        [RNG.normal(size=(2, 3)), _lower_cholesky(3)], RNG.normal(size=(4, 2, 3))),
    "MultivariateNormal-covariance": (
        lambda D, m, s: D.MultivariateNormal(m, covariance_matrix=s @ s.mT),
        [RNG.normal(size=(3,)), _lower_cholesky(3)], RNG.normal(size=(3,))),
    "MultivariateNormal-precision": (
        lambda D, m, s: D.MultivariateNormal(m, precision_matrix=s @ s.mT),
        [RNG.normal(size=(2,)), _lower_cholesky(2)], RNG.normal(size=(2,))),
    "Independent": (lambda D, a, b: D.Independent(D.Normal(a, b), 1),
                    [RNG.normal(size=(2, 3)), _positive(2, 3)], RNG.normal(size=(2, 3))),
    "Laplace": (lambda D, a, b: D.Laplace(a, b), [RNG.normal(size=(3,)), _positive(3)],
                RNG.normal(size=(3,))),
    "Cauchy": (lambda D, a, b: D.Cauchy(a, b), [RNG.normal(size=(3,)), _positive(3)],
               RNG.normal(size=(3,))),
    "LogNormal": (lambda D, a, b: D.LogNormal(a, b), [RNG.normal(size=(3,)), _positive(3)],
                  _positive(3)),
    "HalfNormal": (lambda D, s: D.HalfNormal(s), [_positive(3)], _positive(3)),
    "HalfCauchy": (lambda D, s: D.HalfCauchy(s), [_positive(3)], _positive(3)),
    "Gumbel": (lambda D, a, b: D.Gumbel(a, b), [RNG.normal(size=(3,)), _positive(3)],
               RNG.normal(size=(3,))),
    "Weibull": (lambda D, a, b: D.Weibull(a, b), [_positive(3), _positive(3)], _positive(3)),
    "Pareto": (lambda D, a, b: D.Pareto(a, b), [_positive(3) * 0.2, _positive(3) + 2],
               _positive(3) + 1),
    "StudentT": (lambda D, d, a, b: D.StudentT(d, a, b),
                 [_positive(3) + 2, RNG.normal(size=(3,)), _positive(3)], RNG.normal(size=(3,))),
    "Chi2": (lambda D, d: D.Chi2(d), [_positive(2, 2)], _positive(2, 2)),
    "Geometric": (lambda D, p: D.Geometric(p), [RNG.uniform(0.2, 0.9, (3,))],
                  np.array([0.0, 3.0, 1.0])),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(p), [_simplex(2, 3)],
                          np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])),
    "Multinomial": (lambda D, p: D.Multinomial(5, p), [_simplex(2, 3)],
                    np.array([[1.0, 3.0, 1.0], [5.0, 0.0, 0.0]])),
    "Binomial": (lambda D, p: D.Binomial(12, p), [RNG.uniform(0.1, 0.9, (4,))],
                 np.array([0.0, 3.0, 12.0, 7.0])),
    "Poisson": (lambda D, r: D.Poisson(r), [_positive(4) * 5], np.array([0.0, 3.0, 12.0, 7.0])),
    "RelaxedBernoulli": (lambda D, t, p: D.RelaxedBernoulli(t, probs=p),
                         [np.array(0.7), RNG.uniform(0.1, 0.9, (3,))],
                         RNG.uniform(0.1, 0.9, (3,))),
    "MixtureSameFamily": (lambda D, w, m, s: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Normal(m, s)),
        [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3)), _positive(2, 3)],
        RNG.normal(size=(2,))),
    "InverseGamma": (lambda D, c, r: D.InverseGamma(c, r), [_positive(3) + 2, _positive(3)],
                     _positive(3)),
    "Kumaraswamy": (lambda D, a, b: D.Kumaraswamy(a, b), [_positive(3), _positive(3)],
                    RNG.uniform(0.1, 0.9, (3,))),
    "LogisticNormal": (lambda D, a, b: D.LogisticNormal(a, b),
                       [RNG.normal(size=(2, 3)), _positive(2, 3)], _simplex(2, 4)),
    "FisherSnedecor": (lambda D, a, b: D.FisherSnedecor(a, b), [_positive(3) + 1,
                                                               _positive(3) + 4], _positive(3)),
    "NegativeBinomial": (lambda D, p: D.NegativeBinomial(4.0, p), [RNG.uniform(0.2, 0.8, (3,))],
                         np.array([0.0, 2.0, 9.0])),
    "RelaxedOneHotCategorical": (lambda D, t, p: D.RelaxedOneHotCategorical(t, probs=p),
                                 [np.array(0.6), _simplex(2, 3)], _simplex(2, 3)),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p),
                            [np.array([0.2, 0.4995, 0.8])], RNG.uniform(0.1, 0.9, (3,))),
    "LowRankMultivariateNormal": (lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
                                  [RNG.normal(size=(2, 3)), RNG.normal(size=(3, 2)),
                                   _positive(3)], RNG.normal(size=(2, 3))),
    "VonMises": (lambda D, a, k: D.VonMises(a, k), [RNG.normal(size=(3,)), _positive(3)],
                 RNG.normal(size=(3,))),
    "TransformedDistribution": (lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.AffineTransform(1.0, 2.0), D.SigmoidTransform()]),
        [RNG.normal(size=(3,)), _positive(3)], RNG.uniform(0.1, 0.9, (3,))),
}


# torch's Uniform has an entropy without a gradient; these have none at all
NO_ENTROPY = {"Uniform", "RelaxedBernoulli", "MixtureSameFamily", "TransformedDistribution",
              "Poisson", "LogisticNormal", "NegativeBinomial", "RelaxedOneHotCategorical",
              "FisherSnedecor", "VonMises"}

# Samples made by float transcendental functions of torch's draws (exp, log1p, sigmoid...):
# the draws are torch's, the functions round as numpy's do (within an ulp or two).
ROUNDED_SAMPLES = {"Laplace", "LogNormal", "Gumbel", "Weibull", "Pareto", "RelaxedBernoulli",
                   "TransformedDistribution", "InverseGamma", "Kumaraswamy", "LogisticNormal",
                   "RelaxedOneHotCategorical", "ContinuousBernoulli", "GeneralizedPareto",
                   "FisherSnedecor", "LowRankMultivariateNormal", "VonMises"}


def _value(lib: Any, dist: Any, array: Any) -> Any:
    if array is None:  # a value inside the support of each
        low = dist.low if hasattr(dist, "low") else dist.loc
        high = dist.high if hasattr(dist, "high") else dist.loc + dist.scale
        return (low + high).detach() / 2
    return _tensor(lib, array)


def _attributes(dist: Any) -> dict:
    """What a distribution reports, each attribute torch has, as plain values or tensors."""
    found: dict[str, Any] = {"repr": repr(dist), "batch_shape": tuple(dist.batch_shape),
                             "event_shape": tuple(dist.event_shape),
                             "support": repr(dist.support), "has_rsample": dist.has_rsample}
    for name in ("mean", "mode", "variance", "stddev"):
        try:
            found[name] = getattr(dist, name)
        except NotImplementedError as error:
            found[name] = str(error).split("'")[-2] if "'" in str(error) else "none"
    return found


def _run(lib: Any, name: str, seed: int = 0) -> dict:
    make, arrays, value = CASES[name]
    params = [_tensor(lib, a, grad=True) for a in arrays]
    dist = make(lib.distributions, *params)
    lib.manual_seed(seed)
    result = _attributes(dist)
    result["sample"] = dist.sample()
    result["samples"] = dist.sample((3, 2))
    scores = dist.log_prob(_value(lib, dist, value))
    result["log_prob"] = scores
    total = scores.sum()
    if name not in NO_ENTROPY:
        result["entropy"] = dist.entropy()
        total = total + result["entropy"].sum()
    if dist.has_rsample:
        result["rsample"] = dist.rsample((2,))
        total = total + (result["rsample"] * 0.5).sum()
    result["grads"] = list(lib.autograd.grad(total, params, allow_unused=True))
    expanded = dist.expand((4,) + tuple(dist.batch_shape))
    result["expanded"] = (tuple(expanded.batch_shape), repr(expanded),
                          expanded.log_prob(_value(lib, dist, value)))
    return result


def _compare(ours: Any, theirs: Any, key: str = "") -> None:
    if isinstance(theirs, dict):
        assert set(ours) == set(theirs)
        for k in theirs:
            _compare(ours[k], theirs[k], k)
    elif isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs), key
        for a, b in zip(ours, theirs, strict=True):
            _compare(a, b, key)
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, rt.Tensor), key
        assert str(ours.dtype) == str(theirs.dtype), key
        assert tuple(ours.shape) == tuple(theirs.shape), key
        mine, expected = ours.detach().numpy(), theirs.detach().numpy()
        if key in ("sample", "samples", "rsample") and expected.dtype.kind == "f":
            # a sample is drawn bit for bit; rsample's arithmetic may round differently
            np.testing.assert_allclose(mine, expected, rtol=1e-12, atol=1e-12, err_msg=key)
        else:
            np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=1e-10, err_msg=key)
    elif theirs is None:
        assert ours is None, key
    else:
        assert ours == theirs, key


@pytest.mark.parametrize("name", sorted(CASES))
def test_distribution_against_torch(name: str) -> None:
    _compare(_run(rt, name), _run(torch, name))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["Normal", "Gamma", "Dirichlet", "Beta", "Exponential",
                                  "Uniform", "Bernoulli-probs", "Categorical-probs",
                                  "MultivariateNormal-scale_tril", "Laplace", "Cauchy",
                                  "LogNormal", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull",
                                  "Pareto", "StudentT", "Chi2", "Geometric",
                                  "OneHotCategorical", "Multinomial", "Binomial", "Poisson",
                                  "RelaxedBernoulli", "MixtureSameFamily",
                                  "TransformedDistribution", "InverseGamma", "Kumaraswamy",
                                  "LogisticNormal", "FisherSnedecor", "NegativeBinomial",
                                  "RelaxedOneHotCategorical", "ContinuousBernoulli",
                                  "LowRankMultivariateNormal", "VonMises"])
def test_samples_are_torch_numbers_bit_for_bit(name: str, dtype: str) -> None:
    make, arrays, _ = CASES[name]

    def draw(lib: Any) -> np.ndarray:
        params = [lib.tensor(np.asarray(a), dtype=getattr(lib, dtype)) for a in arrays]
        dist = make(lib.distributions, *params)
        lib.manual_seed(5)
        first = dist.sample((7,))
        second = dist.rsample((3,)) if dist.has_rsample else dist.sample((2,))
        return np.concatenate([first.numpy().ravel(), second.numpy().ravel(),
                               lib.rand(2).numpy().astype(first.numpy().dtype)])

    ours, theirs = draw(rt), draw(torch)
    assert ours.dtype == theirs.dtype
    if name.startswith("MultivariateNormal") or name in ROUNDED_SAMPLES:
        # torch's draws, then a matmul or a transcendental function that rounds
        single = dtype == "float32"
        np.testing.assert_allclose(ours, theirs, rtol=1e-6 if single else 1e-14,
                                   atol=1e-6 if single else 1e-15)
    else:
        np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))


@pytest.mark.parametrize("alpha", [0.05, 0.4, 0.9, 1.0, 2.5, 7.9, 8.5, 40.0, 300.0])
def test_standard_gamma_and_its_gradient(alpha: float) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(11)
        concentration = lib.full((200,), alpha, dtype=lib.float64, requires_grad=True)
        x = lib._standard_gamma(concentration)
        (grad,) = lib.autograd.grad(x.sum(), concentration)
        return x.detach().numpy(), grad.numpy()

    (x_ours, grad_ours), (x_theirs, grad_theirs) = program(rt), program(torch)
    np.testing.assert_array_equal(x_ours, x_theirs)
    np.testing.assert_allclose(grad_ours, grad_theirs, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("concentration", [[0.1, 0.2], [0.5, 9.0, 0.3], [7.0, 8.0],
                                           [2.0, 3.0, 4.0], [30.0, 40.0], [1.5, 0.05, 60.0]])
def test_dirichlet_rsample_gradient(concentration: list) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(3)
        alpha = lib.tensor(concentration, dtype=lib.float64, requires_grad=True)
        dist = lib.distributions.Dirichlet(alpha)
        x = dist.rsample((50,))
        weights = lib.arange(len(concentration), dtype=lib.float64) + 1
        (grad,) = lib.autograd.grad((x * weights).sum(), alpha)
        return x.detach().numpy(), grad.numpy()

    (x_ours, grad_ours), (x_theirs, grad_theirs) = program(rt), program(torch)
    np.testing.assert_array_equal(x_ours, x_theirs)
    np.testing.assert_allclose(grad_ours, grad_theirs, rtol=1e-10)


def test_float32_gamma_keeps_float32_rounding() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(2)
        return lib._standard_gamma(lib.tensor([0.3, 0.7, 1.0, 3.3, 12.0] * 20)).numpy()

    np.testing.assert_array_equal(program(rt), program(torch))


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy",
                                  "HalfNormal", "HalfCauchy", "LogNormal", "Gumbel",
                                  "ContinuousBernoulli", "Weibull", "Pareto", "Kumaraswamy"])
def test_cdf_and_icdf(name: str) -> None:
    make, arrays, _ = CASES[name]

    def program(lib: Any) -> Any:
        params = [_tensor(lib, a, grad=True) for a in arrays]
        dist = make(lib.distributions, *params)
        q = lib.tensor(np.linspace(0.05, 0.95, 3), dtype=lib.float64)
        q = q.expand(tuple(dist.batch_shape)) if dist.batch_shape else q[0]
        x = dist.icdf(q)
        p = dist.cdf(x.detach())
        grads = lib.autograd.grad((x.sum() + p.sum()), params)
        return [x, p, *grads]

    _compare(program(rt), program(torch))


KL_PAIRS = [
    ("Normal", "Normal"), ("Bernoulli-probs", "Bernoulli-probs"),
    ("Categorical-probs", "Categorical-probs"), ("Beta", "Beta"), ("Gamma", "Gamma"),
    ("Dirichlet", "Dirichlet"), ("Exponential", "Exponential"), ("Uniform", "Uniform"),
    ("MultivariateNormal-scale_tril", "MultivariateNormal-covariance"),
    ("Independent", "Independent"), ("Beta", "Normal"), ("Beta", "Gamma"),
    ("Beta", "Exponential"), ("Gamma", "Normal"), ("Gamma", "Exponential"),
    ("Exponential", "Gamma"), ("Exponential", "Normal"), ("Normal", "Gamma"),
    ("Uniform", "Normal"), ("Uniform", "Gamma"), ("Uniform", "Exponential"),
    ("Gamma", "Uniform"), ("Exponential", "Uniform"), ("Beta", "Uniform"),
]

# the same batch shape for every distribution of a KL pair
KL_PARAMS = {
    "Normal": [RNG.normal(size=(3,)), _positive(3)],
    "Bernoulli-probs": [RNG.uniform(0.1, 0.9, (3,))],
    "Categorical-probs": [_simplex(3, 4)],
    "Beta": [_positive(3), _positive(3)],
    "Gamma": [_positive(3), _positive(3)],
    "Dirichlet": [_positive(3, 2)],
    "Exponential": [_positive(3)],
    "Uniform": [RNG.uniform(0.1, 0.3, (3,)), RNG.uniform(0.1, 0.5, (3,))],
    "MultivariateNormal-scale_tril": [RNG.normal(size=(3, 2)), _lower_cholesky(2)],
    "MultivariateNormal-covariance": [RNG.normal(size=(2,)), _lower_cholesky(2)],
    "Independent": [RNG.normal(size=(2, 3)), _positive(2, 3)],
}


@pytest.mark.parametrize(("p_name", "q_name"), KL_PAIRS)
def test_kl_divergence(p_name: str, q_name: str) -> None:
    def program(lib: Any) -> Any:
        made = []
        for name in (p_name, q_name):
            params = [_tensor(lib, a, grad=True) for a in KL_PARAMS[name]]
            made.append((CASES[name][0](lib.distributions, *params), params))
        (p, p_params), (q, q_params) = made
        kl = lib.distributions.kl_divergence(p, q)
        finite = kl.isfinite()
        total = lib.where(finite, kl, lib.zeros_like(kl)).sum()
        if not total.requires_grad:  # an infinite KL: a constant
            return [kl]
        grads = lib.autograd.grad(total, p_params + q_params, allow_unused=True)
        return [kl, *grads]

    _compare(program(rt), program(torch))


def test_exponential_family_entropy_and_kl_by_bregman() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        loc = _tensor(lib, [0.1, -0.3], grad=True)
        scale = _tensor(lib, [1.2, 0.7], grad=True)
        p, q = D.Normal(loc, scale), D.Normal(loc * 2, scale + 1)
        entropy = D.ExponentialFamily.entropy(p)
        kl = D.kl.kl_divergence.__wrapped__(p, q) if hasattr(D.kl.kl_divergence,
                                                              "__wrapped__") else None
        bregman = D.kl._kl_expfamily_expfamily(p, q)
        grads = lib.autograd.grad(entropy.sum() + bregman.sum(), [loc, scale])
        gamma = D.Gamma(scale, scale + 1)
        return [entropy, bregman, *grads, D.ExponentialFamily.entropy(gamma), kl]

    _compare(program(rt), program(torch))


def test_register_kl_and_dispatch() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions

        class MyNormal(D.Normal):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _mine(p: Any, q: Any) -> Any:
            return p.loc * 0 + 42

        found = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item()
        base = D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 1.0)).item()
        return found, base

    assert same(program)[0][1] == (42.0, 0.5)


def test_kl_errors() -> None:
    same(lambda lib: lib.distributions.kl_divergence(lib.distributions.Bernoulli(0.3),
                                                     lib.distributions.Normal(0.0, 1.0)))
    same(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Independent(lib.distributions.Normal(lib.zeros(2, 2), 1.0), 1),
        lib.distributions.Independent(lib.distributions.Normal(lib.zeros(2, 2), 1.0), 2)))


def _error_programs() -> dict:
    def D(lib: Any) -> Any:
        return lib.distributions

    return {
        "bad scale": lambda lib: D(lib).Normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
        "nan loc": lambda lib: D(lib).Normal(lib.tensor([math.nan, 0.0]), 1.0),
        "bad probs": lambda lib: D(lib).Bernoulli(probs=lib.tensor([0.5, 1.5])),
        "both": lambda lib: D(lib).Bernoulli(probs=0.3, logits=0.1),
        "neither": lambda lib: D(lib).Categorical(),
        "0-d probs": lambda lib: D(lib).Categorical(probs=lib.tensor(0.3)),
        "0-d logits": lambda lib: D(lib).Categorical(logits=lib.tensor(0.3)),
        "low>=high": lambda lib: D(lib).Uniform(lib.tensor([0.0, 2.0]), lib.tensor([1.0, 1.0])),
        "not a simplex": lambda lib: D(lib).Dirichlet(lib.tensor([1.0, -1.0])),
        "0-d concentration": lambda lib: D(lib).Dirichlet(lib.tensor(1.0)),
        "mvn none": lambda lib: D(lib).MultivariateNormal(lib.zeros(2)),
        "mvn two": lambda lib: D(lib).MultivariateNormal(lib.zeros(2), lib.eye(2),
                                                         scale_tril=lib.eye(2)),
        "mvn 0-d loc": lambda lib: D(lib).MultivariateNormal(lib.tensor(0.0), lib.eye(2)),
        "mvn 1-d cov": lambda lib: D(lib).MultivariateNormal(lib.zeros(2), lib.ones(2)),
        "mvn 1-d tril": lambda lib: D(lib).MultivariateNormal(lib.zeros(2),
                                                              scale_tril=lib.ones(2)),
        "mvn not pd": lambda lib: D(lib).MultivariateNormal(
            lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
        "independent ndims": lambda lib: D(lib).Independent(D(lib).Normal(lib.zeros(2), 1.0), 2),
        "log_prob outside support": lambda lib: D(lib).Exponential(
            lib.tensor([1.0, 2.0])).log_prob(lib.tensor([1.0, -1.0])),
        "log_prob not a tensor": lambda lib: D(lib).Normal(0.0, 1.0).log_prob(0.5),
        "log_prob event shape": lambda lib: D(lib).MultivariateNormal(
            lib.zeros(3), lib.eye(3)).log_prob(lib.zeros(2)),
        "log_prob batch shape": lambda lib: D(lib).Normal(lib.zeros(3), 1.0).log_prob(
            lib.zeros(2)),
        "categorical support": lambda lib: D(lib).Categorical(lib.ones(3)).log_prob(
            lib.tensor(3)),
        "beta support": lambda lib: D(lib).Beta(1.0, 2.0).log_prob(lib.tensor(1.5)),
        "no mode": lambda lib: D(lib).Distribution().mode,
        "independent enumerate": lambda lib: D(lib).Independent(
            D(lib).Bernoulli(lib.ones(2) / 2), 1).enumerate_support(),
        "custom init expand": lambda lib: _subclass(lib)(0.0, 1.0).expand((2,)),
        "validate flag": lambda lib: D(lib).Distribution.set_default_validate_args(3),
    }


def _subclass(lib: Any) -> type:
    class Shifted(lib.distributions.Normal):
        def __init__(self, loc: Any, scale: Any) -> None:
            super().__init__(loc + 1, scale)

    return Shifted


@pytest.fixture(autouse=True)
def _validation_on() -> Any:
    """Validation as each library's default: on. (torch._dynamo turns torch's off for the
    whole process when it first compiles, so a test that ran torch.compile before this file
    would have torch accept what it refuses here.)"""
    import torch

    saved = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    rt.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(saved)


@pytest.mark.parametrize("case", sorted(_error_programs()))
def test_errors_as_torch(case: str) -> None:
    outcome = same_outcome(_error_programs()[case])  # (torch warns some of these once)
    assert outcome[0] == "raises"


def test_validate_args_off_accepts_what_validation_refuses() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        dist = D.Normal(lib.zeros(2), lib.tensor([1.0, -1.0]), validate_args=False)
        scores = dist.log_prob(lib.tensor([0.5, 0.5]))
        return [scores[0].item(), scores.isnan().tolist(),
                D.Exponential(1.0, validate_args=False).log_prob(lib.tensor(-1.0)).item()]

    assert same(program)[0][0] == "returns"


def test_lazy_probs_and_logits() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        b = D.Bernoulli(logits=lib.tensor([0.3, -2.0]))
        before = sorted(k for k in ("probs", "logits") if k in b.__dict__)
        probs = b.probs.tolist()
        after = sorted(k for k in ("probs", "logits") if k in b.__dict__)
        c = D.Categorical(probs=lib.tensor([[1.0, 3.0], [2.0, 2.0]]))
        # log of the normalised probabilities: torch's vectorised float32 log may differ
        # from numpy's in the last bit depending on the CPU, so compared to 7 digits.
        logits = [[round(v, 7) for v in row] for row in c.logits.tolist()]
        return (before, after, probs, repr(b), repr(c), logits, repr(c),
                c.param_shape, b.param_shape, c.enumerate_support().tolist(),
                c.enumerate_support(expand=False).shape, b.enumerate_support().tolist(),
                repr(b.mode), c.mode.tolist(), repr(c.mean))

    assert same(program)[0][0] == "returns"


def test_perplexity() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        return [D.Bernoulli(logits=_tensor(lib, [0.3, -2.0])).perplexity(),
                D.Categorical(probs=_tensor(lib, [[1.0, 3.0], [2.0, 2.0]])).perplexity(),
                D.Normal(0.0, _tensor(lib, [1.0, 2.0])).perplexity()]

    _compare(program(rt), program(torch))


def test_constraints_reprs_and_checks() -> None:
    def program(lib: Any) -> Any:
        C = lib.distributions.constraints
        x = lib.tensor([[0.2, 0.8], [0.5, 0.6]])
        found = []
        for constraint in (C.real, C.positive, C.nonnegative, C.unit_interval, C.boolean,
                           C.simplex, C.real_vector, C.greater_than(1.5),
                           C.greater_than_eq(0.2), C.less_than(0.7), C.interval(0.1, 0.6),
                           C.half_open_interval(0.2, 0.6), C.integer_interval(0, 3),
                           C.nonnegative_integer, C.positive_integer, C.one_hot,
                           C.independent(C.positive, 1), C.lower_triangular,
                           C.lower_cholesky, C.square, C.symmetric, C.positive_definite,
                           C.positive_semidefinite, C.corr_cholesky, C.multinomial(3),
                           C.cat([C.positive, C.real], 1), C.stack([C.positive, C.real], 1)):
            found.append((repr(constraint), constraint.is_discrete, constraint.event_dim,
                          constraint.check(x).tolist()))
        found.append((C.is_dependent(C.dependent), C.is_dependent(C.real),
                      repr(C.MixtureSameFamilyConstraint(C.real))))
        return found

    assert same(program)[0][0] == "returns"


def test_dependent_constraint_errors() -> None:
    same(lambda lib: lib.distributions.constraints.dependent.check(lib.ones(1)))
    same(lambda lib: lib.distributions.constraints.dependent.event_dim)
    same(lambda lib: lib.distributions.constraints.dependent.is_discrete)
    same(lambda lib: repr(lib.distributions.Uniform.support))


def test_repr_of_scalar_and_batched_parameters() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        return [repr(D.Normal(0.0, 1.0)), repr(D.Normal(lib.zeros(3), 2.0)),
                repr(D.Uniform(lib.tensor([0.0]), 1.0)), repr(D.Gamma(2.0, 3)),
                repr(D.Beta(2.0, 3.0)), repr(D.Independent(D.Normal(lib.zeros(2, 3), 1.0), 1)),
                repr(D.MultivariateNormal(lib.zeros(2), lib.eye(2))),
                repr(D.Dirichlet(lib.ones(3))), str(D.Categorical(logits=lib.zeros(4)))]

    assert same(program)[0][0] == "returns"


def test_sample_n_warns() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        return lib.distributions.Normal(0.0, 1.0).sample_n(3).tolist()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(program)[0][0] == "returns"


def test_import_under_torch_names() -> None:
    import subprocess
    import sys

    source = ("import torch\nfrom torch.distributions import Normal, kl_divergence\n"
              "from torch.distributions.normal import Normal as N2\n"
              "import torch.distributions.constraints as C\n"
              "torch.manual_seed(0)\nd = Normal(torch.zeros(2), 1.0)\n"
              "print(N2 is Normal, C.positive, d.sample().tolist(), "
              "kl_divergence(d, Normal(1.0, 1.0)).tolist())\n")
    run = [sys.executable, "-c", source]
    theirs = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    ours = subprocess.run([sys.executable, "-m", "runtime", "-c", source],
                          capture_output=True, text=True)
    if ours.returncode:  # `python -m runtime` runs files and modules: go through a file
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(source)
        ours = subprocess.run([sys.executable, "-m", "runtime", handle.name],
                              capture_output=True, text=True)
    assert ours.stdout == theirs, ours.stderr


def _transforms(lib: Any) -> dict:
    T = lib.distributions.transforms
    return {
        "exp": (T.ExpTransform(), (3,)),
        "affine": (T.AffineTransform(_tensor(lib, [0.5, -1.0, 2.0]), 3.0), (3,)),
        "affine-event": (T.AffineTransform(1.0, _tensor(lib, [0.5, 2.0]), event_dim=1), (3, 2)),
        "sigmoid": (T.SigmoidTransform(), (3,)),
        "tanh": (T.TanhTransform(), (3,)),
        "softplus": (T.SoftplusTransform(), (3,)),
        "power": (T.PowerTransform(_tensor(lib, 2.5)), (3,)),
        "stick": (T.StickBreakingTransform(), (2, 3)),
        "softmax": (T.SoftmaxTransform(), (2, 3)),
        "lower-cholesky": (T.LowerCholeskyTransform(), (2, 2)),
        "positive-definite": (T.PositiveDefiniteTransform(), (2, 2)),
        "corr-cholesky": (T.CorrCholeskyTransform(), (3,)),
        "compose": (T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()]), (3,)),
        "inverse": (T.ExpTransform().inv, (3,)),
        "independent": (T.IndependentTransform(T.ExpTransform(), 1), (2, 3)),
        "reshape": (T.ReshapeTransform((2, 3), (6,)), (4, 2, 3)),
        "cat": (T.CatTransform([T.ExpTransform(), T.identity_transform], 0, [2, 1]), (3,)),
        "stack": (T.StackTransform([T.ExpTransform(), T.TanhTransform()], 1), (3, 2)),
        "cdf": (T.CumulativeDistributionTransform(lib.distributions.Normal(0.0, 1.0)), (3,)),
        "abs": (T.AbsTransform(), (3,)),
    }


@pytest.mark.parametrize("case", sorted(_transforms(torch)))
def test_transform_against_torch(case: str) -> None:
    positive = case in ("power", "inverse")

    def program(lib: Any) -> Any:
        transform, shape = _transforms(lib)[case]
        values = RNG_TRANSFORMS.uniform(0.2, 1.5, shape) if positive else \
            RNG_TRANSFORMS.normal(size=shape)
        x = _tensor(lib, values, grad=True)
        y = transform(x)
        found: list = [y, repr(transform), repr(transform.domain), repr(transform.codomain),
                       transform.bijective, tuple(transform.forward_shape(lib.Size(shape)))]
        if case not in ("softmax", "abs"):
            found.append(transform.inv(y))
            found.append(tuple(transform.inverse_shape(transform.forward_shape(lib.Size(shape)))))
        if case not in ("softmax", "abs", "lower-cholesky", "positive-definite"):
            jac = transform.log_abs_det_jacobian(x, y)
            found.append(jac)
            found.extend(lib.autograd.grad((y.sum() + jac.sum()), [x]))
        else:
            found.extend(lib.autograd.grad(y.sum(), [x]))
        return found

    RNG_TRANSFORMS.bit_generator.state = np.random.default_rng(3).bit_generator.state
    ours = program(rt)
    RNG_TRANSFORMS.bit_generator.state = np.random.default_rng(3).bit_generator.state
    _compare(ours, program(torch))


RNG_TRANSFORMS = np.random.default_rng(3)


def test_transform_caching_inverse_and_equality() -> None:
    def program(lib: Any) -> Any:
        T = lib.distributions.transforms
        exp = T.ExpTransform(cache_size=1)
        x = lib.tensor([0.5, 1.0])
        y = exp(x)
        compose = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
        return [exp.inv(y) is x, exp(x) is y, exp.inv.inv is exp,
                T.ExpTransform() == T.ExpTransform(), T.ExpTransform().inv == T.ExpTransform(),
                T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0),
                T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 3.0),
                compose.inv.inv is compose, repr(compose.inv), compose.sign,
                T.AffineTransform(0.0, -2.0).sign, T.identity_transform(x) is x,
                T.ExpTransform().with_cache(1)._cache_size, T.ExpTransform().event_dim,
                T.StickBreakingTransform().codomain.event_dim]

    assert same(program)[0][0] == "returns"


TRANSFORM_ERRORS = {
    "cache size": lambda lib: lib.distributions.transforms.ExpTransform(cache_size=2),
    "reshape sizes": lambda lib: lib.distributions.transforms.ReshapeTransform((2, 3), (5,)),
    "reshape shape": lambda lib: lib.distributions.transforms.ReshapeTransform(
        (2, 3), (6,)).forward_shape((3, 2)),
    "event dims": lambda lib: lib.distributions.transforms.CorrCholeskyTransform().event_dim,
    "cat length": lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.transforms.ExpTransform()], 0, [2])(lib.ones(3)),
    "stack length": lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.transforms.ExpTransform()], 0)(lib.ones(3)),
    "with_cache": lambda lib: lib.distributions.transforms.PowerTransform(2.0).with_cache(3),
    "transformed list": lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0), [1]),
    "transformed type": lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0), 1),
    "transformed shape": lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0), lib.distributions.StickBreakingTransform()),
    "biject_to unknown": lambda lib: lib.distributions.biject_to(
        lib.distributions.constraints.boolean),
    "register bad": lambda lib: lib.distributions.biject_to.register(3, lambda c: c),
}


@pytest.mark.parametrize("case", sorted(TRANSFORM_ERRORS))
def test_transform_errors(case: str) -> None:
    assert same(TRANSFORM_ERRORS[case])[0][0] == "raises"


def test_biject_to_and_transform_to() -> None:
    def program(lib: Any) -> Any:
        C, D = lib.distributions.constraints, lib.distributions
        x = lib.tensor([[0.3, -1.2, 2.0], [0.1, 0.4, -0.5]], dtype=lib.float64)
        found = []
        for constraint in (C.real, C.positive, C.greater_than(1.5), C.less_than(-1.0),
                           C.unit_interval, C.interval(-2.0, 3.0), C.simplex,
                           C.independent(C.positive, 1), C.nonnegative,
                           C.half_open_interval(0.0, 1.0), C.greater_than_eq(0.0)):
            for registry in (D.biject_to, D.transform_to):
                transform = registry(constraint)
                y = transform(x)
                found.append((repr(transform), y, bool(constraint.check(y).all())))
        found.append(repr(D.transform_to(C.lower_cholesky)))
        found.append(repr(D.transform_to(C.positive_definite)))
        found.append(repr(D.biject_to(C.corr_cholesky)))
        found.append(repr(D.biject_to(C.cat([C.positive, C.real], 0, [1, 1]))))
        found.append(repr(D.transform_to(C.stack([C.positive, C.real], 0))))
        return found

    _compare(program(rt), program(torch))


MORE_KL_PAIRS = [
    ("Laplace", "Laplace"), ("Gumbel", "Gumbel"), ("Geometric", "Geometric"),
    ("HalfNormal", "HalfNormal"), ("OneHotCategorical", "OneHotCategorical"),
    ("Pareto", "Pareto"), ("Poisson", "Poisson"), ("Binomial", "Binomial"),
    ("Cauchy", "Cauchy"), ("LogNormal", "LogNormal"), ("Laplace", "Normal"),
    ("Normal", "Laplace"), ("Normal", "Gumbel"), ("Gumbel", "Normal"),
    ("Exponential", "Gumbel"), ("Gamma", "Gumbel"), ("Uniform", "Gumbel"),
    ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"),
    ("Uniform", "Pareto"), ("Bernoulli-probs", "Poisson"), ("Poisson", "Bernoulli-probs"),
    ("Laplace", "Gamma"), ("Gumbel", "Uniform"), ("Normal", "Pareto"),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
]
KL_PARAMS.update({
    "Laplace": [RNG.normal(size=(3,)), _positive(3)],
    "Gumbel": [RNG.normal(size=(3,)), _positive(3)],
    "Geometric": [RNG.uniform(0.2, 0.9, (3,))],
    "HalfNormal": [_positive(3)],
    "OneHotCategorical": [_simplex(3, 4)],
    "Pareto": [_positive(3) * 0.1, _positive(3) + 2.5],
    "Poisson": [_positive(3) * 3],
    "Binomial": [RNG.uniform(0.2, 0.8, (3,))],
    "Cauchy": [RNG.normal(size=(3,)), _positive(3)],
    "LogNormal": [RNG.normal(size=(3,)), _positive(3)],
    "LowRankMultivariateNormal": [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 1)),
                                  _positive(2)],
})


@pytest.mark.parametrize(("p_name", "q_name"), MORE_KL_PAIRS)
def test_more_kl_divergences(p_name: str, q_name: str) -> None:
    test_kl_divergence(p_name, q_name)


def test_mixture_and_relaxed_details() -> None:
    def program(lib: Any) -> Any:
        D = lib.distributions
        mix = D.MixtureSameFamily(D.Categorical(logits=_tensor(lib, [0.2, -0.4, 1.0])),
                                  D.Normal(_tensor(lib, [-1.0, 0.0, 2.0]),
                                           _tensor(lib, [0.5, 1.0, 2.0])))
        x = _tensor(lib, [0.3, -1.5])
        mvn_mix = D.MixtureSameFamily(
            D.Categorical(logits=_tensor(lib, [0.2, -0.4])),
            D.Independent(D.Normal(_tensor(lib, [[0.0, 1.0], [2.0, -1.0]]), 1.0), 1))
        return [repr(mix), mix.mean, mix.variance, mix.cdf(x), mix.log_prob(x),
                repr(mix.support), tuple(mix.expand((4,)).batch_shape),
                mvn_mix.log_prob(_tensor(lib, [[0.5, 0.5]])), mvn_mix.mean, mvn_mix.variance]

    _compare(program(rt), program(torch))


def test_binomial_poisson_functions() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(9)
        counts = lib.tensor([0.0, 3.0, 40.0, 200.0, 7.0] * 3)
        probs = lib.tensor([0.5, 0.1, 0.3, 0.7, 0.95] * 3)
        rates = lib.tensor([0.0, 0.3, 4.0, 11.0, 1000.0] * 3, dtype=lib.float64)
        return [lib.binomial(counts, probs).tolist(), lib.poisson(rates).tolist(),
                lib.binomial(counts[:2], lib.tensor([0.5])).tolist()]

    assert same(program)[0][0] == "returns"
    for case in (lambda lib: lib.poisson(lib.tensor([-1.0])),
                 lambda lib: lib.poisson(lib.tensor([1])),
                 lambda lib: lib.binomial(lib.tensor([1]), lib.tensor([0.5])),
                 lambda lib: lib.binomial(lib.tensor([2.0]), lib.tensor([0.5],
                                                                      dtype=lib.float64))):
        assert same(case)[0][0] == "raises"


def test_generalized_pareto() -> None:
    """float32 (torch's log_prob compares with a float32 zero, refusing float64)."""
    def program(lib: Any) -> Any:
        D = lib.distributions
        loc = lib.tensor([0.1, -0.5, 0.0], requires_grad=True)
        scale = lib.tensor([1.0, 2.0, 0.5], requires_grad=True)
        conc = lib.tensor([0.3, 0.0, -0.2], requires_grad=True)
        dist = D.GeneralizedPareto(loc, scale, conc)
        lib.manual_seed(1)
        x = dist.rsample((4,))
        value = lib.tensor([0.5, 0.7, 0.3])
        scores = dist.log_prob(value)
        cdf = dist.cdf(value)
        grads = lib.autograd.grad(x.sum() + scores.sum() + cdf.sum(), [loc, scale, conc])
        return [x, scores, cdf, dist.icdf(lib.tensor([0.2, 0.5, 0.9])), dist.mean,
                dist.variance, dist.entropy(), repr(dist.support), *grads]

    ours, theirs = program(rt), program(torch)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    same(lambda lib: lib.distributions.GeneralizedPareto(
        lib.zeros(2, dtype=lib.float64), 1.0, 0.5).log_prob(lib.ones(2, dtype=lib.float64)))


def test_lkj_cholesky() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(3)
        concentration = _tensor(lib, [0.5, 2.0], grad=True)
        dist = lib.distributions.LKJCholesky(3, concentration)
        samples = dist.sample((4,))
        scores = dist.log_prob(samples)
        (grad,) = lib.autograd.grad(scores.sum(), concentration)
        expanded = dist.expand((5, 2))
        return [samples, scores, grad, repr(dist), tuple(dist.event_shape),
                tuple(expanded.batch_shape), repr(dist.support),
                bool(dist.support.check(samples).all())]

    _compare(program(rt), program(torch))
    assert same(lambda lib: lib.distributions.LKJCholesky(1))[0][0] == "raises"


def test_wishart() -> None:
    """Samples (torch's rsample resamples what its support check accepts: it warns
    "Singular sample detected." on every draw, and so does gradgen), log_prob, entropy
    and their gradients."""
    def program(lib: Any) -> Any:
        lib.manual_seed(3)
        tril = _tensor(lib, [[1.0, 0.0], [0.3, 0.8]], grad=True)
        df = _tensor(lib, [3.0, 5.5], grad=True)
        dist = lib.distributions.Wishart(df, scale_tril=tril)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            samples = dist.sample((2,))
        scores = dist.log_prob(samples)
        entropy = dist.entropy()
        grads = lib.autograd.grad(scores.sum() + entropy.sum(), [tril, df])
        fixed = tril.detach()
        covariance = lib.distributions.Wishart(4.0, covariance_matrix=fixed @ fixed.T)
        return [samples, scores, entropy, *grads, dist.mean, dist.variance, dist.mode,
                repr(dist), tuple(dist.expand((4, 2)).batch_shape), lib.rand(2),
                [str(w.message) for w in caught], covariance.log_prob(samples[0, 0])]

    _compare(program(rt), program(torch))
    for case in (lambda lib: lib.distributions.Wishart(1.0, lib.eye(3)),
                 lambda lib: lib.distributions.Wishart(3.0),
                 lambda lib: lib.distributions.Wishart(3.0, lib.ones(2))):
        assert same(case)[0][0] == "raises"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(lambda lib: repr(lib.distributions.Wishart(2.5, lib.eye(3))))[0][0] == \
            "returns"
