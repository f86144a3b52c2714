"""bfloat16 against torch: the dtype, its casts (rounded as torch's, through float32), its
printing, its promotion, conversions, random tensors drawn bit for bit, and gradients.

numpy has no bfloat16 of its own: gradgen's is the `ml_dtypes` package's. Values are
compared bit for bit, as the float32s they are (a bfloat16 is exact in float32).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import runtime

# Values that show a cast's rounding: ties (to even), a double just above a tie that
# float32 rounds onto it (torch rounds twice: to float32, then to bfloat16), the largest
# finite values, overflow, subnormals, signed zeros, infinities and NaN.
EDGES = [0.0, -0.0, 1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-30, 1 + 2**-8 + 2**-20,
         -(1 + 2**-8 + 2**-30), 3.3895313892515355e38, 3.3961775292304e38, 3.4e38, 1e39,
         -1e39, 1e-38, 1e-40, 9.2e-41, 4e-41, 1e-45, float("inf"), -float("inf"), 0.1, -2.5,
         65504.0, 1e10, 123456789.0]


def bits(tensor: Any) -> list:
    """A tensor's values as Python floats (bfloat16 and float16 ones through float32), NaN
    as a string so that lists compare."""
    if str(tensor.dtype) in ("torch.bfloat16", "torch.float16"):
        tensor = tensor.float()
    values = np.asarray(tensor.tolist(), dtype=object).ravel().tolist()
    return [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in values]


def same(program: Callable[[Any], list]) -> None:
    """`program(torch)` and `program(runtime)` give the same dtypes, shapes and bits."""
    want, got = program(torch), program(runtime)
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(w, torch.Tensor):
            assert isinstance(g, runtime.Tensor), index
            assert (str(g.dtype), tuple(g.shape)) == (str(w.dtype), tuple(w.shape)), index
            assert bits(g) == bits(w), index
        else:
            assert g == w or str(g) == str(w), (index, g, w)


def test_the_dtype() -> None:
    same(lambda t: [repr(t.bfloat16), t.bfloat16.is_floating_point, t.bfloat16.itemsize,
                    t.bfloat16.is_signed, t.bfloat16.is_complex, t.ones(2).bfloat16().type(),
                    t.ones(1, dtype=t.bfloat16).element_size()])


def test_finfo() -> None:
    same(lambda t: [repr(t.finfo(t.bfloat16))] + [
        getattr(t.finfo(t.bfloat16), name) for name in
        ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution")])


@pytest.mark.parametrize("source", ["float64", "float32", "float16", "int64", "int32"])
def test_casts_to_bfloat16_round_as_torch(source: str) -> None:
    values = EDGES if source.startswith("float") else [0, 1, -7, 257, 16842753, 2**31 - 1,
                                                        2**24 + 1, 2**40 + 2**32 + 1]

    def program(t: Any) -> list:
        x = t.tensor(values, dtype=t.float64).to(getattr(t, source))
        return [x.bfloat16(), x.to(t.bfloat16), x.type(t.bfloat16),
                x.type("torch.BFloat16Tensor"), x.to(dtype=t.bfloat16, copy=True)]

    same(program)


def test_tensor_of_python_numbers_in_bfloat16() -> None:
    same(lambda t: [t.tensor(EDGES, dtype=t.bfloat16), t.tensor(3, dtype=t.bfloat16),
                    t.tensor([[1, 2], [300, 65537]], dtype=t.bfloat16),
                    t.tensor([True, False], dtype=t.bfloat16),
                    t.BFloat16Tensor([1.0, 1 + 2**-8 + 2**-30]),
                    t.tensor(np.array(EDGES), dtype=t.bfloat16),
                    t.zeros(2, 3, dtype=t.bfloat16), t.ones(2, dtype=t.bfloat16),
                    t.full((2,), 1 + 2**-8 + 2**-30, dtype=t.bfloat16),
                    t.arange(5, dtype=t.bfloat16), t.linspace(0, 1, 7, dtype=t.bfloat16)])


def test_casts_from_bfloat16() -> None:
    def program(t: Any) -> list:
        x = t.tensor(EDGES[:-7] + [-3.7, 2.5, 3.5, 255.0], dtype=t.float64).bfloat16()
        finite = x[t.isfinite(x)]
        return [x.float(), x.double(), x.half(), finite.long(), finite.int(), x.bool(),
                x.to(t.float32).bfloat16(), x.tolist(), x[2].item(), float(x[3])]

    same(program)


def test_printing() -> None:
    for values in ([1.0, 2.5, 3.3], [1e-5, 3e5], [1.0, 2.0], [[1.5, float("nan")],
                   [float("inf"), -0.0]], [], [0.1] * 1000, 7.25):
        same(lambda t, values=values: [repr(t.tensor(values, dtype=t.bfloat16)),
                                       str(t.tensor(values).bfloat16())])
    same(lambda t: [repr(t.ones(2, dtype=t.bfloat16, requires_grad=True) * 3)])


@pytest.mark.parametrize("other", ["float16", "float32", "float64", "int64", "int32", "bool",
                                   "uint8", "int8", "int16", "complex64", "complex128"])
def test_promotion(other: str) -> None:
    def program(t: Any) -> list:
        other_dtype = getattr(t, other)
        b = t.tensor([1.5, -2.25], dtype=t.bfloat16)
        o = t.tensor([1, 0], dtype=t.int64).to(other_dtype)
        return [str(t.promote_types(t.bfloat16, other_dtype)),
                str(t.promote_types(other_dtype, t.bfloat16)), str(t.result_type(b, o)),
                str(t.result_type(b, o[0])), str(t.result_type(b[0], o)),
                str((b + o).dtype), str((o * b).dtype)]

    same(program)


def test_promotion_with_python_numbers() -> None:
    same(lambda t: [str(t.result_type(t.ones(2, dtype=t.bfloat16), 2.5)),
                    str(t.result_type(t.ones(2, dtype=t.bfloat16), 2)),
                    str(t.result_type(t.ones(2, dtype=t.bfloat16), True)),
                    str(t.result_type(t.ones(2, dtype=t.int64), t.ones((), dtype=t.bfloat16))),
                    str((t.ones(2, dtype=t.bfloat16) * 2).dtype),
                    str((t.tensor([1, 2]) / t.tensor(2.0, dtype=t.bfloat16)).dtype)])


def test_numpy_refuses_bfloat16_as_torch_does() -> None:
    for lib in (torch, runtime):
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            lib.ones(2, dtype=lib.bfloat16).numpy()


def test_storage_of_bfloat16() -> None:
    same(lambda t: [t.BFloat16Storage(3).size(), t.ones(2, dtype=t.bfloat16).untyped_storage()
                    .nbytes(), t.tensor([1.5, 2], dtype=t.bfloat16).storage().tolist()])


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_random_tensors_bit_for_bit(dtype: str) -> None:
    def program(t: Any) -> list:
        d = getattr(t, dtype)
        t.manual_seed(0)
        return [t.randn(5, dtype=d), t.rand(20, dtype=d), t.empty(3, dtype=d).uniform_(-2, 3),
                t.randn(37, dtype=d), t.randn(16, dtype=d),
                t.empty(40, dtype=d).normal_(1.5, 3), t.rand(1000, dtype=d),
                t.randn(1000, dtype=d), t.empty(10, 4, dtype=d).t().normal_(),
                t.empty(1000, dtype=d).uniform_(-0.1, 7.3), t.randn(3, dtype=d),
                t.rand(2, 3, dtype=d, requires_grad=True), t.randn_like(t.ones(20, dtype=d)),
                t.rand_like(t.ones(3, dtype=d))]

    same(program)


def test_gradients_through_a_cast_to_bfloat16() -> None:
    """The gradient of a bfloat16 result is rounded to bfloat16 (through float32) before it
    reaches the float64 input, as in torch."""
    weights = np.random.default_rng(0).standard_normal((300, 200))
    data = np.random.default_rng(1).standard_normal((300, 200))

    def program(t: Any) -> list:
        x = t.tensor(data, requires_grad=True)
        y = x.bfloat16()
        (y * t.tensor(weights)).sum().backward()
        return [y, x.grad]

    same(program)


def test_bfloat16_leaves_get_bfloat16_gradients() -> None:
    def program(t: Any) -> list:
        x = t.tensor([1.0, 2.5, 3.3], dtype=t.bfloat16, requires_grad=True)
        (x * x).sum().backward()
        g = t.tensor([0.1, 0.2, 0.3], dtype=t.float64, requires_grad=True)
        (g.bfloat16() * 3).sum().backward()
        return [x.grad, g.grad, x.bfloat16() is x, x.detach().requires_grad_().dtype]

    same(program)


@pytest.mark.parametrize("value", [1e39, -1e300, 3.3961775292304e38])
def test_a_fill_value_beyond_bfloat16_is_refused(value: float) -> None:
    messages = []
    for lib in (torch, runtime):
        with pytest.raises(RuntimeError) as caught:
            lib.full((2,), value, dtype=lib.bfloat16)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == ("value cannot be converted to type c10::BFloat16 "
                                          "without overflow")


# -- arithmetic: computed in float32 and rounded once per op, as torch's CPU kernels ----------

_RNG = np.random.default_rng(5)
_A, _B = _RNG.standard_normal((7, 9)) * 3, _RNG.standard_normal((7, 9))
_P = np.abs(_A) + 0.1
ARITHMETIC: dict[str, Callable] = {
    "add": lambda t, a, b, p: a + b, "sub": lambda t, a, b, p: a - b,
    "mul": lambda t, a, b, p: a * b, "div": lambda t, a, b, p: a / b,
    "add a number": lambda t, a, b, p: a + 0.1, "mul by a number": lambda t, a, b, p: a * 0.1,
    "mul by a 0-dim double": lambda t, a, b, p: a * t.tensor(0.1, dtype=t.float64),
    "div by a number": lambda t, a, b, p: a / 3, "number minus": lambda t, a, b, p: 1.3 - a,
    "exp": lambda t, a, b, p: a.exp(), "log": lambda t, a, b, p: p.log(),
    "sin": lambda t, a, b, p: a.sin(), "tanh": lambda t, a, b, p: a.tanh(),
    "sigmoid": lambda t, a, b, p: a.sigmoid(), "sqrt": lambda t, a, b, p: p.sqrt(),
    "square": lambda t, a, b, p: a ** 2, "pow": lambda t, a, b, p: p ** b,
    "sum": lambda t, a, b, p: a.sum(), "sum(0)": lambda t, a, b, p: a.sum(0),
    "mean": lambda t, a, b, p: a.mean(), "mean(1)": lambda t, a, b, p: a.mean(1),
    "mm": lambda t, a, b, p: a @ b.T, "linear": lambda t, a, b, p: t.nn.functional.linear(a, b[:3]),
    "softmax": lambda t, a, b, p: a.softmax(-1), "relu": lambda t, a, b, p: a.relu(),
    "abs": lambda t, a, b, p: a.abs(), "neg": lambda t, a, b, p: -a,
    "clamp": lambda t, a, b, p: a.clamp(-1, 1), "maximum": lambda t, a, b, p: t.maximum(a, b),
    "cumsum": lambda t, a, b, p: a.cumsum(1), "max": lambda t, a, b, p: a.max(),
    "argmax": lambda t, a, b, p: a.argmax(1), "sort": lambda t, a, b, p: a.sort(1)[0],
    "where": lambda t, a, b, p: t.where(a > 0, a, b),
    "silu": lambda t, a, b, p: t.nn.functional.silu(a),
    "reciprocal": lambda t, a, b, p: a.reciprocal(), "floor": lambda t, a, b, p: a.floor(),
    "round": lambda t, a, b, p: a.round(), "lerp": lambda t, a, b, p: t.lerp(a, b, 0.3),
    "mse_loss": lambda t, a, b, p: t.nn.functional.mse_loss(a, b),
    "addcmul": lambda t, a, b, p: t.addcmul(a, a, b, value=0.5), "eq": lambda t, a, b, p: a == b,
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(ARITHMETIC))
def test_arithmetic_bit_for_bit(name: str, dtype: str) -> None:
    def program(t: Any) -> list:
        a, b, p = (t.tensor(x).to(getattr(t, dtype)) for x in (_A, _B, _P))
        return [ARITHMETIC[name](t, a, b, p)]

    same(program)


def test_backward_in_bfloat16() -> None:
    """Gradients of bfloat16 leaves are bfloat16, each node's arithmetic rounded as torch's."""
    def program(t: Any) -> list:
        x = t.tensor(_A[:3], dtype=t.bfloat16, requires_grad=True)
        w = t.tensor(_B[:4].T, dtype=t.bfloat16, requires_grad=True)
        loss = ((x @ w).sigmoid() * 3 + x.sum(1, keepdim=True)).mean()
        loss.backward()
        return [loss, x.grad, w.grad]

    same(program)


def test_save_and_load_between_torch_and_gradgen(tmp_path: Any) -> None:
    values = [1.5, 2.25, -3.1, 1 + 2**-8 + 2**-30]
    runtime.save({"w": runtime.tensor(values, dtype=runtime.bfloat16)}, tmp_path / "ours.pt")
    theirs = torch.load(tmp_path / "ours.pt")["w"]
    torch.save({"w": torch.tensor(values, dtype=torch.bfloat16)}, tmp_path / "theirs.pt")
    ours = runtime.load(tmp_path / "theirs.pt")["w"]
    assert str(theirs.dtype) == str(ours.dtype) == "torch.bfloat16"
    assert bits(theirs) == bits(ours) == bits(torch.tensor(values, dtype=torch.bfloat16))
