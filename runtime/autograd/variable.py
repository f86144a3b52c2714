"""`torch.autograd.variable`: where old programs import Variable from."""

from __future__ import annotations

from runtime.legacy import Variable

__all__ = ["Variable"]
