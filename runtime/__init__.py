"""gradgen's runtime: `import runtime as torch` runs a small PyTorch autograd program.

Tensor, the engine and the grad modes are hand-written; the ops come from the spec
(generated/ops.py) and from composite.py.
"""

from __future__ import annotations

# Last, when the ops and Tensor exist: what formulas call through `ops` (runtime/namespaces.py).
from generated import ops as _ops  # noqa: E402, I001
from generated.ops import *  # noqa: F403 - the ops of the spec
from runtime import autograd, dtypes, nn, optim
from runtime import factories as _factories  # noqa: E402
from runtime import namespaces as _namespaces
from runtime.composite import *  # noqa: F403 - the composite ops
from runtime.dtypes import (
    bool_ as bool,  # noqa: A004 - torch.bool
)
from runtime.dtypes import (
    double,
    float32,
    float64,
    get_default_dtype,
    int32,
    int64,
    long,
    set_default_dtype,
)
from runtime.dtypes import dtype as dtype
from runtime.dtypes import float as float  # noqa: A004 - torch.float
from runtime.dtypes import int as int  # noqa: A004 - torch.int
from runtime.factories import *  # noqa: F403
from runtime.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from runtime.tensor import Tensor

_namespaces.install(_ops, Tensor, _factories)

__all__ = [
    "Tensor", "autograd", "dtypes", "nn", "optim", "bool", "double", "float32", "float64",
    "float", "int", "int32", "int64", "long", "dtype", "get_default_dtype", "set_default_dtype",
    "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
    "set_grad_enabled",
]
