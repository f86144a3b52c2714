"""torch.feature_dropout, torch.alpha_dropout, torch.feature_alpha_dropout and their
in-place forms: (input, p, train), all three arguments required, as torch's. They share
channel_dropout.py's implementation with the nn.functional forms."""

from __future__ import annotations

from runtime._tensor import Tensor
from runtime.nn.channel_dropout import _dropout_impl

__all__ = ["alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "feature_dropout", "feature_dropout_"]


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels (dimension 1) with probability p, scale the rest by 1/(1-p)."""
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, True, False, True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout of each element (F.alpha_dropout is channel_dropout.alpha_dropout)."""
    return _dropout_impl(input, p, train, False, True, False)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, False, True, True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout of whole channels (torch.feature_alpha_dropout)."""
    return _dropout_impl(input, p, train, True, True, False)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, True, True, True)
