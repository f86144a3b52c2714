"""torch.histogram and torch.histogramdd (and Tensor.histogram): counts (or summed weights)
of the values, or of the points of the innermost dimension, in bins given by their edges.

As torch's CPU kernel: equal bins span the data's range (or `range`) with edges from
linspace in the input's dtype, a value finds its bin by division checked against the edges
next to it (so it always lies between its bin's edges), the last bin holds its right edge,
values outside (and NaN) are left out, and the weights are added in the input's dtype.
torch gives these ops no derivative: when an input requires grad the results carry torch's
`NotImplemented` node, which fails when a gradient reaches it.
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any

import numpy as np

from runtime import arguments, dtypes, factories, grad_mode, recording
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.node import Node

__all__ = ["histogram", "histogramdd"]

_Histogram = namedtuple("histogram", ["hist", "bin_edges"])  # noqa: PYI024 - torch's names
_HistogramDD = namedtuple("histogramdd", ["hist", "bin_edges"])  # noqa: PYI024
_HistogramOut = namedtuple("histogram_out", ["hist", "bin_edges"])  # noqa: PYI024

_SIGNATURES = (" * (Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
               "tuple of Tensors out = None)\n * (Tensor input, int bins = 100, *, tuple of "
               "floats range = None, Tensor weight = None, bool density = False, tuple of "
               "Tensors out = None)\n")
_METHOD_SIGNATURES = (" * (Tensor bins, *, Tensor weight = None, bool density = False)\n * (int "
                      "bins = 100, *, tuple of floats range = None, Tensor weight = None, bool "
                      "density = False)\n")
_KEYWORDS = ("range", "weight", "density", "out")
_DD_SIGNATURES = "".join(
    f" * (Tensor input, {kind} bins, tuple of floats range = None, Tensor weight = None, bool "
    "density = False)\n" for kind in ("int", "tuple of ints", "tuple of Tensors"))
_DD_NAMES = ("input", "bins", "range", "weight", "density")
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "bfloat16": "BFloat16"}
_DTYPE_WORDS = {"float32": "float", "float64": "double", "float16": "c10::Half",
                "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


class _NoDerivative(Node):
    """torch's node for an op without a derivative formula: it fails when a gradient
    reaches it, naming the op."""

    __slots__ = ("op",)

    def __init__(self, op: str, edges: tuple) -> None:
        super().__init__(edges)
        self.op = op

    def name(self) -> str:
        return "torch::autograd::NotImplemented"

    def apply(self, grads: list, ops: Any = None) -> list:
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


_NoDerivative.__name__ = "NotImplemented"  # as torch's repr shows it: grad_fn=<NotImplemented>


def _record(op: str, inputs: tuple, outputs: list[Tensor]) -> None:
    """Give the float outputs one NotImplemented node when an input requires grad."""
    present = tuple(value for value in inputs if value is not None)
    if not grad_mode.is_grad_enabled() or not recording.compute_requires_grad(*present):
        return
    node = _NoDerivative(op, recording.collect_next_edges(*present))
    for output in outputs:
        recording.set_history(output, node)


def _type_name(array: np.ndarray) -> str:
    return _TYPE_NAMES.get(array.dtype.name, array.dtype.name)


def _dtype_word(array: np.ndarray) -> str:
    return _DTYPE_WORDS.get(array.dtype.name, array.dtype.name)


def _float_kernel(array: np.ndarray, name: str) -> None:
    """torch's kernels run for float and double only."""
    if array.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f'"{name}" not implemented for \'{_type_name(array)}\'')


def _cpp_number(value: float) -> str:
    """A double as C++'s stream prints it (six significant digits)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}"


def _outer_edges(points: np.ndarray, bin_range: Any) -> list[tuple[float, float]]:
    """Each dimension's (leftmost, rightmost) edge: `range`'s, else the data's extrema, else
    (0, 1) for no data; checked, and widened by 0.5 each way when they are equal."""
    dims = points.shape[1]
    if bin_range is not None:
        values = [builtins.float(v) for v in bin_range]
        if len(values) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                               f"should have {2 * dims} elements, but got {len(values)}")
        edges = [(values[2 * d], values[2 * d + 1]) for d in range(dims)]
    elif points.size:
        _float_kernel(points, "histogramdd")
        with np.errstate(invalid="ignore"):
            low, high = np.min(points, axis=0), np.max(points, axis=0)
        edges = [(builtins.float(low[d]), builtins.float(high[d])) for d in range(dims)]
    else:
        edges = [(0.0, 1.0)] * dims
    for dim, (low, high) in enumerate(edges):
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {dim}'s range "
                               f"[{_cpp_number(low)}, {_cpp_number(high)}] is not finite")
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_cpp_number(low)} max {_cpp_number(high)} for dimension {dim}")
        if low == high:
            edges[dim] = (low - 0.5, high + 0.5)
    return edges


def _check_bin_counts(counts: list[int]) -> None:
    for dim, count in enumerate(counts):
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                               f"dimension {dim}")


def _check_inputs(input: Tensor, points: np.ndarray, edges: list[np.ndarray],
                  weight: Tensor | None) -> None:
    """torch's checks of the bins (one 1-D sequence per dimension, input's dtype) and of
    the weight (input's dtype, input's shape without its innermost dimension)."""
    dims = points.shape[1]
    if len(edges) != dims:
        raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for a "
                           f"{dims}-dimensional histogram but got {len(edges)}")
    for dim, edge in enumerate(edges):
        if edge.dtype != points.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {_dtype_word(points)} and bins for dimension {dim} "
                f"with dtype {_dtype_word(edge)}")
        if edge.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {edge.ndim} dimensions in the bins tensor for dimension "
                               f"{dim}")
        if edge.size == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {dim}")
    if weight is None:
        return
    if weight._data.dtype != points.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({_dtype_word(points)}), and "
            f"weight({_dtype_word(weight._data)})")
    if tuple(input.shape[:-1]) != (tuple(weight.shape) or (1,)):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(input.shape)} and weight with shape {list(weight.shape)}")


def _bin_of(values: np.ndarray, edges: np.ndarray, linear: bool) -> np.ndarray:
    """Each value's bin (values within the outer edges): the edges' upper bound less one,
    searched near the bin division finds (linear edges) or over all of them; the last edge
    belongs to the last bin."""
    count = edges.size
    if linear:
        left, right = edges[0], edges[-1]
        with np.errstate(all="ignore"):
            guess = ((values - left) * values.dtype.type(count - 1) / (right - left))
        guess = np.clip(guess.astype(np.int64), 0, count - 1)
        start = np.maximum(guess - 1, 0)
        stop = np.minimum(guess + 2, count)
        position = start.copy()
        for offset in range(3):
            index = start + offset
            inside = index < stop
            position += inside & (edges[np.minimum(index, count - 1)] <= values)
        position -= 1
    else:
        position = np.searchsorted(edges, values, side="right") - 1
    return np.where(position == count - 1, position - 1, position)


def _fill(points: np.ndarray, edges: list[np.ndarray], weights: np.ndarray | None,
          density: bool, linear: bool) -> np.ndarray:
    """The histogram of the points (N, D) over the edges, in the points' dtype."""
    dtype = points.dtype
    hist = np.zeros(tuple(e.size - 1 for e in edges), dtype)
    if not edges:
        return hist
    keep = np.ones(points.shape[0], bool)
    for dim, edge in enumerate(edges):
        with np.errstate(invalid="ignore"):
            keep &= (points[:, dim] >= edge[0]) & (points[:, dim] <= edge[-1])
    kept = points[keep]
    index = tuple(_bin_of(kept[:, dim], edge, linear) for dim, edge in enumerate(edges))
    added = weights[keep] if weights is not None else np.ones(kept.shape[0], dtype)
    np.add.at(hist, index, added)  # one element after another, in the input's dtype
    if density:
        with np.errstate(all="ignore"):
            hist = hist / hist.sum(dtype=dtype)
            for dim, edge in enumerate(edges):
                shape = [1] * len(edges)
                shape[dim] = edge.size - 1
                hist = hist / np.diff(edge).reshape(shape)
    return hist.astype(dtype, copy=False)


def _linear_edges(points: np.ndarray, counts: list[int], bin_range: Any) -> list[np.ndarray]:
    """linspace edges over each dimension's outer edges, in the input's dtype."""
    outer = _outer_edges(points, bin_range)
    dtype = dtypes.from_numpy(points.dtype) if points.dtype.kind == "f" else None
    return [factories._linspace_values(low, high, count + 1, dtype=dtype,
                                       requires_grad=False)._data.astype(points.dtype)
            for (low, high), count in zip(outer, counts, strict=True)]


def _invalid(args: tuple, kwargs: dict, method: bool = False) -> TypeError:
    """torch's parser's message for a call that fits neither signature (as it was made:
    its positional arguments and keywords; a method's without self)."""
    return TypeError(arguments._invalid_combination_message(
        "histogram", arguments._describe(args, kwargs, (Tensor,)),
        _METHOD_SIGNATURES if method else _SIGNATURES))


def _fits_bins(bins: Any, bin_range: Any) -> bool:
    """An int count of bins (with a sequence as range, or none), or a Tensor of edges."""
    if isinstance(bins, Tensor):
        return bin_range is None
    return _is_int(bins) and (bin_range is None or isinstance(bin_range, list | tuple))


def _fits_options(weight: Any, density: Any, out: Any) -> bool:
    """weight a Tensor or None, density a bool, out None or two Tensors."""
    if not ((weight is None or isinstance(weight, Tensor)) and isinstance(density, bool)):
        return False
    return out is None or (isinstance(out, list | tuple) and len(out) == 2
                           and builtins.all(isinstance(t, Tensor) for t in out))


def _histogram_arguments(args: tuple, kwargs: dict, method: bool) -> tuple:
    """(input, bins, range, weight, density, out) of a histogram call, or torch's TypeError
    when it fits neither of torch's signatures."""
    names = ("bins",) if method else ("input", "bins")
    shown = args[1:] if method else args  # what the message lists: a method's without self
    given = dict(zip(names, shown, strict=False))
    unknown = set(kwargs) - set(names) - set(_KEYWORDS[:3] if method else _KEYWORDS)
    if len(shown) > len(names) or unknown or set(given) & set(kwargs):
        raise _invalid(shown, kwargs, method)
    given.update(kwargs)
    if method:
        given["input"] = args[0]
    input, bins = given.get("input"), given.get("bins", 100)  # noqa: A001
    bin_range, weight, out = given.get("range"), given.get("weight"), given.get("out")
    density = given.get("density", False)
    if not (isinstance(input, Tensor) and _fits_bins(bins, bin_range)
            and _fits_options(weight, density, out)):
        raise _invalid(shown, kwargs, method)
    _check_range("histogram", bin_range)
    return input, bins, bin_range, weight, density, out


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def histogram(*args: Any, **kwargs: Any) -> Any:
    """torch.histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    (hist, bin_edges), `bins` equal bins over the data's range (or `range`), or the bins
    whose edges the 1-D tensor `bins` gives, of every element of input."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(histogram, args, kwargs)
        if heard is not _modes.PASS:
            return heard
    return _histogram(*_histogram_arguments(args, kwargs, False))


def _histogram(input: Tensor, bins: Any, range: Any, weight: Tensor | None,  # noqa: A002
               density: bool, out: Any) -> Any:
    if out is not None:
        return _histogram_out(input, bins, range, weight, density, out)
    points = input._data.reshape(-1, 1)
    weights = None if weight is None else weight._data.reshape(-1)
    if isinstance(bins, Tensor):
        edges = [bins._data]
        _check_inputs(input.reshape(-1, 1), points, edges, _flat(weight))
        _float_kernel(points, "histogram_cpu")
        hist = _fill(points, edges, weights, density, linear=False)
        edge_tensor = Tensor._make(np.array(bins._data, copy=True), None)
    else:
        _check_bin_counts([int(bins)])
        edges = _linear_edges(points, [int(bins)], range)
        _check_inputs(input.reshape(-1, 1), points, edges, _flat(weight))
        _float_kernel(points, "histogram_cpu")
        hist = _fill(points, edges, weights, density, linear=True)
        edge_tensor = Tensor._make(edges[0], None)
    result = _Histogram(Tensor._make(hist, None), edge_tensor)
    _record("histogram", (input, weight), list(result))
    return result


def _histogram_out(input: Tensor, bins: Any, bin_range: Any, weight: Tensor | None,
                   density: bool, out: Any) -> Any:
    """histogram(..., out=(hist, bin_edges)): both written (resized), in input's dtype."""
    hist, edges = out
    kind = input._data
    if hist._data.dtype != kind.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {_dtype_word(kind)} and hist "
                           f"{_dtype_word(hist._data)}")
    if edges._data.dtype != kind.dtype:
        raise RuntimeError("torch.histogram: input tensor and bin_edges tensor should have the "
                           f"same dtype, but got input {_dtype_word(kind)} and bin_edges "
                           f"{_dtype_word(edges._data)} for dimension 0")
    with grad_mode.no_grad():
        result = _histogram(input, bins, bin_range, weight, density, None)
    _out.write(hist, result.hist._data)
    _out.write(edges, result.bin_edges._data)
    _record("histogram", (input, weight), [hist, edges])  # torch's node, on out's tensors
    return _HistogramOut(hist, edges)


def _bins_list(bins: Any) -> list:
    """histogramdd's bins as torch's parser reads them: all tensors when the first one is,
    else all ints."""
    bins = list(bins)
    tensors = bool(bins) and isinstance(bins[0], Tensor)
    for position, value in enumerate(bins):
        if tensors and not isinstance(value, Tensor) or not tensors and position == 0 \
                and not _is_int(value):
            raise TypeError(f"expected Tensor as element {position} in argument 1, but got "
                            f"{arguments.type_name(value)}")
        if not tensors and not _is_int(value):
            raise TypeError("histogramdd(): argument 'bins' failed to unpack the object at pos "
                            f"2 with error \"type must be tuple of ints,but got "
                            f"{arguments.type_name(value)}\"")
    return bins


def _check_range(name: str, bin_range: Any) -> None:
    """`range` must be a sequence of numbers (torch's parser's message otherwise)."""
    if bin_range is None or not isinstance(bin_range, list | tuple):
        return
    for position, value in enumerate(bin_range):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise TypeError(f"{name}(): argument 'range' must be tuple of floats, but found "
                            f"element of type {arguments.type_name(value)} at pos "
                            f"{position + 1}")


def _flat(weight: Tensor | None) -> Tensor | None:
    return None if weight is None else weight.reshape(-1)


def histogramdd(*args: Any, **kwargs: Any) -> Any:
    """torch.histogramdd(input, bins, range=None, weight=None, density=False): (hist,
    bin_edges), the histogram of the points of input's innermost dimension (N coordinates
    each), with `bins` equal bins per dimension (an int, or one int per dimension) over the
    data's range (or `range`, 2N numbers), or the bins whose edges a sequence of N 1-D
    tensors gives."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(histogramdd, args, kwargs)
        if heard is not _modes.PASS:
            return heard
    given = dict(zip(_DD_NAMES, args, strict=False))
    if len(args) > len(_DD_NAMES) or set(kwargs) - set(_DD_NAMES) or set(given) & set(kwargs):
        raise _invalid_dd(args, kwargs)
    given.update(kwargs)
    input, bins = given.get("input"), given.get("bins")  # noqa: A001
    weight, density = given.get("weight"), given.get("density", False)
    bin_range = given.get("range")
    if not (isinstance(input, Tensor) and (_is_int(bins) or isinstance(bins, list | tuple))
            and (bin_range is None or isinstance(bin_range, list | tuple))
            and _fits_options(weight, density, None)):
        raise _invalid_dd(args, kwargs)
    return _histogramdd(input, bins, bin_range, weight, density)


def _invalid_dd(args: tuple, kwargs: dict) -> TypeError:
    return TypeError(arguments._invalid_combination_message(
        "histogramdd", arguments._describe(args, kwargs, (Tensor,)), _DD_SIGNATURES))


def _histogramdd(input: Tensor, bins: Any, range: Any, weight: Tensor | None,  # noqa: A002
                 density: bool) -> Any:
    """histogramdd once its arguments fit torch's signatures."""
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = input.shape[-1]
    points = input._data.reshape(math.prod(input.shape[:-1]), dims)
    weights = None if weight is None else weight._data.reshape(-1)
    _check_range("histogramdd", range)
    bins = [int(bins)] * dims if _is_int(bins) else _bins_list(bins)
    if bins and isinstance(bins[0], Tensor):
        edges = [b._data for b in bins]
        _check_inputs(input, points, edges, weight)
        _float_kernel(points, "histogram_cpu")
        hist = Tensor._make(_fill(points, edges, weights, density, linear=False), None)
        _record("_histogramdd_from_bin_tensors", (input, weight), [hist])
        return _HistogramDD(hist, tuple(bins))
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = _linear_edges(points, bins, range)
    _check_inputs(input, points, edges, weight)
    _check_bin_counts(bins)
    _float_kernel(points, "histogram_cpu")
    hist = Tensor._make(_fill(points, edges, weights, density, linear=True), None)
    edge_tensors = [Tensor._make(edge, None) for edge in edges]
    _record("_histogramdd_bin_edges", (input, weight), edge_tensors)
    _record("_histogramdd_from_bin_cts", (input, weight), [hist])
    return _HistogramDD(hist, tuple(edge_tensors))


class HistogramMethods:
    """Tensor.histogram, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def histogram(self, *args: Any, **kwargs: Any) -> Any:
        """Tensor.histogram(bins=100, *, range=None, weight=None, density=False)."""
        return _histogram(*_histogram_arguments((self, *args), kwargs, True))
