"""The numpy-style keyword names torch's argument parser accepts beside a parameter's own
(`dim`: `axis`, `keepdim`: `keepdims`, `input`: `x`, `a`, `x1`; `other`: `x2`), compared
with torch: on the calls that go through overload resolution (runtime/arguments.py), the
generated wrappers of single overloads (their slow path, `arguments.bind`), the hand-written
functions and methods torch binds in C++ (`arguments.numpy_keywords`) and the factories
(its `Parser`); and the wrong ones, with torch's TypeError and message."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime

VALUES = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5

CALLS = [
    lambda lib, a: a.sum(1, keepdims=True),
    lambda lib, a: a.sum(axis=0),
    lambda lib, a: lib.sum(a, axis=1),
    lambda lib, a: lib.sum(a, axis=1, keepdims=True),
    lambda lib, a: lib.sum(input=a, dim=1),
    lambda lib, a: lib.sum(x=a, dim=1),
    lambda lib, a: lib.sum(a=a, axis=0),
    lambda lib, a: lib.sum(x1=a, axis=0, keepdim=True),
    lambda lib, a: a.mean(axis=0, keepdims=True),
    lambda lib, a: lib.mean(a, axis=(0, 1)),
    lambda lib, a: lib.max(a, axis=0)[0],
    lambda lib, a: a.max(axis=1, keepdims=True)[1],
]


@pytest.mark.parametrize("index", range(len(CALLS)))
def test_an_alias_binds_as_in_torch(index: int) -> None:
    expected = CALLS[index](torch, torch.tensor(VALUES))
    got = CALLS[index](runtime, runtime.tensor(VALUES))
    assert tuple(got.shape) == tuple(expected.shape)
    assert np.array_equal(got.numpy(), expected.numpy())


def test_an_alias_reaches_the_backward() -> None:
    a = runtime.tensor(VALUES, requires_grad=True)
    a.sum(axis=1, keepdims=True).pow(2).sum().backward()
    t = torch.tensor(VALUES, requires_grad=True)
    t.sum(1, keepdim=True).pow(2).sum().backward()
    assert a.grad_fn is None and np.array_equal(a.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("call", [
    lambda lib, a: lib.sum(a, axis="x"),  # a wrong value given by its alias
    lambda lib, a: lib.sum(a, axes=1),  # no such name
    lambda lib, a: lib.mean(a, dim=0, axis=0),  # a parameter named twice
])
def test_a_wrong_keyword_is_a_type_error_as_in_torch(call) -> None:
    with pytest.raises(TypeError) as expected:
        call(torch, torch.tensor(VALUES))
    with pytest.raises(TypeError) as got:
        call(runtime, runtime.tensor(VALUES))
    name = str(expected.value).split("(", 1)[0]
    assert str(got.value).startswith(name + "(")
    if "invalid combination" in str(expected.value):
        assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]


# -- every function and method: generated wrappers (their `bind`), hand-written ones
# (arguments.numpy_keywords), the factories (arguments.Parser) --------------------------

# Each a line of Python with `t` the library, `a` and `b` 2x3 tensors, `i` an index tensor.
EVERYWHERE = [
    "t.cat([a, b], axis=0)", "t.cat(tensors=[a, b], axis=1)", "t.add(x=a, other=b)",
    "t.add(input=a, other=b, alpha=2)", "t.add(a, x2=b)", "t.add(x1=a, x2=b)", "t.sub(x1=a, x2=b)",
    "t.mul(x1=a, x2=b)", "a.add(x2=b)", "a.mul(x2=b, )", "a.sub(x2=b, alpha=3)",
    "t.exp(x=a)", "t.exp(input=a)", "t.exp(a=a)", "t.exp(x1=a)", "t.relu(x=a)",
    "t.mm(x=a, mat2=b.t())", "t.mm(input=a, mat2=b.t())", "t.dot(x=a[0], tensor=b[0])",
    "t.transpose(x=a, dim0=0, dim1=1)", "t.stack([a, b], axis=1)", "t.unsqueeze(a, axis=0)",
    "a.unsqueeze(axis=0)", "t.cumsum(a, axis=1)", "t.argmax(a, axis=1)",
    "t.argmax(a, axis=1, keepdims=True)", "t.gather(a, axis=1, index=i)",
    "a.gather(axis=1, index=i)",
    "t.topk(a, 1, axis=1)[0]", "t.where(a > 0, x=a, other=b)", "t.clamp(x=a, min=0)",
    "t.pow(x=a, exponent=2)", "t.logsumexp(a, axis=1)", "t.all(a, axis=1)",
    "t.exp(input=a, out=t.empty(2, 3))", "t.softmax(a, axis=1)", "t.log_softmax(a, axis=1)",
    "a.softmax(axis=1)", "a.log_softmax(axis=1)", "t.matmul(x1=a, x2=b.t())", "a.matmul(x2=b.t())",
    "t.flatten(x=a)", "t.chunk(a, 2, axis=1)[0]", "a.chunk(2, axis=1)[1]",
    "t.narrow(a, axis=1, start=0, length=1)", "a.narrow(axis=0, start=0, length=1)",
    "t.argsort(a, axis=1)", "a.argsort(axis=1)", "t.isclose(x1=a, x2=b)", "t.nonzero(x=a)",
    "t.outer(x=a[0], vec2=b[0])", "t.unflatten(a, axis=1, sizes=(3, 1))", "t.isnan(x=a)",
    "t.zeros_like(x=a)", "t.full_like(a=a, fill_value=2.0)", "t.ones_like(input=a)",
    "t.var(a, axis=1)", "t.std(a, axis=1, keepdims=True)", "t.allclose(a, x2=b)",
    "a.allclose(x2=b)", "t.equal(a, x2=b)",
]

# Wrong ones: torch's TypeError, with its message.
WRONG = [
    "t.exp(a, x=a)", "t.exp(a, input=a)", "t.exp()", "t.exp(foo=a)", "a.add(x=b)",
    "a.add(b, x2=b)", "t.add(a, b, x2=b)", "t.mm(a, mat3=b)", "a.mm(x=b.t())", "t.cat(axis=0)",
    "t.add(a, b, out=b, x=a)", "t.softmax(a, 1, axis=1)", "t.matmul(a, b.t(), x1=a)",
    "t.norm(a, axis=1)", "t.split(a, 1, axis=1)",
    "t.zeros_like(t.ones(2), x=a)",
    "t.nn.functional.softmax(a, axis=1)", "t.nn.functional.log_softmax(a, axis=1)",
    "a.add(b, out=b)", "t.flatten(a, x=a)", "t.cumsum(a, 1, axis=1)",
]


def _run(library, code: str):
    a = library.tensor(VALUES)
    b = library.tensor(VALUES * 2 - 1)
    i = library.tensor([[0], [2]])
    return eval(code, {"t": library, "a": a, "b": b, "i": i})


@pytest.mark.parametrize("code", EVERYWHERE)
def test_every_function_and_method_takes_the_aliases(code: str) -> None:
    expected, got = _run(torch, code), _run(runtime, code)
    if isinstance(expected, bool):
        assert got is expected
        return
    assert tuple(got.shape) == tuple(expected.shape)
    assert got.dtype.is_floating_point == expected.dtype.is_floating_point
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("code", WRONG)
def test_a_wrong_alias_fails_as_in_torch(code: str) -> None:
    with pytest.raises(TypeError) as expected:
        _run(torch, code)
    with pytest.raises(TypeError) as got:
        _run(runtime, code)
    assert str(got.value) == str(expected.value)


def test_an_alias_of_a_generated_op_records_its_node() -> None:
    a = runtime.tensor(VALUES, requires_grad=True)
    loss = runtime.cumsum(x=a, axis=1).sum()
    assert loss.grad_fn.next_functions[0][0].name() == "CumsumBackward0"
    loss.backward()
    t = torch.tensor(VALUES, requires_grad=True)
    torch.cumsum(t, 1).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())
