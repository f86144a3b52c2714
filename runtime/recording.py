"""What the generated forward wrappers (generated/ops.py) call to run a kernel and record
the graph: PyTorch's VariableTypeUtils, with its names where it has one.

A wrapper unpacks its Tensor arguments to arrays (`data`), runs the kernel and wraps the
result (`wrap`, `as_view`); then, if `compute_requires_grad` says so, it makes the node,
points it at the inputs' nodes (`collect_next_edges`) and makes it the result's creator
(`set_history`). An in-place wrapper checks first (`check_inplace`), writes, bumps the
version (`increment_version`) and rebases the history (`rebase_history`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from runtime import changes, dtypes, forward_grad, kernels
from runtime import modes as _modes
from runtime._tensor import Tensor, VersionCounter
from runtime.grad_mode import _state as _grad_state
from runtime.grad_mode import is_inference_mode_enabled
from runtime.node import CopySlices, Node, gradient_edge, regenerate_view, view_geometry

# -- arguments in, results out ------------------------------------------------------------

# For isinstance, made once: `list | tuple` written in a call builds a union at every call.
_SEQUENCES = (list, tuple)


def data(value: Any) -> Any:
    """The numpy array of a Tensor, a list of them for a Tensor[] (None items stay None,
    as in index's `Tensor?[] indices`); anything else (a number, None) as it is."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, _SEQUENCES) and any(isinstance(v, Tensor) for v in value):
        return [v._data if isinstance(v, Tensor) else v for v in value]
    return value


def int_tuple(value: Any) -> Any:
    """An int-list argument as a tuple: a bare int is a list of one, None stays None."""
    if value is None or type(value) is tuple:
        return value
    if isinstance(value, int):
        return (value,)
    return tuple(value)


def numpy_dtype(dtype: dtypes.dtype | None) -> np.dtype | None:
    """A ScalarType argument as the kernels take it."""
    return None if dtype is None else dtype.numpy


def wrap(array: Any) -> Tensor:
    """A new leaf Tensor around a kernel's result."""
    result = Tensor._make(array if isinstance(array, np.ndarray) else np.asarray(array), None)
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        _modes.notify("wrapped", array, result)
    return result


def as_view(base: Tensor, array: np.ndarray) -> Tensor:
    """A Tensor around `array`, a view of `base`'s data: it shares base's storage and
    version counter.

    Made under no_grad from a tensor that requires grad, the view is a leaf that requires
    grad, as in PyTorch (in-place writes to it are refused by check_inplace).
    """
    tensor = Tensor._make(array, None, not _grad_state.enabled and base.requires_grad)
    counter = base._counter  # base._version_counter, without the property's calls
    if counter is None:
        counter = base._counter = VersionCounter()
    tensor._counter = counter
    root = base if base._base is None else base._base
    tensor._base = root
    tensor._base_grad_fn = root.grad_fn
    return tensor


def sharing_memory(base: Tensor, array: np.ndarray) -> Tensor:
    """A Tensor around `array`, a view of `base`'s data that autograd does not track as a
    view (torch's non-differentiable views, as view.dtype's): it shares base's memory and
    version counter, and has no _base."""
    tensor = Tensor._make(array, None)
    counter = base._counter
    if counter is None:
        counter = base._counter = VersionCounter()
    tensor._counter = counter
    return tensor


# -- recording the graph ------------------------------------------------------------------

def compute_requires_grad(*values: Any) -> bool:
    """Whether to record: grad mode on and some differentiable input requires grad."""
    if not _grad_state.enabled:
        return False
    for value in values:
        if isinstance(value, Tensor):
            if value.grad_fn is not None or value._requires_grad:
                return True
        elif isinstance(value, list | tuple):
            if any(isinstance(v, Tensor) and v.requires_grad for v in value):
                return True
    return False


def collect_next_edges(*values: Any) -> tuple[tuple[Node | None, int], ...]:
    """One edge per differentiable input; a Tensor[] input gives one edge per tensor."""
    edges: list[tuple[Node | None, int]] = []
    for value in values:
        kind = type(value)
        if kind is list or kind is tuple:
            edges.extend(map(gradient_edge, value))
        else:
            edges.append(gradient_edge(value))
    return tuple(edges)


# The `((shape, dtype),)` of a node with one output, one per pair, shared by every such node:
# a program makes the same few pairs again and again, and a shared tuple is two objects
# fewer per node to keep and for the garbage collector to walk. (Bounded: a program of
# ever new shapes only makes its pairs afresh.)
_ONE_OUTPUT: dict[tuple, tuple] = {}


def set_history(tensor: Tensor, grad_fn: Node) -> None:
    """Make `tensor` the next output of `grad_fn`."""
    data, metadata = tensor._data, grad_fn._input_metadata
    if metadata:  # a later output of an op with several
        tensor._output_nr = len(metadata)
        grad_fn._input_metadata = (*metadata, (data.shape, data.dtype))
    else:  # the first output, the usual case
        tensor._output_nr = 0
        pair = (data.shape, data.dtype)
        shared = _ONE_OUTPUT.get(pair)
        if shared is None:
            if len(_ONE_OUTPUT) >= 1024:
                _ONE_OUTPUT.clear()
            shared = _ONE_OUTPUT[pair] = (pair,)
        grad_fn._input_metadata = shared
    tensor.grad_fn = grad_fn
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        _modes.notify("history", tensor, grad_fn)


def skip_output(tensor: Tensor, grad_fn: Node) -> None:
    """A non-differentiable output (e.g. indices) still takes its slot in grad_fn's inputs."""
    grad_fn._input_metadata += ((tensor._data.shape, tensor._data.dtype),)


# -- what a node saves instead of a tensor ------------------------------------------------
# Named after the saved attribute's kind (codegen.formula.SIZE_KINDS).

def sizes(value: Any) -> tuple[int, ...]:
    """`x.shape`, also for a Python number standing in for a Tensor argument."""
    return value._data.shape if isinstance(value, Tensor) else ()


def dim(value: Any) -> int:
    """`x.ndim`, saved by a node whose formula reads only that."""
    return value._data.ndim if isinstance(value, Tensor) else 0


def numel(value: Any) -> int:
    """`x.numel()`, saved by a node whose formula reads only that."""
    return value._data.size if isinstance(value, Tensor) else 1


def list_sizes(values: Sequence[Tensor]) -> list[tuple[int, ...]]:
    """The shape of each tensor of a Tensor[] argument."""
    return [v._data.shape for v in values]


def strides(value: Any) -> tuple[int, ...]:
    """`x.stride()`, in elements as PyTorch counts them, saved by a node that reads it
    (computed here as Tensor.stride does: a mode hears the op, not what it saves)."""
    if not isinstance(value, Tensor):
        return ()
    data = value._data
    itemsize = data.itemsize
    if data.ndim == 2:  # a matrix (addmm's and mm's, every Linear): without a loop
        rows, columns = data.strides
        return (rows // itemsize, columns // itemsize)
    return tuple([step // itemsize for step in data.strides])


def geometry(value: Any) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """`TensorGeometry(x)`: x's sizes, strides and storage offset (in elements), saved by a
    node that reads only those (as_strided's)."""
    if not isinstance(value, Tensor):
        return ((), (), 0)
    data = value._data
    return data.shape, strides(value), kernels.storage_offset(data)


def scalar_type(value: Any) -> Any:
    """`x.dtype`, saved by a node whose formula reads only that (read off the array, as
    `sizes` reads the shape: a mode hears the op, not what it saves)."""
    return dtypes.BY_NUMPY[value._data.dtype] if isinstance(value, Tensor) else None


# -- in-place ops -------------------------------------------------------------------------

def check_inplace(tensor: Tensor, differentiable: bool = True) -> None:
    """PyTorch's checks before an in-place op may write into `tensor`. An op without a
    derivative (logical_and_, bitwise_not_) is checked only for inference tensors: torch
    lets it write into a leaf that requires grad, which keeps its flag."""
    counter = tensor._counter  # None: never shared or bumped, so not an inference tensor
    if counter is not None and counter.inference and not is_inference_mode_enabled():
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
            "a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details."
        )
    if not (differentiable and _grad_state.enabled):
        return
    if tensor._base is not None and tensor.requires_grad:
        _check_custom_function_view(tensor)
    if tensor.grad_fn is None and tensor._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = tensor._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if base is not None and (base.requires_grad or tensor.requires_grad) and \
            view_geometry(tensor._data, base._data) is None:
        raise RuntimeError(
            "gradgen cannot write in place through this view with grad mode on: its base is "
            "not laid out contiguously, or the view repeats elements (PyTorch would rebase the "
            "base's history with CopySlices); use an out-of-place op"
        )


def _check_custom_function_view(tensor: Tensor) -> None:
    """A custom Function's output that is a view (an input returned as it is): writing
    into it would replace the Function's backward, which torch forbids."""
    function = getattr(tensor.grad_fn, "_forward_cls", None)
    if function is not None:
        raise RuntimeError(
            f"Output {tensor._output_nr} of {function.__name__} is a view and is being "
            "modified inplace. This view was created inside a custom Function (or because an "
            "input was returned as-is) and the autograd logic to handle view+inplace would "
            "override the custom backward associated with the custom Function, leading to "
            "incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
            "output of the custom Function.")


def original(tensor: Tensor) -> Tensor:
    """A snapshot of `tensor` before an in-place op overwrites it, keeping its history (and
    a snapshot of its tangent, which the op may overwrite too)."""
    snapshot = Tensor._make(tensor._data.copy(), tensor.grad_fn, tensor._requires_grad)
    snapshot._output_nr = tensor._output_nr
    if tensor._fw_grad is not None:
        forward_grad.set_tangent(snapshot, original(tensor._fw_grad))
    return snapshot


def increment_version(tensor: Tensor) -> None:
    """After an in-place kernel wrote into `tensor`'s storage."""
    counter = tensor._counter  # (Tensor._version_counter, without the property's call)
    if counter is None:
        counter = tensor._counter = VersionCounter()
    counter.version += 1
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        _modes.notify("version", tensor)


def write_inplace(tensor: Tensor, result: Any) -> None:
    """Write a kernel's result into `tensor`'s storage and bump its version.

    A result that is a reshaped view of the storage itself (`squeeze_`) changes only the
    tensor's shape.
    """
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(write_inplace, (tensor, result), {}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    result = np.asarray(result)
    target = tensor._data
    if result.shape != target.shape and result.size == target.size and (
            result.size == 0 or np.shares_memory(result, target)):
        # (numpy says an empty array shares no memory: an empty result takes the shape.)
        changes.changed()  # (a compiled step's guards read shapes: runtime/changes.py)
        tensor._data = result if result.size else target.reshape(result.shape)
        tensor._version_counter.version += 1
        return
    kernels.check_inplace_result(target, result.dtype, result.shape)
    np.copyto(tensor._data, result, casting="unsafe")
    tensor._version_counter.version += 1


def restride(tensor: Tensor, view: np.ndarray) -> None:
    """An in-place view op (as_strided_): `tensor` becomes `view`, a view of its storage that
    the kernel made; its data is untouched, its version moves on (as torch's)."""
    changes.changed()  # (a compiled step's guards read shapes: runtime/changes.py)
    tensor._data = view
    increment_version(tensor)


def rebase_view_history(tensor: Tensor, grad_fn: Node) -> None:
    """After an in-place view op: `tensor` is its node's output, as in torch. No CopySlices:
    its base's data did not change, so a view keeps reaching its base through this node."""
    grad_fn._input_metadata += ((tensor._data.shape, tensor._data.dtype),)
    changes.changed()  # its grad_fn changes (runtime/changes.py)
    tensor.grad_fn = grad_fn
    tensor._output_nr = 0
    if tensor._base is not None:
        tensor._base_grad_fn = tensor._base.grad_fn


def rebase_history(tensor: Tensor, grad_fn: Node) -> None:
    """After an in-place op, `tensor` is the output of the in-place op's node.

    Written through a view, it is the base that changed: the base's grad_fn becomes a
    CopySlices around the op's node, and the view reaches it through its window
    (AsStridedBackward0), as in PyTorch.
    """
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(rebase_history, (tensor, grad_fn), {}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    grad_fn._input_metadata += ((tensor._data.shape, tensor._data.dtype),)
    base = tensor._base
    if (tensor if base is None else base).grad_fn is None:
        changes.changed()  # a leaf becomes a non-leaf (runtime/changes.py)
    if base is None:
        tensor.grad_fn = grad_fn
        tensor._output_nr = 0
        return
    geometry = view_geometry(tensor._data, base._data)
    if geometry is None:
        raise RuntimeError("gradgen cannot record an in-place op through this view: its base "
                           "is not laid out contiguously, or the view repeats elements")
    copy_slices = CopySlices(grad_fn, geometry)
    copy_slices.set_next_edges((gradient_edge(base), *grad_fn._next_functions[1:]))
    copy_slices._input_metadata = ((base._data.shape, base._data.dtype),)
    base.grad_fn = copy_slices
    base._output_nr = 0
    regenerate_view(tensor)
