"""Lazy modules: layers whose input size is read from their first input.

LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d and LazyBatchNorm1d/2d hold
UninitializedParameters (and UninitializedBuffers) until their first forward; a forward
pre-hook then gives them their shapes, draws their initial values as the plain layer's
reset_parameters does (so after the same seed the weights are torch's), and turns the
module into the plain layer (LazyLinear becomes a Linear). load_state_dict into a module
still lazy takes the shapes from the state dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runtime import dtypes, factories
from runtime._tensor import Tensor
from runtime.grad_mode import no_grad
from runtime.nn.batchnorm import BatchNorm1d, BatchNorm2d
from runtime.nn.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from runtime.nn.linear import Linear
from runtime.nn.module import IncompatibleKeys
from runtime.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = [
    "LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d",
    "LazyBatchNorm2d",
]


def is_lazy(value: Any) -> bool:
    """Whether `value` is an UninitializedParameter or UninitializedBuffer."""
    return getattr(value, "_is_uninitialized", False)


class LazyModuleMixin:
    """What the lazy modules share: the hook that initialises them at the first forward,
    and the class they become then (`cls_to_become`)."""

    cls_to_become: type | None = None

    def _await_first_input(self) -> None:
        """Register the hook that initialises the module at its first forward."""
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module still has no shape."""
        return any(is_lazy(value) for registry in (self._parameters, self._buffers)
                   for value in registry.values())

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> IncompatibleKeys:
        """As Module's, the uninitialised tensors first given the state dict's shapes."""
        for prefix, module in self.named_modules():
            prefix = prefix + "." if prefix else ""
            for registry in (module._parameters, module._buffers):
                for name, value in registry.items():
                    incoming = state_dict.get(prefix + name)
                    if is_lazy(value) and isinstance(incoming, Tensor) and not is_lazy(incoming):
                        with no_grad():
                            value.materialize(incoming.shape)
        return super().load_state_dict(state_dict, strict, assign)


def _infer_parameters(module: Any, args: tuple) -> None:
    """The forward pre-hook: shapes from the input, initial values, then the plain class."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear layer whose in_features is the size of its first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        Linear.__init__(self, 0, 0, False)
        self._await_first_input()
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # shapes that came from load_state_dict
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} "
                                     "is not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvMixin(LazyModuleMixin):
    """The lazy convolutions: in_channels from the input's channel dimension."""

    def _lazy_init(self, out_channels: int, bias: bool, dtype: Any) -> None:
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        channels = ((self.in_channels, self.out_channels // self.groups) if self.transposed
                    else (self.out_channels, self.in_channels // self.groups))
        self.weight.materialize((*channels, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


def _lazy_conv(plain: type, name: str) -> type:
    """The lazy form of a convolution class: (out_channels, kernel_size, ...) as torch's."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        plain.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                       padding_mode, device, dtype)
        self._await_first_input()
        self._lazy_init(out_channels, bias, dtype)

    def __init_transposed__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                            padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                            bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                            device: Any = None, dtype: Any = None) -> None:
        plain.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups,
                       False, dilation, padding_mode, device, dtype)
        self._await_first_input()
        self._lazy_init(out_channels, bias, dtype)

    namespace = {
        "__init__": __init_transposed__ if plain._transposed else __init__,
        "__doc__": f"A {plain.__name__} whose in_channels is read from its first input.",
        "__module__": __name__, "cls_to_become": plain,
    }
    return type(name, (_LazyConvMixin, plain), namespace)


LazyConv1d = _lazy_conv(Conv1d, "LazyConv1d")
LazyConv2d = _lazy_conv(Conv2d, "LazyConv2d")
LazyConv3d = _lazy_conv(Conv3d, "LazyConv3d")
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, "LazyConvTranspose1d")
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, "LazyConvTranspose2d")
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, "LazyConvTranspose3d")


class _LazyNormMixin(LazyModuleMixin):
    """The lazy batch norms: num_features from the input's dimension 1."""

    def _lazy_init(self, affine: bool, track_running_stats: bool, bias: bool,
                   dtype: Any) -> None:
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = factories.tensor(0, dtype=dtypes.int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        for name in ("weight", "bias", "running_mean", "running_var"):
            value = getattr(self, name, None)
            if is_lazy(value):
                value.materialize((self.num_features,))
        self.reset_parameters()


def _lazy_batch_norm(plain: type, name: str) -> type:
    def __init__(self: Any, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        plain.__init__(self, 0, eps, momentum, False, False, device, dtype)
        self._await_first_input()
        self._lazy_init(affine, track_running_stats, bias, dtype)

    namespace = {
        "__init__": __init__, "__module__": __name__, "cls_to_become": plain,
        "__doc__": f"A {plain.__name__} whose num_features is read from its first input.",
    }
    return type(name, (_LazyNormMixin, plain), namespace)


LazyBatchNorm1d = _lazy_batch_norm(BatchNorm1d, "LazyBatchNorm1d")
LazyBatchNorm2d = _lazy_batch_norm(BatchNorm2d, "LazyBatchNorm2d")
