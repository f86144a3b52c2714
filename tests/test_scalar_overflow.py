"""A Scalar argument (an alpha, a fill value, a bound, an activation's parameter) as torch's
kernels convert it to the dtype they compute in: a finite number that dtype cannot hold raises
"value cannot be converted to type float without overflow" (c10::Half, int8_t, ...), NaN or
an infinity is refused by an integer dtype, and add's alpha is checked against the result
dtype it takes no part in promoting. Every case runs on gradgen and on torch: the same
exception class and message, or the same dtype and values; an in-place call that raises
leaves its tensor as it was."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime

BIG = 1e39  # beyond float32 (and bfloat16), within float64
HALF_BIG = 70000.0  # beyond float16, within float32


def _zeros(t, dtype=None):
    return t.zeros(3, dtype=dtype or t.float32)


def _mask(t):
    return t.tensor([True, False, True])


# name -> the call on a torch-like module `t`
CASES = {
    # add / sub / rsub: alpha against the result dtype
    "add_ alpha": lambda t: _zeros(t).add_(t.ones(3), alpha=BIG),
    "add alpha": lambda t: _zeros(t).add(t.ones(3), alpha=-BIG),
    "add large alpha": lambda t: t.zeros(5000).add_(t.ones(5000), alpha=BIG),
    "add alpha scalar other": lambda t: _zeros(t).add(2.0, alpha=BIG),
    "sub alpha": lambda t: t.sub(_zeros(t), t.ones(3), alpha=BIG),
    "sub_ alpha": lambda t: _zeros(t).sub_(t.ones(3), alpha=BIG),
    "rsub alpha": lambda t: t.rsub(_zeros(t), t.ones(3), alpha=BIG),
    "add alpha inf": lambda t: _zeros(t).add_(t.ones(3), alpha=float("inf")),
    "add alpha nan": lambda t: _zeros(t).add_(t.ones(3), alpha=float("nan")),
    "add alpha float64": lambda t: _zeros(t).add(t.ones(3, dtype=t.float64), alpha=BIG),
    "add alpha float16": lambda t: _zeros(t, t.float16).add_(t.ones(3, dtype=t.float16),
                                                            alpha=HALF_BIG),
    "add alpha bfloat16": lambda t: _zeros(t, t.bfloat16).add_(t.ones(3, dtype=t.bfloat16),
                                                              alpha=BIG),
    "add alpha int32": lambda t: _zeros(t, t.int32).add_(t.ones(3, dtype=t.int32), alpha=2**40),
    "add alpha int8": lambda t: _zeros(t, t.int8).add_(t.ones(3, dtype=t.int8), alpha=300),
    "add alpha beyond 64 bits": lambda t: t.ones(2, dtype=t.int64).add(
        t.ones(2, dtype=t.int64), alpha=2**70),
    "add float alpha int": lambda t: t.ones(3, dtype=t.int32).add(t.ones(3, dtype=t.int32),
                                                                  alpha=1.5),
    "add_ float alpha int": lambda t: t.ones(3, dtype=t.int32).add_(t.ones(3, dtype=t.int32),
                                                                   alpha=1.5),
    "add float alpha int scalar": lambda t: t.ones(3, dtype=t.int32).add(2, alpha=1.5),
    "add float alpha int float": lambda t: t.ones(3, dtype=t.int32).add(t.ones(3), alpha=1.5),
    "add bool alpha float": lambda t: t.ones(3).add(t.ones(3), alpha=True),
    "add int alpha bool": lambda t: t.ones(3, dtype=t.bool).add(t.ones(3, dtype=t.bool),
                                                                alpha=2),
    "add int alpha int": lambda t: t.ones(3, dtype=t.int32).add(t.ones(3, dtype=t.int32),
                                                                alpha=3),
    "addcmul value": lambda t: _zeros(t).addcmul(t.ones(3), t.ones(3), value=BIG),
    "addcmul_ value": lambda t: _zeros(t).addcmul_(t.ones(3), t.ones(3), value=BIG),
    "addcdiv value": lambda t: _zeros(t).addcdiv(t.ones(3), t.ones(3), value=BIG),
    "addcmul int8 value": lambda t: _zeros(t, t.int8).addcmul(_zeros(t, t.int8),
                                                             _zeros(t, t.int8), value=300),
    "addcmul float16 value": lambda t: _zeros(t, t.float16).addcmul(
        _zeros(t, t.float16), _zeros(t, t.float16), value=HALF_BIG),
    # fills
    "fill_": lambda t: _zeros(t).fill_(BIG),
    "fill_ int8": lambda t: _zeros(t, t.int8).fill_(300),
    "fill_ float16": lambda t: _zeros(t, t.float16).fill_(HALF_BIG),
    "fill_ tensor value": lambda t: _zeros(t, t.int8).fill_(t.tensor(300)),
    "full": lambda t: t.full((3,), BIG),
    "full int8": lambda t: t.full((2,), 300, dtype=t.int8),
    "masked_fill": lambda t: _zeros(t).masked_fill(_mask(t), BIG),
    "masked_fill_": lambda t: _zeros(t).masked_fill_(_mask(t), BIG),
    "masked_fill tensor value": lambda t: _zeros(t).masked_fill(
        _mask(t), t.tensor(BIG, dtype=t.float64)),
    "masked_fill int8 nan": lambda t: _zeros(t, t.int8).masked_fill(_mask(t), float("nan")),
    "index_fill": lambda t: _zeros(t).index_fill(0, t.tensor([0]), BIG),
    "index_fill int8": lambda t: _zeros(t, t.int8).index_fill(0, t.tensor([0]), 300),
    "scatter value": lambda t: _zeros(t).scatter(0, t.tensor([0]), BIG),
    "scatter int8 value": lambda t: _zeros(t, t.int8).scatter(0, t.tensor([0]), 300),
    "fill_diagonal_": lambda t: t.zeros(2, 2).fill_diagonal_(BIG),
    "fill_diagonal_ int8": lambda t: t.zeros(2, 2, dtype=t.int8).fill_diagonal_(300),
    "setitem index": lambda t: _zeros(t).__setitem__(0, BIG),
    "setitem slice": lambda t: _zeros(t).__setitem__(slice(0, 2), BIG),
    "setitem mask": lambda t: _zeros(t).__setitem__(_mask(t), BIG),
    "setitem int8": lambda t: _zeros(t, t.int8).__setitem__(0, 300),
    "pad value": lambda t: t.nn.functional.pad(_zeros(t), (1, 1), value=BIG),
    "pad int8 value": lambda t: t.nn.functional.pad(_zeros(t, t.int8), (1, 1), value=300),
    # bounds
    "clamp max": lambda t: _zeros(t).clamp(max=BIG),
    "clamp min": lambda t: _zeros(t).clamp(min=-BIG),
    "clamp_": lambda t: _zeros(t).clamp_(max=BIG),
    "clamp_min": lambda t: _zeros(t).clamp_min(BIG),
    "clamp_max": lambda t: _zeros(t).clamp_max(BIG),
    "clip": lambda t: _zeros(t).clip(-BIG, BIG),
    "clamp int8": lambda t: _zeros(t, t.int8).clamp(min=-300),
    "clamp int8 by a float": lambda t: _zeros(t, t.int8).clamp(max=300.5),
    "clamp float16": lambda t: _zeros(t, t.float16).clamp(max=HALF_BIG),
    "where scalar other": lambda t: t.where(_mask(t), _zeros(t), BIG),
    "where scalar self": lambda t: t.where(_mask(t), BIG, _zeros(t)),
    "where int8": lambda t: t.where(_mask(t), _zeros(t, t.int8), 300),
    "where float16 (computed in float32)": lambda t: t.where(_mask(t), _zeros(t, t.float16),
                                                             HALF_BIG),
    "lerp weight": lambda t: t.lerp(_zeros(t), _zeros(t) + 1, BIG),
    "lerp_ weight": lambda t: _zeros(t).lerp_(_zeros(t), BIG),
    "logit eps": lambda t: _zeros(t).logit(eps=BIG),
    "linspace": lambda t: t.linspace(0, BIG, 3),
    "linspace float64": lambda t: t.linspace(0, BIG, 3, dtype=t.float64),
    "logspace": lambda t: t.logspace(0, BIG, 3),
    # products with beta and alpha
    "addmm alpha": lambda t: t.addmm(t.zeros(2, 2), t.ones(2, 2), t.ones(2, 2), alpha=BIG),
    "addmm beta": lambda t: t.addmm(t.zeros(2, 2), t.ones(2, 2), t.ones(2, 2), beta=BIG),
    "addmm float16 (computed in float32)": lambda t: t.addmm(
        t.zeros(2, 2, dtype=t.float16), t.ones(2, 2, dtype=t.float16),
        t.ones(2, 2, dtype=t.float16), alpha=HALF_BIG),
    "addmv alpha": lambda t: t.addmv(t.zeros(2), t.ones(2, 2), t.ones(2), alpha=BIG),
    "addr beta": lambda t: t.addr(t.zeros(2, 2), t.ones(2), t.ones(2), beta=BIG),
    "addbmm alpha": lambda t: t.addbmm(t.zeros(2, 2), t.ones(1, 2, 2), t.ones(1, 2, 2),
                                       alpha=BIG),
    "baddbmm beta": lambda t: t.baddbmm(t.zeros(1, 2, 2), t.ones(1, 2, 2), t.ones(1, 2, 2),
                                        beta=BIG),
    "index_add alpha": lambda t: _zeros(t).index_add(0, t.tensor([0]), t.ones(1), alpha=BIG),
    # activations' parameters
    "threshold": lambda t: t.nn.functional.threshold(_zeros(t), BIG, 1.0),
    "threshold_ value": lambda t: t.nn.functional.threshold_(_zeros(t), 0.5, BIG),
    "hardtanh": lambda t: t.nn.functional.hardtanh(_zeros(t), -BIG, BIG),
    "hardtanh_": lambda t: t.nn.functional.hardtanh_(_zeros(t), -BIG, BIG),
    "hardtanh float16": lambda t: t.nn.functional.hardtanh(_zeros(t, t.float16), -HALF_BIG,
                                                           HALF_BIG),
    "leaky_relu": lambda t: t.nn.functional.leaky_relu(_zeros(t), BIG),
    "leaky_relu_": lambda t: t.nn.functional.leaky_relu_(_zeros(t), BIG),
    "leaky_relu float16 (slope in float32)": lambda t: t.nn.functional.leaky_relu(
        t.tensor([0.0, -1.0, 2.0], dtype=t.float16), HALF_BIG),
    "elu": lambda t: t.nn.functional.elu(_zeros(t), alpha=BIG),
    "elu_": lambda t: t.nn.functional.elu_(_zeros(t), BIG),
    "celu": lambda t: t.nn.functional.celu(_zeros(t), alpha=BIG),
    "softplus beta": lambda t: t.nn.functional.softplus(_zeros(t), beta=BIG),
    "softplus threshold": lambda t: t.nn.functional.softplus(_zeros(t), threshold=BIG),
    "softplus float16 (beta in float32)": lambda t: t.nn.functional.softplus(
        t.tensor([0.0, -1.0, 1e-3], dtype=t.float16), HALF_BIG),
    "hardshrink": lambda t: t.nn.functional.hardshrink(_zeros(t), BIG),
    "hardshrink negative": lambda t: t.nn.functional.hardshrink(_zeros(t), -BIG),
    "softshrink": lambda t: t.nn.functional.softshrink(_zeros(t), BIG),
    "softshrink negative": lambda t: t.nn.functional.softshrink(_zeros(t), -1.0),
    "rrelu eval": lambda t: t.nn.functional.rrelu(_zeros(t), BIG, BIG),
    # what torch takes as it is (no checked conversion): these must not raise
    "mul by a number": lambda t: _zeros(t).mul(BIG),
    "add a number": lambda t: _zeros(t).add_(BIG),
    "add an int8 number": lambda t: _zeros(t, t.int8).add(300),
    "pow": lambda t: (_zeros(t) + 2).pow(BIG),
}


def _outcome(module, case):
    """What a case gives: ("raised", class, message) or ("ok", dtype, values)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a numpy warning from gradgen fails the case)
        try:
            result = CASES[case](module)
        except (RuntimeError, OverflowError, TypeError, ValueError) as error:
            return "raised", type(error).__name__, str(error)
    if result is None:  # __setitem__
        return "ok", None, None
    return "ok", str(result.dtype).removeprefix("torch."), \
        result.detach().double().numpy().tolist()


@pytest.mark.parametrize("case", sorted(CASES))
def test_scalar_argument_as_torch_converts_it(case):
    got, expected = _outcome(runtime, case), _outcome(torch, case)
    assert got[:2] == expected[:2], (got, expected)
    if got[0] == "raised":
        assert got[2] == expected[2]
    elif got[2] is not None:
        np.testing.assert_array_equal(np.array(got[2]), np.array(expected[2]))


@pytest.mark.parametrize("call", [
    lambda x: x.add_(runtime.ones(3), alpha=BIG),
    lambda x: x.sub_(runtime.ones(3), alpha=BIG),
    lambda x: x.addcmul_(runtime.ones(3), runtime.ones(3), value=BIG),
    lambda x: x.fill_(BIG),
    lambda x: x.masked_fill_(runtime.tensor([True, False, True]), BIG),
    lambda x: x.clamp_(max=BIG),
    lambda x: x.lerp_(runtime.ones(3), BIG),
    lambda x: x.__setitem__(0, BIG),
    lambda x: x.fill_diagonal_(BIG) if x.ndim == 2 else x.index_fill_(0, runtime.tensor([1]),
                                                                        BIG),
    lambda x: runtime.nn.functional.leaky_relu_(x, BIG),
    lambda x: runtime.nn.functional.hardtanh_(x, -BIG, BIG),
])
def test_a_refused_in_place_call_leaves_the_tensor_unchanged(call):
    x = runtime.tensor([1.5, -2.0, 3.0])
    version = x._version
    with pytest.raises(RuntimeError, match="without overflow"):
        call(x)
    assert x.tolist() == [1.5, -2.0, 3.0] and x._version == version


@pytest.mark.parametrize("name, options", [
    ("SGD", {"lr": BIG}), ("SGD", {"lr": BIG, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "weight_decay": BIG}), ("Adam", {"lr": 1e300}),
    ("AdamW", {"lr": 1e300}), ("RMSprop", {"lr": 1e300}), ("Adagrad", {"lr": 1e300}),
    ("Adadelta", {"lr": 1e300}), ("Adamax", {"lr": 1e300}), ("NAdam", {"lr": 1e300}),
    ("Rprop", {"lr": 1e300}), ("Adam", {"lr": 1e-2, "eps": BIG}),
])
def test_an_optimizer_with_a_hyperparameter_float32_cannot_hold(name, options):
    """torch's optimizers refuse (at the step) a learning rate or weight decay float32 cannot
    hold, through their kernels' checked conversion; an eps that large is added as a number,
    unchecked, in both."""
    def run(t):
        param = t.nn.Parameter(t.ones(5))
        optimizer = getattr(t.optim, name)([param], **options)
        try:
            for _ in range(2):
                optimizer.zero_grad()
                (param * t.arange(5.0)).sum().backward()
                optimizer.step()
        except RuntimeError as error:
            return str(error)
        return param.detach().numpy().tolist()

    got, expected = run(runtime), run(torch)
    if isinstance(expected, str):
        assert got == expected
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6)
