"""torch.backends.mkl: torch's x86 CPU wheels are built with MKL."""

from __future__ import annotations

__all__ = ["is_available", "verbose", "VERBOSE_OFF", "VERBOSE_ON"]

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    return True


class verbose:  # noqa: N801 - torch's name
    """A context manager for MKL's verbose output: nothing to print in gradgen."""

    def __init__(self, enable: int) -> None:
        self.enable = enable

    def __enter__(self) -> verbose:
        return self

    def __exit__(self, *exc_info: object) -> bool:
        return False
