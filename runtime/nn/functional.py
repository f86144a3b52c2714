"""torch.nn.functional's names for the ops layers are made of.

Nothing is defined here: each name is a spec op (generated/ops.py) or a composite
(runtime/composite.py), re-exported so that `import runtime.nn.functional as F` code
reads as it does with PyTorch.
"""

from __future__ import annotations

from generated.ops import gelu, relu, sigmoid, tanh
from runtime.composite import linear

__all__ = ["gelu", "linear", "relu", "sigmoid", "tanh"]
