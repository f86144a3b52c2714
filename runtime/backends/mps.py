"""torch.backends.mps: Apple's Metal backend, absent from a CPU-only torch."""

from __future__ import annotations

import os

__all__ = ["is_available", "is_built", "is_macos13_or_newer", "is_macos_or_newer",
           "get_core_count", "get_name"]


def is_built() -> bool:
    return False


def is_available() -> bool:
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    return False


def get_core_count() -> int:
    return os.cpu_count() or 1


def get_name() -> str:
    return ""
