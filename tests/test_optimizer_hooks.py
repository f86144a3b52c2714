"""Optimizer's step hooks (its own and the global ones) and state-dict hooks, against torch."""

from __future__ import annotations

import copy
import importlib
import inspect

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import least_squares, least_squares_loss, same


def _arr(t):
    return np.round(t.detach().numpy().astype(np.float64), 3).tolist()


def _problem(lib):
    x, w, b, y = least_squares(lib, lib.float32, 3)
    optimizer = lib.optim.SGD([w, b], lr=0.1, momentum=0.9)
    least_squares_loss(x, w, b, y).backward()
    return optimizer, w, b


def test_step_hooks_order_arguments_and_removal():
    def program(lib):
        optimizer, w, b = _problem(lib)
        log = []
        module = importlib.import_module(lib.__name__ + ".optim.optimizer")

        def pre(opt, args, kwargs):
            log.append(("pre", opt is optimizer, len(args), args[0] is optimizer, kwargs))

        def post(opt, args, kwargs):
            log.append(("post", len(args), kwargs))

        handles = [
            optimizer.register_step_post_hook(post),
            module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
            optimizer.register_step_pre_hook(pre),
            module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
        ]
        try:
            optimizer.step()
            optimizer.step(closure=None)
        finally:
            for handle in handles:
                handle.remove()
        optimizer.step()
        return log, _arr(w), _arr(b)

    same(program)


def test_step_pre_hook_replaces_arguments():
    def program(lib):
        optimizer, w, b = _problem(lib)
        calls = []

        def closure():
            calls.append("closure")
            return lib.tensor(1.5)

        optimizer.register_step_pre_hook(lambda o, a, k: ((a[0],), {"closure": closure}))
        loss = optimizer.step()
        return calls, _arr(loss), _arr(w)

    same(program)


def test_step_pre_hook_bad_return():
    def program(lib):
        optimizer, w, b = _problem(lib)
        optimizer.register_step_pre_hook(lambda o, a, k: a)
        try:
            optimizer.step()
        except RuntimeError as error:
            message = str(error)
            # the message names the step function, whose address differs
            return message.split(" must return")[0].split(" at ")[0], message.split(" must ")[1]
        return None

    same(program)


def test_state_dict_hooks():
    def program(lib):
        optimizer, w, b = _problem(lib)
        optimizer.step()
        log = []
        optimizer.register_state_dict_pre_hook(lambda o: log.append("pre"))
        optimizer.register_state_dict_pre_hook(lambda o: log.append("pre first"), prepend=True)

        def post(o, state):
            log.append(("post", sorted(state)))
            state["extra"] = 1
            return state

        optimizer.register_state_dict_post_hook(post)
        optimizer.register_state_dict_post_hook(lambda o, s: log.append("post first"),
                                                prepend=True)
        saved = optimizer.state_dict()

        def load_pre(o, state):
            log.append(("load pre", sorted(state)))
            state = dict(state)
            del state["extra"]
            state["param_groups"] = [dict(g, lr=0.5) for g in state["param_groups"]]
            return state

        handle = optimizer.register_load_state_dict_pre_hook(load_pre)
        optimizer.register_load_state_dict_post_hook(
            lambda o: log.append(("load post", o.param_groups[0]["lr"])))
        optimizer.register_load_state_dict_post_hook(lambda o: log.append("load post first"),
                                                     prepend=True)
        optimizer.load_state_dict(saved)
        handle.remove()
        saved.pop("extra")
        optimizer.load_state_dict(saved)
        return log, sorted(saved), optimizer.param_groups[0]["lr"]

    same(program)


def test_profile_hook_step_and_hook_dicts():
    def program(lib):
        optimizer, w, b = _problem(lib)
        log = []
        optimizer.register_step_pre_hook(lambda o, a, k: log.append("pre"))

        def my_step(self, closure=None):
            log.append("step")

        wrapped = lib.optim.Optimizer.profile_hook_step(my_step)
        wrapped(optimizer)
        return log, [name for name in vars(optimizer) if "hooks" in name]

    same(program)


@pytest.mark.parametrize("name", [
    "register_step_pre_hook", "register_step_post_hook", "register_state_dict_pre_hook",
    "register_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_load_state_dict_post_hook", "profile_hook_step"])
def test_signatures(name):
    ours = inspect.signature(getattr(runtime.optim.Optimizer, name)).parameters
    theirs = inspect.signature(getattr(torch.optim.Optimizer, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


@pytest.mark.parametrize("name", ["register_optimizer_step_pre_hook",
                                  "register_optimizer_step_post_hook"])
def test_global_signatures(name):
    ours = inspect.signature(getattr(importlib.import_module("runtime.optim.optimizer"),
                                     name)).parameters
    theirs = inspect.signature(getattr(importlib.import_module("torch.optim.optimizer"),
                                       name)).parameters
    assert list(ours) == list(theirs)


def test_deepcopy_keeps_hooks_and_old_state_gets_registries():
    def program(lib):
        optimizer, w, b = _problem(lib)
        log = []
        optimizer.register_step_pre_hook(lambda o, a, k: log.append(o is optimizer))
        twin = copy.deepcopy(optimizer)
        twin.step()
        return log

    same(program)
    optimizer, w, b = _problem(runtime)
    state = dict(vars(optimizer))
    del state["_optimizer_step_pre_hooks"]
    revived = runtime.optim.SGD.__new__(runtime.optim.SGD)
    revived.__setstate__(state)
    revived.step()
    assert revived._optimizer_step_pre_hooks == {}
