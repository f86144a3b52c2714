"""gradcheck and gradgradcheck with torch's signatures, checks and failure messages.

gradcheck compares, for every output that requires grad and every input that requires
grad, the Jacobian that backward computes (row by row, one basis cotangent at a time)
with the one central differences give (column by column, perturbing one input element at
a time in place). Jacobians are laid out as torch lays them out: one row per input
element, one column per output element. Indices in messages count the outputs and the
inputs that require grad, as torch's do.

`fast_mode=True` compares vᵀ J u instead, for random unit vectors u and v (torch's fast
gradcheck), and on a mismatch recomputes the full Jacobians for the message.
`check_forward_ad=True` also compares the Jacobian forward mode computes (column by column,
one basis tangent at a time), in full whatever `fast_mode` says.

Not in gradgen (they need vmap): `check_batched_grad`, `check_batched_forward_grad`;
asking for them raises NotImplementedError. Complex and sparse tensors do not exist here,
so `masked` has no effect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from generated.ops import stack
from runtime import engine
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.autograd import forward_ad
from runtime.autograd.gradients import grad as _grad
from runtime.factories import eye, tensor, zeros, zeros_like
from runtime.grad_mode import no_grad
from runtime.node import gradient_edge
from runtime.random_ops import rand_like

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(value: Any) -> tuple:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _differentiable_outputs(outputs: Any) -> tuple:
    return tuple(o for o in _as_tuple(outputs) if o.requires_grad)


def _differentiable_inputs(inputs: tuple) -> list[tuple[int, Tensor]]:
    """(position, tensor) of each input that requires grad."""
    return [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _check_inputs(inputs: tuple) -> None:
    """Warn about single precision, refuse overlapping memory and nothing to check."""
    wanted = _differentiable_inputs(inputs)
    for i, x in wanted:
        if x.dtype.name != "float64":
            warn_at_caller(f"Input #{i} requires gradient and is not a double precision floating "
                           "point or complex. This check will likely fail if all the inputs are "
                           "not of double precision floating point or complex. ")
        # A stride-0 dimension (an expanded tensor) makes one perturbation move several
        # elements at once.
        if any(stride == 0 and size > 1
               for stride, size in zip(np.asarray(x.detach()).strides, x.shape, strict=True)):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only "
                               "supports inputs that are non-overlapping to be able to compute "
                               "the numerical gradients correctly. You should call .contiguous "
                               "on the input before passing it to gradcheck.")
    if not wanted:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


# -- numerical derivatives ------------------------------------------------------------------

def _central_difference(func: Callable, inputs: tuple, entry: Tensor, delta: Any, eps: float,
                        where: str) -> list[Tensor]:
    """(func(x + delta) - func(x - delta)) / 2eps per output, flattened, for a perturbation
    written in place into `entry` (a view of an input's storage, outside autograd)."""
    original = entry.clone()
    entry.copy_(original - delta)
    before = [o.clone() for o in _as_tuple(func(*inputs))]
    entry.copy_(original + delta)
    after = [o.clone() for o in _as_tuple(func(*inputs))]
    entry.copy_(original)
    result = []
    for a, b in zip(before, after, strict=True):
        for what, got_a, got_b in (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)):
            if got_a != got_b:
                raise AssertionError(f"Expected `func` to return outputs with the same {what} "
                                     f"when inputs are perturbed {where}by {eps}, but got: "
                                     f"{what}s {got_a} and {got_b}.")
        result.append(((b - a) / (2 * eps)).detach().reshape(-1))
    return result


def _numerical_jacobians(func: Callable, inputs: tuple, func_out: tuple,
                         eps: float) -> list[list[Tensor | None]]:
    """[input][output] Jacobians by central differences, for every input that requires
    grad and every output of `func_out` (None for one that is not floating point): shape
    (input numel, output numel), in the output's dtype."""
    jacobians = []
    for _, x in _differentiable_inputs(inputs):
        data = x.data  # the same storage, outside autograd and its version counter
        rows = [_central_difference(func, inputs, data[idx], eps, eps, f"on index {idx} ")
                for idx in np.ndindex(*x.shape)]
        jacobians.append([
            None if not out.is_floating_point()
            else stack([row[k] for row in rows]) if rows
            else zeros(0, out.numel(), dtype=out.dtype)
            for k, out in enumerate(func_out)
        ])
    return jacobians


# -- analytical derivatives -----------------------------------------------------------------

def _vjps(output: Tensor, inputs: list[Tensor], cotangents: Sequence[Tensor]) -> list[Tensor]:
    """[input] matrices whose column k is cotangents[k]ᵀ J, from backward (zeros for an
    input it does not reach)."""
    columns: list[list[Tensor]] = [[] for _ in inputs]
    for v in cotangents:
        grads = _grad(output, inputs, v, retain_graph=True, allow_unused=True)
        for column, g, x in zip(columns, grads, inputs, strict=True):
            if g is not None and g.shape != x.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            column.append(zeros_like(x).reshape(-1) if g is None else g.reshape(-1))
    return [stack(column, dim=1) if column else zeros(x.numel(), 0, dtype=x.dtype)
            for column, x in zip(columns, inputs, strict=True)]


def _analytical_vjps(output: Tensor, inputs: list[Tensor], cotangents: Sequence[Tensor],
                     nondet_tol: float, check_grad_dtypes: bool) -> list[Tensor]:
    """_vjps, computed twice: backward must give the same result each time (reentrancy)."""
    first = _vjps(output, inputs, cotangents)
    second = _vjps(output, inputs, cotangents)
    if check_grad_dtypes and any(j.dtype != x.dtype for j, x in zip(first, inputs, strict=True)):
        raise GradcheckError("Gradient has dtype mismatch")
    for a, b in zip(first, second, strict=True):
        if a.numel() and float((a - b).abs().max()) > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}.")
    return first


def _basis(output: Tensor) -> list[Tensor]:
    """The one-hot cotangents of `output`, one per element: the rows of its Jacobian."""
    identity = eye(output.numel(), dtype=output.dtype)
    return [identity[k].reshape(output.shape) for k in range(output.numel())]


def _allclose(a: Tensor, b: Tensor, rtol: float, atol: float) -> bool:
    """torch.allclose: |a - b| <= atol + rtol * |b| everywhere (nan never close)."""
    return bool(np.allclose(a.detach()._data, b.detach()._data, rtol=rtol, atol=atol))


def _is_zero(value: Tensor) -> bool:
    return not np.asarray(value.detach()).any()


def _text(value: Tensor) -> str:
    """A tensor as torch's f-strings show it: a 0-d one as its number."""
    return str(value.item()) if value.ndim == 0 else str(value)


def _mismatch(numerical: Tensor, analytical: Tensor, output: int, input_: int,
              mode: str = "") -> str:
    return (f"Jacobian {mode}mismatch for output {output:d} with respect to input "
            f"{input_:d},\n"
            f"numerical:{_text(numerical)}\nanalytical:{_text(analytical)}\n")


# -- slow and fast mode ---------------------------------------------------------------------

def _slow_gradcheck(func: Callable, func_out: tuple, inputs: tuple, eps: float, rtol: float,
                    atol: float, nondet_tol: float, check_grad_dtypes: bool) -> None:
    """Every Jacobian, element by element."""
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    checked = _checked_outputs(func_out)
    if not checked:
        # Nothing requires grad: the function must then be locally constant.
        if not all(n is None or _is_zero(n) for per_input in numerical for n in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    diff_inputs = [x for _, x in _differentiable_inputs(inputs)]
    for i, (k, out) in enumerate(checked):
        analytical = _analytical_vjps(out, diff_inputs, _basis(out), nondet_tol,
                                      check_grad_dtypes)
        for j, (a, per_input) in enumerate(zip(analytical, numerical, strict=True)):
            if not _allclose(a, per_input[k], rtol, atol):
                raise GradcheckError(_mismatch(per_input[k], a, i, j))


def _forward_jacobians(func: Callable, inputs: tuple,
                       func_out: tuple) -> list[list[Tensor | None]]:
    """[input][output] Jacobians from forward mode, laid out as _numerical_jacobians's: row
    k is the outputs' tangent when element k of the input has tangent 1, the others 0."""
    jacobians = []
    for position, x in _differentiable_inputs(inputs):
        rows = []
        for k in range(x.numel()):
            tangent = zeros_like(x).detach()
            tangent._data.reshape(-1)[k] = 1
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(x, tangent)
                outputs = _as_tuple(func(*inputs[:position], dual, *inputs[position + 1:]))
                rows.append([forward_ad.unpack_dual(o).tangent for o in outputs])
        jacobians.append([
            None if not out.is_floating_point()
            else stack([zeros(out.numel(), dtype=out.dtype) if row[i] is None
                        else row[i].detach().reshape(-1) for row in rows]) if rows
            else zeros(0, out.numel(), dtype=out.dtype)
            for i, out in enumerate(func_out)
        ])
    return jacobians


def _forward_gradcheck(func: Callable, func_out: tuple, inputs: tuple, eps: float,
                       rtol: float, atol: float) -> None:
    """Every Jacobian from forward mode against central differences, element by element."""
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    forward = _forward_jacobians(func, inputs, func_out)
    for i, (k, _) in enumerate(_checked_outputs(func_out)):
        for j, (n, f) in enumerate(zip(numerical, forward, strict=True)):
            if not _allclose(f[k], n[k], rtol, atol):
                raise GradcheckError(_mismatch(n[k], f[k], i, j, "computed with forward mode "))


def _checked_outputs(func_out: tuple) -> list[tuple[int, Tensor]]:
    """(position, output) of each output that requires grad: those gradcheck checks, and
    counts in its messages."""
    return [(k, out) for k, out in enumerate(func_out) if out.requires_grad]


def _random_unit_vector(like: Tensor, rng: np.random.Generator) -> Tensor:
    """Uniform in [0, 1), normalised, flat, of like's dtype."""
    vector = tensor(rng.random(like.numel()), dtype=like.dtype)
    return vector / vector.norm()


def _fast_gradcheck(func: Callable, func_out: tuple, inputs: tuple, eps: float, rtol: float,
                    atol: float, nondet_tol: float, check_grad_dtypes: bool) -> None:
    """vᵀ J u for random unit vectors u (per input) and v (per output): one directional
    difference per input, one backward per output. atol grows by sum(u) * sum(v), which is
    vᵀ E u for an error E of atol in every element."""
    rng = np.random.default_rng(0)  # its own generator: the user's random state stays put
    diff_inputs = [x for _, x in _differentiable_inputs(inputs)]
    all_u = [_random_unit_vector(x, rng) for x in diff_inputs]
    # J u by central differences along u, per input and per output of func_out
    all_ju = [_central_difference(func, inputs, x.data, u.reshape(x.shape) * eps, eps, "")
              for x, u in zip(diff_inputs, all_u, strict=True)]
    checked = _checked_outputs(func_out)
    if not checked:
        for per_input in all_ju:
            for ju, out in zip(per_input, func_out, strict=True):
                if out.is_floating_point() and ju.numel() and (
                        float(ju.abs().max()) > nondet_tol):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    for i, (k, out) in enumerate(checked):
        v = _random_unit_vector(out, rng)
        all_vj = _analytical_vjps(out, diff_inputs, [v.reshape(out.shape)], nondet_tol,
                                  check_grad_dtypes)
        for j, (u, ju, vj) in enumerate(zip(all_u, all_ju, all_vj, strict=True)):
            numerical = (v * ju[k]).sum()
            analytical = (vj.reshape(-1) * u).sum()
            tolerance = atol * float(u.sum()) * float(v.sum())
            if not _allclose(analytical, numerical, rtol, tolerance):
                raise GradcheckError(_mismatch(numerical, analytical, i, j) + _slow_mode_report(
                    func, func_out, inputs, k, j, eps, rtol, atol))


def _slow_mode_report(func: Callable, func_out: tuple, inputs: tuple, output_position: int,
                      input_index: int, eps: float, rtol: float, atol: float) -> str:
    """The full Jacobians of one failing pair, for the message of a fast-mode failure."""
    numerical = _numerical_jacobians(func, inputs, func_out, eps)[input_index][output_position]
    diff_inputs = [x for _, x in _differentiable_inputs(inputs)]
    analytical = _vjps(func_out[output_position], diff_inputs,
                       _basis(func_out[output_position]))[input_index]
    max_diff = (numerical - analytical).abs().max().item()
    report = ("\nThe above quantities relating the numerical and analytical jacobians are "
              "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 "
              "for more background \nabout fast mode. Below, we recompute numerical and "
              "analytical jacobians in slow mode:\n\n"
              f"Numerical:\n {numerical}\nAnalytical:\n{analytical}\n\n"
              f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if _allclose(analytical, numerical, rtol, atol):
        report += ("Fast gradcheck failed but element-wise differences are small. This means "
                   "that the test might've passed in slow_mode!\n\nIf the test calls "
                   "gradcheck/gradgradcheck itself, call it with `fast_mode=False`.")
    return report


# -- checks on backward itself --------------------------------------------------------------

def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    """Zero cotangents must give zero gradients, of the inputs' dtype and size."""
    diff_inputs = [x for _, x in _differentiable_inputs(inputs)]
    grads = _autograd_grad_allowing_undefined(outputs, diff_inputs, undefined=())
    for g, x in zip(grads, diff_inputs, strict=True):
        if g is None:
            continue
        if not _is_zero(g):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def _autograd_grad_allowing_undefined(outputs: Sequence[Tensor], inputs: list[Tensor],
                                      undefined: Sequence[int]) -> list:
    """autograd.grad(outputs, inputs, zeros, allow_unused=True), except that the outputs
    at the `undefined` positions get no gradient at all (torch's UndefinedGrad): what a
    formula sees for an output nobody differentiated."""
    if not outputs:
        return [None] * len(inputs)
    grads = [None if i in undefined else zeros_like(o) for i, o in enumerate(outputs)]
    return engine.execute([gradient_edge(o) for o in outputs], grads, keep_graph=False,
                          create_graph=False, inputs=[gradient_edge(x) for x in inputs],
                          accumulate=False)


def _test_undefined_backward_mode(func: Callable, inputs: tuple) -> None:
    """Backward must accept outputs without gradient (all of them, and each one alone when
    there are several) and then give no gradient or zeros."""
    diff_inputs = [x for _, x in _differentiable_inputs(inputs)]
    count = len(_differentiable_outputs(func(*inputs)))
    cases = [range(count)] + ([(i,) for i in range(count)] if count > 1 else [])
    for undefined in cases:
        try:
            grads = _autograd_grad_allowing_undefined(_differentiable_outputs(func(*inputs)),
                                                      diff_inputs, tuple(undefined))
        except RuntimeError as error:
            _warn_undefined_grad_check()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 'Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"') from error
        if not all(g is None or _is_zero(g) for g in grads):
            _warn_undefined_grad_check()
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero. Please look at \"Notes "
                                 "about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"")


def _warn_undefined_grad_check() -> None:
    warn_at_caller("Backwards compatibility: New undefined gradient support checking feature is "
                   "enabled by default, but it may break existing callers of this function. If "
                   "this is true for you, you can call this function with "
                   '"check_undefined_grad=False" to disable the feature')


# -- the public functions -------------------------------------------------------------------

def gradcheck(
    func: Callable[..., Any],
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
    """Check the gradients backward computes for `func` at `inputs` (and, with
    check_forward_ad, those forward mode computes) against central differences, for the
    inputs that require grad.

    Returns True, or raises GradcheckError (returns False with `raise_exception=False`)
    naming the output and input whose Jacobians differ, with both Jacobians. Also checks
    that backward scales with the output gradient (zero in, zero out), gives the same
    result twice (within `nondet_tol`) and, with `check_undefined_grad`, copes with
    outputs that get no gradient.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    if check_batched_grad:
        raise NotImplementedError("check_batched_grad checks gradients computed under vmap, "
                                  "which gradgen does not have")
    try:
        _gradcheck(func, _as_tuple(inputs), eps, atol, rtol, nondet_tol, check_undefined_grad,
                   check_grad_dtypes, fast_mode, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradcheck(func: Callable, inputs: tuple, eps: float, atol: float, rtol: float,
               nondet_tol: float, check_undefined_grad: bool, check_grad_dtypes: bool,
               fast_mode: bool, check_forward_ad: bool = False,
               check_backward_ad: bool = True) -> None:
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    if check_backward_ad:
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        check(func, func_out, inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes)
        _test_backward_mul_by_grad_output(_differentiable_outputs(func_out), inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, inputs)
    if check_forward_ad:
        _forward_gradcheck(func, func_out, inputs, eps, rtol, atol)


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
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
    """gradcheck of the first derivatives: checks the backward of the backward.

    The checked function maps (inputs, grad_outputs) to the gradients of func's outputs
    with respect to the inputs that require grad, so second derivatives with respect to the
    inputs and to the output gradients are both checked. `grad_outputs` defaults to random
    tensors, uniform in [-1, 1), that require grad.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to "
                             "be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to "
                             "be True")
    inputs_t = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs_t = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                               for o in _differentiable_outputs(func(*inputs_t)))
    else:
        grad_outputs_t = _as_tuple(grad_outputs)
    count = len(inputs_t)
    wanted = [i for i, _ in _differentiable_inputs(inputs_t)]

    def first_derivatives(*args: Any) -> tuple:
        primal, cotangents = args[:count], args[count:]
        outputs = _differentiable_outputs(func(*primal))
        grads = _grad(outputs, [primal[i] for i in wanted], cotangents, create_graph=True,
                      allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs_t + grad_outputs_t, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_grad_output(output: Tensor, noncontiguous: bool) -> Tensor:
    """Uniform in [-1, 1), of the output's shape and dtype, requiring grad; optionally a
    non-contiguous view (every other element of a tensor twice as long in its last dim)."""
    with no_grad():
        values = rand_like(output) * 2 - 1
        if noncontiguous and output.numel() > 1:
            values = stack([values, values], dim=-1).flatten(-2)[..., ::2]
    return values.requires_grad_(True)
