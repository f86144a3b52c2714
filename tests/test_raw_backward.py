"""Which values a backward runs its formulas on: numpy arrays (apply with array_ops, the raw
backward) when nothing needs Tensors, Tensors (tensor_ops) otherwise, and the same results
and errors either way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch  # the oracle

import runtime
from generated.functions import MulBackward0
from runtime import engine
from runtime.namespaces import array_ops, tensor_ops
from runtime.node import Node

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


@pytest.fixture
def forms(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records which form MulBackward0 ran in, in order."""
    ran: list[str] = []
    apply = MulBackward0.apply

    def spy_apply(self, grads, ops=tensor_ops):
        ran.append("raw" if ops is array_ops else "tensor")
        return apply(self, grads, ops)

    monkeypatch.setattr(MulBackward0, "apply", spy_apply)
    return ran


def _graph() -> tuple[runtime.Tensor, runtime.Tensor, runtime.Tensor]:
    x = runtime.tensor(X, requires_grad=True)
    y = x * x
    return x, y, (y.exp() * 2).sum()


def test_a_plain_backward_runs_raw(forms: list[str]) -> None:
    x, _, loss = _graph()
    loss.backward()
    assert forms == ["raw", "raw"]
    np.testing.assert_allclose(x.grad.numpy(), 4 * X * np.exp(X * X))


@pytest.mark.parametrize("setup", [
    lambda x, y: y.register_hook(lambda g: g),
    lambda x, y: x.register_hook(lambda g: g),
    lambda x, y: y.retain_grad(),
    lambda x, y: y.grad_fn.register_hook(lambda gi, go: None),
    lambda x, y: y.grad_fn.register_prehook(lambda go: None),
], ids=["tensor hook", "leaf hook", "retain_grad", "post-hook", "pre-hook"])
def test_a_hook_anywhere_runs_the_tensor_form(forms: list[str], setup: Callable) -> None:
    x, y, loss = _graph()
    setup(x, y)
    loss.backward()
    assert forms == ["tensor", "tensor"]
    np.testing.assert_allclose(x.grad.numpy(), 4 * X * np.exp(X * X))


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_create_graph_and_anomaly_mode_run_the_tensor_form(forms: list[str]) -> None:
    x, _, loss = _graph()
    runtime.autograd.grad(loss, x, create_graph=True)
    with runtime.autograd.detect_anomaly():
        _, _, loss = _graph()
        loss.backward()
    with engine.tensor_backward():
        _, _, loss = _graph()
        loss.backward()
    assert forms == ["tensor"] * 6


def test_autograd_grad_runs_raw_and_returns_tensors(forms: list[str]) -> None:
    x, y, loss = _graph()
    (gx, gy) = runtime.autograd.grad(loss, (x, y))
    assert forms == ["raw", "raw"]
    assert isinstance(gx, runtime.Tensor) and isinstance(gy, runtime.Tensor)
    np.testing.assert_allclose(gy.numpy(), 2 * np.exp(X * X))


def test_every_generated_node_runs_on_arrays() -> None:
    """One body per node, for both kinds of values: none is left to the Tensor form."""
    import generated.functions as functions

    nodes = [c for c in vars(functions).values() if isinstance(c, type) and issubclass(c, Node)
             and c is not Node]
    assert len(nodes) > 100
    assert [c.__name__ for c in nodes if not c.runs_on_arrays] == []


def test_a_node_written_for_tensors_alone_gets_tensors() -> None:
    """A subclass whose apply takes no namespace (as a user writes one) runs on Tensors in a
    raw backward too, its gradients checked and delivered as arrays'."""
    seen = []

    class Twice(Node):
        def apply(self, grads):
            seen.append(type(grads[0]))
            return [grads[0] * 2]

    assert not Twice.runs_on_arrays
    x = runtime.tensor(X, requires_grad=True)
    y = x * 1.0
    node = Twice(((y.grad_fn, 0),))
    node._input_metadata = ((X.shape, X.dtype),)
    engine.execute([(node, 0)], [runtime.ones(*X.shape, dtype=runtime.float64)], False, False)
    assert seen == [runtime.Tensor]
    np.testing.assert_array_equal(x.grad.numpy(), np.full(X.shape, 2.0))


def _modified_saved_output() -> None:
    x = runtime.tensor(X, requires_grad=True)
    y = x.exp()
    z = (y * 2).sum()
    y.add_(1)  # ExpBackward0 saved its result
    z.backward()


def _backward_twice() -> None:
    x = runtime.tensor(X, requires_grad=True)
    z = (x.exp() * 2).sum()
    z.backward()
    z.backward()


def _invalid_gradient_shape() -> None:
    class Wrong(Node):
        def apply(self, grads):
            return [grads[0][:1]]

    x = runtime.tensor(X, requires_grad=True)
    z = x.exp()
    node = Wrong()
    node.set_next_edges(((z.grad_fn, 0),))
    node._input_metadata = ((X.shape, X.dtype),)
    engine.execute([(node, 0)], [runtime.tensor(np.ones_like(X))], False, False)


@pytest.mark.parametrize("program", [_modified_saved_output, _backward_twice,
                                     _invalid_gradient_shape])
def test_errors_are_the_same_on_both_paths(program: Callable) -> None:
    with pytest.raises(RuntimeError) as raw:
        program()
    with pytest.raises(RuntimeError) as tensor, engine.tensor_backward():
        program()
    assert str(raw.value) == str(tensor.value)


def test_the_gradient_a_caller_passed_is_never_kept_as_grad() -> None:
    x = runtime.tensor(X, requires_grad=True)
    given = runtime.tensor(np.ones_like(X))
    (x * 1).backward(given)  # mul by 1 passes the gradient through unchanged
    assert not np.shares_memory(x.grad.numpy(), given.numpy())
    x.grad.add_(1)
    np.testing.assert_array_equal(given.numpy(), np.ones_like(X))


def test_gradients_keep_the_inputs_dtype_and_accumulate() -> None:
    x = runtime.tensor(X.astype(np.float32), requires_grad=True)
    for _ in range(2):
        (x * runtime.tensor(np.float64(3.0))).sum().backward()
    assert x.grad.dtype is runtime.float32
    np.testing.assert_array_equal(x.grad.numpy(), np.full(X.shape, 6, np.float32))


# -- the raw loop's order is the queue's -----------------------------------------------------
# A raw backward runs the next node directly when it is the one the queue would pick
# (GraphTask.deliver). Its order is checked here against torch's, recorded by post-hooks
# there; here hooks would force the Tensor form, so apply on arrays is spied on instead.

def _spy_on_raw_order(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import generated.functions as functions
    from runtime.node import AccumulateGrad

    ran: list[str] = []
    classes = [c for c in vars(functions).values()
               if isinstance(c, type) and issubclass(c, Node) and "apply" in vars(c)]
    for cls in [*classes, AccumulateGrad]:
        def spy(self, grads, ops=tensor_ops, original=cls.apply):
            if ops is array_ops:
                ran.append(self.name())
            return original(self, grads, ops)
        monkeypatch.setattr(cls, "apply", spy)
    return ran


def _torch_order(root: torch.Tensor) -> list[str]:
    names: list[str] = []
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda grads, node=node: names.append(node.name()))
        stack.extend(n for n, _ in node.next_functions)
    return names


def _graph_program(lib, kind: str, seed: int):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(5), requires_grad=True)
    w = lib.tensor(rng.standard_normal(5), requires_grad=True)
    if kind == "diamond":
        a = x * 2
        out = (a.relu() + a * 3).sum()
    elif kind == "two leaves":
        p = x * w
        out = (p.pow(2) * (p + w)).sum() + x.sum()
    else:  # a random graph: each value is an op of one or two earlier values
        values = [x, w]
        for _ in range(12):
            i, j = rng.integers(len(values), size=2)
            op = rng.integers(4)
            a, b = values[i], values[j]
            values.append([a * b, a + b, a.sin(), a.exp() * 0.1][op])
        out = sum(v.sum() for v in values[2:])
    return x, w, out


@pytest.mark.parametrize(("kind", "seed"), [("diamond", 0), ("two leaves", 0),
                                            *[("random", seed) for seed in range(8)]])
def test_raw_backward_runs_nodes_in_torchs_order(monkeypatch: pytest.MonkeyPatch, kind: str,
                                                 seed: int) -> None:
    x, w, out = _graph_program(torch, kind, seed)
    expected = _torch_order(out)
    out.backward()
    ran = _spy_on_raw_order(monkeypatch)
    ours_x, ours_w, ours = _graph_program(runtime, kind, seed)
    ours.backward()
    assert ran == expected
    for mine, theirs in ((ours_x, x), (ours_w, w)):
        assert (mine.grad is None) == (theirs.grad is None)  # w is not in every graph
        if theirs.grad is not None:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-6)
