"""torch's `*_copy` functions: a view op's result as a tensor of its own (`torch.t_copy(x)`
is `x.t()` with fresh memory, never a view of `x`).

Each runs the view op, copies its data, and hands the copy the view's backward node
wrapped in one that PyTorch names after it with `_copy` (`TBackward0_copy`): the
gradient is the view's. The forward-mode tangent is the view's tangent, copied too.
`detach_copy` needs a gradient and has none (`torch::autograd::NotImplemented`, whose
backward raises), `view_copy` to a dtype records no graph, and `indices_copy` /
`values_copy` ask for a sparse tensor, which gradgen never makes: they refuse every
tensor with torch's message for a dense one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from generated import ops
from runtime import dtypes, forward_grad, grad_mode, kernels
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.namespaces import tensor_ops
from runtime.node import Node, gradient_edge

__all__ = ["alias_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
           "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
           "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
           "view_copy", "indices_copy", "values_copy", "as_strided_copy",
           "view_as_real_copy", "view_as_complex_copy"]


class _ViewCopyBackward(Node):
    """The node of a `*_copy` result: the view op's own node under the name `<its>_copy`."""

    __slots__ = ("view_fn",)

    def __init__(self, view_fn: Node) -> None:
        super().__init__(view_fn.next_functions)
        self.view_fn = view_fn

    def name(self) -> str:
        return f"{self.view_fn.name()}_copy"

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        fn = self.view_fn
        fn._output_mask = tuple(self.should_compute_output(i)
                                for i in range(len(self._next_functions)))
        try:
            return fn.apply(grads, ops)
        finally:
            fn._output_mask = None

    def release_variables(self) -> None:
        self.view_fn.release_variables()


class _NotImplemented(Node):
    """torch's node for an op without a derivative: its backward says so."""

    __slots__ = ("op",)

    def __init__(self, op: str, edges: tuple) -> None:
        super().__init__(edges)
        self.op = op

    def name(self) -> str:
        return "torch::autograd::NotImplemented"

    def __repr__(self) -> str:
        return f"<NotImplemented object at {id(self):#x}>"

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


_COPY_NODE_CLASSES: dict[str, type] = {}


def _copy_node_class(name: str) -> type:
    """A subclass of _ViewCopyBackward named as torch's class is (`TBackward0_copy`), so
    that a tensor prints `grad_fn=<TBackward0_copy>` as torch's does."""
    if name not in _COPY_NODE_CLASSES:
        _COPY_NODE_CLASSES[name] = type(name, (_ViewCopyBackward,), {"__slots__": ()})
    return _COPY_NODE_CLASSES[name]


def _fresh(views: list[Tensor]) -> list[Tensor]:
    """Copies of the views, with the views' node (renamed) and tangents."""
    copies = [Tensor._make(np.array(v._data, order="C", copy=True), None) for v in views]
    node = views[0].grad_fn
    if node is not None:
        wrapper = _copy_node_class(f"{node.name()}_copy")(node)
        wrapper._input_metadata = node._input_metadata
        for view, copy in zip(views, copies, strict=True):
            copy.grad_fn = wrapper
            copy._output_nr = view._output_nr
    for view, copy in zip(views, copies, strict=True):
        tangent = forward_grad.tangent(view)
        if forward_grad.defined(tangent):
            forward_grad.set_tangent(copy, Tensor._make(tangent._data.copy(), None))
    return copies


def _one(name: str, view: Any, args: tuple, out: Any) -> Tensor:
    if out is not None:
        return _into(name, lambda *a: _fresh([view(*a)])[0], args, out)
    return _fresh([view(*args)])[0]


def _into(name: str, function: Any, args: tuple, out: Any) -> Tensor:
    """out=: written as torch's other out= functions write, except that an input needing a
    gradient is no error: as in torch, `out` then gets a node whose backward refuses."""
    source = args[0]
    if not (isinstance(source, Tensor) and source.requires_grad and
            grad_mode.is_grad_enabled()):
        return _out.call(name, function, args, {}, out, dtype_rule="same")
    result = _out.call(name, function, (source.detach(), *args[1:]), {}, out,
                       dtype_rule="same")
    node = _NotImplemented(name, (gradient_edge(source),))
    node._input_metadata = ((result._data.shape, result._data.dtype),)
    result.grad_fn = node
    result._output_nr = 0
    return result


def _many(view: Any, args: tuple) -> tuple[Tensor, ...]:
    return tuple(_fresh(list(view(*args))))


def alias_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002 - torch's name
    return _one("alias_copy", ops.alias, (input,), out)


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *,  # noqa: A002
                  out: Any = None) -> Tensor:
    return _one("diagonal_copy", ops.diagonal, (input, offset, dim1, dim2), out)


def expand_copy(input: Tensor, size: Any, *, implicit: bool = False,  # noqa: A002
                out: Any = None) -> Tensor:
    return _one("expand_copy", lambda x, s: ops.expand(x, s, implicit=implicit), (input, size),
                out)


def permute_copy(input: Tensor, dims: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("permute_copy", ops.permute, (input, dims), out)


def select_copy(input: Tensor, dim: int, index: int, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("select_copy", ops.select, (input, dim, index), out)


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
               end: int | None = None, step: int = 1, *, out: Any = None) -> Tensor:
    return _one("slice_copy", ops.slice, (input, dim, start, end, step), out)


def squeeze_copy(input: Tensor, dim: Any = None, *, out: Any = None) -> Tensor:  # noqa: A002
    args = (input,) if dim is None else (input, dim)
    return _one("squeeze_copy", ops.squeeze, args, out)


def t_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("t_copy", ops.t, (input,), out)


def transpose_copy(input: Tensor, dim0: int, dim1: int, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("transpose_copy", ops.transpose, (input, dim0, dim1), out)


def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *,  # noqa: A002
                out: Any = None) -> Tensor:
    return _one("unfold_copy", lambda x, *a: x.unfold(*a), (input, dimension, size, step), out)


def unsqueeze_copy(input: Tensor, dim: int, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("unsqueeze_copy", ops.unsqueeze, (input, dim), out)


def view_copy(input: Tensor, size: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    if isinstance(size, dtypes.dtype):
        view = lambda x, d: Tensor._make(_dtype_view(x, d), None)  # noqa: E731 - no graph
        return _one("view_copy", view, (input, size), out)
    return _one("view_copy", ops.view, (input, size), out)


def as_strided_copy(input: Tensor, size: Any, stride: Any,  # noqa: A002 - torch's name
                    storage_offset: int | None = None, *, out: Any = None) -> Tensor:
    return _one("as_strided_copy", ops.as_strided, (input, size, stride, storage_offset), out)


def view_as_real_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    return _one("view_as_real_copy", ops.view_as_real, (input,), out)


def view_as_complex_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """As torch: no graph to a complex output (torch's derivatives.yaml has no entry for it)."""
    if isinstance(input, Tensor) and input.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return _one("view_as_complex_copy", ops.view_as_complex, (input,), out)


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return _many(ops.split, (input, split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes: Any,  # noqa: A002
                          dim: int = 0) -> tuple[Tensor, ...]:
    return _many(ops.split_with_sizes, (input, split_sizes, dim))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return _many(ops.unbind, (input, dim))


def detach_copy(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """A copy that requires grad as `input` does, with a node whose backward refuses."""
    if out is not None:
        return _into("detach_copy", detach_copy, (input,), out)
    copy = Tensor._make(np.array(input._data, order="C", copy=True), None)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        node = _NotImplemented("detach_copy", (gradient_edge(input),))
        node._input_metadata = ((copy._data.shape, copy._data.dtype),)
        copy.grad_fn = node
    return copy


def indices_copy(input: Tensor) -> Tensor:  # noqa: A002
    raise RuntimeError("indices expected sparse coordinate tensor layout but got Strided")


def values_copy(input: Tensor) -> Tensor:  # noqa: A002
    raise RuntimeError("values expected sparse tensor layout but got Strided")


# -- view_copy to a dtype: the bytes read as another type ----------------------------------
def _dtype_view(x: Tensor, dtype: dtypes.dtype) -> np.ndarray:
    """x's bytes read as `dtype` (Tensor.view(dtype), with its checks), in fresh memory."""
    return np.array(kernels.view_dtype(x._data, dtype.numpy), order="C", copy=True)
