"""Render numpy arrays the way PyTorch 2.13 renders ``repr(tensor)`` for CPU tensors.

Only PyTorch's default print options are modelled: four digits of precision, summarisation
above 1000 elements with three edge items per dimension, and an 80-character line width.
The module depends on numpy and the standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

_PRECISION = 4
_THRESHOLD = 1000
_EDGEITEMS = 3
_LINEWIDTH = 80
_PREFIX = "tensor("

_FLOAT_DTYPES: dict[str, type[np.generic]] = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
}
_OTHER_DTYPES: dict[str, type[np.generic]] = {
    "uint8": np.uint8,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "bool": np.bool_,
}
_NUMPY_DTYPES = {**_FLOAT_DTYPES, **_OTHER_DTYPES}

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
        self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        self.width = max(len(self._render(v)) for v in shown.tolist())

    def _render(self, value: float | int | bool) -> str:
        """Text for one element, before padding to the column width."""
        if not self.is_float:
            return str(value)
        if self.sci_mode:
            return f"{value:.{_PRECISION}e}"
        if self.int_mode:
            text = f"{value:.0f}"
            return text if math.isinf(value) or math.isnan(value) else text + "."
        return f"{value:.{_PRECISION}f}"

    def format(self, value: float | int | bool) -> str:
        """Text for one element, right-aligned to the shared column width."""
        return self._render(value).rjust(self.width)


def _shown_items(
    length: int, summarize: bool, render: Callable[[int], str], ellipsis: str
) -> list[str]:
    """Render the indices of one dimension, replacing the middle by ``ellipsis`` if summarised."""
    if summarize and length > 2 * _EDGEITEMS:
        head = [render(i) for i in range(_EDGEITEMS)]
        tail = [render(i) for i in range(length - _EDGEITEMS, length)]
        return [*head, ellipsis, *tail]
    return [render(i) for i in range(length)]


def _summary_values(data: np.ndarray) -> np.ndarray:
    """The elements that remain visible once every long dimension is cut to its edge items."""
    kept = [
        np.r_[0:_EDGEITEMS, size - _EDGEITEMS : size] if size > 2 * _EDGEITEMS else np.arange(size)
        for size in data.shape
    ]
    return data[np.ix_(*kept)]


def _format_row(row: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    """Format a 1-D array, wrapping it over several lines when it exceeds the line width."""
    values = row.tolist()
    items = _shown_items(len(values), summarize, lambda i: formatter.format(values[i]), " ...")
    per_line = max(1, (_LINEWIDTH - indent) // (formatter.width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_block(data: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
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
        if line_length + len(suffix) + 2 > _LINEWIDTH:
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
        summarize = values.size > _THRESHOLD
        formatter = _Formatter(
            _summary_values(values) if summarize else values,
            is_float=dtype_name in _FLOAT_DTYPES,
        )
        body = _format_block(values, indent, summarize, formatter)
        show_dtype = dtype_name != default_float_dtype and dtype_name not in _IMPLIED_DTYPES
    if show_dtype:
        extra.append(f"dtype=torch.{dtype_name}")

    return _append_suffixes(_PREFIX + body, [*extra, *suffixes], indent)
