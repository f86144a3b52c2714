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

    __slots__ = ("_extra", "_hooks", "_key")
    _next_key = itertools.count()

    def __init__(self, hooks: dict, extra_dict: dict | list | tuple | None = None) -> None:
        self._hooks = hooks
        self._key = next(RemovableHandle._next_key)
        # Dicts keyed by the same id that say something about the hook (a module's
        # `with_kwargs` flags): removing the hook removes it from them too.
        self._extra = (() if extra_dict is None else
                       tuple(extra_dict) if isinstance(extra_dict, list | tuple)
                       else (extra_dict,))

    @property
    def id(self) -> int:
        return self._key

    def remove(self) -> None:
        changes.changed()  # (a compiled step's guards read hooks: runtime/changes.py)
        self._hooks.pop(self._key, None)
        for extra in self._extra:
            extra.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict, fn: Callable, prepend: bool = False,
             extra_dict: dict | list | None = None) -> RemovableHandle:
    """Put `fn` in `hooks` under a new handle's id (first if `prepend`), and return the
    handle."""
    handle = RemovableHandle(hooks, extra_dict)
    changes.changed()
    hooks[handle.id] = fn
    if prepend:
        rest = [(key, hook) for key, hook in hooks.items() if key != handle.id]
        for key, _ in rest:
            del hooks[key]
        hooks.update(rest)
    return handle
