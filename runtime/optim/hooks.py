"""An optimizer's hooks: around each step, and around saving and loading its state, as
torch.optim.Optimizer's.

Step pre-hooks (the global ones first) are called `hook(optimizer, args, kwargs)`, where
`args` starts with the optimizer itself, and may return new `(args, kwargs)` for the step;
post-hooks (the optimizer's own first) are called the same way after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime.hooks import RemovableHandle, add_hook

__all__ = ["GLOBAL_POST_HOOKS", "GLOBAL_PRE_HOOKS", "HOOK_DICTS", "has_step_hooks",
           "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook",
           "step_with_hooks"]

GLOBAL_PRE_HOOKS: dict[int, Callable] = {}
GLOBAL_POST_HOOKS: dict[int, Callable] = {}

# An optimizer's own hooks, by the names torch gives them.
HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
              "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
              "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` before every optimizer's step."""
    return add_hook(GLOBAL_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` after every optimizer's step."""
    return add_hook(GLOBAL_POST_HOOKS, hook)


def has_step_hooks(optimizer: Any) -> bool:
    return bool(GLOBAL_PRE_HOOKS or GLOBAL_POST_HOOKS or optimizer._optimizer_step_pre_hooks
                or optimizer._optimizer_step_post_hooks)


def step_with_hooks(optimizer: Any, step: Callable, args: tuple, kwargs: dict) -> Any:
    """`step(optimizer, *args, **kwargs)` between the step hooks."""
    full_args = (optimizer, *args)
    for hook in [*GLOBAL_PRE_HOOKS.values(), *optimizer._optimizer_step_pre_hooks.values()]:
        result = hook(optimizer, full_args, kwargs)
        if result is None:
            continue
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), "
                               f"but got {result}.")
        full_args, kwargs = result
    out = step(*full_args, **kwargs)
    optimizer._optimizer_step_code()
    for hook in [*optimizer._optimizer_step_post_hooks.values(), *GLOBAL_POST_HOOKS.values()]:
        hook(optimizer, full_args, kwargs)
    return out

