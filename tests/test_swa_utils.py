"""torch.optim.swa_utils against torch's: averaged weights (SWA's running mean, EMA, with and
without buffers), state_dict keys, SWALR's learning rates, update_bn's statistics."""

from __future__ import annotations

import pytest

from tests.names_oracle import same


def _model(t):
    t.manual_seed(0)
    return t.nn.Sequential(t.nn.Linear(3, 4), t.nn.BatchNorm1d(4), t.nn.ReLU(),
                           t.nn.Linear(4, 1))


def _train_averaged(t, averaged_kwargs, steps=6):
    model = _model(t)
    swa_utils = t.optim.swa_utils
    kwargs = dict(averaged_kwargs)
    if kwargs.pop("ema", False):
        kwargs["multi_avg_fn"] = swa_utils.get_ema_multi_avg_fn(0.9)
    if kwargs.pop("ema_single", False):
        kwargs["avg_fn"] = swa_utils.get_ema_avg_fn(0.8)
    averaged = swa_utils.AveragedModel(model, **kwargs)
    optimizer = t.optim.SGD(model.parameters(), lr=0.1)
    x = t.arange(24.0).reshape(8, 3).sin()
    y = t.arange(8.0).reshape(8, 1).cos()
    for _ in range(steps):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
        averaged.update_parameters(model)
    return averaged, x


@pytest.mark.parametrize("kwargs", [{}, {"use_buffers": True}, {"ema": True},
                                    {"ema": True, "use_buffers": True}, {"ema_single": True}])
def test_averaged_model(kwargs):
    def program(t):
        averaged, x = _train_averaged(t, kwargs)
        state = averaged.state_dict()
        averaged.eval()
        return list(state), [state[k] for k in state], averaged(x), averaged.n_averaged

    same(program, rtol=1e-5, atol=1e-6)


def test_averaged_model_errors():
    same(lambda t: t.optim.swa_utils.AveragedModel(
        t.nn.Linear(1, 1), avg_fn=t.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=t.optim.swa_utils.get_swa_multi_avg_fn()))
    same(lambda t: t.optim.swa_utils.get_ema_multi_avg_fn(1.5))
    same(lambda t: t.optim.swa_utils.get_ema_avg_fn(-0.1))


@pytest.mark.parametrize("arguments", [
    {"swa_lr": 0.05}, {"swa_lr": 0.05, "anneal_strategy": "linear"},
    {"swa_lr": [0.05, 0.2], "anneal_epochs": 3}, {"swa_lr": 0.01, "anneal_epochs": 0},
])
def test_swalr(arguments):
    def program(t):
        w = t.ones(2, requires_grad=True)
        b = t.ones(1, requires_grad=True)
        optimizer = t.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.3}], lr=0.5)
        scheduler = t.optim.swa_utils.SWALR(optimizer, **arguments)
        lrs = [scheduler.get_last_lr()]
        for _ in range(14):
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr())
        return lrs

    same(program)


@pytest.mark.parametrize("arguments", [{"swa_lr": [0.1]}, {"swa_lr": 0.1, "anneal_epochs": -1},
                                       {"swa_lr": 0.1, "anneal_strategy": "step"}])
def test_swalr_errors(arguments):
    def program(t):
        optimizer = t.optim.SGD([{"params": [t.ones(1, requires_grad=True)]},
                                 {"params": [t.ones(1, requires_grad=True)]}], lr=0.5)
        return t.optim.swa_utils.SWALR(optimizer, **arguments)

    same(program)


def test_update_bn():
    def program(t):
        averaged, x = _train_averaged(t, {})
        loader = t.utils.data.DataLoader(t.utils.data.TensorDataset(x * 2 + 1), batch_size=3)
        averaged.eval()
        t.optim.swa_utils.update_bn(loader, averaged)
        bn = averaged.module[1]
        return bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.momentum, \
            averaged.training

    same(program, rtol=1e-5, atol=1e-6)
