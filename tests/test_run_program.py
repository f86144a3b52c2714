"""Unmodified PyTorch programs on gradgen: `python -m runtime prog.py` and install_as_torch.

Each program is written to a temporary directory and run twice in a subprocess, with
`python prog.py` (real torch) and with `python -m runtime prog.py` (gradgen); what they
print must be the same, numbers to 1e-5 relative.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import runtime
from runtime import aliases

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], cwd: Path, gradgen: bool) -> subprocess.CompletedProcess:
    """`python [-m runtime] args` in `cwd`, gradgen importable wherever it runs from."""
    command = [sys.executable, "-m", "runtime", *args] if gradgen else [sys.executable, *args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source))
    return path


NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def assert_same_output(ours: str, theirs: str) -> None:
    """The same text, but for object addresses, and numbers equal to 1e-5 relative (1e-6
    absolute, for values that are zero up to rounding)."""
    ours, theirs = (re.sub(r"0x[0-9a-f]+", "0x...", text) for text in (ours, theirs))
    assert NUMBER.split(ours) == NUMBER.split(theirs), f"ours:\n{ours}\ntheirs:\n{theirs}"
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs), strict=True):
        assert math.isclose(float(a), float(b), rel_tol=1e-5, abs_tol=1e-6), (a, b)


def run_both(directory: Path, args: list[str]) -> str:
    """Run a program with torch and with gradgen; both succeed and print the same."""
    theirs = run(args, directory, gradgen=False)
    ours = run(args, directory, gradgen=True)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert_same_output(ours.stdout, theirs.stdout)
    return ours.stdout


# -- programs from PyTorch's "Learning PyTorch with Examples", scaled down --------------------

POLYNOMIAL = """\
    # Tensors and autograd: fit a third-order polynomial to sin(x), from fixed weights.
    import math
    import sys

    import torch

    dtype = torch.float
    device = torch.device("cpu")
    steps = int(sys.argv[1])

    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)

    a = torch.tensor(0.1, device=device, dtype=dtype, requires_grad=True)
    b = torch.tensor(-0.2, device=device, dtype=dtype, requires_grad=True)
    c = torch.tensor(0.3, device=device, dtype=dtype, requires_grad=True)
    d = torch.tensor(-0.4, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 1e-5
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 50 == 49:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
"""

LEGENDRE = """\
    # Defining new autograd functions: y = a + b * P3(c + d x), P3 a custom Function.
    import math

    import torch


    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)


    dtype = torch.float
    device = torch.device("cpu")

    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)

    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-5
    for t in range(200):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 50 == 49:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None

    print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
    print(y_pred.grad_fn.next_functions[1][0].next_functions)
"""

NN_OPTIM = """\
    # nn and optim: the polynomial as a Linear layer on (x, x^2, x^3), flattened.
    import argparse
    import math

    import torch
    import torch.nn as nn
    from torch.nn.utils import clip_grad_norm_

    parser = argparse.ArgumentParser()
    parser.add_argument("--optimizer", default="sgd")
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()

    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)

    device = (torch.accelerator.current_accelerator().type
              if torch.accelerator.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)).to(device)
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[0.5, -0.1, 0.05]]))
        model[0].bias.fill_(0.2)
    print(model, device)

    loss_fn = nn.MSELoss(reduction="sum")
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-6, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for t in range(args.steps):
        y_pred = model(xx.to(device))
        loss = loss_fn(y_pred, y)
        if t % 50 == 49:
            print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        norm = clip_grad_norm_(model.parameters(), max_norm=1e4)
        optimizer.step()

    linear_layer = model[0]
    print(f"norm {norm.item()}")
    print(f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
          f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3")
    print(torch.cuda.is_available(), linear_layer.weight.device, torch.is_tensor(xx))
"""


def test_the_autograd_polynomial(tmp_path: Path) -> None:
    write(tmp_path, "polynomial.py", POLYNOMIAL)
    output = run_both(tmp_path, ["polynomial.py", "150"])
    assert output.startswith("49 ")


def test_the_custom_function_polynomial(tmp_path: Path) -> None:
    write(tmp_path, "legendre.py", LEGENDRE)
    output = run_both(tmp_path, ["legendre.py"])
    assert "LegendrePolynomial3Backward object" in output


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_nn_and_optim_polynomial(tmp_path: Path, optimizer: str) -> None:
    write(tmp_path, "nn_optim.py", NN_OPTIM)
    run_both(tmp_path, ["nn_optim.py", "--optimizer", optimizer])


# -- what `python -m runtime` keeps as Python has it --------------------------------------------

def test_argv_name_file_and_path_are_python_s(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "helper.py", "VALUE = 42\n")
    write(tmp_path / "sub", "prog.py", """\
        import os
        import sys

        import helper

        print(sys.argv, __name__, os.path.relpath(__file__), os.path.relpath(sys.path[0]))
        print(helper.VALUE, __spec__, __package__, __builtins__ is not None)
        if __name__ == "__main__":
            print("main")
    """)
    args = ["sub/prog.py", "a", "--b", "c d"]
    theirs, ours = run(args, tmp_path, gradgen=False), run(args, tmp_path, gradgen=True)
    assert ours.stdout == theirs.stdout
    assert ours.stdout.startswith("['sub/prog.py', 'a', '--b', 'c d'] __main__ sub/prog.py sub")


@pytest.mark.parametrize("source", ["import sys\nprint('out')\nsys.exit(3)\n",
                                    "raise SystemExit('bye')\n",
                                    "def f():\n    return 1 / 0\n\n\nprint('x')\nf()\n",
                                    "x = (\n",
                                    "class E(Exception):\n    pass\n\n\ntry:\n    1 / 0\n"
                                    "except ZeroDivisionError as e:\n"
                                    "    raise E('again') from e\n"])
def test_exit_status_output_and_traceback_are_python_s(tmp_path: Path, source: str) -> None:
    write(tmp_path, "prog.py", source)
    theirs, ours = run(["prog.py"], tmp_path, False), run(["prog.py"], tmp_path, True)
    assert (ours.returncode, ours.stdout, ours.stderr) == \
        (theirs.returncode, theirs.stdout, theirs.stderr)


def test_a_failure_in_torch_code_is_reported_from_the_program(tmp_path: Path) -> None:
    write(tmp_path, "prog.py", "import torch\n\n\ntorch.ones(2).cuda()\n")
    theirs, ours = run(["prog.py"], tmp_path, False), run(["prog.py"], tmp_path, True)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.splitlines()[:3] == theirs.stderr.splitlines()[:3]
    assert ours.stderr.splitlines()[-1] == theirs.stderr.splitlines()[-1] == \
        "AssertionError: Torch not compiled with CUDA enabled"


def test_usage_and_a_missing_program(tmp_path: Path) -> None:
    usage = run([], tmp_path, gradgen=True)
    assert usage.returncode == 2 and "usage: python -m runtime prog.py" in usage.stderr
    missing = run(["nowhere.py"], tmp_path, gradgen=True)
    assert missing.returncode == 2 and "can't open file" in missing.stderr


def test_a_module_runs_with_dash_m(tmp_path: Path) -> None:
    write(tmp_path, "fitmod.py", """\
        import sys

        import torch

        print(__name__, sys.argv[1:], torch.ones(2).sum().item())
    """)
    result = run(["-m", "fitmod", "x"], tmp_path, gradgen=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "__main__ ['x'] 2.0\n"


# -- the import hook ----------------------------------------------------------------------------

MODULES_PROGRAM = """\
    import sys

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.autograd import Function
    from torch.autograd.function import once_differentiable
    from torch.nn.utils import clip_grad_norm_

    import runtime

    print(torch is runtime, nn is runtime.nn, F is runtime.nn.functional,
          optim is runtime.optim, Function is runtime.autograd.Function,
          clip_grad_norm_ is runtime.nn.utils.clip_grad_norm_, callable(once_differentiable),
          torch.Tensor is runtime.Tensor, runtime.__spec__.name, torch.__version__)
    names = sorted(name for name in sys.modules if name == "torch" or name.startswith("torch."))
    print(names)
    print(all(sys.modules[name].__name__.startswith("runtime") for name in names))
    print([name for name, module in sys.modules.items()
           if "site-packages/torch" in (getattr(module, "__file__", None) or "")])
"""


def test_torch_names_gradgen_s_modules_and_never_the_real_torch(tmp_path: Path) -> None:
    write(tmp_path, "prog.py", MODULES_PROGRAM)
    result = run(["prog.py"], tmp_path, gradgen=True)
    assert result.returncode == 0, result.stderr
    first, names, all_gradgen, real = result.stdout.splitlines()
    assert first == "True True True True True True True True runtime 2.13.0+gradgen"
    assert names == str(["torch", "torch.autograd", "torch.autograd.function", "torch.nn",
                         "torch.nn.functional", "torch.nn.utils", "torch.optim"])
    assert all_gradgen == "True"
    assert real == "[]"


@pytest.mark.parametrize(("source", "error"), [
    ("import torch.utils.tensorboard",
     "ModuleNotFoundError: torch.utils.tensorboard is not in gradgen (yet)"),
    ("from torch.utils.tensorboard import SummaryWriter",
     "ModuleNotFoundError: torch.utils.tensorboard is not in gradgen (yet)"),
    ("import torch.distributed", "ModuleNotFoundError: torch.distributed is not in gradgen "
                                 "(yet)"),
    ("import torch\ntorch.sparse_coo_tensor", "AttributeError: module 'torch' has no "
                                             "attribute 'sparse_coo_tensor': "
                                             "torch.sparse_coo_tensor is not in gradgen (yet)"),
    ("import torch.nn as nn\nnn.parallel.DistributedDataParallel", "AttributeError: module "
     "'torch.nn' has no attribute 'parallel': torch.nn.parallel is not in gradgen (yet)"),
    # Python's own ImportError, which names gradgen's module; a note names torch's.
    ("from torch.optim import NotAnOptimizer",
     "torch.optim.NotAnOptimizer is not in gradgen (yet)"),
])
def test_what_gradgen_lacks_is_named(tmp_path: Path, source: str, error: str) -> None:
    write(tmp_path, "prog.py", source + "\n")
    result = run(["prog.py"], tmp_path, gradgen=True)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == error
    assert "aliases.py" not in result.stderr


def test_install_and_uninstall_from_python(tmp_path: Path) -> None:
    write(tmp_path, "notebook.py", """\
        import sys

        import runtime

        runtime.install_as_torch()
        runtime.install_as_torch()  # a second time changes nothing
        import torch
        import torch.nn.functional as F

        print(torch is runtime, F is runtime.nn.functional, torch.ones(2).sum().item())
        runtime.uninstall_as_torch()
        print(sorted(name for name in sys.modules if name.startswith("torch")))
        print([type(finder).__name__ for finder in sys.meta_path].count("TorchFinder"))
    """)
    result = run(["notebook.py"], tmp_path, gradgen=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "True True 2.0\n[]\n0\n"


def test_install_refuses_when_the_real_torch_is_imported() -> None:
    assert torch.__file__ is not None  # this process has the real torch: the oracle
    with pytest.raises(RuntimeError, match="the real torch is already imported"):
        runtime.install_as_torch()
    assert not aliases.is_installed()


def test_the_finder_answers_only_torch_names() -> None:
    finder = aliases.TorchFinder()
    assert finder.find_spec("numpy") is None
    assert finder.find_spec("torchvision") is None
    with pytest.raises(ModuleNotFoundError, match=r"^torch\.jit is not in gradgen \(yet\)$"):
        finder.find_spec("torch.jit")
    spec = finder.find_spec("torch.nn.functional")
    assert spec.name == "torch.nn.functional" and spec.submodule_search_locations is None
    assert finder.find_spec("torch.nn").submodule_search_locations == []


@pytest.mark.parametrize("torch_name", sorted(aliases.TORCH_MODULES))
def test_every_mapped_module_exists_and_names_what_it_lacks(torch_name: str) -> None:
    module = __import__(aliases.TORCH_MODULES[torch_name], fromlist=["_"])
    assert module.__name__ == aliases.TORCH_MODULES[torch_name]
    if hasattr(module, "__getattr__"):
        with pytest.raises(AttributeError, match=re.escape(f"{torch_name}.nothing_here is not "
                                                           "in gradgen (yet)")):
            module.nothing_here  # noqa: B018
