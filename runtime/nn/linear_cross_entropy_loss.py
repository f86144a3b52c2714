"""nn.LinearCrossEntropyLoss (new in torch 2.13): a Linear layer and the cross entropy of its
logits, F.linear_cross_entropy (runtime/nn/linear_cross_entropy.py)."""

from __future__ import annotations

import math
from typing import Any

from runtime._tensor import Tensor
from runtime.nn.linear import Linear
from runtime.nn.linear_cross_entropy import LinearCrossEntropyOptions, linear_cross_entropy
from runtime.nn.loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss"]


# -- nn.LinearCrossEntropyLoss ----------------------------------------------------------------

class LinearCrossEntropyLoss(_WeightedLoss):
    """A Linear layer (in_features -> num_classes * prod(out_features), its weight kept flat)
    and the cross entropy of its logits: F.linear_cross_entropy."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device: Any = None, dtype: Any = None,
                 reduction: str = "mean", weight: Tensor | None = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError("expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = None if self.linear.bias is None else self.linear.bias.reshape(
            (self.num_classes, *self.out_features))
        return linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                    weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
