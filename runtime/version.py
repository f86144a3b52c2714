"""torch.__version__: the torch version whose API gradgen follows, marked as gradgen's.

A program that checks the version sees 2.13.0; the local version label `+gradgen` says
who answers (where PyTorch's says `+cpu`). As PyTorch's TorchVersion, it is a string that
compares as a version with strings and tuples (`torch.__version__ >= "2.1"`, `>= (2, 1)`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["TorchVersion", "__version__"]


def _parts(version: Any) -> tuple[tuple[int, ...], str]:
    """((2, 13, 0), "gradgen") from "2.13.0+gradgen"; (2, 13) is "2.13". A pre-release
    suffix is ignored."""
    if isinstance(version, tuple):
        version = ".".join(str(part) for part in version)
    match = re.fullmatch(r"(\d+(?:\.\d+)*)[^+]*(?:\+(.*))?", version)
    if match is None:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group(1).split(".")), match.group(2) or ""


def _keys(left: Any, right: Any) -> tuple[tuple, tuple]:
    """Comparable keys: releases padded with zeros (2.13 is 2.13.0), then the local label,
    which sorts a version after the same one without (as Python's packaging orders them)."""
    (left_release, left_local), (right_release, right_local) = _parts(left), _parts(right)
    width = max(len(left_release), len(right_release))
    return ((left_release + (0,) * (width - len(left_release)), left_local),
            (right_release + (0,) * (width - len(right_release)), right_local))


class TorchVersion(str):
    """A version string that compares as a version."""

    __slots__ = ()

    def _compare(self, other: Any) -> tuple[tuple, tuple] | None:
        if not isinstance(other, str | tuple):
            return None
        return _keys(str(self), other)

    def __eq__(self, other: object) -> bool:
        pair = self._compare(other)
        return NotImplemented if pair is None else pair[0] == pair[1]

    def __lt__(self, other: Any) -> bool:
        pair = self._compare(other)
        return NotImplemented if pair is None else pair[0] < pair[1]

    def __le__(self, other: Any) -> bool:
        pair = self._compare(other)
        return NotImplemented if pair is None else pair[0] <= pair[1]

    def __gt__(self, other: Any) -> bool:
        pair = self._compare(other)
        return NotImplemented if pair is None else pair[0] > pair[1]

    def __ge__(self, other: Any) -> bool:
        pair = self._compare(other)
        return NotImplemented if pair is None else pair[0] >= pair[1]

    __hash__ = str.__hash__


__version__ = TorchVersion("2.13.0+gradgen")
