"""torch.nn.functional's group_norm, instance_norm, local_response_norm and rms_norm, as
composites of existing differentiable ops (mean, var, rsqrt, batch_norm, pad), so autograd
flows through their pieces; the numbers agree with torch's fused kernels to rounding.

Made of composite and spec ops only (no torch.nn.functional import), so that
runtime/nn/functional.py can re-export them without an import cycle.
"""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import composite, legacy
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.grad_mode import no_grad

__all__ = ["group_norm", "instance_norm", "local_response_norm", "rms_norm"]


def _size(tensor: Tensor) -> str:
    return f"torch.Size({list(tensor.shape)})"


def _channel_view(parameter: Tensor, ndim: int) -> Tensor:
    """A per-channel (C,) tensor shaped (1, C, 1, ...) to broadcast over an ndim input."""
    return parameter.view(1, -1, *([1] * (ndim - 2)))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels in num_groups groups by the group's mean and
    (biased) variance, then scale and shift per channel."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(group_norm, (input, num_groups, weight, bias, eps), {})
        if heard is not _modes.PASS:
            return heard
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    batch, channels = input.shape[0], input.shape[1]
    folded = [batch * channels // num_groups, num_groups, *input.shape[2:]]
    if math.prod(folded) // num_groups == 1:  # torch's _verify_batch_size, on the groups
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {folded}")
    if num_groups < 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if channels % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    # (torch's bias message shows the weight's shape, [0] without one: so does this one)
    weight_shape = [0] if weight is None else list(weight.shape)
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and (parameter.dim() != 1 or parameter.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {weight_shape} and "
                               f"input of shape {list(input.shape)}")
    return ops.native_group_norm(input, weight, bias, batch, channels,
                                 math.prod(input.shape[2:]), num_groups, eps)[0]


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels over their own spatial extent: batch norm of the
    input seen as one sample of N * C channels, as torch computes it; running statistics
    (when given) take the mean over the samples."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(instance_norm, (input, running_mean, running_var, weight, bias,
                                use_input_stats, momentum, eps), {})
        if heard is not _modes.PASS:
            return heard
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"{_size(input)}")
    batch, channels = input.shape[0], input.shape[1]
    folded = input.contiguous().view(1, batch * channels, *input.shape[2:])

    def repeat(tensor: Tensor | None) -> Tensor | None:
        return None if tensor is None else tensor.repeat(batch)

    mean, var = repeat(running_mean), repeat(running_var)
    output = composite.batch_norm(folded, mean, var, repeat(weight), repeat(bias), use_input_stats,
                          momentum, eps)
    if use_input_stats:
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(mean.view(batch, channels).mean(0))
            if running_var is not None:
                running_var.copy_(var.view(batch, channels).mean(0))
    return output.view(input.shape)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Each element divided by (k + alpha · mean of the squares of its `size` neighbouring
    channels) ** beta (the window zero-padded at the edges)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(local_response_norm, (input, size, alpha, beta, k), {})
        if heard is not _modes.PASS:
            return heard
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if size <= 0:
        kernel = f"kH: {size} kW: 1" if dim == 3 else f"kT: {size} kH: 1 kW: 1"
        raise RuntimeError(f"kernel size should be greater than zero, but got {kernel}")
    if input.numel() == 0:
        return input
    squares = input.mul(input)
    channels = input.shape[1]
    flat = squares.reshape(input.shape[0], channels, -1)
    padded = composite.pad(flat, (0, 0, size // 2, (size - 1) // 2))
    window = padded.narrow(1, 0, channels)
    for offset in range(1, size):
        window = window + padded.narrow(1, offset, channels)
    average = (window / size).view(input.shape)
    return input / average.mul(alpha).add(k).pow(beta)


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / √(mean(x²) + eps) over the last len(normalized_shape) dimensions, times weight;
    eps defaults to the dtype's machine epsilon."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rms_norm, (input, normalized_shape, weight, eps), {})
        if heard is not _modes.PASS:
            return heard
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    normalized_shape = tuple(normalized_shape)
    count = len(normalized_shape)
    if count == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if input.dim() < count:
        raise ValueError(f"Input tensor must have at least {count} dimensions, but got "
                         f"{input.dim()}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(normalized_shape)}")
    if tuple(input.shape[input.dim() - count:]) != normalized_shape:
        sizes = ", ".join(map(str, normalized_shape))
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*{sizes}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = legacy.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - count, input.dim()))
    output = input * ops.rsqrt(input.pow(2).mean(dims, keepdim=True) + eps)
    return output if weight is None else output * weight
