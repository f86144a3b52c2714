"""torch.backends.opt_einsum: torch uses the opt_einsum package for einsum's contraction
order when it is installed; gradgen never does, so it reports it absent (as torch does
without the package)."""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "get_opt_einsum"]

enabled = False
strategy = None


def is_available() -> bool:
    return False


def get_opt_einsum() -> Any:
    return None
