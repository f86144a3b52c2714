"""Nodes of the backward graph, AccumulateGrad for leaves, and saved variables.

A Node is one recorded forward op, seen from the backward side: its `apply` takes the
gradients of the op's outputs and returns the gradients of its differentiable inputs,
which flow along `next_functions` to the nodes that made those inputs. This module also
says where a tensor's gradient goes (`gradient_edge`: its grad_fn, or the AccumulateGrad
of a leaf), as PyTorch's function.h and variable.cpp do. It sits above the Tensor class:
nodes make Tensors, the Tensor class needs no node.
"""

from __future__ import annotations

import inspect
import itertools
import re
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import anomaly, changes, forward_grad, kernels, manual, saved_tensor_hooks
from runtime._tensor import Tensor, VersionCounter
from runtime.anomaly import _state as _anomaly_state
from runtime.dtypes import type_string
from runtime.grad_mode import is_grad_enabled, set_grad_enabled
from runtime.hooks import RemovableHandle, add_hook
from runtime.namespaces import array_ops, tensor_ops

# Nodes are numbered as they are made; the engine runs later nodes first.
_sequence_numbers = itertools.count()

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


# What few nodes carry is kept beside them, not in a slot every node would pay for.
_metadata: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_anomaly_traces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Hooks:
    """A node's hooks, made when the first one is registered: most nodes never have any."""

    __slots__ = ("pre", "post", "tensor_pre", "retains_grad")

    def __init__(self) -> None:
        self.pre: dict | None = None  # register_prehook
        self.post: dict | None = None  # register_hook
        self.tensor_pre: dict[int, dict] | None = None  # Tensor.register_hook, per output
        self.retains_grad: dict[int, Callable] | None = None  # Tensor.retain_grad, per output


class Node:
    """Base of every backward function: generated `*Backward<N>` classes and AccumulateGrad."""

    __slots__ = ("_next_functions", "_sequence_nr", "_input_metadata", "_hooks", "_output_mask",
                 "__weakref__")

    def __init__(self, next_edges: tuple[tuple[Node | None, int], ...] = ()) -> None:
        self._sequence_nr = next(_sequence_numbers)
        self._next_functions = next_edges
        # (shape, dtype) of each forward output, i.e. of each gradient this node receives.
        # A tuple, not a list: most nodes have one input, and a tuple is the smaller.
        self._input_metadata: tuple[tuple[tuple[int, ...], Any], ...] = ()
        self._hooks: _Hooks | None = None
        self._output_mask: tuple[bool, ...] | None = None
        if _anomaly_state.enabled:
            _anomaly_traces[self] = anomaly.forward_trace()

    # -- the graph --------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """`((node, input_nr), ...)`: where each gradient goes; `(None, 0)` if nowhere."""
        return self._next_functions

    def set_next_edges(self, edges: tuple[tuple[Node | None, int], ...]) -> None:
        self._next_functions = edges

    @property
    def metadata(self) -> dict:
        """A dict for the user's own notes about this node (PyTorch's Node.metadata)."""
        notes = _metadata.get(self)
        if notes is None:
            notes = _metadata[self] = {}
        return notes

    @property
    def _anomaly_trace(self) -> list[str] | None:
        """Anomaly mode's traceback of the forward call that made this node, if it was on."""
        return _anomaly_traces.get(self)

    def should_compute_output(self, index: int) -> bool:
        """Whether the gradient for input `index` is needed by this backward pass."""
        mask = self._output_mask
        if mask is not None:
            return mask[index]
        return self._next_functions[index][0] is not None

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        """The gradients of this node's inputs from those of its outputs, computed with the
        namespace `ops` (runtime/namespaces.py): on Tensors, or on numpy arrays."""
        raise NotImplementedError(f"{self.name()} does not implement apply")

    # Whether apply() takes the op namespace, and so runs on numpy arrays in a first-order
    # backward: every generated node does; a subclass written for Tensors alone (a user's,
    # `def apply(self, grads)`) is given Tensors.
    runs_on_arrays = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.runs_on_arrays = "ops" in inspect.signature(cls.apply).parameters
        cls.releases = cls.release_variables is not Node.release_variables

    # Whether release_variables does anything: a node that saved nothing is not called.
    releases = False

    def release_variables(self) -> None:
        """Free saved tensors after a backward pass without retain_graph."""

    def __call__(self, *grads: Tensor) -> Any:
        outputs = self.apply(list(grads))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    # -- hooks ------------------------------------------------------------------------------
    def _hook_table(self) -> _Hooks:
        if self._hooks is None:
            changes.changed()  # (a compiled step's guards read whether there is one)
            self._hooks = _Hooks()
        return self._hooks

    @property
    def _pre_hooks(self) -> dict | None:
        return None if self._hooks is None else self._hooks.pre

    @property
    def _post_hooks(self) -> dict | None:
        return None if self._hooks is None else self._hooks.post

    @property
    def _retains_grad_hooks(self) -> dict[int, Callable] | None:
        return None if self._hooks is None else self._hooks.retains_grad

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_inputs, grad_outputs)` runs after apply; it may return new grad_inputs."""
        table = self._hook_table()
        if table.post is None:
            table.post = {}
        return add_hook(table.post, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """`fn(grad_outputs)` runs before apply; it may return new grad_outputs."""
        table = self._hook_table()
        if table.pre is None:
            table.pre = {}
        return add_hook(table.pre, fn)

    def add_retains_grad_hook(self, index: int, fn: Callable) -> None:
        table = self._hook_table()
        if table.retains_grad is None:
            table.retains_grad = {}
        table.retains_grad[index] = fn

    def has_tensor_hooks(self) -> bool:
        """Whether any Tensor.register_hook or retain_grad hook is attached here."""
        hooks = self._hooks
        return hooks is not None and (hooks.tensor_pre is not None
                                      or hooks.retains_grad is not None)

    def has_hooks(self) -> bool:
        """Whether any hook at all runs around this node's apply."""
        return self._hooks is not None

    def tensor_pre_hooks(self, index: int) -> dict | None:
        """Hooks registered with Tensor.register_hook on this node's output `index`."""
        hooks = None if self._hooks is None else self._hooks.tensor_pre
        return None if hooks is None else hooks.get(index)

    def add_tensor_pre_hook(self, index: int, fn: Callable) -> RemovableHandle:
        table = self._hook_table()
        if table.tensor_pre is None:
            table.tensor_pre = {}
        return add_hook(table.tensor_pre.setdefault(index, {}), fn)


_INFINITY = float("inf")


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient to `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        # Node.__init__'s fields, set here: a leaf's AccumulateGrad is made anew in every
        # forward that uses it once the previous graph is gone (it lives by the graph alone).
        next(_sequence_numbers)  # (it takes a number, as any node does)
        self._sequence_nr = _INFINITY  # runs as soon as it is ready, as in PyTorch
        self._next_functions = ()
        self._hooks = None
        self._output_mask = None
        if _anomaly_state.enabled:
            _anomaly_traces[self] = anomaly.forward_trace()
        self.variable = variable
        self._input_metadata = ((variable._data.shape, variable._data.dtype),)

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"

    def has_tensor_hooks(self) -> bool:
        return bool(self.variable._backward_hooks) or self._retains_grad_hooks is not None

    def has_hooks(self) -> bool:
        return self._hooks is not None or bool(self.variable._backward_hooks)

    def tensor_pre_hooks(self, index: int) -> dict | None:
        return self.variable._backward_hooks

    def add_tensor_pre_hook(self, index: int, fn: Callable) -> RemovableHandle:
        variable = self.variable
        if variable._backward_hooks is None:
            variable._backward_hooks = {}
        return add_hook(variable._backward_hooks, fn)

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        if ops.on_arrays:
            self._accumulate_array(grads[0])
        else:
            self._accumulate_tensor(grads)
        hooks = self.variable._post_accumulate_grad_hooks
        if hooks and grads[0] is not None:  # register_post_accumulate_grad_hook's
            for hook in tuple(hooks.values()):
                hook(self.variable)
        return []

    def _accumulate_tensor(self, grads: list) -> list:
        grad = grads[0]
        if grad is None:
            return []
        variable = self.variable
        if variable._grad is None:
            if not grad.requires_grad and _unshared(grad):
                # No one else can see this gradient: keep it rather than copy it (PyTorch
                # steals the buffer the same way, on its reference count).
                variable.grad = grad
                return []
            # A copy, so that accumulating into it later cannot change anyone else's tensor;
            # with create_graph the copy keeps the gradient's history, as in PyTorch.
            copy = Tensor._make(grad._data.copy(), None)
            if is_grad_enabled() and grad.requires_grad:
                node = CopyBackwards(((None, 0), gradient_edge(grad)))
                node._input_metadata = ((copy._data.shape, copy._data.dtype),)
                copy.grad_fn = node
            variable.grad = copy
        elif is_grad_enabled():
            variable.grad = variable.grad + grad  # create_graph: out of place, recorded
        else:
            variable.grad._accumulate_(grad)
        return []

    def _accumulate_array(self, grad: Any) -> list:
        if grad is None:
            return []
        variable = self.variable
        if variable._grad is None:
            # Kept when only the engine holds the array, else copied (see AccumulateGrad.apply).
            # The engine checked its shape and dtype: set the slot, not the checking property.
            variable._grad = Tensor._make(grad if _unshared_array(grad) else grad.copy(), None)
        else:
            variable.grad._accumulate_(Tensor._make(grad, None))
        return []


def _unshared_array(data: Any) -> bool:
    """Whether only the engine holds `data` (a raw gradient) and only it holds its storage.

    References counted: the engine's `grads` list, apply's argument, this function's
    argument and getrefcount's; to a view's base, the view, the local `base` and
    getrefcount's. A read-only (broadcast) array is never kept; a view is, when its base
    is held by the view alone.
    """
    if sys.getrefcount(data) > 4 or not data.flags.writeable:
        return False
    base = data.base
    return base is None or (base.base is None and sys.getrefcount(base) <= 3)


def _unshared(grad: Tensor) -> bool:
    """Whether only the engine holds `grad` and only `grad` holds its storage.

    References counted: to `grad`, the engine's `grads` list, apply's local, this
    function's argument and getrefcount's; to its array, the tensor's slot, the local
    `data` and getrefcount's argument. A read-only (broadcast) array is never kept. A view
    (a transposed or reshaped result) is, when its base array is held only by the view
    and by the base tensor it was made from, which only the view holds.
    """
    data = grad._data
    if sys.getrefcount(grad) > 4 or not data.flags.writeable or sys.getrefcount(data) > 3:
        return False
    if data.base is None:
        return True
    if data.base.base is not None:
        return False
    owner = grad._base
    if owner is None:
        return sys.getrefcount(data.base) <= 2
    return sys.getrefcount(owner) <= 3 and sys.getrefcount(data.base) <= 3


class CopyBackwards(Node):
    """The node of a copy made in grad mode (PyTorch's, for `copy_`), as AccumulateGrad makes.

    The gradient flows unchanged to the source; the destination, a new tensor that needs
    no gradient, gets none.
    """

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        return [None, grads[0] if self.should_compute_output(1) else None]


# -- in-place ops on views ---------------------------------------------------------------------
# A view's data is a window into its base's. After an in-place op writes through the view,
# the base's history must say so (CopySlices), and every view of the base must reach its
# gradient through the base (AsStridedBackward0). The window is kept as its geometry: the
# view's shape, strides and byte offset within the base's (C-contiguous) data.

Geometry = tuple[tuple[int, ...], tuple[int, ...], int]


def view_geometry(view: np.ndarray, base: np.ndarray) -> Geometry | None:
    """Where `view` lies in `base`, or None when gradgen cannot replay the window (a base
    that is not C-contiguous, or a view that repeats elements, like expand's)."""
    if not base.flags.c_contiguous or 0 in view.strides and view.size > 1:
        return None
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return view.shape, view.strides, offset


def window(array: np.ndarray, geometry: Geometry) -> np.ndarray:
    """The view of `array` (shaped and laid out like the base) that `geometry` describes."""
    shape, strides, offset = geometry
    return np.ndarray(shape, array.dtype, buffer=array, offset=offset, strides=strides)


def storage_geometry(array: np.ndarray) -> Geometry:
    """An array's sizes, strides and storage offset, in elements (torch's TensorGeometry)."""
    itemsize = array.itemsize
    return (array.shape, tuple(step // itemsize for step in array.strides),
            kernels.storage_offset(array))


class AsStridedBackward0(Node):
    """The grad_fn of a view after an in-place op on it or on its base, as PyTorch
    regenerates views: the view is base.as_strided(its geometry), so its gradient is
    as_strided's, through the storage both share (an expanded or overlapping view too)."""

    __slots__ = ("view", "base")

    def __init__(self, view: np.ndarray, base: np.ndarray) -> None:
        super().__init__()
        self.view, self.base = storage_geometry(view), storage_geometry(base)

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        grad = grads[0]
        if grad is None or not self.should_compute_output(0):
            return [None]
        return [manual.as_strided_backward(ops, grad, self.base, *self.view)]


class CopySlices(Node):
    """The base's grad_fn after an in-place op `fn` wrote through a view of it.

    The gradient of the base before the op is the incoming one outside the view's window;
    inside it, the gradient `fn` gives for its input. `fn`'s other inputs get theirs from `fn`.
    """

    __slots__ = ("fn", "geometry")

    def __init__(self, fn: Node, geometry: Geometry) -> None:
        super().__init__()
        self.fn = fn
        self.geometry = geometry

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def __repr__(self) -> str:
        return f"<CopySlices object at {id(self):#x}>"

    def apply(self, grads: list, ops: Any = tensor_ops) -> list:
        if not ops.on_arrays:
            return _on_tensors(self, grads)
        grad = grads[0]
        edges = self._next_functions
        if grad is None:
            return [None] * len(edges)
        result = np.array(grad, order="C", copy=True)
        region = window(result, self.geometry)
        fn = self.fn
        fn._output_mask = tuple(self.should_compute_output(i) for i in range(len(edges)))
        try:
            fn_grads = fn.apply([region.copy()], array_ops) if fn.runs_on_arrays \
                else _apply_tensor_node(fn, [region.copy()])
        finally:
            fn._output_mask = None
        region[...] = 0 if fn_grads[0] is None else fn_grads[0]
        return [result, *fn_grads[1:]]

    def release_variables(self) -> None:
        self.fn.release_variables()


def _apply_tensor_node(node: Node, grads: list) -> list:
    """A node written for Tensors (a custom Function's) run on arrays, with grad mode off:
    its gradients as arrays."""
    with set_grad_enabled(False):
        outputs = node.apply([Tensor._make(g, None) for g in grads])
    return [None if g is None else g._data for g in outputs]


def _on_tensors(node: Node, grads: list) -> list:
    """A node that computes on arrays only, given Tensors: the same on their arrays."""
    _refuse_double_backward(node, grads)
    outputs = node.apply([None if g is None else g._data for g in grads], array_ops)
    return [None if g is None else Tensor._make(g, None) for g in outputs]


def _refuse_double_backward(node: Node, grads: list) -> None:
    if is_grad_enabled() and any(g is not None and g.requires_grad for g in grads):
        raise RuntimeError(f"gradgen cannot differentiate {node.name()} a second time "
                           "(create_graph=True through an in-place op on a view)")


# -- where a tensor's gradient goes ---------------------------------------------------------

# Every input that needs no gradient shares this edge.
NO_EDGE = (None, 0)


def grad_accumulator(tensor: Tensor) -> AccumulateGrad:
    """The AccumulateGrad of a leaf: made once, and kept alive by the graph alone."""
    node = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(node)
    return node


def gradient_edge(value: Any) -> tuple[Node | None, int]:
    """Where the gradient for `value` goes: its grad_fn, or its leaf's AccumulateGrad."""
    if isinstance(value, Tensor):
        if value._base is not None and value._base.grad_fn is not value._base_grad_fn:
            regenerate_view(value)
        if value.grad_fn is not None:
            return (value.grad_fn, value._output_nr)
        if value._requires_grad:
            return (grad_accumulator(value), 0)
    return NO_EDGE


def regenerate_view(view: Tensor) -> None:
    """Give a view whose base was changed in place a grad_fn through the base's new one."""
    base = view._base
    changes.changed()  # its grad_fn changes (runtime/changes.py)
    view._base_grad_fn = base.grad_fn
    if view.grad_fn is None and view._requires_grad:
        return  # made under no_grad: a leaf of its own
    if not base.requires_grad:
        view.grad_fn = None
        return
    node = AsStridedBackward0(view._data, base._data)
    node.set_next_edges((gradient_edge(base),))
    node._input_metadata = ((view._data.shape, view._data.dtype),)
    view.grad_fn = node
    view._output_nr = 0


def strip_backward(name: str) -> str:
    """`MulBackward0` -> `Mul`, as PyTorch names a node in its version-counter error."""
    return re.sub(r"Backward\d*$", "", name)


class SavedVariable:
    """A tensor a Node keeps for backward; checks on use that no in-place op changed it.

    An input is kept as the tensor itself. An output is kept as its data alone: keeping the
    output Tensor would make output -> grad_fn -> saved output a reference cycle, so the
    tensor is rebuilt on unpack with the owning node as its grad_fn.
    """

    __slots__ = ("_tensor", "_data", "_version_counter", "_saved_version", "_is_output",
                 "_output_nr", "_requires_grad", "_freed", "_owner_name", "_fw_grad",
                 "_packed", "_unpack_hook")

    def __new__(cls, tensor: Any, is_output: bool) -> SavedVariable | SavedValue:
        # None (an absent optional, or a tensor not needed) or a Python number standing in
        # for a tensor has nothing to track: it is kept as a plain value.
        if tensor is None:
            return NOT_SAVED
        if type(tensor) is float or type(tensor) is int or not hasattr(tensor, "_counter"):
            value = object.__new__(SavedValue)  # SavedValue(tensor), without its call
            value.value = tensor
            value._freed = False
            return value
        # Made here in full, with no __init__: a node saves in every recorded op, and one
        # call costs less than two.
        self = object.__new__(cls)
        self._freed = False
        self._is_output = is_output
        counter = tensor._counter
        if counter is None:  # (Tensor._version_counter, without the property's call)
            counter = tensor._counter = VersionCounter()
        elif counter.inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`."
            )
        self._version_counter = counter
        self._saved_version = counter.version
        self._unpack_hook = None
        if saved_tensor_hooks._stack:  # torch.autograd.graph.saved_tensors_hooks is on
            self._save_packed(tensor, is_output, saved_tensor_hooks.current())
        elif is_output:
            self._tensor = None
            self._data = tensor._data
            self._output_nr = tensor._output_nr
            self._requires_grad = tensor._requires_grad or tensor.grad_fn is not None
            self._owner_name = tensor.grad_fn.name() if tensor.grad_fn is not None else None
            self._fw_grad = None
            if tensor._fw_grad is not None:  # kept for forward AD (forward-over-reverse)
                self._fw_grad = forward_grad.saved_tangent(tensor)
        else:
            self._tensor = tensor
            self._data = None
        return self

    def _save_packed(self, tensor: Any, is_output: bool, hooks: tuple) -> None:
        """Keep what the pack hook makes of the tensor, and the unpack hook to undo it."""
        pack_hook, self._unpack_hook = hooks
        self._tensor = self._data = self._fw_grad = None
        self._output_nr = tensor._output_nr
        self._requires_grad = tensor.requires_grad
        self._owner_name = tensor.grad_fn.name() if tensor.grad_fn is not None else None
        self._packed = pack_hook(tensor)

    def _unpacked(self) -> Any:
        """The unpack hook's tensor for what the pack hook made."""
        tensor = self._unpack_hook(self._packed)
        if not isinstance(tensor, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(tensor).__name__}")
        return tensor

    def unpack_data(self) -> Any:
        """The saved tensor's array, for a raw backward: the same checks as unpack."""
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        counter = self._version_counter
        if counter.version != self._saved_version:
            raise RuntimeError(self._version_error(counter.version))
        if self._unpack_hook is not None:
            return self._unpacked()._data
        return self._data if self._is_output else self._tensor._data

    def unpack(self, grad_fn: Node | None = None) -> Any:
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        counter = self._version_counter
        if counter.version != self._saved_version:
            raise RuntimeError(self._version_error(counter.version))
        if self._unpack_hook is not None:
            return self._unpacked()
        if not self._is_output:
            return self._tensor
        tensor = Tensor._make(self._data, None)
        tensor._version_counter = counter
        if grad_fn is not None and self._requires_grad:
            tensor.grad_fn = grad_fn
            tensor._output_nr = self._output_nr
        if self._fw_grad is not None:
            forward_grad.restore_tangent(tensor, self._fw_grad)
        return tensor

    def _version_error(self, current: int) -> str:
        if self._unpack_hook is not None:
            data = self._unpacked()._data
        else:
            data = self._data if self._is_output else self._tensor._data
        if self._is_output or self._unpack_hook is not None:
            owner = self._owner_name
        else:
            fn = self._tensor.grad_fn
            owner = fn.name() if fn is not None else None
        where = f", which is output {self._output_nr_for_message()} of {strip_backward(owner)}," \
            if owner else ""
        if anomaly.is_enabled():
            hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                    "its gradient. The variable in question was changed in there or anywhere "
                    "later. Good luck!")
        else:
            hint = ("Hint: enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{type_string(data)} [{', '.join(map(str, data.shape))}]]"
            f"{where} is at version {current}; expected version {self._saved_version} instead. "
            f"{hint}"
        )

    def _output_nr_for_message(self) -> int:
        if self._is_output or self._unpack_hook is not None:
            return self._output_nr
        return self._tensor._output_nr

    def reset_data(self) -> None:
        """Release the tensor (PyTorch's SavedVariable::reset_data), or what its pack hook
        made of it."""
        self._tensor = None
        self._data = None
        if self._unpack_hook is not None:
            self._packed = None
        self._freed = True


class SavedValue:
    """What SavedVariable keeps for a value that is not a tensor: the value itself."""

    __slots__ = ("value", "_freed")

    def __init__(self, value: Any) -> None:
        self.value = value
        self._freed = False

    def unpack(self, grad_fn: Node | None = None) -> Any:
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return self.value

    def unpack_data(self) -> Any:  # (unpack's body, not a call of it: NOT_SAVED's every read)
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return self.value

    def reset_data(self) -> None:
        """A number saved where the schema has a Tensor is freed: PyTorch saves the tensor it
        wraps the number in, and a second backward through the node raises (`(w * 2).sum()`).
        None (NOT_SAVED, shared) has nothing to free: PyTorch gives an undefined tensor."""
        if self is not NOT_SAVED:
            self._freed = True


NOT_SAVED = SavedValue(None)

# What a node may keep for a Tensor argument a Python number may stand for (`x * 2`'s
# other): a SavedVariable, NOT_SAVED, or the number itself, which costs no object. Backward
# frees either of the first and third by putting FREED in its place (one store, where a
# test of which it is would cost more), and unpacking FREED raises as a freed SavedVariable
# does; NOT_SAVED stays (torch's undefined tensor, read as None after backward too).
SAVED = (SavedVariable, SavedValue)
FREED = SavedValue(None)
FREED._freed = True


class SavedVariableList:
    """A saved Tensor[] argument (cat's `tensors`)."""

    __slots__ = ("_items",)

    def __init__(self, tensors: list, is_output: bool = False) -> None:
        self._items = [SavedVariable(t, is_output) for t in tensors]

    def unpack(self, grad_fn: Node | None = None) -> list:
        return [item.unpack(grad_fn) for item in self._items]

    def unpack_data(self) -> list:
        return [item.unpack_data() for item in self._items]

    def reset_data(self) -> None:
        for item in self._items:
            item.reset_data()

