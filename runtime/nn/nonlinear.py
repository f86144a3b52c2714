"""More activations, functions and layers: hardshrink, softshrink, threshold, celu, selu,
softsign and tanhshrink (Hardshrink, Softshrink, Threshold, CELU, SELU, Softsign, Tanhshrink).

hardshrink, softshrink, threshold(_) and celu(_) are spec ops; selu is elu with fixed alpha
and scale (EluBackward0 in the graph, as in PyTorch); softsign and tanhshrink are made of
ops, as torch.nn.functional writes them. Like conv.py, the functions live beside the layers:
runtime/nn/functional.py only re-exports them.
"""

from __future__ import annotations

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime.nn.module import Module

__all__ = [
    "CELU", "SELU", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "celu",
    "hardshrink", "selu", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_",
]

# SELU's constants (Klambauer et al., 2017), as torch's kernel takes them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (HardshrinkBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hardshrink, (input, lambd), {})
        if heard is not _modes.PASS:
            return heard
    return ops.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x moved lambd towards 0, and 0 within lambd of it (SoftshrinkBackward0)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(softshrink, (input, lambd), {})
        if heard is not _modes.PASS:
            return heard
    return ops.softshrink(input, lambd)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x above `threshold`, `value` elsewhere (ThresholdBackward0; in place 1)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        # (`threshold` here is the argument: the function is the module's)
        heard = _modes.dispatch(globals()["threshold"], (input, threshold, value, inplace), {})
        if heard is not _modes.PASS:
            return heard
    if inplace:
        return ops.threshold_(input, threshold, value)
    return ops.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """threshold, in place."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(threshold_, (input, threshold, value), {})
        if heard is not _modes.PASS:
            return heard
    return ops.threshold_(input, threshold, value)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (CeluBackward0; in place 1)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(celu, (input, alpha, inplace), {})
        if heard is not _modes.PASS:
            return heard
    return ops.celu_(input, alpha) if inplace else ops.celu(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale (max(0, x) + min(0, alpha (exp(x) - 1))) with SELU's constants: elu with a scale
    (EluBackward0; in place EluBackward1), as torch computes it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(selu, (input, inplace), {})
        if heard is not _modes.PASS:
            return heard
    if inplace:
        return ops.elu_(input, _SELU_ALPHA, _SELU_SCALE)
    return ops.elu(input, _SELU_ALPHA, _SELU_SCALE)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|), written as torch.nn.functional writes it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(softsign, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return input / (ops.abs(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x), written as torch.nn.functional writes it."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tanhshrink, (input,), {})
        if heard is not _modes.PASS:
            return heard
    return input - ops.tanh(input)


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Module):
    """x moved lambd towards 0, and 0 within lambd of it."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Threshold(Module):
    """x above `threshold`, `value` elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class CELU(Module):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class SELU(Module):
    """Self-normalising elu: scale (max(0, x) + min(0, alpha (exp(x) - 1)))."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)

