"""torch.distributions: probability distributions with torch's parametrisations, sampling
(drawing torch's numbers under the same seed), log densities, entropies and KL
divergences, all differentiable through gradgen's autograd."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.distributions import constraints, kl
from runtime.distributions.bernoulli import Bernoulli
from runtime.distributions.beta import Beta
from runtime.distributions.categorical import Categorical
from runtime.distributions.dirichlet import Dirichlet
from runtime.distributions.distribution import Distribution
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.exponential import Exponential
from runtime.distributions.gamma import Gamma
from runtime.distributions.independent import Independent
from runtime.distributions.kl import kl_divergence, register_kl
from runtime.distributions.multivariate_normal import MultivariateNormal
from runtime.distributions.normal import Normal
from runtime.distributions.uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential",
    "ExponentialFamily", "Gamma", "Independent", "MultivariateNormal", "Normal", "Uniform",
    "constraints", "kl", "kl_divergence", "register_kl",
]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
