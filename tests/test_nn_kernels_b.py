"""nn kernels B (issue 27): the entries for norms, losses, distances and their backwards,
against torch's same ops (torch.ops.aten.NAME, or torch.NAME where torch has it): values,
dtypes, and the errors of bad arguments (class and message)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import close, same_outcome


def aten(lib: Any, name: str) -> Any:
    """torch's op as torch.ops.aten has it; gradgen's spec op of the same name."""
    return getattr(torch.ops.aten, name) if lib is torch else getattr(runtime, name)


def data(lib: Any, shape: tuple, seed: int = 0, dtype: str = "float64") -> Any:
    values = np.random.default_rng(seed).standard_normal(shape)
    return lib.tensor(values, dtype=getattr(lib, dtype))


def outcome(program: Any) -> None:
    """program raises the same in both libraries, or returns close values."""
    expected = same_outcome(lambda lib: _summary(program(lib)))
    if expected[0] == "returns":
        close(program)


def _summary(result: Any) -> Any:
    if isinstance(result, torch.Tensor | runtime.Tensor):
        return str(result.dtype), tuple(result.shape)
    if isinstance(result, tuple | list):
        return [_summary(r) for r in result]
    return result


# -- glu_backward, log_sigmoid_backward, huber_loss_backward ------------------------------

GLU_CASES = {
    "last dim": ((3, 2), (3, 4), -1, "float64"),
    "first dim": ((2, 2, 3), (4, 2, 3), 0, "float64"),
    "float32": ((3, 2), (3, 4), 1, "float32"),
    "odd size": ((3, 2), (3, 5), 1, "float64"),
    "dim out of range": ((3, 2), (3, 4), 2, "float64"),
    "grad shape": ((3, 3), (3, 4), 1, "float64"),
}


@pytest.mark.parametrize("case", GLU_CASES, ids=str)
def test_glu_backward(case: str) -> None:
    grad_shape, self_shape, dim, dtype = GLU_CASES[case]
    outcome(lambda lib: aten(lib, "glu_backward")(
        data(lib, grad_shape, 1, dtype), data(lib, self_shape, 2, dtype), dim))


def test_glu_backward_dtype_mismatch() -> None:
    outcome(lambda lib: aten(lib, "glu_backward")(
        data(lib, (3, 2), 1, "float32"), data(lib, (3, 4), 2), 1))


LOG_SIGMOID_CASES = {
    "float64": ("float64", "float64", (5,)),
    "float32": ("float32", "float32", (5,)),
    "grad dtype": ("float64", "float32", (5,)),
    "grad broadcasts": ("float64", "float64", (1,)),
    "grad shape": ("float64", "float64", (3,)),
}


@pytest.mark.parametrize("case", LOG_SIGMOID_CASES, ids=str)
def test_log_sigmoid_backward(case: str) -> None:
    dtype, grad_dtype, grad_shape = LOG_SIGMOID_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, (5,), 3, dtype) * 4
        return aten(lib, "log_sigmoid_backward")(
            data(lib, grad_shape, 4, grad_dtype), x, (-x.abs()).exp())
    outcome(program)


def test_log_sigmoid_backward_reads_the_buffer() -> None:
    """torch's CPU kernel takes the slope from the buffer it is given, not from self."""
    outcome(lambda lib: aten(lib, "log_sigmoid_backward")(
        data(lib, (4,), 5), data(lib, (4,), 6), lib.full((4,), 0.5, dtype=lib.float64)))


HUBER_CASES = {
    "mean": ((), (3, 4), (3, 4), 1, 1.0, "float64"),
    "none": ((3, 4), (3, 4), (3, 4), 0, 0.5, "float64"),
    "sum": ((), (5,), (5,), 2, 2.0, "float32"),
    "target broadcasts": ((3, 4), (3, 4), (4,), 0, 0.5, "float64"),
    "grad shape": ((4,), (3, 4), (3, 4), 0, 0.5, "float64"),
    "empty mean": ((), (0,), (0,), 1, 1.0, "float64"),
}


@pytest.mark.parametrize("case", HUBER_CASES, ids=str)
def test_huber_loss_backward(case: str) -> None:
    grad_shape, self_shape, target_shape, reduction, delta, dtype = HUBER_CASES[case]
    outcome(lambda lib: aten(lib, "huber_loss_backward")(
        data(lib, grad_shape, 7, dtype), data(lib, self_shape, 8, dtype),
        data(lib, target_shape, 9, dtype), reduction, delta))


def test_huber_loss_backward_dtype_mismatch() -> None:
    outcome(lambda lib: aten(lib, "huber_loss_backward")(
        data(lib, (), 7), data(lib, (3,), 8, dtype="float32"), data(lib, (3,), 9, "float32"),
        1, 1.0))


@pytest.mark.parametrize("name", ["glu", "log_sigmoid", "huber_loss"])
def test_second_order_through_the_backward_ops(name: str) -> None:
    """A create_graph backward of the forward op, then its gradient again: the graph runs
    through the backward ops' own entries in gradgen, and equals torch's."""
    def program(lib: Any) -> Any:
        x = data(lib, (3, 4), 10).requires_grad_()
        functional = lib.nn.functional
        if name == "glu":
            y = functional.glu(x, 1)
        elif name == "log_sigmoid":
            y = functional.logsigmoid(x)
        else:
            y = functional.huber_loss(x, data(lib, (3, 4), 11), delta=0.7, reduction="none")
        (g,) = lib.autograd.grad((y * data(lib, tuple(y.shape), 12)).sum(), x,
                                 create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return g, gg
    close(program, rtol=1e-10, atol=1e-12)


# -- _prelu_kernel, _prelu_kernel_backward ---------------------------------------------------

PRELU_CASES = {
    "channels": ((2, 3, 4), (3, 1), "float64", "float64"),
    "one weight": ((4, 3), (1,), "float64", "float64"),
    "float32": ((4, 3), (3,), "float32", "float32"),
    "dtype mismatch": ((4, 3), (3,), "float32", "float64"),
    "shapes": ((4, 3), (4,), "float64", "float64"),
    "int": ((4, 3), (3,), "int32", "int32"),
}


@pytest.mark.parametrize("case", PRELU_CASES, ids=str)
def test_prelu_kernel(case: str) -> None:
    shape, weight_shape, dtype, weight_dtype = PRELU_CASES[case]
    outcome(lambda lib: lib._prelu_kernel(data(lib, shape, 1).to(getattr(lib, dtype)),
                                          data(lib, weight_shape, 2, weight_dtype)))


@pytest.mark.parametrize("case", [c for c in PRELU_CASES if c != "int"], ids=str)
def test_prelu_kernel_backward(case: str) -> None:
    shape, weight_shape, dtype, weight_dtype = PRELU_CASES[case]
    outcome(lambda lib: aten(lib, "_prelu_kernel_backward")(
        data(lib, shape, 3, dtype), data(lib, shape, 1, dtype),
        data(lib, weight_shape, 2, weight_dtype)))


def test_prelu_records_torchs_node_and_its_double_backward() -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (2, 3, 4), 4).requires_grad_()
        w = lib.tensor([0.25, -0.5, 1.5], dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.prelu(x, w)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        second = lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (x, w))
        return y.grad_fn.name(), gx.grad_fn.name(), gx, gw, second
    close(program, rtol=1e-10, atol=1e-12)


# -- renorm ---------------------------------------------------------------------------------

RENORM_CASES = {
    "rows": ((3, 4), "float64", 2, 0, 1.0),
    "float32": ((3, 4), "float32", 2, 1, 0.5),
    "p inf": ((2, 3, 4), "float64", float("inf"), -1, 0.5),
    "p 0": ((3, 4), "float64", 0, 0, 1.0),
    "negative maxnorm": ((3, 4), "float64", 2, 0, -1.5),
    "dim out of range": ((3, 4), "float64", 2, 2, 1.0),
    "one dimension": ((4,), "float64", 2, 0, 1.0),
    "int": ((3, 4), "int64", 2, 0, 1.0),
    "empty": ((0, 3), "float64", 2, 0, 1.0),
}


@pytest.mark.parametrize("case", RENORM_CASES, ids=str)
def test_renorm(case: str) -> None:
    shape, dtype, p, dim, maxnorm = RENORM_CASES[case]
    outcome(lambda lib: lib.renorm((data(lib, shape, 1) * 2).to(getattr(lib, dtype)), p, dim,
                                   maxnorm))


def test_renorm_method_inplace_and_out() -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (3, 4), 2)
        method = x.renorm(1, 0, 1.5)
        inplace = x.clone()
        returned = inplace.renorm_(2, 1, 0.7)
        out = lib.empty(3, 4, dtype=lib.float64)
        lib.renorm(x, 2, 0, 1.0, out=out)
        return method, inplace, returned is inplace, out
    close(program, rtol=1e-12, atol=1e-14)
    outcome(lambda lib: lib.renorm(data(lib, (3, 4), 2), 2, 0, 1.0,
                                   out=lib.empty(3, 4, dtype=lib.float32)))


# -- one_hot --------------------------------------------------------------------------------

ONE_HOT_CASES = {
    "inferred": ([0, 2, 1, 2], -1, "int64"),
    "given": ([[0, 3], [1, 1]], 5, "int64"),
    "too small": ([0, 3], 3, "int64"),
    "negative": ([0, -1], 3, "int64"),
    "float": ([0.0, 1.0], 3, "float32"),
    "int32": ([0, 1], 3, "int32"),
}


@pytest.mark.parametrize("case", ONE_HOT_CASES, ids=str)
def test_one_hot(case: str) -> None:
    values, num_classes, dtype = ONE_HOT_CASES[case]
    outcome(lambda lib: lib.nn.functional.one_hot(
        lib.tensor(values, dtype=getattr(lib, dtype)), num_classes))


def test_one_hot_of_empty_tensors() -> None:
    outcome(lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.int64)))
    outcome(lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.int64), 4))


# -- distances: cdist, _cdist_forward / _cdist_backward, _euclidean_dist, pdist ----------

CDIST_CASES = {
    "p 2": ((3, 4), (5, 4), {}),
    "p 1": ((3, 4), (5, 4), {"p": 1.0}),
    "p 0.5": ((3, 4), (5, 4), {"p": 0.5}),
    "p inf": ((3, 4), (5, 4), {"p": float("inf")}),
    "matrix product": ((3, 4), (5, 4), {"compute_mode": "use_mm_for_euclid_dist"}),
    "many rows": ((30, 4), (5, 4), {}),
    "many rows, no product": ((30, 4), (5, 4), {"compute_mode": "donot_use_mm_for_euclid_dist"}),
    "batches broadcast": ((2, 30, 4), (3, 1, 5, 4), {}),
    "batches broadcast, p 3": ((2, 3, 4), (3, 1, 5, 4), {"p": 3.0}),
    "empty": ((0, 4), (5, 4), {}),
    "bad mode": ((3, 4), (5, 4), {"compute_mode": "fast"}),
    "negative p": ((3, 4), (5, 4), {"p": -1.0}),
    "one dimension": ((4,), (5, 4), {}),
    "columns": ((3, 4), (5, 3), {}),
    "batches": ((2, 3, 4), (3, 5, 4), {}),
}


@pytest.mark.parametrize("case", CDIST_CASES, ids=str)
def test_cdist_values_gradients_and_node(case: str) -> None:
    shape1, shape2, kwargs = CDIST_CASES[case]

    def program(lib: Any) -> Any:
        x1 = data(lib, shape1, 1).requires_grad_()
        x2 = data(lib, shape2, 2).requires_grad_()
        result = lib.cdist(x1, x2, **kwargs)
        grads = lib.autograd.grad((result * data(lib, tuple(result.shape), 3)).sum(), (x1, x2),
                                  allow_unused=True)
        return result.grad_fn.name(), result, grads
    outcome(program)


def test_cdist_dtype_errors() -> None:
    outcome(lambda lib: lib.cdist(data(lib, (3, 4), 1, "int64"), data(lib, (5, 4), 2, "int64")))
    outcome(lambda lib: lib.cdist(data(lib, (3, 4), 1, "float32"), data(lib, (5, 4), 2)))


@pytest.mark.parametrize("case", ["p 2", "p 1", "p 0.5", "p inf", "batches broadcast, p 3",
                                  "negative p"], ids=str)
def test_cdist_internal_ops(case: str) -> None:
    shape1, shape2, kwargs = CDIST_CASES[case]
    p = kwargs.get("p", 2.0)

    def program(lib: Any) -> Any:
        x1, x2 = data(lib, shape1, 4), data(lib, shape2, 5)
        result = aten(lib, "_cdist_forward")(x1, x2, p, None)
        grad = data(lib, tuple(result.shape), 6)
        return result, aten(lib, "_cdist_backward")(grad, x1, x2, p, result)
    outcome(program)


def test_euclidean_dist() -> None:
    def program(lib: Any) -> Any:
        x1 = data(lib, (2, 3, 4), 7).requires_grad_()
        x2 = data(lib, (2, 5, 4), 8).requires_grad_()
        result = lib._euclidean_dist(x1, x2)
        return result.grad_fn.name(), result, lib.autograd.grad(result.sum(), (x1, x2))
    outcome(program)
    outcome(lambda lib: lib._euclidean_dist(data(lib, (3, 4), 1, "float32"),
                                            data(lib, (5, 4), 2)))


PDIST_CASES = {"p 2": ((4, 3), 2.0), "p 1": ((5, 2), 1.0), "p 0.5": ((4, 2), 0.5),
               "p inf": ((3, 3), float("inf")), "p 0": ((3, 3), 0.0), "one row": ((1, 3), 2.0),
               "3-d": ((2, 3, 4), 2.0), "negative p": ((3, 3), -1.0)}


@pytest.mark.parametrize("case", PDIST_CASES, ids=str)
def test_pdist_and_its_backward(case: str) -> None:
    shape, p = PDIST_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 9).requires_grad_()
        result = lib.nn.functional.pdist(x, p)
        (grad,) = lib.autograd.grad((result * data(lib, tuple(result.shape), 10)).sum(), x)
        direct = aten(lib, "_pdist_backward")(data(lib, tuple(result.shape), 10), x.detach(), p,
                                              result.detach())
        return result.grad_fn.name(), result, grad, direct
    outcome(program)


def test_pdist_double_backward_is_not_implemented() -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (4, 3), 11).requires_grad_()
        (grad,) = lib.autograd.grad(lib.nn.functional.pdist(x).sum(), x, create_graph=True)
        return lib.autograd.grad(grad.sum(), x)
    outcome(program)


# -- batch norm's ATen forms and backward ops -----------------------------------------------

def _batch_norm_inputs(lib: Any, shape: tuple = (4, 3, 2)) -> tuple:
    x = data(lib, shape, 12).requires_grad_()
    weight = data(lib, (shape[1],), 13).requires_grad_()
    bias = data(lib, (shape[1],), 14).requires_grad_()
    running_mean = data(lib, (shape[1],), 15)
    running_var = data(lib, (shape[1],), 16).abs() + 0.5
    return x, weight, bias, running_mean, running_var


BATCH_NORM_FORMS = {
    "legit, training": lambda lib, x, w, b, rm, rv: lib._native_batch_norm_legit(
        x, w, b, rm, rv, True, 0.1, 1e-5),
    "legit, eval": lambda lib, x, w, b, rm, rv: lib._native_batch_norm_legit(
        x, w, b, rm, rv, False, 0.1, 1e-5),
    "legit, no stats": lambda lib, x, w, b, rm, rv: lib._native_batch_norm_legit(
        x, w, None, True, 0.2, 1e-3),
    "legit, no training": lambda lib, x, w, b, rm, rv: lib._native_batch_norm_legit_no_training(
        x, w, b, rm, rv, 0.1, 1e-5),
    "with update": lambda lib, x, w, b, rm, rv: aten(lib, "_batch_norm_with_update")(
        x, w, b, rm, rv, 0.1, 1e-5),
    "no update": lambda lib, x, w, b, rm, rv: aten(lib, "_batch_norm_no_update")(
        x, w, b, rm, rv, 0.1, 1e-5),
}


@pytest.mark.parametrize("form", BATCH_NORM_FORMS, ids=str)
def test_batch_norm_forms_outputs_statistics_and_second_order(form: str) -> None:
    """Outputs, the running statistics after the call, the node's name, and a gradient
    and its gradient (through native_batch_norm_backward / batch_norm_backward's entries)."""
    def program(lib: Any) -> Any:
        x, w, b, rm, rv = _batch_norm_inputs(lib)
        outputs = BATCH_NORM_FORMS[form](lib, x, w, b, rm, rv)
        cotangent = data(lib, tuple(outputs[0].shape), 17)
        first = lib.autograd.grad((outputs[0] * cotangent).sum(), (x, w, b), create_graph=True,
                                  allow_unused=True)
        used = [g for g in first if g is not None]
        second = lib.autograd.grad(sum((g * g).sum() for g in used), (x, w), allow_unused=True)
        return (outputs[0].grad_fn.name(), [str(o.dtype) for o in outputs], outputs, rm, rv,
                first, second)
    outcome(program)


@pytest.mark.parametrize("train", [True, False], ids=["training", "eval"])
@pytest.mark.parametrize("mask", [(True, True, True), (True, False, True)], ids=str)
def test_native_batch_norm_backward(train: bool, mask: tuple) -> None:
    def program(lib: Any) -> Any:
        x, w, _, rm, rv = _batch_norm_inputs(lib)
        x = x.detach()
        _, save_mean, save_invstd = lib._native_batch_norm_legit(x, w.detach(), None, rm, rv,
                                                                 train, 0.1, 1e-5)
        grad_out = data(lib, (4, 3, 2), 18)
        result = aten(lib, "native_batch_norm_backward")(
            grad_out, x, w.detach(), rm, rv, save_mean, save_invstd, train, 1e-5, list(mask))
        # torch leaves a masked-off output undefined, gradgen gives zeros: not compared
        return [r for r, wanted in zip(result, mask, strict=True) if wanted]
    outcome(program)


def test_batch_norm_public_function() -> None:
    def program(lib: Any) -> Any:
        x, w, b, rm, rv = _batch_norm_inputs(lib)
        y = lib.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False)
        return y.grad_fn.name(), y, rm, rv, lib.autograd.grad(y.pow(2).sum(), (x, w, b))
    outcome(program)
    outcome(lambda lib: lib.batch_norm(data(lib, (4, 3), 1), None, None, None, None, False,
                                       0.1, 1e-5, True))


# -- _safe_softmax ---------------------------------------------------------------------------

SAFE_SOFTMAX_CASES = {
    "rows": ((3, 4), 1, None),
    "first dim": ((2, 3, 4), 0, None),
    "to float32": ((3, 4), 1, "float32"),
    "dim out of range": ((3, 4), 2, None),
}


@pytest.mark.parametrize("case", SAFE_SOFTMAX_CASES, ids=str)
def test_safe_softmax(case: str) -> None:
    shape, dim, dtype = SAFE_SOFTMAX_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 19).requires_grad_()
        y = lib._safe_softmax(x, dim, dtype=None if dtype is None else getattr(lib, dtype))
        return y.grad_fn.name(), y, lib.autograd.grad((y * y).sum(), x)
    outcome(program)


def test_safe_softmax_of_masked_rows() -> None:
    def program(lib: Any) -> Any:
        inf = float("inf")
        x = lib.tensor([[1.0, 2.0, -inf], [-inf, -inf, -inf]], dtype=lib.float64,
                       requires_grad=True)
        y = lib._safe_softmax(x, 1)
        return y, lib.autograd.grad((y * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum(),
                                    x)
    outcome(program)
    outcome(lambda lib: lib._safe_softmax(lib.tensor([1, 2]), 0))
    outcome(lambda lib: lib._safe_softmax(lib.tensor([1, 2]), 0, dtype=lib.float32))


# -- multi_margin_loss, multilabel_margin_loss_forward -----------------------------------

MULTI_MARGIN_CASES = {
    "mean": ((3, 4), [0, 3, 1], {}),
    "p 2, none": ((3, 4), [2, 2, 0], {"p": 2, "margin": 0.5, "reduction": "none"}),
    "weight, sum": ((3, 4), [1, 0, 3], {"weight": True, "reduction": "sum"}),
    "one sample": ((5,), [2], {"margin": 2.0, "reduction": "none"}),
    "target out of range": ((3, 4), [0, 4, 1], {}),
    "target size": ((3, 4), [0, 1], {}),
    "weight size": ((3, 4), [0, 1, 2], {"weight": "short"}),
    "empty input": ((0,), [0], {}),
}


@pytest.mark.parametrize("case", MULTI_MARGIN_CASES, ids=str)
def test_multi_margin_loss(case: str) -> None:
    shape, labels, kwargs = MULTI_MARGIN_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 20).requires_grad_()
        options = dict(kwargs)
        if "weight" in options:
            options["weight"] = data(lib, (4 if options["weight"] is True else 3,), 21).abs()
        loss = lib.nn.functional.multi_margin_loss(x, lib.tensor(labels), **options)
        (grad,) = lib.autograd.grad((loss * 1.5).sum(), x, create_graph=True)
        return loss.grad_fn.name(), loss, grad
    outcome(program)


MULTILABEL_CASES = {
    "mean": ((3, 4), [[0, 3, -1, 0], [1, 2, 0, -1], [2, -1, 1, 1]], "mean"),
    "none": ((2, 3), [[1, 1, -1], [0, 2, 1]], "none"),
    "one sample": ((4,), [3, 0, -1, 1], "sum"),
    "out of range": ((2, 3), [[1, 3, -1], [0, 2, 1]], "mean"),
    "target size": ((2, 3), [[1, 2], [0, 2]], "mean"),
}


@pytest.mark.parametrize("case", MULTILABEL_CASES, ids=str)
def test_multilabel_margin_loss(case: str) -> None:
    shape, labels, reduction = MULTILABEL_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 22).requires_grad_()
        target = lib.tensor(labels)
        loss = lib.nn.functional.multilabel_margin_loss(x, target, reduction=reduction)
        (grad,) = lib.autograd.grad((loss * 1.5).sum(), x)
        forward = aten(lib, "multilabel_margin_loss_forward")(x.detach(), target, 1)
        return loss.grad_fn.name(), loss, grad, forward
    outcome(program)


# -- embedding_renorm_, F.embedding's max_norm ------------------------------------------

RENORM_ROWS_CASES = {
    "2-norm": ([[0, 2], [2, 4]], 1.0, 2.0, "int64", (5, 3)),
    "1-norm, int32 indices": ([1, 1, 3], 0.5, 1.0, "int32", (5, 3)),
    "float indices": ([0.0, 1.0], 1.0, 2.0, "float32", (5, 3)),
    "1-d weight": ([0, 1], 1.0, 2.0, "int64", (5,)),
    "index out of range": ([7], 1.0, 2.0, "int64", (5, 3)),
}


@pytest.mark.parametrize("case", RENORM_ROWS_CASES, ids=str)
def test_embedding_renorm_(case: str) -> None:
    indices, max_norm, norm_type, dtype, shape = RENORM_ROWS_CASES[case]

    def program(lib: Any) -> Any:
        weight = data(lib, shape, 23) * 2
        returned = lib.embedding_renorm_(weight, lib.tensor(indices, dtype=getattr(lib, dtype)),
                                         max_norm, norm_type)
        return returned is weight, weight
    outcome(program)


def test_embedding_renorm_has_no_derivative() -> None:
    def program(lib: Any) -> Any:
        weight = (data(lib, (5, 3), 24) * 2).requires_grad_()
        renormed = lib.embedding_renorm_(weight * 1, lib.tensor([0, 2]), 1.0, 2.0)
        return renormed.grad_fn.name(), lib.autograd.grad(renormed.sum(), weight)
    outcome(program)


def test_embedding_with_max_norm() -> None:
    def program(lib: Any) -> Any:
        weight = (data(lib, (6, 3), 25) * 2).requires_grad_()
        indices = lib.tensor([[0, 2, 5], [2, 2, 1]])
        out = lib.nn.functional.embedding(indices, weight, max_norm=1.5, norm_type=3.0)
        (grad,) = lib.autograd.grad((out * out).sum(), weight)
        return out, grad, weight.detach()
    outcome(program)

    def module_program(lib: Any) -> Any:
        layer = lib.nn.Embedding.from_pretrained(data(lib, (4, 2), 26) * 3, max_norm=1.0)
        return layer(lib.tensor([1, 3])), layer.weight
    outcome(module_program)


# -- native_group_norm ------------------------------------------------------------------------

GROUP_NORM_CASES = {
    "affine": ((2, 4, 3), 2, True),
    "no affine": ((3, 6), 3, False),
    "one group": ((2, 2, 2, 2), 1, True),
}


@pytest.mark.parametrize("case", GROUP_NORM_CASES, ids=str)
def test_native_group_norm_outputs_and_derivatives(case: str) -> None:
    """All three outputs, gradients through all three (mean and rstd have their own), and a
    second derivative, against torch.native_group_norm."""
    shape, group, affine = GROUP_NORM_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 27).requires_grad_()
        channels = shape[1]
        weight = data(lib, (channels,), 28).requires_grad_() if affine else None
        bias = data(lib, (channels,), 29).requires_grad_() if affine else None
        size = 1
        for extent in shape[2:]:
            size *= extent
        out, mean, rstd = lib.native_group_norm(x, weight, bias, shape[0], channels, size, group,
                                                1e-5)
        loss = ((out * data(lib, shape, 30)).sum() + (mean * mean).sum() + rstd.sum())
        inputs = (x, weight, bias) if affine else (x,)
        first = lib.autograd.grad(loss, inputs, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), inputs)
        return out.grad_fn.name(), out, mean, rstd, first, second
    outcome(program)


def test_native_group_norm_errors() -> None:
    outcome(lambda lib: lib.native_group_norm(data(lib, (2, 4, 3), 1), data(lib, (3,), 2), None,
                                              2, 4, 3, 2, 1e-5))
    outcome(lambda lib: lib.native_group_norm(data(lib, (2, 4, 3), 1), None, None, 2, 4, 3, 3,
                                              1e-5))
    outcome(lambda lib: lib.native_group_norm(data(lib, (2, 4, 3), 1), None, None, 2, 4, 4, 2,
                                              1e-5))


# -- _trilinear, F.bilinear -----------------------------------------------------------------

TRILINEAR_CASES = {
    "bilinear layout": ((2, 3), (5, 3, 4), (2, 4), [1, 3], [0], [1, 2], [2, 3]),
    "no sum": ((2, 3), (4,), (3,), [2], [0, 1], [0, 2], []),
    "plain product": ((3, 2), (3, 2), (2,), [], [], [0], [1]),
}


@pytest.mark.parametrize("case", TRILINEAR_CASES, ids=str)
def test_trilinear(case: str) -> None:
    shape1, shape2, shape3, expand1, expand2, expand3, sumdim = TRILINEAR_CASES[case]

    def program(lib: Any) -> Any:
        inputs = [data(lib, shape, 31 + k).requires_grad_()
                  for k, shape in enumerate((shape1, shape2, shape3))]
        result = lib._trilinear(*inputs, expand1, expand2, expand3, sumdim)
        first = lib.autograd.grad((result * result).sum(), inputs, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), inputs)
        return result.grad_fn.name(), result, first, second
    outcome(program)


def test_bilinear_records_trilinear() -> None:
    def program(lib: Any) -> Any:
        a = data(lib, (2, 2, 3), 34).requires_grad_()
        b = data(lib, (2, 2, 4), 35).requires_grad_()
        weight = data(lib, (5, 3, 4), 36).requires_grad_()
        out = lib.nn.functional.bilinear(a, b, weight)
        return (out.grad_fn.name(), out.grad_fn.next_functions[0][0].name(), out,
                lib.autograd.grad(out.sum(), (a, b, weight)))
    outcome(program)


# -- _pack_padded_sequence --------------------------------------------------------------------

PACK_CASES = {
    "time major": ((3, 2, 4), [3, 2], False, "int64"),
    "batch first": ((3, 4, 2), [4, 2, 1], True, "int64"),
    "no features": ((2, 3), [2, 2, 1], False, "int64"),
    "unsorted": ((3, 2, 4), [2, 3], False, "int64"),
    "zero length": ((3, 2, 4), [3, 0], False, "int64"),
    "float lengths": ((3, 2, 4), [3, 2], False, "float32"),
    "batch size": ((3, 2, 4), [3, 2, 1], False, "int64"),
}


@pytest.mark.parametrize("case", PACK_CASES, ids=str)
def test_pack_padded_sequence_op(case: str) -> None:
    shape, lengths, batch_first, dtype = PACK_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 37).requires_grad_()
        packed, batch_sizes = lib._pack_padded_sequence(
            x, lib.tensor(lengths, dtype=getattr(lib, dtype)), batch_first)
        (grad,) = lib.autograd.grad((packed * packed).sum(), x)
        return packed.grad_fn.name(), packed, batch_sizes, grad
    outcome(program)


def test_pack_padded_sequence_records_torchs_node() -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (3, 2, 4), 38).requires_grad_()
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, [2, 3], enforce_sorted=False)
        return (packed.data.grad_fn.name(), packed.data, packed.batch_sizes,
                lib.autograd.grad(packed.data.sum(), x))
    outcome(program)


# -- _thnn_fused_lstm_cell, _thnn_fused_gru_cell (CUDA-only in torch: compared with torch's
# lstm_cell / gru_cell of the same weights, whose gates these take precomputed) ------------

def _cell_inputs(lib: Any, gates: int, hidden: int = 3) -> tuple:
    x = data(lib, (2, 4), 39).requires_grad_()
    hx = data(lib, (2, hidden), 40).requires_grad_()
    cx = data(lib, (2, hidden), 41).requires_grad_()
    w_ih = data(lib, (gates * hidden, 4), 42).requires_grad_()
    w_hh = data(lib, (gates * hidden, hidden), 43).requires_grad_()
    b_ih = data(lib, (gates * hidden,), 44).requires_grad_()
    b_hh = data(lib, (gates * hidden,), 45).requires_grad_()
    return x, hx, cx, w_ih, w_hh, b_ih, b_hh


def _lstm_step(lib: Any) -> Any:
    x, hx, cx, w_ih, w_hh, b_ih, b_hh = inputs = _cell_inputs(lib, 4)
    if lib is torch:
        hy, cy = torch.lstm_cell(x, (hx, cx), w_ih, w_hh, b_ih, b_hh)
    else:
        hy, cy, _ = runtime._thnn_fused_lstm_cell(x.mm(w_ih.t()), hx.mm(w_hh.t()), cx, b_ih,
                                                  b_hh)
    loss = (hy * data(lib, (2, 3), 46)).sum() + (cy * cy).sum()
    first = lib.autograd.grad(loss, inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), inputs)
    return hy, cy, first, second


def _gru_step(lib: Any) -> Any:
    x, hx, _, w_ih, w_hh, b_ih, b_hh = _cell_inputs(lib, 3)
    inputs = (x, hx, w_ih, w_hh, b_ih, b_hh)
    if lib is torch:
        hy = torch.gru_cell(x, hx, w_ih, w_hh, b_ih, b_hh)
    else:
        hy, _ = runtime._thnn_fused_gru_cell(x.mm(w_ih.t()), hx.mm(w_hh.t()), hx, b_ih, b_hh)
    first = lib.autograd.grad((hy * data(lib, (2, 3), 47)).sum(), inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), inputs)
    return hy, first, second


@pytest.mark.parametrize("step", [_lstm_step, _gru_step], ids=["lstm", "gru"])
def test_fused_cells_agree_with_torchs_cells(step: Any) -> None:
    close(step, rtol=1e-10, atol=1e-12)


def test_fused_cells_nodes_and_workspace() -> None:
    x, hx, cx, w_ih, w_hh, b_ih, b_hh = _cell_inputs(runtime, 4)
    hy, cy, workspace = runtime._thnn_fused_lstm_cell(x.mm(w_ih.t()), hx.mm(w_hh.t()), cx)
    assert hy.grad_fn.name() == "ThnnFusedLstmCellBackward0" and cy.grad_fn is hy.grad_fn
    assert tuple(workspace.shape) == (2, 12) and not workspace.requires_grad
    hy, workspace = runtime._thnn_fused_gru_cell(x.mm(w_ih[:9].t()), hx.mm(w_hh[:9].t()), hx)
    assert hy.grad_fn.name() == "ThnnFusedGruCellBackward0"
    assert tuple(workspace.shape) == (2, 15) and not workspace.requires_grad
    with pytest.raises(RuntimeError):
        runtime._thnn_fused_gru_cell(runtime.zeros(2, 9), runtime.zeros(2, 6), runtime.zeros(2, 3))


# -- torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell ----------------------------------

CELL_CALLS = {
    "lstm": lambda lib, x, hx, cx, w: lib.lstm_cell(x, (hx, cx), w(4, 4), w(4, 3), w(4), w(4)),
    "lstm, no bias": lambda lib, x, hx, cx, w: lib.lstm_cell(x, (hx, cx), w(4, 4), w(4, 3)),
    "gru": lambda lib, x, hx, cx, w: lib.gru_cell(x, hx, w(3, 4), w(3, 3), w(3), w(3)),
    "tanh": lambda lib, x, hx, cx, w: lib.rnn_tanh_cell(x, hx, w(1, 4), w(1, 3), w(1), w(1)),
    "relu": lambda lib, x, hx, cx, w: lib.rnn_relu_cell(x, hx, w(1, 4), w(1, 3)),
    "input size": lambda lib, x, hx, cx, w: lib.gru_cell(x, hx, w(3, 5), w(3, 3)),
    "hidden size": lambda lib, x, hx, cx, w: lib.rnn_tanh_cell(x, hx, w(1, 4), w(1, 2)),
    "batch": lambda lib, x, hx, cx, w: lib.rnn_relu_cell(x[:1], hx, w(1, 4), w(1, 3)),
    "one state": lambda lib, x, hx, cx, w: lib.lstm_cell(x, (hx,), w(4, 4), w(4, 3)),
    "1-d input": lambda lib, x, hx, cx, w: lib.rnn_tanh_cell(x[0], hx[0], w(1, 4), w(1, 3)),
}


@pytest.mark.parametrize("case", CELL_CALLS, ids=str)
def test_functional_cells(case: str) -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (2, 4), 48).requires_grad_()
        hx = data(lib, (2, 3), 49).requires_grad_()
        cx = data(lib, (2, 3), 50).requires_grad_()
        seeds = iter(range(51, 60))

        def weight(gates: int, columns: int | None = None) -> Any:
            shape = (gates * 3,) if columns is None else (gates * 3, columns)
            return data(lib, shape, next(seeds)).requires_grad_()
        result = CELL_CALLS[case](lib, x, hx, cx, weight)
        outputs = result if isinstance(result, tuple) else (result,)
        loss = sum((o * o).sum() for o in outputs)
        return ([o.grad_fn.name() for o in outputs], outputs,
                lib.autograd.grad(loss, (x, hx, cx), allow_unused=True))
    outcome(program)


CELL_ERRORS = {
    "weight_hh rows": lambda lib: lib.lstm_cell(
        lib.ones(2, 4), (lib.ones(2, 3), lib.ones(2, 3)), lib.ones(12, 4), lib.ones(11, 3)),
    "input before weights": lambda lib: lib.lstm_cell(
        lib.ones(2, 4), (lib.ones(2, 3), lib.ones(2, 3)), lib.ones(12, 5), lib.ones(11, 3)),
    "batch before weights": lambda lib: lib.gru_cell(
        lib.ones(2, 4), lib.ones(3, 3), lib.ones(9, 4), lib.ones(9, 2)),
    "weight_ih rows": lambda lib: lib.gru_cell(
        lib.ones(2, 4), lib.ones(2, 3), lib.ones(8, 4), lib.ones(9, 3)),
}


@pytest.mark.parametrize("case", CELL_ERRORS, ids=str)
def test_functional_cell_errors(case: str) -> None:
    outcome(CELL_ERRORS[case])


# -- torch.kl_div, torch.frobenius_norm ------------------------------------------------------

KL_DIV_CASES = {"default (none)": (None, False), "mean": (1, False), "sum, log target": (2, True),
                "none, log target": (0, True)}


@pytest.mark.parametrize("case", KL_DIV_CASES, ids=str)
def test_torch_kl_div(case: str) -> None:
    reduction, log_target = KL_DIV_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, (2, 4, 3), 60).requires_grad_()
        target = data(lib, (2, 4, 3), 61).softmax(-1)
        if log_target:
            target = target.log()
        args = (x.log_softmax(-1), target) + (() if reduction is None else (reduction,))
        loss = lib.kl_div(*args, log_target=log_target)
        return loss.grad_fn.name(), loss, lib.autograd.grad(loss.sum(), x)
    outcome(program)
    outcome(lambda lib: lib.kl_div(lib.ones(3, dtype=lib.int64), lib.ones(3)))


FROBENIUS_CASES = {"one dim": ([1], False), "two dims, kept": ([1, 2], True), "none": ([], False),
                   "three": ([0, 1, 2], False), "out of range": ([5], False),
                   "repeated": ([1, 1], False)}


@pytest.mark.parametrize("case", FROBENIUS_CASES, ids=str)
def test_torch_frobenius_norm(case: str) -> None:
    dims, keepdim = FROBENIUS_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, (2, 4, 3), 62).requires_grad_()
        result = lib.frobenius_norm(x, dims, keepdim)
        return result.grad_fn.name(), result, lib.autograd.grad(result.sum(), x)
    outcome(program)


# -- _masked_softmax ---------------------------------------------------------------------------

def _mask(lib: Any, shape: tuple, seed: int) -> Any:
    return lib.tensor(np.random.default_rng(seed).random(shape) > 0.6)


MASKED_SOFTMAX_CASES = {
    "last dim": ((2, 3, 4), (2, 3, 4), None, None),
    "dim 1": ((2, 3, 4), (2, 3, 4), 1, None),
    "type 2": ((2, 3, 4), (2, 3, 4), None, 2),
    "shape": ((2, 3, 4), (3, 4), None, None),
    "type 0 (broadcast, forward only)": ((2, 2, 3, 3), (3, 3), None, 0),
    "type 1 (broadcast, forward only)": ((2, 2, 3, 3), (2, 3), None, 1),
    "dim out of range": ((2, 3, 4), (2, 3, 4), 3, None),
}


@pytest.mark.parametrize("case", MASKED_SOFTMAX_CASES, ids=str)
def test_masked_softmax(case: str) -> None:
    shape, mask_shape, dim, mask_type = MASKED_SOFTMAX_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, shape, 63).requires_grad_()
        mask = _mask(lib, mask_shape, 64)
        y = lib._masked_softmax(x, mask, dim, mask_type)
        weights = data(lib, shape, 65)
        # a slice masked throughout is NaN in both: compare with NaN as 0
        (grad,) = lib.autograd.grad((y.nan_to_num(0.0) * weights).sum(), x)
        return y.grad_fn.name(), y.nan_to_num(0.0), grad
    outcome(program)


def test_masked_softmax_refuses_a_float_mask() -> None:
    outcome(lambda lib: lib._masked_softmax(data(lib, (2, 3), 1), data(lib, (2, 3), 2)))


# -- segment_reduce, _segment_reduce_backward ----------------------------------------------

SEGMENT_CASES = {
    reduce: (reduce, {"lengths": [[2, 0, 3], [1, 1, 3]]}) for reduce in
    ("sum", "mean", "max", "min", "prod", "amax")
}
SEGMENT_CASES.update({
    "offsets, initial": ("max", {"offsets": [[0, 2, 2, 5], [0, 1, 2, 5]], "initial": 0.5}),
    "prod, initial": ("prod", {"lengths": [[2, 3], [4, 1]], "initial": 2.0}),
    "bad reduce": ("median", {"lengths": [[2, 3], [1, 4]]}),
    "lengths sum": ("sum", {"lengths": [[2, 2], [2, 2]]}),
    "no lengths": ("sum", {}),
    "float lengths": ("sum", {"lengths": [[2.0, 3.0], [1.0, 4.0]]}),
    "lengths rank": ("sum", {"lengths": [2, 3]}),
})


@pytest.mark.parametrize("case", SEGMENT_CASES, ids=str)
def test_segment_reduce(case: str) -> None:
    reduce, given = SEGMENT_CASES[case]

    def program(lib: Any) -> Any:
        x = data(lib, (2, 5), 66)
        x = lib.where(x.abs() < 0.3, lib.zeros(()).double(), x).requires_grad_()
        kwargs = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in given.items()}
        y = lib.segment_reduce(x, reduce, axis=1, **kwargs)
        finite = y.nan_to_num(0.0, 0.0, 0.0)
        (grad,) = lib.autograd.grad((finite * data(lib, tuple(y.shape), 67)).sum(), x)
        return y.grad_fn.name(), finite, grad
    outcome(program)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "prod"])
def test_segment_reduce_backward_op(reduce: str) -> None:
    def program(lib: Any) -> Any:
        x = data(lib, (5, 3), 68)
        lengths = lib.tensor([2, 0, 3])
        output = lib.segment_reduce(x, reduce, lengths=lengths)
        return aten(lib, "_segment_reduce_backward")(
            data(lib, (3, 3), 69), output, x, reduce, lengths=lengths, initial=None)
    outcome(program)


def test_embedding_bag_with_max_norm() -> None:
    def program(lib: Any) -> Any:
        weight = (data(lib, (6, 3), 70) * 2).requires_grad_()
        out = lib.nn.functional.embedding_bag(lib.tensor([0, 2, 5, 2, 1]), weight,
                                              lib.tensor([0, 2]), max_norm=1.2, mode="sum")
        return out, lib.autograd.grad((out * out).sum(), weight), weight.detach()
    outcome(program)
