"""The spec's formulas train under DistributedDataParallel in real torch: a small model
made of exported Functions (export-torch's Addmm and Relu), two gloo processes, each on
its half of the batch; after one backward, the all-reduced gradients equal those of the
same model written with torch's own ops under the same DDP run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import os, sys
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, {folder!r})
from exported import Addmm, Relu


class Exported(torch.nn.Module):
    def __init__(self, first, second):
        super().__init__()
        self.first, self.second = first, second

    def forward(self, x):
        hidden = Relu.apply(Addmm.apply(self.first.bias, x, self.first.weight.t(), 1, 1))
        return Addmm.apply(self.second.bias, hidden, self.second.weight.t(), 1, 1)


def grads(rank, model, x, y):
    model = DDP(model)
    loss = ((model(x) - y) ** 2).sum()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def run(rank):
    dist.init_process_group("gloo", init_method="file://" + {store!r}, rank=rank,
                            world_size=2)
    torch.manual_seed(0)
    first, second = torch.nn.Linear(5, 4).double(), torch.nn.Linear(4, 3).double()
    x, y = torch.randn(8, 5, dtype=torch.float64), torch.randn(8, 3, dtype=torch.float64)
    part = slice(4 * rank, 4 * rank + 4)
    ours = grads(rank, Exported(first, second), x[part], y[part])
    for p in (*first.parameters(), *second.parameters()):
        p.grad = None
    reference = grads(rank, torch.nn.Sequential(first, torch.nn.ReLU(), second), x[part],
                      y[part])
    assert len(ours) == len(reference) == 4
    for a, b in zip(ours, reference):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # and both are the whole batch's gradient (DDP averages the two halves')
    whole = torch.nn.Sequential(first, torch.nn.ReLU(), second)
    for p in whole.parameters():
        p.grad = None
    (((whole(x) - y) ** 2).sum() / 2).backward()
    for a, p in zip(ours, whole.parameters()):
        torch.testing.assert_close(a, p.grad, rtol=1e-12, atol=1e-12)
    dist.destroy_process_group()
    if rank == 0:
        print("ok")
    # gloo's threads can abort the interpreter's shutdown ("terminate called without an
    # active exception", in about one run of three on 2 cores), after every check above
    # has passed; each worker therefore leaves at once, having flushed what it printed.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    mp.spawn(run, nprocs=2)
"""


@pytest.mark.slow
def test_exported_functions_train_under_ddp(tmp_path: Path) -> None:
    exported = tmp_path / "exported.py"
    run = subprocess.run([sys.executable, "-m", "codegen", "export-torch", "addmm", "relu",
                          "--out", str(exported)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    script = tmp_path / "ddp.py"
    script.write_text(WORKER.format(folder=str(tmp_path), store=str(tmp_path / "store")))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok", done.stdout + done.stderr[-2000:]
