"""Forward-mode AD's core: the dual level, and the tangent a Tensor carries in `_fw_grad`.

A tensor with a tangent at the current level is a dual tensor. Every generated forward
wrapper (generated/ops.py) asks `any_tangent(...)` of its differentiable inputs and, if one
has a tangent, runs the op's JVP function (generated/forward.py) inside
`computing_tangents()`: there forward AD is off, so the ops of a formula get no tangents
of their own (there is one level, as in PyTorch), while reverse mode records them as usual;
that is what makes forward-over-reverse and reverse-over-forward work. A missing tangent
counts as zero. Like PyTorch, forward AD ignores grad mode (no_grad) but not inference_mode.

The public API (dual_level, make_dual, unpack_dual) is runtime.autograd.forward_ad.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from runtime._tensor import Tensor
from runtime.grad_mode import is_inference_mode_enabled

# True while a dual level is open and no JVP formula is running: the wrappers read it
# before anything else, so forward AD costs an op one attribute lookup when it is off.
enabled = False


class _Level:
    """The open dual level (-1: none), and a token that tells one opening from the next."""

    current = -1
    token: object | None = None


# Every tensor given a tangent at the open level, by id, so that closing it can drop them.
_duals: dict[int, weakref.ref] = {}


def current_level() -> int:
    return _Level.current


def enter_level() -> int:
    global enabled
    if _Level.current >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _Level.current = 0
    _Level.token = object()
    enabled = True
    return 0


def exit_level() -> None:
    """Close the level: every tangent made in it is dropped, as PyTorch does."""
    global enabled
    for ref in list(_duals.values()):
        tensor = ref()
        if tensor is not None:
            tensor._fw_grad = None
    _duals.clear()
    _Level.current = -1
    _Level.token = None
    enabled = False


class computing_tangents:  # noqa: N801 - used like a function, as `no_grad`
    """Forward AD off while a JVP formula runs: its ops compute primal values only."""

    __slots__ = ("_previous",)

    def __enter__(self) -> None:
        global enabled
        self._previous = enabled
        enabled = False

    def __exit__(self, *exc_info: object) -> None:
        global enabled
        enabled = self._previous


def any_tangent(*values: Any) -> bool:
    """Whether an input (or a tensor in a Tensor[] input) is a dual tensor; never in
    inference_mode, which turns forward AD off as it does reverse mode (as in PyTorch)."""
    if is_inference_mode_enabled():
        return False
    for value in values:
        if isinstance(value, Tensor):
            if value._fw_grad is not None:
                return True
        elif isinstance(value, list | tuple):
            if any(isinstance(v, Tensor) and v._fw_grad is not None for v in value):
                return True
    return False


# The zeros `tangent` fills in for an input without a tangent. PyTorch passes an "efficient
# zero tensor" there, whose products are zero even with inf or nan; a JVP that is a sum of
# terms (generated/forward.py) leaves out the terms of these instead, so `inf * 0` never
# makes a nan (see `defined`).
# By id (a Tensor's == is elementwise), each entry dropped when its zeros are.
_filled: dict[int, weakref.ref] = {}


def defined(tangent: Any) -> bool:
    """Whether a JVP's tangent argument is an input's own tangent (not filled-in zeros)."""
    if type(tangent) is int:  # a Python number's
        return False
    filled = _filled.get(id(tangent))
    return filled is None or filled() is not tangent


def complete(total: Any, result: Tensor) -> Any:
    """A sum of the defined terms of a JVP, broadcast to the result's shape (a term left out
    may have been the one that broadcast)."""
    if isinstance(total, Tensor) and total.shape != result.shape:
        return total + Tensor._make(np.zeros(result._data.shape, total._data.dtype), None)
    return total


def tangent(value: Any) -> Any:
    """The tangent a JVP formula sees for an input: its own, or zeros if it has none.

    An absent optional tensor stays None; a Python number standing in for a tensor is 0.
    """
    if isinstance(value, Tensor):
        found = value._fw_grad
        if found is not None:
            return found
        zeros = Tensor._make(np.zeros_like(value._data), None)
        key = id(zeros)
        _filled[key] = weakref.ref(zeros, lambda _, key=key: _filled.pop(key, None))
        return zeros
    if isinstance(value, list | tuple):
        return [None if v is None else tangent(v) for v in value]
    return None if value is None else 0


def _check_size(tensor: Tensor, new: Tensor) -> None:
    if new.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(new.shape)}."
        )


def _register(tensor: Tensor) -> None:
    key = id(tensor)
    ref = _duals.get(key)
    if ref is None or ref() is not tensor:
        _duals[key] = weakref.ref(tensor, lambda dead, key=key: _forget(key, dead))


def _forget(key: int, dead: weakref.ref) -> None:
    if _duals.get(key) is dead:
        del _duals[key]


def set_tangent(tensor: Tensor, new: Tensor | None) -> None:
    """Make `new` the tangent of an op's output; outputs that are not floating get none."""
    if new is None or not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        return
    if not isinstance(new, Tensor):
        raise TypeError(f"a forward formula gave a {type(new).__name__}, not a Tensor")
    _check_size(tensor, new)
    tensor._fw_grad = new
    _register(tensor)


def set_tangents(outputs: Any, tangents: Any) -> None:
    """The tangents of an op with several outputs, or a Tensor[] output, one by one."""
    for output, new in zip(outputs, tangents, strict=True):
        set_tangent(output, new)


def set_tangent_inplace(tensor: Tensor, new: Tensor | None) -> None:
    """After an in-place op: write the new tangent into the old one, so that the views that
    share it see it too, as in PyTorch. A view with no tangent of its own writes into (the
    matching view of) its base's tangent. Where neither works (a tangent that is recorded
    by reverse mode, or not writable), the new tangent replaces the old.
    """
    if new is None or not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        return
    old = tensor._fw_grad
    if new is old:
        return
    _check_size(tensor, new)
    if old is None and tensor._base is not None:
        old = _view_of_base_tangent(tensor)
    if old is not None and _writable(old, new):
        np.copyto(old._data, new._data)
        old._version_counter.version += 1
        new = old
    set_tangent(tensor, new)


def _writable(old: Tensor, new: Tensor) -> bool:
    return (old._data.flags.writeable and old.shape == new.shape
            and not old.requires_grad and not new.requires_grad
            and np.can_cast(new._data.dtype, old._data.dtype, casting="same_kind"))


def _view_of_base_tangent(view: Tensor) -> Tensor | None:
    """The part of the base's tangent (zeros if it had none) that `view`'s data is of its
    base's data; None when the two are laid out differently."""
    base = view._base
    if not (base.dtype.is_floating_point or base.dtype.is_complex):
        return None
    base_tangent = base._fw_grad
    if base_tangent is None:
        base_tangent = Tensor._make(np.zeros_like(base._data), None)
        set_tangent(base, base_tangent)
    data, base_data = base_tangent._data, base._data
    if data.dtype != base_data.dtype or data.strides != base_data.strides \
            or not data.flags.c_contiguous:
        return None
    offset = view._data.__array_interface__["data"][0] - base_data.__array_interface__["data"][0]
    try:
        array = np.ndarray(view._data.shape, data.dtype, buffer=data, offset=offset,
                           strides=view._data.strides)
    except (TypeError, ValueError):
        return None
    result = Tensor._make(array, None)
    result._version_counter = base_tangent._version_counter
    result._base = base_tangent
    return result


def not_implemented(name: str) -> None:
    """What a wrapper of an op without a forward formula does when it meets a tangent."""
    raise NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not "
        "been implemented yet: give its entry in derivatives.yaml a forward formula "
        "(`result: ...`, auto_element_wise or auto_linear)."
    )


# -- saved outputs ------------------------------------------------------------------------
# A saved output is rebuilt on unpack (see SavedVariable); it keeps its tangent, as in
# PyTorch, so that a backward run at the same level (forward-over-reverse) sees it.

def saved_tangent(tensor: Tensor) -> tuple[object, Tensor] | None:
    if tensor._fw_grad is None:
        return None
    return _Level.token, tensor._fw_grad


def restore_tangent(tensor: Tensor, saved: tuple[object, Tensor]) -> None:
    """Give an unpacked output back its tangent, if the level it was saved at is still open."""
    token, saved_tangent_ = saved
    if token is _Level.token:
        tensor._fw_grad = saved_tangent_
        _register(tensor)
