"""Kernel details that the op tests do not reach: numpy's warning state, and the fast
paths some kernels take (each checked against the general path or against torch)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from runtime import kernels


def test_quietly_silences_and_restores_numpy_state() -> None:
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would raise here
        zero, inf = np.array([0.0]), np.array([np.inf])
        assert np.isnan(kernels.quietly(np.multiply, zero, inf)).all()
        assert kernels.quietly(np.true_divide, np.array([1.0]), zero)[0] == np.inf
    assert np.geterr() == before
    with pytest.raises(FloatingPointError), np.errstate(invalid="raise"):
        np.multiply(zero, inf)  # outside `quietly` the caller's state holds


def test_quietly_restores_state_when_the_function_raises() -> None:
    before = np.geterr()
    with pytest.raises(ValueError):
        kernels.quietly(np.add, np.ones(2), np.ones(3))
    assert np.geterr() == before


def test_forward_ops_are_silent_under_warnings_as_errors() -> None:
    import runtime

    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        x = runtime.tensor([0.0, 1.0, -1.0])
        assert np.isnan((x * float("inf")).numpy()[0])
        assert (x / 0).numpy()[1] == np.inf
        assert np.isnan(x.log().numpy()[2])
        inf = runtime.tensor([float("inf")])
        assert np.isnan((inf - inf).numpy()).all() and np.isnan((inf + -inf).numpy()).all()
        assert np.isnan(inf.sub(inf, alpha=2.0).numpy()).all()


_BIG = 3e38  # float32's largest is about 3.4e38: a sum or product of two overflows


_OVERFLOWING = {
    "mm": lambda lib, x: x(2, 2) @ x(2, 2),
    "add_ with alpha": lambda lib, x: x(3).add_(x(3), alpha=10.0),  # an optimizer's update
    "matmul": lambda lib, x: lib.matmul(x(1, 2, 2), x(1, 2, 2)),
    "bmm": lambda lib, x: lib.bmm(x(1, 2, 2), x(1, 2, 2)),
    "dot": lambda lib, x: lib.dot(x(2), x(2)),
    "mv": lambda lib, x: lib.mv(x(2, 2), x(2)),
    "addmm": lambda lib, x: lib.addmm(x(2), x(2, 2), lib.ones(2, 2), beta=1e30, alpha=1e30),
    "linear": lambda lib, x: lib.nn.functional.linear(x(2, 2), x(2, 2), x(2)),
    "conv1d": lambda lib, x: lib.nn.functional.conv1d(x(1, 1, 3), x(1, 1, 2), x(1)),
    "conv2d": lambda lib, x: lib.nn.functional.conv2d(x(1, 1, 3, 3), x(1, 1, 2, 2)),
    "conv_transpose1d": lambda lib, x: lib.nn.functional.conv_transpose1d(x(1, 1, 3),
                                                                          x(1, 1, 2)),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(
        x(1, 1, 4, 4), 2),
    "prod": lambda lib, x: x(3).prod(),
    "prod_dim": lambda lib, x: x(3, 2).prod(0),
    "cumsum": lambda lib, x: x(3).cumsum(0),
    "mean": lambda lib, x: x(3).mean(),
    "mean_dim": lambda lib, x: x(3, 2).mean(0),
    "sum_dim": lambda lib, x: x(3, 2).sum(0),
    "var": lambda lib, x: x(3).var(),
    "std": lambda lib, x: x(3).std(),
    "var_mean": lambda lib, x: lib.var_mean(x(3)),
    "std_mean": lambda lib, x: lib.std_mean(x(3)),
    "norm": lambda lib, x: x(3).norm(),
    "norm3": lambda lib, x: x(3).norm(3),
    "norm1": lambda lib, x: x(3).norm(1),
    "mse_loss": lambda lib, x: lib.nn.functional.mse_loss(x(3), -x(3)),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x(2, 3), (3,)),
    "batch_norm": lambda lib, x: lib.nn.functional.batch_norm(x(2, 3), lib.zeros(3),
                                                              lib.ones(3), training=True),
}
_BIG = 3e38  # float32's largest is about 3.4e38: a sum or product of two overflows


@pytest.mark.parametrize("name", list(_OVERFLOWING))
def test_products_and_reductions_that_overflow_are_silent_as_torchs(name) -> None:
    """torch never warns of a float overflow; numpy does (`overflow encountered in matmul`,
    `in reduce`, `in cast`): these kernels run with its warnings off."""
    import runtime

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning would raise here
        assert _OVERFLOWING[name](runtime, lambda *shape: runtime.full(shape, _BIG)) \
            is not None


# Where gradgen's values differ from torch's (torch's CPU kernels accumulate a float32 mean
# and variance in float64; adaptive pooling here is a product with 0/1 matrices, whose
# 0 * inf is NaN where torch's window sums give inf).
_OVERFLOW_VALUE_GAPS = {"adaptive_avg_pool2d", "var_mean", "std_mean"}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="a known value gap"))
    if name in _OVERFLOW_VALUE_GAPS else name for name in _OVERFLOWING])
def test_products_and_reductions_that_overflow_give_torchs_values(name) -> None:
    from tests.oracle import same

    def values(lib):  # (as text: NaN equals NaN there)
        result = _OVERFLOWING[name](lib, lambda *shape: lib.full(shape, _BIG))
        return repr([r.tolist() for r in result] if isinstance(result, tuple) else
                    result.tolist())
    same(values)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_promotes_as_torch_does(op: str) -> None:
    from tests.oracle import same

    values = {"float32": [1.5, -2.0], "float64": [0.25, 3.0], "int64": [2, -3],
              "bool": [True, True]}  # no 0 to divide by: NaN would not compare equal
    for name_a, a in values.items():
        for name_b, b in [*values.items(), ("float", 2.5), ("int", 3), ("bool scalar", True)]:
            def program(lib, a=a, b=b, name_a=name_a, name_b=name_b):
                left = lib.tensor(a, dtype=getattr(lib, name_a))
                right = lib.tensor(b, dtype=getattr(lib, name_b)) if isinstance(b, list) else b
                result = getattr(lib, op)(left, right)
                return str(result.dtype), result.tolist()
            same(program)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "broadcast"])
def test_threshold_backward_matches_torch(dtype: type, layout: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 5)).astype(dtype)
    x[0, :3] = 0.0  # at the threshold: no gradient
    grad = rng.standard_normal((5, 6)).astype(dtype).T if layout == "transposed" else \
        rng.standard_normal((6, 5)).astype(dtype)
    if layout == "broadcast":
        grad = np.broadcast_to(dtype(2.5), (6, 5))
    else:
        grad[1, :] = [np.nan, np.inf, -np.inf, np.nan, 1.0]  # silenced where x <= 0
    x[1, :] = [-1.0, -2.0, 3.0, 4.0, -5.0]
    ours = kernels.threshold_backward(grad, x, 0)
    theirs = torch.ops.aten.threshold_backward(torch.tensor(np.array(grad)), torch.tensor(x), 0)
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, theirs.numpy())
    assert not np.signbit(ours[x <= 0]).any()  # +0, as torch gives


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("grad, x", [(1.0, 0.7), (np.inf, -1.0), (2.0, np.nan), (-3.0, 0.0)])
def test_threshold_backward_of_0_dim_tensors_as_torch(dtype: type, grad: float, x: float) -> None:
    ours = kernels.threshold_backward(np.array(grad, dtype), np.array(x, dtype), 0)
    theirs = torch.ops.aten.threshold_backward(torch.tensor(np.array(grad, dtype)),
                                               torch.tensor(np.array(x, dtype)), 0)
    assert type(ours) is np.ndarray and ours.shape == () and ours.dtype == dtype
    assert ours.tobytes() == theirs.numpy().tobytes()


@pytest.mark.parametrize("other", [np.full((3, 4), 2.0, np.float32), np.float32(2.0), 2.0,
                                   np.full((4,), 2.0, np.float32)])
def test_inplace_fast_path_agrees_with_the_general_one(other) -> None:
    target = np.arange(12, dtype=np.float32).reshape(3, 4)
    kernels.mul_Tensor_(target, other)
    np.testing.assert_array_equal(target, np.arange(12, dtype=np.float32).reshape(3, 4) * 2)


def test_inplace_still_refuses_a_result_that_does_not_fit() -> None:
    target = np.zeros(3, np.float32)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        kernels.add_Tensor_(target, np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        kernels.add_Tensor_(np.zeros(3, np.int64), np.ones(3, np.float32))
    np.testing.assert_array_equal(target, 0)


@pytest.mark.parametrize(("shape", "size"), [((), (4, 3)), ((3,), (2, 3)), ((2, 1), (2, 5)),
                                             ((1, 3), (4, 2, 3)), ((2, 3), (2, 3)),
                                             ((1,), (0,)), ((0, 1), (0, 4))])
def test_expand_view_matches_broadcast_to(shape: tuple, size: tuple) -> None:
    array = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    view = kernels.expand(array, size)
    expected = np.broadcast_to(array, size)
    assert view.shape == expected.shape and view.strides == expected.strides
    np.testing.assert_array_equal(view, expected)
    assert not view.flags.writeable and np.shares_memory(view, array) == (view.size > 0)


def test_expand_of_a_transposed_array_is_still_a_view() -> None:
    array = np.arange(6.0).reshape(2, 3).T[:, :1]  # not contiguous
    view = kernels.expand(array, (3, 4))
    np.testing.assert_array_equal(view, np.broadcast_to(array, (3, 4)))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 0.5, -1, 2.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_pow_scalar_special_cases_match_torch(exponent, dtype: type) -> None:
    if dtype is np.int64 and exponent == -1:
        return  # torch refuses integers to negative integer powers
    base = np.array([-2, -1, 0, 1, 3], dtype=dtype)
    ours = kernels.pow_Tensor_Scalar(base, exponent)
    theirs = torch.tensor(base) ** exponent
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours, theirs.numpy())
    assert not np.shares_memory(ours, base)


@pytest.mark.parametrize(("target", "source"), [((3,), (2, 3)), ((3,), (2, 4)), ((1, 3), (1, 1, 3)),
                                                ((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), (4,))])
def test_copy_broadcasts_its_source_with_torchs_errors(target: tuple, source: tuple) -> None:
    from tests.oracle import same

    def program(lib):
        x = lib.zeros(*target)
        x.copy_(lib.arange(float(np.prod(source))).reshape(source))
        return x.tolist()

    same(program)


def test_expand_errors_match_torch() -> None:
    from tests.oracle import same

    for size in [(2, 4), (3,), (4, 3, 5), (-1, 2)]:
        same(lambda lib, size=size: lib.zeros(2, 3).expand(*size).tolist())


@pytest.mark.parametrize("bias", [(3,), (2, 3), (1, 3), (2, 1), (), (3, 3), (2, 2, 3)])
def test_addmm_expands_its_bias_as_torch_does(bias: tuple) -> None:
    from tests.oracle import same

    def program(lib):
        self = lib.arange(float(np.prod(bias))).reshape(bias)
        return lib.addmm(self, lib.ones(2, 4), lib.ones(4, 3), beta=0.5).tolist()

    same(program)


def test_silenced_restores_numpy_state_after_an_error() -> None:
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning inside would raise RuntimeWarning
        with pytest.raises(ValueError), kernels.silenced():
            assert np.isnan(np.array([0.0]) * np.inf).all()
            raise ValueError
    assert np.geterr() == before


def test_no_op_of_the_spec_warns_of_infinities_nan_or_overflow() -> None:
    """Every op of derivatives.yaml, on each of its samples in float32 and float64, once
    with infinities, NaN, signed zeros and a huge value written over its inputs' first
    elements and once with every element huge (3e38: a sum or product overflows float32):
    numpy raises no floating-point warning from any kernel, as torch's never do. (An op
    that refuses such values, as binary_cross_entropy refuses inputs outside [0, 1],
    raises as torch does; the calls that ran are counted, so this cannot pass empty.)"""
    import dataclasses

    from codegen.verify import load, run_runtime, samples

    def special(value):
        if not isinstance(value, np.ndarray) or value.dtype.kind != "f" or not value.size:
            return value
        specials = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3e38, -1e20], value.dtype)
        flat = value.copy().reshape(-1)
        flat[:min(flat.size, specials.size)] = specials[:min(flat.size, specials.size)]
        return flat.reshape(value.shape)

    def huge(value):
        is_float = isinstance(value, np.ndarray) and value.dtype.kind == "f"
        return np.full_like(value, 3e38) if is_float else value

    def written(value, dtype, fill):
        if isinstance(value, list):
            return [written(v, dtype, fill) for v in value]
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return fill(value.astype(dtype))
        return value

    warned, ran = {}, set()
    for info in load():
        for sample in samples(info):
            for dtype in (np.float32, np.float64):
                for fill in (special, huge):
                    args = {k: written(v, dtype, fill) for k, v in sample.args.items()}
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            run_runtime(info, dataclasses.replace(sample, args=args))
                            ran.add(info.name)
                        except Exception:  # noqa: BLE001, S112 - refused, as torch refuses
                            continue
                    numpy_warnings = [str(w.message) for w in caught
                                      if issubclass(w.category, RuntimeWarning)
                                      and "encountered in" in str(w.message)]
                    if numpy_warnings:
                        warned[info.name] = numpy_warnings
    assert not warned, warned
    assert len(ran) >= 200, len(ran)
