"""The backward engine against PyTorch: each test runs one program through `runtime` and
through `torch`, and compares what it observed: values, node names, the order nodes ran
in, errors (type and message) and warnings."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

import runtime
from runtime._tensor import Size
from runtime.recording import collect_next_edges, set_history, wrap

LIBRARIES = {"torch": torch, "runtime": runtime}


# -- running a program through both libraries -----------------------------------------------

def _normalize(message: str) -> str:
    """A warning as compared: without the C++ source location PyTorch appends, and with an
    anomaly-mode traceback cut to its last line in this file (the rest, test runner and
    library frames, differs between the two libraries)."""
    message = message.split(" (Triggered internally at ")[0]
    header, _, trace = message.partition("Traceback of forward call that caused the error:\n")
    if not trace:
        return message
    lines = trace.splitlines()
    ours = [lines[i + 1].strip() for i, line in enumerate(lines[:-1])
            if line.startswith("  File") and __file__ in line]
    return f"{header}Traceback of forward call that caused the error: ... {ours[-1]}"


def plain(value: Any) -> Any:
    """A result of either library as plain data: a tensor as (dtype, values), a node as its
    name, containers element by element."""
    if isinstance(value, torch.Tensor | runtime.Tensor):
        return ("tensor", str(value.dtype), value.detach().tolist())
    if hasattr(value, "next_functions") and hasattr(value, "name"):
        return ("node", value.name())
    if isinstance(value, torch.Size | Size):
        return ("size", tuple(value))
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def observe(program: Callable[[Any], Any], lib: Any) -> tuple:
    """What `program(lib)` returns or raises, with the warnings it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple = ("returns", plain(program(lib)))
        except Exception as error:  # the error is part of what is compared
            outcome = ("raises", type(error).__name__, str(error))
    return outcome, [(w.category.__name__, _normalize(str(w.message))) for w in caught]


def assert_same(expected: Any, actual: Any, where: str = "result") -> None:
    """Equal, except floats, which need only be close (float32 sums may round differently)."""
    if isinstance(expected, float) and isinstance(actual, float):
        assert math.isclose(expected, actual, rel_tol=1e-5, abs_tol=1e-6) or (
            math.isnan(expected) and math.isnan(actual)), f"{where}: {actual} != {expected}"
    elif isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
        assert type(expected) is type(actual) and len(expected) == len(actual), (
            f"{where}: runtime gives {actual!r}, torch gives {expected!r}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, dict) and isinstance(actual, dict):
        assert expected.keys() == actual.keys(), f"{where}: {actual} != {expected}"
        for key in expected:
            assert_same(expected[key], actual[key], f"{where}[{key!r}]")
    else:
        assert expected == actual, f"{where}: runtime gives {actual!r}, torch gives {expected!r}"


def same(program: Callable[[Any], Any]) -> tuple:
    """Run `program` with torch and with runtime; they must agree. Returns what was observed:
    (("returns", result) or ("raises", error type, message), warnings)."""
    expected = observe(program, torch)
    actual = observe(program, runtime)
    assert_same(expected, actual)
    return expected


def leaf(lib: Any, values: Any, dtype: str = "float32") -> Any:
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


def record_post_hooks(lib: Any, root: Any, names: list[str]) -> None:
    """Register on every node of root's graph a post-hook that appends the node's name."""
    stack, seen = [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_hook(lambda grad_inputs, grad_outputs, node=node: names.append(node.name()))
        stack.extend(next_node for next_node, _ in node.next_functions)


# -- accumulation and broadcasting ----------------------------------------------------------

def test_grad_accumulates_across_backward_calls() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (x * x).sum().backward()
        first = x.grad.clone()
        (x * 2).sum().backward()
        return first, x.grad, x.grad.requires_grad, x.grad.grad_fn
    same(program)


def test_shared_subexpression_gets_every_path() -> None:
    def program(lib):
        a = leaf(lib, [1.0, -2.0])
        b = a + a
        c = b + b
        c.sum().backward()
        return a.grad, c.grad_fn.next_functions
    same(program)


@pytest.mark.parametrize("shapes", [((16, 10), (10,)), ((16, 10), (1, 10)), ((4, 1, 3), (5, 1)),
                                    ((2, 3), ())])
def test_broadcast_input_gets_its_gradient_summed_back(shapes) -> None:
    def program(lib):
        x = leaf(lib, np.arange(np.prod(shapes[0]), dtype=np.float32).reshape(shapes[0]).tolist())
        bias = leaf(lib, np.linspace(-1, 1, int(np.prod(shapes[1]))).reshape(shapes[1]).tolist())
        out = x * 2 + bias
        out.backward(lib.ones(*out.shape))
        return bias.grad, bias.grad.shape, x.grad.shape
    same(program)


def test_linear_layer_bias_gradient() -> None:
    def program(lib):
        x = lib.tensor(np.linspace(-2, 2, 16 * 5).reshape(16, 5).tolist())
        weight = leaf(lib, np.linspace(-1, 1, 50).reshape(10, 5).tolist())
        bias = leaf(lib, np.linspace(0, 1, 10).tolist())
        out = lib.addmm(bias, x, weight.t())
        out.relu().sum().backward()
        return bias.grad, weight.grad, out.grad_fn
    same(program)


def test_a_gradient_of_broadcast_shape_from_a_hook_is_summed_to_the_input() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x + 1
        y.grad_fn.register_hook(lambda grad_inputs, _: (lib.ones(4, 3), None))
        y.sum().backward()
        return x.grad
    same(program)


# -- .grad of non-leaves and retain_grad ----------------------------------------------------

def test_non_leaf_grad_is_none_and_warns() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.sum().backward()
        return y.grad, y.is_leaf, y.retains_grad
    same(program)


def test_retain_grad_keeps_a_non_leaf_gradient() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x + 1
        y.retain_grad()
        y.retain_grad()  # a second call changes nothing
        x.retain_grad()  # a no-op on a leaf
        (y * y).sum().backward()
        first = y.grad.clone()
        (y * 3).sum().backward()
        return first, y.grad, y.retains_grad, x.retains_grad, x.grad
    same(program)


def test_retain_grad_under_create_graph_records_its_copy() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * x
        y.retain_grad()
        (y * y).sum().backward(create_graph=True)
        first = (y.grad, y.grad.grad_fn, x.grad, x.grad.grad_fn)
        (y * y).sum().backward(create_graph=True)
        return first, y.grad, y.grad.grad_fn, x.grad, x.grad.grad_fn
    same(program)


def test_retain_grad_needs_requires_grad() -> None:
    same(lambda lib: lib.tensor([1.0]).retain_grad())


def test_a_root_named_twice_is_ready_at_its_last_gradient() -> None:
    # The root gradients are delivered in order, as from PyTorch's GraphRoot: x, named first
    # and last, is ready after y, and two ready AccumulateGrads run in the order they became so.
    def program(lib):
        events = []
        x = leaf(lib, [1.0, 2.0])
        y = leaf(lib, [3.0])
        x.register_hook(lambda grad: events.append(("x", grad)))
        y.register_hook(lambda grad: events.append(("y", grad)))
        lib.autograd.backward([x, y, x], [lib.ones(2), lib.ones(1), lib.ones(2)])
        return events, x.grad, y.grad
    same(program)


# -- hooks ----------------------------------------------------------------------------------

def test_hooks_run_in_pytorchs_order_and_modify_gradients() -> None:
    def program(lib):
        events = []
        x = leaf(lib, [1.0, 2.0, 3.0])
        w = leaf(lib, [4.0, 5.0, 6.0])
        y = x * w
        # Registered in an order unlike the one they run in.
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append(
            ("post", grad_inputs, grad_outputs)))
        y.grad_fn.register_prehook(lambda grad_outputs: (events.append(("pre", grad_outputs)),
                                                         (grad_outputs[0] * 3,))[1])
        y.register_hook(lambda grad: (events.append(("tensor 1", grad)), grad * 2)[1])
        y.retain_grad()
        y.register_hook(lambda grad: (events.append(("tensor 2", grad)), grad + 1)[1])
        x.register_hook(lambda grad: events.append(("leaf x", grad)))
        w.register_hook(lambda grad: (events.append(("leaf w", grad)), grad * 0)[1])
        y.sum().backward()
        return events, y.grad, x.grad, w.grad
    same(program)


def test_accumulate_grad_hooks() -> None:
    def program(lib):
        events = []
        x = leaf(lib, [1.0, 2.0])
        accumulate = (x * 1).grad_fn.next_functions[0][0]
        accumulate.register_prehook(lambda grads: events.append(("pre", grads)))
        accumulate.register_hook(lambda grad_inputs, grad_outputs: events.append(
            ("post", grad_inputs, grad_outputs)))
        y = x * 2
        (y * y + y).sum().backward()
        return events, x.grad
    same(program)


def test_hook_sees_the_summed_gradient_once() -> None:
    def program(lib):
        seen = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 1
        y.register_hook(lambda grad: seen.append(grad))
        x.register_hook(lambda grad: seen.append(grad))
        (y + y + x).sum().backward()
        return seen
    same(program)


def test_removed_hooks_no_longer_run() -> None:
    def program(lib):
        z = leaf(lib, [1.0, 1.0])
        handle = z.register_hook(lambda grad: grad * 10)
        (z * 1).sum().backward()
        first = z.grad.clone()
        handle.remove()
        handle.remove()  # removing twice is harmless
        (z * 1).sum().backward()
        y = z * 2
        pre = y.grad_fn.register_prehook(lambda grads: (grads[0] * 100,))
        post = y.grad_fn.register_hook(lambda grad_inputs, _: (grad_inputs[0] * 7, None))
        pre.remove()
        post.remove()
        y.sum().backward()
        return first, z.grad
    same(program)


def test_hook_removed_during_backward_still_runs_in_that_pass() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        handles = []

        def first(grad):
            handles[1].remove()
            return grad * 2

        handles.append(x.register_hook(first))
        handles.append(x.register_hook(lambda grad: grad * 100))
        (x * 1).sum().backward()
        once = x.grad.clone()
        (x * 1).sum().backward()
        return once, x.grad
    same(program)


def named_hook(grad):
    return grad.sum()


class CallableHook:
    def __call__(self, grad):
        return grad.sum()


@pytest.mark.parametrize("case", [
    "tensor hook changes the size", "named tensor hook changes the size",
    "callable object changes the size", "tensor hook changes the dtype",
    "tensor hook returns a number", "pre-hook returns a tensor", "pre-hook returns a list",
    "pre-hook returns too many", "pre-hook changes the size", "post-hook returns too few",
    "post-hook returns a tensor", "post-hook fills a None gradient", "leaf hook changes the size",
])
def test_hook_results_are_checked(case: str) -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x * 2  # MulBackward0: next_functions (x, None)
        register = {
            "tensor hook changes the size": lambda: y.register_hook(lambda g: lib.ones(2)),
            "named tensor hook changes the size": lambda: y.register_hook(named_hook),
            "callable object changes the size": lambda: y.register_hook(CallableHook()),
            "tensor hook changes the dtype": lambda: y.register_hook(lambda g: g.double()),
            "tensor hook returns a number": lambda: y.register_hook(lambda g: 3),
            "pre-hook returns a tensor": lambda: y.grad_fn.register_prehook(lambda g: g[0]),
            "pre-hook returns a list": lambda: y.grad_fn.register_prehook(lambda g: [g[0]]),
            "pre-hook returns too many": lambda: y.grad_fn.register_prehook(
                lambda g: (g[0], g[0])),
            "pre-hook changes the size": lambda: y.grad_fn.register_prehook(
                lambda g: (lib.ones(2),)),
            "post-hook returns too few": lambda: y.grad_fn.register_hook(
                lambda gi, go: (gi[0],)),
            "post-hook returns a tensor": lambda: y.grad_fn.register_hook(lambda gi, go: gi[0]),
            "post-hook fills a None gradient": lambda: y.grad_fn.register_hook(
                lambda gi, go: (gi[0], gi[0])),
            "leaf hook changes the size": lambda: x.register_hook(lambda g: lib.ones(2)),
        }[case]
        register()
        y.sum().backward()
        return x.grad
    outcome, _ = same(program)
    assert outcome[0] == "raises"


def test_register_hook_needs_requires_grad() -> None:
    same(lambda lib: lib.ones(2).register_hook(lambda grad: grad))


# -- freeing saved tensors, retain_graph ----------------------------------------------------

def test_backward_twice_through_saved_tensors_fails() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        loss = (x * x).sum()
        loss.backward()
        loss.backward()
    assert same(program)[0][0] == "raises"


def test_retain_graph_allows_a_second_backward() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        loss = (x * x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return x.grad
    same(program)


def test_saved_tensors_after_release() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        y = x * w
        r = y.relu()
        before = (y.grad_fn._saved_self, y.grad_fn._saved_other, r.grad_fn._saved_result)
        r.sum().backward()
        after = []
        for read in (lambda: y.grad_fn._saved_self, lambda: r.grad_fn._saved_result):
            try:
                read()
            except RuntimeError as error:
                after.append(str(error))
        return before, after
    same(program)


def test_graph_without_saved_tensors_runs_backward_twice() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        loss = (x + 1).sum() + x.sum()
        loss.backward()
        loss.backward()
        return x.grad
    same(program)


# -- in-place operations --------------------------------------------------------------------

@pytest.mark.parametrize("modify", ["add_", "mul_ after relu", "leaf"])
def test_inplace_change_of_a_saved_tensor_is_caught(modify: str) -> None:
    def program(lib):
        x = leaf(lib, [1.0, -2.0, 3.0])
        if modify == "add_":
            a = x * 2
            b = a * a
            a.add_(1)
        elif modify == "mul_ after relu":
            a = x.pow(2)
            c = a.relu()
            b = c * x
            c.mul_(2)
        else:
            c = lib.tensor([1.0, 2.0, 3.0])
            b = x * c
            c.add_(1)
        b.sum().backward()
    assert same(program)[0][0] == "raises"


def test_inplace_on_a_leaf_that_requires_grad() -> None:
    same(lambda lib: leaf(lib, [1.0]).add_(1))


def test_inplace_on_a_leaf_under_no_grad_is_allowed() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        with lib.no_grad():
            x.mul_(2)
        (x * x).sum().backward()
        return x, x.grad, x._version
    same(program)


# -- autograd.grad --------------------------------------------------------------------------

def test_unused_input_is_an_error_unless_allowed() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        unused = leaf(lib, [1.0, 2.0])
        return lib.autograd.grad((x * 2).sum(), [x, unused])
    same(program)


@pytest.mark.parametrize("options", [{"allow_unused": True}, {"materialize_grads": True},
                                     {"materialize_grads": True, "allow_unused": True},
                                     {"materialize_grads": True, "allow_unused": False}])
def test_allow_unused_and_materialize_grads(options: dict) -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        unused = leaf(lib, [1.0, 2.0], "float64")
        return lib.autograd.grad((x * 2).sum(), [x, unused], **options)
    same(program)


@pytest.mark.parametrize("case", ["same tensor", "twice", "leaf as output", "no inputs",
                                  "no outputs", "two outputs"])
def test_grad_corner_cases(case: str) -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x * 2
        if case == "same tensor":
            return lib.autograd.grad(y, y, lib.ones(3))
        if case == "twice":
            return lib.autograd.grad(y.sum(), [y, y, x])
        if case == "leaf as output":
            return lib.autograd.grad(x, x, lib.ones(3))
        if case == "no inputs":
            return lib.autograd.grad(y.sum(), [])
        if case == "no outputs":
            return lib.autograd.grad([], [x])
        return lib.autograd.grad([y.sum(), (x * x).sum()], [x])
    same(program)


def test_grad_of_an_input_that_does_not_require_grad() -> None:
    same(lambda lib: lib.autograd.grad((leaf(lib, [1.0]) * 2).sum(), [lib.ones(1)]))


def test_grad_leaves_dot_grad_alone() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * x
        y.retain_grad()
        grads = lib.autograd.grad(y.sum(), x)
        return grads, x.grad, y.grad
    same(program)


def test_second_derivative_of_a_cube() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (first,) = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
        (second,) = lib.autograd.grad(first.sum(), x)
        return first, first.requires_grad, second, second.requires_grad
    same(program)


def test_second_derivative_through_backward_create_graph() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        names = (first.grad_fn, first.grad_fn.next_functions)
        x.grad = None
        first.sum().backward()
        return names, first, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process cycle warning: see below
        same(program)


def test_create_graph_backward_copies_the_callers_gradient() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        gradient = lib.ones(2)
        (x + 1).backward(gradient, create_graph=True)
        first = (x.grad is gradient, x.grad.grad_fn)
        (x + 1).backward(gradient)
        return first, gradient, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(program)


def test_create_graph_cycle_warning_is_given_once() -> None:
    code = textwrap.dedent("""
        import warnings
        import {lib} as torch
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            (x ** 3).sum().backward(create_graph=True)
            (x ** 3).sum().backward(create_graph=True)
            torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
        for w in caught:
            print(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
    """)
    outputs = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                              text=True, check=True, cwd=Path(__file__).resolve().parent.parent
                              ).stdout
               for lib in ("torch", "runtime")]
    assert outputs[0].count("UserWarning") == 1
    assert outputs[1] == outputs[0]


# -- execution order and what runs ----------------------------------------------------------

def test_diamond_runs_in_pytorchs_order() -> None:
    def program(lib):
        names = []
        x = leaf(lib, [1.0, -2.0, 3.0])
        a = x * 2
        b = a.relu()
        c = a * 3
        d = (b + c).sum()
        record_post_hooks(lib, d, names)
        d.backward()
        return names, x.grad
    same(program)


def build_two_leaf_graph(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    w = leaf(lib, [0.5, -1.0, 2.0])
    p = x * w
    q = p.pow(2)
    r = p + w
    s = (q * r).sum() + x.sum()
    return x, w, p, q, s


def test_wider_graph_runs_in_pytorchs_order() -> None:
    def program(lib):
        names = []
        x, w, _, _, s = build_two_leaf_graph(lib)
        record_post_hooks(lib, s, names)
        s.backward()
        return names, x.grad, w.grad
    same(program)


@pytest.mark.parametrize("wanted", ["w", "p", "x", "q p", "p x"])
def test_grad_runs_only_the_nodes_it_needs(wanted: str) -> None:
    def program(lib):
        names = []
        x, w, p, q, s = build_two_leaf_graph(lib)
        record_post_hooks(lib, s, names)
        tensors = {"x": x, "w": w, "p": p, "q": q}
        grads = lib.autograd.grad(s, [tensors[name] for name in wanted.split()])
        return grads, names, len(names), x.grad, w.grad
    same(program)


@pytest.mark.parametrize("wanted", ["w", "p", "p x", "x w"])
def test_backward_with_inputs(wanted: str) -> None:
    def program(lib):
        names = []
        x, w, p, q, s = build_two_leaf_graph(lib)
        record_post_hooks(lib, s, names)
        tensors = {"x": x, "w": w, "p": p, "q": q}
        s.backward(inputs=[tensors[name] for name in wanted.split()])
        return names, x.grad, w.grad, p.retains_grad, p.grad
    same(program)


def test_backward_inputs_may_be_a_single_tensor_but_not_empty() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (x * x).sum().backward(inputs=x)
        result = x.grad
        (x * x).sum().backward(inputs=[])
        return result
    same(program)


def test_backward_inputs_must_require_grad() -> None:
    same(lambda lib: (leaf(lib, [1.0]) * 2).sum().backward(inputs=[lib.ones(1)]))


@pytest.mark.parametrize("wanted", ["y", "x", "y x"])
@pytest.mark.parametrize("accumulate", [False, True])
def test_captured_gradient_and_hooks(wanted: str, accumulate: bool) -> None:
    """A captured tensor whose node does not run gets its tensor hooks applied; one whose
    node runs is captured before any hook (PyTorch's engine)."""
    def program(lib):
        events = []
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x * 2
        y.register_hook(lambda g: (events.append("tensor"), g * 10)[1])
        y.grad_fn.register_prehook(lambda g: (events.append("pre"), (g[0] * 100,))[1])
        y.grad_fn.register_hook(lambda gi, go: events.append("post"))
        z = (y * y).sum()
        inputs = [{"x": x, "y": y}[name] for name in wanted.split()]
        if accumulate:
            z.backward(inputs=inputs)
            return events, x.grad, y.grad
        return events, lib.autograd.grad(z, inputs)
    same(program)


# -- what backward needs to start -----------------------------------------------------------

@pytest.mark.parametrize("gradients", ["shape", "too many", "too few", "single for two"])
def test_grad_outputs_must_match_the_outputs(gradients: str) -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        if gradients == "shape":
            return lib.autograd.grad(x * 2, [x], grad_outputs=[lib.ones(2)])
        if gradients == "too many":
            return lib.autograd.grad(x * 2, [x], grad_outputs=[lib.ones(3), lib.ones(3)])
        if gradients == "too few":
            return lib.autograd.grad([x * 2, x * 3], [x], grad_outputs=[lib.ones(3)])
        return lib.autograd.grad([x * 2, x * 3], [x], grad_outputs=lib.ones(3))
    same(program)


def test_backward_of_a_non_scalar_needs_a_gradient() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (x * 2).backward()
    same(program)


def test_backward_with_a_gradient_of_another_dtype() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        (x * 2).backward(lib.tensor([1.0, 2.0], dtype=lib.float64))
        return x.grad
    same(program)


@pytest.mark.parametrize("call", ["backward", "grad", "scalar grad"])
def test_a_tensor_without_grad_fn(call: str) -> None:
    def program(lib):
        x = leaf(lib, [1.0])
        plain_tensor = lib.ones(2)
        if call == "backward":
            plain_tensor.sum().backward()
        elif call == "grad":
            lib.autograd.grad(plain_tensor.sum(), [x])
        else:
            plain_tensor.backward()
    same(program)


# -- the graph as PyTorch exposes it --------------------------------------------------------

def test_next_functions_structure() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        y = x * w
        z = x * 2
        c = lib.tensor([1.0, 1.0]) * y
        accumulate = y.grad_fn.next_functions[0][0]
        return (
            y.grad_fn.next_functions, z.grad_fn.next_functions, c.grad_fn.next_functions,
            accumulate.name(), accumulate.variable is x, accumulate.next_functions,
            z.grad_fn.next_functions[0][0] is accumulate, x.grad_fn, x.is_leaf, y.is_leaf,
            [index for _, index in c.grad_fn.next_functions],
        )
    same(program)


def test_saved_tensors_as_pytorch_exposes_them() -> None:
    def program(lib):
        x = leaf(lib, [1.0, -2.0, 3.0])
        w = leaf(lib, [4.0, 5.0, 6.0])
        y = x * w
        s = x.sum()
        r = x.relu()
        p = x.pow(3)
        return (
            y.grad_fn._saved_self, y.grad_fn._saved_self is x, y.grad_fn._saved_other,
            s.grad_fn._saved_self_sym_sizes, r.grad_fn._saved_result,
            r.grad_fn._saved_result is r, r.grad_fn._saved_result.grad_fn is r.grad_fn,
            p.grad_fn._saved_exponent, p.grad_fn._saved_self,
            (x + w).grad_fn._saved_alpha, lib.sub(x, w, alpha=2).grad_fn._saved_alpha,
        )
    same(program)


# -- anomaly mode ---------------------------------------------------------------------------

def forward_that_fails_in_backward(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    a = x * 2
    b = a * a  # the line the anomaly warning points at
    a.add_(1)
    return b


def test_anomaly_mode_shows_the_forward_call_of_the_failing_node() -> None:
    def program(lib):
        with lib.autograd.set_detect_anomaly(True):
            forward_that_fails_in_backward(lib).sum().backward()
    outcome, caught = same(program)
    assert outcome[0] == "raises"
    assert caught == [("UserWarning", "Error detected in MulBackward0. Traceback of forward call "
                       "that caused the error: ... b = a * a  # the line the anomaly warning "
                       "points at")]


def test_anomaly_mode_without_forward_information() -> None:
    def program(lib):
        b = forward_that_fails_in_backward(lib)
        with lib.autograd.set_detect_anomaly(True):
            b.sum().backward()
    same(program)


def test_detect_anomaly_warns_on_entry_and_restores_the_mode() -> None:
    def program(lib):
        with lib.autograd.detect_anomaly():
            leaf(lib, [1.0]) * 2
        b = forward_that_fails_in_backward(lib)
        b.sum().backward()  # anomaly mode off again: no warning, PyTorch's first hint
    _, caught = same(program)
    assert len(caught) == 1


def test_anomaly_mode_checks_for_nan() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = lib.tensor([float("nan"), 1.0])
        with lib.autograd.set_detect_anomaly(True):
            (x * w).sum().backward()
    outcome, caught = same(program)
    assert outcome == ("raises", "RuntimeError",
                       "Function 'MulBackward0' returned nan values in its 0th output.")


def test_anomaly_nan_check_with_sqrt_of_a_negative_number() -> None:
    def program(lib):
        x = leaf(lib, [-1.0, 4.0])
        with lib.autograd.set_detect_anomaly(True):
            y = x.sqrt()
            y.sum().backward()
    outcome, caught = same(program)
    assert outcome[2] == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert caught == [("UserWarning", "Error detected in SqrtBackward0. Traceback of forward call "
                       "that caused the error: ... y = x.sqrt()")]


def test_anomaly_nan_check_with_pow_of_a_negative_base() -> None:
    def program(lib):
        x = leaf(lib, [-1.0, 4.0])
        with lib.autograd.set_detect_anomaly(True), np.errstate(invalid="ignore"):
            # np.errstate: numpy's own RuntimeWarning in the pow kernel is not PyTorch's.
            y = x ** 0.5
            y.sum().backward()
    outcome, _ = same(program)
    assert outcome[2] == "Function 'PowBackward0' returned nan values in its 0th output."


def test_anomaly_mode_with_check_nan_off() -> None:
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = lib.tensor([float("nan"), 1.0])
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            (x * w).sum().backward()
        return x.grad
    same(program)


# -- nodes that return wrong gradients ------------------------------------------------------

def custom_op(lib: Any, backward: Callable) -> Callable:
    """An op whose backward node, named MyFnBackward, returns `backward(lib, grad)`: a
    torch.autograd.Function in torch, a Node subclass in runtime."""
    if lib is torch:
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                return backward(lib, grad)

        return MyFn.apply

    class MyFnBackward(runtime.autograd.Node):
        def apply(self, grads):
            result = backward(lib, grads[0])
            return list(result) if isinstance(result, tuple) else [result]

    def apply(x):
        node = MyFnBackward()
        node.set_next_edges(collect_next_edges(x))
        result = wrap(x._data * 1)
        set_history(result, node)
        return result

    return apply


@pytest.mark.parametrize("case", ["wrong shape", "broadcast shape", "wrong count", "wrong dtype"])
def test_invalid_gradient_from_a_node(case: str) -> None:
    backward = {
        "wrong shape": lambda lib, grad: lib.ones(2),
        "broadcast shape": lambda lib, grad: lib.ones(4, 3),
        "wrong count": lambda lib, grad: (grad, grad),
        "wrong dtype": lambda lib, grad: grad.double(),
    }[case]

    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = custom_op(lib, backward)(x)
        names = [y.grad_fn.name()]
        y.sum().backward()
        return names, x.grad
    same(program)


def test_node_prehook_that_drops_the_gradient() -> None:
    """A pre-hook returning (None,): the formula is skipped and its inputs get no gradient."""
    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * 2).sin()
        y.grad_fn.register_prehook(lambda grads: (None,))
        y.sum().backward()
        return x.grad
    assert program(runtime) is None and program(torch) is None
