"""Tensor's autograd surface against PyTorch: requires_grad, detach and .data, .grad
assignment, conversions to Python and numpy, dtype promotion and repr."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import runtime
from generated.tensor_methods import TensorMethods
from runtime.composite import CompositeMethods
from tests.oracle import same


def leaf(lib: Any, values: Any = (1.0, 2.0, 3.0)) -> Any:
    return lib.tensor(list(values), requires_grad=True)


# -- requires_grad --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_only_floating_point_tensors_can_require_grad(dtype: str) -> None:
    same(lambda lib: lib.tensor([1, 0], dtype=getattr(lib, dtype)).requires_grad_())
    same(lambda lib: lib.ones(2, dtype=getattr(lib, dtype), requires_grad=True))
    same(lambda lib: lib.tensor([1, 0], dtype=getattr(lib, dtype)).requires_grad_(False)
         .requires_grad)


def test_requires_grad_on_leaves() -> None:
    def program(lib):
        x = lib.tensor([1.0, 2.0])
        seen = [x.requires_grad, x.is_leaf]
        assert x.requires_grad_() is x
        seen += [x.requires_grad, x.is_leaf, repr(x)]
        x.requires_grad = False
        seen += [x.requires_grad, repr(x)]
        x.requires_grad_(True)
        seen.append((x * 2).requires_grad)
        return seen
    same(program)


@pytest.mark.parametrize("change", ["set True", "set False", "requires_grad_()",
                                    "requires_grad_(False)"])
def test_requires_grad_of_a_non_leaf(change: str) -> None:
    def program(lib):
        y = leaf(lib) * 2
        if change == "set True":
            y.requires_grad = True
        elif change == "set False":
            y.requires_grad = False
        elif change == "requires_grad_()":
            return y.requires_grad_() is y, y.requires_grad
        else:
            y.requires_grad_(False)
    same(program)


# -- detach, .data and the version counter ---------------------------------------------------

def test_detach_shares_data_and_version_counter() -> None:
    def program(lib):
        x = leaf(lib)
        a = x * 2
        b = a * a
        detached = a.detach()
        seen = [detached.requires_grad, detached.is_leaf, detached.grad_fn is None,
                detached._version, a._version]
        detached.add_(1)
        seen += [a.tolist(), detached._version, a._version]
        try:
            b.sum().backward()
        except RuntimeError as error:
            seen.append(str(error))
        return seen
    same(program)


def test_data_shares_storage_but_not_the_version_counter() -> None:
    def program(lib):
        x = leaf(lib)
        a = x * 2
        b = a * a
        data = a.data
        seen = [data.requires_grad, data.is_leaf, data._version]
        data.mul_(10)  # unseen by autograd: b's backward uses the new values
        seen += [a.tolist(), a._version, data._version]
        b.sum().backward()
        seen.append(x.grad.tolist())
        return seen
    same(program)


def test_assigning_data() -> None:
    def program(lib):
        x = leaf(lib)
        x.data = lib.tensor([5.0, 6.0, 7.0])
        (x * x).sum().backward()
        return x.tolist(), x.requires_grad, x.grad.tolist()
    same(program)


def test_detach_in_place() -> None:
    def program(lib):
        x = leaf(lib)
        y = x * 2
        y.detach_()
        return y.requires_grad, y.is_leaf, y.grad_fn is None, repr(y)
    same(program)


# -- .grad -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["right", "size", "dtype", "number", "none"])
def test_assigning_grad(value: str) -> None:
    def program(lib):
        x = leaf(lib)
        x.grad = {
            "right": lambda: lib.ones(3),
            "size": lambda: lib.ones(2),
            "dtype": lambda: lib.ones(3, dtype=lib.float64),
            "number": lambda: 3,
            "none": lambda: None,
        }[value]()
        (x * 2).sum().backward()
        return x.grad.tolist()
    same(program)


# -- conversions --------------------------------------------------------------------------------

@pytest.mark.parametrize("expression", [
    "lib.tensor(3.5).item()", "lib.tensor(3).item()", "lib.tensor(True).item()",
    "lib.tensor([2.5]).item()", "lib.tensor([1.0, 2.0]).item()", "lib.tensor([]).item()",
    "leaf(lib, [2.0]).item()", "leaf(lib).tolist()", "lib.tensor([[1, 2], [3, 4]]).tolist()",
    "lib.tensor(2.0).tolist()", "lib.tensor([True, False]).tolist()",
    "float(leaf(lib, [2.0]))", "int(lib.tensor([7]))", "bool(lib.tensor([0.0]))",
    "bool(lib.tensor([1.0, 2.0]))", "float(lib.tensor([1.0, 2.0]))",
])
def test_python_values(expression: str) -> None:
    same(lambda lib: eval(expression))


def test_numpy_of_a_tensor_that_requires_grad() -> None:
    same(lambda lib: leaf(lib).numpy())
    same(lambda lib: (leaf(lib) * 2).numpy())


def test_numpy_shares_memory() -> None:
    def program(lib):
        x = leaf(lib)
        array = x.detach().numpy()
        array[0] = 10.0
        plain = lib.tensor([1.0, 2.0])
        plain.numpy()[1] = -1.0
        return x.tolist(), plain.tolist(), str(array.dtype), type(array).__name__
    same(program)


def _array_protocol(lib: Any) -> tuple:
    x = lib.zeros(3)
    copied, shared = np.array(x), np.asarray(x)
    copied[0] = 5.0
    shared[1] = 7.0
    shared.shape = (3, 1)
    converted = np.asarray(x, dtype=np.float64)
    converted[2] = 9.0
    try:
        np.asarray(lib.ones(2, requires_grad=True))
    except RuntimeError as error:
        refused = str(error)
    return x.tolist(), tuple(x.shape), copied.tolist(), str(converted.dtype), refused


def test_numpy_array_protocol() -> None:
    """np.array(t) is a copy (writing to it leaves t alone), np.asarray(t) a new array on
    t's memory, np.asarray(t, dtype) a converted copy, and a tensor that requires grad is
    refused as by numpy()."""
    with warnings.catch_warnings():  # torch's __array__ takes no `copy` (numpy 2 warns)
        warnings.simplefilter("ignore", DeprecationWarning)
        expected = _array_protocol(torch)
    assert _array_protocol(runtime) == expected


def test_numpy_is_a_new_array_on_the_same_memory() -> None:
    """Each call gives another ndarray (as torch's): reshaping it in place, or viewing its
    bytes as another dtype in place, leaves the tensor's shape and dtype alone."""
    def program(lib):
        x = lib.arange(6.0)
        first, second = x.numpy(), x.numpy()
        first.shape = (2, 3)
        second.dtype = np.int64
        return (first is second, tuple(x.shape), str(x.dtype), x.tolist(),
                bool(np.shares_memory(first, x.numpy())))
    same(program)


# -- dtype promotion ------------------------------------------------------------------------------

PROMOTION_CASES = [
    "f32 + i64", "i64 + f32", "i64 + 1", "i64 + 1.5", "i64 * 2.0", "f32 + f64", "f64 + f32",
    "b + b", "b + 1", "b * 1.5", "i64 * True", "i32 + i64", "i32 + 5", "i32 * 2.5",
    "b + i32", "f64 + i32", "f32 + f64_0d", "i64 + f32_0d", "i32 + f64_0d", "i32_0d + f64_0d",
    "i64 + f64_0d", "b_0d + i64_0d", "f32 ** 2", "i64 ** 2", "f32 - i64", "i64 - 0.5",
]


@pytest.mark.parametrize("case", PROMOTION_CASES)
def test_dtype_promotion(case: str) -> None:
    def program(lib):
        values = {
            "f32": lib.tensor([1.0, 2.0]), "f64": lib.tensor([1.0, 2.0], dtype=lib.float64),
            "i64": lib.tensor([1, 2]), "i32": lib.tensor([1, 2], dtype=lib.int32),
            "b": lib.tensor([True, False]), "f32_0d": lib.tensor(2.5),
            "f64_0d": lib.tensor(2.5, dtype=lib.float64), "i64_0d": lib.tensor(3),
            "i32_0d": lib.tensor(3, dtype=lib.int32), "b_0d": lib.tensor(True),
        }
        result = eval(case, {}, values)
        return str(result.dtype), result.tolist()
    same(program)


def test_gradient_keeps_the_leaf_dtype() -> None:
    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = leaf(lib, [3.0, 4.0])
        y = x * w
        y.sum().backward()
        return str(y.dtype), str(x.grad.dtype), str(w.grad.dtype), x.grad.tolist(), w.grad.tolist()
    same(program)


# -- repr ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("expression", [
    "leaf(lib)", "leaf(lib) * 2", "leaf(lib).sum()", "leaf(lib).detach()",
    "lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)",
    "lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True) * 2", "lib.tensor([1, 2])",
    "lib.tensor(2.5, requires_grad=True)", "leaf(lib).view(3, 1)", "leaf(lib).view(3, 1).t()",
    "leaf(lib).unsqueeze(0).expand(2, 3)", "leaf(lib).relu()", "leaf(lib).clone()",
    "lib.zeros(2, 2, requires_grad=True)", "leaf(lib).shape", "leaf(lib).size()",
    "leaf(lib).view(3, 1).shape[1:]", "lib.tensor(1.0).shape", "leaf(lib).grad_fn",
    "(leaf(lib) * 2).grad_fn.name()", "leaf(lib).dtype", "lib.tensor([1, 2]).dtype",
])
def test_repr(expression: str) -> None:
    def program(lib):
        text = repr(eval(expression))
        return text.split(" object at ")[0]  # a node's repr ends with its address
    same(program)


def test_repr_after_backward_and_of_grad() -> None:
    def program(lib):
        x = leaf(lib)
        y = x * x
        y.sum().backward()
        return repr(x), repr(x.grad), repr(y)
    same(program)


def test_numpy_interop_of_shapes() -> None:
    def program(lib):
        x = lib.ones(2, 3)
        shape = x.shape
        return (shape == (2, 3), list(shape), shape[0], shape.numel(), len(shape),
                np.zeros(shape).shape, isinstance(shape, tuple), repr(shape + (4,)))
    same(program)


def test_set_default_dtype_reaches_new_tensors_and_integer_division() -> None:
    def program(lib):
        lib.set_default_dtype(lib.float64)
        try:
            made = (lib.tensor([1.0]).dtype, lib.zeros(2).dtype, (lib.tensor([1, 2]) / 2).dtype,
                    (lib.tensor([1, 2]) * 2.5).dtype, repr(lib.tensor([0.5])))
        finally:
            lib.set_default_dtype(lib.float32)
        return [str(d) for d in made]
    same(program)


# -- methods ----------------------------------------------------------------------------------

def test_op_methods_are_set_on_the_class() -> None:
    """runtime/methods.py copies the spec's methods, then the composite ones, onto Tensor,
    which inherits from neither; a tensor stays hashable, though the spec's class
    defines `__eq__` (and so has no `__hash__`)."""
    tensor = runtime.Tensor
    assert tensor.__mro__ == (tensor, object)
    assert tensor.add is TensorMethods.add and tensor.__mul__ is TensorMethods.__mul__
    assert tensor.reshape is CompositeMethods.reshape and tensor.T is CompositeMethods.T
    assert TensorMethods.__hash__ is None
    x = runtime.tensor([1.0, 2.0])
    assert hash(x) == object.__hash__(x) and {x: 1}[x] == 1
