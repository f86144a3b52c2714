"""`runtime.autograd.forward_ad`: forward-mode AD with dual tensors, as torch.autograd.forward_ad.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)   # jvp = J(primal) @ tangent

Every op of the spec passes tangents on with its forward formula (generated/forward.py);
see runtime/forward_grad.py for how. There is one level at a time, as in PyTorch.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

from generated import ops
from runtime import forward_grad, recording
from runtime._tensor import Tensor
from runtime.grad_mode import is_grad_enabled
from runtime.node import Node

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


def enter_dual_level() -> int:
    """Open a dual level and return it (always 0: nesting is not supported, as in PyTorch)."""
    return forward_grad.enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level; every tangent made in it is dropped."""
    current = forward_grad.current_level()
    if level is None:
        level = current
    if level != current:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    forward_grad.exit_level()


class dual_level(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) for forward AD: make and unpack dual tensors inside."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc_info: object) -> None:
        exit_dual_level()


def _check_level(level: int | None, function: str) -> int:
    current = forward_grad.current_level()
    if level is None:
        level = current
    if level != current or level < 0:
        raise RuntimeError(f"Invalid level given to {function}")
    return level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` whose tangent is `tangent` (kept as it is, not copied).

    Like PyTorch's, the view is recorded by reverse mode (ViewBackward0), so make_dual is
    backward differentiable.
    """
    if level is None and forward_grad.current_level() < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    _check_level(level, "_make_dual")
    if tensor._fw_grad is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           "gradient at the same level 0 is not supported.")
    with forward_grad.computing_tangents():
        dual = ops.view(tensor, tensor.shape)
    forward_grad.set_tangent(dual, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: the primal (a view without the tangent) and the tangent."""

    primal: Tensor
    tangent: Tensor | None


class Identity(Node):
    """The node of unpack_dual's primal, a plain alias of the dual tensor (PyTorch's name)."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::Identity"

    def apply(self, grads: list) -> list:
        return [grads[0]]


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of a dual tensor; (tensor, None) outside a dual level.

    The primal is a view of `tensor` without its tangent, and the tangent is the one
    `tensor` carries, as it is (None for a tensor that is not dual).
    """
    if level is None and forward_grad.current_level() < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    if tensor._fw_grad is None:
        return UnpackedDualTensor(tensor, None)
    _check_level(level, "_fw_primal")
    primal = recording.as_view(tensor, tensor._data)
    if is_grad_enabled() and tensor.requires_grad:
        node = Identity()
        node.set_next_edges(recording.collect_next_edges(tensor))
        recording.set_history(primal, node)
    return UnpackedDualTensor(primal, tensor._fw_grad)
