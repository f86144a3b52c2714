"""Names and behaviours the programs of tests/programs/ reached for, checked against torch
by value and error: each came up when a new tutorial program was run on gradgen."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime as rt

ROOT = Path(__file__).resolve().parent.parent


def _bits(tensor) -> np.ndarray:
    return tensor.detach().numpy().view(np.uint8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [3, -1, -2, 0.5, -0.5, 3.0, 2, 4, 1.5])
def test_pow_by_a_scalar_rounds_as_torch(dtype, exponent):
    """x ** 3 is x * x * x, x ** -2 is 1 / (x * x), x ** 0.5 a square root: rounded as
    torch's CPU kernel rounds them, bit for bit (the regression example fits x ** 3)."""
    data = np.random.default_rng(0).normal(size=2000) * 3
    theirs = torch.tensor(data, dtype=getattr(torch, dtype))
    ours = rt.tensor(data, dtype=getattr(rt, dtype))
    expected = torch.nan_to_num(theirs ** exponent, nan=7.0)
    actual = rt.nan_to_num(ours ** exponent, nan=7.0)
    if exponent in (3, 3.0, -1, -2, 2):
        assert (_bits(actual) == _bits(expected)).all()
    else:  # torch's pow() and (vectorised) sqrt are within an ulp of the exact result
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=3e-7 if
                                   dtype == "float32" else 1e-15)
    if exponent in (0.5, -0.5):  # as torch: sqrt() and rsqrt(), bit for bit
        roots = rt.nan_to_num(ours.sqrt() if exponent > 0 else ours.rsqrt(), nan=7.0)
        assert (_bits(actual) == _bits(roots)).all()
    np.testing.assert_array_equal(_bits(rt.nan_to_num(rt.pow(ours, exponent), nan=7.0)),
                                  _bits(actual))


def test_pow_shortcuts_keep_the_gradient_and_integers():
    x = [0.5, -1.25, 3.0]
    for lib in (torch, rt):
        t = lib.tensor(x, requires_grad=True)
        (t ** 3).sum().backward()
        assert t.grad.tolist() == pytest.approx([3 * v * v for v in x])
    assert rt.tensor([2, -3]).pow(3).tolist() == torch.tensor([2, -3]).pow(3).tolist()
    assert rt.tensor([2, -3]).pow(3).dtype == rt.int64
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        rt.tensor([2]).pow(-2)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([2]).pow(-2)


DEPRECATED_CALLS = ["x.add(2, y)", "x.add_(-0.5, y)", "x.sub(3, y)", "x.sub_(2, y)",
                    "x.addcmul(2, y, y)", "x.addcmul_(0.5, y, y)", "x.addcdiv(2, y, y + 1)",
                    "x.addcdiv_(-1, y, y + 1)", "x.add(2, 3)", "x.add_(2.5, y.long())"]


@pytest.mark.parametrize("call", DEPRECATED_CALLS)
def test_deprecated_positional_forms_compute_as_torch(call):
    """`p.data.add_(-lr, p.grad.data)`, as old tutorials update their parameters: the
    number first, then the tensors (torch's deprecated forms), computed as torch does."""
    results = []
    for lib in (torch, rt):
        x, y = lib.ones(3), lib.arange(3.0) - 1
        rt.arguments._deprecated_form_warned = False
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            value = eval(call, {}, {"x": x, "y": y})
        if lib is rt:
            assert [type(w.message) for w in seen] == [UserWarning]
        results.append((value.tolist(), x.tolist(), str(value.dtype)))
    assert results[0] == results[1]


def test_deprecated_form_warns_once_in_a_process_as_torch(tmp_path):
    """torch's warning names the deprecated form and the one to use, once per process."""
    script = tmp_path / "prog.py"
    script.write_text(
        "import warnings\nimport torch\nwarnings.simplefilter('always')\n"
        "x, y = torch.ones(3), torch.arange(3.0)\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    x.addcmul_(2, y, y)\n    x.add(2, y)\n"
        "print([str(w.message).split(' (Triggered internally')[0] for w in seen])\n")
    outputs = []
    for command in ([sys.executable, str(script)], [sys.executable, "-m", "runtime", str(script)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert "This overload of addcmul_ is deprecated" in outputs[1]


def test_deprecated_form_errors():
    x = rt.ones(3)
    with pytest.raises(TypeError, match="deprecated form"):
        x.add(1, x, x)
    with pytest.raises(TypeError):
        torch.ones(3).add(1, torch.ones(3), torch.ones(3))


def test_a_modules_forward_hooks_show_as_an_ordered_dict_as_torch():
    """The pruning tutorial prints `module._forward_pre_hooks`."""
    shown = []
    for lib in (torch, rt):
        module = lib.nn.Linear(2, 2)
        empty = repr(module._forward_pre_hooks), repr(module._forward_hooks)
        module.register_forward_pre_hook(print)
        hooks = module._forward_pre_hooks
        shown.append((empty, repr(hooks).split("(")[0], list(hooks.values()) == [print]))
    assert shown[0] == shown[1]
    assert isinstance(rt.nn.Linear(1, 1)._forward_hooks, dict)


def _hooked_run(lib):
    """A graph built under saved_tensors_hooks: what the hooks saw, in order, and the
    gradients they gave."""
    seen = []

    def pack(x):
        seen.append(("pack", x.tolist()))
        return x * 4

    def unpack(x):
        seen.append(("unpack", x.tolist()))
        return x / 4

    a = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, 0.25, 2.0], requires_grad=True) * 2
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (a * b).relu().sum()
    saved = y.grad_fn.next_functions[0][0]._saved_result.tolist()
    y.backward()
    return seen, saved, a.grad.tolist()


def test_saved_tensors_hooks_pack_and_unpack_as_torch():
    """The saved tensors tutorial: every tensor saved for backward goes through pack_hook
    as it is saved and unpack_hook when used, in torch's order, with torch's gradients."""
    assert _hooked_run(rt) == _hooked_run(torch)


def test_saved_tensors_hooks_errors_and_save_on_cpu_as_torch():
    outcomes = []
    for lib in (torch, rt):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor"):
            y = x * x
        with pytest.raises(TypeError) as error:
            y.sum().backward()
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        for pin_memory in (False, True):
            with lib.autograd.graph.save_on_cpu(pin_memory=pin_memory):
                loss = (w * w * x.detach()).sum()
            loss.backward()
        outcomes.append((str(error.value), w.grad.tolist()))
    assert outcomes[0] == outcomes[1]


def test_data_parallel_on_a_cpu_only_torch():
    """nn.DataParallel without an accelerator keeps and calls its module."""
    results = []
    for lib in (torch, rt):
        lib.manual_seed(0)
        model = lib.nn.DataParallel(lib.nn.Linear(2, 3), device_ids=[0])
        results.append((repr(model), list(model.state_dict()), model.device_ids,
                        model(lib.ones(4, 2)).tolist(), hasattr(model, "dim")))
    assert results[0] == results[1]
