"""Parameter: the Tensor a Module registers as one of its parameters."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes
from runtime._tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default; assigning one to a Module registers it.

    It shares the storage of the tensor it is made from, as PyTorch's does. Ops on a
    Parameter give plain Tensors.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        array = np.empty(0, dtypes.get_default_dtype().numpy) if data is None else data._data
        parameter = cls._make(array, None)
        parameter.requires_grad_(requires_grad)
        return parameter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Everything happens in __new__ (Tensor.__init__ refuses direct construction)."""

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
