"""Folding an eval-mode batch norm into the convolution or linear layer before it
(torch.nn.utils.fuse_conv_bn_eval, fuse_linear_bn_eval and their *_weights forms): the
layer's weight scaled by bn.weight / sqrt(running_var + eps) along its output channels,
its bias shifted by the running mean, so one layer computes what the two did."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from generated import ops
from runtime import factories
from runtime._tensor import Tensor
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]

LayerT = TypeVar("LayerT", bound=Module)


def _check_eval(layer: Module, bn: Any) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_running_stats(bn: Any) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: LayerT, bn: Any, transpose: bool = False) -> LayerT:
    """A copy of `conv` that computes bn(conv(x)) with bn's running statistics."""
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused convolution's weight and bias (output channels on dim 1 if `transpose`)."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = factories.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = factories.ones_like(bn_rm)
    if bn_b is None:
        bn_b = factories.zeros_like(bn_rm)
    var_rsqrt = ops.rsqrt(bn_rv + bn_eps)
    trailing = [1] * (conv_w.ndim - 2)
    shape = [1, -1, *trailing] if transpose else [-1, 1, *trailing]
    fused_w = (conv_w * (bn_w * var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * var_rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: LayerT, bn: Any) -> LayerT:
    """A copy of `linear` that computes bn(linear(x)) with bn's running statistics."""
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_running_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The fused linear layer's weight and bias."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = factories.zeros_like(bn_rm)
    bn_scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
