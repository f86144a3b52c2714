"""torch.nn.utils.stateless.functional_call: the deprecated name of torch.func's.

runtime.func imports nothing of nn, so this module may import it (no cycle)."""

from __future__ import annotations

from typing import Any

from runtime._warn import warn_at_caller
from runtime.func import functional_call as _func_functional_call

__all__ = ["functional_call"]


def functional_call(module: Any, parameters_and_buffers: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """`module(*args, **kwargs)` with some parameters and buffers replaced for the call,
    with torch's FutureWarning pointing to torch.func.functional_call."""
    warn_at_caller("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                   "2.0 and will be removed in a future version of PyTorch. Please use "
                   "`torch.func.functional_call` instead which is a drop-in replacement.",
                   FutureWarning)
    return _func_functional_call(module, parameters_and_buffers, args, kwargs,
                                 tie_weights=tie_weights, strict=strict)
