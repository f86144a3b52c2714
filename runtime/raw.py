"""The raw layer: what a first-order backward runs on numpy arrays instead of Tensors.

Generated `apply_raw` methods (generated/functions.py) call the raw twins of spec ops
(generated/raw_ops.py, straight to the kernels) and of helpers (generated/raw_manual.py).
This module holds the rest, on numpy alone: the raw forms of the Tensor methods that
Tensor defines by hand, and the conversions at the edges of the layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import dtypes
from runtime.dispatch import int_list


def array(value: Any) -> np.ndarray:
    """A kernel's result as an array (a reduction may give a numpy scalar)."""
    return value if type(value) is np.ndarray else np.asarray(value)


def tensor(value: Any) -> Any:
    """A Tensor argument as the kernels take it: a numpy scalar (what an operator on 0-d
    arrays gives) becomes a 0-d array again; a Python number stays one (a wrapped number)."""
    return np.asarray(value) if isinstance(value, np.generic) else value


def numpy_dtype(dtype: Any) -> np.dtype | None:
    """A ScalarType argument as the kernels take it."""
    return None if dtype is None else dtype.numpy


def sum_to(data: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast array back to `shape` (PyTorch's at::sum_to)."""
    lead = data.ndim - len(shape)
    if lead == 1 and data.shape[1:] == shape and data.dtype.kind == "f" and data.ndim == 2:
        # A bias's gradient, summed over the batch: a product with a ones vector runs in
        # BLAS, several times faster than numpy's reduction along the first axis.
        return np.ones(data.shape[0], data.dtype) @ data
    dims = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and data.shape[lead + i] != 1)
    summed = data.sum(axis=dims, keepdims=True) if dims else data
    return summed.reshape(shape)


# -- Tensor methods defined on Tensor by hand ---------------------------------------------------

def size(self: Any, dim: int | None = None) -> Any:
    return tuple(self.shape) if dim is None else self.shape[dim]


def dim(self: Any) -> int:
    return self.ndim


def numel(self: Any) -> int:
    return self.size


def detach(self: Any) -> Any:
    return self


def is_contiguous(self: Any) -> bool:
    return self.flags.c_contiguous


def contiguous(self: Any) -> Any:
    return self if self.flags.c_contiguous else self.copy()


def sum_to_size(self: Any, *size: Any) -> Any:
    size = int_list(size)
    return self if self.shape == size else sum_to(self, size)


def expand_as(self: Any, other: Any) -> Any:
    return np.broadcast_to(self, other.shape)


def reshape(self: Any, *shape: Any) -> Any:
    return np.reshape(self, int_list(shape))


def view_as(self: Any, other: Any) -> Any:
    return np.reshape(self, other.shape)


def type_as(self: Any, other: Any) -> Any:
    return self.astype(other.dtype, copy=False)


def to(self: Any, *args: Any, **kwargs: Any) -> Any:
    target = kwargs.get("dtype")
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            target = arg
        elif isinstance(arg, np.ndarray):
            target = dtypes.from_numpy(arg.dtype)
    if target is None or target.numpy == self.dtype:
        return self
    return self.astype(target.numpy)


def matmul(self: Any, other: Any) -> Any:
    return np.matmul(self, other)


# -- twins of helpers in runtime/manual.py that make new tensors --------------------------------
# (codegen uses these in place of a twin made from the helper's code)

def zeros_like(tensor: Any) -> np.ndarray:
    return np.zeros_like(tensor)


def ones_like(tensor: Any) -> np.ndarray:
    return np.ones_like(tensor)


def _zeros(sizes: Any, like: Any) -> np.ndarray:
    return np.zeros(tuple(sizes), dtype=like.dtype)
