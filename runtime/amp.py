"""`torch.amp`: autocast and GradScaler, as a CPU-only torch has them, within what gradgen
computes.

autocast: torch's CPU autocast runs matmul-like ops in bfloat16 (or float16) while it is
on. gradgen computes every op in its inputs' own dtype and has no autocast, so an autocast
that would be on is refused (NotImplementedError, saying so) rather than silently computing
in float32 where torch rounds to bfloat16. What torch itself turns off runs unchanged:
`enabled=False`, a CPU dtype torch does not support (float32, float64: torch warns and
disables), and "cuda" on a machine without CUDA (torch warns and disables). It works as a
context manager and as a decorator.

GradScaler: loss scaling for mixed precision, in full on the CPU (`GradScaler("cpu")`):
scale, unscale_ (gradients times 1/scale, with a check for infinities and NaN), step (skipped
when one was found), update (the scale backs off after a non-finite step and grows after
`growth_interval` finite ones), state_dict and load_state_dict, as torch's. Disabled
(`enabled=False`, or the default "cuda" device, which a CPU-only torch disables with a
warning) it is the identity wrapper torch's is.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

import numpy as np

from runtime import devices, dtypes, global_flags
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute
from runtime.factories import full
from runtime.grad_mode import no_grad

__all__ = ["autocast", "GradScaler", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    """Whether torch has autocast for the device type (the CPU, and CUDA in torch's list)."""
    return device_type in ("cpu", "cuda")


class autocast:  # noqa: N801 - torch's name
    """`with torch.autocast("cpu", enabled=False):` or `@torch.autocast(...)`."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = devices.device(device_type).type
        self.fast_dtype = global_flags.get_autocast_dtype(self.device) if dtype is None \
            else dtype
        self._cache_enabled = global_flags.is_autocast_cache_enabled() \
            if cache_enabled is None else cache_enabled
        self._enabled = self._decide(bool(enabled))

    def _decide(self, enabled: bool) -> bool:
        """Whether autocast would be on in torch: gradgen refuses it on."""
        if not enabled:
            return False
        if self.device == "cuda":
            warn_at_caller("CUDA is not available or torch_xla is imported. Disabling "
                           "autocast.", UserWarning)
            return False
        if self.device == "cpu" and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
            warn_at_caller("In CPU autocast, but the target dtype is not supported. Disabling "
                           "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                           "torch.float16 currently.", UserWarning)
            return False
        raise NotImplementedError(
            f"gradgen has no autocast (mixed precision): torch would run matmul-like ops in "
            f"{self.fast_dtype} here, and gradgen computes every op in its inputs' own dtype. "
            "Use autocast(..., enabled=False), or convert the model and inputs to the dtype "
            "you want.")

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return run


# -- GradScaler --------------------------------------------------------------------------------
class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


_NO_SCALE = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
             "in the iteration.")


class GradScaler:
    """Scales the loss so that small gradients survive low precision, and unscales the
    gradients before the optimizer's step (skipping the step when one is not finite)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warn_at_caller("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                           "Disabling.", UserWarning)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict = defaultdict(_fresh_state)

    def _check_scale(self, name: str) -> tuple[Tensor, Tensor]:
        if self._scale is None:
            raise AssertionError(f"Attempted {name} but _scale is None.  {_NO_SCALE}")
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {name} but _growth_tracker is None.  {_NO_SCALE}")
        return self._scale, self._growth_tracker

    def _lazy_init(self) -> Tensor:
        if self._scale is None:
            self._scale = full((), self._init_scale, dtype=dtypes.float32)
            self._growth_tracker = full((), self._init_growth_tracker, dtype=dtypes.int32)
        return self._scale

    def scale(self, outputs: Any) -> Any:
        """`outputs` times the scale (a tensor, or tensors nested in lists and tuples)."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._lazy_init()
        if isinstance(outputs, Iterable):
            scaled = (self.scale(v) if isinstance(v, Tensor | Iterable) else _refuse(v)
                      for v in outputs)
            return type(outputs)(scaled) if isinstance(outputs, list | tuple) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads(self, optimizer: Any, inv_scale: Tensor, allow_fp16: bool) -> dict:
        found_inf = full((), 0.0, dtype=dtypes.float32)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if not np.isfinite(grad._data).all():
                        found_inf.fill_(1.0)
                    grad.mul_(inv_scale)
        return {devices.device("cpu"): found_inf}

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place, noting infinities."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """optimizer.step(), after unscale_ if it was not called, unless a gradient was not
        finite."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale: Any = None) -> None:
        """The next scale: `new_scale`, or backed off after a non-finite gradient, or grown
        after growth_interval finite steps in a row."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale("update")
        if new_scale is not None:
            self._set_scale(scale, new_scale)
        else:
            found = [inf for state in self._per_optimizer_states.values()
                     for inf in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, tracker, sum(f.item() for f in found))
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _set_scale(self, scale: Tensor, new_scale: Any) -> None:
        if isinstance(new_scale, float):
            scale.fill_(new_scale)
            return
        reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                  "torch.FloatTensor with requires_grad=False.")
        if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device or \
                new_scale.numel() != 1 or new_scale.requires_grad:
            raise AssertionError(reason)
        scale.copy_(new_scale)

    def _update_scale(self, scale: Tensor, tracker: Tensor, found_inf: float) -> None:
        if found_inf:
            scale.mul_(self._backoff_factor)
            tracker.fill_(0)
            return
        grown = int(tracker.item()) + 1
        if grown == self._growth_interval:
            bigger = np.float32(scale.item()) * np.float32(self._growth_factor)
            if math.isfinite(bigger):
                scale.fill_(float(bigger))
            grown = 0
        tracker.fill_(grown)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])


# -- torch.cuda.amp and torch.cpu.amp: the older spellings, deprecated ----------------------
def _deprecated(old: str, device: str) -> None:
    new = old.split(".")[-1]
    warn_at_caller(f"`torch.{old}(args...)` is deprecated. Please use `torch.amp.{new}"
                   f"('{device}', args...)` instead.", FutureWarning)


class CudaAutocast(autocast):
    """torch.cuda.amp.autocast: autocast("cuda"), which a machine without CUDA turns off."""

    def __init__(self, enabled: bool = True, dtype: Any = dtypes.float16,
                 cache_enabled: bool = True) -> None:
        _deprecated("cuda.amp.autocast", "cuda")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CpuAutocast(autocast):
    """torch.cpu.amp.autocast: autocast("cpu")."""

    def __init__(self, enabled: bool = True, dtype: Any = dtypes.bfloat16,
                 cache_enabled: bool = True) -> None:
        _deprecated("cpu.amp.autocast", "cpu")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class CudaGradScaler(GradScaler):
    """torch.cuda.amp.GradScaler: GradScaler("cuda"), disabled without CUDA."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("cuda.amp.GradScaler", "cuda")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def _refuse(value: Any) -> Any:
    raise ValueError("outputs must be a Tensor or an iterable of Tensors")


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
