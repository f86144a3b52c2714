"""torch._dynamo's names that programs use around torch.compile: `reset()`, `config`
(its `cache_size_limit`, which gradgen's compiled steps honour), `disable`."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute as _missing_attribute
from runtime.compile import config
from runtime.compiler import disable, reset

__all__ = ["config", "disable", "reset"]


def __getattr__(name: str) -> Any:
    raise _missing_attribute(__name__, name)
