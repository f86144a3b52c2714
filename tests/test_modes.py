"""The mode stack (runtime/modes.py) and torch.overrides.TorchFunctionMode against torch's:
what a logging mode hears, nesting, the mode off its stack while it handles a call, a
result given instead of running the op, one stack per thread, and op modes hearing the
ops a composite function is made of."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode as TorchsMode

import runtime
from generated import ops as generated_ops
from runtime import modes
from runtime.overrides import BaseTorchFunctionMode, TorchFunctionMode


def logging_mode(base: type) -> type:
    """A TorchFunctionMode subclass of `base` that writes down each function's name."""

    class Log(base):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Log


def heard(lib, program) -> list[str]:
    base = TorchsMode if lib is torch else TorchFunctionMode
    lib.manual_seed(0)
    x, y = lib.randn(3, 4), lib.randn(4, 2)
    with logging_mode(base)() as log:
        program(lib, x, y)
    return log.names


@pytest.mark.parametrize("program", [
    lambda lib, x, y: lib.mm(x, y),
    lambda lib, x, y: x.mm(y).sum(),
    lambda lib, x, y: lib.add(x, 1.0, alpha=2).mul_(3).exp(),
    lambda lib, x, y: x.sum(1, keepdim=True).mean(),
    lambda lib, x, y: lib.cat([x, x], 0).flip(0),
    lambda lib, x, y: (lib.arccos(x * 0.5), x.clip(0, 1), lib.tensordot(x, y, 1),
                       lib.atleast_2d(x), x.square(), x.ravel(), lib.hstack([x, x]),
                       lib.swapaxes(x, 0, 1), x.kron(x)),
    lambda lib, x, y: (lib.nn.functional.group_norm(x.reshape(1, 3, 4), 1),
                       lib.nn.functional.max_pool3d(x.reshape(1, 1, 3, 2, 2), 1),
                       lib.nn.functional.gaussian_nll_loss(x, x, x.abs() + 1)),
], ids=["mm", "method-chain", "add-inplace", "reductions", "cat-flip", "other-names",
        "nn-more"])
def test_a_logging_mode_hears_the_calls_torch_does(program) -> None:
    assert heard(runtime, program) == heard(torch, program)


def test_the_mode_is_off_its_stack_while_it_handles_a_call() -> None:
    seen = []

    class Inside(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, list(modes.function_modes())))
            return func(*args, **(kwargs or {}))

    mode = Inside()
    with mode:
        assert modes.function_modes() == [mode]
        runtime.ones(2).exp()
    assert [name for name, _ in seen][-1] == "exp"
    assert all(stack == [] for _, stack in seen)
    assert modes.function_modes() == [] and modes.active == 0


def test_modes_nest_innermost_first_and_a_call_inside_goes_to_the_next_one_down() -> None:
    def run(lib, base):
        order = []

        class Named(base):
            def __init__(self, name):
                super().__init__()
                self.name = name

            def __torch_function__(self, func, types, args=(), kwargs=None):
                order.append((self.name, func.__name__))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2, 2)
        with Named("outer"), Named("inner"):
            lib.mm(x, x)
        return order

    assert run(runtime, TorchFunctionMode) == run(torch, TorchsMode)


def test_a_mode_may_return_a_result_instead_of_running_the_op() -> None:
    class Constant(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func.__name__ == "exp":
                return "replaced"
            return func(*args, **(kwargs or {}))

    x = runtime.zeros(2)
    with Constant():
        assert runtime.exp(x) == "replaced"
        assert x.exp() == "replaced"
        assert np.array_equal((x + 1).numpy(), [1.0, 1.0])
    assert np.array_equal(runtime.exp(x).numpy(), [1.0, 1.0])


def test_the_base_mode_raises_not_implemented_as_torchs() -> None:
    def run(lib, base):
        try:
            with base():
                lib.ones(2).exp()
        except NotImplementedError as error:
            return type(error).__name__, str(error)

    assert run(runtime, TorchFunctionMode) == run(torch, TorchsMode)


def test_a_base_mode_runs_each_call_unchanged() -> None:
    x = runtime.tensor([1.0, 2.0], requires_grad=True)
    with BaseTorchFunctionMode():
        y = (x * x).sum()
    y.backward()
    assert np.array_equal(x.grad.numpy(), [2.0, 4.0])


def test_modes_are_per_thread() -> None:
    log = logging_mode(TorchFunctionMode)()
    other: list[str] = []

    def elsewhere() -> None:
        runtime.ones(2).exp()
        other.extend(modes.function_modes())

    with log:
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        runtime.ones(2).neg()
    assert other == []
    assert "exp" not in log.names and "neg" in log.names


def test_exiting_a_mode_that_is_not_innermost_is_an_error() -> None:
    first, second = BaseTorchFunctionMode(), BaseTorchFunctionMode()
    modes.push(first)
    modes.push(second)
    with pytest.raises(RuntimeError, match="not the innermost"):
        modes.pop(first)
    modes.pop(second)
    modes.pop(first)
    assert modes.active == 0


def test_torch_overrides_is_the_module_of_import_runtime_as_torch() -> None:
    assert runtime.overrides.TorchFunctionMode is TorchFunctionMode
    assert runtime.overrides._get_current_function_mode() is None
    with BaseTorchFunctionMode() as mode:
        assert runtime.overrides._get_current_function_mode() is mode
        assert runtime.overrides._get_current_function_mode_stack() == [mode]
        assert runtime.overrides._len_torch_function_stack() == 1
        with runtime.overrides._pop_mode_temporarily() as popped:
            assert popped is mode and runtime.overrides._len_torch_function_stack() == 0
    assert runtime.overrides._len_torch_function_stack() == 0


def test_an_op_mode_hears_the_ops_of_the_spec_with_their_wrappers_and_arguments() -> None:
    calls = []

    class Ops(modes.OpMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append((func, args, kwargs))
            return func(*args, **kwargs)

    x, w, b = runtime.ones(2, 3), runtime.ones(4, 3), runtime.zeros(4)
    with Ops():
        out = runtime.nn.functional.linear(x, w, b)
    assert [func for func, _, _ in calls] == [generated_ops.t, generated_ops.addmm]
    func, args, kwargs = calls[1]
    assert args[0] is b and args[1] is x and kwargs == {"beta": 1, "alpha": 1, "out": None}
    assert np.array_equal(out.numpy(), np.full((2, 4), 3.0))


def test_an_op_mode_may_answer_an_op() -> None:
    class Zero(modes.OpMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is generated_ops.exp:
                return runtime.zeros(2)
            return func(*args, **kwargs)

    with Zero():
        assert np.array_equal(runtime.ones(2).exp().numpy(), [0.0, 0.0])


# -- a TinyModel training step, heard as torch hears it ----------------------------------------

# Deliberate differences, left out of the comparison of names:
# - `_record_function_enter_new` / `_record_function_exit._RecordFunction`: torch's
#   optimizers open a profiler block (`Optimizer.step#SGD.step`) around each step and
#   zero_grad; gradgen's do not.
# - property reads inside `optimizer.step()` (`__get__` of grad, is_sparse, device): torch's
#   SGD gathers its parameters' gradients in a bookkeeping pass of its own before updating;
#   gradgen's reads each gradient where it uses it. Their number depends on that code, not
#   on the mode mechanism; zero_grad's reads and writes of `.grad` are compared in full.
TORCH_ONLY = ("_record_function_enter_new", "_record_function_exit._RecordFunction")


def tiny_model_step(lib) -> list[str]:
    """The names a logging mode hears over a TinyModel (Linear-ReLU-Linear-softmax) step:
    forward, a squared-error loss, backward, an SGD step, zero_grad."""
    base = TorchsMode if lib is torch else TorchFunctionMode
    lib.manual_seed(0)

    class TinyModel(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = lib.nn.Linear(20, 10)
            self.relu = lib.nn.ReLU()
            self.layer2 = lib.nn.Linear(10, 4)

        def forward(self, x):
            return lib.softmax(self.layer2(self.relu(self.layer1(x))), dim=1)

    model = TinyModel()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    x, target = lib.randn(8, 20), lib.randn(8, 4)
    names = []

    class Log(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        loss = (target - model(x)).pow(2).sum()
        loss.backward()
        names.append("-- step")
        optimizer.step()
        names.append("-- zero_grad")
        optimizer.zero_grad()
    return [name for name in names if name not in TORCH_ONLY]


def test_a_logging_mode_hears_a_tiny_model_step_as_torchs_does() -> None:
    ours, theirs = tiny_model_step(runtime), tiny_model_step(torch)
    step, zero = theirs.index("-- step"), theirs.index("-- zero_grad")
    assert ours[:step] == theirs[:step] == [
        "linear", "relu", "linear", "softmax", "sub", "pow", "sum", "backward"]
    updates = [name for name in theirs[step:zero] if name != "__get__"]
    assert updates == ["-- step", "_set_grad_enabled", *["add_"] * 4, "_set_grad_enabled"]
    assert [name for name in ours[step:ours.index("-- zero_grad")] if name != "__get__"] \
        == updates
    assert ours[ours.index("-- zero_grad"):] == theirs[zero:] == [
        "-- zero_grad", *["__get__", "__set__"] * 4]


def test_property_reads_are_heard_as_torchs() -> None:
    def run(lib, base):
        heard_names = []

        class Log(base):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                owner = getattr(func, "__self__", None)  # a property's __get__ / __set__
                heard_names.append((func.__name__, getattr(getattr(owner, "fget", owner),
                                                           "__name__", None)))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2, 3, requires_grad=True)
        with Log():
            values = (x.shape, x.dtype, x.requires_grad, x.is_leaf, x.grad, x.ndim, x.T.shape)
            x.grad = lib.zeros(2, 3)
            x.requires_grad = False
        return heard_names, [str(v) for v in values[:-1]]

    assert run(runtime, TorchFunctionMode) == run(torch, TorchsMode)


# -- tools as modes: nothing of any module is replaced ----------------------------------------

def _snapshot() -> dict:
    """Every attribute of every module of gradgen, of Tensor and of the op namespaces, by
    identity."""
    import sys

    from runtime.namespaces import array_ops

    owners = {name: vars(module) for name, module in sorted(sys.modules.items())
              if name.split(".")[0] in ("runtime", "generated") and module is not None}
    owners["Tensor"] = vars(runtime.Tensor)
    owners["array_ops"] = vars(array_ops)
    snapshot = {(owner, key): id(value) for owner, values in owners.items()
                for key, value in list(values.items())}
    # The one value that changes: the stack's count of modes, which every wrapper reads.
    del snapshot[("runtime.modes", "active")]
    return snapshot


def _train_step(model, optimizer, x, y) -> None:
    loss = runtime.nn.functional.mse_loss(runtime.softmax(model(x), dim=1), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def test_a_profile_an_anomaly_mode_run_and_an_explorer_leave_every_module_attribute_as_it_was(
) -> None:
    import warnings

    runtime.manual_seed(0)
    model = runtime.nn.Sequential(runtime.nn.Linear(6, 5), runtime.nn.ReLU(),
                                  runtime.nn.Linear(5, 3))
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x, y = runtime.randn(4, 6), runtime.randn(4, 3)
    with runtime.profiler.profile(), warnings.catch_warnings():  # warm every cache up
        warnings.simplefilter("ignore")
        with runtime.autograd.detect_anomaly(), runtime.explore.recording():
            _train_step(model, optimizer, x, y)
    before = _snapshot()
    with runtime.profiler.profile(record_shapes=True, profile_memory=True,
                                  with_flops=True) as prof:
        _train_step(model, optimizer, x, y)
        during_profile = _snapshot()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with runtime.autograd.detect_anomaly():
            _train_step(model, optimizer, x, y)
            during_anomaly = _snapshot()
    from runtime.explore import recording

    with recording():  # the explorer's recording, another op mode
        _train_step(model, optimizer, x, y)
        during_explorer = _snapshot()
    after = _snapshot()
    assert during_profile == before
    assert during_anomaly == before
    assert during_explorer == before
    assert after == before
    names = {event.name for event in prof.events()}
    assert {"aten::addmm", "autograd::engine::evaluate_function: AddmmBackward0",
            "aten::mm"} <= names


# -- TorchDispatchMode: the ops themselves --------------------------------------------------

def dispatched(lib) -> tuple[list[str], list[str], Any]:
    """What a TorchDispatchMode hears over a small model's forward, then its backward."""
    from torch.utils._python_dispatch import TorchDispatchMode as TorchsDispatchMode

    from runtime.utils._python_dispatch import TorchDispatchMode

    base = TorchsDispatchMode if lib is torch else TorchDispatchMode
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(5, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
    x = lib.randn(4, 5)
    heard_names: list[str] = []

    class Log(base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            heard_names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Log():
        loss = (model(x) - 1).pow(2).sum()
        forward = list(heard_names)
        loss.backward()
    return forward, heard_names[len(forward):], model[0].weight.grad.numpy()


def test_a_dispatch_mode_hears_the_ops_of_forward_and_backward_as_torchs() -> None:
    ours, theirs = dispatched(runtime), dispatched(torch)
    # torch's autograd saves relu's output through a `detach` at the dispatch level;
    # gradgen's saved variables keep the tensor itself, with no op.
    assert ours[0] == [name for name in theirs[0] if name != "detach.default"] == [
        "t.default", "addmm.default", "relu.default", "t.default", "addmm.default",
        "sub.Tensor", "pow.Tensor_Scalar", "sum.default"]
    # Backward: the formulas' ops, heard as torch's (torch's also seeds the gradient with
    # ones_like, sums the bias's gradient with ops where gradgen's engine sums the array,
    # and writes pow's gradient with a mul.Scalar).
    assert {"mm.default", "t.default", "threshold_backward.default"} <= set(ours[1])
    assert set(ours[1]) <= set(theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_dispatch_funcs_read_as_torchs_op_overloads() -> None:
    from runtime.utils._python_dispatch import TorchDispatchMode

    funcs = []

    class Keep(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            funcs.append(func)
            return func(*args, **(kwargs or {}))

    x = runtime.ones(2, 2)
    with Keep():
        runtime.addmm(x, x, x)
        x.add_(1)
    ours = [(repr(f), str(f), f.name(), f.__name__) for f in funcs]
    theirs = [(repr(f), str(f), f.name(), f.__name__)
              for f in (torch.ops.aten.addmm.default, torch.ops.aten.add_.Tensor)]
    assert ours == theirs


def test_the_base_dispatch_mode_raises_not_implemented_as_torchs() -> None:
    from torch.utils._python_dispatch import TorchDispatchMode as TorchsDispatchMode

    from runtime.utils._python_dispatch import TorchDispatchMode

    def run(lib, base):
        try:
            with base():
                lib.ones(2).exp()
        except NotImplementedError as error:
            return type(error).__name__, str(error)

    assert run(runtime, TorchDispatchMode) == run(torch, TorchsDispatchMode)


# -- torch.overrides' helpers -----------------------------------------------------------------

def test_a_python_function_written_for_modes_is_heard_as_in_torch() -> None:
    def run(lib, base):
        overrides = lib.overrides
        heard_names = []

        def double(x):
            if overrides.has_torch_function((x,)):
                return overrides.handle_torch_function(double, (x,), x)
            return x * 2

        class Log(base):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                heard_names.append(func.__name__)
                return func(*args, **(kwargs or {}))

        class Like:  # a tensor-like type of its own
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("like", func.__name__, len(types))

        outside = double(lib.ones(2)).tolist()
        with Log():
            inside = double(lib.ones(2)).tolist()
        return (outside, inside, heard_names, double(Like()), overrides.is_tensor_like(Like()),
                overrides.is_tensor_like(lib.ones(1)), overrides.is_tensor_like(1.0))

    assert run(runtime, TorchFunctionMode) == run(torch, TorchsMode)


def test_get_overridable_functions_lists_what_modes_hear() -> None:
    listed = runtime.overrides.get_overridable_functions()
    assert {runtime.add, runtime.mm, runtime.softmax, runtime.zeros} <= set(listed[runtime])
    assert runtime.nn.functional.linear in listed[runtime.nn.functional]
    assert runtime.autograd.grad in listed[runtime.autograd]
    tensor = listed[runtime.Tensor]
    assert {runtime.Tensor.add, runtime.Tensor.backward, runtime.Tensor.reshape} <= set(tensor)
    assert {(f.__name__, f.__self__.fget.__name__) for f in tensor
            if f.__name__ in ("__get__", "__set__")} >= {("__get__", "grad"), ("__set__", "grad")}
    log = logging_mode(TorchFunctionMode)()
    x = runtime.ones(2, 2)
    with log:  # each listed function is heard
        runtime.mm(x, x)
        x.reshape(4)
        runtime.nn.functional.linear(x, x)
    assert log.names == ["mm", "reshape", "linear"]


def test_a_profiler_records_only_its_own_thread() -> None:
    done = threading.Event()
    go = threading.Event()

    def elsewhere() -> None:
        go.wait()
        x = runtime.ones(3)
        for _ in range(20):
            x = x.exp().neg()
        done.set()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    with runtime.profiler.profile() as prof:
        go.set()
        done.wait()
        runtime.ones(2).sin()
    thread.join()
    names = [event.name for event in prof.events()]
    assert "aten::sin" in names and "aten::exp" not in names and "aten::neg" not in names
