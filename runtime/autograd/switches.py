"""torch.autograd's process-wide questions with a CPU meaning: whether backward may run on
several threads (gradgen's engine runs on the calling thread either way; the flag is kept and
scoped as torch scopes it), whether view replay is on (never: gradgen records views' geometry),
and whether the Kineto profiler is there (no: gradgen's profiler is its own)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["is_multithreading_enabled", "set_multithreading_enabled", "is_view_replay_enabled",
           "kineto_available"]

_multithreading = [True]


def is_multithreading_enabled() -> bool:
    return _multithreading[0]


class set_multithreading_enabled:  # noqa: N801 - torch's name
    """Sets the flag when made; as a context manager, puts the previous value back on exit."""

    def __init__(self, mode: bool) -> None:
        self.previous = _multithreading[0]
        _multithreading[0] = bool(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: Any) -> None:
        _multithreading[0] = self.previous

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(_multithreading[0])


def is_view_replay_enabled() -> bool:
    return False


def kineto_available() -> bool:
    return False


# -- issue 28, helper funcs: enforce_grad_layout_policy ----------------------------------------

class _LayoutPolicy(threading.local):
    enforced: bool = True


_layout_policy = _LayoutPolicy()


def _is_grad_layout_enforcement_enabled() -> bool:
    """torch._C's flag of the same name: whether accumulated gradients must take their
    parameter's strides. gradgen keeps every tensor in one layout, so the flag changes no
    result; it is kept, per thread, as torch keeps it."""
    return _layout_policy.enforced


class enforce_grad_layout_policy:  # noqa: N801 - torch's name
    """Sets the gradient layout policy when made; as a context manager, puts the previous
    value back on exit; as a decorator, sets it for each call of the function only."""

    def __init__(self, enable: bool = True) -> None:
        self.prev = _layout_policy.enforced
        _layout_policy.enforced = enable
        self.mode = enable

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: Any) -> None:
        _layout_policy.enforced = self.prev

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        _layout_policy.enforced = self.prev

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self) -> enforce_grad_layout_policy:
        return self.__class__(self.mode)


__all__ += ["enforce_grad_layout_policy"]
# -- end of funcs' block ------------------------------------------------------------------------
