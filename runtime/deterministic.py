"""torch.use_deterministic_algorithms and its companions: a global flag (and a warn-only
flag) that programs set and read. gradgen's numpy kernels are deterministic already, so
the flags change no result; they read back as torch's do."""

from __future__ import annotations

from typing import Any

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_state = {"enabled": False, "warn_only": False}


def _check_bool(name: str, value: Any, position: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{position} must "
                        f"be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (or, with warn_only, only a warning where one is
    not); gradgen's kernels always are."""
    _check_bool("mode", mode, " (position 1)")
    _check_bool("warn_only", warn_only, "")
    _state["enabled"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """0 / "default": off; 1 / "warn": deterministic, warn only; 2 / "error": on."""
    if not isinstance(debug_mode, str | int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _MODES[debug_mode]
    debug_mode = int(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _state["enabled"]:
        return 0
    return 1 if _state["warn_only"] else 2
