"""The torch.* spellings of the layers' functions (torch.prelu, torch.selu, torch.rrelu,
torch.group_norm, torch.native_group_norm, torch.instance_norm, torch.rms_norm, torch.pdist,
torch.pairwise_distance, torch.bilinear and the losses with at::Reduction ints) against
PyTorch: values, gradients and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


CALLS = [
    "lib.prelu(x, lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64))",
    "lib.selu(x)",
    "lib.selu_(x * 1)",
    "lib.rrelu(x, 0.1, 0.3, True)",
    "lib.rrelu_(x * 1, training=True)",
    "lib.rrelu(x)",
    "lib.group_norm(x, 3, None, None, 1e-3, False)",
    "lib.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5)",
    "lib.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)",
    "lib.rms_norm(x, [3, 4])",
    "lib.pdist(x[0], 1.0)",
    "lib.pairwise_distance(x[0], x[1], 3)",
    "lib.bilinear(x[0], x[1, :, :3], lib.tensor(_data((2, 4, 3), 4)))",
    "lib.margin_ranking_loss(x[0], x[1], lib.ones(3, 4, dtype=lib.float64), 0.5, 2)",
    "lib.hinge_embedding_loss(x, -lib.ones(2, 3, 4, dtype=lib.float64), 1.0, 0)",
    "lib.cosine_embedding_loss(x[0], x[1], lib.tensor([1.0, -1.0, 1.0], dtype=lib.float64))",
    "lib.triplet_margin_loss(x[0], x[1], x[0] * 2, 1.0, 2, 1e-6, True, 1)",
    "lib.poisson_nll_loss(x, x.abs(), True, False, 1e-8, 1)",
    "lib.ctc_loss(x.reshape(4, 2, 3).log_softmax(2), lib.tensor([[1, 2], [1, 1]]), [4, 4],"
    " [2, 2], 0, 2)",
]


@pytest.mark.parametrize("call", CALLS)
def test_torch_level_functions(call: str) -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        x = lib.tensor(_data((2, 3, 4), 1), requires_grad=True)
        out = eval(call)
        outs = list(out) if isinstance(out, tuple) else [out]
        outs[0].pow(2).sum().backward()
        return [*outs, x.grad]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("call", [
    "lib.margin_ranking_loss(lib.ones(2), lib.ones(2), lib.ones(2), 0.0, 3)",
    "lib.margin_ranking_loss(lib.ones(2), lib.zeros(2), -lib.ones(2))",
    "lib.triplet_margin_loss(lib.ones(2, 3), lib.zeros(2, 3), lib.ones(2, 3))",
    "lib.ctc_loss(lib.zeros(4, 2, 3), lib.tensor([[1, 2], [1, 1]]), [4, 4], [2, 2])",
    "lib.group_norm(lib.ones(2, 3), 2)",
    "lib.prelu(lib.ones(2, 3), lib.ones(2))",
])
def test_torch_level_errors(call: str) -> None:
    same(lambda lib: eval(call).tolist())
