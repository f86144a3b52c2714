"""runtime.autograd.gradcheck and gradgradcheck against torch.autograd's.

Each test runs one program with `torch` and with `runtime` and compares what it observed:
the result (True / False), or the error's type and message, and the warnings. Where the
message holds Jacobians computed from random vectors (gradgradcheck's default
grad_outputs, fast mode), the random parts are compared by shape only.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

import runtime
from runtime.autograd import GradcheckError
from runtime.recording import collect_next_edges, set_history, wrap

_rng = np.random.default_rng(1)
DATA = {
    "x": np.array([0.5, -1.0, 2.0]),
    "y": _rng.standard_normal((2, 3)),
    "w": _rng.standard_normal((3, 4)),
    "logits": _rng.standard_normal((4, 5)),
    "labels": np.array([1, 0, 4, 2]),
}


def t(lib: Any, name: str, requires_grad: bool = True, dtype: str = "float64") -> Any:
    array = DATA[name]
    if array.dtype.kind == "i":
        return lib.tensor(array.tolist(), dtype=lib.int64)
    return lib.tensor(array.tolist(), dtype=getattr(lib, dtype), requires_grad=requires_grad)


def observe(program: Callable[[Any], Any], lib: Any) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple = ("returns", program(lib))
        except Exception as error:  # the error is part of what is compared
            outcome = ("raises", type(error).__name__, str(error))
    return outcome, [(w.category.__name__, str(w.message)) for w in caught]


def same(program: Callable[[Any], Any], random_numbers: bool = False) -> tuple:
    """Run `program` with torch and runtime; they must agree. With `random_numbers`, the
    numbers in an error message are not compared (they come from random vectors)."""
    expected = observe(program, torch)
    actual = observe(program, runtime)
    if random_numbers:
        expected, actual = _without_numbers(expected), _without_numbers(actual)
    assert actual == expected, f"\nruntime: {actual}\ntorch:   {expected}"
    return expected[0]


def _without_numbers(observed: Any) -> Any:
    if isinstance(observed, str):
        return re.sub(r"\s*-?\d+\.\d+(e[-+]?\d+)?", " <number>", observed)
    if isinstance(observed, tuple | list):
        return type(observed)(_without_numbers(v) for v in observed)
    return observed


def fails_with_prefix(program: Callable[[Any], Any]) -> str:
    """Both raise GradcheckError, runtime's message being the start of torch's."""
    (expected, _), (actual, _) = observe(program, torch), observe(program, runtime)
    assert actual[:2] == expected[:2] == ("raises", "GradcheckError")
    assert expected[2].startswith(actual[2]), f"\nruntime: {actual}\ntorch:   {expected}"
    return actual[2]


def passes(program: Callable[[Any], Any]) -> None:
    assert same(program) == ("returns", True)


def fails(program: Callable[[Any], Any], random_numbers: bool = False) -> str:
    """The program raises GradcheckError in both libraries; returns torch's message."""
    outcome = same(program, random_numbers)
    assert outcome[:2] == ("raises", "GradcheckError"), outcome
    return outcome[2]


# -- custom backward functions, the same in both libraries ----------------------------------

def custom(lib: Any, forward: Callable, backward: Callable) -> Callable:
    """An op of one input whose backward is `backward(lib, x, grads) -> grad of x`; grads
    may hold None (an output nobody differentiated)."""
    if lib is torch:
        class Custom(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                ctx.save_for_backward(x)
                return forward(lib, x)

            @staticmethod
            def backward(ctx, *grads):
                (x,) = ctx.saved_tensors
                return backward(lib, x, grads)

        return Custom.apply

    class CustomBackward(runtime.autograd.Node):
        def __init__(self, x):
            super().__init__()
            self.x = x.detach()

        def apply(self, grads):
            return [backward(lib, self.x, tuple(grads))]

    def apply(x):
        node = CustomBackward(x)
        node.set_next_edges(collect_next_edges(x))
        with runtime.no_grad():
            results = forward(lib, x)
        outputs = results if isinstance(results, tuple) else (results,)
        wrapped = []
        for output in outputs:
            result = wrap(output.detach().numpy())
            set_history(result, node)
            wrapped.append(result)
        return tuple(wrapped) if isinstance(results, tuple) else wrapped[0]

    return apply


# -- correct functions pass ------------------------------------------------------------------

CORRECT = {
    "exp": lambda lib: ((lambda a: a.exp()), (t(lib, "x"),)),
    "sin_times_pow": lambda lib: ((lambda a: a.sin() * a.pow(3)), (t(lib, "x"),)),
    "matmul_tanh": lambda lib: ((lambda a, b: (a @ b).tanh()), (t(lib, "y"), t(lib, "w"))),
    "softmax_dim": lambda lib: ((lambda a, dim: a.softmax(dim)), (t(lib, "y"), 1)),
    "cross_entropy": lambda lib: (
        (lambda logits, labels: lib.nn.functional.cross_entropy(logits, labels)),
        (t(lib, "logits"), t(lib, "labels"))),
    "two_outputs": lambda lib: ((lambda a, b: (a * b, (a - b).pow(2).sum())),
                                (t(lib, "x"), t(lib, "x") * 0.5 + 1)),
    "unbind": lambda lib: ((lambda a: a.unbind(0)), (t(lib, "y"),)),
    "input_not_requiring_grad": lambda lib: (
        (lambda a, b: a * b), (t(lib, "x"), t(lib, "x", requires_grad=False))),
    "output_independent_of_an_input": lambda lib: (
        (lambda a, b: a.exp()), (t(lib, "x"), t(lib, "y"))),
    "non_tensor_inputs": lambda lib: (
        (lambda scale, a, name, b: (a * scale).sum(1, keepdim=True) * b),
        (2.5, t(lib, "y"), "ignored", t(lib, "x"))),
    "integer_output": lambda lib: ((lambda a: (a.exp(), a.argmax())), (t(lib, "x"),)),
    "output_without_grad_among_others": lambda lib: (
        (lambda a: (a.detach() * 2, a.cos())), (t(lib, "x"),)),
    "identity": lambda lib: ((lambda a: a), (t(lib, "x"),)),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", sorted(CORRECT))
def test_correct_functions_pass(case: str, fast_mode: bool) -> None:
    def program(lib):
        func, inputs = CORRECT[case](lib)
        return lib.autograd.gradcheck(func, inputs, fast_mode=fast_mode)

    if fast_mode and case in TORCH_FAST_MODE_MISPAIRS:
        assert program(runtime) is True
    else:
        passes(program)


# torch's fast mode pairs the random vector of the k-th output that requires grad with
# the k-th floating-point output, so an output that does not require grad before one that
# does makes it compare the wrong quantities (and fail, or raise a size mismatch).
# gradgen pairs each output with its own vector.
TORCH_FAST_MODE_MISPAIRS = {"output_without_grad_among_others", "second_output_second_input"}


@pytest.mark.parametrize("case", ["exp", "sin_times_pow", "matmul_tanh", "softmax_dim",
                                  "cross_entropy", "two_outputs", "non_tensor_inputs"])
def test_correct_functions_pass_gradgradcheck(case: str) -> None:
    def program(lib):
        func, inputs = CORRECT[case](lib)
        return lib.autograd.gradgradcheck(func, inputs)

    passes(program)


def test_a_single_tensor_is_an_input_tuple_of_one() -> None:
    passes(lambda lib: lib.autograd.gradcheck(lambda a: a.tanh(), t(lib, "y")))
    passes(lambda lib: lib.autograd.gradgradcheck(lambda a: a.tanh(), t(lib, "y")))


# -- wrong gradients fail, with the Jacobians ------------------------------------------------

def scaled_by_hook(lib: Any, a: Any) -> Any:
    """exp(a), whose gradient a hook doubles on the way back."""
    b = a * 1
    b.register_hook(lambda grad: grad * 2)
    return b.exp()


WRONG = {
    "detached_factor": lambda lib: ((lambda a: a * a.detach()), (t(lib, "x"),)),
    "hook_scales_the_gradient": lambda lib: ((lambda a: scaled_by_hook(lib, a)), (t(lib, "x"),)),
    # the wrong pair is output 1 (of those requiring grad) and input 1 (of those requiring
    # grad): torch counts only those
    "second_output_second_input": lambda lib: (
        (lambda n, a, b: (a.exp(), a.detach() * 3, b * b.detach())),
        (3, t(lib, "y"), t(lib, "x"))),
    "custom_backward_off_by_a_factor": lambda lib: (
        custom(lib, lambda lib, x: x.sin(), lambda lib, x, grads: grads[0] * x.cos() * 1.01),
        (t(lib, "x"),)),
    "function_of_a_detached_input": lambda lib: ((lambda a: a.detach().exp()), (t(lib, "x"),)),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_gradients_fail_with_both_jacobians(case: str) -> None:
    def program(lib):
        func, inputs = WRONG[case](lib)
        return lib.autograd.gradcheck(func, inputs)

    message = fails(program)
    assert message.startswith("Jacobian mismatch for output") or (
        message == "Numerical gradient for function expected to be zero")


def test_mismatch_message_format() -> None:
    message = fails(lambda lib: lib.autograd.gradcheck(lambda a: a * a.detach(), t(lib, "x")))
    assert message == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[ 1.0000,  0.0000,  0.0000],\n"
        "        [ 0.0000, -2.0000,  0.0000],\n"
        "        [ 0.0000,  0.0000,  4.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[ 0.5000,  0.0000,  0.0000],\n"
        "        [-0.0000, -1.0000, -0.0000],\n"
        "        [ 0.0000,  0.0000,  2.0000]], dtype=torch.float64)\n")


def test_which_output_and_input_counts_only_those_requiring_grad() -> None:
    def program(lib):
        func, inputs = WRONG["second_output_second_input"](lib)
        return lib.autograd.gradcheck(func, inputs)

    assert fails(program).startswith("Jacobian mismatch for output 1 with respect to input 1,")


@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_gradients_fail_in_fast_mode(case: str) -> None:
    """Fast mode's vᵀJu numbers come from random vectors, so they differ from torch's;
    the slow-mode Jacobians appended to the message do not."""
    def program(lib):
        func, inputs = WRONG[case](lib)
        return lib.autograd.gradcheck(func, inputs, fast_mode=True)

    if case in TORCH_FAST_MODE_MISPAIRS:
        with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 1 with respect "
                                                 "to input 1,"):
            program(runtime)
    else:
        fails(program, random_numbers=True)


def test_fast_mode_message_recomputes_the_jacobians() -> None:
    def program(lib):
        try:
            lib.autograd.gradcheck(lambda a: a * a.detach(), t(lib, "x"), fast_mode=True)
        except RuntimeError as error:
            return str(error).split("\n\n", 1)[1]

    assert same(program)[1].startswith("The above quantities relating the numerical")


@pytest.mark.parametrize("case", sorted(WRONG))
def test_raise_exception_false_returns_false(case: str) -> None:
    def program(lib):
        func, inputs = WRONG[case](lib)
        return (lib.autograd.gradcheck(func, inputs, raise_exception=False),
                lib.autograd.gradcheck(func, inputs, raise_exception=False, fast_mode=True))

    if case in TORCH_FAST_MODE_MISPAIRS:
        assert program(runtime) == (False, False)
    else:
        assert same(program) == ("returns", (False, False))


def test_gradcheck_error_is_a_runtime_error() -> None:
    assert issubclass(GradcheckError, RuntimeError)
    assert runtime.autograd.gradcheck.__module__ == "runtime.autograd.gradcheck"
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to"):
        runtime.autograd.gradcheck(lambda a: a * a.detach(), t(runtime, "x"))


# -- the checks on the inputs ----------------------------------------------------------------

def test_no_input_requires_grad() -> None:
    outcome = same(lambda lib: lib.autograd.gradcheck(lambda a: a * 2,
                                                      t(lib, "x", requires_grad=False)))
    assert outcome[:2] == ("raises", "ValueError")


def test_float32_inputs_warn() -> None:
    """The warning, and float32 differences: eps=1e-6 is lost in float32 rounding, so the
    default check fails, with the same float32 Jacobians in both libraries."""
    def program(lib):
        x = t(lib, "x", dtype="float32")
        loose = lib.autograd.gradcheck(lambda a: a * 2, x, eps=1e-3, atol=1e-2, rtol=1e-2)
        return loose, lib.autograd.gradcheck(lambda a: a * 2, x, raise_exception=False)

    assert same(program) == ("returns", (True, False))
    fails(lambda lib: lib.autograd.gradcheck(lambda a: a * 2, t(lib, "x", dtype="float32")))


def test_stride_zero_input_is_refused() -> None:
    outcome = same(lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, t(lib, "x", requires_grad=False)[:1].expand(3).requires_grad_()))
    assert outcome[:2] == ("raises", "RuntimeError")


def test_output_shape_must_not_change_under_perturbation() -> None:
    outcome = same(lambda lib: lib.autograd.gradcheck(lambda a: a[a > 0.5 - 1e-7],
                                                      t(lib, "x")))
    assert outcome[:2] == ("raises", "AssertionError")


def test_inputs_are_restored() -> None:
    def program(lib):
        x = t(lib, "y")
        lib.autograd.gradcheck(lambda a: a.exp(), x)
        lib.autograd.gradcheck(lambda a: a.exp(), x, fast_mode=True)
        return x.tolist() == DATA["y"].tolist(), x._version, x.grad

    assert same(program) == ("returns", (True, 0, None))


# -- tolerances ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"eps": 1e-1},  # central differences of x³ err by eps²: too much for atol and rtol
    {"eps": 1e-1, "atol": 1e-1},
    {"eps": 1e-1, "rtol": 1e-1},
    {"eps": 1e-1, "atol": 1e-3, "rtol": 1e-3},
    {"eps": 1e-2},
    {"eps": 1e-2, "atol": 1e-4, "rtol": 0},
    {"eps": 1e-2, "atol": 0, "rtol": 1e-4},
])
def test_eps_atol_and_rtol_are_honoured(kwargs: dict) -> None:
    same(lambda lib: lib.autograd.gradcheck(lambda a: a.pow(3), t(lib, "x"),
                                            raise_exception=False, **kwargs))


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"eps": 1e-1, "atol": 0, "rtol": 0}, False),
    ({"eps": 1e-1, "atol": 1e-1}, True),
    ({"eps": 1e-2}, True),
    ({"eps": 1e-3, "atol": 0, "rtol": 1e-5}, True),
])
def test_eps_atol_and_rtol_are_honoured_in_fast_mode(kwargs: dict, expected: bool) -> None:
    """Outcomes that do not depend on the random vectors (which differ from torch's)."""
    outcome = same(lambda lib: lib.autograd.gradcheck(lambda a: a.pow(3), t(lib, "x"),
                                                      raise_exception=False, fast_mode=True,
                                                      **kwargs))
    assert outcome == ("returns", expected)


def test_tolerances_decide_as_in_torch() -> None:
    results = [same(lambda lib, kw=kw: lib.autograd.gradcheck(
        lambda a: a.pow(3), t(lib, "x"), raise_exception=False, **kw))[1]
        for kw in ({"eps": 1e-1}, {"eps": 1e-1, "atol": 1e-1}, {"eps": 1e-2})]
    assert results == [False, True, True]


# -- the checks on backward itself -----------------------------------------------------------

def test_backward_must_be_multiplied_by_grad_output() -> None:
    """A backward that ignores its gradient gives the right Jacobian for a one-element
    output, but not zero for a zero gradient."""
    def program(lib):
        op = custom(lib, lambda lib, x: x * 2, lambda lib, x, grads: lib.ones_like(x) * 2)
        return lib.autograd.gradcheck(op, t(lib, "x")[:1].detach().requires_grad_(),
                                      check_undefined_grad=False)

    assert fails(program) == "backward not multiplied by grad_output"


def test_backward_must_accept_undefined_gradients() -> None:
    def backward(lib, x, grads):
        if grads[0] is None:
            raise RuntimeError("no gradient")
        return grads[0] * x.cos()

    def program(lib):
        return lib.autograd.gradcheck(custom(lib, lambda lib, x: x.sin(), backward), t(lib, "x"))

    outcome, warned = observe(program, runtime)
    assert (outcome, warned) == observe(program, torch)
    assert outcome[1] == "GradcheckError" and warned[0][1].startswith("Backwards compatibility")
    passes(lambda lib: lib.autograd.gradcheck(custom(lib, lambda lib, x: x.sin(), backward),
                                              t(lib, "x"), check_undefined_grad=False))


def test_undefined_gradients_must_give_zeros_or_nothing() -> None:
    def backward(lib, x, grads):
        return lib.zeros_like(x) + 1 if grads[0] is None else grads[0] * x.cos()

    def program(lib):
        return lib.autograd.gradcheck(custom(lib, lambda lib, x: x.sin(), backward), t(lib, "x"))

    assert fails(program).startswith("Expected all input grads to be undefined or zero")


def test_undefined_gradients_of_several_outputs() -> None:
    """With two outputs, all and then each one alone are left without gradient."""
    def backward(lib, x, grads):
        parts = [g * factor for g, factor in zip(grads, (2, 3), strict=True) if g is not None]
        if not parts:
            raise RuntimeError("no gradient at all")
        return sum(parts)

    def program(lib, check_undefined_grad):
        op = custom(lib, lambda lib, x: (x * 2, x * 3), backward)
        return lib.autograd.gradcheck(op, t(lib, "x"),
                                      check_undefined_grad=check_undefined_grad)

    assert fails(lambda lib: program(lib, True)).startswith(
        "Expected backward function to handle undefined output grads.")
    passes(lambda lib: program(lib, False))


def test_backward_must_be_reentrant() -> None:
    def make_backward():
        calls = []

        def backward(lib, x, grads):
            calls.append(1)
            return None if grads[0] is None else grads[0] * (2 + 1e-9 * len(calls))

        return backward

    def program(lib, nondet_tol):
        op = custom(lib, lambda lib, x: x * 2, make_backward())
        return lib.autograd.gradcheck(op, t(lib, "x"), nondet_tol=nondet_tol)

    # torch appends a note on its own test suites (OpInfo, common_nn) to this message
    assert fails_with_prefix(lambda lib: program(lib, 0.0)).startswith(
        "Backward is not reentrant")
    passes(lambda lib: program(lib, 1e-6))


# -- flags -----------------------------------------------------------------------------------

def test_flag_combinations_torch_refuses() -> None:
    for kwargs in ({"check_backward_ad": False},
                   {"check_batched_forward_grad": True},
                   {"check_batched_grad": True, "check_backward_ad": False}):
        outcome = same(lambda lib, kw=kwargs: lib.autograd.gradcheck(
            lambda a: a.exp(), t(lib, "x"), **kw))
        assert outcome[:2] == ("raises", "AssertionError")
    for kwargs in ({"check_rev_over_rev": False},
                   {"check_rev_over_rev": False, "check_fwd_over_rev": True}):
        outcome = same(lambda lib, kw=kwargs: lib.autograd.gradgradcheck(
            lambda a: a.exp(), t(lib, "x"), **kw))
        assert outcome[:2] == ("raises", "AssertionError")


def test_batched_grad_needs_vmap() -> None:
    with pytest.raises(NotImplementedError, match="vmap"):
        runtime.autograd.gradcheck(lambda a: a.exp(), t(runtime, "x"), check_batched_grad=True)


def test_check_grad_dtypes_on_correct_functions() -> None:
    passes(lambda lib: lib.autograd.gradcheck(lambda a, b: a * b, (t(lib, "x"), t(lib, "x")),
                                              check_grad_dtypes=True))


# -- gradgradcheck ---------------------------------------------------------------------------

def wrong_second_derivative(lib: Any) -> Callable:
    """x² whose backward, 2 x grad, treats x as a constant: first derivative right,
    second derivative with respect to x wrong (zero)."""
    return custom(lib, lambda lib, x: x * x,
                  lambda lib, x, grads: None if grads[0] is None else grads[0] * 2 * x.detach())


def test_gradgradcheck_with_given_grad_outputs() -> None:
    def go(lib, requires_grad=True):
        return lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=requires_grad)

    passes(lambda lib: lib.autograd.gradgradcheck(lambda a: a.pow(3), t(lib, "x"), go(lib)))
    passes(lambda lib: lib.autograd.gradgradcheck(lambda a: a.pow(3), (t(lib, "x"),),
                                                  (go(lib),)))
    # grad_outputs that don't require grad are used as they are: not checked against
    passes(lambda lib: lib.autograd.gradgradcheck(lambda a: a.pow(3), t(lib, "x"),
                                                  go(lib, requires_grad=False)))
    passes(lambda lib: lib.autograd.gradgradcheck(lambda a, b: (a * b).exp(),
                                                  (t(lib, "y"), t(lib, "x")),
                                                  lib.ones(2, 3, dtype=lib.float64,
                                                           requires_grad=True)))


def test_gradgradcheck_finds_a_wrong_second_derivative() -> None:
    def program(lib):
        go = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradgradcheck(wrong_second_derivative(lib), t(lib, "x"), go)

    assert fails(program).startswith("Jacobian mismatch for output 0 with respect to input 0,")
    fails(lambda lib: lib.autograd.gradgradcheck(wrong_second_derivative(lib), t(lib, "x")),
          random_numbers=True)
    assert same(lambda lib: lib.autograd.gradgradcheck(
        wrong_second_derivative(lib), t(lib, "x"), raise_exception=False)) == ("returns", False)
    # the first derivative is right
    passes(lambda lib: lib.autograd.gradcheck(wrong_second_derivative(lib), t(lib, "x")))


def test_gradgradcheck_detached_factor() -> None:
    fails(lambda lib: lib.autograd.gradgradcheck(lambda a: a * a.detach(), t(lib, "x")),
          random_numbers=True)


@pytest.mark.parametrize("kwargs", [{"gen_non_contig_grad_outputs": True},
                                    {"fast_mode": True}, {"check_undefined_grad": False}])
def test_gradgradcheck_options(kwargs: dict) -> None:
    passes(lambda lib: lib.autograd.gradgradcheck(lambda a, b: (a @ b).tanh(),
                                                  (t(lib, "y"), t(lib, "w")), **kwargs))


def test_non_contiguous_grad_outputs_are_non_contiguous() -> None:
    # `runtime.autograd.gradcheck` is the function; the module is reached by its name
    module = importlib.import_module("runtime.autograd.gradcheck")
    output = t(runtime, "y").exp()
    grad_output = module._random_grad_output(output, noncontiguous=True)
    assert not grad_output.is_contiguous() and grad_output.requires_grad
    assert grad_output.shape == output.shape and grad_output.dtype == output.dtype
    values = np.asarray(grad_output.detach())
    assert (values >= -1).all() and (values < 1).all()


@pytest.mark.parametrize("fast_mode", [False, True])
def test_integer_output_before_a_floating_one(fast_mode: bool) -> None:
    """torch's slow mode pairs numerical Jacobians (floating outputs only) with all the
    outputs and fails with an IndexError here; gradgen pairs them by position."""
    x = t(runtime, "x")
    assert runtime.autograd.gradcheck(lambda a: (a.argmax(), a.exp()), x, fast_mode=fast_mode)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to "
                                             "input 0,"):
        runtime.autograd.gradcheck(lambda a: (a.argmax(), a * a.detach()), x,
                                   fast_mode=fast_mode)
