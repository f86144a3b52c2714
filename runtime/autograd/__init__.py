"""`runtime.autograd`: backward, grad, custom Functions, grad modes and anomaly mode, as in
torch.autograd."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.anomaly import detect_anomaly, set_detect_anomaly
from runtime.autograd import forward_ad, function, functional, profiler, variable
from runtime.autograd.function import Function
from runtime.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from runtime.autograd.gradients import backward, grad
from runtime.autograd.switches import (
    is_multithreading_enabled,
    is_view_replay_enabled,
    kineto_available,
    set_multithreading_enabled,
)
from runtime.autograd.variable import Variable
from runtime.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from runtime.node import Node
from runtime.profiler import ProfilerActivity

__all__ = [
    "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "detect_anomaly", "set_detect_anomaly", "Node", "forward_ad",
    "functional", "gradcheck", "gradgradcheck", "GradcheckError", "Function", "function",
    "profiler", "Variable", "variable", "is_multithreading_enabled",
    "set_multithreading_enabled", "is_view_replay_enabled", "kineto_available",
    "ProfilerActivity",
]

# -- issue 28, helper funcs -------------------------------------------------------------------
from runtime.autograd.function import NestedIOFunction  # noqa: E402
from runtime.autograd.profiler_types import (  # noqa: E402
    ProfilerConfig,
    ProfilerEvent,
    ProfilerState,
    SavedTensor,
)
from runtime.autograd.switches import enforce_grad_layout_policy  # noqa: E402

__all__ += ["NestedIOFunction", "ProfilerConfig", "ProfilerEvent", "ProfilerState",
            "SavedTensor", "enforce_grad_layout_policy"]
# -- end of funcs' block ----------------------------------------------------------------------

# -- the saved tensors' hooks (helper programs) -----------------------------------------------
from runtime.autograd import graph  # noqa: E402

__all__ += ["graph"]


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
