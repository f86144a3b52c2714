"""`torch.overrides`: TorchFunctionMode, a mode that hears every public call a program makes.

    class Log(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        loss = model(x).sum()    # prints linear, relu, linear, sum
        loss.backward()          # prints backward

The modes live on runtime/modes.py's stack, one per thread; every public function and
Tensor method consults it when a mode is on. While a mode's `__torch_function__` runs, the
mode is off the stack, so calling `func` there runs it instead of coming back.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from runtime import modes
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "get_overridable_functions",
           "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like"]


class TorchFunctionMode:
    """Override what every public function and Tensor method does inside a `with` block:
    `__torch_function__(func, types, args, kwargs)` is called instead of `func`. Modes
    nest; a call made inside `__torch_function__` goes to the next mode down."""

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        _push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _pop_mode()


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call unchanged: a base for modes that only watch."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        return func(*args, **(kwargs or {}))


def _push_mode(mode: TorchFunctionMode) -> None:
    modes.push(mode)


def _pop_mode() -> TorchFunctionMode:
    stack = modes.function_modes()
    if not stack:
        raise AssertionError("Trying to pop from an empty mode stack")
    modes.pop(stack[-1])
    return stack[-1]


@contextlib.contextmanager
def _pop_mode_temporarily() -> Iterator[TorchFunctionMode]:
    """The innermost mode, off the stack for the block."""
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = modes.function_modes()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    return modes.function_modes()


def _len_torch_function_stack() -> int:
    return len(modes.function_modes())


def _is_torch_function_mode_enabled() -> bool:
    return bool(modes.function_modes())


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object whose type defines `__torch_function__`."""
    return type(inp) is Tensor or isinstance(inp, Tensor) \
        or hasattr(type(inp), "__torch_function__")


def _overloaded(relevant_args: Any) -> list:
    return [a for a in relevant_args if hasattr(type(a), "__torch_function__")]


def has_torch_function(relevant_args: Any) -> bool:
    """Whether a mode is on, or an argument's type defines `__torch_function__`."""
    return bool(modes.function_modes()) or bool(_overloaded(relevant_args))


def has_torch_function_unary(inp: Any) -> bool:
    return has_torch_function((inp,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Any, *args: Any,
                          **kwargs: Any) -> Any:
    """What a Python function that supports modes does when `has_torch_function` says so:
    the innermost mode hears the call, or else each overriding argument type in turn."""
    heard = modes.dispatch(public_api, args, kwargs)
    if heard is not modes.PASS:
        return heard
    types = tuple(dict.fromkeys(type(a) for a in _overloaded(relevant_args)))
    for kind in types:
        result = kind.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    names = [kind.__name__ for kind in types]
    raise TypeError(f"no implementation found for '{getattr(public_api, '__qualname__', '?')}'"
                    f" on types that implement __torch_function__: {names}")


def _hears_modes(function: Any) -> bool:
    """Whether a function consults the mode stack: its code calls `modes.dispatch`."""
    names = getattr(getattr(function, "__code__", None), "co_names", ())
    return "dispatch" in names and ("_modes" in names or "modes" in names)


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The functions a mode hears, by namespace: `torch`, `torch.nn.functional`,
    `torch.linalg`, `torch.autograd`, and Tensor (its methods, and its properties' `__get__`
    and `__set__`)."""
    found: dict[Any, list[Callable]] = {}
    for name in ("runtime", "runtime.nn.functional", "runtime.linalg", "runtime.autograd"):
        module = sys.modules[name]  # imported by now: this module is one of runtime's
        found[module] = [value for key, value in vars(module).items()
                         if not key.startswith("__") and _hears_modes(value)]
    methods = []
    for key, value in vars(Tensor).items():
        if isinstance(value, property):
            methods += [accessor for accessor, part in ((value.__get__, value.fget),
                                                        (value.__set__, value.fset))
                        if _hears_modes(part)]
        elif _hears_modes(value):
            methods.append(getattr(Tensor, key))
    found[Tensor] = methods
    return found


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
