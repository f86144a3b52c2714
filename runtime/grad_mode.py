"""Grad modes, per thread as in PyTorch: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator. The flag lives in a threading.local, so a
thread under `no_grad` does not stop another from recording its graph.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from runtime import changes, modes

_F = TypeVar("_F", bound=Callable[..., Any])


class _State(threading.local):
    enabled: bool = True
    inference: bool = False


_state = _State()

# How many inference_mode(True) blocks are open now, in every thread. While none is, a new
# tensor is no inference tensor, and runtime/_tensor.py's constructor knows it without
# reading this thread's flag: an attribute of a threading.local, which costs several times
# a plain attribute (more when the caches are cold). A lock keeps the count exact.
INFERENCE_BLOCKS = changes.Count()
_blocks_lock = threading.Lock()


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set_grad_enabled(mode: bool) -> None:
    """torch._C._set_grad_enabled, which every grad-mode manager calls: a mode hears it."""
    if modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = modes.dispatch(_set_grad_enabled, (mode,), {})
        if heard is not modes.PASS:
            return
    _state.enabled = mode


class _GradModeContext:
    """Base of the grad-mode managers: sets the flag on enter, restores it on exit."""

    def _target(self) -> bool:
        raise NotImplementedError

    def __enter__(self) -> None:
        self._previous = _state.enabled
        _set_grad_enabled(self._target())

    def __exit__(self, *exc_info: object) -> None:
        _set_grad_enabled(self._previous)

    def __call__(self, func: _F) -> _F:
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _GradModeContext:
        return type(self)()


def _wrap_generator(context: Callable[[], _GradModeContext], func: Callable) -> Callable:
    """A decorated generator runs each of its steps in the mode, not only its creation."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        generator = func(*args, **kwargs)
        resume, value = generator.send, None
        while True:
            try:
                with context():
                    response = resume(value)
            except StopIteration as stop:
                return stop.value
            try:
                resume, value = generator.send, (yield response)
            except GeneratorExit:
                with context():
                    generator.close()
                raise
            except BaseException as error:  # thrown in by the caller: pass it on
                resume, value = generator.throw, error

    return wrapper


class _NoParamDecorator(_GradModeContext):
    """`@no_grad` works without parentheses too, as in PyTorch."""

    def __new__(cls, func: Callable | None = None) -> Any:
        if func is None:
            return super().__new__(cls)
        return cls()(func)


class no_grad(_NoParamDecorator):  # noqa: N801 - PyTorch's name
    """Ops inside record no graph; results have requires_grad=False."""

    def _target(self) -> bool:
        return False


class enable_grad(_NoParamDecorator):  # noqa: N801
    """Re-enables recording inside a no_grad block."""

    def _target(self) -> bool:
        return True


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """Sets recording on or off; like PyTorch, it takes effect when called, too."""

    def __init__(self, mode: bool) -> None:
        self._previous = _state.enabled
        self.mode = bool(mode)
        _set_grad_enabled(self.mode)

    def _target(self) -> bool:
        return self.mode

    def __enter__(self) -> None:
        _set_grad_enabled(self.mode)

    def __call__(self, func: _F) -> _F:
        _state.enabled = self._previous  # as a decorator, it does not change the mode now
        return super().__call__(func)

    def clone(self) -> set_grad_enabled:
        previous = _state.enabled
        clone = set_grad_enabled(self.mode)
        _state.enabled = previous
        return clone


class inference_mode(_GradModeContext):  # noqa: N801
    """Like no_grad, and tensors made inside are inference tensors: never saved for backward."""

    def __new__(cls, mode: bool | Callable = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def _target(self) -> bool:
        return not self.mode

    def __enter__(self) -> None:
        if self.mode:
            with _blocks_lock:
                INFERENCE_BLOCKS.value += 1
        self._previous_inference = _state.inference
        _state.inference = self.mode
        # torch's inference mode is a guard of its own: no `_set_grad_enabled` call to hear
        self._previous, _state.enabled = _state.enabled, self._target()

    def __exit__(self, *exc_info: object) -> None:
        _state.inference = self._previous_inference
        _state.enabled = self._previous
        if self.mode:
            with _blocks_lock:
                INFERENCE_BLOCKS.value -= 1

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)
