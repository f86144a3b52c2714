"""`runtime.autograd.functional`: vjp, jvp, jacobian, hessian, vhp and hvp, as in torch.

Everything here is reverse mode but `jacobian(..., strategy="forward-mode")`, which uses
runtime.autograd.forward_ad. A Jacobian-vector product uses the double-backward trick
(the VJP is linear in its cotangent u, so differentiating <VJP(u), v> with respect to u
gives J v), as torch.autograd.functional.jvp and hvp do.

The results have torch's structure: a Tensor where the user gave a Tensor, a tuple where
they gave a tuple (only a tuple: a list is a type error, as in torch), and for jacobian
and hessian a tuple (per output, or per input) of tuples (per input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generated.ops import stack
from runtime._tensor import Tensor
from runtime.autograd import forward_ad
from runtime.autograd.gradients import grad as _grad
from runtime.factories import zeros, zeros_like
from runtime.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# -- inputs, outputs and v ------------------------------------------------------------------

def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(was it a tuple, its tensors as a tuple); anything but Tensors is a TypeError."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, item in enumerate(values):
        if not isinstance(item, Tensor):
            what = (f"value at index {i}" if is_tuple else f"given {arg_name}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {what} has type {type(item)}.")
    return is_tuple, values


def _tuple_postprocess(result: tuple, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Undo _as_tuple on a result; (outer, inner) undoes it on a tuple of tuples."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the user's function.

    Always new objects, so that a gradient with respect to them is not confused with one
    with respect to the same tensors captured by the function's closure. With
    `create_graph` an input that requires grad stays connected to its graph (a view of
    it), so that the result can be differentiated with respect to the caller's tensors.
    """
    return tuple(
        t.view_as(t) if create_graph and t.requires_grad
        else t.detach().requires_grad_(need_graph)
        for t in inputs
    )


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    """Detach the results (nested tuples too) unless the caller asked for a graph."""
    if not isinstance(values[0], Tensor):
        return tuple(_grad_postprocess(v, create_graph) for v in values)
    return values if create_graph else tuple(v.detach() for v in values)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    """v must have one tensor per tensor of `other`, each of the same shape."""
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.shape != el_other.shape:
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.shape} but "
                               f"got {el_v.shape}.")


def _v_or_none(v: Any, reference: tuple, is_reference_tuple: bool, create_graph: bool,
               fn_name: str) -> tuple | None:
    """v as a tuple checked against the input tensors, or None for a one-element input."""
    if v is not None:
        _, v_t = _as_tuple(v, "v", fn_name)
        v_t = _grad_preprocess(v_t, create_graph, need_graph=False)
        _validate_v(v_t, reference, is_reference_tuple)
        return v_t
    if len(reference) != 1 or reference[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return None


def _single_output(outputs: Any, fn_name: str, strict: bool) -> tuple:
    """The outputs of a function that hessian, vhp and hvp need to be a scalar."""
    is_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs_t, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs_t[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return outputs_t


# -- strict mode ----------------------------------------------------------------------------

def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    """In strict mode, every value must exist and depend on the inputs.

    `kind` says what the values are ("outputs", "grad_inputs", "jacobian" or "hessian"),
    for the message.
    """
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:  # only a gradient can be missing
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if value.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to "
                               f"input {i} is independent of the input. This is not allowed "
                               "in strict mode. You should ensure that your function is thrice "
                               "differentiable and that the hessian depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the "
                               f"user-provided function with respect to input {i} is "
                               "independent of the input. This is not allowed in strict mode. "
                               "You should ensure that your function is twice differentiable "
                               "and that the jacobian depends on the inputs (this would be "
                               "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the "
                               "inputs of the user-provided function. This is not allowed in "
                               "strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require "
                           "gradients. The outputs must be computed in a differentiable manner "
                           "from the input when running in strict mode.")


# Which gradient a missing (None) result was, for the strict-mode message.
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    """Zeros (shaped like `refs`) for the gradients autograd left undefined.

    In strict mode an undefined gradient is an error instead, and so is, with
    `create_graph`, a gradient that does not depend on the inputs (the function is linear
    for a first derivative, at most quadratic for a second one).
    """
    result = []
    for i, (grad, ref) in enumerate(zip(grads, refs, strict=True)):
        if grad is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            grad = zeros_like(ref)
        elif strict and create_graph and not grad.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        result.append(grad)
    return tuple(result)


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """autograd.grad that skips outputs which are None or don't require grad.

    Gradients of inputs that nothing reaches are None; with no differentiable output at
    all, every gradient is None.
    """
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(out, g) for out, g in zip(outputs, grad_outputs, strict=True)
            if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    outs, grads = zip(*kept, strict=True)
    return _grad(outs, inputs, grads, retain_graph=retain_graph, create_graph=create_graph,
                 allow_unused=True)


def _last_backward_mode(create_graph: bool) -> set_grad_enabled:
    """The grad mode of a last backward pass: the caller's, unless a graph is wanted."""
    return set_grad_enabled(create_graph or is_grad_enabled())


# -- the public functions -------------------------------------------------------------------

def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), vᵀ J): the vector-Jacobian product at `inputs`, shaped like inputs.

    `v` may be None only when func returns a single one-element Tensor (v is then 1).
    """
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "vjp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        outputs = func(*inputs_t)
        is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided "
                                                         "function", "vjp")
        _check_requires_grad(outputs_t, "outputs", strict)
        if v is not None:
            _, v_t = _as_tuple(v, "v", "vjp")
            v_t = _grad_preprocess(v_t, create_graph, need_graph=False)
            _validate_v(v_t, outputs_t, is_outputs_tuple)
        elif len(outputs_t) != 1 or outputs_t[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        else:
            v_t = None
    with _last_backward_mode(create_graph):
        grads = _autograd_grad(outputs_t, inputs_t, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs_t, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs_t, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v): the Jacobian-vector product, shaped like the outputs.

    Computed by the double-backward trick. `v` may be None only for a single one-element
    input (v is then 1).
    """
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jvp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        v_t = _v_or_none(v, inputs_t, is_inputs_tuple, create_graph, "jvp")
        outputs = func(*inputs_t)
        is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided "
                                                         "function", "jvp")
        _check_requires_grad(outputs_t, "outputs", strict)
        # A dummy cotangent u: the backward is linear in u, so its value never matters
        # (zeros, to keep inf and nan out), only its being differentiable.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs_t)
        grad_inputs = _autograd_grad(outputs_t, inputs_t, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with _last_backward_mode(create_graph):
        grads = _autograd_grad(grad_inputs, grad_outputs, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs_t, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs_t, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_outputs_tuple))


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of func at inputs: block [i][j] has shape outputs[i].shape + inputs[j].shape.

    Reverse mode computes it row by row, one backward pass per output element, forward
    mode column by column, one forward-mode pass per input element. `vectorize=True`
    (torch batches those passes with vmap, which gradgen does not have) computes the same
    rows or columns one at a time; like torch, it refuses `strict=True`.
    """
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             "Hint: If your function has more outputs than inputs, "
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_columns(func, inputs, strict)
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jacobian")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        outputs = func(*inputs_t)
        is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided "
                                                         "function", "jacobian")
        _check_requires_grad(outputs_t, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        blocks = tuple(_jacobian_rows(i, out, inputs_t, create_graph, strict)
                       for i, out in enumerate(outputs_t))
    blocks = _grad_postprocess(blocks, create_graph)
    return _tuple_postprocess(blocks, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(index: int, output: Tensor, inputs: tuple, create_graph: bool,
                   strict: bool) -> tuple:
    """The Jacobian blocks of one output: a backward pass per element of it, stacked."""
    rows: list[list[Tensor]] = [[] for _ in inputs]
    flat = output.reshape(-1)
    for j in range(output.numel()):
        grads = _autograd_grad((flat[j],), inputs, retain_graph=True,
                               create_graph=create_graph)
        for k, (grad, inp) in enumerate(zip(grads, inputs, strict=True)):
            if grad is None:
                if strict:
                    raise RuntimeError(f"Output {index} of the user-provided function is "
                                       f"independent of input {k}. This is not allowed in "
                                       "strict mode.")
                grad = zeros_like(inp)
            elif strict and create_graph and not grad.requires_grad:
                # torch names the output's index here, though it says "input".
                raise RuntimeError("The jacobian of the user-provided function is independent "
                                   f"of input {index}. This is not allowed in strict mode "
                                   "when create_graph=True.")
            rows[k].append(grad)
    # Like torch, an output without elements fails here (stack of no tensors).
    return tuple(stack(rows_k).view(output.shape + inp.shape)
                 for rows_k, inp in zip(rows, inputs, strict=True))


def _jacobian_columns(func: Callable[..., Any], inputs: Any, strict: bool) -> Any:
    """The Jacobian in forward mode: input element j of input k, as a tangent, gives the
    column of every output block [i][k]."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jacobian")
    inputs_t = tuple(t.detach() for t in inputs_t)
    columns: list[list[tuple]] = [[] for _ in inputs_t]  # [k][j]: the outputs' tangents
    for k, input_k in enumerate(inputs_t):
        for j in range(input_k.numel()):
            tangent = zeros_like(input_k)
            tangent._data.reshape(-1)[j] = 1
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(t, tangent) if i == k else t
                              for i, t in enumerate(inputs_t))
                is_outputs_tuple, outputs_t = _as_tuple(
                    func(*duals), "outputs of the user-provided function", "jacobian")
                unpacked = [forward_ad.unpack_dual(o) for o in outputs_t]
                columns[k].append(tuple(zeros_like(o) if t is None else t.detach()
                                        for o, (_, t) in zip(outputs_t, unpacked, strict=True)))
                outputs_t = tuple(primal.detach() for primal, _ in unpacked)
    if not any(columns):  # no input element to be a tangent: run func once for the outputs
        is_outputs_tuple, outputs_t = _as_tuple(
            func(*inputs_t), "outputs of the user-provided function", "jacobian")
    blocks = []
    for i, output in enumerate(outputs_t):
        row = []
        for k, input_k in enumerate(inputs_t):
            shape = output.shape + input_k.shape
            if columns[k]:
                row.append(stack([c[i].reshape(-1) for c in columns[k]], 1).reshape(shape))
            else:
                row.append(zeros(shape, dtype=output.dtype))  # an input without elements
        blocks.append(tuple(row))
    return _tuple_postprocess(tuple(blocks), (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient.

    Block [i][j] has shape inputs[i].shape + inputs[j].shape.
    """
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp: Tensor) -> Tensor:
        (out,) = _single_output(func(*inp), "hessian", strict)
        return out.squeeze()

    def gradient(*inp: Tensor) -> tuple:
        if outer_jacobian_strategy == "forward-mode":
            # The inner jacobian keeps its inputs' graph only if they require grad.
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs_t, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(result, (is_inputs_tuple, is_inputs_tuple))


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """(func(inputs), vᵀ H) for a function returning a single one-element Tensor."""
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "vhp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        v_t = _v_or_none(v, inputs_t, is_inputs_tuple, create_graph, "vhp")
        outputs_t = _single_output(func(*inputs_t), "vhp", strict)
        jac = _autograd_grad(outputs_t, inputs_t, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with _last_backward_mode(create_graph):
        grads = _autograd_grad(jac, inputs_t, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs_t, strict, create_graph, "double_back")
    return (_grad_postprocess(outputs_t, create_graph)[0],
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """(func(inputs), H v) for a function returning a single one-element Tensor.

    By the double-backward trick on the gradient, so slower than vhp (equal to it when
    the function is twice continuously differentiable, H being symmetric).
    """
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "hvp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        v_t = _v_or_none(v, inputs_t, is_inputs_tuple, create_graph, "hvp")
        outputs_t = _single_output(func(*inputs_t), "hvp", strict)
        jac = _autograd_grad(outputs_t, inputs_t, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(t, requires_grad=True) for t in inputs_t)
        double_back = _autograd_grad(jac, inputs_t, grad_jac, create_graph=True)
    with _last_backward_mode(create_graph):
        grads = _autograd_grad(double_back, grad_jac, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs_t, strict, create_graph, "double_back_trick")
    return (_grad_postprocess(outputs_t, create_graph)[0],
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))
