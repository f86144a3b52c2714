"""torch.backends.cpu: what the CPU offers."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def get_cpu_capability() -> str:
    """The widest vector instruction set torch's kernels would use on this CPU (torch
    reads it from the CPU as here): "AVX512", "AVX2" or "DEFAULT"."""
    found = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= found:
        return "AVX512"
    return "AVX2" if "avx2" in found else "DEFAULT"
