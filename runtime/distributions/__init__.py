"""torch.distributions: probability distributions with torch's parametrisations, sampling
(drawing torch's numbers under the same seed), log densities, entropies and KL
divergences, all differentiable through gradgen's autograd."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.distributions import constraint_registry, constraints, kl, transforms
from runtime.distributions.bernoulli import Bernoulli
from runtime.distributions.beta import Beta
from runtime.distributions.binomial import Binomial
from runtime.distributions.categorical import Categorical
from runtime.distributions.cauchy import Cauchy
from runtime.distributions.chi2 import Chi2
from runtime.distributions.constraint_registry import biject_to, transform_to
from runtime.distributions.continuous_bernoulli import ContinuousBernoulli
from runtime.distributions.dirichlet import Dirichlet
from runtime.distributions.distribution import Distribution
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.exponential import Exponential
from runtime.distributions.fishersnedecor import FisherSnedecor
from runtime.distributions.gamma import Gamma
from runtime.distributions.generalized_pareto import GeneralizedPareto
from runtime.distributions.geometric import Geometric
from runtime.distributions.gumbel import Gumbel
from runtime.distributions.half_cauchy import HalfCauchy
from runtime.distributions.half_normal import HalfNormal
from runtime.distributions.independent import Independent
from runtime.distributions.inverse_gamma import InverseGamma
from runtime.distributions.kl import kl_divergence, register_kl
from runtime.distributions.kumaraswamy import Kumaraswamy
from runtime.distributions.laplace import Laplace
from runtime.distributions.lkj_cholesky import LKJCholesky
from runtime.distributions.log_normal import LogNormal
from runtime.distributions.logistic_normal import LogisticNormal
from runtime.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from runtime.distributions.mixture_same_family import MixtureSameFamily
from runtime.distributions.multinomial import Multinomial
from runtime.distributions.multivariate_normal import MultivariateNormal
from runtime.distributions.negative_binomial import NegativeBinomial
from runtime.distributions.normal import Normal
from runtime.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from runtime.distributions.pareto import Pareto
from runtime.distributions.poisson import Poisson
from runtime.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from runtime.distributions.relaxed_categorical import (
    ExpRelaxedCategorical,
    RelaxedOneHotCategorical,
)
from runtime.distributions.studentT import StudentT
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transforms import *  # noqa: F403 - torch re-exports every transform
from runtime.distributions.transforms import __all__ as _transform_names
from runtime.distributions.uniform import Uniform
from runtime.distributions.von_mises import VonMises
from runtime.distributions.weibull import Weibull
from runtime.distributions.wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel",
    "HalfCauchy", "HalfNormal", "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
    "MixtureSameFamily", "Multinomial", "MultivariateNormal", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "StudentT",
    "TransformedDistribution", "Uniform", "Weibull", "ContinuousBernoulli", "FisherSnedecor",
    "GeneralizedPareto", "InverseGamma", "Kumaraswamy", "LogisticNormal", "NegativeBinomial",
    "RelaxedOneHotCategorical", "ExpRelaxedCategorical", "LowRankMultivariateNormal",
    "VonMises", "LKJCholesky", "Wishart", "biject_to", "constraint_registry",
    "constraints", "kl", "kl_divergence", "register_kl", "transform_to", "transforms",
    *_transform_names,
]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
