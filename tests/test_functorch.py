"""functorch (runtime/functorch.py) against the functorch torch 2.13 ships: the deprecated
transforms with torch's FutureWarning, make_functional(_with_buffers) and
combine_state_for_ensemble, on models seeded alike in both (gradgen's random streams are
torch's), and `import functorch` under `python -m runtime`."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import functorch as torch_functorch
import numpy as np
import pytest
import torch

import runtime
from runtime import functorch as runtime_functorch

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = [(torch, torch_functorch), (runtime, runtime_functorch)]


def _values(t: object) -> np.ndarray:
    return t.detach().numpy()


def _caught(call: object) -> tuple[object, list[tuple[type, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    # torch's first use of some transforms also warns from its own lazy imports (jit):
    # the warnings compared are the ones about functorch.
    return result, [(w.category, str(w.message)) for w in caught
                    if "functorch" in str(w.message)]


@pytest.mark.parametrize("api", ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev",
                                 "jacfwd", "hessian"])
def test_each_transform_warns_as_torch_and_computes_as_torch_func(api: str) -> None:
    results = []
    for lib, ft in LIBRARIES:
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)

        def f(y, lib=lib):
            return (y.sin() * y).sum()

        calls = {
            "vmap": lambda ft=ft, x=x, lib=lib: ft.vmap(lib.sin)(x),
            "grad": lambda ft=ft, x=x, f=f: ft.grad(f)(x),
            "grad_and_value": lambda ft=ft, x=x, f=f: ft.grad_and_value(f)(x)[0],
            "vjp": lambda ft=ft, x=x, lib=lib: ft.vjp(lib.sin, x)[1](lib.ones_like(x))[0],
            "jvp": lambda ft=ft, x=x, lib=lib: ft.jvp(lib.sin, (x,), (lib.ones_like(x),))[1],
            "jacrev": lambda ft=ft, x=x, lib=lib: ft.jacrev(lib.sin)(x),
            "jacfwd": lambda ft=ft, x=x, lib=lib: ft.jacfwd(lib.sin)(x),
            "hessian": lambda ft=ft, x=x, f=f: ft.hessian(f)(x),
        }
        results.append(_caught(calls[api]))
    (theirs, their_warnings), (ours, our_warnings) = results
    assert our_warnings == their_warnings and their_warnings
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=1e-12)


class _Tied:
    """A model with a weight registered under two names (an embedding tied to a head)."""

    @staticmethod
    def make(lib: object) -> object:
        class Tied(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.embed = lib.nn.Embedding(5, 3)
                self.head = lib.nn.Linear(3, 5, bias=False)
                self.head.weight = self.embed.weight

            def forward(self, i):
                return self.head(self.embed(i))

        return Tied()


def _make_functional_case(lib: object, ft: object) -> dict:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    x = lib.randn(5, 3)
    func, params = ft.make_functional(model)

    def loss(params, x):
        return func(params, x).pow(2).sum()

    grads = ft.grad(loss)(params, x)
    tied_func, tied_params = ft.make_functional(_Tied.make(lib))
    index = lib.tensor([0, 3, 4])
    return {"out": func(params, x), "model out": model(x),
            **{f"grad {i}": g for i, g in enumerate(grads)},
            "count": (len(params), len(tied_params),
                      [p.shape == q.shape for p, q in zip(params, model.parameters(),
                                                           strict=True)],
                      all(p.requires_grad for p in params)),
            "tied out": tied_func(tied_params, index)}


def _with_buffers_case(lib: object, ft: object) -> dict:
    lib.manual_seed(1)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU())
    x = lib.randn(6, 3)
    model(x)  # running statistics away from their initial values
    func, params, buffers = ft.make_functional_with_buffers(model,
                                                            disable_autograd_tracking=True)
    return {"out": func(params, buffers, x),
            "count": (len(params), len(buffers), [p.requires_grad for p in params]),
            "buffers": lib.cat([b.float().flatten() for b in buffers])}


def _ensemble_case(lib: object, ft: object) -> dict:
    lib.manual_seed(2)
    models = [lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
              for _ in range(3)]
    x = lib.randn(3, 5, 3)
    func, params, buffers = ft.combine_state_for_ensemble(models)
    out = ft.vmap(func)(params, buffers, x)
    same = ft.vmap(func, in_dims=(0, 0, None))(params, buffers, x[0])
    return {"out": out, "same minibatch": same, "loop": lib.stack([m(xi) for m, xi in
                                                                     zip(models, x, strict=True)]),
            "count": ([tuple(p.shape) for p in params], [p.requires_grad for p in params])}


@pytest.mark.parametrize("case", [_make_functional_case, _with_buffers_case, _ensemble_case])
def test_functional_models_as_torch(case: object) -> None:
    (theirs, their_warnings), (ours, our_warnings) = (
        _caught(lambda lib=lib, ft=ft: case(lib, ft)) for lib, ft in LIBRARIES)
    assert our_warnings == their_warnings
    assert ours.keys() == theirs.keys()
    for key, expected in theirs.items():
        if key == "count":
            assert ours[key] == expected
        else:
            np.testing.assert_allclose(_values(ours[key]), _values(expected), rtol=1e-5,
                                       atol=1e-6, err_msg=key)


def test_errors_as_torch() -> None:
    for lib, ft in LIBRARIES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(RuntimeError, match=r"make_functional\(model\): `model` has "
                               r"buffers. Please use make_functional_with_buffers\(model\) "
                               "instead."):
                ft.make_functional(lib.nn.BatchNorm1d(3))
            with pytest.raises(RuntimeError, match="Expected at least one model, got 0."):
                ft.combine_state_for_ensemble([])
            with pytest.raises(RuntimeError, match="Expected all models to be of the same "
                               "class."):
                ft.combine_state_for_ensemble([lib.nn.Linear(2, 2), lib.nn.Tanh()])
            evaluating = lib.nn.Linear(2, 2).eval()
            with pytest.raises(RuntimeError, match="have the same training/eval mode."):
                ft.combine_state_for_ensemble([lib.nn.Linear(2, 2), evaluating])


def test_import_functorch_under_python_m_runtime(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "import warnings\nwarnings.simplefilter('ignore')\n"
        "import functorch as ft\nimport torch\n"
        "print(ft.__name__, ft.__version__ == torch.__version__)\n"
        "func, params = ft.make_functional(torch.nn.Linear(2, 3))\n"
        "print(func(params, torch.ones(1, 2)).shape)\n"
        "try:\n    ft.make_fx\nexcept AttributeError as e:\n    print(e)\n")
    ran = subprocess.run([sys.executable, "-m", "runtime", str(program)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[:2] == ["runtime.functorch True", "torch.Size([1, 3])"]
    assert "'functorch' has no attribute 'make_fx'" in ran.stdout
