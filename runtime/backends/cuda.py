"""torch.backends.cuda: CUDA's flags, with no CUDA. is_built() is False; the matmul flags
keep torch's defaults and can be set."""

from __future__ import annotations

__all__ = ["is_built", "matmul", "flash_sdp_enabled",
           "mem_efficient_sdp_enabled", "math_sdp_enabled", "enable_flash_sdp",
           "enable_mem_efficient_sdp", "enable_math_sdp"]


def is_built() -> bool:
    return False


class cuBLASModule:  # noqa: N801 - torch's name
    """torch.backends.cuda.matmul: flags of CUDA matrix products."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = enabled


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = enabled


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = enabled
