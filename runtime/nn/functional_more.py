"""torch.nn.functional's remaining small names: assert_int_or_pair (the check torch's
fold/unfold use on a size argument)."""

from __future__ import annotations

from typing import Any

__all__ = ["assert_int_or_pair"]


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """AssertionError(message.format(arg_name)) unless `arg` is an int or has two items."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
