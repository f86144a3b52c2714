"""The seed program (examples/seed_tinymodel.py) on gradgen and on PyTorch.

From identical weights and inputs, the loss, every gradient and the weights after one
SGD step agree with PyTorch's, and the graph the example prints is PyTorch's graph.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

import runtime as rt

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


def _tiny_model(lib):
    """The example's TinyModel, written against either library."""

    class TinyModel(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = lib.nn.Linear(1000, 100)
            self.relu = lib.nn.ReLU()
            self.layer2 = lib.nn.Linear(100, 10)

        def forward(self, x):
            return self.layer2(self.relu(self.layer1(x)))

    return TinyModel()


def _assert_close(actual: rt.Tensor, expected: torch.Tensor, rtol: float = 1e-5) -> None:
    """Agreement to `rtol` relative to the tensor's scale: float32 sums of 1000 products
    are rounded differently by numpy and PyTorch, so a near-zero element is compared
    against the size of its neighbours rather than its own."""
    actual, expected = np.asarray(actual.detach().numpy()), expected.detach().numpy()
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def test_seed_numbers_match_torch():
    torch.manual_seed(0)
    theirs = _tiny_model(torch)
    ours = _tiny_model(rt)
    ours.load_state_dict({k: rt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    some_input = torch.randn(16, 1000)
    ideal_output = torch.randn(16, 10)

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
    _assert_close(r_loss, t_loss)
    assert r_grads.keys() == t_grads.keys() == {"layer1.weight", "layer1.bias",
                                                "layer2.weight", "layer2.bias"}
    for name in t_grads:
        _assert_close(r_grads[name], t_grads[name])
        _assert_close(r_weights[name], t_weights[name])
    assert r_zeroed == [0.0, 0.0, 0.0, 0.0]
