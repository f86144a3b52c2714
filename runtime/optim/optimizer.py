"""Optimizer: the base of SGD, Adam and AdamW, as torch.optim.Optimizer.

An optimizer holds `param_groups` (a list of dicts: the parameters plus their
hyper-parameters, defaults filled in) and `state` (per parameter, e.g. momentum
buffers). `step()` updates the parameters in place, outside any graph.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from runtime import changes, dtypes, factories
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.grad_mode import enable_grad, no_grad
from runtime.hooks import RemovableHandle, add_hook
from runtime.nn.module import typename, zero_grad_of
from runtime.optim import hooks as _hooks
from runtime.optim.hooks import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

__all__ = ["Optimizer", "check_adam_options", "register_optimizer_step_post_hook",
           "register_optimizer_step_pre_hook", "required", "scalar_state",
           "step_without_grad"]


class _RequiredParameter:
    """The default of a hyper-parameter that every param group must give."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: subclasses pass their hyper-parameter defaults and implement `step`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each subclass's own `step` runs through `run_step` (see there)."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if callable(step) and not getattr(step, "_runs_through_run_step", False):
            cls.step = _through_run_step(step)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        for hooks in _hooks.HOOK_DICTS:
            setattr(self, hooks, changes.Hooks())
        # torch's defaultdict(dict) and lists, which count their writes here: a compiled
        # step's guard skips the optimizer's checks while none are made (runtime/changes.py).
        self.state: changes.State = changes.State()
        self.param_groups: list[dict[str, Any]] = changes.CountedList()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            # A group made here counts its writes (a compiled step's guard skips it while
            # none are made); a dict the caller gave stays theirs, as in torch.
            param_groups = [changes.ParamGroup(params=param_groups)]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        """What pickling (and copy.deepcopy) keeps, as torch: not the hooks."""
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling (and copy.deepcopy): an optimizer saved without the hook registries (by
        an older gradgen) gets them empty, as torch's __setstate__ makes them."""
        changes.OPTIMIZERS.value += 1
        self.__dict__.update(state)
        for hooks in _hooks.HOOK_DICTS:
            self.__dict__.setdefault(hooks, changes.Hooks())

    def __setattr__(self, name: str, value: Any) -> None:
        changes.OPTIMIZERS.value += 1  # (`optimizer.state = ...`, `param_groups`, ...)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        changes.OPTIMIZERS.value += 1
        object.__delattr__(self, name)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for index, group in enumerate(self.param_groups):
            text += f"\nParameter Group {index}"
            for key in sorted(group):
                if key != "params":
                    text += f"\n    {key}: {group[key]}"
        return text + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (e.g. layers to fine-tune with their own lr); unset options take the
        optimizer's defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        # named_parameters() gives (name, parameter) pairs: keep the names alongside.
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        param_group["params"] = params = changes.CountedList(params)
        self._check_params(params)
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(params) != len(set(params)):
            warn_at_caller("optimizer contains a parameter group with duplicate parameters; in "
                           "future, this will cause an error; see "
                           "github.com/pytorch/pytorch/issues/40967 for more information")
        for group in self.param_groups:
            if not set(group["params"]).isdisjoint(params):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _check_params(self, params: list) -> None:
        """Tensors only, and leaves (or tensors that retain their grad), unless the step is
        differentiable: then it may update a non-leaf, recording the update."""
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not (self.defaults.get("differentiable") or param.is_leaf
                    or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

    def _make_state(self, param: Any, group: dict[str, Any]) -> None:
        """Make `param`'s state as the step would on its first call, where an optimizer's
        first step runs as its later ones do (Adam's zero moments; not SGD's momentum
        buffer, a copy of the first gradient). runtime.compile makes it before tracing
        the step. Here: nothing."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the parameters' gradients before the next backward (or zero them)."""
        if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
            heard = _modes.dispatch(Optimizer.zero_grad, (self, set_to_none), {}, _modes.RUNTIME)
            if heard is not _modes.PASS:
                return heard
        for group in self.param_groups:
            for param in group["params"]:
                zero_grad_of(param, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        raise NotImplementedError

    # -- hooks (runtime/optim/hooks.py) ---------------------------------------------------
    def _optimizer_step_code(self) -> None:
        """Called after each step, before the post-hooks (where torch's profilers look)."""

    @staticmethod
    def profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
        """`func`, a step, made to run the step hooks (every subclass's step does already)."""
        if getattr(func, "_runs_through_run_step", False):
            return func
        return _through_run_step(func)

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` before each step; it may return new
        `(args, kwargs)`."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` after each step."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable,
                                     prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer)` before state_dict."""
        return add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable,
                                      prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer, state_dict)` after state_dict; it may return a new one."""
        return add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable,
                                          prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer, state_dict)` before load_state_dict; it may return a new one."""
        return add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable,
                                           prepend: bool = False) -> RemovableHandle:
        """`hook(optimizer)` after load_state_dict."""
        return add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """`{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}`.

        Parameters are replaced by their position across the groups, so the state can be
        loaded into an optimizer over other (equally shaped) parameters.
        """
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        index_of: dict[int, int] = {}
        param_groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = [index_of[id(param)] for param in group["params"]]
            param_groups.append(packed)
        state = {index_of[id(param)]: value for param, value in self.state.items()}
        state_dict = {"state": state, "param_groups": param_groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take hyper-parameters and state from `state_dict`, matched to our parameters by
        position. Floating-point state is cast to its parameter's dtype (except `step`)."""
        state_dict = state_dict.copy()
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(saved["params"]) != len(group["params"])
               for saved, group in zip(saved_groups, self.param_groups, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        param_of = {index: param
                    for saved, group in zip(saved_groups, self.param_groups, strict=True)
                    for index, param in zip(saved["params"], group["params"], strict=True)}
        self.state = changes.State()
        for index, values in state_dict["state"].items():
            param = param_of[index]
            self.state[param] = changes.StateEntry(
                (key, _copy_state(param, key, value)) for key, value in values.items())
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            kept = {key: group[key] for key in ("params", "param_names") if key in group}
            group.clear()
            group.update({key: value for key, value in saved.items() if key != "params"})
            group["params"] = kept["params"]
            if "param_names" in kept:
                group.setdefault("param_names", kept["param_names"])
            for key, default in self.defaults.items():  # options newer than the file
                group.setdefault(key, default)
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

def check_adam_options(lr: float, betas: tuple[float, float], eps: float,
                       weight_decay: float) -> None:
    """The checks of the Adam family's options (Adam, AdamW, Adamax, NAdam, RAdam), in torch's
    order and words."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def check_fused(fused: bool | None, foreach: bool | None, differentiable: bool) -> None:
    """torch's refusals of the `fused` implementation (SGD, Adam, AdamW, Adagrad).

    `foreach` and `fused` choose among torch's kernels for one update: a loop over the
    parameters (the default on the CPU), one kernel per operation over them all, or one
    kernel for the whole update. gradgen computes the loop's form whichever is asked for,
    and keeps the choice in the state dict as torch does; torch's other kernels round some
    updates differently in the last bits (fused Adam, AdamW and Adagrad; foreach NAdam,
    RAdam and ASGD).
    """
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


# What torch's capturable updates accept, and the state each optimizer names in its refusal.
CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


def _check_capturable(optimizer: Optimizer) -> None:
    """torch refuses `capturable=True` for CPU parameters when the step meets a gradient:
    it keeps its step counts on the accelerator, which gradgen (a CPU) is not."""
    for group in optimizer.param_groups:
        if group.get("capturable") and any(p.grad is not None for p in group["params"]):
            state = getattr(optimizer, "CAPTURABLE_STATE", "params and state_steps")
            devices = getattr(optimizer, "CAPTURABLE_DEVICES", CAPTURABLE_DEVICES)
            raise AssertionError(f"If capturable=True, {state} must be on supported devices: "
                                 f"{devices}.")


def scalar_state(value: float) -> Tensor:
    """A 0-dim float32 state entry (`step`, `mu_product`, `eta`), as torch keeps them."""
    return factories.tensor(value, dtype=dtypes.float32)


def select(condition: Any, if_true: Any, if_false: Any) -> Any:
    """`if_true if condition else if_false`, for a choice an optimizer makes on the numbers
    of its step (RAdam's `rho_t > 5`, from its step count). Eagerly it is that expression.
    While runtime.compile traces a step, such a condition is one the generated step reads
    afresh at each call (runtime/compile/numbers.py's Condition), and the choice is written
    into the step, made at each call: as torch's capturable optimizers choose with
    torch.where, where an `if` would fix the first call's branch."""
    choose = getattr(condition, "choose", None)
    if choose is not None:
        return choose(if_true, if_false)
    return if_true if condition else if_false


def run_step(optimizer: Optimizer, step: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Where every optimizer's `step` runs, however it is reached: through the class, or
    through a wrapper that holds the function (an lr scheduler's, which counts the calls).
    runtime.compile's tracer hears it here (runtime/compile/optim.py)."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(run_step, (optimizer, step, args, kwargs), {}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    if _hooks.has_step_hooks(optimizer):
        return _hooks.step_with_hooks(optimizer, step, args, kwargs)
    return step(optimizer, *args, **kwargs)


def _through_run_step(step: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        return run_step(self, step, args, kwargs)

    wrapper._runs_through_run_step = True
    return wrapper


def step_without_grad(step: Callable[[Any], None]) -> Callable[..., Any]:
    """Decorator for `step(self)`: the closure, if any, runs with grad (it computes the loss
    and its gradients); the update runs under no_grad, so it records no graph, unless the
    optimizer was made `differentiable=True`: then it runs with grad, as torch's does, and
    an update of a leaf that requires grad is refused as any in-place op on one is."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, closure: Callable[[], Any] | None = None) -> Any:
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        _check_capturable(self)
        with enable_grad() if self.defaults.get("differentiable") else no_grad():
            step(self)
        return loss

    return wrapper


def _copy_state(param: Tensor, key: str, value: Any) -> Any:
    """A copy of one state value for `param`: tensors cloned (and cast to its dtype)."""
    if not isinstance(value, Tensor):
        return value
    with no_grad():
        if key != "step" and param.is_floating_point():
            value = value.to(param.dtype)
        return value.detach().clone()
