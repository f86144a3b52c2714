"""torch.backends.openmp: torch's CPU wheels are built with OpenMP."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return True
