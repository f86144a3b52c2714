"""`nn.DataParallel` as a CPU-only torch has it: with no accelerator it keeps the module
and calls it, with no device to split the batch over."""

from __future__ import annotations

from typing import Any

from runtime.nn.module import Module


class DataParallel(Module):
    """Wraps `module` (state-dict keys `module.*`); its forward is the module's."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        # As torch without an accelerator: the devices asked for are left unused.
        self.module = module
        self.device_ids: list = []

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
