"""The seed program (examples/seed_tinymodel.py) on gradgen and on PyTorch.

From identical weights and inputs, the loss, every gradient and the weights after one
SGD step agree with PyTorch's, and the graph the example prints is PyTorch's graph.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime as rt
from tests.oracle import tiny_model

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "seed_tinymodel.py"
IMPORT_LINE = "import runtime as torch"


def _run_example(path: Path) -> str:
    result = subprocess.run([sys.executable, str(path)], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _graph_lines(output: str) -> list[str]:
    """The printed graph: from the `<SumBackward0 object at ...>` line on, addresses dropped."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("<SumBackward0 object"))
    return ["<SumBackward0 object>"] + lines[start + 1:]


def test_example_runs_from_the_repository_root():
    output = _run_example(EXAMPLE.relative_to(ROOT))
    assert "grad_fn=<SumBackward0>" in output
    assert "torch::autograd::AccumulateGrad [10, 100]" in output


def test_example_prints_torchs_graph(tmp_path):
    source = EXAMPLE.read_text()
    assert IMPORT_LINE in source
    with_torch = tmp_path / "seed_torch.py"
    with_torch.write_text(source.replace(IMPORT_LINE, "import torch"))
    ours = _graph_lines(_run_example(EXAMPLE))
    theirs = _graph_lines(_run_example(with_torch))
    assert ours == theirs
    assert ours[1:5] == ["SumBackward0", "    PowBackward0", "        SubBackward0",
                         "            None"]


def _assert_close(actual: rt.Tensor, expected: torch.Tensor, elementwise: bool) -> None:
    """Agreement to 1e-5 relative. In float32 it is relative to the tensor's scale: numpy
    and PyTorch round sums of 1000 products differently (about 5e-7 of the largest
    element), so an element near zero by cancellation is compared against the size of its
    neighbours. In float64 every element must agree to 1e-5 of itself."""
    actual, expected = np.asarray(actual.detach().numpy()), expected.detach().numpy()
    atol = 0.0 if elementwise else 1e-5 * float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_seed_numbers_match_torch(dtype):
    torch.manual_seed(0)
    theirs = tiny_model(torch).to(getattr(torch, dtype))
    ours = tiny_model(rt).to(getattr(rt, dtype))
    ours.load_state_dict({k: rt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    some_input = torch.randn(16, 1000, dtype=theirs.layer1.weight.dtype)
    ideal_output = torch.randn(16, 10, dtype=theirs.layer1.weight.dtype)

    steps = []
    for lib, model, x, y in [(torch, theirs, some_input, ideal_output),
                             (rt, ours, rt.tensor(some_input.numpy()),
                              rt.tensor(ideal_output.numpy()))]:
        optimizer = lib.optim.SGD(model.parameters(), lr=0.001)
        prediction = model(x)
        loss = (y - prediction).pow(2).sum()
        loss.backward()
        grads = {name: p.grad.clone() for name, p in model.named_parameters()}
        optimizer.step()
        weights = {name: p.detach().clone() for name, p in model.named_parameters()}
        optimizer.zero_grad(set_to_none=False)
        zeroed = [p.grad.abs().sum().item() for p in model.parameters()]
        steps.append((loss, grads, weights, zeroed))

    (t_loss, t_grads, t_weights, _), (r_loss, r_grads, r_weights, r_zeroed) = steps
    elementwise = dtype == "float64"
    assert r_loss.dtype is getattr(rt, dtype)
    _assert_close(r_loss, t_loss, elementwise)
    assert r_grads.keys() == t_grads.keys() == {"layer1.weight", "layer1.bias",
                                                "layer2.weight", "layer2.bias"}
    for name in t_grads:
        _assert_close(r_grads[name], t_grads[name], elementwise)
        _assert_close(r_weights[name], t_weights[name], elementwise)
    assert r_zeroed == [0.0, 0.0, 0.0, 0.0]
