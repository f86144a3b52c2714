"""The mode stack (runtime/modes.py) and torch.overrides.TorchFunctionMode against torch's:
what a logging mode hears, nesting, the mode off its stack while it handles a call, a
result given instead of running the op, one stack per thread, and op modes hearing the
ops a composite function is made of."""

from __future__ import annotations

import threading

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
], ids=["mm", "method-chain", "add-inplace", "reductions", "cat-flip"])
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
