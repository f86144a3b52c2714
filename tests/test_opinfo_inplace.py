"""OpInfo's in-place variants (`x.abs_()`, `torch.abs_(x)`, `F.relu(x, inplace=True)`) against
torch's, on the samples tests/test_opinfo.py draws (its mapping, samples and MAX_SAMPLES,
imported from there):

- values, dtype and identity: the in-place call on a copy of the sample's input changes that
  copy to torch's values, keeps its dtype and returns the copy itself (the Tensor method, and
  the function `torch.NAME_` where torch has one), in float64, float32, int64 and bool;
- where torch refuses (an int64 tensor cannot hold a float result, a shape that broadcasting
  would change) gradgen raises the same class, with torch's message for the cases whose
  message is gradgen's own (CHECKED_MESSAGES), and the tensor is left as it was;
- gradients: the in-place call on a non-leaf (`x.clone().NAME_(...)`) then backward with the
  fixed cotangent gives torch's gradients in float64, where the OpInfo supports autograd
  (its supports_inplace_autograd flag too is left aside: torch's own tests skip those for
  complex reasons; on these real samples both libraries differentiate them);
- forward mode: the in-place call on a dual tensor gives torch's tangents, where the OpInfo
  supports forward AD;
- a leaf that requires grad, used in place, is refused with torch's error.

What gradgen does not do as torch does is in KNOWN_DIFFERENCES, each entry with its reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import runtime
import runtime.nn.functional as runtime_functional
from tests import test_opinfo as opinfo


def _torch_inplace(op: Any) -> Callable | None:
    return op.inplace_variant


def _gradgen_inplace(op: Any) -> Callable | None:
    """gradgen's in-place variant of an OpInfo: the Tensor method of the same name, the
    OpInfo's lambda with `torch` bound to gradgen, or the same functools.partial of gradgen's
    function."""
    variant = op.inplace_variant
    if variant is None or opinfo._gradgen_callable(op) is None:
        return None
    if isinstance(variant, functools.partial):
        function = getattr(runtime_functional, variant.func.__name__, None)
        return None if function is None else functools.partial(function, *variant.args,
                                                                **variant.keywords)
    name = getattr(variant, "__name__", "")
    if name == "<lambda>":
        source = opinfo._lambda_source(variant)
        if source is None:
            return None
        return eval(source, {"torch": runtime, "wrapper_set_seed": opinfo._call_in_order})
    method = getattr(runtime.Tensor, name, None)
    if method is None:
        return None
    return lambda self, *args, **kwargs: method(self, *args, **kwargs)


def _function_name(op: Any) -> str | None:
    """`abs_` when torch has `torch.abs_` as well as the Tensor method, and gradgen too."""
    name = getattr(op.inplace_variant, "__name__", "")
    if name.endswith("_") and callable(getattr(torch, name, None)):
        return name
    return None


OPS = [op for op in opinfo.OPS if _gradgen_inplace(op) is not None]
IDS = [opinfo._opinfo_name(op) for op in OPS]
FUNCTION_OPS = [op for op in OPS if _function_name(op) is not None]

# Errors whose message gradgen writes itself, after torch's: compared word for word. Others
# are compared by class: among them the shape refusals some ops word their own way in torch
# (addmm_, addmv_, addr_, baddbmm_: "Bad in-place call: input tensor size [1] and output
# tensor size [5, 10] should match"; masked_scatter_: expand's message), which gradgen gives
# as every in-place op's "output with shape [1] doesn't match the broadcast shape [5, 10]",
# and the forward-mode refusals of acosh_, asinh_, atanh_ (gradgen's message names the spec
# entry to complete).
CHECKED_MESSAGES = re.compile(
    r"can't be cast to the desired output type|a leaf Variable that requires grad|"
    r"doesn't match the broadcast shape")

# (OpInfo name, variant, check) -> (why gradgen differs, which samples). `check` is one of
# "float64", "float32", "int64", "bool", "function", "backward", "forward_ad", "leaf", or
# "*". With a predicate, the samples it picks are left out; with None the whole check is a strict
# expected failure. test_opinfo's own KNOWN_DIFFERENCES apply as well (their samples are
# the same), without being strict: an in-place call may raise where the out-of-place one
# differed (an int64 tensor cannot hold cosh's float result), which then agrees.
KNOWN_DIFFERENCES: dict[tuple[str, str, str], tuple[str, Callable[[Any], bool] | None]] = {
    **{("addbmm", "", check): (
        "torch's addbmm_ resizes a self of another shape to the result's (a [1] tensor "
        "becomes [5, 10], a quirk of its out= kernel; addmm_ and baddbmm_ refuse such a "
        "self); gradgen refuses it as every other in-place op does",
        lambda sample: tuple(sample.input.shape) != (sample.args[0].shape[1],
                                                      sample.args[1].shape[2]))
       for check in ("float64", "float32", "int64", "backward", "leaf")},
}

# In-place variants whose refusal gradgen words as every other op's, where torch words it
# its own way: the class is compared, not the message.
MESSAGE_DIFFERENCES = {
    "mvlgamma_": "torch's own check: 'mvlgamma: result type Long can't be cast to the "
                 "desired output type Float' (the two types named the other way round); "
                 "gradgen's is the generic 'result type Float can't be cast to the desired "
                 "output type Long'",
    "ldexp_": "torch's ldexp_ is mul_ by 2 ** other and words it 'ldexp can't be cast to "
              "the desired output type Long'; gradgen's is the generic message",
}


def _known(op: Any, check: str) -> tuple[tuple[str, Callable[[Any], bool] | None], bool] | None:
    """The known difference for a check, and whether it is strict (this file's own)."""
    base = "forward" if check in ("float64", "function") else check
    for key in (check, "*"):
        known = KNOWN_DIFFERENCES.get((op.name, op.variant_test_name, key))
        if known is not None:
            return known, True
    for key in (base, "*"):
        known = opinfo.KNOWN_DIFFERENCES.get((op.name, op.variant_test_name, key))
        if known is not None:
            return known, False
    return None


def _run_check(op: Any, check: str, body: Callable[[Callable[[Any], bool]], None]) -> None:
    known = _known(op, check)
    if known is None:
        body(lambda sample: False)
        return
    (reason, predicate), strict = known
    if predicate is not None:
        body(predicate)
        return
    opinfo._compared[0] = 0
    try:
        body(lambda sample: False)
    except Exception:  # noqa: BLE001 - any failure is the known one
        pytest.xfail(reason)
    if strict and opinfo._compared[0]:
        pytest.fail(f"{opinfo._opinfo_name(op)} {check} passes now: remove it from "
                    "KNOWN_DIFFERENCES")


# -- values, dtype, identity, errors -------------------------------------------------------


def _outcome(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return None, error


def _compare_errors(got: BaseException | None, want: BaseException, where: str,
                    name: str = "") -> None:
    assert got is not None, f"{where}: gradgen returns, torch raises {want!r}"
    assert isinstance(got, type(want)), \
        f"{where}: {type(got).__name__}: {got} (torch: {type(want).__name__}: {want})"
    if CHECKED_MESSAGES.search(str(want)) and name not in MESSAGE_DIFFERENCES:
        assert str(got) == str(want), where


def _check_inplace_values(op: Any, dtype: torch.dtype, torch_call: Callable,
                          gradgen_call: Callable, left_out: Callable[[Any], bool]) -> None:
    if dtype not in op.supported_dtypes("cpu"):
        return
    for index, sample in opinfo._samples(op, dtype, False, left_out):
        where = f"sample {index}: {sample.summary()}"
        if not isinstance(sample.input, torch.Tensor):
            continue
        theirs = sample.input.clone()
        want, torch_error = _outcome(
            lambda theirs=theirs, sample=sample: torch_call(theirs, *sample.args, **sample.kwargs))
        ours = opinfo.to_gradgen(sample.input, False).clone()
        before = ours.detach().numpy().copy()
        got, error = _outcome(lambda ours=ours, sample=sample: gradgen_call(
            ours, *opinfo.to_gradgen(sample.args, False),
            **opinfo.to_gradgen(sample.kwargs, False)))
        if torch_error is not None:
            _compare_errors(error, torch_error, where, getattr(torch_call, "__name__", ""))
            np.testing.assert_array_equal(ours.numpy(), before, err_msg=f"{where}: changed")
            continue
        if error is not None:
            raise AssertionError(f"{where}: gradgen raises {error!r}, torch returns") from error
        assert (got is ours) == (want is theirs), f"{where}: the result is not self"
        loose = dtype == torch.float32
        opinfo.assert_same(ours, theirs, where, rtol=1e-5 if loose else 1e-7,
                           atol=1e-5 if loose else 1e-7)


def _method_check(op: Any, dtype: torch.dtype) -> Callable[[Callable[[Any], bool]], None]:
    return lambda left_out: _check_inplace_values(
        op, dtype, _torch_inplace(op), _gradgen_inplace(op), left_out)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64, torch.bool],
                         ids=str)
@pytest.mark.parametrize("op", OPS, ids=IDS)
def test_inplace_values(op: Any, dtype: torch.dtype) -> None:
    _run_check(op, str(dtype).removeprefix("torch."), _method_check(op, dtype))


@pytest.mark.parametrize("op", FUNCTION_OPS, ids=[opinfo._opinfo_name(op) for op in FUNCTION_OPS])
def test_inplace_function(op: Any) -> None:
    """torch.NAME_(x, ...), gradgen's function of that name, in float64 and int64."""
    name = _function_name(op)
    function = getattr(runtime, name, None)
    assert function is not None, f"torch.{name} is not in gradgen"
    for dtype in (torch.float64, torch.int64):
        _run_check(op, "function", lambda left_out, dtype=dtype: _check_inplace_values(
            op, dtype, getattr(torch, name), function, left_out))


# -- gradients ------------------------------------------------------------------------------


def _inplace_gradients(op: Any, sample: Any, library: Any) -> list:
    """d(output . w)/d(inputs) through the in-place call on a clone of the input."""
    if library is torch:
        values = (sample.input, sample.args, sample.kwargs)
        call, kind = _torch_inplace(op), torch.Tensor
    else:
        values = opinfo.to_gradgen((sample.input, sample.args, sample.kwargs))
        call, kind = _gradgen_inplace(op), runtime.Tensor
    first, args, kwargs = values
    inputs = opinfo._differentiable(values, kind)
    result = sample.output_process_fn_grad(call(first.clone(), *args, **kwargs))
    outputs = [o for o in opinfo._leaves(result, kind) if o.requires_grad]
    if not inputs or not outputs:
        return []
    grads = opinfo._reverse(library, inputs, outputs, create_graph=False)
    return [opinfo._array(g) for g in grads]


def _check_inplace_derivatives(op: Any, left_out: Callable[[Any], bool],
                               derivatives: Callable[[Any, Any, Any], list]) -> None:
    """`derivatives(op, sample, library)` (gradients or tangents through the in-place call)
    of gradgen against torch's on every float64 sample, or the same refusal."""
    for index, sample in opinfo._samples(op, torch.float64, True, left_out):
        where = f"sample {index}: {sample.summary()}"
        want, torch_error = _outcome(lambda sample=sample: derivatives(op, sample, torch))
        got, error = _outcome(lambda sample=sample: derivatives(op, sample, runtime))
        if torch_error is not None:
            _compare_errors(error, torch_error, where)
            continue
        if error is not None:
            raise AssertionError(f"{where}: gradgen raises {error!r}, torch returns") from error
        opinfo.assert_same_derivatives(got, want, where)


GRAD_OPS = [op for op in OPS if op.supports_autograd]


@pytest.mark.parametrize("op", GRAD_OPS, ids=[opinfo._opinfo_name(op) for op in GRAD_OPS])
def test_inplace_backward(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "backward", lambda left_out: _check_inplace_derivatives(
            op, left_out, _inplace_gradients))


# -- forward mode ---------------------------------------------------------------------------


def _inplace_tangents(op: Any, sample: Any, library: Any) -> list:
    """The tangents of the in-place call's outputs, for fixed random input tangents (the
    input a dual tensor of its own, written in place)."""
    forward_ad = library.autograd.forward_ad
    kind = torch.Tensor if library is torch else runtime.Tensor
    call = _torch_inplace(op) if library is torch else _gradgen_inplace(op)
    with forward_ad.dual_level():
        first, rest, kwargs = opinfo.dual_arguments(sample, library, copy=True)
        result = sample.output_process_fn_grad(call(first, *rest, **kwargs))
        return [opinfo._array(forward_ad.unpack_dual(o).tangent)
                for o in opinfo._leaves(result, kind) if o.dtype.is_floating_point]


FORWARD_AD_OPS = [op for op in OPS if op.supports_forward_ad]


@pytest.mark.parametrize("op", FORWARD_AD_OPS,
                         ids=[opinfo._opinfo_name(op) for op in FORWARD_AD_OPS])
def test_inplace_forward_ad(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "forward_ad", lambda left_out: _check_inplace_derivatives(
            op, left_out, _inplace_tangents))


# -- a leaf that requires grad, used in place ------------------------------------------------


def _check_leaf(op: Any, left_out: Callable[[Any], bool]) -> None:
    """The first sample torch refuses is refused by gradgen in the same words, and leaves
    the tensor as it was; torch refuses at least one (not a vacuous check)."""
    seen = 0
    for index, sample in opinfo._samples(op, torch.float64, True, left_out):
        seen += 1
        if not (isinstance(sample.input, torch.Tensor) and sample.input.requires_grad):
            continue
        where = f"sample {index}: {sample.summary()}"
        want, torch_error = _outcome(lambda sample=sample: _torch_inplace(op)(
            sample.input, *sample.args, **sample.kwargs))
        ours = opinfo.to_gradgen(sample.input)
        before = ours.detach().numpy().copy()
        got, error = _outcome(lambda sample=sample, ours=ours: _gradgen_inplace(op)(
            ours, *opinfo.to_gradgen(sample.args), **opinfo.to_gradgen(sample.kwargs)))
        if torch_error is None:
            assert error is None, f"{where}: gradgen raises {error!r}, torch returns"
            continue
        _compare_errors(error, torch_error, where)
        np.testing.assert_array_equal(ours.detach().numpy(), before, err_msg=f"{where}: changed")
        return  # one refused sample is enough
    assert not seen, "torch refused none of the samples"


@pytest.mark.parametrize("op", GRAD_OPS, ids=[opinfo._opinfo_name(op) for op in GRAD_OPS])
def test_inplace_on_a_leaf_that_requires_grad(op: Any) -> None:
    if torch.float64 in op.supported_backward_dtypes("cpu"):
        _run_check(op, "leaf", lambda left_out: _check_leaf(op, left_out))


def test_the_mapping() -> None:
    """Most in-place variants of the mapped OpInfos are gradgen's too, among them the ones
    that were compared nowhere else."""
    assert len(OPS) >= 140
    names = {getattr(op.inplace_variant, "__name__", "") for op in OPS}
    for expected in ("abs_", "addbmm_", "atan2_", "index_copy_", "put_", "triu_",
                     "true_divide_", "mvlgamma_", "nextafter_", "igammac_"):
        assert expected in names
    assert len(FUNCTION_OPS) >= 40


def test_the_shape_is_checked_before_the_dtype() -> None:
    """An int64 tensor that neither holds the float result nor keeps its shape: torch names
    the shape (gradgen named the dtype)."""
    for library in (torch, runtime):
        x = library.ones(5, 1, dtype=library.int64)
        with pytest.raises(RuntimeError) as raised:
            x.div_(library.ones(5, dtype=library.int64))
        assert str(raised.value) == "output with shape [5, 1] doesn't match the broadcast " \
                                    "shape [5, 5]"
