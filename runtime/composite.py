"""Composite ops: plain Python over spec ops, like PyTorch's CompositeImplicitAutograd.

They have no node of their own; the graph shows the ops they are made of, exactly as
PyTorch's does (`linear` on a 2-D input records TBackward0 and AddmmBackward0).
`CompositeMethods` makes them Tensor methods; runtime.tensor.Tensor inherits it.
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import dispatch, dtypes
from runtime import tensor as _tensor
from runtime.dispatch import int_list

__all__: list[str] = []

# -- broadcasting and dtype -------------------------------------------------------------------

__all__ += []


def sum_to_size(self: Any, *size: Any) -> Any:
    """Sum a broadcast tensor back to `size` (PyTorch's at::sum_to)."""
    size = int_list(size)
    shape = self.shape
    if shape == size:
        return self
    lead = len(shape) - len(size)
    result = self
    if lead > 0:
        result = result.sum(tuple(range(lead)))
    dims = [i for i, s in enumerate(size) if s == 1 and result.shape[i] != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


def to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.to(dtype)` (and `x.to(other)`): the same tensor if nothing changes."""
    dtype = kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, dtypes.dtype):
            dtype = arg
        elif isinstance(arg, _tensor.Tensor):
            dtype = arg.dtype
    if dtype is None or dtype is self.dtype:
        return self
    return ops._to_copy(self, dtype=dtype)


# -- elementwise ------------------------------------------------------------------------------

def rtruediv(self: Any, other: Any) -> Any:
    """`other / self` for a number `other`: self.reciprocal() * other, as PyTorch computes it."""
    return ops.mul(ops.reciprocal(self), other)


# -- reductions -------------------------------------------------------------------------------

__all__ += ["var", "std", "norm"]

_SELF, _DIM = ("self_", "Tensor", False, False), ("dim", "int[1]?", False, False)


def _variance_overloads(name: str, correction_op: Any) -> tuple:
    """PyTorch's Python spellings of var/std, each recorded as `<name>.correction`.

    `unbiased=` is the older spelling of correction=1 (True) or correction=0 (False).
    """

    def unbiased_all(self_: Any, unbiased: bool = True) -> Any:
        return correction_op(self_, None, correction=int(unbiased))

    def unbiased_dim(self_: Any, dim: Any, unbiased: bool = True, keepdim: bool = False) -> Any:
        return correction_op(self_, dim, correction=int(unbiased), keepdim=keepdim)

    unbiased = ("unbiased", "bool", True, False)
    keepdim = ("keepdim", "bool", True, False)
    return (
        (unbiased_all, f"{name}(Tensor self, bool unbiased=True) -> Tensor", (_SELF, unbiased)),
        (unbiased_dim, f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, "
                       "bool keepdim=False) -> Tensor", (_SELF, _DIM, unbiased, keepdim)),
        (correction_op, f"{name}.correction(Tensor self, int[1]? dim=None, *, "
                        "Scalar? correction=None, bool keepdim=False) -> Tensor",
         (_SELF, ("dim", "int[1]?", True, False), ("correction", "Scalar?", True, True),
          ("keepdim", "bool", True, True))),
    )


def var(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.var()`, `x.var(0)`, `x.var(dim=1, unbiased=False)`, `x.var(correction=0)`."""
    overloads = _variance_overloads("var", ops.var_correction)
    return dispatch.call("var", overloads, (input, *args), kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Any:
    """`x.std()`, `x.std(0)`, `x.std(dim=1, unbiased=False)`, `x.std(correction=0)`."""
    overloads = _variance_overloads("std", ops.std_correction)
    return dispatch.call("std", overloads, (input, *args), kwargs)


def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Any:
    """torch.norm: a vector norm, computed as linalg_vector_norm, as PyTorch's Python does.

    "fro" is the 2-norm of the elements; matrix norms ("nuc", "fro" over more than two
    dimensions) are not implemented.
    """
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            raise NotImplementedError(f"norm(p={p!r}) is a matrix norm; gradgen has only "
                                      "vector norms")
        p = 2
    dims = [dim] if isinstance(dim, int) else dim
    return ops.linalg_vector_norm(input, 2 if p is None else p, dims, keepdim,
                                  dtype=dtype)

# -- shape and indexing -----------------------------------------------------------------------

__all__ += ["reshape"]


def reshape(input: Any, *shape: Any) -> Any:
    """A view when the strides allow one, else a copy (CloneBackward0, UnsafeViewBackward0)."""
    shape = int_list(shape)
    try:
        return ops.view(input, shape)
    except RuntimeError as error:
        if "view size is not compatible" not in str(error):
            raise
    return ops._unsafe_view(ops.clone(input), shape)

# -- linear algebra and nn --------------------------------------------------------------------

__all__ += ["linear", "matmul"]


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """y = x Wᵀ + b; addmm on a 2-D input with a bias, as PyTorch decomposes it."""
    if input.ndim == 2 and bias is not None:
        return ops.addmm(bias, input, weight.t())
    output = matmul(input, weight.t())
    return output if bias is None else output + bias


def matmul(input: Any, other: Any) -> Any:
    if input.ndim == 2 and other.ndim == 2:
        return ops.mm(input, other)
    raise NotImplementedError("matmul is only implemented for 2-D inputs so far")


class CompositeMethods:
    """Tensor methods for the composite ops above."""

    __slots__ = ()

    # -- broadcasting and dtype ---------------------------------------------------------------
    def sum_to_size(self, *size: Any) -> Any:
        return sum_to_size(self, *size)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        return to(self, *args, **kwargs)

    def float(self) -> Any:
        return to(self, dtypes.float32)

    def double(self) -> Any:
        return to(self, dtypes.float64)

    # -- elementwise --------------------------------------------------------------------------
    def __rtruediv__(self, other: Any) -> Any:
        return rtruediv(self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """`x.where(condition, y)` is `where(condition, x, y)`."""
        return ops.where(condition, self, other)

    # -- reductions ---------------------------------------------------------------------------
    def var(self, *args: Any, **kwargs: Any) -> Any:
        return var(self, *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Any:
        return std(self, *args, **kwargs)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Any:
        return norm(self, p, dim, keepdim, dtype)

    # -- shape and indexing -------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Any:
        return reshape(self, *shape)

    # -- linear algebra and nn ----------------------------------------------------------------
    def matmul(self, other: Any) -> Any:
        return matmul(self, other)

    __matmul__ = matmul
