"""torch.autograd.Function: an op whose forward and backward the user writes in Python.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    z = Exp.apply(x)        # z.grad_fn is an ExpBackward

Each subclass gets a node class of its own, `<Name>Backward` (FunctionMeta makes it), and
each call of `apply` one node of that class, which is also the `ctx` that forward and
backward are given, as in PyTorch. Forward runs with grad mode and forward AD off; its
outputs become the node's outputs the way PyTorch's custom_function.cpp makes them (inputs
returned as they are become views, dirty inputs take the node as their history, outputs
marked non-differentiable or of an integer dtype get none). The node is written for
Tensors (`apply(self, grads)`): the engine gives it Tensors even in a backward that runs
on arrays, and runs it with grad mode as create_graph says, so a backward written with
differentiable ops is itself differentiable.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import forward_grad, recording
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.global_flags import typename
from runtime.grad_mode import is_grad_enabled, no_grad
from runtime.node import (
    ERR_BACKWARD_TWICE,
    NOT_SAVED,
    Node,
    SavedVariable,
    gradient_edge,
)

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "FunctionMeta",
           "once_differentiable"]

# The input metadata of an output that is not a tensor: no gradient ever flows to it.
_NO_METADATA: tuple = ((), None)


class FunctionCtx:
    """What forward (or setup_context) calls on `ctx` to tell autograd about its outputs."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep these tensors (inputs, outputs or others) for backward, which reads them as
        `ctx.saved_tensors`, checked against in-place changes since."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep these tensors for jvp, which reads them as `ctx.saved_tensors`."""
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Say that forward modified these inputs in place (and returns them)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Say that these outputs have no gradient: they need none, and backward is given
        zeros for them."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward (and jvp) is given zeros for a missing gradient (the default)
        or None."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call of a Function, and the `ctx` its methods are given.

    `_forward_cls` (set on each subclass by FunctionMeta) is the Function.
    """

    _forward_cls: type[Function]

    def __init__(self) -> None:
        super().__init__()
        self.to_save: tuple | None = None
        self.saved_for_forward: tuple | None = None
        self.dirty_tensors: tuple | None = None
        self.non_differentiable: tuple | None = None
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._is_tensor_input: tuple[bool, ...] = ()
        self._output_info: list[tuple | None] = []  # (shape, dtype) of each tensor output
        self._saved_variables: list = []
        self._freed = False
        self._in_jvp = False

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self) -> tuple:
        """The tensors save_for_backward kept (in jvp: those save_for_forward kept)."""
        if self._in_jvp:
            return self.saved_for_forward or ()
        if self._freed:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return tuple(saved.unpack(self) for saved in self._saved_variables)

    def release_variables(self) -> None:
        for saved in self._saved_variables:
            saved.reset_data()
        self._freed = True

    def _user_backward(self) -> Callable:
        forward_cls = self._forward_cls
        backward, vjp = forward_cls.backward, forward_cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp if vjp is not Function.vjp else backward

    def apply(self, grads: list) -> list:
        """Run the Function's backward on the gradients of its outputs (zeros for missing
        ones, unless set_materialize_grads(False)); returns those of its tensor inputs."""
        user_backward = self._user_backward()
        if self.materialize_grads:
            grads = [_zeros(info) if grad is None and info is not None else grad
                     for grad, info in zip(grads, self._output_info, strict=False)]
        return self._input_gradients(user_backward(self, *grads))

    def _input_gradients(self, result: Any) -> list:
        """PyTorch's checks on what backward returned: one gradient per forward input (extra
        Nones dropped), None for each input that is not a tensor; the tensor inputs' kept."""
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._is_tensor_input)
        if len(result) > expected and all(value is None for value in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {expected}, got {len(result)})")
        grads = []
        for position, (value, is_tensor) in enumerate(zip(result, self._is_tensor_input,
                                                         strict=True)):
            if not is_tensor:
                if value is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {position + 1}, but the corresponding forward input was not "
                        "a Variable")
                continue
            if value is not None and not isinstance(value, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(value).__name__})")
            grads.append(value)
        return grads


def _zeros(info: tuple) -> Tensor:
    shape, dtype = info
    return Tensor._make(np.zeros(shape, dtype), None)


class FunctionMeta(type):
    """Gives each Function subclass its node class, `<Name>Backward`, as `_backward_cls`."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base of custom autograd ops: subclass it with static `forward` and `backward` (and
    `jvp` for forward mode), then call `apply`.

    forward takes `ctx` first, or, in the newer style, does not, and a static
    `setup_context(ctx, inputs, output)` fills `ctx` instead.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warn_at_caller(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward, and record one node for the call if an input requires grad."""
        new_style = cls.setup_context is not Function.setup_context
        if new_style:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        return _apply(cls, args, kwargs, new_style)


def _apply(cls: type[Function], args: tuple, kwargs: dict, new_style: bool) -> Any:
    inputs = (*args, *kwargs.values())  # keyword arguments count as inputs, in their order
    tensor_inputs = [value for value in inputs if isinstance(value, Tensor)]
    ctx = cls._backward_cls()
    ctx._is_tensor_input = tuple(isinstance(value, Tensor) for value in inputs)
    ctx.needs_input_grad = tuple(isinstance(value, Tensor) and value.requires_grad
                                 for value in inputs)
    executable = is_grad_enabled() and any(ctx.needs_input_grad)
    if executable:
        ctx.set_next_edges(tuple(gradient_edge(t) for t in tensor_inputs))
    dual = forward_grad.enabled and forward_grad.any_tangent(*tensor_inputs)
    with no_grad(), forward_grad.computing_tangents():
        if new_style:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, inputs, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    is_tuple = isinstance(output, tuple)
    outputs = _wrap_outputs(ctx, tensor_inputs, output if is_tuple else (output,), executable)
    if dual:
        _forward_ad(cls, ctx, inputs, outputs)
    _save_variables(ctx, executable)
    return outputs if is_tuple else outputs[0]


def _marked(method: str, message: str, tensors: tuple | None) -> set[int]:
    """The ids of the tensors given to mark_dirty or mark_non_differentiable."""
    for position, tensor in enumerate(tensors or ()):
        if not isinstance(tensor, Tensor):
            raise RuntimeError(f"{method} {message} {position} is of type "
                               f"{type(tensor).__name__}")
    return {id(tensor) for tensor in tensors or ()}


def _wrap_outputs(ctx: BackwardCFunction, tensor_inputs: list[Tensor], outputs: tuple,
                  executable: bool) -> tuple:
    """Make forward's outputs the node's, as PyTorch's _wrap_outputs does."""
    non_differentiable = _marked("mark_non_differentiable", "only accepts variables, but "
                                 "argument", ctx.non_differentiable)
    dirty = _marked("mark_dirty", "can only accept variables, but argument", ctx.dirty_tensors)
    for tensor in ctx.dirty_tensors or ():
        tensor._version_counter.version += 1
    ctx.non_differentiable = ctx.dirty_tensors = None
    inputs = {id(tensor) for tensor in tensor_inputs}
    wrapped = []
    for value in outputs:
        if not isinstance(value, Tensor):
            if executable:
                ctx._input_metadata += (_NO_METADATA,)
            ctx._output_info.append(None)
            wrapped.append(value)
            continue
        ctx._output_info.append((value._data.shape, value._data.dtype))
        differentiable = executable and id(value) not in non_differentiable \
            and value.dtype.is_floating_point
        is_input, is_modified = id(value) in inputs, id(value) in dirty
        if is_modified and not is_input:
            warn_at_caller("ctx.mark_dirty() received a tensor that was not an input. Only input "
                           "Tensors that have been mutated should be passed to "
                           "ctx.mark_dirty().", UserWarning)
        if not differentiable:
            if executable:
                ctx._input_metadata += (_NO_METADATA,)
            wrapped.append(_without_history(value, is_input, is_modified))
        elif is_modified:
            wrapped.append(_rebase(ctx, value, len(outputs)))
        else:
            if is_input:
                # An input returned as it is: a view of it takes the node's history.
                value = recording.as_view(value, value._data)
                value._requires_grad = False
            recording.set_history(value, ctx)
            wrapped.append(value)
    return tuple(wrapped)


def _without_history(value: Tensor, is_input: bool, is_modified: bool) -> Tensor:
    """An output that gets no gradient: an input is returned detached (or as a view, if it
    needed no gradient), another tensor loses whatever history it had."""
    if not value.requires_grad:
        if is_input and not is_modified:
            view = recording.as_view(value, value._data)
            view._requires_grad = False
            return view
        return value
    if is_input:
        return value.detach()
    if value._base is None:
        value.detach_()
    return value


def _rebase(ctx: BackwardCFunction, value: Tensor, count: int) -> Tensor:
    """A tensor forward modified in place (mark_dirty) now comes from the node; through a
    view, its base does (CopySlices), as an in-place op of the spec would record it."""
    if value.grad_fn is None and value._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")
    base = value._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if base is not None:
        if count > 1:
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by "
                "the current autograd engine. You should either make sure the input is not a "
                "view (using .clone() for example) or make your Function only return one "
                "Tensor (potentially splitting it into two Functions: one doing the inplace "
                "that returns a single Tensor and a second one that does the other "
                "operations). You can ask on the forum https://discuss.pytorch.org/ if you "
                "need help to do this change.")
        recording.rebase_history(value, ctx)
        return value
    recording.set_history(value, ctx)
    return value


def _save_variables(ctx: BackwardCFunction, executable: bool) -> None:
    """Turn what save_for_backward was given into SavedVariables (after the outputs took
    the node as their history, so that a saved output is known as one)."""
    saved = []
    for position, value in enumerate(ctx.to_save or ()):
        if value is None:
            saved.append(NOT_SAVED)
        elif isinstance(value, Tensor):
            if executable:
                saved.append(SavedVariable(value, value.grad_fn is ctx))
        elif executable:
            raise TypeError(f"save_for_backward can only save variables, but argument "
                            f"{position} is of type {type(value).__name__}")
    ctx._saved_variables = saved if executable else []
    ctx.to_save = None


def _forward_ad(cls: type[Function], ctx: BackwardCFunction, inputs: tuple,
                outputs: tuple) -> None:
    """Give the outputs the tangents the Function's jvp computes from the inputs' (zeros
    for an input without one, unless set_materialize_grads(False); None for a non-tensor)."""
    tangents = []
    for value in inputs:
        if not isinstance(value, Tensor):
            tangents.append(None)
        elif value._fw_grad is not None or ctx.materialize_grads:
            tangents.append(forward_grad.tangent(value))
        else:
            tangents.append(None)
    ctx._in_jvp = True
    try:
        with forward_grad.computing_tangents():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx.saved_for_forward = None
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outputs)} but got {len(result)})")
    for position, (output, tangent) in enumerate(zip(outputs, result, strict=True)):
        if tangent is not None and not isinstance(tangent, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(tangent).__name__}) for "
                               f"grad output {position}.")
        if isinstance(output, Tensor) and tangent is not None:
            forward_grad.set_tangent(output, tangent)


# -- once_differentiable ----------------------------------------------------------------------

class Error(Node):
    """The node of a gradient that must not be differentiated: its backward raises (PyTorch's
    DelayedError makes it)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def name(self) -> str:
        return "torch::autograd::Error"

    def __repr__(self) -> str:
        return f"<Error object at {id(self):#x}>"

    def apply(self, grads: list) -> list:
        raise RuntimeError(self.message)


def _delayed_error(message: str, outputs: tuple) -> Any:
    """The outputs again, each made by an Error node, so that differentiating them raises."""
    node = Error(message)
    sources = []
    for value in outputs:
        if value is not None:
            value = value.detach()
            value.requires_grad = True
        sources.append(value)
    node.set_next_edges(tuple(gradient_edge(source) for source in sources))
    results = []
    for source in sources:
        if source is None:
            results.append(None)
            continue
        result = Tensor._make(source._data, None)
        recording.set_history(result, node)
        results.append(result)
    return results[0] if len(results) == 1 else tuple(results)


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a backward that is not differentiable: it runs with grad mode off, and its
    results, when a graph is being built (create_graph), raise if differentiated."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(arg, Tensor) and arg.requires_grad for arg in args):
            return outputs
        return _delayed_error("trying to differentiate twice a function that was marked with "
                              "@once_differentiable",
                              outputs if isinstance(outputs, tuple) else (outputs,))

    return wrapper


# -- issue 28, helper funcs: NestedIOFunction ---------------------------------------------------

def _nested_tensors(obj: Any) -> Any:
    """The tensors of a nest of lists, tuples and dicts, depth first; None is skipped."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, list | tuple):
        for item in obj:
            yield from _nested_tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _nested_tensors(item)
    elif obj is not None:
        raise ValueError(f"Auto nesting doesn't know how to process an input object of type "
                         f"{_typename(obj)}. Accepted types: Tensors, or lists/tuples of them")


def _typename(obj: Any) -> str:
    return typename(obj)


def _nest_like(flat: Any, proto: Any) -> Any:
    """`flat`'s items laid out in the nest of lists and tuples of `proto` (None stays None)."""
    def fill(items: Any, shape: Any) -> tuple[Any, Any]:
        if not isinstance(shape, list | tuple):
            return items[0], items[1:]
        filled = []
        for part in shape:
            if part is None:
                filled.append(None)
                continue
            value, items = fill(items, part)
            filled.append(value)
        return type(shape)(filled), items

    return fill(flat, proto)[0]


def _nested_data(obj: Any) -> Any:
    """The nest with every tensor replaced by its data (a tensor without history)."""
    if isinstance(obj, Tensor):
        return obj.data
    if isinstance(obj, list | tuple):
        return type(obj)(_nested_data(item) for item in obj)
    return obj


class NestedIOFunction(Function):
    """The legacy Function whose inputs and outputs may be nested lists and tuples of
    tensors, kept, as in torch, only so that old code still imports. Subclasses write
    `forward_extended` and `backward_extended`; calling an instance reaches the removed legacy
    machinery and fails as torch's does."""

    def _do_forward(self, *input: Any) -> Any:
        self._nested_input = input
        flat_output = super()._do_forward(*_nested_tensors(input))  # type: ignore[misc]
        return _nest_like(flat_output, self._nested_output)

    def _do_backward(self, gradients: Any, retain_variables: bool) -> Any:
        self.retain_variables = retain_variables
        result = super()._do_backward(gradients, retain_variables)  # type: ignore[misc]
        if not retain_variables:
            del self._nested_output
            del self._to_save_nested
        return result

    __call__ = _do_forward

    def forward(self, *args: Any) -> Any:  # type: ignore[override]
        """Run forward_extended on the data of the nested inputs; the flat output tensors."""
        nested = _nested_data(self._nested_input)
        result = self.forward_extended(*nested)
        del self._nested_input
        self._nested_output = result
        return tuple(_nested_tensors(result))

    def backward(self, *gradients: Any) -> Any:  # type: ignore[override]
        """Run backward_extended on the gradients laid out as the outputs were."""
        result = self.backward_extended(*_nest_like(gradients, self._nested_output))
        return tuple(_nested_or_none(result))

    def save_for_backward(self, *args: Any) -> None:
        self.to_save = tuple(_nested_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self) -> Any:
        """The saved tensors, nested as given; an instance outside the engine has none."""
        return _nest_like((), self._to_save_nested)

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        self.dirty_tensors = tuple(_nested_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        self.non_differentiable = tuple(_nested_tensors((args, kwargs)))

    def forward_extended(self, *input: Any) -> None:
        """The user's forward, on nested inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        """The user's backward, on gradients nested as the outputs."""
        raise NotImplementedError


def _nested_or_none(obj: Any) -> Any:
    if obj is None or isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, list | tuple):
        for item in obj:
            yield from _nested_or_none(item)
    else:
        raise ValueError(f"Auto nesting doesn't know how to process an input object of type "
                         f"{_typename(obj)}. Accepted types: Tensors, or lists/tuples of them")


__all__ += ["NestedIOFunction"]
# -- end of funcs' block ------------------------------------------------------------------------
