"""swap_in_optimizer_params_and_state: run an optimizer, for the length of a `with` block,
on other parameter tensors and on a state_dict's state (torch.optim's context manager, used
to trace a step on stand-in tensors without touching the live optimizer)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from runtime import changes
from runtime._tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_API = "swap_in_optimizer_params_and_state"


def _check_state(state: Any) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_API} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(key, Tensor) for key in state):
        raise RuntimeError(f"{_API} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(key, int) and not isinstance(value, dict) for key, value in state.items()):
        raise RuntimeError(f"{_API} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _check_groups(optimizer: Any, groups: Any) -> list:
    if not isinstance(groups, list):
        raise RuntimeError(f"{_API} requires swapin_optim_state['param_groups'] to be a list of "
                           f"param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    return groups


def _group_ids(index: int, live: dict, saved: Any) -> list[int]:
    """The packed parameter ids of one saved group, checked against its live group."""
    if not isinstance(saved, dict):
        raise RuntimeError(f"{_API} requires each optimizer param group to be a dictionary.")
    ids = saved.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_API} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of "
                           "params than the live optimizer param group.")
    saved_only = [key for key in saved if key not in live]
    live_only = [key for key in live if key not in saved]
    if saved_only or live_only:
        raise RuntimeError(f"{_API} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{index}. Keys only in swap-in: {saved_only}. Keys only in live: "
                           f"{live_only}.")
    return ids


def _plan(optimizer: Any, parameters: dict, optim_state: Any) -> tuple[dict, list]:
    """The saved state and, per group, (live group, saved group, its stand-in tensors)."""
    if not optimizer.state:
        raise RuntimeError(f"{_API} requires initialized optimizer state.")
    if not isinstance(optim_state, dict):
        raise RuntimeError(f"{_API} requires a DCP-style optimizer state_dict.")
    state = _check_state(optim_state.get("state"))
    groups = _check_groups(optimizer, optim_state.get("param_groups"))
    tensors = list(parameters.values())
    offset, seen, plan = 0, set(), []
    for index, (live, saved) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        ids = _group_ids(index, live, saved)
        seen.update(ids)
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_API} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((live, saved, tensors[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [key for key in state if key not in seen]
    if extra:
        raise RuntimeError(f"{_API} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Any, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the block, `optimizer`'s groups hold `swapin_parameters` (in the order of its
    parameters) and the hyper-parameters of `swapin_optim_state` (a state_dict), and its
    state is that state_dict's, keyed by the new tensors; the per-parameter dicts are
    shallow copies, so in-place tensor updates reach the caller's state_dict. Everything is
    put back on exit."""
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        swapped = changes.State(dict)
        for live, saved, tensors in plan:
            live["params"] = tensors
            live.update({key: value for key, value in saved.items() if key != "params"})
            for tensor, packed_id in zip(tensors, saved["params"], strict=True):
                swapped[tensor] = dict(state.get(packed_id, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
