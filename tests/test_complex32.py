"""complex32 (torch's ComplexHalf: two float16 parts) against torch: conversions rounded as
torch's, printing, its parts, the few ops torch's CPU has for it, and gradients through
x.chalf(). numpy's complex32 is the ml_dtypes package's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime

VALUES = [1.5, -2.3, 1 + 2**-11 + 2**-40, 65504.0, 1e5, 1e-8, -0.0, float("inf")]


def _facts(value: Any) -> Any:
    if isinstance(value, torch.Tensor | runtime.Tensor):
        shown = value.cfloat() if str(value.dtype) == "torch.complex32" else value
        return (str(value.dtype), tuple(value.shape),
                np.asarray(shown.detach().tolist(), dtype=object).tolist())
    return value


def same(program: Any) -> None:
    want = [_facts(v) for v in program(torch)]
    got = [_facts(v) for v in program(runtime)]
    assert got == want


def test_the_dtype() -> None:
    same(lambda t: [repr(t.complex32), repr(t.chalf), t.complex32.is_complex,
                    t.complex32.itemsize, t.complex32.is_floating_point,
                    t.ones(2).chalf().type()])


def test_conversions() -> None:
    def program(t: Any) -> list:
        x = t.tensor(VALUES, dtype=t.float64)
        c = x.chalf()
        return [c, x.to(t.complex32), x.float().chalf(), x.half().chalf(), c.cfloat(),
                c.cdouble(), t.zeros(2, dtype=t.complex32), t.ones(2, 3, dtype=t.chalf),
                t.tensor([1 + 2j, 3.3 - 1e5j], dtype=t.complex32), repr(c), str(c[:3])]

    same(program)


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_parts_and_ops_torch_has() -> None:
    def program(t: Any) -> list:
        c = t.tensor([1.5 + 2j, -2.3 - 0.25j, 3 + 0j], dtype=t.complex32)
        pairs = t.view_as_real(c)
        return [pairs, c.real, c.imag, t.view_as_complex(pairs), c + c, c * c, c - c, c.abs(),
                c.conj().resolve_conj(), t.cat([c, c]), t.ones(2, dtype=t.half) * 1j,
                t.complex(pairs[:, 0], pairs[:, 1].contiguous()), c == c]

    same(program)


def test_numpy_refuses_complex32_as_torch_does() -> None:
    for lib in (torch, runtime):
        with pytest.raises(TypeError, match="Got unsupported ScalarType ComplexHalf"):
            lib.ones(2).chalf().numpy()


def test_gradients_through_chalf() -> None:
    """As OpInfo's chalf samples: the gradient of a complex32 result reaches a float64 input
    as the real part of its float16-rounded gradient."""
    weights = np.random.default_rng(0).standard_normal((5, 7, 2))

    def program(t: Any) -> list:
        x = t.tensor(np.random.default_rng(1).standard_normal((5, 7)), requires_grad=True)
        y = x.chalf()
        total = (t.view_as_real(y) * t.tensor(weights)).sum()
        (grad,) = t.autograd.grad(total, x, create_graph=True)
        second = t.autograd.grad((grad * grad).sum(), x, allow_unused=True)[0] \
            if grad.requires_grad else None
        return [y, grad, grad.requires_grad, second]

    same(program)
