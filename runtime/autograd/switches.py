"""torch.autograd's process-wide questions with a CPU meaning: whether backward may run on
several threads (gradgen's engine runs on the calling thread either way; the flag is kept and
scoped as torch scopes it), whether view replay is on (never: gradgen records views' geometry),
and whether the Kineto profiler is there (no: gradgen's profiler is its own)."""

from __future__ import annotations

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
