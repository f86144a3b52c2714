"""Deep graphs and memory: a 100,000-node chain runs backward without recursion, and a graph's
memory comes back as soon as its last tensor goes, without the cycle collector (there are no
reference cycles between tensors and nodes)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch  # the oracle

import runtime

ROOT = Path(__file__).resolve().parent.parent
DEPTH = 100_000
FACTOR = 1.0001  # 1.0001 ** 100_000 is about e ** 10: the values stay finite


@contextmanager
def without_cycle_collector() -> Iterator[None]:
    """Objects freed inside were freed by reference counting alone."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def chain(lib: Any, depth: int = DEPTH) -> tuple[Any, Any]:
    """A leaf, and a loss at the end of a chain of `depth` multiplications from it. The loss
    multiplies by the leaf once more, so that a create_graph gradient has a graph as deep."""
    x = lib.tensor([1.5, -2.0], requires_grad=True)
    y = x
    for _ in range(depth):
        y = y * FACTOR
    return x, (y * x).sum()


def assert_close(actual: Any, expected: Any) -> None:
    assert actual.dtype is runtime.float32
    assert actual.tolist() == pytest.approx(expected.tolist(), rel=1e-4)


@pytest.fixture(scope="module")
def expected_grad() -> Any:
    """d(loss)/dx, from torch."""
    x, loss = chain(torch)
    loss.backward()
    return x.grad


@pytest.fixture(scope="module")
def expected_second() -> Any:
    """d(sum(d(loss)/dx))/dx, from torch."""
    x, loss = chain(torch)
    (grad,) = torch.autograd.grad(loss, x, create_graph=True)
    return torch.autograd.grad(grad.sum(), x)[0]


# -- a deep chain runs backward -----------------------------------------------------------------

def test_backward_through_a_deep_chain(expected_grad) -> None:
    x, loss = chain(runtime)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the engine does not recurse, however deep the graph
    try:
        loss.backward()
    finally:
        sys.setrecursionlimit(limit)
    assert_close(x.grad, expected_grad)


@pytest.mark.parametrize("create_graph", [False, True])
def test_autograd_grad_through_a_deep_chain(expected_grad, expected_second,
                                            create_graph: bool) -> None:
    x, loss = chain(runtime)
    (grad,) = runtime.autograd.grad(loss, x, create_graph=create_graph)
    assert_close(grad, expected_grad)
    assert grad.requires_grad is create_graph
    assert x.grad is None
    if create_graph:
        (second,) = runtime.autograd.grad(grad.sum(), x)  # through the 100,000-node graph
        assert_close(second, expected_second)
    del loss, grad  # with create_graph, grad's own deep graph goes with it


# -- memory comes back ---------------------------------------------------------------------------

def intermediate_tensors_alive(lib: Any) -> list[bool]:
    """Whether intermediate tensors still live at each step; saved tensors are freed by
    backward, and everything when the last tensor of the graph is deleted."""
    alive = []
    with without_cycle_collector():
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, 0.5, 0.5], requires_grad=True)
        a = x * w             # saved by the next mul
        b = (a * a).relu()    # relu saves its output
        b.register_hook(lambda grad: grad * 2)
        b.retain_grad()
        c = b.sum()
        refs = [weakref.ref(a), weakref.ref(b)]
        del a, b
        alive.append([ref() is not None for ref in refs])
        c.backward(retain_graph=True)
        alive.append([ref() is not None for ref in refs])
        c.backward()  # frees what the graph saved
        alive.append([ref() is not None for ref in refs])
        del c
        alive.append([ref() is not None for ref in refs])
    return alive


def test_saved_and_intermediate_tensors_are_freed_as_in_torch() -> None:
    expected = intermediate_tensors_alive(torch)
    assert intermediate_tensors_alive(runtime) == expected
    assert expected[-1] == [False, False]


@pytest.mark.parametrize("backward", ["none", "backward", "retain_graph", "grad",
                                      "grad with create_graph", "anomaly mode"])
def test_a_graph_is_freed_without_the_cycle_collector(backward: str) -> None:
    with without_cycle_collector():
        x = runtime.tensor([1.0, 0.5, -0.9], requires_grad=True)
        with runtime.autograd.set_detect_anomaly(backward == "anomaly mode"):
            y = x
            for i in range(1000):
                y = (y * x).relu() if i % 2 else y * 1.001
                if i == 500:
                    y.register_hook(lambda grad: grad)
                    if backward != "grad with create_graph":
                        # With create_graph, y.grad's graph would read y: a cycle, in
                        # PyTorch too.
                        y.retain_grad()
                    tensor_ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
            loss = y.sum()
        accumulate_ref = weakref.ref(loss.grad_fn.next_functions[0][0])
        grads = None
        if backward in ("backward", "anomaly mode"):
            loss.backward()
        elif backward == "retain_graph":
            loss.backward(retain_graph=True)
        elif backward == "grad":
            grads = runtime.autograd.grad(loss, x)
        elif backward == "grad with create_graph":
            grads = runtime.autograd.grad(loss, x, create_graph=True)
        del y
        assert node_ref() is not None  # loss holds the graph
        # The intermediate tensor is saved by the next node until a backward frees it.
        assert (tensor_ref() is not None) == (backward in ("none", "retain_graph",
                                                           "grad with create_graph"))
        del loss
        if backward == "grad with create_graph":
            assert node_ref() is not None  # the gradient's graph reads the forward's tensors
        del grads
        assert tensor_ref() is None
        assert node_ref() is None
        assert accumulate_ref() is None  # the leaf's AccumulateGrad goes with its graph


def test_deleting_a_very_deep_graph_does_not_overflow_the_stack() -> None:
    """In a fresh interpreter, so that a crash fails this test and not the whole run."""
    code = textwrap.dedent("""
        import gc, weakref
        import runtime
        gc.disable()
        x = runtime.tensor([1.0], requires_grad=True)
        y = x
        for i in range(250_000):
            y = y * 1.0 if i % 2 else y + 1.0
            if i == 0:
                first = weakref.ref(y.grad_fn)
        del y
        print("freed" if first() is None else "alive")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "freed"
