"""Second derivatives through the composite layers of issue 28 (group, instance, RMS and
local response norm, the margin and likelihood losses, pairwise distance, PReLU, bilinear,
multi-head attention) against PyTorch: autograd.grad with create_graph, then the gradient
of a function of the gradient. (torch has no second derivative of ctc_loss, whose backward
is a kernel of its own; gradgen's CTC is made of ops, so it has one.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close


def _data(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


CASES = {
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x, 2, x[0, :, 0] + 1),
    "instance_norm": lambda lib, x: lib.nn.functional.instance_norm(x),
    "rms_norm": lambda lib, x: lib.nn.functional.rms_norm(x, [4, 3]),
    "local_response_norm": lambda lib, x: lib.nn.functional.local_response_norm(x, 3, 0.5),
    "cosine_embedding_loss": lambda lib, x: lib.nn.functional.cosine_embedding_loss(
        x[0], x[1], lib.tensor([1.0, -1.0, 1.0, -1.0], dtype=lib.float64)),
    "triplet_margin_loss": lambda lib, x: lib.nn.functional.triplet_margin_loss(
        x[0], x[1], x[0] * 0.5, margin=3.0),
    "gaussian_nll_loss": lambda lib, x: lib.nn.functional.gaussian_nll_loss(
        x[0], x[1], x[0].pow(2) + 0.5),
    "poisson_nll_loss": lambda lib, x: lib.nn.functional.poisson_nll_loss(x[0], x[1].abs()),
    "multilabel_soft_margin_loss": lambda lib, x: (
        lib.nn.functional.multilabel_soft_margin_loss(x[0], x[1].sigmoid())),
    "pairwise_distance": lambda lib, x: lib.nn.functional.pairwise_distance(x[0], x[1], 3.0),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, x[0, :, 0] * 0.3),
    "bilinear": lambda lib, x: lib.nn.functional.bilinear(
        x[0, :, :2], x[1], x.reshape(-1)[:12].reshape(2, 2, 3)),
    "multi_head_attention": lambda lib, x: lib.nn.functional.multi_head_attention_forward(
        x[0].reshape(3, 2, 2), x[1].reshape(3, 2, 2), x[1].reshape(3, 2, 2), 2, 1,
        x.reshape(-1)[:12].reshape(6, 2), None, None, None, False, 0.0,
        x.reshape(-1)[12:16].reshape(2, 2), None)[0],
}


@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative(name: str) -> None:
    def program(lib: Any) -> list:
        x = lib.tensor(_data((2, 4, 3), 1), requires_grad=True)
        out = CASES[name](lib, x)
        weights = lib.tensor(_data(tuple(out.shape), 2))
        (grad,) = lib.autograd.grad((out * weights).sum(), x, create_graph=True)
        (second,) = lib.autograd.grad(grad.pow(2).sum(), x)
        return [out, grad, second]

    close(program, 1e-8, 1e-10)
