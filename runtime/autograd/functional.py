"""`runtime.autograd.functional`: vjp, jvp, jacobian, hessian, vhp and hvp, as in torch.

Everything here is reverse mode but `jacobian(..., strategy="forward-mode")`, which uses
runtime.autograd.forward_ad. A Jacobian-vector product uses the double-backward trick
(the VJP is linear in its cotangent u, so differentiating <VJP(u), v> with respect to u
gives J v), exactly as torch.autograd.functional does by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from runtime.autograd import grad as _grad
from runtime.grad_mode import enable_grad
from runtime.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(was it a tuple, the tensors as a tuple), with torch's type errors."""
    is_tuple = isinstance(value, tuple | list)
    values = tuple(value) if is_tuple else (value,)
    for i, item in enumerate(values):
        if not isinstance(item, Tensor):
            where = f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
            if is_tuple:
                raise TypeError(f"{where}Tensors but the value at index {i} has type "
                                f"{type(item)}.")
            raise TypeError(f"{where}Tensors but the given {arg_name} has type {type(item)}.")
    return is_tuple, values


def _tuple_postprocess(result: Any, is_tuple: bool | tuple[bool, bool]) -> Any:
    """Undo _as_tuple on the result: a single tensor when the user gave one."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            result = tuple(r[0] for r in result)
        if not outer:
            result = result[0]
        return result
    return result if is_tuple else result[0]


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh inputs for the user's function: detached, or viewed to keep their graph."""
    result = []
    for tensor in inputs:
        if create_graph and tensor.requires_grad:
            result.append(tensor.view_as(tensor))
        else:
            result.append(tensor.detach().requires_grad_(need_graph))
    return tuple(result)


def _grad_postprocess(values: tuple, create_graph: bool) -> tuple:
    if isinstance(values[0], tuple):
        return tuple(_grad_postprocess(v, create_graph) for v in values)
    if create_graph:
        return values
    return tuple(v.detach() if v is not None else None for v in values)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.shape != el_other.shape:
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be "
                               f"torch.Size({list(el_other.shape)}) but got "
                               f"torch.Size({list(el_v.shape)}).")


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not value.requires_grad:
            if kind == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect "
                                   f"to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your "
                                   "function is thrice differentiable and that the hessian "
                                   "depends on the inputs.")
            if kind == "jacobian":
                raise RuntimeError(f"While computing the hessian, found that the jacobian of "
                                   f"the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict "
                                   "mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the "
                                   "inputs (this would be violated by a linear function for "
                                   "example).")
            if kind == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent "
                                   "of the inputs of the user-provided function. This is "
                                   "not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """autograd.grad that tolerates outputs which don't require grad (their grad is None)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    keep = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o is not None
            and o.requires_grad]
    if not keep:
        return (None,) * len(inputs)
    outs, grads = zip(*keep, strict=True)
    return _grad(outs, inputs, grads, retain_graph=retain_graph, create_graph=create_graph,
                 allow_unused=True)


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                   stage: str) -> tuple:
    from runtime import zeros_like

    result = []
    for i, (grad, ref) in enumerate(zip(grads, refs, strict=True)):
        if grad is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       "strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent "
                                       f"of entry {i} in the grad_outputs when using the double "
                                       "backward trick to compute forward mode gradients. This "
                                       "is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       "strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent "
                                   f"of entry {i} in the grad_jacobian. This is not allowed in "
                                   "strict mode as it prevents from using the double backward "
                                   "trick to replace forward mode AD.")
            grad = zeros_like(ref)
        result.append(grad)
    return tuple(result)


def _ones_for_scalar(outputs: tuple) -> tuple:
    from runtime import ones_like

    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the user-provided function "
                           "returns a single Tensor with a single element.")
    return (ones_like(outputs[0]),)


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """(func(inputs), vᵀ J): the vector-Jacobian product at `inputs`."""
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
        else:
            v_t = _ones_for_scalar(outputs_t)
        grads = _autograd_grad(outputs_t, inputs_t, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs_t, strict, create_graph, "back")
    outputs_t = _grad_postprocess(outputs_t, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs_t, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    from runtime import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jvp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        if v is not None:
            _, v_t = _as_tuple(v, "v", "jvp")
            v_t = _grad_preprocess(v_t, create_graph, need_graph=False)
            _validate_v(v_t, inputs_t, is_inputs_tuple)
        else:
            if len(inputs_t) != 1 or inputs_t[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            from runtime import ones_like

            v_t = (ones_like(inputs_t[0]),)
        outputs = func(*inputs_t)
        is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided "
                                                         "function", "jvp")
        _check_requires_grad(outputs_t, "outputs", strict)
        # u is a dummy cotangent: the VJP is linear in it, so d<VJP(u), v>/du = J v.
        grad_outputs = tuple(zeros_like(o).requires_grad_(True) for o in outputs_t)
        grad_inputs = _autograd_grad(outputs_t, inputs_t, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        if create_graph:
            with enable_grad():
                grad_res = _autograd_grad(grad_inputs, grad_outputs, v_t, create_graph=True)
                jvp_t = _fill_in_zeros(grad_res, outputs_t, strict, create_graph, "back_trick")
        else:
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v_t, create_graph=False)
            jvp_t = _fill_in_zeros(grad_res, outputs_t, strict, create_graph, "back_trick")
    outputs_t = _grad_postprocess(outputs_t, create_graph)
    jvp_t = _grad_postprocess(jvp_t, create_graph)
    return (_tuple_postprocess(outputs_t, is_outputs_tuple),
            _tuple_postprocess(jvp_t, is_outputs_tuple))


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian: one reverse pass per output element (vectorize=False's loop), or with
    strategy="forward-mode" one forward-mode pass per input element."""
    from runtime import stack, zeros

    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                         "Hint: If your function has a large number of outputs, reverse-mode "
                         "is likely more efficient.")
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict)
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jacobian")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        outputs = func(*inputs_t)
        is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided "
                                                         "function", "jacobian")
        _check_requires_grad(outputs_t, "outputs", strict)
        jacobian_rows: list[tuple] = []
        for i, out in enumerate(outputs_t):
            per_input: list[list] = [[] for _ in inputs_t]
            flat = out.reshape(-1)
            for j in range(flat.shape[0]):
                row = _autograd_grad((flat[j],), inputs_t, retain_graph=True,
                                     create_graph=create_graph)
                for k, (grad_k, input_k) in enumerate(zip(row, inputs_t, strict=True)):
                    if grad_k is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               "allowed in strict mode.")
                        grad_k = zeros(input_k.shape, dtype=input_k.dtype)
                    per_input[k].append(grad_k)
            blocks = []
            for k, grads in enumerate(per_input):
                shape = tuple(out.shape) + tuple(inputs_t[k].shape)
                if grads:
                    blocks.append(stack(grads).view(shape))
                else:  # an output with no elements
                    blocks.append(zeros(shape, dtype=inputs_t[k].dtype))
            jacobian_rows.append(tuple(blocks))
    jacobian_rows = _grad_postprocess(tuple(jacobian_rows), create_graph)
    return _tuple_postprocess(tuple(jacobian_rows), (is_outputs_tuple, is_inputs_tuple))


def _jacobian_forward(func: Callable, inputs: Any, strict: bool) -> Any:
    """The Jacobian one forward-mode pass per input element: each gives a column.

    torch builds the columns in one vmapped pass (vectorize=True); gradgen loops, whatever
    `vectorize` says, and gets the same result.
    """
    from runtime import stack, zeros
    from runtime.autograd import forward_ad

    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "jacobian")
    inputs_t = tuple(t.detach() for t in inputs_t)
    columns: list[list[list]] = []  # [input][element] -> the tangent of every output
    outputs_t: tuple = ()
    is_outputs_tuple = False
    for k, input_k in enumerate(inputs_t):
        columns.append([])
        for j in range(input_k.numel()):
            tangent = zeros(input_k.shape, dtype=input_k.dtype)
            tangent._data.reshape(-1)[j] = 1
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(t, tangent) if i == k else t
                              for i, t in enumerate(inputs_t))
                is_outputs_tuple, outputs_t = _as_tuple(
                    func(*duals), "outputs of the user-provided function", "jacobian")
                unpacked = [forward_ad.unpack_dual(o) for o in outputs_t]
                outputs_t = tuple(primal.detach() for primal, _ in unpacked)
                columns[k].append([t.detach() if t is not None
                                   else zeros(o.shape, dtype=o.dtype)
                                   for (_, t), o in zip(unpacked, outputs_t, strict=True)])
    if not any(columns):  # no input has an element: run func once for the outputs
        is_outputs_tuple, outputs_t = _as_tuple(
            func(*inputs_t), "outputs of the user-provided function", "jacobian")
    jacobian_rows = []
    for i, out in enumerate(outputs_t):
        blocks = []
        for k, input_k in enumerate(inputs_t):
            shape = tuple(out.shape) + tuple(input_k.shape)
            if columns[k]:  # the columns stacked last, as J[output index][input index]
                block = stack([column[i].reshape(-1) for column in columns[k]], 1)
                blocks.append(block.reshape(shape))
            else:
                blocks.append(zeros(shape, dtype=input_k.dtype))
        jacobian_rows.append(tuple(blocks))
    return _tuple_postprocess(tuple(jacobian_rows), (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "hessian")

    def ensure_single_output(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, out_t = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(out_t, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp: Tensor) -> tuple:
        jac = jacobian(ensure_single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    result = jacobian(jac_func, inputs_t, create_graph=create_graph, strict=strict)
    return _tuple_postprocess(result, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func: Callable, inputs_t: tuple, fn_name: str, strict: bool) -> Tensor:
    outputs = func(*inputs_t)
    is_outputs_tuple, outputs_t = _as_tuple(outputs, "outputs of the user-provided function",
                                            fn_name)
    _check_requires_grad(outputs_t, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return outputs


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """(func(inputs), vᵀ H) for a scalar function."""
    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "vhp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        v_t = _hessian_v(v, inputs_t, is_inputs_tuple, create_graph, "vhp")
        outputs = _scalar_output(func, inputs_t, "vhp", strict)
        jac = _autograd_grad((outputs,), inputs_t, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_res = _autograd_grad(jac, inputs_t, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs_t, strict, create_graph, "double_back")
    outputs_t = _grad_postprocess((outputs,), create_graph)
    result = _grad_postprocess(result, create_graph)
    return outputs_t[0], _tuple_postprocess(result, is_inputs_tuple)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """(func(inputs), H v) for a scalar function, by the double-backward trick."""
    from runtime import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "hvp")
        inputs_t = _grad_preprocess(inputs_t, create_graph, need_graph=True)
        v_t = _hessian_v(v, inputs_t, is_inputs_tuple, create_graph, "hvp")
        outputs = _scalar_output(func, inputs_t, "hvp", strict)
        jac = _autograd_grad((outputs,), inputs_t, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(t).requires_grad_(True) for t in inputs_t)
        double_back = _autograd_grad(jac, inputs_t, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        grad_res = _autograd_grad(double_back, grad_jac, v_t, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs_t, strict, create_graph, "double_back_trick")
    outputs_t = _grad_postprocess((outputs,), create_graph)
    result = _grad_postprocess(result, create_graph)
    return outputs_t[0], _tuple_postprocess(result, is_inputs_tuple)


def _hessian_v(v: Any, inputs_t: tuple, is_inputs_tuple: bool, create_graph: bool,
               fn_name: str) -> Sequence:
    if v is not None:
        _, v_t = _as_tuple(v, "v", fn_name)
        v_t = _grad_preprocess(v_t, create_graph, need_graph=False)
        _validate_v(v_t, inputs_t, is_inputs_tuple)
        return v_t
    if len(inputs_t) != 1 or inputs_t[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    from runtime import ones_like

    return (ones_like(inputs_t[0]),)
