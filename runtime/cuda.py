"""`torch.cuda` as a build of PyTorch without CUDA has it: no device, and the same answers:
the seeding functions and `empty_cache` do nothing, the memory counters are 0, and anything
that needs a device raises torch's AssertionError."""

from __future__ import annotations

import collections
from typing import Any

from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute
from runtime.devices import CUDA_MISSING

# A package to the import system, so that `import torch.cuda.amp` reaches the import hook
# (runtime/aliases.py), which maps it to gradgen's module; there are no files under it.
__path__: list[str] = []

__all__ = ["current_device", "device_count", "empty_cache", "get_device_capability",
           "get_device_name", "get_device_properties", "get_rng_state", "get_rng_state_all",
           "init", "initial_seed", "ipc_collect", "is_available", "is_bf16_supported",
           "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
           "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
           "seed", "seed_all", "set_rng_state", "set_rng_state_all", "synchronize",
           "caching_allocator_enable", "current_stream", "default_stream", "get_arch_list",
           "get_gencode_flags", "get_per_process_memory_fraction", "get_sync_debug_mode",
           "host_memory_stats", "host_memory_stats_as_nested_dict", "is_tf32_supported",
           "max_memory_cached", "memory_cached", "memory_snapshot", "memory_stats",
           "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats",
           "set_device", "set_per_process_memory_fraction"]


def is_available() -> bool:
    """False: gradgen computes on the CPU only."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


# -- what a CPU-only torch silently accepts ---------------------------------------------------

def manual_seed(seed: int) -> None:
    """Nothing to seed: torch defers CUDA seeding until a device exists, and none will."""


def manual_seed_all(seed: int) -> None:
    """Nothing to seed, as manual_seed."""


def seed() -> None:
    """Nothing to seed, as manual_seed."""


def seed_all() -> None:
    """Nothing to seed, as manual_seed."""


def empty_cache() -> None:
    """No cache to empty."""


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Deferred by torch until a device exists: nothing happens."""


def set_rng_state_all(new_states: Any) -> None:
    for state in new_states:
        set_rng_state(state)


def get_rng_state_all() -> list:
    """One state per device: none."""
    return []


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def memory_stats(device: Any = None) -> dict:
    """No allocator statistics: an empty OrderedDict, as torch gives without CUDA."""
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device: Any = None) -> dict:
    return {}


def host_memory_stats() -> dict:
    return collections.OrderedDict()


def host_memory_stats_as_nested_dict() -> dict:
    return {}


def memory_cached(device: Any = None) -> int:
    warn_at_caller("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                   FutureWarning)
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    warn_at_caller("`torch.cuda.max_memory_cached` has been renamed to "
                   "`torch.cuda.max_memory_reserved`", FutureWarning)
    return max_memory_reserved(device)


def get_arch_list() -> list:
    """The CUDA architectures this build was compiled for: none."""
    return []


def get_gencode_flags() -> str:
    return ""


def is_tf32_supported() -> bool:
    return False


def caching_allocator_enable(value: bool = True) -> None:
    """No caching allocator to switch: nothing happens, as in torch without CUDA."""


# -- what needs a device ----------------------------------------------------------------------

# A CPU-only torch reaches for its missing CUDA bindings in these, and fails with Python's
# AttributeError naming the binding.
def _missing_binding(name: str, binding: str, warning: str | None = None) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        if warning is not None:
            warn_at_caller(warning, FutureWarning)
        raise AttributeError(f"module 'torch._C' has no attribute '{binding}'")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.cuda.{name}: raises, as torch does without CUDA."
    return function


_RESETS_ALL = ("torch.cuda.{} now calls torch.cuda.reset_peak_memory_stats, which resets "
               "/all/ peak memory stats.")
set_device = _missing_binding("set_device", "_cuda_setDevice")
reset_peak_memory_stats = _missing_binding("reset_peak_memory_stats",
                                           "_cuda_resetPeakMemoryStats")
reset_max_memory_allocated = _missing_binding(
    "reset_max_memory_allocated", "_cuda_resetPeakMemoryStats",
    _RESETS_ALL.format("reset_max_memory_allocated"))
reset_max_memory_cached = _missing_binding(
    "reset_max_memory_cached", "_cuda_resetPeakMemoryStats",
    _RESETS_ALL.format("reset_max_memory_cached"))
reset_accumulated_memory_stats = _missing_binding("reset_accumulated_memory_stats",
                                                  "_cuda_resetAccumulatedMemoryStats")
memory_snapshot = _missing_binding("memory_snapshot", "_cuda_memorySnapshot")


def _needs_device(name: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(CUDA_MISSING)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.cuda.{name}: raises, as torch does without CUDA."
    return function


current_device = _needs_device("current_device")
get_device_name = _needs_device("get_device_name")
get_device_properties = _needs_device("get_device_properties")
get_device_capability = _needs_device("get_device_capability")
synchronize = _needs_device("synchronize")
init = _needs_device("init")
initial_seed = _needs_device("initial_seed")
get_rng_state = _needs_device("get_rng_state")
mem_get_info = _needs_device("mem_get_info")
ipc_collect = _needs_device("ipc_collect")
current_stream = _needs_device("current_stream")
default_stream = _needs_device("default_stream")
set_per_process_memory_fraction = _needs_device("set_per_process_memory_fraction")
get_per_process_memory_fraction = _needs_device("get_per_process_memory_fraction")
get_sync_debug_mode = _needs_device("get_sync_debug_mode")


def __getattr__(name: str) -> Any:
    if name == "amp":  # torch.cuda.amp, a higher layer: imported when first asked for
        import importlib

        return importlib.import_module("runtime.cuda_amp")
    raise missing_attribute(__name__, name)
