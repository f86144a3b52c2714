"""gradcheck and gradgradcheck with torch's signatures: analytical Jacobians from backward
(and, with check_forward_ad, from forward mode), numerical ones from central differences,
compared element by element.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from runtime.autograd import grad as _grad
from runtime.tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(value: Any) -> tuple:
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def _differentiable_inputs(inputs: tuple) -> list[tuple[int, Tensor]]:
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func: Callable, inputs: tuple) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _numerical_jacobian(func: Callable, inputs: tuple, index: int, output_index: int,
                        eps: float) -> np.ndarray:
    """d output / d input by central differences: shape (input numel, output numel)."""
    target = inputs[index]
    flat = target._data.reshape(-1)
    if not np.shares_memory(flat, target._data):
        raise GradcheckError("gradcheck needs contiguous inputs")
    columns = []
    # Grad mode stays on: gradgradcheck's function computes gradients itself.
    for k in range(flat.size):
        original = flat[k]
        flat[k] = original + eps
        plus = _outputs(func, inputs)[output_index]._data.astype(np.float64).copy()
        flat[k] = original - eps
        minus = _outputs(func, inputs)[output_index]._data.astype(np.float64).copy()
        flat[k] = original
        columns.append(((plus - minus) / (2 * eps)).reshape(-1))
    size = _outputs(func, inputs)[output_index].numel()
    return np.array(columns).reshape(flat.size, size)


def _analytical_jacobian(func: Callable, inputs: tuple, index: int,
                         output_index: int) -> np.ndarray:
    """d output / d input from backward with one-hot cotangents, in the same layout."""
    from runtime import zeros_like

    target = inputs[index]
    output = _outputs(func, inputs)[output_index]
    jac = np.zeros((target.numel(), output.numel()))
    flat_size = output.numel()
    for k in range(flat_size):
        v = zeros_like(output)
        v._data.reshape(-1)[k] = 1.0
        (g,) = _grad(output, target, v, retain_graph=True, allow_unused=True)
        if g is not None:
            jac[:, k] = g._data.reshape(-1)
    return jac


def _forward_jacobian(func: Callable, inputs: tuple, index: int,
                      output_index: int) -> np.ndarray:
    """d output / d input from forward mode with one-hot tangents, in the same layout."""
    from runtime import zeros_like
    from runtime.autograd import forward_ad

    target = inputs[index]
    rows = []
    for k in range(target.numel()):
        tangent = zeros_like(target).detach()
        tangent._data.reshape(-1)[k] = 1.0
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(target, tangent)
            output = _outputs(func, inputs[:index] + (dual,) + inputs[index + 1:])[output_index]
            result = forward_ad.unpack_dual(output).tangent
            rows.append(np.zeros(output.numel()) if result is None
                        else result._data.reshape(-1).astype(np.float64))
    return np.array(rows).reshape(target.numel(), -1)


def _format(array: np.ndarray) -> str:
    from runtime import tensor

    return repr(tensor(array))


def gradcheck(
    func: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check the backward of `func` at `inputs` against central differences, and with
    check_forward_ad its forward mode (the Jacobian from JVPs) too.

    Returns True, or raises GradcheckError naming the output and input whose Jacobians
    differ, with both Jacobians (as torch.autograd.gradcheck does).
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    inputs_t = _as_tuple(inputs)
    wanted = _differentiable_inputs(inputs_t)
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    for i, t in wanted:
        if t.dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", stacklevel=2)
    outputs = _outputs(func, inputs_t)
    try:
        for o_index, output in enumerate(outputs):
            if not output.requires_grad:
                continue
            for i, _ in wanted:
                numerical = _numerical_jacobian(func, inputs_t, i, o_index, eps)
                modes = [("", _analytical_jacobian)] if check_backward_ad else []
                if check_forward_ad:
                    modes.append(("computed with forward mode ", _forward_jacobian))
                for mode, jacobian in modes:
                    analytical = jacobian(func, inputs_t, i, o_index)
                    if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                        raise GradcheckError(
                            f"Jacobian {mode}mismatch for output {o_index} with respect to "
                            f"input {i},\nnumerical:{_format(numerical)}\n"
                            f"analytical:{_format(analytical)}\n"
                        )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable,
    inputs: Any,
    grad_outputs: Sequence[Tensor] | Tensor | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of the first-order gradients: checks the backward of the backward.

    The cotangents of the outputs (random unless `grad_outputs` is given) are inputs of
    the checked function too, so the formulas' linearity in `grad` is checked as well.
    """
    from runtime import randn_like

    inputs_t = _as_tuple(inputs)
    outputs = _outputs(func, inputs_t)
    if grad_outputs is None:
        grad_outputs_t = tuple(
            randn_like(o, dtype=o.dtype).requires_grad_(True) for o in outputs
            if o.requires_grad
        )
    else:
        grad_outputs_t = tuple(g.detach().requires_grad_(True) for g in _as_tuple(grad_outputs))
    count = len(inputs_t)
    wanted = [i for i, _ in _differentiable_inputs(inputs_t)]

    def first_order(*all_inputs: Any) -> tuple:
        primal, cotangents = all_inputs[:count], all_inputs[count:]
        outs = [o for o in _outputs(func, primal) if o.requires_grad]
        grads = _grad(outs, [primal[i] for i in wanted], cotangents, create_graph=True,
                      allow_unused=True)
        from runtime import zeros_like

        return tuple(g if g is not None else zeros_like(primal[i]) for g, i in
                     zip(grads, wanted, strict=True))

    return gradcheck(first_order, inputs_t + grad_outputs_t, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
