"""torch's other names for ops gradgen has: `torch.arccos` is acos, `x.clip_` is clamp_.

torch binds each as an op of its own that runs the op it names, so the graph shows the
named op's node (`torch.arccos(x).grad_fn` is AcosBackward0), and the name in its
argument errors is the one the program called (`arccos(): argument 'input' ...`). Here
each other name calls the op and renames its TypeErrors the same way. `OtherNameMethods`
holds the Tensor methods, which runtime/methods.py sets on Tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor

# other name -> the op it names. Each is a torch function and a Tensor method, and the
# in-place name (`arccos_`) stands for the op's in-place form where torch has one.
OTHER_NAMES: dict[str, str] = {
    "absolute": "abs",
    "arccos": "acos",
    "arccosh": "acosh",
    "arcsin": "asin",
    "arcsinh": "asinh",
    "arctan": "atan",
    "arctan2": "atan2",
    "arctanh": "atanh",
    "clip": "clamp",
    "divide": "div",
    "fix": "trunc",
    "greater": "gt",
    "greater_equal": "ge",
    "less": "lt",
    "less_equal": "le",
    "multiply": "mul",
    "negative": "neg",
    "not_equal": "ne",
    "subtract": "sub",
    "true_divide": "div",
    "swapdims": "transpose",
}
# in-place forms torch has as functions too (`torch.arccos_`), beside the Tensor methods
INPLACE_FUNCTIONS = ("arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "clip",
                     "fix", "negative")

__all__ = [*OTHER_NAMES, *(f"{name}_" for name in INPLACE_FUNCTIONS), "swapaxes", "concat",
           "concatenate"]


def rename_error(error: TypeError, target: str, name: str) -> None:
    """torch's message for `name` where the op `target` raised: the messages open with the
    op's name (`acos(): argument 'input' ...`, `acos() takes 1 positional argument ...`)."""
    if error.args and isinstance(error.args[0], str) and error.args[0].startswith(f"{target}("):
        error.args = (name + error.args[0][len(target):], *error.args[1:])


def _under_name(function: Callable, target: str, name: str) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(call, args, kwargs)
            if heard is not _modes.PASS:
                return heard
        try:
            return function(*args, **kwargs)
        except TypeError as error:
            rename_error(error, target, name)
            raise

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"torch.{name}: another name for torch.{target}."
    return call


def _method_under_name(target: str, name: str) -> Callable:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(method, (self, *args), kwargs)
            if heard is not _modes.PASS:
                return heard
        try:
            return getattr(Tensor, target)(self, *args, **kwargs)
        except TypeError as error:
            rename_error(error, target, name)
            raise

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Tensor.{name}: another name for Tensor.{target}."
    return method


for _name, _target in OTHER_NAMES.items():
    globals()[_name] = _under_name(getattr(ops, _target), _target, _name)
for _name in INPLACE_FUNCTIONS:
    globals()[f"{_name}_"] = _under_name(getattr(ops, f"{OTHER_NAMES[_name]}_"),
                                         f"{OTHER_NAMES[_name]}_", f"{_name}_")


_transpose_as_swapaxes = _under_name(ops.transpose, "transpose", "swapaxes")


def swapaxes(input: Any, axis0: int, axis1: int) -> Any:
    """transpose, with NumPy's names for the dims."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(swapaxes, (input, axis0, axis1), {})
        if heard is not _modes.PASS:
            return heard
    return _transpose_as_swapaxes(input, axis0, axis1)


_cat_as = {name: _under_name(ops.cat, "cat", name) for name in ("concat", "concatenate")}


def concat(tensors: Any, dim: Any = 0, *, axis: Any = None, out: Any = None) -> Any:
    """cat under another name."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(concat, (tensors, dim), {"axis": axis, "out": out})
        if heard is not _modes.PASS:
            return heard
    return _concatenate("concat", tensors, dim if axis is None else axis, out)


def concatenate(tensors: Any, axis: Any = 0, *, dim: Any = None, out: Any = None) -> Any:
    """cat under NumPy's name, with its `axis`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(concatenate, (tensors, axis), {"dim": dim, "out": out})
        if heard is not _modes.PASS:
            return heard
    return _concatenate("concatenate", tensors, axis if dim is None else dim, out)


def _concatenate(name: str, tensors: Any, dim: Any, out: Any) -> Any:
    return _cat_as[name](tensors, dim) if out is None else _cat_as[name](tensors, dim, out=out)


class OtherNameMethods:
    """Tensor methods under torch's other names, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def swapaxes(self, axis0: int, axis1: int) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(OtherNameMethods.swapaxes, (self, axis0, axis1), {})
            if heard is not _modes.PASS:
                return heard
        return _swapaxes_methods[0](self, axis0, axis1)

    def swapaxes_(self, axis0: int, axis1: int) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(OtherNameMethods.swapaxes_, (self, axis0, axis1), {})
            if heard is not _modes.PASS:
                return heard
        return _swapaxes_methods[1](self, axis0, axis1)


_swapaxes_methods = (_method_under_name("transpose", "swapaxes"),
                     _method_under_name("transpose_", "swapaxes_"))


# Every other name is a Tensor method too, in place as well (torch's `x.arccos_()`).
for _name, _target in OTHER_NAMES.items():
    setattr(OtherNameMethods, _name, _method_under_name(_target, _name))
    setattr(OtherNameMethods, f"{_name}_", _method_under_name(f"{_target}_", f"{_name}_"))
