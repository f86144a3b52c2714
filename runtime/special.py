"""torch.special: the special functions, under the names torch.special gives them.

Most are other names of the spec's ops (`expit` is sigmoid, `gammaln` lgamma, `psi` digamma,
`gammainc` igamma, `multigammaln` mvlgamma) or its `special_*` ops (`entr`, `i1e`,
`bessel_j0`, the orthogonal polynomials...), so a call records the node torch records
(SigmoidBackward0, SpecialEntrBackward0...). `ndtr` is a composite, as torch writes it.
Every function but softmax and log_softmax takes out=, as torch's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generated import ops
from runtime import composite
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]


def _with_out(function: Callable, name: str) -> Callable:
    """torch.special's `name`: `function`, with out= written as torch writes it
    (runtime/out.py), and torch's name for itself (`special_erf()`) in the argument
    errors that the op's binding raises under its own (`erf()`)."""
    own = f"{getattr(function, '__name__', name).lstrip('_')}("

    def special(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        try:
            if out is None:
                return function(*args, **kwargs)
            return _out.call(f"special_{name}", function, args, kwargs, out)
        except TypeError as error:
            message = str(error)
            if not message.startswith(own):
                raise
            raise TypeError(f"special_{name}(" + message.removeprefix(own)) from None

    special.__name__ = special.__qualname__ = name
    special.__doc__ = f"torch.special.{name}: {getattr(function, '__name__', name)} of the spec."
    return special


# -- other names of ops torch also binds as torch.* functions
digamma = _with_out(ops.digamma, "digamma")
psi = _with_out(ops.digamma, "psi")
erf = _with_out(ops.erf, "erf")
erfc = _with_out(ops.erfc, "erfc")
erfinv = _with_out(ops.erfinv, "erfinv")
exp2 = _with_out(ops.exp2, "exp2")
expit = _with_out(ops.sigmoid, "expit")
expm1 = _with_out(ops.expm1, "expm1")
gammainc = _with_out(ops.igamma, "gammainc")
gammaincc = _with_out(ops.igammac, "gammaincc")
gammaln = _with_out(ops.lgamma, "gammaln")
i0 = _with_out(ops.i0, "i0")
log1p = _with_out(ops.log1p, "log1p")
logit = _with_out(ops.logit, "logit")
multigammaln = _with_out(ops.mvlgamma, "multigammaln")
polygamma = _with_out(ops.polygamma, "polygamma")
sinc = _with_out(ops.sinc, "sinc")
xlogy = _with_out(ops.xlogy, "xlogy")

# -- the spec's special_* ops
entr = _with_out(ops.special_entr, "entr")
erfcx = _with_out(ops.special_erfcx, "erfcx")
i0e = _with_out(ops.special_i0e, "i0e")
i1 = _with_out(ops.special_i1, "i1")
i1e = _with_out(ops.special_i1e, "i1e")
log_ndtr = _with_out(ops.special_log_ndtr, "log_ndtr")
ndtri = _with_out(ops.special_ndtri, "ndtri")
xlog1py = _with_out(ops.special_xlog1py, "xlog1py")
zeta = _with_out(ops.special_zeta, "zeta")
bessel_j0 = _with_out(ops.special_bessel_j0, "bessel_j0")
bessel_j1 = _with_out(ops.special_bessel_j1, "bessel_j1")
bessel_y0 = _with_out(ops.special_bessel_y0, "bessel_y0")
bessel_y1 = _with_out(ops.special_bessel_y1, "bessel_y1")
modified_bessel_i0 = _with_out(ops.special_modified_bessel_i0, "modified_bessel_i0")
modified_bessel_i1 = _with_out(ops.special_modified_bessel_i1, "modified_bessel_i1")
modified_bessel_k0 = _with_out(ops.special_modified_bessel_k0, "modified_bessel_k0")
modified_bessel_k1 = _with_out(ops.special_modified_bessel_k1, "modified_bessel_k1")
scaled_modified_bessel_k0 = _with_out(ops.special_scaled_modified_bessel_k0,
                                      "scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _with_out(ops.special_scaled_modified_bessel_k1,
                                      "scaled_modified_bessel_k1")
spherical_bessel_j0 = _with_out(ops.special_spherical_bessel_j0, "spherical_bessel_j0")
airy_ai = _with_out(ops.special_airy_ai, "airy_ai")
chebyshev_polynomial_t = _with_out(ops.special_chebyshev_polynomial_t, "chebyshev_polynomial_t")
chebyshev_polynomial_u = _with_out(ops.special_chebyshev_polynomial_u, "chebyshev_polynomial_u")
chebyshev_polynomial_v = _with_out(ops.special_chebyshev_polynomial_v, "chebyshev_polynomial_v")
chebyshev_polynomial_w = _with_out(ops.special_chebyshev_polynomial_w, "chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _with_out(ops.special_shifted_chebyshev_polynomial_t,
                                           "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _with_out(ops.special_shifted_chebyshev_polynomial_u,
                                           "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _with_out(ops.special_shifted_chebyshev_polynomial_v,
                                           "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _with_out(ops.special_shifted_chebyshev_polynomial_w,
                                           "shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _with_out(ops.special_hermite_polynomial_h, "hermite_polynomial_h")
hermite_polynomial_he = _with_out(ops.special_hermite_polynomial_he, "hermite_polynomial_he")
laguerre_polynomial_l = _with_out(ops.special_laguerre_polynomial_l, "laguerre_polynomial_l")
legendre_polynomial_p = _with_out(ops.special_legendre_polynomial_p, "legendre_polynomial_p")


# -- composites and reductions

_SQRT_HALF = 0.7071067811865476  # sqrt(1/2)


def _ndtr(input: Any) -> Any:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, composed of ops as torch's C++
    composes it, with Python numbers as Scalars (its graph is MulBackward1, AddBackward1,
    ErfBackward0, MulBackward1; `x * 0.5` in Python would record MulBackward0)."""
    if not isinstance(input, Tensor):
        raise TypeError("special_ndtr(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return ops.mul_Scalar(ops.add_Scalar(ops.erf(ops.mul_Scalar(input, _SQRT_HALF)), 1), 0.5)


ndtr = _with_out(_ndtr, "ndtr")


def _round(input: Any, *, decimals: int = 0) -> Any:
    """round half to even (at `decimals` places): round.decimals, as torch.special calls it
    even for decimals=0 (RoundBackward1)."""
    return ops.round(input, decimals=decimals)


round = _with_out(_round, "round")  # noqa: A001 - torch.special.round


def _logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:
    return ops.logsumexp(input, dim, keepdim)


logsumexp = _with_out(_logsumexp, "logsumexp")


def softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x), dim), after a cast to `dtype` if one is given."""
    return composite.softmax(input, dim, dtype=dtype)


def log_softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """x - log(sum(exp(x), dim)), after a cast to `dtype` if one is given."""
    return composite.log_softmax(input, dim, dtype=dtype)


def __getattr__(name: str) -> Any:
    if name == "Tensor":  # torch.special re-exports torch.Tensor
        return Tensor
    raise missing_attribute(__name__, name)
