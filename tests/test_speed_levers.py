"""The shortcuts taken for speed (docs/performance.md, "Levers used") give what the plain
path gives: the same values, layout, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

from runtime import kernels

# (rows, inner, columns): some where the product is computed transposed (rows < columns <=
# inner, inner at least 256), some where it is not.
MM_SHAPES = [(16, 1000, 100), (1, 300, 8), (3, 50, 7), (16, 256, 256), (64, 1000, 100),
             (16, 16, 1000), (256, 100, 10), (7, 7, 7), (16, 200, 200)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex64])
@pytest.mark.parametrize(("rows", "inner", "columns"), MM_SHAPES)
def test_mm_equals_the_plain_product(rows: int, inner: int, columns: int, dtype: type) -> None:
    rng = np.random.default_rng(rows * inner + columns)
    left = rng.standard_normal((rows, inner))
    right = rng.standard_normal((columns, inner))
    if dtype is np.complex64:
        left = left + 1j * rng.standard_normal((rows, inner))
    left, right = left.astype(dtype), right.astype(dtype).T  # nn.Linear's weight.t()
    product = kernels.mm(left, right)
    expected = np.matmul(left, right)
    assert product.dtype == expected.dtype
    assert product.flags.c_contiguous
    # The same sums, but which of OpenBLAS's kernels runs them depends on the machine
    # (OPENBLAS_CORETYPE): the plain product itself may round its last bit differently
    # from one to another, as torch's differs from numpy's.
    tolerance = 1e-5 if product.dtype in (np.float32, np.complex64) else 1e-12
    scale = np.abs(left).max() * np.abs(right).max() * inner
    np.testing.assert_allclose(product, expected, rtol=0, atol=tolerance * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64,
                                   np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (16, 10), (3, 0, 2)])
def test_sum_equals_np_sum(shape: tuple[int, ...], dtype: type) -> None:
    values = np.random.default_rng(len(shape)).standard_normal(shape) * 3
    array = values.astype(dtype)
    expected = np.sum(array, dtype=np.int64 if array.dtype.kind in "biu" else array.dtype)
    total = kernels.sum(array)
    assert type(total) is np.ndarray and total.dtype == expected.dtype
    np.testing.assert_array_equal(total, expected)
    if array.dtype.kind == "c":  # as torch: the real parts, with torch's warning
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            real = kernels.sum(array, np.dtype(np.float64))
        np.testing.assert_array_equal(real, np.sum(array.real, dtype=np.float64))
        return
    np.testing.assert_array_equal(kernels.sum(array, np.dtype(np.float64)),
                                  np.sum(array, dtype=np.float64))


@pytest.mark.parametrize("exponent", [2, 2.0, 3, 1, 0.5, -1])
@pytest.mark.parametrize("create_graph", [False, True])
def test_pow_backward_matches_torch(exponent: float, create_graph: bool) -> None:
    import torch

    import runtime

    values = np.random.default_rng(0).uniform(0.5, 2, (4, 3)).astype(np.float32)
    grads = []
    for library in (torch, runtime):
        x = library.tensor(values, requires_grad=True)
        (gradient,) = library.autograd.grad(x.pow(exponent).sum(), x, create_graph=create_graph)
        if create_graph:
            (gradient,) = library.autograd.grad(gradient.sum(), x)
        grads.append(gradient.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_a_bare_method_call_goes_where_resolution_goes() -> None:
    """`x.sum()` calls the overload the name's dispatcher would pick for a Tensor alone
    (codegen/render.py's _bare_call), without the dispatcher."""
    import re
    from pathlib import Path

    import runtime
    from generated import ops
    from runtime import arguments

    text = (Path(__file__).resolve().parent.parent / "generated" / "tensor_methods.py").read_text()
    found = re.findall(r"return ops\.(\w+)\(self\) if not args and not kwargs else "
                       r"ops\.(\w+)\(self, \*args", text)
    assert ("sum_default", "sum") in found and len(found) >= 10
    tensor = runtime.ones(3)
    for wrapper, name in found:
        resolved = arguments._resolve(name, ops.BY_NAME[name], (tensor,), {})
        assert resolved[0] is getattr(ops, wrapper), (name, wrapper)


@pytest.mark.parametrize("number", [2, 2.5, -1])
def test_a_method_given_one_number_goes_where_resolution_goes(number: float) -> None:
    """`x.pow(2)` calls the overload the name's dispatcher would pick for a Tensor and one
    Python int or float (codegen/render.py's _one_number_call)."""
    import re
    from pathlib import Path

    import runtime
    from generated import ops
    from runtime import arguments

    text = (Path(__file__).resolve().parent.parent / "generated" / "tensor_methods.py").read_text()
    found = re.findall(r"ops\.(\w+)\(self, args\[0\]\) if len\(args\) == 1 and not kwargs and "
                       r"type\(args\[0\]\) in _arguments.NUMBER else (?:.* else )?"
                       r"ops\.(\w+)\(self, \*args", text)
    assert ("pow_Tensor_Scalar", "pow") in found and len(found) >= 10
    tensor = runtime.ones(3)
    for wrapper, name in found:
        resolved = arguments._resolve(name, ops.BY_NAME[name], (tensor, number), {})
        assert resolved[0] is getattr(ops, wrapper), (name, wrapper)
