"""`torch.autograd.graph`: the hooks on the tensors a graph saves for backward
(runtime/saved_tensor_hooks.py)."""

from __future__ import annotations

from typing import Any

from runtime import cuda
from runtime.aliases import missing_attribute
from runtime.factories import empty
from runtime.saved_tensor_hooks import disable_saved_tensors_hooks, saved_tensors_hooks

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors kept on the CPU and moved back to their device when unpacked (on a
    CPU-only torch, where they already are, the tensor itself, or a copy with
    `pin_memory`)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Any) -> tuple:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            # (gradgen's tensors are all strided and dense, as the copy is)
            packed = empty(tensor.size(), dtype=tensor.dtype, pin_memory=cuda.is_available())
            packed.copy_(tensor)
            return (tensor.device, packed)

        def unpack_from_cpu(packed: tuple) -> Any:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
