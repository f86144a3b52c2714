"""More normalisation layers: GroupNorm, InstanceNorm1d/2d/3d, LocalResponseNorm,
CrossMapLRN2d, RMSNorm, BatchNorm3d and SyncBatchNorm, on the functional forms of
runtime/nn/norm_functions.py.

SyncBatchNorm is batch norm on one process, which is what torch's does on a CPU without an
initialised process group.
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import factories
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.autograd.function import Function
from runtime.grad_mode import no_grad
from runtime.nn import functional as F
from runtime.nn import init
from runtime.nn.batchnorm import _BatchNorm
from runtime.nn.lazy import _lazy_batch_norm
from runtime.nn.module import Module
from runtime.nn.norm_functions import (
    group_norm,
    instance_norm,
    local_response_norm,
    rms_norm,
)
from runtime.nn.parameter import Parameter

__all__ = [
    "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LocalResponseNorm", "CrossMapLRN2d", "RMSNorm", "SyncBatchNorm", "LazyBatchNorm3d",
    "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
]


# -- group norm -----------------------------------------------------------------------------------

class GroupNorm(Module):
    """Group normalisation: channels in num_groups groups, each normalised per sample."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(factories.empty(num_channels, dtype=dtype))
            if bias:
                self.bias = Parameter(factories.empty(num_channels, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


# -- instance norm --------------------------------------------------------------------------------

class _InstanceNorm(_BatchNorm):
    """What the InstanceNorm classes share: batch norm's state, instance norm's forward."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        ranks = (self._no_batch_dim, self._no_batch_dim + 1)
        if input.dim() not in ranks:
            raise ValueError(f"expected {ranks[0]}D or {ranks[1]}D input (got {input.dim()}D "
                             "input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return instance_norm(input, self.running_mean, self.running_var, self.weight,
                             self.bias, self.training or not self.track_running_stats,
                             self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warn_at_caller(f"input's size at dim={feature_dim} does not match num_features. You "
                           "can silence this warning by not passing in num_features, which is "
                           "not used because affine=False")
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) input."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) input."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) input."""

    _no_batch_dim = 4


# -- batch norm over volumes, and on one process --------------------------------------------------

class BatchNorm3d(_BatchNorm):
    """Batch norm over an (N, C, D, H, W) input."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch norm whose statistics torch would gather across processes; with one process
    (no initialised process group) it is plain batch norm, as torch's is."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """The module with every BatchNorm*D replaced by a SyncBatchNorm holding the same
        parameters and buffers."""
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            output = cls(module.num_features, module.eps, module.momentum, module.affine,
                         module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output


# -- local response norm --------------------------------------------------------------------------

class LocalResponseNorm(Module):
    """Normalisation across neighbouring channels, as in AlexNet."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_scale(input: Tensor, size: int, alpha: float, k: float) -> Tensor:
    """k + alpha / size · a running sum of squares over channels, kept as torch's legacy
    layer keeps it: the first channel's window holds channels 0 .. pre_pad - 1, each next
    one adds a channel ahead and (from channel pre_pad + 1 on) drops one behind."""
    squares = input.pow(2)
    channels = input.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    scale = squares.select(1, 0) * 0
    for c in range(min(pre_pad, channels)):
        scale = scale + squares.select(1, c)
    scales = [scale]
    for c in range(1, channels):
        if c < channels - pre_pad + 1:
            scale = scale + squares.select(1, c + pre_pad - 1)
        if c > pre_pad:
            scale = scale - squares.select(1, c - pre_pad)
        scales.append(scale)
    return ops.stack(scales, 1) * (alpha / size) + k


class _CrossMapLRN2dFunction(Function):
    """torch's legacy layer is an autograd.Function whose backward is its own formula (not
    the exact derivative of its forward's window): this one computes both as torch's does."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, size: int, alpha: float, beta: float,
                k: float) -> Tensor:
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.scale = _cross_map_scale(input, size, alpha, k)
        output = input * ctx.scale.pow(-beta)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> tuple:
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.shape[1]
        factor = 2 * ctx.alpha * ctx.beta / size
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output
        # ratios sit at channels offset .. offset + C - 1 of a zero-padded stack of C + size - 1
        offset = int(size - (size - 1) / 2)
        ratio = grad_output * output / ctx.scale
        padded = F.pad(ratio, (0, 0, 0, 0, offset, size - 1 - offset))
        accumulated = padded.narrow(1, 0, size - 1).sum(1)
        columns = []
        for c in range(channels):
            accumulated = accumulated + padded.select(1, c + size - 1)
            columns.append(grad_input.select(1, c) - factor * input.select(1, c) * accumulated)
            accumulated = accumulated - padded.select(1, c)
        return ops.stack(columns, 1), None, None, None, None


class CrossMapLRN2d(Module):
    """Local response norm of a 4-D input across channels: x / (k + alpha / size · sum of
    squares over the window) ** beta (torch's legacy Lua-Torch layer)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError("CrossMapLRN2d: Expected input to be 4D, got "
                             f"{input.dim()}D instead.")
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# -- RMS norm -------------------------------------------------------------------------------------

class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing normalized_shape, with an
    elementwise scale (initialised to ones)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(factories.empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


# -- the lazy forms (runtime/nn/lazy.py): num_features read from the first input's dim 1 ------
# (torch's lazy instance norms take the batch norms' defaults, affine and running stats on,
# and read dimension 1 even of an unbatched input: so do these)

LazyBatchNorm3d = _lazy_batch_norm(BatchNorm3d, "LazyBatchNorm3d")
LazyInstanceNorm1d = _lazy_batch_norm(InstanceNorm1d, "LazyInstanceNorm1d")
LazyInstanceNorm2d = _lazy_batch_norm(InstanceNorm2d, "LazyInstanceNorm2d")
LazyInstanceNorm3d = _lazy_batch_norm(InstanceNorm3d, "LazyInstanceNorm3d")
