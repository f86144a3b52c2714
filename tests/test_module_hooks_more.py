"""Module's backward hooks and forward hook options, against torch."""

from __future__ import annotations

import copy
import importlib
import inspect

import numpy as np
import pytest
import torch

import runtime
from tests.oracle import observe, same


def _arr(t):
    return None if t is None else np.round(t.detach().numpy(), 5).tolist()


def _grads(values):
    return [_arr(v) if v is None or hasattr(v, "detach") else v for v in values]


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _data(lib):
    return lib.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7 - 0.3)


def _weights(lib):
    net = _net(lib)
    for p in net.parameters():  # the same parameters either way
        with lib.no_grad():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32)).reshape(p.shape))
    return net


def test_full_backward_hook_sees_and_replaces_gradients():
    def program(lib):
        net = _weights(lib)
        log = []

        def hook(module, grad_input, grad_output):
            log.append((type(module).__name__, _grads(grad_input), _grads(grad_output)))
            if isinstance(module, lib.nn.ReLU):
                return (grad_input[0] * 2,)

        def pre(module, grad_output):
            log.append(("pre", type(module).__name__, _grads(grad_output)))
            if isinstance(module, lib.nn.Linear) and grad_output[0].shape[-1] == 2:
                return (grad_output[0] + 1,)

        handles = [m.register_full_backward_hook(hook) for m in net]
        handles += [m.register_full_backward_pre_hook(pre) for m in net]
        x = _data(lib).requires_grad_()
        net(x).sum().backward()
        grads = [_arr(x.grad)] + [_arr(p.grad) for p in net.parameters()]
        for handle in handles:
            handle.remove()
        x.grad = None
        net(x).sum().backward()
        return log, grads, _arr(x.grad)

    same(program)


def test_full_backward_hook_input_without_grad_warns_and_order():
    def program(lib):
        net = _weights(lib)
        log = []
        net[0].register_full_backward_hook(lambda m, gi, go: log.append(("a", _grads(gi))))
        net[0].register_full_backward_hook(lambda m, gi, go: log.append(("b", _grads(go))),
                                           prepend=True)
        net[0].register_full_backward_pre_hook(lambda m, go: log.append("p1"))
        net[0].register_full_backward_pre_hook(lambda m, go: log.append("p0"), prepend=True)
        net(_data(lib)).sum().backward()
        return log

    same(program)


def test_full_backward_hook_errors():
    def wrong_count(lib):
        net = _weights(lib)
        net[0].register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        net(_data(lib).requires_grad_()).sum().backward()

    def wrong_pre_count(lib):
        net = _weights(lib)
        net[2].register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        net(_data(lib)).sum().backward()

    def no_input_grad_returns(lib):
        net = _weights(lib)
        net[0].register_full_backward_hook(lambda m, gi, go: (go[0],))
        net(_data(lib)).sum().backward()

    def mixed(lib):
        net = _weights(lib)
        net.register_backward_hook(lambda *a: None)
        net.register_full_backward_hook(lambda *a: None)

    def mixed_other_way(lib):
        net = _weights(lib)
        net.register_full_backward_hook(lambda *a: None)
        net.register_backward_hook(lambda *a: None)

    for program in (wrong_count, wrong_pre_count, no_input_grad_returns, mixed,
                    mixed_other_way):
        assert same(program)[0][0] == "raises"


def test_full_backward_hook_inplace_forward_and_non_tensor_output():
    class Inplace:
        def __init__(self, lib):
            class M(lib.nn.Module):
                def forward(self, x):
                    return x.mul_(2)
            self.module = M()

    def inplace(lib):
        module = Inplace(lib).module
        module.register_full_backward_hook(lambda *a: None)
        x = _data(lib).requires_grad_()
        return _arr(module(x * 1))

    def dict_output(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return {"y": x * 2}
        module = M()
        module.register_full_backward_hook(lambda *a: None)
        return sorted(module(_data(lib).requires_grad_()))

    assert same(inplace)[0][0] == "raises"
    same(dict_output)


def test_deprecated_backward_hook_on_last_node():
    def program(lib):
        net = _weights(lib)
        log = []

        def hook(module, grad_input, grad_output):
            log.append((type(module).__name__, _grads(grad_input), _grads(grad_output)))

        net[0].register_backward_hook(hook)
        net.register_backward_hook(hook)
        x = _data(lib).requires_grad_()
        net(x).sum().backward()
        return log, _arr(x.grad)

    same(program)


def test_deprecated_backward_hook_replaces_and_warns_nested_output():
    def replace(lib):
        net = _weights(lib)
        net[2].register_backward_hook(lambda m, gi, go: tuple(
            None if g is None else g * 0 for g in gi))
        x = _data(lib).requires_grad_()
        net(x).sum().backward()
        return _arr(x.grad), _arr(net[2].weight.grad)

    def nested(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                return [x * 2, x.exp()]
        module = M()
        module.register_backward_hook(lambda *a: None)
        x = _data(lib).requires_grad_()
        return len(module(x))

    same(replace)
    same(nested)


def _kwargs_module(lib):
    class M(lib.nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale
    return M()


def test_forward_hooks_with_kwargs_prepend_and_removal():
    def program(lib):
        module = _kwargs_module(lib)
        log = []

        def pre_kw(m, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return args, {"scale": kwargs.get("scale", 1.0) * 3}

        def pre(m, args):
            log.append("pre")
            return args[0] + 1  # a single value becomes the args tuple

        def hook_kw(m, args, kwargs, output):
            log.append(("hook_kw", kwargs["scale"]))
            return output - 1

        def hook(m, args, output):
            log.append("hook")

        handles = [module.register_forward_pre_hook(pre_kw, with_kwargs=True),
                   module.register_forward_pre_hook(pre, prepend=True),
                   module.register_forward_hook(hook_kw, with_kwargs=True),
                   module.register_forward_hook(hook, prepend=True)]
        first = _arr(module(lib.ones(2), scale=2.0))
        handles[0].remove()
        handles[2].remove()
        second = _arr(module(lib.ones(2), scale=2.0))
        with module.register_forward_hook(lambda m, a, o: o * 10):
            third = _arr(module(lib.ones(2)))
        return log, first, second, third, _arr(module(lib.ones(2))), \
            len(module._forward_hooks_with_kwargs), len(module._forward_pre_hooks_with_kwargs)

    same(program)


def test_forward_pre_hook_with_kwargs_bad_return():
    def program(lib):
        module = _kwargs_module(lib)
        module.register_forward_pre_hook(lambda m, a, k: a, with_kwargs=True)
        return module(lib.ones(2))

    assert same(program)[0][0] == "raises"


def test_forward_hook_always_call():
    def program(lib):
        class Fails(lib.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")
        module = Fails()
        log = []
        module.register_forward_hook(lambda m, a, o: log.append(("always", o)),
                                     always_call=True)
        module.register_forward_hook(lambda m, a, o: log.append("not always"))

        def raising(m, a, k, o):
            raise KeyError("hook failed")

        module.register_forward_hook(raising, always_call=True, with_kwargs=True)
        try:
            module(lib.ones(1))
        except ValueError as error:
            log.append(str(error))
        return log

    same(program)


@pytest.mark.parametrize("name", ["register_forward_hook", "register_forward_pre_hook",
                                  "register_full_backward_hook",
                                  "register_full_backward_pre_hook", "register_backward_hook"])
def test_signatures(name):
    ours = inspect.signature(getattr(runtime.nn.Module, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.Module, name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


def test_full_backward_hook_grad_cam_style():
    """Grad-CAM: a forward hook keeps the activation, a full backward hook its gradient."""
    def program(lib):
        lib.manual_seed(0)
        net = _weights(lib)
        kept = {}
        net[1].register_forward_hook(lambda m, a, o: kept.__setitem__("act", o))
        net[1].register_full_backward_hook(
            lambda m, gi, go: kept.__setitem__("grad", go[0]))
        out = net(_data(lib))
        out[:, 1].sum().backward()
        return _arr(kept["act"]), _arr(kept["grad"]), _arr((kept["act"] * kept["grad"]).sum(0))

    same(program)


def test_observe_warnings_of_full_hook_without_input_grad():
    def program(lib):
        net = _weights(lib)
        net.register_full_backward_hook(lambda *a: None)
        net(_data(lib)).sum().backward()
        return _arr(net[0].weight.grad)

    expected = observe(program, torch)
    assert expected[1]  # torch warns: no input requires grad
    assert observe(program, runtime) == expected


def _module_module(lib):
    return importlib.import_module(
        "torch.nn.modules.module" if lib is torch else "runtime.nn.module")


def test_global_module_hooks_run_first_and_are_removed():
    def program(lib):
        net = _weights(lib)
        glob = _module_module(lib)
        log = []
        handles = [
            net[0].register_forward_pre_hook(lambda m, a: log.append("own pre")),
            glob.register_module_forward_pre_hook(
                lambda m, a: log.append(("global pre", type(m).__name__))),
            net[0].register_forward_hook(lambda m, a, o: log.append("own hook")),
            glob.register_module_forward_hook(
                lambda m, a, k, o: log.append(("global hook", type(m).__name__, k)),
                with_kwargs=True),
            net[0].register_full_backward_hook(lambda m, gi, go: log.append("own bw")),
            glob.register_module_full_backward_hook(
                lambda m, gi, go: log.append(("global bw", type(m).__name__))),
            glob.register_module_full_backward_pre_hook(
                lambda m, go: log.append(("global bw pre", type(m).__name__))),
        ]
        try:
            net(_data(lib).requires_grad_()).sum().backward()
            try:
                glob.register_module_backward_hook(lambda *a: None)
            except RuntimeError as error:
                log.append(str(error))
        finally:
            for handle in handles:
                handle.remove()
        net(_data(lib).requires_grad_()).sum().backward()
        return log

    same(program)


def test_global_forward_hook_always_call():
    def program(lib):
        glob = _module_module(lib)

        class Fails(lib.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")

        log = []

        def failing(m, a, o):
            raise KeyError("hook failed")

        handles = [glob.register_module_forward_hook(
                       lambda m, a, o: log.append(("always", o)), always_call=True),
                   glob.register_module_forward_hook(failing, always_call=True)]
        try:
            Fails()(lib.ones(1))
        except ValueError as error:
            log.append(str(error))
        finally:
            for handle in handles:
                handle.remove()
        return log

    same(program)


@pytest.mark.parametrize("name", [
    "register_module_forward_hook", "register_module_forward_pre_hook",
    "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
    "register_module_backward_hook", "register_module_parameter_registration_hook",
    "register_module_buffer_registration_hook", "register_module_module_registration_hook"])
def test_global_signatures(name):
    ours = inspect.signature(getattr(_module_module(runtime), name)).parameters
    theirs = inspect.signature(getattr(_module_module(torch), name)).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


def test_deepcopy_keeps_hooks_and_old_state_gets_registries():
    def program(lib):
        net = _weights(lib)
        log = []
        handle = net[0].register_forward_hook(lambda m, a, o: log.append("hook"))
        net[0].register_full_backward_hook(lambda m, gi, go: log.append("bw"))
        twin = copy.deepcopy(net)
        handle.remove()  # the copy keeps its own
        twin(_data(lib).requires_grad_()).sum().backward()
        net(_data(lib))
        return log

    same(program)
    # A module pickled before a registry existed: __setstate__ makes it, and __call__'s
    # check learns the ids of the hooks the state has.
    module = runtime.nn.Identity()
    module.register_forward_hook(lambda m, a, o: o + 1)
    state = dict(vars(module))
    for name in ("_call_hooks", "_backward_hooks", "_state_dict_hooks"):
        del state[name]
    revived = runtime.nn.Identity.__new__(runtime.nn.Identity)
    revived.__setstate__(state)
    assert revived(runtime.zeros(1)).item() == 1.0
    assert revived.state_dict() == {}


def test_global_registration_hooks():
    def program(lib):
        glob = _module_module(lib)
        log = []

        def on_parameter(module, name, value):
            log.append(("parameter", type(module).__name__, name, None if value is None
                        else list(value.shape)))

        def on_buffer(module, name, value):
            log.append(("buffer", name))
            return None if value is None else value + 1

        def on_module(module, name, value):
            log.append(("module", name, type(value).__name__))
            return lib.nn.Identity() if isinstance(value, lib.nn.ReLU) else None

        handles = [glob.register_module_parameter_registration_hook(on_parameter),
                   glob.register_module_buffer_registration_hook(on_buffer),
                   glob.register_module_module_registration_hook(on_module)]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 1), lib.nn.ReLU())
            net[0].bias = None
            net[0].register_buffer("count", lib.zeros(1))
            net[0].count = lib.ones(1)
            net.add_module("extra", lib.nn.Tanh())
        finally:
            for handle in handles:
                handle.remove()
        net.add_module("after", lib.nn.ReLU())
        return log, repr(net), net[0].count.tolist()

    same(program)


def test_private_call_and_backward_hook_lists():
    def program(lib):
        net = _weights(lib)
        log = []
        full = lambda m, gi, go: None  # noqa: E731
        pre = lambda m, go: None  # noqa: E731
        net.register_forward_hook(lambda m, a, o: log.append("hook"))
        net.register_full_backward_hook(full)
        net.register_full_backward_pre_hook(pre)
        out = net._call_impl(_data(lib))
        out2 = net._wrapped_call_impl(_data(lib))
        full_hooks, non_full = net._get_backward_hooks()
        return (log, _arr(out) == _arr(out2), full_hooks == [full], non_full,
                net._get_backward_pre_hooks() == [pre])

    same(program)


def test_full_backward_hooks_mixed_inputs_tuple_outputs_and_twice():
    def program(lib):
        class Pair(lib.nn.Module):
            def forward(self, a, scale, b):
                return a * scale + b, (a * b).sum()

        module = Pair()
        log = []

        def hook(m, grad_input, grad_output):
            log.append(("hook", _grads(grad_input), _grads(grad_output)))

        def pre(m, grad_output):
            log.append(("pre", _grads(grad_output)))
            return (grad_output[0], None if grad_output[1] is None else grad_output[1] * 3)

        module.register_full_backward_hook(hook)
        module.register_full_backward_pre_hook(pre)
        a = _data(lib).requires_grad_()
        b = _data(lib) * 2  # needs no gradient
        first, second = module(a, 2.0, b)
        (first.sum() + second).backward(retain_graph=True)
        grad = _arr(a.grad)
        first.sum().backward()  # only the first output: the second's gradient is None
        return log, grad, _arr(a.grad)

    same(program)
