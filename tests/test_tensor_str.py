"""Compare ``runtime._tensor_str.format_tensor`` with PyTorch's own ``repr(tensor)``."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# Load the module straight from its file so that the state of ``runtime/__init__.py`` is irrelevant.
_MODULE_PATH = Path(__file__).resolve().parent.parent / "runtime" / "_tensor_str.py"
_spec = importlib.util.spec_from_file_location("_gradgen_tensor_str", _MODULE_PATH)
assert _spec is not None and _spec.loader is not None
_tensor_str = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tensor_str)
format_tensor = _tensor_str.format_tensor

INF = float("inf")
NAN = float("nan")


def _suffixes(t: torch.Tensor) -> list[str]:
    """The autograd suffixes torch adds to the repr of ``t``."""
    if t.grad_fn is not None:
        return [f"grad_fn=<{t.grad_fn.name()}>"]
    if t.requires_grad:
        return ["requires_grad=True"]
    return []


def _ours(t: torch.Tensor) -> str:
    """Our rendering of ``t``, from its numpy values and dtype name only."""
    return format_tensor(
        t.detach().numpy(),
        dtype_name=str(t.dtype).removeprefix("torch."),
        suffixes=_suffixes(t),
    )


def _seeded(build: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """Wrap a tensor builder so that random tensors are reproducible."""

    def wrapped() -> torch.Tensor:
        torch.manual_seed(0)
        return build()

    return wrapped


def _grad_sum() -> torch.Tensor:
    return (torch.arange(4.0, requires_grad=True) * 2).sum()


def _grad_long_row() -> torch.Tensor:
    # Eight fixed-mode columns fill the first line, so the grad_fn suffix must wrap.
    return torch.randn(8, requires_grad=True) * 2


def _grad_2d_wrapping() -> torch.Tensor:
    return torch.randn(3, 8, requires_grad=True).exp()


CASES: dict[str, Callable[[], torch.Tensor]] = {
    # Integer-valued floats.
    "int_valued": lambda: torch.tensor([1.0, 2.0, 3.0]),
    "int_valued_negative": lambda: torch.tensor([-1.0, 20.0, 300.0]),
    "zeros": lambda: torch.zeros(4),
    "negative_zero": lambda: torch.tensor([-0.0, 0.0, 1.0]),
    # Fixed-point fractions.
    "fractions": lambda: torch.tensor([0.1, 0.25, -0.5]),
    "fractions_random_2d": lambda: torch.randn(3, 4),
    "fractions_float32_rounding": lambda: torch.tensor([1 / 3, 2 / 3, 123.45678]),
    # Scientific mode triggers.
    "sci_small_min": lambda: torch.tensor([1e-5, 1.0]),
    "sci_ratio": lambda: torch.tensor([0.5, 2000.0]),
    "sci_large_max_int": lambda: torch.tensor([1e9, 2e9]),
    "sci_int_ratio": lambda: torch.tensor([1.0, 1e5]),
    "sci_mixed_negative": lambda: torch.tensor([-1e-6, 3.5, 1e3]),
    "no_sci_at_ratio_1000": lambda: torch.tensor([0.001, 1.0]),
    # Non-finite values.
    "inf_nan_int_mode": lambda: torch.tensor([INF, -INF, NAN, 1.0]),
    "inf_fraction": lambda: torch.tensor([0.5, INF]),
    "nan_sci": lambda: torch.tensor([1e-5, NAN, -INF]),
    "only_nonfinite": lambda: torch.tensor([NAN, INF, -INF]),
    # 0-dim tensors.
    "scalar_int_valued": lambda: torch.tensor(3.0),
    "scalar_fraction": lambda: torch.tensor(-1 / 3),
    "scalar_sci": lambda: torch.tensor(1e-7),
    "scalar_nan": lambda: torch.tensor(NAN),
    "scalar_int64": lambda: torch.tensor(7),
    "scalar_bool": lambda: torch.tensor(True),
    "scalar_float64": lambda: torch.tensor(2.5, dtype=torch.float64),
    # Empty tensors.
    "empty_1d": lambda: torch.empty(0),
    "empty_0x3": lambda: torch.empty(0, 3),
    "empty_int64": lambda: torch.empty(0, dtype=torch.int64),
    "empty_bool_2x0": lambda: torch.empty(2, 0, dtype=torch.bool),
    "empty_float64": lambda: torch.empty(0, dtype=torch.float64),
    # Rows too long for one line.
    "long_row_fractions": lambda: torch.arange(100.0) / 7,
    "long_row_int_valued": lambda: torch.arange(40.0),
    "long_row_int64": lambda: torch.arange(-50, 50) * 1000,
    "long_row_sci": lambda: torch.logspace(-10, 10, 30),
    # Multi-dimensional tensors.
    "matrix": lambda: torch.randn(5, 6),
    "matrix_wrapping_rows": lambda: torch.randn(3, 20),
    "tensor_3d": lambda: torch.randn(2, 3, 4),
    "tensor_4d": lambda: torch.arange(24.0).reshape(2, 2, 3, 2),
    "tensor_5d": lambda: torch.randn(2, 1, 2, 1, 2) * 1e5,
    "column": lambda: torch.randn(4, 1),
    # Summarised tensors (more than 1000 elements).
    "summary_1d": lambda: torch.arange(2000.0),
    "summary_2d": lambda: torch.randn(50, 50),
    "summary_3d_sci": lambda: torch.randn(11, 10, 10) * 1e4,
    "summary_narrow": lambda: torch.randn(2000, 1),
    "summary_int64": lambda: torch.randint(-(10**12), 10**12, (2000,)),
    "summary_bool": lambda: torch.rand(1001) > 0.5,
    "summary_row_wraps": lambda: torch.randn(2, 600),
    "threshold_not_summarised": lambda: torch.arange(1000.0).reshape(10, 100),
    # Other dtypes.
    "float64_row": lambda: torch.randn(5, dtype=torch.float64),
    "float64_matrix_wrapping": lambda: torch.randn(2, 12, dtype=torch.float64),
    "float64_sci_extremes": lambda: torch.tensor([1e308, 5e-324], dtype=torch.float64),
    "int64_matrix": lambda: torch.tensor([[1, -20], [300, 4]]),
    "int32_shows_dtype": lambda: torch.arange(5, dtype=torch.int32),
    "uint8_shows_dtype": lambda: torch.arange(3, dtype=torch.uint8),
    "float16_shows_dtype": lambda: torch.tensor([0.1, 2.0, 3.5], dtype=torch.float16),
    "bool_row": lambda: torch.tensor([True, False, True]),
    "bool_all_true": lambda: torch.tensor([[True], [True]]),
    # Autograd suffixes.
    "requires_grad": lambda: torch.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_scalar": lambda: torch.tensor(0.5, requires_grad=True),
    "requires_grad_empty": lambda: torch.empty(0, 3, requires_grad=True),
    "requires_grad_float64": lambda: torch.ones(3, dtype=torch.float64, requires_grad=True),
    "grad_fn_sum": _grad_sum,
    "grad_fn_matrix": lambda: torch.ones(2, 2, requires_grad=True) * 3,
    "grad_fn_long_row_wraps": _grad_long_row,
    "grad_fn_multiline_wraps": _grad_2d_wrapping,
    "grad_fn_float64_wraps": lambda: torch.randn(7, dtype=torch.float64, requires_grad=True) * 2,
    "grad_fn_summarised": lambda: torch.randn(50, 50, requires_grad=True) + 1,
}


@pytest.mark.parametrize("build", [_seeded(b) for b in CASES.values()], ids=list(CASES))
def test_matches_torch(build: Callable[[], torch.Tensor]) -> None:
    t = build()
    assert _ours(t) == repr(t)


def test_suffix_wraps_onto_new_line() -> None:
    t = _seeded(_grad_long_row)()
    text = _ours(t)
    assert text.endswith(",\n       grad_fn=<MulBackward0>)")
    assert text == repr(t)


def test_str_matches_repr() -> None:
    t = torch.tensor([[1.5, -2.0], [3.25, 4.0]])
    assert _ours(t) == str(t)


def test_float64_default_dtype() -> None:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        tensors = [
            torch.tensor([1.5, 2.0]),
            torch.tensor([1.5], dtype=torch.float32),
            torch.empty(0),
        ]
        for t in tensors:
            ours = format_tensor(
                t.numpy(),
                dtype_name=str(t.dtype).removeprefix("torch."),
                default_float_dtype="float64",
            )
            assert ours == repr(t)
    finally:
        torch.set_default_dtype(previous)


def test_rejects_unknown_dtype() -> None:
    with pytest.raises(ValueError):
        format_tensor(np.zeros(2), dtype_name="float8_e4m3fn")


# Property-based checks on random arrays.

_SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)
_FLOAT32_VALUES = st.one_of(
    st.integers(-1000, 1000).map(float),
    st.floats(-1e3, 1e3, width=32),
    st.floats(width=32),
    st.sampled_from([0.0, -0.0, 1e-5, 1e9, INF, -INF, NAN]),
)
_FLOAT_ARRAYS = st.one_of(
    hnp.arrays(np.float32, _SHAPES, elements=_FLOAT32_VALUES),
    hnp.arrays(np.float64, _SHAPES, elements=st.floats()),
)
_OTHER_ARRAYS = st.one_of(
    hnp.arrays(np.int64, _SHAPES),
    hnp.arrays(np.int64, _SHAPES, elements=st.integers(-100, 100)),
    hnp.arrays(np.bool_, _SHAPES),
)


@settings(max_examples=300, deadline=None)
@given(_FLOAT_ARRAYS, st.sampled_from([None, "requires_grad", "grad_fn"]))
def test_random_float_tensors(array: np.ndarray, autograd: str | None) -> None:
    t = torch.from_numpy(array)
    if autograd is not None:
        t = t.clone().requires_grad_()
        if autograd == "grad_fn":
            t = t * 1
    assert _ours(t) == repr(t)


@settings(max_examples=200, deadline=None)
@given(_OTHER_ARRAYS)
def test_random_int_and_bool_tensors(array: np.ndarray) -> None:
    t = torch.from_numpy(array)
    assert _ours(t) == repr(t)


_SUMMARY_SHAPES = st.one_of(
    st.tuples(st.integers(1001, 3000)),
    st.tuples(st.integers(32, 80), st.integers(32, 80)),
    st.tuples(st.integers(11, 20), st.integers(11, 20), st.integers(11, 20)),
    st.lists(st.integers(1, 4), max_size=3).flatmap(lambda dims: st.permutations([*dims, 1001])),
)


@settings(max_examples=40, deadline=None)
@given(
    _SUMMARY_SHAPES,
    st.sampled_from([1.0, 1e-3, 1e5]),
    st.integers(0, 2**32 - 1),
)
def test_random_summarised_tensors(
    shape: tuple[int, ...] | list[int], scale: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    t = torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))
    assert _ours(t) == repr(t)
