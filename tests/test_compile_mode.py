"""runtime.compile's tracer is a mode on the runtime's mode stack (runtime/compile/listen.py):
a trace replaces no attribute of any module or of Tensor, before, during or after it (even
one that raises midway), and a trace on one thread changes nothing another thread
computes eagerly meanwhile."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import runtime
from runtime.nn.module import Module
from runtime.optim.optimizer import Optimizer
from runtime.random import Generator

# (How many modes are pushed, over all threads: it moves while a trace runs, by design.)
_MOVING = {("runtime.modes", "active")}


class _During:
    """What the step calls between its forward and its backward (Python the trace does
    not see: a test's probe)."""

    def __init__(self) -> None:
        self.fn = None

    def __call__(self) -> None:
        if self.fn is not None:
            self.fn()


def _tiny_step(batch: int = 16, seed: int = 0):
    """The seed's TinyModel step: two Linear layers, MSE by hand, SGD."""
    runtime.manual_seed(seed)
    model = runtime.nn.Sequential(runtime.nn.Linear(30, 20), runtime.nn.ReLU(),
                                  runtime.nn.Linear(20, 5))
    optimizer = runtime.optim.SGD(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(1)
    x = runtime.tensor(rng.standard_normal((batch, 30)).astype(np.float32))
    y = runtime.tensor(rng.standard_normal((batch, 5)).astype(np.float32))

    during = _During()

    def step():
        optimizer.zero_grad()
        loss = (y - model(x)).pow(2).sum()
        during()
        loss.backward()
        optimizer.step()
        return loss

    return model, step, during


def _snapshot() -> dict:
    """Every attribute of every module of the runtime and of the generated code, and of
    Tensor, Module, Optimizer and Generator: what each name holds, by identity."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("runtime", "generated"):
            continue
        for key, value in list(vars(module).items()):
            found[(name, key)] = value
    for cls in (runtime.Tensor, Module, Optimizer, Generator):
        for key, value in list(vars(cls).items()):
            found[(cls.__qualname__, key)] = value
    return found


def _changes(before: dict, after: dict) -> list:
    """The names whose value is another object (or that appeared, or went)."""
    keys = set(before) | set(after)
    return sorted(str(key) for key in keys - _MOVING
                  if key in before and key in after and before[key] is not after[key]
                  or (key in before) != (key in after) and key[0] in _modules_of(before))


def _modules_of(snapshot: dict) -> set:
    return {key[0] for key in snapshot}


def _warm_up() -> None:
    """A compile of the step before the snapshots: the modules it imports on first use
    are imported (an import adds a name to its package)."""
    _, step, _ = _tiny_step()
    compiled = runtime.compile(step)
    for _ in range(2):
        compiled()


def test_a_compile_replaces_no_attribute_before_during_or_after():
    _warm_up()
    _, step, probe = _tiny_step()
    compiled = runtime.compile(step)
    before = _snapshot()
    during = []
    probe.fn = lambda: during.append(_snapshot())
    compiled()  # (the first call: traced)
    after = _snapshot()
    assert compiled.traces == 1
    assert compiled.fallback_reason is None, compiled.fallback_reason
    assert len(during) == 1
    assert _changes(before, during[0]) == []
    assert _changes(before, after) == []
    # The snapshot sees a swap: a name rebound in a module is one change.
    swapped = dict(before)
    swapped[("runtime.kernels", "addmm")] = lambda *args: None
    assert _changes(before, swapped) == ["('runtime.kernels', 'addmm')"]


def test_a_trace_that_raises_midway_leaves_every_attribute_as_it_was():
    _warm_up()
    _, step, probe = _tiny_step()
    compiled = runtime.compile(step)
    before = _snapshot()

    def fail():
        raise ValueError("midway")

    probe.fn = fail
    with pytest.raises(ValueError, match="midway"):
        compiled()
    probe.fn = None
    assert _changes(before, _snapshot()) == []
    assert runtime.modes.function_modes() == [] and runtime.modes.op_modes() == []
    assert runtime.modes.active == 0
    # The next call traces again, and compiles.
    compiled()
    assert compiled.fallback_reason is None, compiled.fallback_reason


def _eager_work(seed: int) -> list[bytes]:
    """What a thread computes eagerly: a forward, a backward, a few ops on values, and a
    read of a value in Python (which would stop a trace, were it heard)."""
    runtime.manual_seed(seed)
    layer = runtime.nn.Linear(8, 3)
    x = runtime.randn(4, 8)
    loss = layer(x).tanh().pow(2).sum()
    loss.backward()
    number = loss.item()
    return [loss.detach().numpy().tobytes(), layer.weight.grad.numpy().tobytes(),
            layer.bias.grad.numpy().tobytes(), repr(number).encode()]


def test_a_trace_on_one_thread_changes_nothing_another_computes():
    _warm_up()
    expected = _eager_work(3)
    model, step, probe = _tiny_step()
    eager_model, eager_step, _ = _tiny_step()
    compiled = runtime.compile(step)
    found: list = []
    errors: list = []

    def other_thread() -> None:
        try:
            found.append(_eager_work(3))
            found.append(runtime.modes.op_modes() + runtime.modes.function_modes())
        except Exception as error:  # (reported below)
            errors.append(error)

    def during() -> None:
        # The trace is in the middle of the step: another thread computes meanwhile.
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()

    probe.fn = during
    got = compiled()
    probe.fn = None
    assert errors == []
    assert found[0] == expected  # computed as with no trace anywhere
    assert found[1] == []  # the tracer's mode is this thread's only
    # The traced thread's step compiled, unaffected by the other's ops and item().
    assert compiled.fallback_reason is None, compiled.fallback_reason
    assert "tanh" not in compiled.code
    reference = eager_step()
    assert got.detach().numpy().tobytes() == reference.detach().numpy().tobytes()
    for _ in range(3):
        assert compiled().detach().numpy().tobytes() == \
            eager_step().detach().numpy().tobytes()
    for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
        assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes()


def test_a_function_mode_hears_pad_and_threshold_as_the_functions_they_are():
    """`pad` and `threshold` take an argument of their own name: a mode hears the function
    (and calls it), not that argument, as torch's does."""
    import torch

    def heard_by_mode(lib):
        heard = []

        class Log(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                heard.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = lib.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10)
        with Log():
            padded = lib.nn.functional.pad(x, (1, 2))
            cut = lib.nn.functional.threshold(x, 1.0, -1.0)
            cut_again = lib.threshold(x, 1.0, -1.0)  # (the generated wrapper's own check)
        return heard, padded.numpy(), cut.numpy(), cut_again.numpy()

    ours, theirs = heard_by_mode(runtime), heard_by_mode(torch)
    assert ours[0] == ["pad", "threshold", "threshold"]
    assert theirs[0] == ["pad", "_threshold", "threshold"]  # (F.threshold: torch's _threshold)
    for got, expected in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_array_equal(got, expected)


def test_is_compiling_is_true_in_the_tracing_thread_only():
    _warm_up()
    _, step, probe = _tiny_step()
    compiled = runtime.compile(step)
    seen: dict = {}

    def elsewhere() -> None:
        seen["other thread"] = runtime.compiler.is_compiling()

    def during() -> None:
        seen["tracing thread"] = runtime.compiler.is_compiling()
        worker = threading.Thread(target=elsewhere)
        worker.start()
        worker.join()

    probe.fn = during
    compiled()
    probe.fn = None
    assert seen == {"tracing thread": True, "other thread": False}
    assert runtime.compiler.is_compiling() is False


@pytest.mark.parametrize("mode", ["profiler", "anomaly"])
def test_a_profile_or_an_anomaly_mode_run_replaces_no_attribute(mode):
    """The other tools on the mode stack leave the runtime as they found it too, during
    and after an eager step."""
    _warm_up()
    _, step, probe = _tiny_step()
    step()  # (what the first step imports and makes)
    before = _snapshot()
    during = []
    probe.fn = lambda: during.append(_snapshot())
    if mode == "profiler":
        with runtime.profiler.profile() as prof:
            step()
        assert len(prof.key_averages()) > 0
    else:
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"), \
                runtime.autograd.detect_anomaly():
            step()
    assert len(during) == 1
    assert _changes(before, during[0]) == []
    assert _changes(before, _snapshot()) == []


def test_two_threads_trace_at_once_each_its_own_step():
    """Each thread's tracer hears its own thread: two traces at the same time, both met
    midway, each compile their step, equal to eager."""
    _warm_up()
    both = threading.Barrier(2, timeout=60)
    results: dict = {}

    # (Made here: the threads would draw their weights from the one default generator.)
    made = {seed: (_tiny_step(seed=seed), _tiny_step(seed=seed)) for seed in (1, 2)}

    def run(seed: int) -> None:
        try:
            (model, step, probe), (eager_model, eager_step, _) = made[seed]
            compiled = runtime.compile(step)
            probe.fn = both.wait
            first = compiled()
            probe.fn = None
            same = [first.detach().numpy().tobytes() ==
                    eager_step().detach().numpy().tobytes()]
            for _ in range(3):
                same.append(compiled().detach().numpy().tobytes() ==
                            eager_step().detach().numpy().tobytes())
            same += [p.detach().numpy().tobytes() == q.detach().numpy().tobytes()
                     for p, q in zip(model.parameters(), eager_model.parameters(), strict=True)]
            results[seed] = (compiled.fallback_reason, compiled.traces, all(same))
        except Exception as error:  # (reported below)
            results[seed] = error

    workers = [threading.Thread(target=run, args=(seed,)) for seed in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == {1: (None, 1, True), 2: (None, 1, True)}


def test_a_function_mode_hears_the_traced_call_as_it_hears_an_eager_one():
    """The tracer listens beneath the modes the program pushed: a TorchFunctionMode around
    the first (traced) call hears what it hears around an eager step."""
    _warm_up()

    def heard_in(step) -> list:
        heard = []

        class Log(runtime.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                heard.append(getattr(func, "__name__", repr(func)))
                return func(*args, **(kwargs or {}))

        with Log():
            step()
        return heard

    _, eager_step, _ = _tiny_step()
    _, step, _ = _tiny_step()
    compiled = runtime.compile(step)
    calls = [name for name in heard_in(eager_step) if name != "__get__"]
    assert "linear" in calls and "backward" in calls and "add_" in calls
    # (The first call: traced. Of the property reads, the tracer makes some of its own: it
    # reads each parameter's .grad to make the optimizer's state before its step.)
    assert [name for name in heard_in(compiled) if name != "__get__"] == calls
    assert compiled.traces == 1
    assert compiled.fallback_reason is None, compiled.fallback_reason


def test_the_profiler_hears_the_ops_of_the_traced_call_as_of_an_eager_one():
    """The profiler (an op mode) around a step's first, traced call records the ops an
    eager step records: the tracer hears them beneath it."""
    _warm_up()

    def ops_in(step) -> list:
        with runtime.profiler.profile() as prof:
            step()
        return sorted((event.key, event.count) for event in prof.key_averages()
                      if event.key.startswith("aten::"))

    _, eager_step, _ = _tiny_step()
    _, step, _ = _tiny_step()
    compiled = runtime.compile(step)
    expected = ops_in(eager_step)
    assert ("aten::addmm", 2) in expected
    assert ops_in(compiled) == expected  # (the first call: traced)
    assert compiled.fallback_reason is None, compiled.fallback_reason
