"""torch.autocast and GradScaler against torch 2.13 (runtime/amp.py): autocast where torch
turns it off runs unchanged, and where torch would turn it on gradgen refuses; GradScaler
on the CPU scales, unscales, skips non-finite steps and updates its scale as torch's."""

from __future__ import annotations

import pytest
import torch

import runtime
from tests.names_oracle import same


def _model(t):
    t.manual_seed(0)
    model = t.nn.Linear(3, 2)
    optimizer = t.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer


def test_autocast_off_runs_unchanged():
    def program(t):
        a = t.arange(4.0).reshape(2, 2)
        seen = []
        with t.autocast("cpu", enabled=False) as context:
            seen += [t.is_autocast_enabled("cpu"), (a @ a).dtype, context._enabled]
        with t.autocast("cpu", dtype=t.float32):  # torch warns and turns it off
            seen += [t.is_autocast_enabled("cpu"), (a @ a).dtype]
        with t.autocast(device_type="cuda"):  # no CUDA: torch warns and turns it off
            seen.append((a @ a).dtype)
        with t.amp.autocast("cpu", dtype=t.float64):
            seen.append(t.mm(a, a).dtype)
        made = t.autocast("cpu", enabled=False)
        seen += [made.device, made.fast_dtype, made._enabled, made._cache_enabled,
                 t.autocast is t.amp.autocast, t.amp.is_autocast_available("cpu")]

        @t.autocast("cpu", enabled=False)
        def decorated(x):
            """The docstring stays."""
            return x * 2, t.is_autocast_enabled("cpu")

        seen += [decorated(a), decorated.__doc__, decorated.__name__]
        return seen

    same(program)


def test_autocast_errors():
    same(lambda t: t.autocast(device_type=3))
    same(lambda t: t.autocast("xyz"))


@pytest.mark.parametrize("dtype", ["default", "bfloat16", "float16"])
def test_autocast_that_torch_turns_on_is_refused(dtype):
    kwargs = {} if dtype == "default" else {"dtype": getattr(runtime, dtype)}
    with pytest.raises(NotImplementedError, match="gradgen has no autocast"):
        with runtime.autocast("cpu", **kwargs):
            pass
    with torch.autocast("cpu", **({} if dtype == "default" else
                                  {"dtype": getattr(torch, dtype)})):
        assert torch.is_autocast_enabled("cpu")  # what gradgen declines to imitate


def test_disabled_grad_scaler_is_the_identity():
    def program(t):
        model, optimizer = _model(t)
        scaler = t.GradScaler("cpu", enabled=False)
        default = t.amp.GradScaler()  # "cuda" without CUDA: torch warns and disables it
        loss = model(t.ones(4, 3)).pow(2).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        return [scaled is loss, model.weight, scaler.get_scale(), scaler.state_dict(),
                scaler.is_enabled(), default.is_enabled(), default.state_dict(),
                t.GradScaler is t.amp.GradScaler]

    same(program)


def test_grad_scaler_on_the_cpu():
    def program(t):
        model, optimizer = _model(t)
        scaler = t.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=3)
        seen = [scaler.state_dict(), scaler.get_scale()]
        inputs = [t.ones(4, 3), t.full((4, 3), float("inf")), t.ones(4, 3) * 0.5,
                  t.ones(4, 3), t.ones(4, 3), t.ones(4, 3) * 2]
        for x in inputs:
            optimizer.zero_grad()
            loss = model(x).pow(2).mean()
            scaled = scaler.scale(loss)
            scaled.backward()
            scaler.unscale_(optimizer) if x[0, 0].item() == 0.5 else None
            result = scaler.step(optimizer)
            scaler.update()
            seen += [scaled, model.weight.grad, model.weight.clone(), result,
                     scaler.get_scale(), scaler.state_dict()]
        pair = scaler.scale([loss, (loss * 2,)])
        seen += [type(pair).__name__, pair[1]]
        scaler.update(3.0)
        seen.append(scaler.get_scale())
        scaler.update(t.tensor(5.0))
        seen.append(scaler.get_scale())
        return seen

    same(program)


def test_grad_scaler_state_dict_round_trip():
    def program(t):
        first = t.GradScaler("cpu", init_scale=8.0, growth_factor=4.0)
        first.scale(t.ones(1))
        state = first.state_dict()
        second = t.GradScaler("cpu")
        second.load_state_dict(state)
        refused = None
        try:
            second.load_state_dict({})
        except RuntimeError as error:
            refused = str(error)
        return state, second.state_dict(), second.get_growth_factor(), refused

    same(program)


GRAD_SCALER_ERRORS = {
    "growth": lambda t, m, o: t.GradScaler("cpu", growth_factor=1.0),
    "backoff": lambda t, m, o: t.GradScaler("cpu", backoff_factor=1.0),
    "unscale_before_scale": lambda t, m, o: t.GradScaler("cpu").unscale_(o),
    "step_before_scale": lambda t, m, o: t.GradScaler("cpu").step(o),
    "update_before_scale": lambda t, m, o: t.GradScaler("cpu").update(),
    "unscale_twice": lambda t, m, o: _twice(t, m, o, "unscale_", "unscale_"),
    "unscale_after_step": lambda t, m, o: _twice(t, m, o, "step", "unscale_"),
    "step_twice": lambda t, m, o: _twice(t, m, o, "step", "step"),
    "closure": lambda t, m, o: t.GradScaler("cpu").step(o, closure=lambda: 0),
    "scale_a_number": lambda t, m, o: t.GradScaler("cpu").scale(3),
    "bad_new_scale": lambda t, m, o: _scaled(t, m).update(t.ones(2)),
}


def _scaled(t, model):
    scaler = t.GradScaler("cpu")
    scaler.scale(model(t.ones(1, 3)).sum()).backward()
    return scaler


def _twice(t, model, optimizer, first, second):
    scaler = _scaled(t, model)
    getattr(scaler, first)(optimizer)
    getattr(scaler, second)(optimizer)


@pytest.mark.parametrize("name", GRAD_SCALER_ERRORS)
def test_grad_scaler_errors(name):
    def program(t):
        model, optimizer = _model(t)
        return GRAD_SCALER_ERRORS[name](t, model, optimizer)

    same(program)


def test_the_deprecated_cuda_and_cpu_spellings():
    def program(t):
        scaler = t.cuda.amp.GradScaler()
        seen = [scaler.is_enabled(), scaler.state_dict(), isinstance(scaler, t.amp.GradScaler)]
        with t.cuda.amp.autocast():
            seen.append(t.is_autocast_enabled())
        with t.cpu.amp.autocast(enabled=False) as context:
            seen += [context.device, t.is_autocast_enabled("cpu")]
        seen.append(isinstance(t.cuda.amp.autocast(enabled=False), t.amp.autocast))
        return seen

    same(program)


def test_the_deprecated_cpu_autocast_on_is_refused():
    with pytest.warns(FutureWarning), pytest.raises(NotImplementedError):
        runtime.cpu.amp.autocast()
