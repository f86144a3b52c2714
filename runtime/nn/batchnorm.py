"""BatchNorm1d and BatchNorm2d: normalize each channel over the batch, then scale and shift.

In training a batch is normalized by its own mean and variance, and the module keeps running
estimates of them (buffers, so they are in state_dict): each training step blends the
batch's statistics in with `momentum` (the variance unbiased), or, with momentum=None,
keeps their plain average over the num_batches_tracked batches seen. In eval mode the
running estimates normalize instead, so one sample's output no longer depends on the
others in its batch. F.batch_norm (native_batch_norm, NativeBatchNormBackward0) does the
work; these classes hold the state and decide which statistics to use, as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from runtime import dtypes, factories
from runtime._tensor import Tensor
from runtime.grad_mode import no_grad
from runtime.nn import functional as F
from runtime.nn import init
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Module):
    """What BatchNorm1d and BatchNorm2d share; they differ only in the input ranks they take."""

    _version = 2  # version 2 saves num_batches_tracked

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """A state dict of version 1 (or of no version: a plain dict) may lack
        num_batches_tracked: the module's own (or 0) is taken, as torch does."""
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats \
                and key not in state_dict:
            tracked = self.num_batches_tracked
            state_dict[key] = (tracked if tracked is not None
                               else factories.tensor(0, dtype=dtypes.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(factories.empty(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(factories.empty(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", factories.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", factories.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 factories.tensor(0, dtype=dtypes.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Mean 0, variance 1, no batches seen."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running stats reset, and PyTorch's default affine transform: the identity
        (weight ones, bias zeros)."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the plain average of every batch so far
                factor = 1.0 / float(self.num_batches_tracked)
        # Batch statistics in training, and in eval mode too when there are no running ones.
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        # Running stats are passed only where they are read (eval) or updated (tracked).
        passed = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if passed else None,
                            self.running_var if passed else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over a (N, C) or (N, C, L) input: C channels."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over an (N, C, H, W) input: C channels, each over N, H and W."""

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
