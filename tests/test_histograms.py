"""torch.histogram, torch.histogramdd and Tensor.histogram against torch: counts, weights,
density, ranges, edges given as tensors, the bin each edge value falls in, dtypes, the node
torch records (NotImplemented, failing on backward) and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime


def _pair(lib, array):
    return lib.tensor(array) if not isinstance(array, (list, tuple)) else \
        [lib.tensor(a) for a in array]


def _call_both(call, *arrays, **kwargs):
    """call(lib, *tensors) in gradgen and torch; each result's fields as arrays."""
    results = []
    for lib in (runtime, torch):
        tensors = [_pair(lib, a) for a in arrays]
        results.append(call(lib, *tensors, **kwargs))
    return results


def _arrays(result):
    hist, edges = result
    edges = [edges] if not isinstance(edges, tuple) else list(edges)
    return hist.numpy(), [e.numpy() for e in edges]


def _same(results) -> None:
    ours, theirs = results
    assert type(ours).__name__ == type(theirs).__name__
    assert (ours.hist is ours[0], ours.bin_edges is ours[1]) == (True, True)
    assert (theirs.hist is theirs[0], theirs.bin_edges is theirs[1]) == (True, True)
    (our_hist, our_edges), (their_hist, their_edges) = _arrays(ours), _arrays(theirs)
    assert our_hist.dtype == their_hist.dtype and our_hist.shape == their_hist.shape
    np.testing.assert_allclose(our_hist, their_hist, rtol=1e-6, atol=0)
    assert len(our_edges) == len(their_edges)
    for a, b in zip(our_edges, their_edges, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def _same_error(call, *arrays, **kwargs) -> None:
    caught = []
    for lib in (runtime, torch):
        tensors = [_pair(lib, a) for a in arrays]
        with pytest.raises(Exception) as error:
            call(lib, *tensors, **kwargs)
        caught.append(error.value)
    ours, theirs = caught
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours) == str(theirs)


_RNG = np.random.default_rng(7)
_VALUES = _RNG.standard_normal(50).astype(np.float32)
_EXACT = np.array([1.0, 2.0, 1.0, 4.0, 2.5, 3.25, 1.75], np.float32)


@pytest.mark.parametrize("kwargs", [
    {"bins": 4}, {"bins": 7, "range": (-1.0, 1.5)}, {"bins": 3, "density": True},
    {"bins": 1}, {"bins": 10, "range": (0.0, 0.0)}])
@pytest.mark.parametrize("values", [_VALUES, _EXACT, _VALUES.astype(np.float64)])
def test_histogram_counts(values, kwargs) -> None:
    _same(_call_both(lambda lib, x: lib.histogram(x, **kwargs), values))


def test_histogram_keywords_and_defaults() -> None:
    _same(_call_both(lambda lib, x: lib.histogram(input=x, bins=3, range=(0.0, 4.0)), _EXACT))
    _same(_call_both(lambda lib, x: x.histogram(), _VALUES))
    _same(_call_both(lambda lib, x, b: x.histogram(bins=b, density=True), _EXACT,
                     np.array([0.0, 2.0, 4.0], np.float32)))


def test_histogram_weights_and_density() -> None:
    values = _VALUES.astype(np.float64).reshape(5, 10)
    weight = np.abs(_RNG.standard_normal((5, 10)))
    for density in (False, True):
        _same(_call_both(lambda lib, x, w, d=density: lib.histogram(x, 6, weight=w, density=d),
                         values, weight))


@pytest.mark.parametrize("edges", [[-2.0, -0.5, 0.0, 0.25, 3.0], [0.0, 1.0], [1.0, 1.75, 4.0]])
def test_histogram_tensor_bins(edges) -> None:
    for values in (_VALUES, _EXACT):
        _same(_call_both(lambda lib, x, b: lib.histogram(x, b), values,
                         np.array(edges, np.float32)))
    _same(_call_both(lambda lib, x, b, w: x.histogram(b, weight=w, density=True),
                     _EXACT, np.array(edges, np.float32), np.arange(7, dtype=np.float32)))


def test_histogram_edges_values_fall_in_their_bins() -> None:
    """Values on linspace's edges go into the bin the edges say (torch's local search)."""
    edges = torch.linspace(-3.0, 7.0, 38).numpy()
    values = np.concatenate([edges, np.nextafter(edges, np.float32(-np.inf)),
                             np.nextafter(edges, np.float32(np.inf))]).astype(np.float32)
    _same(_call_both(lambda lib, x: lib.histogram(x, 37, range=(-3.0, 7.0)), values))


def test_histogram_special_inputs() -> None:
    for values in ([], [3.0, 3.0], [2.0], [1.0, np.nan, 2.0, np.inf]):
        array = np.array(values, np.float32)
        if np.isfinite(array).all():
            _same(_call_both(lambda lib, x: lib.histogram(x, 3), array))
        _same(_call_both(lambda lib, x: lib.histogram(x, 3, range=(0.0, 2.0)), array))
    _same(_call_both(lambda lib, x: lib.histogram(x, 3), np.array(2.0, np.float32)))


@pytest.mark.parametrize(("call", "arrays"), [
    (lambda lib, x: lib.histogram(x, 3), [np.array([1, 2])]),
    (lambda lib, x: lib.histogram(x, 3, range=(0.0, 1.0)), [np.array([1, 2])]),
    (lambda lib, x: lib.histogram(x.half(), 3), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 0), [_EXACT]),
    (lambda lib, x: lib.histogram(x, -2), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=(2.0, 1.0)), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=(0.0, float("inf"))), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=(0.0, 1.0, 3.0)), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3), [np.array([3.0, np.nan], np.float32)]),
    (lambda lib, x, w: lib.histogram(x, 3, weight=w), [_EXACT, np.ones(4, np.float32)]),
    (lambda lib, x, w: lib.histogram(x, 3, weight=w), [_EXACT, np.ones(7)]),
    (lambda lib, x, b: lib.histogram(x, b), [_EXACT, np.ones((1, 2), np.float32)]),
    (lambda lib, x, b: lib.histogram(x, b), [_EXACT, np.ones(2)]),
    (lambda lib, x, b: lib.histogram(x, b), [_EXACT, np.ones(0, np.float32)]),
    (lambda lib, x, b: lib.histogram(x, b), [_EXACT, np.array(2.0, np.float32)]),
    (lambda lib, x, b: lib.histogram(x, b, range=(0.0, 1.0)), [_EXACT, np.ones(2, np.float32)]),
    (lambda lib, x: lib.histogram(x, 3.5), [_EXACT]),
    (lambda lib, x: lib.histogram(x, bins=3.5), [_EXACT]),
    (lambda lib, x: x.histogram(3.5), [_EXACT]),
    (lambda lib, x: x.histogram(3, out=(x, x)), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=(0.0, 1.0), weight=3), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, 4), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, foo=1), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, density=1), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=(1, "a")), [_EXACT]),
    (lambda lib, x: lib.histogram(x, 3, range=5), [_EXACT]),
    (lambda lib, x, b: lib.histogram(np.array([1, 2]), 3), [_EXACT, _EXACT]),
])
def test_histogram_errors(call, arrays) -> None:
    _same_error(call, *arrays)


_POINTS = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 1.5]], np.float32)


@pytest.mark.parametrize("kwargs", [
    {"bins": [3, 3]}, {"bins": 2, "density": True}, {"bins": (2, 4), "range": [0.0, 1.0, 0.0, 2.0]},
    {"bins": [2, 2], "weight": np.array([1.0, 2.0, 4.0, 8.0, 0.5], np.float32)}])
def test_histogramdd(kwargs) -> None:
    weight = kwargs.pop("weight", None)
    if weight is None:
        _same(_call_both(lambda lib, x: lib.histogramdd(x, **kwargs), _POINTS))
    else:
        _same(_call_both(lambda lib, x, w: lib.histogramdd(x, weight=w, **kwargs),
                         _POINTS, weight))


def test_histogramdd_positional_range_and_keywords() -> None:
    _same(_call_both(lambda lib, x: lib.histogramdd(x, 2, [0.0, 2.0, 0.0, 2.0], None, True),
                     _POINTS))
    _same(_call_both(lambda lib, x: lib.histogramdd(input=x, bins=[2, 3]), _POINTS))


def test_histogramdd_shapes_and_tensor_bins() -> None:
    points = _RNG.standard_normal((4, 6, 3))
    _same(_call_both(lambda lib, x: lib.histogramdd(x, [2, 3, 4]), points))
    _same(_call_both(lambda lib, x: lib.histogramdd(x, [3, 3]), np.zeros((0, 2), np.float32)))
    _same(_call_both(lambda lib, x: lib.histogramdd(x, []), np.zeros((3, 2, 0), np.float32)))
    _same(_call_both(lambda lib, x, w: lib.histogramdd(x, 2, weight=w, density=True),
                     points, np.abs(_RNG.standard_normal((4, 6)))))
    edges = [np.array([0.0, 1.0, 2.0], np.float32), np.array([0.0, 1.0, 3.0], np.float32)]
    for lib in (runtime, torch):  # the edges given are the edges returned
        tensors = [lib.tensor(e) for e in edges]
        assert lib.histogramdd(lib.tensor(_POINTS), tensors).bin_edges[1] is tensors[1]
    _same(_call_both(lambda lib, x, b: lib.histogramdd(x, b, density=True), _POINTS, edges))


@pytest.mark.parametrize(("call", "arrays"), [
    (lambda lib, x: lib.histogramdd(x, [3]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, [3, 3, 3]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, [3]), [_POINTS[0]]),
    (lambda lib, x: lib.histogramdd(x, [3, 0]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, [3, 3], range=[0.0, 1.0]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, [3, 3], range=[0.0, 1.0, 2.0, 1.0]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x.long(), [3, 3]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x.long(), [3, 3], range=[0.0, 1.0, 0.0, 1.0]), [_POINTS]),
    (lambda lib, x, w: lib.histogramdd(x, [3, 3], weight=w),
     [_POINTS, np.ones((5, 1), np.float32)]),
    (lambda lib, x, w: lib.histogramdd(x, [3, 3], weight=w), [_POINTS, np.ones(5)]),
    (lambda lib, x, b: lib.histogramdd(x, b), [_POINTS, [np.array([0.0, 1.0], np.float32)]]),
    (lambda lib, x: lib.histogramdd(x, [1.5, 2]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, [2, 1.5]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, (lib.tensor([0.0, 1.0]), 2)), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, 2, range=[0, 1, 0, "a"]), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, 2, weight=3), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, 2.5), [_POINTS]),
    (lambda lib, x: lib.histogramdd(x, 2, foo=1), [_POINTS]),
])
def test_histogramdd_errors(call, arrays) -> None:
    _same_error(call, *arrays)


def test_histogram_records_not_implemented() -> None:
    """An input that requires grad gives the results torch's NotImplemented node, named and
    failing as torch's; without one, or under no_grad, there is none."""
    for lib in (runtime, torch):
        x = lib.tensor(_EXACT.reshape(7, 1), requires_grad=True)
        w = lib.ones(7, 1, requires_grad=True)
        result = lib.histogram(x, 3, weight=w)
        assert result.hist.grad_fn is result.bin_edges.grad_fn
        assert result.hist.grad_fn.name() == "torch::autograd::NotImplemented"
        assert "grad_fn=<NotImplemented>" in repr(result.hist)
        with pytest.raises(RuntimeError, match="^derivative for aten::histogram is not "
                                               "implemented$"):
            result.hist.sum().backward()
        dd = lib.histogramdd(x.reshape(-1, 1), [2])
        assert dd.hist.grad_fn is not dd.bin_edges[0].grad_fn
        with pytest.raises(RuntimeError, match="aten::_histogramdd_bin_edges is not"):
            dd.bin_edges[0].sum().backward()
        with pytest.raises(RuntimeError, match="aten::_histogramdd_from_bin_cts is not"):
            dd.hist.sum().backward()
        with lib.no_grad():
            assert lib.histogram(x, 3).hist.grad_fn is None
        assert lib.histogram(x.detach(), 3).hist.grad_fn is None


def test_histogram_out() -> None:
    """out=(hist, bin_edges): both written and returned; torch's dtype checks."""
    for bins in (3, np.array([0.0, 2.0, 5.0], np.float32)):
        results = []
        for lib in (runtime, torch):
            hist, edges = lib.empty(0), lib.empty(5)
            given = bins if isinstance(bins, int) else lib.tensor(bins)
            result = lib.histogram(lib.tensor(_EXACT), given, out=(hist, edges))
            assert result.hist is hist and result.bin_edges is edges
            assert type(result).__name__ == "histogram_out"
            results.append((hist.numpy(), edges.numpy()))
        for ours, theirs in zip(*results, strict=True):
            np.testing.assert_array_equal(ours, theirs)
    _same_error(lambda lib, x: lib.histogram(x, 3, out=(lib.empty(0, dtype=lib.float64),
                                                        lib.empty(0))), _EXACT)
    _same_error(lambda lib, x: lib.histogram(x, 3, out=lib.empty(0)), _EXACT)
    for lib in (runtime, torch):  # no refusal for an input that requires grad: the node
        x = lib.tensor(_EXACT, requires_grad=True)
        result = lib.histogram(x, 3, out=(lib.empty(0), lib.empty(0)))
        assert result.hist.grad_fn.name() == "torch::autograd::NotImplemented"
