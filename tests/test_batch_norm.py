"""Batch norm against PyTorch: F.batch_norm in training and eval (values, gradients, the
running stats it updates in place), BatchNorm1d / BatchNorm2d (defaults, repr, buffers and
state_dict, momentum=None, eval mode), their errors, and a small training loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import close, same


def _data(shape: tuple[int, ...], seed: int = 0, dtype: str = "float32") -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- F.batch_norm ----------------------------------------------------------------------------

SHAPES = [(5, 3), (4, 3, 6), (3, 2, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_training_values_gradients_and_running_stats(shape: tuple, affine: bool,
                                                     dtype: str) -> None:
    channels = shape[1]
    x = _data(shape, 1, dtype) * 3 + 1
    w, b = _data((channels,), 2, dtype), _data((channels,), 3, dtype)
    g = _data(shape, 4, dtype)
    mean0, var0 = _data((channels,), 5, dtype), np.abs(_data((channels,), 6, dtype)) + 0.5

    def program(lib: Any) -> list:
        input = lib.tensor(x, requires_grad=True)
        weight = lib.tensor(w, requires_grad=True) if affine else None
        bias = lib.tensor(b, requires_grad=True) if affine else None
        running_mean, running_var = lib.tensor(mean0), lib.tensor(var0)
        out = lib.nn.functional.batch_norm(input, running_mean, running_var, weight, bias,
                                           training=True, momentum=0.3, eps=1e-3)
        out.backward(lib.tensor(g))
        grads = [input.grad] + ([weight.grad, bias.grad] if affine else [])
        return [out, running_mean, running_var, *grads, type(out.grad_fn).__name__]

    close(program, rtol=1e-4 if dtype == "float32" else 1e-10,
           atol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_eval_mode_uses_the_running_stats(shape: tuple) -> None:
    channels = shape[1]
    x, w, b = _data(shape, 7), _data((channels,), 8), _data((channels,), 9)
    mean0, var0 = _data((channels,), 10), np.abs(_data((channels,), 11)) + 0.5

    def program(lib: Any) -> list:
        input = lib.tensor(x, requires_grad=True)
        weight, bias = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        running_mean, running_var = lib.tensor(mean0), lib.tensor(var0)
        out = lib.nn.functional.batch_norm(input, running_mean, running_var, weight, bias)
        (out * out).sum().backward()
        return [out, running_mean, running_var, input.grad, weight.grad, bias.grad,
                type(out.grad_fn).__name__]

    close(program)


def test_training_without_running_stats_and_no_affine() -> None:
    x = _data((6, 4), 12)

    def program(lib: Any) -> list:
        input = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.batch_norm(input, None, None, training=True)
        out.pow(3).sum().backward()
        return [out, input.grad]

    # the input gradient is a difference of terms near 10: float32 rounding shows at 1e-6
    close(program, atol=1e-5)


def test_second_derivatives_match_torch() -> None:
    x, w = _data((5, 3), 13, "float64"), _data((3,), 14, "float64")

    def program(lib: Any) -> list:
        input = lib.tensor(x, requires_grad=True)
        weight = lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.batch_norm(input, None, None, weight, training=True)
        loss = (out.pow(3) * lib.arange(15.0, dtype=lib.float64).reshape(5, 3)).sum()
        gx, gw = lib.autograd.grad(loss, (input, weight), create_graph=True)
        (gx.pow(2).sum() + gw.pow(2).sum()).backward()
        return [gx, gw, input.grad, weight.grad]

    close(program, rtol=1e-9, atol=1e-11)


def test_forward_mode_matches_torch() -> None:
    x, t = _data((4, 3), 15, "float64"), _data((4, 3), 16, "float64")

    def program(lib: Any) -> list:
        forward_ad = lib.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(lib.tensor(x), lib.tensor(t))
            out = lib.nn.functional.batch_norm(dual, None, None, training=True)
            return list(forward_ad.unpack_dual(out)[:2])

    close(program, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.batch_norm(lib.randn(1, 3), lib.zeros(3), lib.ones(3), training=True)",
    "F.batch_norm(lib.randn(1, 3, 1), None, None, training=True)",
    "F.batch_norm(lib.randn(3), None, None, training=True)",
    "F.batch_norm(lib.randn(2, 3), None, None)",
    "F.batch_norm(lib.randn(2, 3), lib.zeros(4), lib.ones(4))",
    "F.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(2))",
    "F.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(3), lib.ones(2))",
    "F.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(3), None, lib.ones(5))",
    "F.batch_norm(lib.randn(2, 3), None, None, training=True, eps=0.0)",
    "F.batch_norm(lib.randn(2, 3), lib.zeros(3), lib.ones(3), eps=-1.0)",
    "lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5))",
    "lib.nn.BatchNorm1d(3)(lib.randn(3))",
    "lib.nn.BatchNorm2d(3)(lib.randn(2, 3, 4))",
    "lib.nn.BatchNorm1d(3)(lib.randn(2, 4))",
    "lib.nn.BatchNorm1d(3)(lib.randn(1, 3))",
    "lib.nn.BatchNorm2d(3)(lib.randn(1, 3, 1, 1))",
])
def test_errors_are_torch_s(call: str) -> None:
    def program(lib: Any) -> Any:
        F = lib.nn.functional  # noqa: F841, N806 - read by the eval below
        eval(call)
        return "no error"

    assert same(program)[0][0] == "raises"


def test_a_failed_call_leaves_the_running_stats_unchanged() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.BatchNorm1d(3)
        try:
            module(lib.randn(1, 3))
        except ValueError:
            pass
        return [module.running_mean.tolist(), module.running_var.tolist(),
                module.num_batches_tracked.item()]

    same(program)


# -- the modules ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    "lib.nn.BatchNorm1d(100)",
    "lib.nn.BatchNorm1d(4, eps=1e-3, momentum=None)",
    "lib.nn.BatchNorm2d(3, affine=False)",
    "lib.nn.BatchNorm2d(3, track_running_stats=False)",
    "lib.nn.BatchNorm1d(2, bias=False)",
    "lib.nn.BatchNorm1d(2, momentum=0.5, dtype=lib.float64)",
])
def test_modules_are_built_as_torch_s(make: str) -> None:
    def program(lib: Any) -> list:
        module = eval(make)
        state = {k: (v.dtype, v.tolist()) for k, v in module.state_dict().items()}
        return [repr(module), str(state), [n for n, _ in module.named_parameters()],
                [n for n, _ in module.named_buffers()], module.num_features, module.eps,
                module.momentum, module.affine, module.track_running_stats, module.training]

    same(lambda lib: [str(x) for x in program(lib)])


@pytest.mark.parametrize("momentum", [0.1, None, 0.0, 1.0])
@pytest.mark.parametrize("module_name, shape", [("BatchNorm1d", (6, 3)),
                                                ("BatchNorm1d", (4, 3, 5)),
                                                ("BatchNorm2d", (2, 3, 4, 4))])
def test_training_steps_then_eval(momentum: float | None, module_name: str,
                                  shape: tuple) -> None:
    batches = [_data(shape, 20 + i) * (i + 1) + i for i in range(3)]

    def program(lib: Any) -> list:
        module = getattr(lib.nn, module_name)(3, momentum=momentum)
        results = []
        for batch in batches:
            out = module(lib.tensor(batch))
            results += [out, module.running_mean.clone(), module.running_var.clone(),
                        module.num_batches_tracked.item()]
        module.eval()
        results.append(module(lib.tensor(batches[0])))
        module.train()
        results.append(module(lib.tensor(batches[1][:2])))
        return results

    close(program)


def test_without_tracked_stats_eval_uses_the_batch() -> None:
    x = _data((5, 3), 30)

    def program(lib: Any) -> list:
        module = lib.nn.BatchNorm1d(3, track_running_stats=False).eval()
        return [module(lib.tensor(x)), len(module.state_dict())]

    close(program)


def test_state_dict_round_trip() -> None:
    batch = _data((8, 3), 31)

    def program(lib: Any) -> list:
        lib.manual_seed(0)
        source = lib.nn.BatchNorm1d(3)
        source(lib.tensor(batch))
        with lib.no_grad():
            source.weight.mul_(2)
        target = lib.nn.BatchNorm1d(3)
        target.load_state_dict(source.state_dict())
        target.eval()
        return [target(lib.tensor(batch)), target.num_batches_tracked,
                *target.state_dict().values()]

    close(program)


def test_reset_running_stats() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.BatchNorm1d(2)
        module(lib.tensor([[1.0, 2.0], [3.0, 5.0]]))
        module.reset_running_stats()
        return list(module.state_dict().values())

    close(program)


# -- a training loop --------------------------------------------------------------------------

def test_an_mlp_language_model_with_batch_norm_prints_torch_s_losses() -> None:
    """makemore's MLP: embed 3 characters, Linear -> BatchNorm1d -> tanh -> Linear, cross
    entropy; SGD steps from the same seeded weights, then the loss in eval mode."""
    rng = np.random.default_rng(0)
    contexts = rng.integers(0, 27, (64, 3))
    targets = rng.integers(0, 27, 64)

    def program(lib: Any) -> list[float]:
        nn, F = lib.nn, lib.nn.functional
        lib.manual_seed(0)
        model = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(),
                              nn.Linear(30, 64, bias=False), nn.BatchNorm1d(64), nn.Tanh(),
                              nn.Linear(64, 27))
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        x, y = lib.tensor(contexts), lib.tensor(targets)
        losses = []
        for step in range(8):
            batch = slice(8 * step, 8 * step + 32)
            loss = F.cross_entropy(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with lib.no_grad():
            losses.append(F.cross_entropy(model(x), y).item())
        batch_norm = model[3]
        losses += batch_norm.running_mean.tolist() + batch_norm.running_var.tolist()
        return losses

    expected, actual = program(torch), program(runtime)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-7)
    assert expected[0] != expected[7]  # it trained


def test_the_program_runs_unchanged_with_python_m_runtime(tmp_path: Any) -> None:
    """The same loop as a script: `python prog.py` (torch) and `python -m runtime prog.py`
    (gradgen) print the same numbers, the modules' reprs and the grad_fn names."""
    from tests.test_run_program import run_both, write

    write(tmp_path, "prog.py", '''
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16, bias=False), nn.BatchNorm1d(16), nn.Tanh(),
                              nn.Linear(16, 16), nn.LeakyReLU(0.1), nn.Linear(16, 4))
        print(model)
        x = torch.randn(32, 6)
        y = torch.randint(0, 4, (32,))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(5):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(step, loss.item(), model[1].num_batches_tracked.item())
        print(model[1].running_mean[:4], model[1].running_var[:4])
        model.eval()
        with torch.no_grad():
            print(F.cross_entropy(model(x), y).item())
        h = model[1](model[0](x[:4]))
        print(h.grad_fn, F.silu(h).grad_fn, F.pad(h, (1, 1)).grad_fn)
        print(F.one_hot(y[:5], 4))
    ''')
    run_both(tmp_path, ["prog.py"])
