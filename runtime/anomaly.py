"""Anomaly mode: remember where each node was made, and check backward for NaN.

With it on, every node keeps the traceback of the forward call that created it; when its
backward fails, the engine prints that traceback, and a node returning NaN is an error.
As in PyTorch, the mode is one for the whole process, not one per thread.
"""

from __future__ import annotations

import functools
import os
import traceback
from pathlib import Path

from runtime._warn import warn_at_caller


class _State:
    enabled: bool = False
    check_nan: bool = True


_state = _State()


def is_enabled() -> bool:
    return _state.enabled


def check_nan() -> bool:
    return _state.check_nan


_OWN_DIRECTORIES = tuple(
    str(Path(__file__).resolve().parent.parent / name) + os.sep for name in ("runtime", "generated")
)


def forward_trace() -> list[str]:
    """The stack of the forward call being recorded, without gradgen's own frames."""
    return [line for line in traceback.format_stack()[:-1]
            if not line.lstrip().startswith(tuple(f'File "{d}' for d in _OWN_DIRECTORIES))]


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turns anomaly mode on or off; a context manager, and effective when called."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = mode, check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled, _state.check_nan = self._previous


class detect_anomaly:  # noqa: N801
    """Context manager (and decorator) that turns anomaly mode on inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        warn_at_caller(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
        )
        self._previous = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan

    def __exit__(self, *exc_info: object) -> None:
        _state.enabled, _state.check_nan = self._previous

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)

        return wrapper
