"""torch._fused_rms_norm through the spec entry against torch 2.13's op: the normalised
output and rstd, their dtypes (half precision normalised in float32), eps's default, and
the gradients of input and weight through both outputs. (torch records its CPU composite's
nodes for this op, gradgen the entry's FusedRmsNormBackward0: the values are compared.)"""

from __future__ import annotations

import pytest
import torch

from tests.names_oracle import same

CASES = {
    "last_dim": ((2, 3, 4), [4], True, 1e-5),
    "two_dims_default_eps": ((2, 3, 4), [3, 4], True, None),
    "no_weight": ((3, 5), [5], False, 0.1),
    "one_row": ((6,), [6], True, None),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_values_and_gradients(case, dtype):
    shape, normalized, with_weight, eps = CASES[case]

    def program(t):
        t.manual_seed(0)
        kind = getattr(t, dtype)
        x = t.randn(*shape, dtype=kind, requires_grad=True)
        w = t.randn(*normalized, dtype=kind, requires_grad=True) if with_weight else None
        out, rstd = t._fused_rms_norm(x, normalized, w, eps)
        (out.pow(2).sum() + rstd.sum() * 3).backward()
        return [out.detach(), rstd.detach(), x.grad, None if w is None else w.grad]

    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {}
    same(program, **tolerance)


def test_half_precision_is_normalised_in_float32():
    def program(t):
        t.manual_seed(0)
        x = t.randn(3, 8).half()
        out, rstd = t._fused_rms_norm(x, [8], t.ones(8).half(), None)
        return [out, rstd]

    same(program, rtol=1e-3, atol=1e-3)


def test_node_and_double_backward():
    import runtime

    x = runtime.randn(2, 5, dtype=runtime.float64, requires_grad=True)
    out, _ = runtime._fused_rms_norm(x, [5], None, 1e-6)
    assert out.grad_fn.name() == "FusedRmsNormBackward0"
    assert runtime.autograd.gradcheck(lambda v: runtime._fused_rms_norm(v, [5], None, 1e-6)[0],
                                      (x,))
    assert runtime.autograd.gradgradcheck(
        lambda v: runtime._fused_rms_norm(v, [5], None, 1e-6)[0], (x,))
    assert torch.autograd.gradgradcheck(  # torch's own op, for the record
        lambda v: torch._fused_rms_norm(v, [5], None, 1e-6)[0],
        (torch.randn(2, 5, dtype=torch.float64, requires_grad=True),))
