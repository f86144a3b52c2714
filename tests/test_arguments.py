"""Argument parsing as PyTorch's: where a Python number may stand for a Tensor, a method's
positions in its messages, 0-dim tensors standing for Scalars, and the generated quick
checks agreeing with runtime/arguments.py.

Each case is a line of Python run once with `t` bound to torch (and `F` to its
nn.functional) and once with them bound to gradgen's runtime. Where torch returns, gradgen
must return a tensor of the same shape, dtype and values; where torch raises, the same
exception class with the same message (for "received an invalid combination of
arguments", whose list of signatures is torch's Python signatures, the first line).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_functional

import runtime
import runtime.nn.functional as runtime_functional
from codegen import wrapped_numbers
from runtime import arguments

ROOT = Path(__file__).resolve().parent.parent


def _outcome(library: Any, functional: Any, code: str) -> tuple:
    """("returns", value) or ("raises", class name, message) of the line with `library`."""
    try:
        return "returns", eval(code, {"t": library, "F": functional, "np": np})
    except Exception as error:  # the class is compared, whatever it is
        message = str(error)
        if "received an invalid combination of arguments" in message:
            message = message.splitlines()[0]
        return "raises", type(error).__name__, message


def _check_same(code: str) -> None:
    expected = _outcome(torch, torch_functional, code)
    actual = _outcome(runtime, runtime_functional, code)
    if expected[0] == "raises":
        assert actual[0] == "raises", f"torch raises {expected[1:]}, gradgen gives {actual[1]!r}"
        assert actual[1:] == expected[1:]
        return
    assert actual[0] == "returns", f"gradgen raises {actual[1:]}, torch gives {expected[1]!r}"
    want, got = expected[1], actual[1]
    assert isinstance(got, runtime.Tensor), f"{type(got)} for a Tensor"
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)


# A bad argument of a Tensor method: torch counts its positions without self
# (`x.add(None)` names position 1, `torch.add(x, None)` position 2), and lists the types it
# got without self's; an in-place method is named with its underscore.
METHOD_POSITIONS = [
    "t.ones(2).add(None)",
    "t.add(t.ones(2), None)",
    "t.ones(2).mul([1, 2])",
    "t.mul(t.ones(2), [1, 2])",
    "t.ones(2).maximum(1.5)",
    "t.ones(2).dot(2)",
    "t.ones(2).add_(None)",
    "t.ones(2).mul_([1])",
    "t.ones(2).sub(None, alpha=2)",
    "t.ones(2).index_add(0, None, t.ones(2))",
    "t.index_add(t.ones(2), 0, None, t.ones(2))",
    "t.ones(2).clamp(min='a')",
    "t.ones(2).clamp_(min='a')",
    "t.ones(2).clamp('a')",
    "t.clamp(t.ones(2), min='a')",
    "t.clamp(t.ones(2), min='a', max='b')",
    "t.ones(2).eq(None)",
    "t.ones(2).pow(None)",
    "t.ones(2).pow(exponent=None)",
    "t.ones(2).masked_fill(None, 1.)",
    "t.ones(2).lerp(t.zeros(2), None)",
    "t.cat([t.ones(2), None])",
    "t.stack((t.ones(2), 1.))",
]

# Where torch binds signatures the spec does not have, a bad argument is "received an
# invalid combination of arguments", even for an op gradgen binds once.
SEVERAL_SIGNATURES = [
    "t.bitwise_and(t.ones(2, dtype=t.int64), None)",
    "t.ones(2, dtype=t.int64).bitwise_and(None)",
    "t.where(t.ones(2, dtype=t.bool), None, t.ones(2))",
    "t.where(None, t.ones(2), t.ones(2))",
]

# Python numbers for Tensors: where torch's binding takes one, and where it does not.
WRAPPED_NUMBERS = [
    "t.ones(2) * 2",
    "t.ones(2) * True",
    "t.ones(2) * np.float32(2)",
    "t.mul(t.ones(2), np.float64(2))",
    "t.ones(2).mul(np.ones(2))",
    "t.add(2, t.ones(2))",
    "t.add(2, 3)",
    "t.mul(2, 3)",
    "t.sub(2, 3)",
    "t.add(2., 3)",
    "t.add(2, 3.5)",
    "t.add(True, 2.5)",
    "t.mul(True, 3)",
    "t.add(2, 3, alpha=2)",
    "t.add(np.int32(2), 3)",
    "t.div(2, 3)",
    "t.div(2, 3, rounding_mode='floor')",
    "t.floor_divide(2, 3)",
    "t.mul(None, 2)",
    "t.mul(2, None)",
    "t.pow(2, 3)",
    "t.pow(2, t.ones(2))",
    "t.remainder(2, 3)",
    "t.remainder(3, t.tensor([2]))",
    "t.bitwise_and(2, 3)",
    "t.bitwise_and(3, t.tensor([1]))",
    "t.eq(2, t.ones(2))",
    "t.rsub(2, t.ones(2))",
    "t.where(True, t.ones(2), t.ones(2))",
    "t.where(t.tensor([True, False]), 2, t.ones(2))",
    "t.where(t.tensor([True, False]), t.ones(2), 0.)",
    "t.where(t.tensor([True]), 2, 3)",
    "t.masked_fill(t.ones(2), t.tensor([True, False]), 2)",
    "t.lerp(t.ones(2), 0., 0.5)",
    "t.clamp(t.tensor([-1, 2]), min=0.5)",
    "t.clamp(t.ones(3), min=0.5, max=t.ones(3))",
    "t.clamp(t.ones(3), min=t.ones(3), max=0.5)",
]

# Scalar arguments: a number, or a 0-dim tensor that does not require grad (its value is
# read); anything else is torch's TypeError.
SCALARS = [
    "t.ones(2).add(t.ones(2), alpha='a')",
    "t.add(t.ones(2), t.ones(2), alpha=None)",
    "F.leaky_relu(t.ones(2), 'a')",
    "F.leaky_relu(t.ones(2), None)",
    "F.elu(t.ones(2), 'a')",
    "F.leaky_relu(t.tensor([-1., 2.]), t.tensor(.1))",
    "F.leaky_relu(t.tensor([-1., 2.]), t.tensor([.1]))",
    "F.leaky_relu(t.tensor([-1., 2.]), t.tensor(.1, requires_grad=True))",
    "F.leaky_relu(t.tensor([-1., 2.]), t.tensor(1, dtype=t.int32))",
    "t.add(t.ones(2), t.ones(2), alpha=t.tensor(2))",
    "t.add(t.ones(2), t.ones(2), alpha=t.tensor(2.))",
    "t.add(t.ones(2), t.ones(2), alpha=t.tensor(2., requires_grad=True))",
    "t.add(t.ones(2), t.ones(2), alpha=t.tensor([2]))",
    "t.ones(2).add_(t.ones(2), alpha=t.tensor(2))",
    "t.ones(2).add(t.tensor(2), alpha=t.tensor(3))",
    "t.ones(2).add(t.ones(2), alpha=t.tensor(2.5, dtype=t.float64))",
    "F.hardtanh(t.tensor([1., 2.]), t.tensor(1.), t.tensor(1.5))",
    "F.elu(t.tensor([-1., 2.]), t.tensor(2.))",
    "F.softplus(t.tensor([-1., 2.]), t.tensor(2), t.tensor(20))",
    "t.full((2,), t.tensor(3.))",
]

# Overload resolution with 0-dim tensors: torch's parser tries a call's signatures in order,
# and a 0-dim tensor without grad matches a Scalar (an integral one an int) where no Tensor
# signature took it.
ZERO_DIM = [
    "t.clamp(t.tensor(True), min=2, max=t.tensor(3, dtype=t.int32))",
    "t.tensor([-1., 2.]).clamp(min=t.tensor(0.))",
    "t.tensor([-1, 2]).clamp(min=t.tensor(0.))",
    "t.clamp(t.ones(3), min=t.tensor(0.5), max=2)",
    "t.clamp(t.ones(3), min=t.tensor(0.5, requires_grad=True), max=2)",
    "t.clamp(t.ones(3), min=t.tensor([0.5]), max=2)",
    "t.clamp_min(t.ones(3), t.tensor(2))",
    "t.clamp_min(t.ones(3, dtype=t.int64), t.tensor(2.5))",
    "t.sum(t.ones(2, 3), t.tensor(1))",
    "t.ones(2, 3).sum(t.tensor(1))",
    "t.ones(2, 3).sum(dim=t.tensor(1))",
    "t.ones(2, 3).sum(t.tensor(1.))",
    "t.ones(2, 3).softmax(t.tensor(1))",
    "t.ones(5).narrow(0, t.tensor(1), 2)",
    "t.ones(2, 3, dtype=t.int64).mul(t.tensor(2.))",
    "t.ones(3).masked_fill(t.tensor([True, False, True]), t.tensor(5.))",
    "t.ones(3).lerp(t.zeros(3), t.tensor(0.5))",
    "t.ones(2).fill_(t.tensor(3.))",
    "t.ones(3).cumsum(t.tensor(0))",
    "t.pow(t.tensor([1, 2]), t.tensor(2.))",
    "t.pow(t.tensor([1., 2.]), t.tensor(2, dtype=t.int64))",
    "t.ones(2).pow(t.tensor(2.))",
]

# The hand-written method (runtime/composite.py) rewords the function's error too.
METHOD_POSITIONS.append("t.ones(2).where(t.ones(2, dtype=t.bool), None)")
# runtime/arguments.py reads full's fill value as torch's parser reads a Scalar.
SCALARS += ["t.full((2,), t.tensor(3))", "t.full((2,), t.tensor([3.]))"]

# What gradgen does not do yet, each with what is wrong (strict xfail: a fix is noticed).
OPEN = {
    "t.add(t.ones(2), other=None)": "a generated wrapper cannot tell an argument given by "
        "keyword from one given by position, and names the position: torch does not",
}


def _param(code: str) -> Any:
    if code in OPEN:
        return pytest.param(code, marks=pytest.mark.xfail(reason=OPEN[code], strict=True))
    return code


@pytest.mark.parametrize("code", [_param(c) for c in METHOD_POSITIONS + SEVERAL_SIGNATURES
                                  + WRAPPED_NUMBERS + SCALARS + ZERO_DIM + list(OPEN)])
def test_as_torch(code: str) -> None:
    _check_same(code)


def test_open_cases_are_not_listed_twice() -> None:
    listed = METHOD_POSITIONS + SEVERAL_SIGNATURES + WRAPPED_NUMBERS + SCALARS + ZERO_DIM
    assert not set(OPEN) & set(listed)


# -- the wrapper gets a number, and resolution by value is not cached ------------------


@pytest.mark.parametrize(("code", "attribute"), [
    ("F.leaky_relu(t.tensor([-1., 2.], requires_grad=True), t.tensor(.1))",
     "_saved_negative_slope"),
    ("t.add(t.ones(2, requires_grad=True), t.ones(2), alpha=t.tensor(2))", "_saved_alpha"),
    ("t.clamp(t.ones(2, requires_grad=True), min=t.tensor(0.5), max=2)", "_saved_min"),
])
def test_a_zero_dim_tensor_reaches_the_wrapper_as_its_number(code: str, attribute: str) -> None:
    """The node saves what the wrapper was given: torch's saves a number, and so must
    gradgen's (the kernel and the formulas take a number there, not a Tensor)."""
    expected = getattr(_outcome(torch, torch_functional, code)[1].grad_fn, attribute)
    result = _outcome(runtime, runtime_functional, code)[1]
    assert type(result.grad_fn).__name__ == _outcome(torch, torch_functional,
                                                      code)[1].grad_fn.name()
    actual = getattr(result.grad_fn, attribute)
    assert type(actual) is type(expected) and actual == expected


@pytest.mark.parametrize("first", ["t.tensor(0.5)", "t.ones(3) * 0.5"])
def test_resolution_by_value_is_not_cached(first: str) -> None:
    """`clamp(x, min=m, max=2)` is clamp.Scalar for a 0-dim `m` and a TypeError for a 1-dim
    one of the same type: the resolution cache (keyed by types) must not answer one with
    what it found for the other, in either order; nor for a 0-dim one that requires grad."""
    calls = [first, "t.ones(3) * 0.5", "t.tensor(0.5)",
             "t.tensor(0.5, requires_grad=True)", "t.tensor(0.25)"]
    for minimum in calls:
        _check_same(f"t.clamp(t.ones(3), min={minimum}, max=2)")
        _check_same(f"t.ones(3).clamp(min={minimum}, max=2)")


def test_the_message_of_a_bad_argument_leaves_tensors_unchanged() -> None:
    x = runtime.ones(2)
    with pytest.raises(TypeError):
        x.add_(None)
    with pytest.raises(TypeError):
        x.add_(runtime.ones(2), alpha=runtime.tensor(2.0, requires_grad=True))
    assert x.tolist() == [1.0, 1.0] and x._version == 0


# -- generation time and run time agree --------------------------------------------------


def _overloads() -> dict:
    """generated/ops.py's OVERLOADS (imported once runtime is: it imports the layers)."""
    from generated import ops

    return ops.OVERLOADS


def _check_calls() -> list[tuple[str, list[str], str]]:
    """Each `_arguments.bind(OVERLOADS[key], (names...), kwargs)` in generated/ops.py, with
    the condition of the `if` it is under (the wrapper's quick test)."""
    tree = ast.parse((ROOT / "generated" / "ops.py").read_text())
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.body[0], ast.Assign):
            continue
        call = node.body[0].value
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "_arguments.bind":
            key = call.args[0].slice.value
            tests = node.test.values if isinstance(node.test, ast.BoolOp) else [node.test]
            calls.append((key, [ast.unparse(e) for e in call.args[1].elts],
                          [_tested_name(t) for t in tests]))
    return calls


def _tested_name(test: ast.expr) -> str:
    """The parameter one part of a quick test reads: `not isinstance(x, ...)`,
    `not _arguments.all_tensors(x)` and `x is MISSING` read x; `kwargs` is itself."""
    if isinstance(test, ast.UnaryOp):
        return ast.unparse(test.operand.args[0])
    if isinstance(test, ast.Compare):
        assert isinstance(test.ops[0], ast.Is) and ast.unparse(test.comparators[0]) == "MISSING"
        return f"{ast.unparse(test.left)} is MISSING"
    return ast.unparse(test)


def test_wrappers_check_the_parameters_dispatch_reads() -> None:
    """A wrapper passes `bind` the values of all its parameters, in schema order, when its
    quick test refuses one: that test reads exactly the parameters runtime/arguments.py's
    `checked` picks (codegen/render.py picks them by the same rule, on the schema), the
    required ones left without a value (MISSING), the keywords no parameter took and the
    positional arguments past the parameters (`extra`)."""
    calls = _check_calls()
    assert len(calls) > 100
    for key, names, tests in calls:
        overload = _overloads()[key]
        assert names == [p.name for p in overload.params], key
        checked = [p.name for p in overload.params if arguments.checked(p)]
        assert tests == [*checked, *(f"{p.name} is MISSING" for p in overload.params
                                     if not p.has_default and not arguments.checked(p)),
                         "kwargs", "extra"], key


def test_overloads_carry_the_generation_time_table() -> None:
    """Param.number and the Overload flags in generated OVERLOADS are what
    codegen/wrapped_numbers.py says about each op."""
    numbered = set()
    for key, overload in _overloads().items():
        base = key.split(".")[0]
        for param in overload.params:
            schema_name = "self" if param.name == "self_" else param.name
            expected = param.type == "Tensor" and wrapped_numbers.takes_number(base, schema_name)
            assert param.number == expected, (key, param)
            numbered |= {key} if param.number else set()
        assert overload.several == wrapped_numbers.has_several_signatures(base)
        assert overload.only_numbers == wrapped_numbers.takes_only_numbers(base)
    assert {"mul.Tensor", "add.Tensor", "where.self", "eq.Tensor"} <= numbered
    assert not any(k.startswith(("clamp", "maximum", "dot")) for k in numbered)


def test_quick_test_takes_numbers_only_where_the_binding_does() -> None:
    """mul's `other` lets a Python number through without a call; maximum's does not."""
    source = (ROOT / "generated" / "ops.py").read_text()
    assert "not isinstance(other, TENSOR_OR_NUMBER)" in source.split("def mul_Tensor(")[1] \
        .split("\ndef ")[0]
    assert "TENSOR_OR_NUMBER" not in source.split("def maximum(")[1].split("\ndef ")[0]


def test_out_through_a_resolution_by_value() -> None:
    """`clamp(x, min=2, max=tensor(3), out=o)`: the 0-dim max makes it clamp.Scalar (a
    resolution by value, not cached), and out= still reaches the wrapper."""
    results = []
    for lib in (torch, runtime):
        out = lib.zeros(2)
        returned = lib.clamp(lib.tensor([1.0, 5.0]), min=2, max=lib.tensor(3), out=out)
        results.append((returned is out, out.tolist(), str(out.dtype).split(".")[-1]))
    assert results[0] == results[1]
