"""torch's serial CPU samplers, which draw element by element from the generator: gamma
and Dirichlet (`_standard_gamma`, `_sample_dirichlet`), with the reparameterised gradients
of their samples (`_standard_gamma_grad`, `_dirichlet_grad`), and Cauchy (`cauchy_`), on
numpy arrays, in the order torch's serial kernels visit the elements.

A gamma sample is drawn by Marsaglia and Tsang's rejection method from float64 uniforms and
float64 normals of the generator (the normals with the generator's cached second
Box-Muller value, as torch's `normal_distribution<double>` does), so the number of words
each element uses depends on its rejections: the loop cannot be vectorised. Constants that
torch's kernel writes as float literals (`1.0f / 3.0f`, `0.0331f`) are those floats.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["standard_gamma", "sample_dirichlet", "standard_gamma_grad", "dirichlet_grad",
           "cauchy", "binomial", "poisson"]

_MASK53 = (1 << 53) - 1
_TWO_PI = 2.0 * math.pi
_THIRD_F32 = float(np.float32(1.0) / np.float32(3.0))
_C_F32 = float(np.float32(0.0331))


def _uniform(generator: Any) -> float:
    """One float64 uniform in [0, 1): 53 bits of a 64-bit word."""
    return float(int(generator.draw64(1)[0]) & _MASK53) * 2.0**-53


def _normal(generator: Any) -> float:
    """One standard normal, as torch's `normal_distribution<double>`: the cached value if
    there is one, else a Box-Muller pair whose sine half is cached."""
    cached = generator.next_double_normal_sample
    if cached is not None:
        generator.next_double_normal_sample = None
        return cached
    u1, u2 = _uniform(generator), _uniform(generator)
    radius = math.sqrt(-2.0 * math.log1p(-u2))
    theta = _TWO_PI * u1
    generator.next_double_normal_sample = radius * math.sin(theta)
    return radius * math.cos(theta)


def cauchy(generator: Any, count: int, median: float = 0.0, sigma: float = 1.0) -> np.ndarray:
    """`count` Cauchy(median, sigma) values in float64: median + sigma tan(pi (u - 1/2))
    for a float64 uniform u each (the caller casts to the tensor's dtype)."""
    return np.array([median + sigma * math.tan(math.pi * (_uniform(generator) - 0.5))
                     for _ in range(count)], np.float64)


def _reciprocal_sqrt(value: float) -> float:
    """1 / sqrt(value) as C computes it: infinity at 0, NaN below 0 or at NaN (a negative or
    NaN alpha is drawn for, as torch does, and its sample then clamped to the tiny value)."""
    if value > 0:
        return 1.0 / math.sqrt(value)
    return math.inf if value == 0 else math.nan


def _gamma_one(generator: Any, alpha: float, single: bool) -> float:
    """One Gamma(alpha, 1) sample; `single` when torch's scalar type is float32 (then the
    kernel's float arithmetic on alpha rounds to float32)."""
    f32 = np.float32 if single else float
    alpha = f32(alpha)
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1.0 - _uniform(generator), float(f32(1.0) / alpha))
        alpha = f32(alpha + f32(1.0))
    d = float(f32(alpha - f32(_THIRD_F32)))
    c = _reciprocal_sqrt(9.0 * d)
    while True:
        x = _normal(generator)
        y = 1.0 + c * x
        while y <= 0:
            x = _normal(generator)
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - _uniform(generator)
        xx = x * x
        if u < 1.0 - _C_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(generator: Any, alpha: np.ndarray) -> np.ndarray:
    """Gamma(alpha, 1) samples of alpha's shape and float dtype (C order), each at least
    the dtype's smallest normal number."""
    dtype = alpha.dtype
    single = dtype == np.float32
    tiny = float(np.finfo(dtype).tiny)
    values = [max(tiny, float(dtype.type(_gamma_one(generator, a, single))))
              for a in alpha.reshape(-1).tolist()]
    return np.array(values, dtype).reshape(alpha.shape)


def sample_dirichlet(generator: Any, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet(alpha) samples over alpha's last dimension: float64 gamma samples (at
    least float64's tiny), normalised by their sum, kept inside (tiny, 1) of alpha's dtype."""
    dtype = alpha.dtype
    tiny64 = float(np.finfo(np.float64).tiny)
    gammas = np.array([max(tiny64, _gamma_one(generator, a, False))
                       for a in alpha.astype(np.float64).reshape(-1).tolist()],
                      np.float64).reshape(alpha.shape)
    ratios = (gammas / gammas.sum(-1, keepdims=True)).astype(dtype)
    below_one = np.nextafter(dtype.type(1.0), dtype.type(0.0))
    return np.minimum(below_one, np.maximum(np.finfo(dtype).tiny, ratios))


# -- the reparameterised gradient ------------------------------------------------------------

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
              7.57575757575757575758e-3, -4.16666666666666666667e-3,
              3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma(x: float) -> float:
    """torch's digamma_one in float64 (Cephes: recurrence up to 10, then the asymptotic
    series)."""
    if x == 0:
        return math.inf
    extra = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.inf
        extra = -math.pi / math.tan(math.pi * x)
        x = 1 - x
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10 + extra
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        polynomial = 0.0
        for coefficient in _DIGAMMA_A:
            polynomial = polynomial * z + coefficient
        y = z * polynomial
    return result + math.log(x) - (0.5 / x) - y + extra


_COEF_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _small_x(alpha: float, x: float) -> float:
    """A Taylor series of the gamma CDF in x, for x < 0.8."""
    numer, denom = 1.0, alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer *= -x / i
        denom += 1
        series1 += numer / denom
        series2 += numer / (denom * denom)
    pow_x_alpha = math.pow(x, alpha)
    pdf = math.pow(x, alpha - 1) * math.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (math.log(x) - _digamma(alpha)) * cdf - pow_x_alpha * series2
    with np.errstate(all="ignore"):
        result = float(np.float64(-cdf_alpha) / np.float64(pdf))
    return 0.0 if math.isnan(result) else result


def _large_alpha(alpha: float, x: float) -> float:
    """Rice's saddle point expansion, for alpha > 8."""
    if 0.9 * alpha <= x <= 1.1 * alpha:
        numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
        numer_2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                   + alpha * (107 + 3600 * x))
        denom = 1244160 * (alpha * alpha) * (alpha * alpha)
        return numer_1 * numer_2 / denom
    denom = math.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = math.pow(x - alpha - alpha * math.log(x / alpha), -1.5)
    term23 = term2 - term3 if x < alpha else term2 + term3
    term1 = (math.log(x / alpha) * term23
             - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return -stirling * (x * term1) / denom


def _rational(alpha: float, x: float) -> float:
    """A bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u, v = math.log(x / alpha), math.log(alpha)
    c = [_COEF_UV[0][i] + u * (_COEF_UV[1][i] + u * _COEF_UV[2][i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return math.exp(p / q)


def _gamma_grad_one(alpha: float, x: float) -> float:
    """d x / d alpha for a Gamma(alpha, 1) sample x at fixed CDF: -(dCDF/dalpha) / pdf."""
    if x < 0.8:
        return _small_x(alpha, x)
    if alpha > 8.0:
        return _large_alpha(alpha, x)
    return _rational(alpha, x)


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """torch's `_standard_gamma_grad(alpha, x)`, element by element in float64, in the
    arrays' (broadcast) dtype."""
    alpha, x = np.broadcast_arrays(alpha, x)
    values = [_gamma_grad_one(a, s) for a, s in zip(alpha.astype(np.float64).reshape(-1).tolist(),
                                                    x.astype(np.float64).reshape(-1).tolist(),
                                                    strict=True)]
    return np.array(values, np.float64).astype(alpha.dtype).reshape(alpha.shape)


# -- the Dirichlet reparameterised gradient (torch's dirichlet_grad_one) ----------------------
# Computed in float64 throughout; torch computes the two small-x series in the input's
# dtype, so for float32 inputs these agree to float32 rounding, not bit for bit.

def _beta_grad_alpha_small(x: float, alpha: float, beta: float) -> float:
    """d x / d alpha of a Beta(alpha, beta) sample near 0: a Taylor series in x."""
    factor = _digamma(alpha) - _digamma(alpha + beta) - math.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1 / denom)
    result = x * math.pow(1 - x, -beta) * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_beta_small(x: float, alpha: float, beta: float) -> float:
    """d x / d beta of a Beta(alpha, beta) sample near 0: a Taylor series in x."""
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    result = -math.pow(1 - x, 1 - beta) * series
    return 0.0 if math.isnan(result) else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    """d x / d alpha of a Beta(alpha, beta) sample for large alpha and beta: Rice's
    saddle point expansion (a polynomial near the mean, where it is singular)."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        b2 = beta * beta
        poly = 47 * x * b2 * b2 + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                        8 * (1 - x) * (135 * beta - 11)))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = math.sqrt(2 * alpha / beta) * math.pow(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = (beta * math.log(beta / (total * (1 - x)))
                  + alpha * math.log(alpha / (total * x)))
    term4 = math.pow(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + (term4 if x < mean else -term4))
    return stirling * prefactor * term1234


# torch's rational correction: numerator [0] and denominator [1] coefficients, indexed by
# the powers of log(x), of log(alpha / x) and of the remaining log term.
_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_grad_one(x: float, alpha: float, total: float) -> float:
    """d x / d alpha for one coordinate x of a Dirichlet sample whose concentrations sum
    to `total`, the others fixed (torch's scaled Beta(alpha, total - alpha) gradient)."""
    beta = total - alpha
    boundary = total * x * (1 - x)
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(x, alpha, beta)
    if x >= 0.5 and boundary < 0.75:
        return -_beta_grad_beta_small(1 - x, beta, alpha)
    if alpha > 6 and beta > 6:
        return _beta_grad_alpha_mid(x, alpha, beta)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    pow_u, pow_a = (1, u, u * u), (1, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (_digamma(total) - _digamma(alpha)) / beta
    return p / q * approx


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """torch's `_dirichlet_grad(x, alpha, total)`, element by element, in x's dtype."""
    x, alpha, total = np.broadcast_arrays(x, alpha, total)
    flat = [a.astype(np.float64).reshape(-1).tolist() for a in (x, alpha, total)]
    values = [_dirichlet_grad_one(*triple) for triple in zip(*flat, strict=True)]
    return np.array(values, np.float64).astype(x.dtype).reshape(x.shape)


# -- binomial and Poisson ------------------------------------------------------------------

def _binomial_inversion(count: float, prob: float, generator: Any) -> float:
    """Geometric waiting times summed until they pass `count` (for count * prob < 10)."""
    geom_sum, num_geom = 0.0, 0.0
    logprob = math.log1p(-prob)
    while True:
        geom = math.ceil(_log(_uniform(generator)) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(count: float, prob: float, generator: Any) -> float:
    """Hormann's transformed rejection with squeeze (for count * prob >= 10)."""
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        u = _uniform(generator) - 0.5
        v = _uniform(generator)
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        upperbound = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                      + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                      + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                      + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
                      - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        if v <= upperbound:
            return k


def _binomial_one(count: float, prob: float, generator: Any) -> float:
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if count * prob >= 10.0:
            return _btrs(count, prob, generator)
        return _binomial_inversion(count, prob, generator)
    if prob > 0.5:
        q = 1.0 - prob
        if count * q >= 10.0:
            return count - _btrs(count, q, generator)
        return count - _binomial_inversion(count, q, generator)
    return math.nan


def binomial(generator: Any, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """torch.binomial's samples, element by element (C order of the broadcast shape)."""
    count, prob = np.broadcast_arrays(count, prob)
    values = [_binomial_one(n, p, generator) for n, p in
              zip(count.astype(np.float64).reshape(-1).tolist(),
                  prob.astype(np.float64).reshape(-1).tolist(), strict=True)]
    return np.array(values, np.float64).astype(count.dtype).reshape(count.shape)


def _to_int64(value: float) -> int:
    """floor(value) cast to int64 as torch's x86 kernel casts it: a NaN, an infinity or a
    value out of int64's range becomes -2^63 (the CPU's "integer indefinite")."""
    if not -(2.0**63) <= value < 2.0**63:
        return -(2**63)
    return math.floor(value)


def _poisson_one(lam: float, generator: Any) -> float:
    if lam >= 10:  # Hormann's transformed rejection
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform(generator) - 0.5
            v = _uniform(generator)
            us = 0.5 - abs(u)
            k = _to_int64((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    count, product, limit = 0, 1.0, math.exp(-lam)
    while True:
        product *= _uniform(generator)
        if product > limit:
            count += 1
        else:
            return count


def poisson(generator: Any, rates: np.ndarray) -> np.ndarray:
    """torch.poisson's samples, element by element in C order, in the rates' dtype."""
    values = [_poisson_one(lam, generator) for lam in rates.astype(np.float64).reshape(-1).tolist()]
    return np.array(values, np.float64).astype(rates.dtype).reshape(rates.shape)
