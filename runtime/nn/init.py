"""Weight initialisations with torch.nn.init's names, defaults, formulas and draws.

Each function fills its tensor in place, outside any graph (as PyTorch's do under
no_grad), bumps its version counter and returns it. The numbers come from the generator
given, else the default one, in torch's order of draws, so after the same
`manual_seed` a layer starts with torch's weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import factories, random_ops
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import no_grad
from runtime.random import Generator

__all__ = [
    "calculate_gain", "constant_", "ones_", "zeros_", "uniform_", "normal_", "trunc_normal_",
    "orthogonal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
    "dirac_", "eye_", "sparse_",
    # the deprecated names without the trailing underscore
    "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "orthogonal", "sparse", "dirac", "eye",
]


def _no_grad_copy_(tensor: Tensor, values: Tensor) -> Tensor:
    """`tensor.copy_(values)` outside any graph: a parameter that requires grad may be
    overwritten (as PyTorch's init does under no_grad) and its version counter moves on."""
    with no_grad():
        return tensor.copy_(values)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps activations' variance steady through `nonlinearity`."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, int | float) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """Inputs and outputs per unit: (in, out) of a weight shaped (out, in, *kernel)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0,
             generator: Generator | None = None) -> Tensor:
    """Fill with values drawn from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    """Fill with values drawn from N(mean, std²)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std²) restricted to [a, b], by rejection as torch does.

    When [a, b] holds more than 30% of the mass, whole tensors of normal draws replace the
    values outside it until none is; otherwise uniform proposals on [a, b] are accepted
    when log(u) < -((x - mean) / std)² / 2 - (the same at the mode).
    """
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warn_at_caller("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                       "The distribution of values may be incorrect.")
    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            _accept_uniform_proposals(tensor, mean, std, a, b, generator)
    return tensor


def _redraw_outside(tensor: Tensor, mean: float, std: float, a: float, b: float,
                    generator: Generator | None) -> None:
    low, high = (float(np.asarray(bound, tensor._data.dtype)) for bound in (a, b))
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        redrawn = factories.empty_like(result).normal_(mean, std, generator=generator)
        result = _where(outside, redrawn, result)
    if result is not tensor:
        tensor.copy_(result)


def _where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    return Tensor._make(np.where(condition._data, x._data, y._data), None)


def _accept_uniform_proposals(tensor: Tensor, mean: float, std: float, a: float, b: float,
                              generator: Generator | None) -> None:
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    candidates = factories.empty_like(tensor)
    accept = factories.empty_like(tensor)

    def log_density(x: Tensor) -> Tensor:
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    tensor.uniform_(a, b, generator=generator)
    candidates.copy_(tensor)
    log_density(candidates)
    pending = accept.uniform_(generator=generator).log_().gt(candidates)
    if not pending.any():
        return
    result = tensor
    while True:
        candidates.uniform_(a, b, generator=generator)
        result = _where(pending, candidates, result)
        log_density(candidates)
        rejected = accept.uniform_(generator=generator).log_().gt(candidates)
        pending = _where(pending, rejected, pending)
        if not pending.any():
            break
    tensor.copy_(result)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix: the Q of a QR of N(0, 1) draws, its columns'
    signs fixed by R's diagonal, trailing dimensions flattened.

    The steps and the draws are torch's: normal_ into a (rows, cols) matrix, transposed
    when it is wide, QR, Q times sign(diag(R)), transposed back, copied, scaled by gain.
    The QR is not: torch 2.13's CPU build calls Intel MKL 2024.2's LAPACK (sgeqrf/sorgqr,
    `torch.__config__.show()` says LAPACK_INFO=mkl), numpy calls the reference LAPACK of
    its bundled OpenBLAS 0.3.31. Both are blocked Householder QRs, but each reflector's
    norm (snrm2) and its products with the trailing columns (sgemv/sger, and sgemm in the
    blocked part) are float32 sums taken in each library's own order, and MKL picks its
    kernels by CPU (AVX2 or AVX512), so no numpy expression reproduces its bits in
    general. Measured over 5 seeds (torch.manual_seed(s); orthogonal_ on both sides):
    already a 2x2 differs (1 ulp of 1.0 at most, 7 of 20 values equal); the largest
    difference is 2.7e-6 absolute (22 ulps of 1.0) at 128x128, 1.1e-6 at 64x64, 2.2e-7 at
    100x50; elements near zero differ by many ulps of their own (up to 3.7e6 at 256x256),
    and 8% of all values are bit-equal. An unblocked float32 Householder QR written after
    reference LAPACK (v = x / (alpha - beta), the scaled snrm2, sequential dot products)
    does reproduce MKL's Q bit for bit up to 4x4, but not from 8x8 on, where MKL's
    vectorised sums take over; gradgen keeps numpy's QR rather than match a few tiny
    shapes."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = factories.empty(rows, cols, dtype=tensor.dtype)
    flattened.normal_(0, 1, generator=generator)
    matrix = flattened._data.T if rows < cols else flattened._data
    q, r = np.linalg.qr(matrix)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(Tensor._make(np.ascontiguousarray(q).reshape(tensor.shape), None))
        tensor.mul_(gain)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _no_grad_copy_(tensor, factories.full_like(tensor, val))


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0,
                    generator: Generator | None = None) -> Tensor:
    """Glorot: U(-a, a) with a = gain·√(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0,
                   generator: Generator | None = None) -> Tensor:
    """Glorot: N(0, std²) with std = gain·√(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """He's std = gain / √fan, or None (with PyTorch's warning) for an empty tensor."""
    if 0 in tensor.shape:
        warn_at_caller("Initializing zero-element tensors is a no-op")
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """He: U(-bound, bound) with bound = √3·gain/√fan."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """He: N(0, std²) with std = gain/√fan."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std, generator)


# -- identities and sparse matrices ------------------------------------------------------------

def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A convolution weight (3, 4 or 5 dims) that passes its input through: in each group,
    output channel d reads input channel d at the kernel's centre only, for as many
    channels as both sides have."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = tensor.shape[0] // groups
    centre = tuple(size // 2 for size in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for group in range(groups):
            for channel in range(min(per_group, tensor.shape[1])):
                tensor[(group * per_group + channel, channel, *centre)] = 1
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """A 2-d weight filled with the identity matrix (ones on the diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _no_grad_copy_(tensor, factories.eye(*tensor.shape, dtype=tensor.dtype))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01,
            generator: Generator | None = None) -> Tensor:
    """A 2-d weight of N(0, std²) draws with ceil(sparsity * rows) zeros per column, at rows
    chosen by a randperm per column. As torch's, the permutations come from the default
    generator even when `generator` is given (it draws only the normal values)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for column in range(cols):
            zero_rows = random_ops.randperm(rows)[:num_zeros]
            tensor[zero_rows, column] = 0
    return tensor


# -- the deprecated names ---------------------------------------------------------------------

def _deprecated(init: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`init` under its old name (no trailing underscore), with torch's FutureWarning."""
    new_name = init.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warn_at_caller(f"`nn.init.{old_name}` is now deprecated in favor of "
                       f"`nn.init.{new_name}`.", FutureWarning)
        return init(*args, **kwargs)

    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"{old_name}(...): deprecated, see {new_name}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
dirac = _deprecated(dirac_)
eye = _deprecated(eye_)
