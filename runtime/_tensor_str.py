"""Render numpy arrays the way PyTorch 2.13 renders ``repr(tensor)`` for CPU tensors.

PyTorch's print options are modelled (`set_printoptions`): by default four digits of
precision, summarisation above 1000 elements with three edge items per dimension, an
80-character line width, and scientific notation chosen from the values.
The module depends on numpy and the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np


class PrintOptions:
    """What set_printoptions sets; sci_mode None lets the values decide."""

    def __init__(self) -> None:
        self.precision: int = 4
        self.threshold: float = 1000
        self.edgeitems: int = 3
        self.linewidth: int = 80
        self.sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()

# set_printoptions' profiles: precision, threshold, edgeitems, linewidth.
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """torch.set_printoptions: options left as None keep their value, but sci_mode, which
    is always set (None: chosen from the values), as in PyTorch."""
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments set_printoptions takes."""
    return dict(vars(PRINT_OPTS))


@contextmanager
def printoptions(**options: Any) -> Iterator[None]:
    """set_printoptions(**options) for the duration of a `with` block."""
    previous = get_printoptions()
    set_printoptions(**options)
    try:
        yield
    finally:
        set_printoptions(**previous)


_PREFIX = "tensor("

_FLOAT_DTYPES: dict[str, type[np.generic]] = {
    "float16": np.float16,
    "bfloat16": np.float32,  # (ml_dtypes' bfloat16 values print as the float32s they are)
    "float32": np.float32,
    "float64": np.float64,
}
_OTHER_DTYPES: dict[str, type[np.generic]] = {
    "uint8": np.uint8,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
}
_COMPLEX_DTYPES: dict[str, type[np.generic]] = {
    "complex32": np.complex64,  # (ml_dtypes' complex32 values print as the complex64s they are)
    "complex64": np.complex64,
    "complex128": np.complex128,
}
_NUMPY_DTYPES = {**_FLOAT_DTYPES, **_OTHER_DTYPES, **_COMPLEX_DTYPES}
# The complex dtype torch leaves unnamed beside each default float dtype.
_DEFAULT_COMPLEX = {"float32": "complex64", "float64": "complex128", "float16": "complex32"}

# Dtypes that torch never names in the repr of a non-empty tensor (besides the default float).
_IMPLIED_DTYPES = ("int64", "bool")


class _Formatter:
    """Chooses one display style and column width for every element of a tensor.

    Floating tensors are shown in one of three styles, decided from the finite nonzero
    values: integer style (``1.``) when they are all whole numbers, scientific style
    (``1.0000e-05``) when their magnitudes span a wide range or are very large or small,
    and fixed style (``0.1000``) otherwise.  Integer and bool tensors use ``str``.
    """

    def __init__(self, values: np.ndarray, *, is_float: bool) -> None:
        self.is_float = is_float
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not is_float:
            self.width = max(len(str(v)) for v in values.ravel().tolist())
            return

        flat = values.ravel().astype(np.float64)
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return
        magnitudes = np.abs(shown)
        smallest = float(magnitudes.min())
        largest = float(magnitudes.max())
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        self.width = max(len(self._render(v)) for v in shown.tolist())

    def _render(self, value: float | int | bool) -> str:
        """Text for one element, before padding to the column width."""
        if not self.is_float:
            return str(value)
        if self.sci_mode:
            return f"{value:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            text = f"{value:.0f}"
            return text if math.isinf(value) or math.isnan(value) else text + "."
        return f"{value:.{PRINT_OPTS.precision}f}"

    def format(self, value: float | int | bool) -> str:
        """Text for one element, right-aligned to the shared column width."""
        return self._render(value).rjust(self.width)


class _ComplexFormatter:
    """Two formatters, one chosen from the real parts and one from the imaginary parts, as
    torch prints a complex tensor: `1.0000+2.0000j`, the imaginary part's padding dropped."""

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(values.real, is_float=True)
        self.imag = _Formatter(values.imag, is_float=True)
        # what a row's line-filling counts per element: both widths, the sign and the `j`
        self.width = self.real.width + self.imag.width + 1

    def format(self, value: complex) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _shown_items(
    length: int, summarize: bool, render: Callable[[int], str], ellipsis: str
) -> list[str]:
    """Render the indices of one dimension, replacing the middle by ``ellipsis`` if summarised."""
    edge = PRINT_OPTS.edgeitems
    if summarize and length > 2 * edge:
        head = [render(i) for i in range(edge)]
        tail = [render(i) for i in range(length - edge, length)]
        return [*head, ellipsis, *tail]
    return [render(i) for i in range(length)]


def _summary_values(data: np.ndarray) -> np.ndarray:
    """The elements that remain visible once every long dimension is cut to its edge items."""
    edge = PRINT_OPTS.edgeitems
    kept = [np.r_[0:edge, size - edge : size] if size > 2 * edge else np.arange(size)
            for size in data.shape]
    return data[np.ix_(*kept)]


def _format_row(row: np.ndarray, indent: int, summarize: bool, formatter: Any) -> str:
    """Format a 1-D array, wrapping it over several lines when it exceeds the line width."""
    values = row.tolist()
    items = _shown_items(len(values), summarize, lambda i: formatter.format(values[i]), " ...")
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (formatter.width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_block(data: np.ndarray, indent: int, summarize: bool, formatter: Any) -> str:
    """Format an array of any rank; ``indent`` is the column of its opening bracket."""
    if data.ndim == 0:
        return formatter.format(data.item())
    if data.ndim == 1:
        return _format_row(data, indent, summarize, formatter)
    blocks = _shown_items(
        data.shape[0],
        summarize,
        lambda i: _format_block(data[i], indent + 1, summarize, formatter),
        "...",
    )
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


def _append_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """Close the repr, adding ``key=value`` suffixes and moving each to a new line when needed."""
    parts = [text]
    # Torch measures the last line two characters too long when it holds no newline; keep that.
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line_length += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(
    data: np.ndarray,
    *,
    dtype_name: str,
    default_float_dtype: str = "float32",
    suffixes: Sequence[str] = (),
) -> str:
    """Return what ``repr(tensor)`` prints for a CPU tensor holding ``data``.

    ``dtype_name`` is the tensor's dtype without the ``torch.`` prefix, and
    ``default_float_dtype`` is the name of torch's default dtype.  ``suffixes`` such as
    ``"requires_grad=True"`` or ``"grad_fn=<SumBackward0>"`` follow the values and any
    ``size=``/``dtype=`` entries, in the given order.
    """
    if dtype_name not in _NUMPY_DTYPES:
        raise ValueError(f"unsupported dtype {dtype_name!r}")
    if default_float_dtype not in _FLOAT_DTYPES:
        raise ValueError(f"default dtype must be floating, got {default_float_dtype!r}")
    values = np.asarray(data, dtype=_NUMPY_DTYPES[dtype_name])
    indent = len(_PREFIX)

    extra: list[str] = []
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            extra.append(f"size={tuple(values.shape)}")
        show_dtype = dtype_name != default_float_dtype
    else:
        summarize = values.size > PRINT_OPTS.threshold
        shown = _summary_values(values) if summarize else values
        formatter: Any = _ComplexFormatter(shown) if dtype_name in _COMPLEX_DTYPES \
            else _Formatter(shown, is_float=dtype_name in _FLOAT_DTYPES)
        body = _format_block(values, indent, summarize, formatter)
        show_dtype = dtype_name not in (default_float_dtype, *_IMPLIED_DTYPES,
                                        _DEFAULT_COMPLEX[default_float_dtype])
    if show_dtype:
        extra.append(f"dtype=torch.{dtype_name}")

    return _append_suffixes(_PREFIX + body, [*extra, *suffixes], indent)
