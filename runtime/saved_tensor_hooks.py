"""The hooks on saved tensors of `torch.autograd.graph` (runtime/autograd/graph.py):
`saved_tensors_hooks(pack, unpack)` and `disable_saved_tensors_hooks` (`save_on_cpu`, a
saved_tensors_hooks of its own, is in runtime/autograd/graph.py).

While `saved_tensors_hooks` is on, every tensor a node saves for backward is handed to
`pack_hook` when it is saved, and the node keeps what that returns instead of the tensor;
`unpack_hook` turns it back into a tensor whenever the node needs it (its backward, or a
`grad_fn._saved_self` read). runtime/node.py's SavedVariable calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["saved_tensors_hooks", "disable_saved_tensors_hooks"]

# The (pack, unpack) pairs in force, innermost last; and the messages of the
# disable_saved_tensors_hooks blocks in force.
_stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
_disabled: list[str] = []


def current() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    """The innermost (pack_hook, unpack_hook) pair in force, or None."""
    return _stack[-1] if _stack else None


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """A context manager: the tensors saved for backward inside it are packed by
    `pack_hook(tensor)` and unpacked by `unpack_hook(packed)`."""

    def __init__(self, pack_hook: Callable[[Any], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _stack.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc_info: object) -> None:
        _stack.pop()


class disable_saved_tensors_hooks:  # noqa: N801 - torch's name
    """A context manager inside which entering `saved_tensors_hooks` raises RuntimeError
    with `error_message`."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _disabled.append(self.error_message)

    def __exit__(self, *exc_info: object) -> None:
        _disabled.pop()
