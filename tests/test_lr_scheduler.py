"""runtime.optim.lr_scheduler against torch.optim.lr_scheduler: the same learning rates,
epoch by epoch (exactly: the recurrences are computed in the same order), the same
state_dict, the same warnings and errors."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import runtime as rt

EPOCHS = 30


def _optimizer(lib, name="SGD", groups=2):
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(groups)]
    kwargs = {"momentum": 0.9} if name == "SGD" else {}
    return getattr(lib.optim, name)(params, lr=0.1, **kwargs)


def _lrs(lib, make, epochs=EPOCHS, metrics=None, optimizer_name="SGD"):
    """[last_epoch, get_last_lr(), the groups' lrs and momenta] after construction and after
    each of `epochs` optimizer-then-scheduler steps."""
    optimizer = _optimizer(lib, optimizer_name)
    scheduler = make(lib.optim.lr_scheduler, optimizer)

    def snapshot():
        groups = [(g["lr"], g.get("momentum"), g.get("betas")) for g in optimizer.param_groups]
        return getattr(scheduler, "last_epoch", None), list(scheduler.get_last_lr()), groups

    history = [snapshot()]
    for epoch in range(epochs):
        optimizer.step()
        if metrics is None:
            scheduler.step()
        else:
            scheduler.step(metrics[epoch])
        history.append(snapshot())
    return history


SCHEDULES = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=4, gamma=0.5),
    "StepLR-default": lambda s, o: s.StepLR(o, 3),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=7),
    "CosineAnnealingLR-eta": lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda epoch: 0.95 ** epoch),
    "LambdaLR-list": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.5]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.97),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=4),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=10),
    "LinearLR-down": lambda s, o: s.LinearLR(o, 1.0, 0.1, total_iters=12),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=EPOCHS),
    "OneCycleLR-linear": lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.5], epochs=3,
                                                  steps_per_epoch=10, anneal_strategy="linear",
                                                  div_factor=10.0),
    "OneCycleLR-3": lambda s, o: s.OneCycleLR(o, max_lr=0.8, total_steps=EPOCHS,
                                             three_phase=True, pct_start=0.25),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=6),
    "CosineAnnealingWarmRestarts-2": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.001),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, 0.1, total_iters=5), s.ExponentialLR(o, 0.9)], milestones=[5]),
    "SequentialLR-3": lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, 0.5, total_iters=3), s.CosineAnnealingLR(o, T_max=8),
            s.StepLR(o, 2)], milestones=[4, 14]),
    "CyclicLR": lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-2": lambda s, o: s.CyclicLR(o, [0.01, 0.02], 0.5, step_size_up=3,
                                          step_size_down=5, mode="triangular2"),
    "CyclicLR-exp": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                            gamma=0.9, cycle_momentum=False),
    "CyclicLR-fn": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                           scale_fn=lambda x: 0.8 ** x, scale_mode="iterations"),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, 0.3, total_iters=4), s.ExponentialLR(o, 0.95)]),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_lr_sequence_matches_torch(name):
    ours = _lrs(rt, SCHEDULES[name])
    theirs = _lrs(torch, SCHEDULES[name])
    assert ours == theirs
    assert len({tuple(h[1]) for h in ours}) > 1  # the schedule does change the lr


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
def test_cycles_adam_s_beta1_like_torch(name):
    make = SCHEDULES[name]
    assert _lrs(rt, make, optimizer_name="Adam") == _lrs(torch, make, optimizer_name="Adam")


METRICS = [1.0, 0.9, 0.9, 0.95, 0.91, 0.9, 0.9, 0.9, 0.85, 0.85, 0.86, 0.87, 0.9, 0.9, 0.9,
           0.9, 0.84, 0.84, 0.84, 0.84, 0.84, 0.84, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86,
           0.87]


@pytest.mark.parametrize("kwargs", [
    {"patience": 2}, {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"mode": "max", "patience": 1, "threshold_mode": "abs", "threshold": 0.01},
    {"patience": 0, "min_lr": [0.02, 0.05]}, {"patience": 1, "factor": 0.2, "min_lr": 0.001},
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    def make(schedulers, optimizer):
        return schedulers.ReduceLROnPlateau(optimizer, **kwargs)
    ours = _lrs(rt, make, metrics=METRICS)
    theirs = _lrs(torch, make, metrics=METRICS)
    assert ours == theirs
    assert ours[-1][1] != ours[0][1]


def test_two_chained_schedulers_compose_like_torch():
    def make(schedulers, optimizer):
        schedulers.ExponentialLR(optimizer, gamma=0.9)
        return schedulers.StepLR(optimizer, step_size=3, gamma=0.5)

    def run(lib):
        optimizer = _optimizer(lib)
        first = lib.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
        second = lib.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
        lrs = []
        for _ in range(10):
            optimizer.step()
            first.step()
            second.step()
            lrs.append([g["lr"] for g in optimizer.param_groups])
        return lrs
    assert run(rt) == run(torch)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR"])
def test_step_with_an_epoch_uses_the_closed_form_and_warns_like_torch(name):
    def run(lib):
        optimizer = _optimizer(lib)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
        optimizer.step()
        lrs = []
        for epoch in [5, 2, 11, 3]:
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step"):
                scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        return lrs
    ours, theirs = run(rt), run(torch)
    assert len(ours) == len(theirs)
    for mine, expected in zip(ours, theirs, strict=True):
        for a, b in zip(mine, expected, strict=True):
            assert math.isclose(a, b, rel_tol=1e-15)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "LambdaLR", "OneCycleLR",
                                  "SequentialLR", "ChainedScheduler",
                                  "CosineAnnealingWarmRestarts-2", "CyclicLR-2"])
def test_state_dict_and_initial_lr_like_torch(name):
    def run(lib):
        optimizer = _optimizer(lib)
        scheduler = SCHEDULES[name](lib.optim.lr_scheduler, optimizer)
        for _ in range(4):
            optimizer.step()
            scheduler.step()
        groups = [{k: v for k, v in g.items() if k not in ("params",)}
                  for g in optimizer.param_groups]
        return scheduler.state_dict(), groups
    (ours, our_groups), (theirs, their_groups) = run(rt), run(torch)
    assert list(ours) == list(theirs)
    assert ours == theirs
    for ours_group, theirs_group in zip(our_groups, their_groups, strict=True):
        assert "initial_lr" in ours_group
        assert ours_group == {k: v for k, v in theirs_group.items() if k in ours_group}


def test_load_state_dict_resumes_the_schedule():
    optimizer = _optimizer(rt)
    scheduler = rt.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=9)
    for _ in range(5):
        optimizer.step()
        scheduler.step()
    saved = scheduler.state_dict()
    second_optimizer = _optimizer(rt)
    second_optimizer.load_state_dict(optimizer.state_dict())
    second = rt.optim.lr_scheduler.CosineAnnealingLR(second_optimizer, T_max=9)
    second.load_state_dict(saved)
    for _ in range(5):
        for opt, sched in ((optimizer, scheduler), (second_optimizer, second)):
            opt.step()
            sched.step()
        assert second.get_last_lr() == scheduler.get_last_lr()
    assert second.last_epoch == 10


def _warnings_of(program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("order", ["scheduler-first", "optimizer-first", "overridden"])
def test_order_warning_like_torch(order):
    def program(lib):
        def run():
            optimizer = _optimizer(lib)
            scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 2)
            if order == "overridden":
                optimizer.step = lambda: None
            if order == "optimizer-first":
                optimizer.step()
            scheduler.step()
            scheduler.step()
        return run
    ours, theirs = _warnings_of(program(rt)), _warnings_of(program(torch))
    assert ours == theirs
    assert bool(ours) == (order != "optimizer-first")


def test_get_lr_outside_step_warns_like_torch():
    def program(lib):
        return lambda: lib.optim.lr_scheduler.StepLR(_optimizer(lib), 2).get_lr()
    ours, theirs = _warnings_of(program(rt)), _warnings_of(program(torch))
    assert ours == theirs and ours


@pytest.mark.parametrize(("make", "exception"), [
    (lambda s, o: s.StepLR(object(), 2), TypeError),
    (lambda s, o: s.StepLR(o, 2, last_epoch=3), KeyError),
    (lambda s, o: s.LambdaLR(o, [lambda e: 1.0]), ValueError),
    (lambda s, o: s.MultiplicativeLR(o, [1.0, 2.0]), TypeError),
    (lambda s, o: s.ConstantLR(o, factor=2.0), ValueError),
    (lambda s, o: s.LinearLR(o, start_factor=0.0), ValueError),
    (lambda s, o: s.LinearLR(o, end_factor=1.5), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.0), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="up"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="x"), ValueError),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0), ValueError),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1), ValueError),
    (lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="x"),
     ValueError),
    (lambda s, o: s.OneCycleLR(o, max_lr=[1.0], total_steps=5), ValueError),
])
def test_errors_like_torch(make, exception):
    messages = []
    for lib in (rt, torch):
        with pytest.raises(exception) as error:
            make(lib.optim.lr_scheduler, _optimizer(lib))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_one_cycle_past_its_steps_errors_like_torch():
    messages = []
    for lib in (rt, torch):
        optimizer = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=2)
        optimizer.step()
        scheduler.step()
        scheduler.step()
        with pytest.raises(ValueError) as error:
            scheduler.step()
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_import_path_and_missing_names():
    from runtime.optim.lr_scheduler import LRScheduler, StepLR
    assert issubclass(StepLR, LRScheduler)
    with pytest.raises(AttributeError, match="not in gradgen"):
        rt.optim.lr_scheduler.SWALR  # noqa: B018


@pytest.mark.parametrize("T_mult", [1, 2])
def test_warm_restarts_at_fractional_epochs_like_torch(T_mult):  # noqa: N803
    def run(lib):
        optimizer = _optimizer(lib)
        scheduler = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=4,
                                                                      T_mult=T_mult)
        lrs = []
        for epoch in [0.5, 1.25, 3.9, 4.0, 7.3, 12.0, 2.0, 29.5]:
            optimizer.step()
            scheduler.step(epoch)
            lrs.append((scheduler.last_epoch, scheduler.get_last_lr()))
        return lrs
    assert run(rt) == run(torch)


@pytest.mark.parametrize("make", [
    lambda s, o: s.SequentialLR(o, [], milestones=[]),
    lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]),
    lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[3]),
    lambda s, o: s.ChainedScheduler([]),
    lambda s, o: s.ChainedScheduler([object()], optimizer=o),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="sawtooth"),
    lambda s, o: s.CyclicLR(o, [0.1], 1.0),
])
def test_combined_and_restart_errors_like_torch(make):
    messages = []
    for lib in (rt, torch):
        with pytest.raises((ValueError, TypeError)) as error:
            make(lib.optim.lr_scheduler, _optimizer(lib))
        messages.append((type(error.value), str(error.value)))
    assert messages[0] == messages[1]
