"""The profiler's C++ types that torch.autograd re-exports: ProfilerState (which profiler
runs), ProfilerConfig (its settings), ProfilerEvent (an event of the legacy profiler) and
SavedTensor (a tensor a backward node keeps). Programs name them in annotations and checks;
gradgen's profiler (runtime/profiler) and saved variables (runtime/node.py) are its own, so
these are the public faces only, made and refused as torch makes and refuses them."""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["ProfilerConfig", "ProfilerEvent", "ProfilerState", "SavedTensor"]


class ProfilerState(enum.Enum):
    """Which profiler is on, with torch's member values."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value


_CONFIG_SIGNATURE = ("torch._C._profiler.ProfilerConfig(state: torch._C._profiler.ProfilerState, "
                     "report_input_shapes: bool, profile_memory: bool, with_stack: bool, "
                     "with_flops: bool, with_modules: bool, experimental_config: "
                     "torch._C._profiler._ExperimentalConfig, trace_id: str = '')")
_CONFIG_FLAGS = ("report_input_shapes", "profile_memory", "with_stack", "with_flops",
                 "with_modules")


class ProfilerConfig:
    """A profiler's settings: its state, five switches, the experimental options and a
    trace id. Like torch's, it shows none of them as attributes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = ("state", *_CONFIG_FLAGS, "experimental_config", "trace_id")
        values = dict(zip(names, args, strict=False))
        fits = len(args) <= len(names) and not set(kwargs) - set(names) \
            and not set(kwargs) & set(values)
        values.update(kwargs)
        values.setdefault("trace_id", "")
        fits = fits and set(values) == set(names) \
            and isinstance(values["state"], ProfilerState) \
            and all(type(values[flag]) is bool for flag in _CONFIG_FLAGS) \
            and isinstance(values["trace_id"], str)
        if not fits:
            shown = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
            raise TypeError("__init__(): incompatible constructor arguments. The following "
                            f"argument types are supported:\n    1. {_CONFIG_SIGNATURE}\n\n"
                            f"Invoked with: {shown}")
        self._settings = values


class ProfilerEvent:
    """An event of torch's legacy profiler, made by the profiler only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("torch._C._autograd.ProfilerEvent: No constructor defined!")


class SavedTensor:
    """A tensor saved by a backward node, made by the engine only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
