"""Module's state-dict options and hooks, member lookups and conversions, against torch."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import same


def _arr(t):
    return np.round(t.detach().numpy().astype(np.float64), 4).tolist()


def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 1))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) / 10)
    return net


def _state(lib):
    return {k: v.detach().clone() + 1 for k, v in _net(lib).state_dict().items()}


def test_load_state_dict_assign_keeps_requires_grad():
    def program(lib):
        net = _net(lib)
        net[2].weight.requires_grad_(False)
        state = _state(lib)
        result = net.load_state_dict(state, assign=True)
        return (repr(result), net[0].weight is state["0.weight"],
                type(net[0].weight).__name__, net[0].weight.requires_grad,
                net[2].weight.requires_grad, net[1].running_mean is state["1.running_mean"],
                _arr(net[0].weight), [n for n, _ in net.named_parameters()])

    same(program)


def test_load_state_dict_assign_parameter_and_errors():
    def parameter(lib):
        net = _net(lib)
        state = _state(lib)
        state["0.bias"] = lib.nn.Parameter(state["0.bias"], requires_grad=False)
        net.load_state_dict(state, assign=True)
        return net[0].bias is state["0.bias"], net[0].bias.requires_grad

    def not_mapping(lib):
        return _net(lib).load_state_dict([1, 2])

    def scalar_from_one(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", lib.tensor(0.0))
        m = M()
        m.load_state_dict({"count": lib.tensor([3.0])})
        return _arr(m.count), list(m.count.shape)

    def strict_errors(lib):
        state = _state(lib)
        del state["0.bias"]
        state["9.weight"] = lib.ones(1)
        state["2.weight"] = lib.ones(5)
        return _net(lib).load_state_dict(state)

    def not_strict(lib):
        state = _state(lib)
        del state["0.bias"]
        state["extra"] = lib.ones(1)
        return repr(_net(lib).load_state_dict(state, strict=False))

    same(parameter)
    same(not_mapping)
    same(scalar_from_one)
    same(strict_errors)
    same(not_strict)


def _extra_module(lib):
    class WithExtra(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(1, 1)
            self.steps = 3

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    return WithExtra


def test_extra_state():
    def program(lib):
        cls = _extra_module(lib)
        outer = lib.nn.Sequential(cls())
        state = outer.state_dict()
        keys = list(state)
        state["0._extra_state"] = {"steps": 7}
        other = lib.nn.Sequential(cls())
        other.load_state_dict(state)
        missing = dict(state)
        del missing["0._extra_state"]
        result = repr(other.load_state_dict(missing, strict=False))
        plain = lib.nn.Sequential(lib.nn.Linear(1, 1))
        unexpected = repr(plain.load_state_dict(
            {**plain.state_dict(), "0._extra_state": 1}, strict=False))
        return keys, other[0].steps, result, unexpected

    def never_called(lib):
        return lib.nn.Linear(1, 1).get_extra_state()

    same(program)
    same(never_called)


def test_state_dict_hooks_order_and_removal():
    def program(lib):
        net = lib.nn.Sequential(lib.nn.Linear(1, 1))
        log = []
        handles = [
            net.register_state_dict_pre_hook(
                lambda m, prefix, keep: log.append(("pre", prefix, keep))),
            net[0].register_state_dict_pre_hook(
                lambda m, prefix, keep: log.append(("pre0", prefix, keep))),
            net.register_state_dict_post_hook(
                lambda m, sd, prefix, meta: log.append(("post", list(sd), meta))),
            net[0].register_load_state_dict_pre_hook(
                lambda m, sd, prefix, meta, strict, missing, unexpected, errors:
                log.append(("load_pre", type(m).__name__, sorted(sd), prefix, strict))),
            net.register_load_state_dict_post_hook(
                lambda m, keys: (log.append(("load_post", repr(keys))),
                                 keys.missing_keys.clear())[1]),
        ]
        state = net.state_dict(keep_vars=True)
        partial = {"0.weight": state["0.weight"]}
        result = repr(net.load_state_dict(partial))
        for handle in handles:
            handle.remove()
        net.state_dict()
        return log, result

    def post_returns(lib):
        net = lib.nn.Linear(1, 1)
        net.register_state_dict_post_hook(lambda m, sd, p, meta: {})
        return net.state_dict()

    def load_post_returns(lib):
        net = lib.nn.Linear(1, 1)
        net.register_load_state_dict_post_hook(lambda m, keys: keys)
        return net.load_state_dict(net.state_dict())

    def positional(lib):
        return list(lib.nn.Linear(1, 1).state_dict(None, "p."))

    same(program)
    same(post_returns)
    same(load_post_returns)
    same(positional)


def test_get_parameter_buffer_set_submodule():
    def program(lib):
        net = _net(lib)
        out = [_arr(net.get_parameter("0.bias")), _arr(net.get_buffer("1.running_var")),
               list(net.modules(remove_duplicate=False)) == list(net.modules())]
        net.set_submodule("2", lib.nn.Identity())
        out.append(repr(net))
        shared = lib.nn.Linear(1, 1)
        twice = lib.nn.Sequential(shared, shared)
        out.append((len(list(twice.modules())), len(list(twice.modules(remove_duplicate=False)))))
        return out

    def errors(lib):
        net = _net(lib)
        calls = [lambda: net.get_parameter("0.nothing"),
                 lambda: net.get_parameter("1.running_mean"),
                 lambda: net.get_buffer("0.weight"), lambda: net.get_buffer("5.x"),
                 lambda: net.set_submodule("", lib.nn.ReLU()),
                 lambda: net.set_submodule("0", 3),
                 lambda: net.set_submodule("0.weight", lib.nn.ReLU()),
                 lambda: net.set_submodule("0.new", lib.nn.ReLU(), strict=True)]
        found = []
        for call in calls:
            try:
                call()
            except Exception as error:
                found.append((type(error).__name__, str(error)))
        net.set_submodule("0.new", lib.nn.ReLU())
        found.append(repr(net[0]))
        return found

    same(program)
    same(errors)


def test_conversions():
    def program(lib):
        net = _net(lib)
        out = []
        for convert in (lambda n: n.half(), lambda n: n.bfloat16(), lambda n: n.double(),
                        lambda n: n.type(lib.float32)):
            assert convert(net) is net
            out.append([str(t.dtype) for t in net.state_dict().values()])
        assert net.share_memory() is net
        empty = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        weight = empty[0].weight
        assert empty.to_empty(device="cpu") is empty
        out.append((empty[0].weight is weight, list(empty[1].weight.shape),
                    str(empty[1].bias.dtype)))
        not_recursive = lib.nn.Sequential(lib.nn.Linear(2, 2))
        not_recursive.to_empty(device="cpu", recurse=False)
        return out

    same(program)


def test_call_super_init_and_class_attributes():
    def program(lib):
        class Mixin:
            def __init__(self, *args, **kwargs):
                self.seen = (args, kwargs)

        class Cooperative(lib.nn.Module, Mixin):
            call_super_init = True

            def __init__(self):
                super().__init__(1, key=2)

        found = [Cooperative().seen, lib.nn.Module.call_super_init, lib.nn.Module.dump_patches,
                 repr(lib.nn.Module.T_destination)]
        for call in (lambda: lib.nn.Module(3), lambda: lib.nn.Module(key=3)):
            try:
                call()
            except TypeError as error:
                found.append(str(error))
        return found

    same(program)


@pytest.mark.parametrize("name", [
    "state_dict", "load_state_dict", "_save_to_state_dict", "_load_from_state_dict", "half",
    "bfloat16", "type", "to_empty", "share_memory", "modules", "get_parameter", "get_buffer",
    "set_submodule", "get_extra_state", "set_extra_state", "register_state_dict_pre_hook",
    "register_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_load_state_dict_post_hook"])
def test_signatures(name):
    ours = inspect.signature(getattr(runtime.nn.Module, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.Module, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


def test_state_dict_metadata_and_batchnorm_version():
    def program(lib):
        net = _net(lib)
        state = net.state_dict()
        metadata = {k: dict(v) for k, v in state._metadata.items()}
        old = lib.nn.BatchNorm1d(3)
        old.num_batches_tracked += 5
        plain = {k: v for k, v in old.state_dict().items() if k != "num_batches_tracked"}
        fresh = lib.nn.BatchNorm1d(3)
        first = repr(fresh.load_state_dict(plain))  # no version: the module's own count kept
        versioned = lib.nn.BatchNorm1d(3).state_dict()
        del versioned["num_batches_tracked"]
        second = repr(lib.nn.BatchNorm1d(3).load_state_dict(versioned, strict=False))
        assigned = net.state_dict()
        net.load_state_dict(assigned, assign=True)
        return (metadata, first, fresh.num_batches_tracked.item(), second,
                sorted(assigned._metadata[""]))

    same(program)
