"""torch.func's forward transforms nested in one another (runtime/func.py, _nested_forward):
`jacfwd(jacfwd(f))`, a jvp inside a jacfwd, a jvp of a jvp. gradgen has one dual level, so
the inner transform takes its products by reverse mode; the values must still be torch's
(float64, to rounding), as the Jacobians-and-Hessians tutorial checks them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func as torch_func

import runtime
import runtime.func as runtime_func


def _inputs(lib: object) -> tuple:
    rng = np.random.default_rng(3)
    weight, bias, x, v, u = (rng.standard_normal(shape) for shape in
                             ((4, 5), (4,), (5,), (5,), (5,)))
    return tuple(lib.tensor(a, dtype=lib.float64) for a in (weight, bias, x, v, u))


def _predict(lib: object) -> object:
    def predict(weight, bias, x):
        return lib.nn.functional.linear(x, weight, bias).tanh()
    return predict


def _cases(lib: object, func: object) -> dict:
    weight, bias, x, v, u = _inputs(lib)
    predict = _predict(lib)

    def scalar(x):
        return (x.sin() * x).sum()

    def jvp_of(x):
        return func.jvp(lambda y: predict(weight, bias, y), (x,), (v,))[1]

    return {
        "jacfwd(jacfwd)": func.jacfwd(func.jacfwd(predict, argnums=2), argnums=2)(
            weight, bias, x),
        "jacfwd(jacfwd) of a scalar": func.jacfwd(func.jacfwd(scalar))(x),
        "jacfwd over a weight": func.jacfwd(func.jacfwd(predict, argnums=0), argnums=2)(
            weight, bias, x),
        "jacfwd(jvp)": func.jacfwd(jvp_of)(x),
        "jvp(jvp)": func.jvp(jvp_of, (x,), (u,)),
        "hessian equals jacfwd(jacfwd)": func.hessian(scalar)(x) - func.jacfwd(
            func.jacfwd(scalar))(x),
    }


@pytest.mark.parametrize("case", list(_cases(torch, torch_func)))
def test_nested_forward_transforms_as_torch(case: str) -> None:
    theirs = _cases(torch, torch_func)[case]
    ours = _cases(runtime, runtime_func)[case]
    theirs, ours = ((t,) if not isinstance(t, tuple) else t for t in (theirs, ours))
    assert len(ours) == len(theirs)
    for mine, expected in zip(ours, theirs, strict=True):
        assert tuple(mine.shape) == tuple(expected.shape)
        assert str(mine.dtype) == str(expected.dtype)
        np.testing.assert_allclose(mine.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-10, atol=1e-12)


def test_the_dual_level_is_closed_afterwards() -> None:
    weight, bias, x, _, _ = _inputs(runtime)
    runtime_func.jacfwd(runtime_func.jacfwd(_predict(runtime), argnums=2), argnums=2)(
        weight, bias, x)
    from runtime import forward_grad

    assert forward_grad.current_level() == -1 and not forward_grad.enabled
    # and a plain forward-mode transform still takes the forward path afterwards
    assert not runtime_func._nested_forward()
