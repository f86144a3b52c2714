"""Dropout of whole channels and alpha dropout: Dropout1d/2d/3d, AlphaDropout,
FeatureAlphaDropout and their functional forms (dropout1d/2d/3d, alpha_dropout,
feature_alpha_dropout); torch's own torch.feature_dropout & co are in dropout_ops.py.

The noise is drawn as torch's CPU path draws it: an uninitialised tensor, one element per
element of the input (alpha dropout) or per (sample, channel) pair with ones for the
other dimensions (feature dropout), filled by bernoulli_(1 - p). Plain dropout then
divides it by 1 - p and multiplies; alpha dropout, which keeps SELU's zero mean and unit
variance, scales it by a and adds b, where the dropped elements take SELU's negative
saturation value: the graph is AddBackward0 over MulBackward0, as torch's.
"""

from __future__ import annotations

import math
from typing import Any

from runtime import factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn.module import Module

__all__ = [
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
]

# -alpha * scale of SELU: the value alpha dropout gives the elements it drops.
_SELU_SATURATION = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input: Tensor, p: float, train: bool, feature: bool, alpha: bool,
                  inplace: bool) -> Tensor:
    """torch's _dropout_impl: the noise, its scaling, the product (and shift)."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = factories.zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
        noise = factories.empty(shape, dtype=input.dtype)
    else:
        noise = factories.empty(list(input.shape), dtype=input.dtype)
    noise.bernoulli_(1 - p)
    if not alpha:
        noise.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_SELU_SATURATION ** 2 * p + 1) * (1 - p))
    b = noise.add(-1).mul_(_SELU_SATURATION * a).add_(_SELU_SATURATION * a * p)
    noise.mul_(a)
    return input.mul_(noise).add_(b) if inplace else (input * noise).add_(b)


# -- torch.nn.functional forms ---------------------------------------------------------------

def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """F.alpha_dropout: note its training defaults to False, as torch's does."""
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """F.feature_alpha_dropout (training defaults to False, as torch's)."""
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                               batched: bool) -> Tensor:
    """Feature dropout with a batch dimension of one added around an unbatched input."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout_impl(input, p, training, True, False, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dropout1d, (input, p, training, inplace), {})
        if heard is not _modes.PASS:
            return heard
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 3)


def _warn_dims(name: str, ndim: int, spatial: int) -> None:
    warn_at_caller(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, "
        f"please use dropout instead. Note that {name} exists to provide channel-wise dropout "
        f"on inputs with {spatial} spatial dimensions, a channel dimension, and an optional "
        f"batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) input. A 3-d input is taken as (N, C, L), with
    torch's warning that this will change."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dropout2d, (input, p, training, inplace), {})
        if heard is not _modes.PASS:
            return heard
    _check_p(p)
    if input.ndim not in (3, 4):
        _warn_dims("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warn_at_caller(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.")
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dropout3d, (input, p, training, inplace), {})
        if heard is not _modes.PASS:
            return heard
    _check_p(p)
    if input.ndim not in (4, 5):
        _warn_dims("dropout3d", input.ndim, 3)
    return _unbatched_feature_dropout(input, p, training, inplace, input.ndim == 5)


# -- layers -----------------------------------------------------------------------------------

class _DropoutNd(Module):
    """What the dropout layers share: p (checked) and inplace, shown by extra_repr."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input while training."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input while training."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input while training."""

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalising mean and variance."""

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input: Tensor) -> Any:
        return feature_alpha_dropout(input, self.p, self.training)
