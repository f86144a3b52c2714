"""runtime/manual.py written against an op namespace `ops` computes what the method-calling
manual.py of commit 891e8e4 computed.

The old module is taken from git and run as it was (its `ops` is generated.ops, its Tensor
methods are Tensor's). The new helpers get a namespace built from the same functions: for
each name of NAMESPACE_NAMES the op of generated.ops, else the Tensor method (called with
the tensor first), else the factory of runtime.factories. Each case calls a helper both ways
on the same small inputs and compares the results, and which op recorded them.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import types
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import runtime
from generated import ops as generated_ops
from runtime import factories
from runtime import manual as new_manual

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "891e8e4"  # the last manual.py that called Tensor methods


def _old_manual() -> types.ModuleType:
    """The old manual.py, exec'd into a fresh module: it imports generated.ops as it did."""
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:runtime/manual.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("old_manual")
    exec(compile(source, f"{OLD_COMMIT}:runtime/manual.py", "exec"), module.__dict__)
    assert module.ops is generated_ops
    return module


def _tensor_namespace() -> types.SimpleNamespace:
    """A namespace for gradgen Tensors made of the functions the old helpers called."""
    functions = {}
    for name in new_manual.NAMESPACE_NAMES:
        if hasattr(generated_ops, name):
            functions[name] = getattr(generated_ops, name)
        elif hasattr(runtime.Tensor, name):
            functions[name] = getattr(runtime.Tensor, name)
        else:
            functions[name] = getattr(factories, name)
    return types.SimpleNamespace(**functions)


OLD = _old_manual()
OPS = _tensor_namespace()


# -- inputs -----------------------------------------------------------------------------------

class Make:
    """Small inputs from a generator seeded per case; float tensors require grad, so that the
    comparison also sees which op recorded each result."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def f(self, *shape: int, low: float = -2.0, high: float = 2.0) -> runtime.Tensor:
        """Random float64 values in [low, high)."""
        return self.of(self.rng.uniform(low, high, shape))

    def ties(self, *shape: int) -> runtime.Tensor:
        """Floats from {0, 1, 2}, so maxima tie."""
        return self.of(self.rng.integers(0, 3, shape).astype(np.float64))

    def of(self, values: Any) -> runtime.Tensor:
        """float64 `values` that require grad."""
        return runtime.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)

    def i(self, values: Any) -> runtime.Tensor:
        return runtime.tensor(np.asarray(values, dtype=np.int64))

    def b(self, values: Any) -> runtime.Tensor:
        return runtime.tensor(np.asarray(values, dtype=bool))

    def mask(self, *shape: int) -> runtime.Tensor:
        return self.b(self.rng.random(shape) < 0.5)


def _np(tensor: runtime.Tensor) -> np.ndarray:
    return tensor.detach().numpy()


# -- the cases --------------------------------------------------------------------------------

Build = Callable[[Make], tuple]
CASES: list[tuple[str, str, Build]] = []


def case(helper: str, label: str, build: Build) -> None:
    """A call of `helper` on the arguments `build` makes (without the namespace)."""
    CASES.append((helper, label, build))


X_ZEROS = [[0.0, 0.5, 1.5], [2.0, 0.0, 0.75]]  # positive but for two zeros
EXP_MIXED = [[0.0, -1.5, 2.0], [1.0, 0.0, -0.5]]  # zeros and both signs

# elementwise
case("maybe_multiply", "factor 1", lambda m: (m.f(2, 3), 1))
case("maybe_multiply", "factor 2.5", lambda m: (m.f(2, 3), 2.5))
case("pow_backward", "exponent 0", lambda m: (m.f(2, 3), m.of(X_ZEROS), 0))
case("pow_backward", "exponent 3", lambda m: (m.f(2, 3), m.f(2, 3), 3))
case("pow_backward", "exponent 2.5", lambda m: (m.f(2, 3), m.f(2, 3, low=0.1), 2.5))
case("pow_backward", "exponent -1.5", lambda m: (m.f(2, 3), m.f(2, 3, low=0.1), -1.5))
case("pow_backward_self", "exponent with zeros",
     lambda m: (m.f(2, 3), m.of(X_ZEROS), m.of(EXP_MIXED)))
case("pow_backward_exponent", "tensor self with zeros",
     lambda m: (m.f(2, 3), m.of(X_ZEROS), m.of(EXP_MIXED),
                m.of(np.power(X_ZEROS, EXP_MIXED))))
for base in (0, 2.0, -2.0):
    case("pow_backward_exponent", f"number self {base}",
         lambda m, base=base: (m.f(2, 3), base, m.of(EXP_MIXED),
                               m.of(np.power(base, np.array(EXP_MIXED)))))
for approximate in ("tanh", "none"):
    case("gelu_double_backward", approximate,
         lambda m, a=approximate: (m.f(2, 3), m.f(2, 3), m.f(2, 3), a))
case("softplus_double_backward", "beta 1 threshold 20",
     lambda m: (m.f(2, 3), m.f(2, 3), 1, 20))
case("softplus_double_backward", "beta 2 threshold 0.5 (some past it)",
     lambda m: (m.f(2, 4), m.f(2, 4), 2.0, 0.5))
case("clamp_backward", "max only", lambda m: (m.f(2, 3), m.f(2, 3), None, 0.5))
case("clamp_backward", "min only", lambda m: (m.f(2, 3), m.f(2, 3), -0.5, None))
case("clamp_backward", "scalar bounds", lambda m: (m.f(2, 4), m.f(2, 4), -0.5, 0.5))
case("clamp_backward", "bound at a tie", lambda m: (m.f(1, 3), m.of([[-1.0, 0.0, 1.0]]), -1, 1))
case("clamp_backward", "tensor bounds",
     lambda m: (m.f(2, 3), m.f(2, 3), m.f(3, high=0.0), m.f(2, 3, low=0.0)))
for mask in ((True, True), (True, False), (False, True)):
    case("clamp_backward_min_max", f"both bounds, mask {mask}",
         lambda m, mask=mask: (m.f(3, 4), m.f(3, 4), m.f(3, 4), m.f(4), mask))
case("clamp_backward_min_max", "min only",
     lambda m: (m.f(3, 4), m.f(3, 4), m.f(4), None, (True, True)))
case("clamp_backward_min_max", "max only",
     lambda m: (m.f(3, 4), m.f(3, 4), None, m.f(3, 4), (True, True)))
case("clamp_jvp", "both bounds (min > max somewhere)",
     lambda m: (m.f(3, 4), m.f(3, 4), m.f(3, 4), m.f(3, 4), m.f(3, 4), m.f(3, 4)))
case("clamp_jvp", "min only", lambda m: (m.f(3, 4), m.f(3, 4), m.f(4), m.f(4), None, None))
case("clamp_jvp", "max only", lambda m: (m.f(3, 4), m.f(3, 4), None, None, m.f(4), m.f(4)))
case("masked_fill_backward", "bool mask", lambda m: (m.f(2, 3), m.mask(2, 3)))
case("masked_fill_backward", "broadcast mask", lambda m: (m.f(2, 3), m.mask(3)))

# reductions
case("unsqueeze_multiple", "dims [0, 2]", lambda m: (m.f(3), [0, 2], 3))
case("unsqueeze_multiple", "dim 1", lambda m: (m.f(2, 3), 1, 3))
case("unsqueeze_multiple", "negative dims", lambda m: (m.f(2, 3), [-1, 0], 4))
case("unsqueeze_multiple", "dim None", lambda m: (m.of(1.5), None, 2))
case("restore_reduced_dims", "dims [1, -1]", lambda m: (m.f(2), [1, -1], False))
case("restore_reduced_dims", "dim 0", lambda m: (m.f(2, 3), 0, False))
case("restore_reduced_dims", "keepdim", lambda m: (m.f(2, 1), 1, True))
case("restore_reduced_dims", "dim None", lambda m: (m.of(0.5), None, False))
case("restore_reduced_dims", "dim []", lambda m: (m.of(0.5), [], False))
case("ones_like", "float", lambda m: (m.f(2, 3),))
case("ones_like", "int", lambda m: (m.i([[1, 2], [3, 4]]),))
case("ones_like", "0-dim", lambda m: (m.of(2.0),))
case("sum_backward", "dims [1, 2]", lambda m: (m.f(2), (2, 3, 4), [1, 2], False))
case("sum_backward", "keepdim", lambda m: (m.f(2, 1, 1), (2, 3, 4), [1, -1], True))
case("sum_backward", "dim 0", lambda m: (m.f(3), (2, 3), 0, False))
case("sum_backward", "dim None", lambda m: (m.of(1.5), (2, 3), None, False))
case("sum_backward", "0-dim input", lambda m: (m.of(1.5), (), None, False))
case("mean_backward", "dim None", lambda m: (m.of(1.5), (2, 3), None, 6, False))
case("mean_backward", "dim []", lambda m: (m.of(1.5), (2, 3), [], 6, False))
case("mean_backward", "dims [1, 2]", lambda m: (m.f(2), (2, 3, 4), [1, 2], 24, False))
case("mean_backward", "dim -1 keepdim", lambda m: (m.f(2, 1), (2, 3), -1, 6, True))


def _amax_case(m: Make, dim: list[int]) -> tuple:
    """scale_grad_by_count as amax's formula calls it: the gradient and result restored."""
    x = m.ties(3, 4)
    result = m.of(_np(x).max(tuple(dim) or None, keepdims=True))
    mask = result == x
    return (m.f(*result.shape), mask, dim)


case("scale_grad_by_count", "dim [1] with ties", lambda m: _amax_case(m, [1]))
case("scale_grad_by_count", "dims [0, 1]", lambda m: _amax_case(m, [0, 1]))
case("scale_grad_by_count", "dim [] (all)", lambda m: _amax_case(m, []))


def _evenly(m: Make, ones: bool = False) -> tuple:
    """max()'s arguments; `ones` gives the forward formula's ones_like(result) for grad."""
    x = m.ties(3, 4)
    result = m.of(_np(x).max())
    return (runtime.ones_like(result) if ones else m.of(0.7), x, result)


case("evenly_distribute_backward", "ties", _evenly)
case("evenly_distribute_backward", "ones grad (forward formula)", lambda m: _evenly(m, True))


def _selecting(m: Make, dim: int, keepdim: bool) -> tuple:
    x = m.f(3, 4)
    indices = _np(x).argmax(dim)
    if keepdim:
        indices = np.expand_dims(indices, dim)
    return (m.f(*indices.shape), dim, m.i(indices), x.shape, keepdim)


case("value_selecting_reduction_backward", "dim 1", lambda m: _selecting(m, 1, False))
case("value_selecting_reduction_backward", "dim 0 keepdim", lambda m: _selecting(m, 0, True))
case("value_selecting_reduction_backward", "dim -1", lambda m: _selecting(m, -1, False))
case("value_selecting_reduction_backward", "0-dim input",
     lambda m: (m.of(0.5), 0, m.i(0), (), False))


def _prod(m: Make, x: runtime.Tensor, dim: int | None = None, keepdim: bool = False,
          ones: bool = False) -> tuple:
    """prod_backward's arguments as prod's formulas pass them (no dim for the product of all
    elements); `ones` gives the forward formula's ones_like(result) for grad."""
    values = _np(x)
    result = m.of(values.prod() if dim is None else values.prod(dim, keepdims=keepdim))
    grad = runtime.ones_like(result) if ones else m.f(*result.shape)
    return (grad, x, result) if dim is None else (grad, x, result, dim, keepdim)


PROD_ZEROS = [[1.5, 0.0, 2.0, -0.5], [0.0, 3.0, 0.0, 1.0], [0.5, -2.0, 1.5, 0.25]]
case("prod_backward", "all elements, no zeros", lambda m: _prod(m, m.f(2, 2)))
for label, values in (("one zero", [[1.5, 0.0], [2.0, -0.5]]),
                      ("two zeros", [[1.5, 0.0], [0.0, -0.5]]),
                      ("three zeros", [[0.0, 0.0], [0.0, -0.5]])):
    case("prod_backward", f"all elements, {label}", lambda m, v=values: _prod(m, m.of(v)))
case("prod_backward", "dim 1, no zeros", lambda m: _prod(m, m.f(3, 4), 1))
case("prod_backward", "dim 1 keepdim, zeros (0, 1 and 2 per row)",
     lambda m: _prod(m, m.of(PROD_ZEROS), 1, True))
case("prod_backward", "dim -1, zeros", lambda m: _prod(m, m.of(PROD_ZEROS), -1))
case("prod_backward", "dim 0 of a 0-dim input",
     lambda m: (m.of(0.5), m.of(2.0), m.of(2.0), 0, False))
case("prod_backward", "ones grad (forward formula)",
     lambda m: _prod(m, m.of(PROD_ZEROS), ones=True))

case("var_backward", "dim None", lambda m: (m.of(0.3), m.f(2, 3), None, None, False))
case("var_backward", "dims [1, 2] correction 0",
     lambda m: (m.f(2), m.f(2, 3, 4), [1, 2], 0, False))
case("var_backward", "dim -1 correction 2 keepdim",
     lambda m: (m.f(2, 1), m.f(2, 4), -1, 2, True))
case("var_backward", "no degrees of freedom", lambda m: (m.f(2), m.f(2, 1), [1], 1, False))
case("var_backward", "0-dim input", lambda m: (m.of(0.3), m.of(1.0), None, 0, False))


def _std(m: Make, dim: Any, keepdim: bool) -> tuple:
    x = m.of([[1.0, 1.0, 1.0], [0.5, -1.0, 2.0]])  # a constant row: std 0
    axes = None if dim is None else tuple(dim)
    result = m.of(_np(x).std(axes, ddof=1, keepdims=keepdim))
    return (result, m.f(*result.shape), x, dim, None, keepdim)


case("std_backward", "dim [1] (a zero std)", lambda m: _std(m, [1], False))
case("std_backward", "dim [1] keepdim", lambda m: _std(m, [1], True))
case("std_backward", "dim None", lambda m: _std(m, None, False))


def _logsumexp(m: Make, shape: tuple[int, ...], dim: list[int], keepdim: bool) -> tuple:
    x = m.f(*shape)
    result = m.of(np.log(np.exp(_np(x)).sum(tuple(dim), keepdims=keepdim)))
    return (m.f(*result.shape), x, result, dim, keepdim)


case("logsumexp_backward", "dim [1]", lambda m: _logsumexp(m, (2, 3), [1], False))
case("logsumexp_backward", "dims [0, 2] keepdim",
     lambda m: _logsumexp(m, (2, 3, 4), [0, 2], True))

NORM_X = [[0.0, 0.0, 0.0], [1.5, -1.5, 0.0], [0.5, -2.0, 1.0]]  # a zero row, ties of |x|


def _norm(m: Make, p: float | None, dim: Any = None, keepdim: bool = False) -> tuple:
    """norm_backward's arguments for NORM_X and its p-norm (p None is the default, 2); no
    dim for the norm of all elements, as norm.Scalar's formula passes them."""
    x = m.of(NORM_X)
    order = 2 if p is None else p
    values = np.abs(_np(x))
    axes = None if dim is None else tuple([dim] if isinstance(dim, int) else dim)
    if order == 0:
        norm = (values != 0).sum(axes, keepdims=keepdim).astype(np.float64)
    elif np.isinf(order):
        norm = values.max(axes, keepdims=keepdim)
    else:
        norm = (values ** order).sum(axes, keepdims=keepdim) ** (1 / order)
    args = (m.f(*norm.shape), x, p, m.of(norm))
    return args if dim is None else (*args, dim, keepdim)


for p in (None, 0, 1, 2, float("inf"), 0.5, 3):
    case("norm_backward", f"p {p}, all elements", lambda m, p=p: _norm(m, p))
    case("norm_backward", f"p {p}, dim [1]", lambda m, p=p: _norm(m, p, [1], False))
    case("norm_backward", f"p {p}, dim 0 keepdim", lambda m, p=p: _norm(m, p, 0, True))

# shape and indexing
case("zeros_like", "float", lambda m: (m.f(2, 3),))
case("zeros_like", "int", lambda m: (m.i([1, 2, 3]),))
case("zeros_like", "bool", lambda m: (m.mask(2, 2),))
case("unsqueeze_to", "dim 1", lambda m: (m.f(2, 3), 1, (2, 1, 3)))
case("unsqueeze_to", "dims [0, -1]", lambda m: (m.f(2, 3), [0, -1], (1, 2, 3, 1)))
case("unsqueeze_to", "a dim that was not 1", lambda m: (m.f(2, 3, 4), 1, (2, 3, 4)))
case("permute_backwards", "dims [2, 0, 1]", lambda m: (m.f(2, 3, 4), [2, 0, 1]))
case("permute_backwards", "negative dims", lambda m: (m.f(2, 3, 4), [-1, 0, 1]))
case("cat_tensors_backward", "dim 1 with an empty input",
     lambda m: (m.f(2, 7), [(2, 3), (2, 0), (2, 4)], 1))
case("cat_tensors_backward", "a skipped 1-D empty input",
     lambda m: (m.f(2, 7), [(2, 3), (0,), (2, 4)], -1))
case("cat_tensors_backward", "1-D", lambda m: (m.f(7), [(3,), (0,), (4,)], 0))
case("stack_tensors_backward", "dim 1", lambda m: (m.f(2, 3, 4), 1, [(2, 4)] * 3))
case("stack_tensors_backward", "dim -1", lambda m: (m.f(2, 3), -1, [(2,)] * 3))
case("split_with_sizes_backward", "a piece without gradient",
     lambda m: ([m.f(2, 1), None, m.f(2, 3)], [1, 2, 3], 1, (2, 6)))
case("split_with_sizes_backward", "dim -1, first piece missing",
     lambda m: ([None, m.f(2, 4)], [2, 4], -1, (2, 6)))
case("split_with_sizes_backward", "no gradients", lambda m: ([None, None], [2, 4], 1, (2, 6)))
case("split_backward", "a short last piece",
     lambda m: ([m.f(2, 2), None, m.f(2, 1)], 2, 1, (2, 5)))
case("split_backward", "no gradients", lambda m: ([None, None], 3, 0, (6,)))
case("unbind_backward", "dim 1, a slice without gradient",
     lambda m: ([m.f(2, 4), None, m.f(2, 4)], 1))
case("unbind_backward", "no gradients", lambda m: ([None, None], 0))
for label, (start, end, step), grad_shape in (
        ("whole", (None, None, 1), (4, 5)), ("negative start", (-3, None, 1), (4, 3)),
        ("end past the size, step 2", (1, 100, 2), (4, 2)), ("empty", (4, 2, 1), (4, 0))):
    case("slice_backward_wrapper", label,
         lambda m, s=start, e=end, k=step, g=grad_shape: (m.f(*g), (4, 5), 1, s, e, k))
case("slice_backward_wrapper", "dim -2",
     lambda m: (m.f(2, 5), (4, 5), -2, 1, 3, 1))
case("index_backward", "two index tensors (repeats)",
     lambda m: (m.f(3), (4, 5), [m.i([0, 2, 0]), m.i([1, 1, 1])]))
case("index_backward", "None then an index tensor",
     lambda m: (m.f(4, 3), (4, 5), [None, m.i([4, 0, 4])]))
case("index_backward", "2-D index",
     lambda m: (m.f(2, 2, 5), (4, 5), [m.i([[0, 1], [1, 3]])]))
case("index_select_backward", "dim 0 (repeats)",
     lambda m: (m.f(3, 4), (5, 4), 0, m.i([0, 2, 0])))
case("index_select_backward", "dim -1", lambda m: (m.f(5, 2), (5, 4), -1, m.i([3, 3])))
case("gather_backward", "dim 1",
     lambda m: (m.f(3, 2), (3, 4), 1, m.i(m.rng.integers(0, 4, (3, 2)))))
case("gather_backward", "dim 0",
     lambda m: (m.f(2, 4), (3, 4), 0, m.i(m.rng.integers(0, 3, (2, 4)))))
case("repeat_backward", "same rank", lambda m: (m.f(4, 9), [2, 3], (2, 3)))
case("repeat_backward", "a leading repeat", lambda m: (m.f(2, 4, 3), [2, 2, 1], (2, 3)))
case("repeat_backward", "0-dim input", lambda m: (m.f(3), [3], ()))

# linear algebra and nn

def _softmax_case(m: Make, shape: tuple[int, int], dim: int, log: bool) -> tuple:
    """(grad, grad_output, dim, output), output being the (log-)softmax of random values."""
    values = _np(m.f(*shape))
    shifted = values - values.max(dim, keepdims=True)
    logs = shifted - np.log(np.exp(shifted).sum(dim, keepdims=True))
    output = m.of(logs if log else np.exp(logs))
    return (m.f(*shape), m.f(*shape), dim, output)


for name, log in (("softmax_double_backward", False), ("log_softmax_double_backward", True)):
    case(name, "dim 1", lambda m, log=log: _softmax_case(m, (2, 3), 1, log))
    case(name, "dim 0", lambda m, log=log: _softmax_case(m, (3, 2), 0, log))
for reduction in (0, 1, 2):
    case("apply_loss_reduction", f"reduction {reduction}", lambda m, r=reduction: (m.f(2, 3), r))
    case("mse_loss_double_backward", f"reduction {reduction}",
         lambda m, r=reduction: (m.f(2, 3), r))
case("smooth_l1_loss_double_backward", "beta 0",
     lambda m: (m.f(2, 3), m.f(2, 3), m.f(2, 3), 1, 0.0))
case("smooth_l1_loss_double_backward", "beta 1, mean",
     lambda m: (m.f(3, 4), m.f(3, 4), m.f(3, 4), 1, 1.0))
case("smooth_l1_loss_double_backward", "beta 0.5, none",
     lambda m: (m.f(3, 4), m.f(3, 4), m.f(3, 4), 0, 0.5))


def _bce(m: Make, reduction: int, weighted: bool) -> tuple:
    """The loss's gradient (0-dim when reduced), self (a probability), target and weight."""
    grad = m.f(2, 3) if reduction == 0 else m.of(0.8)
    weight = m.f(3, low=0.1) if weighted else None
    return grad, m.f(2, 3, low=0.05, high=0.95), m.f(2, 3, low=0.0, high=1.0), weight


def _bce_target(m: Make, reduction: int, weighted: bool) -> tuple:
    return (*_bce(m, reduction, weighted), reduction)


def _bce_double(m: Make, reduction: int, weighted: bool) -> tuple:
    """(grad_output, grad, self, target, weight, reduction): grad has the loss's full shape."""
    grad_output, self, target, weight = _bce(m, reduction, weighted)
    return (grad_output, m.f(2, 3), self, target, weight, reduction)


def _bce_double_target(m: Make, reduction: int, weighted: bool) -> tuple:
    """(grad, grad_output, self, target, weight, reduction)."""
    grad_output, self, target, weight = _bce(m, reduction, weighted)
    return (m.f(2, 3), grad_output, self, target, weight, reduction)


def _bce_logits(m: Make, reduction: int, weighted: bool, pos_weighted: bool) -> tuple:
    """(grad, self, target, weight, pos_weight, reduction), self being any real logits."""
    grad, _, target, weight = _bce(m, reduction, weighted)
    pos_weight = m.f(3, low=0.5) if pos_weighted else None
    return (grad, m.f(2, 3), target, weight, pos_weight, reduction)


for reduction, weighted in ((1, False), (0, True), (2, True)):
    label = f"reduction {reduction}{', weight' if weighted else ''}"
    for name, build in (("binary_cross_entropy_target_backward", _bce_target),
                        ("binary_cross_entropy_double_backward", _bce_double),
                        ("binary_cross_entropy_double_backward_target", _bce_double_target)):
        case(name, label, lambda m, b=build, r=reduction, w=weighted: b(m, r, w))
    for pos_weighted in (False, True):
        for name in ("binary_cross_entropy_with_logits_backward",
                     "binary_cross_entropy_with_logits_target_backward"):
            case(name, f"{label}{', pos_weight' if pos_weighted else ''}",
                 lambda m, r=reduction, w=weighted, pw=pos_weighted: _bce_logits(m, r, w, pw))
for p, train in ((0.3, True), (0.3, None), (0.3, False), (1.0, True)):
    case("dropout_scale", f"p {p} train {train}", lambda m, p=p, t=train: (p, t))
for padding_idx, by_freq in ((-1, False), (2, True), (7, True), (0, False)):
    case("embedding_dense_double_backward", f"padding_idx {padding_idx} by_freq {by_freq}",
         lambda m, pad=padding_idx, freq=by_freq: (
             m.f(5, 3), m.i([[0, 2, 2], [4, 2, 1]]), 5, pad, freq))


def _layer_norm_stats(x: runtime.Tensor, normalized: int) -> tuple[np.ndarray, np.ndarray]:
    """native_layer_norm's mean and rstd: the batch shape, then a 1 per normalized dim."""
    values = _np(x)
    axes = tuple(range(values.ndim - normalized, values.ndim))
    mean = values.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(values.var(axes, keepdims=True) + 1e-5)
    return mean, rstd


def _layer_norm_double(m: Make, shape: tuple[int, ...], normalized: int, weighted: bool,
                       present: str, mask: tuple[bool, bool, bool]) -> tuple:
    """layer_norm_double_backward's arguments; `present` names which of grads[0..2] (i, w, b)
    are defined."""
    x = m.f(*shape)
    mean, rstd = _layer_norm_stats(x, normalized)
    normalized_shape = list(shape[len(shape) - normalized:])
    weight = m.f(*normalized_shape) if weighted else None
    ggi = m.f(*shape) if "i" in present else None
    ggw = m.f(*normalized_shape) if "w" in present else None
    ggb = m.f(*normalized_shape) if "b" in present else None
    return (x, weight, ggi, ggw, ggb, m.f(*shape), m.of(mean), m.of(rstd), normalized_shape,
            mask)


def _layer_norm_jvp(m: Make, shape: tuple[int, ...], normalized: int, affine: bool) -> tuple:
    """(input_p, input_t, weight_p, weight_t, bias_p, bias_t, mean, rstd, normalized_shape)."""
    x = m.f(*shape)
    mean, rstd = _layer_norm_stats(x, normalized)
    normalized_shape = list(shape[len(shape) - normalized:])
    weight = [m.f(*normalized_shape), m.f(*normalized_shape)] if affine else [None, None]
    bias = [m.f(*normalized_shape), m.f(*normalized_shape)] if affine else [None, None]
    return (x, m.f(*shape), *weight, *bias, m.of(mean), m.of(rstd), normalized_shape)


def _layer_norm_backward_jvp(m: Make, shape: tuple[int, ...], normalized: int,
                             weighted: bool) -> tuple:
    """(grad_out_p, grad_out_t, input_p, input_t, weight_p, weight_t, mean, rstd,
    normalized_shape)."""
    x = m.f(*shape)
    mean, rstd = _layer_norm_stats(x, normalized)
    normalized_shape = list(shape[len(shape) - normalized:])
    weight = [m.f(*normalized_shape), m.f(*normalized_shape)] if weighted else [None, None]
    return (m.f(*shape), m.f(*shape), x, m.f(*shape), *weight, m.of(mean), m.of(rstd),
            normalized_shape)


for label, args in (
        ("all present", ((2, 3, 4), 1, True, "iwb", (True, True, True))),
        ("no weight, two normalized dims", ((2, 3, 4), 2, False, "ib", (True, True, True))),
        ("no grad_grad_input", ((2, 3, 4), 1, True, "wb", (True, True, True))),
        ("only grad_grad_input", ((3, 4), 1, True, "i", (True, True, True))),
        ("weight's gradient only", ((2, 3, 4), 1, True, "iwb", (False, True, False))),
        ("input and grad_out only", ((2, 3, 4), 1, True, "iwb", (True, False, True))),
        ("no batch", ((4,), 1, True, "iwb", (True, True, True)))):
    case("layer_norm_double_backward", label, lambda m, a=args: _layer_norm_double(m, *a))
for label, args in (("affine", ((2, 3, 4), 1, True)), ("plain, two dims", ((2, 3, 4), 2, False)),
                    ("no batch", ((4,), 1, True))):
    case("layer_norm_jvp", label, lambda m, a=args: _layer_norm_jvp(m, *a))
    case("layer_norm_backward_jvp", label, lambda m, a=args: _layer_norm_backward_jvp(m, *a))
for label, strides, alpha in (("row-major", (4, 1), 1), ("column-major, alpha 2", (1, 3), 2.0)):
    case("mm_mat1_backward", label,
         lambda m, s=strides, a=alpha: (m.f(3, 5), m.f(4, 5), (3, 4), s, a))
for label, strides, alpha in (("row-major", (5, 1), 1), ("column-major, alpha 0.5", (1, 4), 0.5)):
    case("mm_mat2_backward", label,
         lambda m, s=strides, a=alpha: (m.f(3, 5), m.f(3, 4), (4, 5), s, a))


# -- the comparison ---------------------------------------------------------------------------

def _assert_same(new: Any, old: Any, where: str = "result") -> None:
    """Equal structure, and tensors of equal shape, dtype, values and recording op."""
    if isinstance(old, list | tuple):
        assert type(new) is type(old) and len(new) == len(old), where
        for i, (n, o) in enumerate(zip(new, old, strict=True)):
            _assert_same(n, o, f"{where}[{i}]")
    elif isinstance(old, runtime.Tensor):
        assert isinstance(new, runtime.Tensor), where
        assert (new.shape, new.dtype) == (old.shape, old.dtype), where
        assert type(new.grad_fn).__name__ == type(old.grad_fn).__name__, where
        assert new.requires_grad == old.requires_grad, where
        if old.dtype.is_floating_point:
            np.testing.assert_allclose(_np(new), _np(old), rtol=1e-12, atol=1e-300,
                                       equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(_np(new), _np(old), err_msg=where)
    else:
        assert type(new) is type(old), where
        assert new == old or (new != new and old != old), where  # NaN matches NaN


# Helpers whose last op changed since the old module, on purpose: their values are compared,
# not the node that records them.
RESTRUCTURED = {
    # grad * where(cond, 0, result * log(self)), torch's form, whose second order is torch's
    # (NaN at a zero base); the old where(cond, 0, grad * result * log(self)) recorded a where
    "pow_backward_exponent",
}


def _without_nodes(value: Any) -> Any:
    """Tensors as arrays (their values), in the same structure."""
    if isinstance(value, list | tuple):
        return type(value)(_without_nodes(v) for v in value)
    return _np(value) if isinstance(value, runtime.Tensor) else value


@pytest.mark.parametrize(("helper", "build"),
                         [pytest.param(h, b, id=f"{h}-{label}") for h, label, b in CASES])
def test_helper_matches_the_method_calling_one(helper: str, build: Build) -> None:
    with np.errstate(all="ignore"):  # some cases divide by zero on purpose
        args = build(Make(zlib.crc32(helper.encode())))
        old = getattr(OLD, helper)(*args)
        new = getattr(new_manual, helper)(OPS, *args)
    if helper in RESTRUCTURED:
        np.testing.assert_allclose(_without_nodes(new), _without_nodes(old), rtol=1e-12,
                                   atol=1e-300, equal_nan=True)
        return
    _assert_same(new, old)


def _public_helpers(module: types.ModuleType) -> set[str]:
    return {name for name, value in vars(module).items()
            if inspect.isfunction(value) and not name.startswith("_")
            and value.__module__ == module.__name__}


def test_every_helper_of_the_old_module_has_a_case() -> None:
    assert _public_helpers(OLD) == {helper for helper, _, _ in CASES}


def test_the_old_module_s_helpers_are_all_still_here() -> None:
    assert _public_helpers(OLD) <= _public_helpers(new_manual)


def test_helpers_written_since_are_proven_through_the_spec() -> None:
    """A helper added after the rewrite has no old twin to be compared with here: it must be
    called by a formula of the spec, so that `verify` (tests/test_ops.py) proves it."""
    spec = (ROOT / "derivatives.yaml").read_text(encoding="utf-8")
    added = _public_helpers(new_manual) - _public_helpers(OLD)
    assert {name for name in added if not re.search(rf"\b{name}\(", spec)} == set()


def test_every_public_helper_takes_the_namespace_first() -> None:
    for name in _public_helpers(new_manual):
        first = next(iter(inspect.signature(getattr(new_manual, name)).parameters))
        assert first == "ops", name


def test_namespace_names_are_what_the_helpers_call() -> None:
    tree = ast.parse(Path(new_manual.__file__).read_text(encoding="utf-8"))
    called = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
              and isinstance(node.value, ast.Name) and node.value.id == "ops"}
    assert new_manual.NAMESPACE_NAMES == tuple(sorted(called))


def test_manual_is_a_leaf_module() -> None:
    """It imports nothing of the runtime or the generated code, so any target can bind it."""
    tree = ast.parse(Path(new_manual.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    assert imported <= {"__future__", "math", "numbers", "typing", "collections.abc"}
