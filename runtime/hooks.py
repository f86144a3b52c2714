"""RemovableHandle: what registering a hook returns, as torch.utils.hooks' does.

Tensors keep their leaf hooks and nodes their hooks in dicts keyed by the handle's id, so
that `handle.remove()` takes exactly that hook out again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from runtime import changes


class RemovableHandle:
    """Returned by register_hook: `handle.remove()` takes the hook out again."""

    __slots__ = ("_hooks", "_key")
    _next_key = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self._hooks = hooks
        self._key = next(RemovableHandle._next_key)

    @property
    def id(self) -> int:
        return self._key

    def remove(self) -> None:
        changes.changed()  # (a compiled step's guards read hooks: runtime/changes.py)
        self._hooks.pop(self._key, None)


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    """Put `fn` in `hooks` under a new handle's id, and return the handle."""
    handle = RemovableHandle(hooks)
    changes.changed()
    hooks[handle.id] = fn
    return handle
