"""`torch.cpu`: the CPU as a device module, beside `torch.cuda` (torch.get_device_module
gives either). There is one CPU device, always available; synchronizing waits for nothing,
as gradgen computes each op before it returns."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute

# A package to the import system, so that `import torch.cuda.amp` reaches the import hook
# (runtime/aliases.py), which maps it to gradgen's module; there are no files under it.
__path__: list[str] = []

__all__ = ["current_device", "device_count", "is_available", "is_initialized", "set_device",
           "synchronize"]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for."""


def set_device(device: Any) -> None:
    """The CPU is the one device: nothing to set."""


def __getattr__(name: str) -> Any:
    if name == "amp":  # torch.cpu.amp, a higher layer: imported when first asked for
        import importlib

        return importlib.import_module("runtime.cpu_amp")
    raise missing_attribute(__name__, name)
