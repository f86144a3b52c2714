"""The `out=` keyword: `torch.add(a, b, out=c)` writes the sum into `c` and returns `c`.

PyTorch gives most of its functions an out= form (`add.out` beside `add.Tensor` in its
native_functions.yaml). gradgen's spec has only the functional schemas, so the code
generator gives the functional wrapper of each overload torch binds with out= a
keyword-only `out=None` (codegen/render.py, OUT_OVERLOADS), and a call that passes one
hands over to `call` below; a call without it costs one `if out is not None`. The in-place
forms (`add_`) and the Tensor methods (`x.add`) take no out=, as in PyTorch.

What happens, in PyTorch's order, so that a refused call leaves `out` as it was:

1. `out` must be a Tensor (a tuple of them for an op with several results): a TypeError.
2. Under grad mode, no argument (out included) may require grad: out= writes are not
   differentiable, so torch raises a RuntimeError instead of recording a graph.
3. The op runs as usual (its own argument checks raise here), under no_grad: no graph.
4. Each result's type must cast into its out tensor's dtype as PyTorch's `canCast` says:
   within its kind or up (int into float; bool into anything), never float into int or
   anything but bool into bool.
5. An out tensor of another shape is resized: silently when it is empty, with PyTorch's
   UserWarning (a deprecated behaviour) when it had elements.
6. The result is copied into out's storage (so views of out see it) and out's version
   counter moves, as an in-place write does.
7. An argument with a forward-mode tangent is refused then, after the write, as torch's
   out= functions (which have no forward formula) do: a NotImplementedError.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import changes, dtypes, forward_grad, grad_mode
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {old}, which does "
    "not match the required output shape {new}. This behavior is deprecated, and in a future "
    "PyTorch release outputs will not be resized unless they have zero elements. You can "
    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0)."
)


def call(name: str, function: Callable, args: tuple, kwargs: dict, out: Any,
         outputs: int = 1, dtype_rule: str = "cast") -> Any:
    """`function(*args, **kwargs)` (a generated wrapper, called without out=) with its
    result written into `out`; returns `out` (a tuple of them, named as torch names it,
    for an op with several results). `name` is the op's name for messages; `dtype_rule`
    says which dtypes out may have (DTYPE_RULES)."""
    targets = _targets(name, out, outputs)
    values = (*args, *kwargs.values(), *targets)
    check_no_grad(name, values)
    with grad_mode.no_grad():
        result = function(*args, **kwargs)
    results = (result,) if outputs == 1 else tuple(result)
    for value, target in zip(results, targets, strict=True):
        check_dtype(dtype_rule, name, value._data.dtype, target)
    # A structured kernel that casts computes into a temporary of the result's dtype and
    # resizes both it and out: torch then warns twice about the same out.
    twice = dtype_rule == "cast"
    for value, target in zip(results, targets, strict=True):
        cast = value._data.dtype != target._data.dtype
        write(target, value._data, warn=2 if twice and cast else 1)
    if forward_grad.enabled and forward_grad.any_tangent(*values):  # after the write, as torch
        raise NotImplementedError(f"Trying to use forward AD with {name}_out that does not "
                                  "support it because it is an out= function")
    if outputs == 1:
        return out
    fields = getattr(type(result), "_fields", None)
    return _named_out(name, fields)(*targets) if fields else tuple(targets)


def _targets(name: str, out: Any, outputs: int) -> tuple[Tensor, ...]:
    """The out tensors, checked as PyTorch's argument parser checks them."""
    if outputs == 1:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
        return (out,)
    if not isinstance(out, list | tuple) or not all(isinstance(t, Tensor) for t in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{_type_name(out)}")
    if len(out) != outputs:
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {outputs} Tensors, "
                        f"got {len(out)}")
    return tuple(out)


def _type_name(value: Any) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def check_no_grad(name: str, values: tuple) -> None:
    """Refuse an out= call under grad mode when some argument requires grad: the write
    into out would have no gradient formula (torch's message names the op)."""
    if not grad_mode.is_grad_enabled():
        return
    for value in values:
        items = value if isinstance(value, list | tuple) else (value,)
        if any(isinstance(item, Tensor) and item.requires_grad for item in items):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")


def scalar_type_name(dtype: np.dtype) -> str:
    """`Float`, `Long`: PyTorch's name of a dtype in its messages."""
    return dtypes.type_string(np.empty(0, dtype)).removeprefix("torch.").removesuffix("Tensor")


# C++'s names of the scalar types, which some of PyTorch's checks print.
_CPP_NAMES = {"float64": "double", "float32": "float", "int64": "long int", "int32": "int",
              "bool": "bool", "uint8": "unsigned char", "float16": "c10::Half",
              "int16": "short int", "int8": "signed char"}

# Which out dtypes each kind of PyTorch kernel takes, and its message when it refuses one.
# "cast" (TensorIterator's structured ops: add, exp, ...) takes any dtype the result casts
# to (canCast); so do "cast_once" (comparisons, which write into out directly: a resize
# warns once, not twice) and the kinds of _CAST_MESSAGES, each with its own message. The
# kinds of _EXACT_MESSAGES take only the result's own dtype; "bool" only bool (any, all);
# "floating" any floating dtype (logsumexp); "any" every dtype (sum with a dim, cumsum).
# The code generator names the rule of each overload (codegen/render.py, OUT_DTYPE_RULES).
_EXACT_MESSAGES = {
    "same": "Expected out tensor to have dtype {result_cpp}, but got {out_cpp} instead",
    "found": "Found dtype {out} but expected {result}",
    "where": "Expected out type to be {result} but got {out}",
    "dot": "result dtype {out} does not match input dtype {result}",
    "index": "{name}(): self and result must have the same scalar type",
    "batch_norm": "expected scalar type {result} but found {out}",
    "reduce": "Expected the dtype for input and out to match, but got {result} for input's "
              "dtype and {out} for out's dtype.",
    "mv": "addmv input tensors must have the same dtype, but got {out}, {result}, and {result}",
}
_CAST_MESSAGES = {
    "cast": (RuntimeError, "result type {result} can't be cast to the desired output type {out}"),
    "cast_once": (RuntimeError, "result type {result} can't be cast to the desired output type "
                                "{out}"),
    # (mean with a dim names the type it checks as Float, whatever the input's)
    "mean_dim": (RuntimeError, "result type Float can't be cast to the desired output type {out}"),
    "cat": (TypeError, "torch.cat(): input types can't be cast to the desired output type {out}"),
    "mean": (RuntimeError, "mean.dtype_out(): input types can't be cast to the desired output "
                           "type {out}"),
    "unary": (RuntimeError, "Expected canCast( typeMetaToScalarType(self.dtype()), "
                            "typeMetaToScalarType(out.dtype())) to be true, but got false.  "
                            "(Could this error message be improved?  If so, please report an "
                            "enhancement request to PyTorch.)"),
}
# The kernels of the reductions, scans, indexing and shape family (family 2), each its own.
_EXACT_MESSAGES.update({
    "expected_true": "Expected self.dtype() == output.dtype() to be true, but got false.  "
                     "(Could this error message be improved?  If so, please report an "
                     "enhancement request to PyTorch.)",
    "median": "Expected tensor for 'values' to have the same type as tensor for argument #2 "
              "'self'; but type {out_type} does not equal torch.{result}Tensor (while "
              "checking arguments for median)",
    "kthvalue": "output values must be of same type as input",
    # (torch's message has no space before the out dtype)
    "nonzero": "nonzero: Expected out tensor to have scalar type {result} but got scalar "
               "type{out}",
    "scan": "expected scalar_type {result} but found {out}",
    "take": "take(): self and out expected to have the same dtype, but got self.dtype = "
            "{result} and out.dtype = {out}",
})
DTYPE_RULES = frozenset({*_EXACT_MESSAGES, *_CAST_MESSAGES, "bool", "floating", "any"})


def check_dtype(rule: str, name: str, dtype: np.dtype, target: Tensor) -> None:
    """Refuse to write a result of `dtype` into `target` where PyTorch's kernel does."""
    wanted = target._data.dtype
    names = {"name": name, "result": scalar_type_name(dtype), "out": scalar_type_name(wanted),
             "result_cpp": _CPP_NAMES.get(dtype.name), "out_cpp": _CPP_NAMES.get(wanted.name),
             "out_type": ("CPUBoolType" if wanted == np.bool_
                          else f"torch.{scalar_type_name(wanted)}Tensor")}
    if rule in _EXACT_MESSAGES:
        if dtype != wanted:
            raise RuntimeError(_EXACT_MESSAGES[rule].format(**names))
    elif rule == "bool":
        if wanted != np.bool_:
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{names['out']}")
    elif rule == "floating":
        if wanted.kind not in "fV":
            raise RuntimeError(f"{name}(): Expected floating point type for result tensor, "
                               f"but got: {names['out']}")
    elif rule != "any" and not np.can_cast(dtype, wanted, casting="same_kind"):
        error, message = _CAST_MESSAGES[rule]
        raise error(message.format(**names))


def write(target: Tensor, array: np.ndarray, warn: int = 1) -> None:
    """Copy `array` into `target`'s storage (cast to its dtype), resizing it first if its
    shape differs (with PyTorch's warning, `warn` times, when it had elements), and
    bump its version."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(write, (target, array, warn), {}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    shape = np.shape(array)
    if target._data.shape != shape:
        if target._data.size:
            message = _RESIZE_WARNING.format(old=list(target._data.shape), new=list(shape))
            for _ in range(warn):
                warn_at_caller(message, UserWarning)
        resize(target, shape)
    np.copyto(target._data, array, casting="unsafe")
    target._version_counter.version += 1


def resize(target: Tensor, shape: tuple[int, ...]) -> None:
    """PyTorch's resize_ of an out tensor: it keeps its storage when that holds enough
    elements (views of out then see what is written), else it gets a larger one. (torch
    grows the storage views share; a numpy array cannot grow, so there views of the old
    storage keep the old memory.)"""
    size = int(np.prod(shape))
    data = target._data
    changes.changed()  # (a compiled step's guards read shapes: runtime/changes.py)
    if size <= data.size and data.flags.c_contiguous:
        target._data = data.reshape(-1)[:size].reshape(shape)
    else:
        target._data = np.empty(shape, data.dtype)


_RANGE_WARNING = (
    "The number of elements in the out tensor of shape {old} is {count} which does not match "
    "the computed number of elements {new_count}. Note that this may occur as a result of "
    "rounding error. The out tensor will be resized to a tensor of shape ({new_shape},)."
)


def factory(name: str, function: Callable, args: tuple, kwargs: dict, out: Any) -> Tensor:
    """A factory's out= form (`torch.zeros(2, 3, out=t)`, runtime/factories.py): the values
    are made in out's dtype (a `dtype=` must be out's own), written into out (resized
    silently: a factory has no shape to keep), and out takes the call's `requires_grad`.

    arange and linspace are PyTorch's range factories: they keep out's shape when it holds
    the right number of elements (`arange(4, out=zeros(2, 2))` is 2x2), and arange warns
    when it resizes an out tensor that had elements.
    """
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    dtype = kwargs.get("dtype")
    if dtype is not None and np.dtype(dtype.numpy) != out._data.dtype:
        raise RuntimeError(f"dtype {scalar_type_name(np.dtype(dtype.numpy))} does not match "
                           f"dtype of out parameter ({scalar_type_name(out._data.dtype)})")
    if name == "empty" and out.requires_grad:  # empty only resizes out, which torch refuses
        raise RuntimeError("cannot resize variables that require grad")
    check_no_grad(f"aten::{name}", (out,))
    requires_grad = kwargs.get("requires_grad", False)
    array = function(*args, **{**kwargs, "dtype": dtypes.from_numpy(out._data.dtype),
                               "requires_grad": False})._data
    if name in ("arange", "linspace") and out._data.dtype == np.bool_:
        if name == "linspace" and out._data.shape != array.shape:
            resize(out, array.shape)  # linspace resizes out before its kernel refuses bool
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    if name in ("arange", "linspace") and array.size == out._data.size:
        array = array.reshape(out._data.shape)
    elif name == "arange" and out._data.size:
        warn_at_caller(_RANGE_WARNING.format(old=list(out._data.shape), count=out._data.size,
                                            new_count=array.size, new_shape=array.size),
                       UserWarning)
    if name == "empty":  # torch's empty.out resizes out and leaves its values as they are
        if out._data.shape != array.shape:
            resize(out, array.shape)
            out._version_counter.version += 1
    else:
        write(out, array, warn=0)
    if requires_grad and out._data.dtype.kind not in "fV":  # (after the write, as in torch)
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if out.requires_grad != requires_grad:
        out.requires_grad_(requires_grad)
    return out


_NAMED: dict[tuple, type] = {}


def _named_out(name: str, fields: tuple[str, ...]) -> type:
    """The named tuple torch returns from an out= call (`torch.return_types.max_out`)."""
    key = (name, fields)
    if key not in _NAMED:
        _NAMED[key] = namedtuple(f"{name}_out", fields)  # noqa: PYI024 - as the ops' returns
    return _NAMED[key]
