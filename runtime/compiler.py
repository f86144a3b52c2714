"""torch.compiler: `compile`, and what programs call around it: `reset()` (every compiled
step forgets its traces), `disable` (a function a compiled step must not trace: calling
it makes the step run eagerly), `is_compiling()` (True while gradgen traces a step), and
`list_backends()`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from runtime.aliases import missing_attribute as _missing_attribute
from runtime.compile import step as _step
from runtime.compile import trace as _trace
from runtime.compile.step import compile  # noqa: A004 - torch.compiler.compile

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "list_backends",
           "reset"]


def reset() -> None:
    """Every compiled step and model forgets its traces: the next call traces again."""
    for compiled in list(_step.ALL_STEPS):
        compiled.reset()


def is_compiling() -> bool:
    """Whether a step is being traced now (its first call, under the tracer)."""
    tracer = _trace.current()
    return tracer is not None and tracer.recording


is_dynamo_compiling = is_compiling


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The backends compile takes: gradgen's own (`inductor`, `eager` and `aot_eager` are
    accepted as names for it)."""
    return ["gradgen"]


def disable(fn: Callable | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """`fn` kept out of compiled steps: a step that calls it runs eagerly (PyTorch breaks
    its graph there; gradgen compiles a step whole or not at all). A decorator too."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    target = getattr(fn, "fn", fn) if isinstance(fn, _step.CompiledStep) else fn
    name = getattr(target, "__qualname__", None) or type(target).__name__

    @functools.wraps(target)
    def eager(*args: Any, **kwargs: Any) -> Any:
        tracer = _trace.current()
        if tracer is not None and tracer.recording:
            why = f": {reason}" if reason else ""
            tracer.stop(f"the step calls {name}, which torch.compiler.disable keeps out of "
                        f"compiled code{why}")
        return target(*args, **kwargs)

    return eager


def __getattr__(name: str) -> Any:
    raise _missing_attribute(__name__, name)
