"""skip_init: a module made without drawing its initial values (torch.nn.utils.skip_init)."""

from __future__ import annotations

import inspect
from typing import Any

from runtime import random
from runtime.nn.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """`module_cls(*args, **kwargs)` whose parameters are left for the caller to fill.

    torch builds the module on the meta device (so nothing is drawn) and then gives it
    uninitialised memory. gradgen has no meta device: it builds the module normally and puts
    the default generator back where it was, so the random stream continues as torch's does;
    the parameters hold the usual initial values where torch's hold whatever memory held.
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    state = random.get_rng_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        random.set_rng_state(state)
