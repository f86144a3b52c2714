"""torch functions built from other ops, as torch builds them (CompositeImplicitAutograd):
their graphs show the ops they are made of, so a gradient flows without a node of their own.

Shapes (atleast_Nd, broadcast_shapes/_tensors, the stacks and splits, tile), products (kron,
inner, tensordot), statistics (cov, corrcoef, nanmean, diff), matrices (diag, diagflat, det,
logdet, slogdet, matrix_exp, pinverse), take_along_dim, cartesian_prod, combinations,
meshgrid, float_power, the index factories tril_/triu_indices, the type questions
(can_cast, promote_types, result_type) and a few predicates without a gradient. Tensor
methods are in `FunctionMethods`, set on Tensor by runtime/methods.py.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
from typing import Any

import numpy as np

from generated import ops
from runtime import arguments, dtypes, factories, kernels, linalg, random_ops
from runtime import modes as _modes
from runtime._tensor import Size, Tensor
from runtime._warn import warn_at_caller
from runtime.composite import matmul as _matmul

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "combinations", "kron", "inner", "tensordot", "diff", "diagflat",
           "diag", "fliplr", "hsplit", "vsplit", "dsplit", "tensor_split", "hstack", "vstack",
           "dstack", "column_stack", "row_stack", "tile", "take_along_dim", "det", "slogdet",
           "logdet", "matrix_exp", "pinverse", "cov", "corrcoef", "float_power", "nanmean",
           "meshgrid", "tril_indices", "triu_indices", "can_cast", "promote_types",
           "result_type", "isneginf", "isposinf", "isreal", "signbit", "repeat_interleave",
           "cross", "trapezoid", "trapz", "cumulative_trapezoid", "vander", "matrix_power",
           "aminmax", "bernoulli", "block_diag", "svd", "qr", "lu", "lu_solve", "cholesky",
           "quantile", "nanquantile"]


def _check_tensor(name: str, value: Any, argument: str = "input", position: int = 1) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {arguments.type_name(value)}")


def _tensor_sequence(name: str, tensors: tuple) -> list:
    """`f(a, b)` and `f([a, b])` alike."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    for index, value in enumerate(tensors):
        if not isinstance(value, Tensor):
            raise TypeError(f"expected Tensor as element {index} in argument 0, but got "
                            f"{arguments.type_name(value)}")
    return list(tensors)


# -- shapes ------------------------------------------------------------------------------------

def _at_least(tensors: tuple, name: str, grow: Any) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return grow(tensors[0])
    return tuple(grow(t) for t in _tensor_sequence(name, tensors))


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension (a 0-dim one as shape [1])."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(atleast_1d, (*tensors,), {})
        if heard is not _modes.PASS:
            return heard
    return _at_least(tensors, "atleast_1d", lambda t: t.reshape(1) if t.ndim == 0 else t)


def atleast_2d(*tensors: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(atleast_2d, (*tensors,), {})
        if heard is not _modes.PASS:
            return heard
    def grow(t: Any) -> Any:
        return t.reshape(1, 1) if t.ndim == 0 else t.unsqueeze(0) if t.ndim == 1 else t
    return _at_least(tensors, "atleast_2d", grow)


def atleast_3d(*tensors: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(atleast_3d, (*tensors,), {})
        if heard is not _modes.PASS:
            return heard
    def grow(t: Any) -> Any:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if t.ndim == 2 else t
    return _at_least(tensors, "atleast_3d", grow)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of these shapes broadcast to, without making any tensor."""
    sizes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in sizes), default=0)
    result = [1] * ndim
    for index, size in enumerate(sizes):
        for back in range(1, len(size) + 1):
            length = size[-back]
            if length < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if length == 1 or length == result[-back]:
                continue
            if result[-back] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {length} at {-back}! "
                    f"Mismatching argument at index {index} had {tuple(size)}; but expected "
                    f"shape should be broadcastable to {result}")
            result[-back] = length
    return Size(result)


def broadcast_tensors(*tensors: Any) -> tuple:
    """Each tensor expanded to the common shape (ExpandBackward0 views)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(broadcast_tensors, (*tensors,), {})
        if heard is not _modes.PASS:
            return heard
    tensors = _tensor_sequence("broadcast_tensors", tensors)
    shape = functools.reduce(kernels.broadcast_shapes, (tuple(t.shape) for t in tensors), ())
    return tuple(ops.expand(t, shape) for t in tensors)


def _split_dims(name: str, input: Any, sections: Any, dim: int, least: int) -> tuple:
    _check_tensor(name, input)
    if not isinstance(sections, int | list | tuple | Tensor):  # torch's parser's refusal
        got = arguments.type_name(sections)
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (Tensor, {got}), but "
            f"expected one of:\n * (Tensor input, int sections)\n      didn't match because "
            f"some of the arguments have invalid types: (Tensor, !{got}!)\n * (Tensor input, "
            f"tuple of ints indices)\n      didn't match because some of the arguments have "
            f"invalid types: (Tensor, !{got}!)\n")
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension"
                           f", but got a tensor with {input.ndim} "
                           "dimensions!")
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {size} is not divisible by the "
                               f"split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input: Any, indices_or_sections: Any) -> tuple:
    """Split along dim 1 (dim 0 of a 1-D tensor)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hsplit, (input, indices_or_sections), {})
        if heard is not _modes.PASS:
            return heard
    dim = 0 if isinstance(input, Tensor) and input.ndim == 1 else 1
    return _split_dims("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input: Any, indices_or_sections: Any) -> tuple:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(vsplit, (input, indices_or_sections), {})
        if heard is not _modes.PASS:
            return heard
    return _split_dims("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input: Any, indices_or_sections: Any) -> tuple:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dsplit, (input, indices_or_sections), {})
        if heard is not _modes.PASS:
            return heard
    return _split_dims("dsplit", input, indices_or_sections, 2, 3)


def tensor_split(input: Any, indices_or_sections: Any, dim: int = 0) -> tuple:
    """Views of `input` cut into `sections` nearly equal parts, or at `indices`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tensor_split, (input, indices_or_sections, dim), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("tensor_split", input)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = kernels._wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    cuts = indices_or_sections
    if isinstance(cuts, Tensor):
        if cuts.dtype.is_floating_point or cuts.dtype is dtypes.bool_ or cuts.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               "integral dtype, but got " + str(cuts.dtype))
        cuts = int(cuts.item()) if cuts.ndim == 0 else [int(v) for v in cuts.tolist()]
    if isinstance(cuts, int):
        if cuts <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {cuts}")
        small, extra = divmod(size, cuts)
        bounds = list(itertools.accumulate([small + 1] * extra + [small] * (cuts - extra),
                                           initial=0))
    else:
        bounds = [0, *(int(c) for c in cuts), size]
    pieces = []
    for start, stop in zip(bounds, bounds[1:], strict=False):
        start, stop = min(max(start, 0), size), min(max(stop, 0), size)
        pieces.append(ops.slice(input, dim, start, max(start, stop)))
    return tuple(pieces)


def hstack(tensors: Any, *, out: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(hstack, (tensors,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    tensors = atleast_1d(_non_empty("hstack", _tensor_sequence("hstack", (tensors,))))
    dim = 0 if tensors and tensors[0].ndim == 1 else 1
    return _cat(tensors, dim, out)


def vstack(tensors: Any, *, out: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(vstack, (tensors,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    return _cat(atleast_2d(_non_empty("vstack", _tensor_sequence("vstack", (tensors,)))), 0, out)


def row_stack(tensors: Any, *, out: Any = None) -> Any:
    """vstack under another name."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(row_stack, (tensors,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    return _cat(atleast_2d(_non_empty("vstack", _tensor_sequence("row_stack", (tensors,)))), 0,
                out)


def dstack(tensors: Any, *, out: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(dstack, (tensors,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    return _cat(atleast_3d(_non_empty("dstack", _tensor_sequence("dstack", (tensors,)))), 2, out)


def column_stack(tensors: Any, *, out: Any = None) -> Any:
    """1-D and 0-D tensors as columns, the others as they are, side by side."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(column_stack, (tensors,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    tensors = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t
               for t in _non_empty("column_stack", _tensor_sequence("column_stack", (tensors,)))]
    return _cat(tensors, 1, out)


def _non_empty(name: str, tensors: list) -> list:
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _cat(tensors: Any, dim: int, out: Any) -> Any:
    return ops.cat(list(tensors), dim) if out is None else ops.cat(list(tensors), dim, out=out)


def tile(input: Any, dims: Any) -> Any:
    """repeat, with `dims` padded with leading ones to the tensor's dimensions."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tile, (input, dims), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("tile", input)
    dims = arguments.int_list((dims,)) if isinstance(dims, list | tuple) else (int(dims),)
    return ops.repeat(input, (1,) * (input.ndim - len(dims)) + tuple(dims))


def fliplr(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(fliplr, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("fliplr", input)
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return ops.flip(input, [1])


# -- products ----------------------------------------------------------------------------------

def kron(input: Any, other: Any) -> Any:
    """The Kronecker product: every element of `input` times the whole of `other`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(kron, (input, other), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("kron", input)
    _check_tensor("kron", other, "other", 2)
    ndim = max(input.ndim, other.ndim)
    sizes_a = (1,) * (ndim - input.ndim) + tuple(input.shape)
    sizes_b = (1,) * (ndim - other.ndim) + tuple(other.shape)
    # a's dims at even places, b's at odd ones, so that they interleave in the product
    a = input.reshape([n for size in sizes_a for n in (size, 1)])
    b = other.reshape([n for size in sizes_b for n in (1, size)])
    return ops._unsafe_view(ops.mul(a, b), [p * q for p, q in zip(sizes_a, sizes_b,
                                                                   strict=True)])


def _contracted_dims(a: Any, b: Any, dims: Any) -> tuple[list[int], list[int]]:
    """tensordot's `dims` as two lists of wrapped dims, checked as torch checks them."""
    if isinstance(dims, Tensor):
        dims = dims.item() if dims.ndim == 0 else dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a = [kernels._wrap_dim(d, a.ndim) for d in dims_a]
    dims_b = [kernels._wrap_dim(d, b.ndim) for d in dims_b]
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    for da, db in zip(dims_a, dims_b, strict=True):
        if a.shape[da] != b.shape[db] and 1 not in (a.shape[da], b.shape[db]):
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    return dims_a, dims_b


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Any:
    """Sum over the dims given of `a` and `b` (`dims` an int: a's last, b's first)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tensordot, (a, b, dims, out), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("tensordot", a, "a")
    _check_tensor("tensordot", b, "b", 2)
    dims_a, dims_b = _contracted_dims(a, b, dims)
    for da, db in zip(dims_a, dims_b, strict=True):  # a size 1 against n: the other summed
        if a.shape[da] != b.shape[db]:
            if a.shape[da] == 1:
                b = b.sum(db, keepdim=True)
            else:
                a = a.sum(da, keepdim=True)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    size = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(free_a + dims_a).reshape(math.prod(a.shape[d] for d in free_a), size)
    right = b.permute(dims_b + free_b).reshape(size, math.prod(b.shape[d] for d in free_b))
    result = ops.mm(left, right).reshape([a.shape[d] for d in free_a] +
                                         [b.shape[d] for d in free_b])
    if out is not None:
        out.copy_(result)
        return out
    return result


def inner(input: Any, other: Any, *, out: Any = None) -> Any:
    """Sums of products over the last dimension of each."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(inner, (input, other), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("inner", input)
    _check_tensor("inner", other, "other", 2)
    if input.ndim == 0 or other.ndim == 0:
        return ops.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


# -- statistics --------------------------------------------------------------------------------

def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The n-th forward difference along `dim`, with `prepend` / `append` joined first."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(diff, (input, n, dim, prepend, append), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("diff", input)
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0:  # a copy (torch's copy_ into a new tensor: CopyBackwards)
        return factories.empty_like(input).copy_(input)
    parts = [p for p in (prepend, input, append) if p is not None]
    result = ops.cat(parts, dim) if len(parts) > 1 else input
    dim = kernels._wrap_dim(dim, result.ndim)
    for _ in range(n):
        length = result.shape[dim]
        if length == 0:
            break
        later, earlier = ops.slice(result, dim, 1, length), ops.slice(result, dim, 0, length - 1)
        result = ops.ne(later, earlier) if result.dtype is dtypes.bool_ else \
            ops.sub(later, earlier)
    return result


def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            out: Any = None) -> Any:
    """The mean of the elements that are not NaN."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(nanmean, (input, dim, keepdim), {"dtype": dtype, "out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("nanmean", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {kernels._TYPE_NAMES.get(input.dtype.name, input.dtype)}")
    counted = input.isnan().logical_not()
    if dim is None:
        return input.nansum(dtype=dtype).div(counted.sum())
    return input.nansum(dim, keepdim, dtype=dtype).div(counted.sum(dim, keepdim))


def cov(input: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance of the variables (rows) over the observations (columns)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cov, (input,), {"correction": correction, "fweights": fweights,
            "aweights": aweights})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype == dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    observations = x.shape[1]
    if fweights is not None:
        _check_cov_weights("fweights", fweights, observations)
    if aweights is not None:
        _check_cov_weights("aweights", aweights, observations)
    weights = fweights
    if aweights is not None:
        weights = aweights if weights is None else weights * aweights
    # torch's order of operations throughout (the float32 rounding of weights' gradients)
    weight_sum = factories.tensor(observations, dtype=dtypes.int64) if weights is None \
        else weights.sum()
    if weights is not None and not bool(weight_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (x if weights is None else x * weights).sum(1) / weight_sum
    if weights is None or aweights is None or correction == 0:
        normaliser = weight_sum - correction
    else:
        normaliser = weight_sum - correction * (weights * aweights).sum() / weight_sum
    if bool(normaliser <= 0):
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                       "than the number of observations.", UserWarning)
        normaliser = normaliser * 0
    centred = x - mean.unsqueeze(1)
    weighted = centred if weights is None else centred * weights
    return ops.div(ops.mm(centred, weighted.t()), normaliser).squeeze()


def _check_cov_weights(name: str, weights: Any, observations: int) -> None:
    """torch's checks of cov's fweights (integers) and aweights (floating point)."""
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {weights.ndim} dimensions")
    wanted = "integral" if name == "fweights" else "floating point"
    if weights.dtype.is_floating_point != (name == "aweights") or weights.dtype == dtypes.bool_ \
            or weights.dtype.is_complex:
        raise RuntimeError(f"cov(): expected {name} to have {wanted} dtype but got {name} "
                           f"with {kernels._TYPE_NAMES.get(weights.dtype.name, weights.dtype)} "
                           "dtype")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {weights.numel()} != "
                           f"{observations}")
    if observations and not bool(weights.min() >= 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input: Any) -> Any:
    """Pearson's correlation coefficients of the variables (rows), clamped to [-1, 1]."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(corrcoef, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("corrcoef", input)
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    deviation = c.diagonal().sqrt()
    c = c / deviation.unsqueeze(1)
    c = c / deviation.unsqueeze(0)
    return c.clamp(-1, 1)


def float_power(input: Any, exponent: Any, *, out: Any = None) -> Any:
    """pow in double precision (a float64 result)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(float_power, (input, exponent), {"out": out})
        if heard is not _modes.PASS:
            return heard
    if not isinstance(input, Tensor):
        _check_tensor("float_power", exponent, "exponent", 2)
        return ops.pow(float(input), exponent.to(dtypes.float64))
    base = input.to(dtypes.float64)
    if isinstance(exponent, Tensor):
        result = ops.pow(base, exponent.to(dtypes.float64))
    else:
        result = ops.pow(base, float(exponent))
    if out is not None:
        out.copy_(result)
        return out
    return result


# -- matrices ----------------------------------------------------------------------------------

def diagflat(input: Any, offset: int = 0) -> Any:
    """A matrix with the elements of `input` (flattened) on its `offset` diagonal."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(diagflat, (input, offset), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("diagflat", input)
    return ops.diag_embed(input.contiguous().view(-1), offset)


def diag(input: Any, diagonal: int = 0, *, out: Any = None) -> Any:
    """Of a vector, the matrix with it on a diagonal; of a matrix, that diagonal."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(diag, (input, diagonal), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("diag", input)
    if input.ndim == 1:
        return ops.diag_embed(input, diagonal)
    if input.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")
    return ops.diagonal(input, diagonal).clone()


def det(input: Any) -> Any:
    """linalg.det under its older name."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(det, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("det", input)
    return linalg.det(input)


def slogdet(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(slogdet, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("slogdet", input)
    return linalg.slogdet(input)


def logdet(input: Any) -> Any:
    """log(det): NaN where the determinant is negative."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(logdet, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("logdet", input)
    sign, logabsdet = linalg.slogdet(input)
    return ops.where(sign == -1, float("nan"), logabsdet)


def matrix_exp(input: Any) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(matrix_exp, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("matrix_exp", input)
    return linalg.matrix_exp(input)


def pinverse(input: Any, rcond: float = 1e-15) -> Any:
    """linalg.pinv, with singular values below rcond times the largest treated as zero."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(pinverse, (input, rcond), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("pinverse", input)
    return linalg.pinv(input, rcond)


# -- indexing ----------------------------------------------------------------------------------

def take_along_dim(input: Any, indices: Any, dim: int | None = None, *, out: Any = None) -> Any:
    """gather, with `indices` broadcast against `input` (flattened when no dim is given)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(take_along_dim, (input, indices, dim), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("take_along_dim", input)
    _check_tensor("take_along_dim", indices, "indices", 2)
    if dim is not None and input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    if indices.dtype not in (dtypes.int64,):
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{kernels._TYPE_NAMES.get(indices.dtype.name, indices.dtype)}")
    if dim is None:
        return ops.gather(input.view(-1), 0, indices.view(-1))
    dim = kernels._wrap_dim(dim, input.ndim)
    input_shape, index_shape = list(input.shape), list(indices.shape)
    input_shape[dim] = index_shape[dim] = 1
    common = list(kernels.broadcast_shapes(tuple(input_shape), tuple(index_shape)))
    common_input, common_index = list(common), list(common)
    common_input[dim], common_index[dim] = input.shape[dim], indices.shape[dim]
    # along a dim, torch counts a negative index from the end (gather would refuse it)
    indices = ops.where(indices < 0, indices + input.shape[dim], indices)
    return ops.gather(input.expand(common_input), dim, indices.expand(common_index))


def cartesian_prod(*tensors: Any) -> Any:
    """Every combination of one element of each 1-D tensor, one per row."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(cartesian_prod, (*tensors,), {})
        if heard is not _modes.PASS:
            return heard
    tensors = _tensor_sequence("cartesian_prod", tensors)
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return ops.stack([g.flatten() for g in grids], 1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Any:
    """The length-r combinations of the elements of a 1-D tensor, one per row."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(combinations, (input, r, with_replacement), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("combinations", input)
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return factories.empty(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    columns = [ops.index_select(input, 0, factories.from_numpy(rows[:, i].copy()))
               for i in range(r)]
    return ops.stack(columns, 1)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids from 1-D tensors: the k-th output varies along dim k ('ij') or, for
    the first two, the other way round ('xy')."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(meshgrid, (*tensors,), {"indexing": indexing})
        if heard is not _modes.PASS:
            return heard
    tensors = _tensor_sequence("meshgrid", tensors)
    if indexing is None:
        warn_at_caller("torch.meshgrid: in an upcoming release, it will be required to pass the "
                       "indexing argument.", UserWarning)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = [t.shape[0] for t in flat]
    grids = []
    for k, t in enumerate(flat):
        view = [1] * len(flat)
        view[k] = -1
        grids.append(t.view(view).expand(shape))
    if swap:  # the grids of the swapped pair, in the order given
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _indices(name: str, row: int, col: int, offset: int, dtype: Any, lower: bool) -> Any:
    dtype = dtypes.int64 if dtype is None else dtype
    if dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(f'"{name}" not implemented for '
                           f"'{kernels._TYPE_NAMES.get(dtype.name, dtype)}'")
    if row < 0 or col < 0:
        raise RuntimeError(f"row must be non-negative, got{row}" if row < 0 else
                           f"col must be non-negative, got{col}")
    found = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return factories.from_numpy(np.array(found, dtype=dtype.numpy).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Any:
    """The (row, column) indices of a row x col matrix's lower triangle, one column each."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(tril_indices, (row, col, offset), {"dtype": dtype, "device": device,
            "layout": layout, "pin_memory": pin_memory})
        if heard is not _modes.PASS:
            return heard
    return _indices("tril_indices", row, col, offset, dtype, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(triu_indices, (row, col, offset), {"dtype": dtype, "device": device,
            "layout": layout, "pin_memory": pin_memory})
        if heard is not _modes.PASS:
            return heard
    return _indices("triu_indices", row, col, offset, dtype, False)


# -- more composites: repeats, integrals, powers ----------------------------------------------

def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Any:
    """Each element repeated `repeats` times along `dim` (the flattened tensor when no dim);
    of a tensor of counts alone, the indices 0, 1, ... each repeated by its count."""
    _check_tensor("repeat_interleave", input)
    if repeats is None:
        return _repeated_indices(input)
    if dim is None:
        input, dim = input.flatten(), 0
    dim = kernels._wrap_dim(dim, input.ndim) if input.ndim else 0
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = repeats.reshape(1).expand(input.shape[dim]) if repeats.numel() == 1 else repeats
        if counts.shape[0] != input.shape[dim]:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.shape[0]} and "
                               f"input.size({dim}) = {input.shape[dim]}")
        return ops.index_select(input, dim, _repeated_indices(counts))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(input.shape)
    expanded = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    shape[dim] *= repeats
    return input.unsqueeze(dim + 1).expand(expanded).clone().view(shape)


def _repeated_indices(counts: Any) -> Any:
    if counts.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.dtype.is_floating_point or counts.dtype is dtypes.bool_:
        raise NotImplementedError('"repeat_interleave_cpu" not implemented for '
                                  f"'{kernels._TYPE_NAMES.get(counts.dtype.name)}'")
    values = counts._data
    if values.size and values.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return factories.from_numpy(np.repeat(np.arange(values.size, dtype=values.dtype), values))


def cross(input: Any, other: Any, dim: int | None = None, *, out: Any = None) -> Any:
    """The cross product of 3-vectors along `dim` (without one: the first dim of size 3,
    deprecated)."""
    _check_tensor("cross", input)
    _check_tensor("cross", other, "other", 2)
    if dim is None:
        warn_at_caller("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                       "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                       "default value of dim will change to agree with that of linalg.cross in a "
                       "future release.", UserWarning)
        shape = kernels.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((d for d, size in enumerate(shape) if size == 3), -1)
    return linalg.cross(input, other, dim=dim)


def _integration_steps(y: Any, x: Any, dim: int) -> Any:
    """The widths of the trapezoids: diff of x along dim (a 1-D x laid along dim)."""
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.view(shape)
    length = x.shape[dim]
    return ops.slice(x, dim, 1, length) - ops.slice(x, dim, 0, length - 1)


def trapezoid(y: Any, x: Any = None, *, dx: float | None = None, dim: int = -1) -> Any:
    """The trapezoidal rule along `dim`, at spacing dx (1 by default) or at the points x."""
    _check_tensor("trapezoid", y, "y")
    dim = kernels._wrap_dim(dim, y.ndim)
    length = y.shape[dim]
    if length == 0:
        return y.sum(dim) * 0
    if isinstance(x, Tensor):
        steps = _integration_steps(y, x, dim)
        pairs = ops.slice(y, dim, 1, length) + ops.slice(y, dim, 0, length - 1)
        return ops.div_Scalar((pairs * steps).sum(dim), 2.0)
    spacing = 1 if dx is None else dx
    ends = ops.mul_Scalar(y.select(dim, 0) + y.select(dim, -1), 0.5)
    return ops.mul_Scalar(y.sum(dim) - ends, spacing)


def trapz(y: Any, x: Any = None, *, dx: float | None = None, dim: int = -1) -> Any:
    """trapezoid under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: float | None = None,
                         dim: int = -1) -> Any:
    """The running trapezoidal integral along `dim`."""
    _check_tensor("cumulative_trapezoid", y, "y")
    dim = kernels._wrap_dim(dim, y.ndim)
    length = y.shape[dim]
    pairs = ops.slice(y, dim, 1, length) + ops.slice(y, dim, 0, max(length - 1, 0))
    if isinstance(x, Tensor):
        return ops.div_Scalar((pairs * _integration_steps(y, x, dim)).cumsum(dim), 2.0)
    return ops.mul_Scalar(pairs, (1 if dx is None else dx) / 2.0).cumsum(dim)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of a 1-D tensor: its powers, highest first unless increasing."""
    _check_tensor("vander", x, "x")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    columns = x.shape[0] if N is None else N
    if columns < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point else dtypes.int64
    result = factories.ones(x.shape[0], columns, dtype=dtype)
    if columns > 1:
        result[:, 1:] = x.unsqueeze(1)
        result[:, 1:] = result[:, 1:].cumprod(1)
    return result if increasing else result.flip(1)


def matrix_power(input: Any, n: int) -> Any:
    """The n-th power of square matrices by repeated squaring (the inverse's, for n < 0)."""
    _check_tensor("matrix_power", input)
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {input.shape[-2]} by {input.shape[-1]} matrices")
    if n == 0:
        eye = factories.eye(input.shape[-1], dtype=input.dtype).expand(input.shape)
        return input.clone().copy_(eye)
    if n == 1:
        return input.clone()
    a = linalg.inv(input) if n < 0 else input
    n = abs(n)
    if n == 1:
        return a
    if n in (2, 3):
        square = _matmul(a, a)
        return square if n == 2 else _matmul(square, a)
    power = result = None
    while n:
        n, bit = divmod(n, 2)
        power = a if power is None else _matmul(power, power)
        if bit:
            result = power if result is None else _matmul(result, power)
    return result


def bernoulli(input: Any, p: float | None = None, *, generator: Any = None) -> Any:
    """0/1 samples in input's dtype, 1 with probability input[i]: the spec's op (its node
    BernoulliBackward0, as torch's); with a number p, each with probability p."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(bernoulli, (input, p), {"generator": generator})
        if heard is not _modes.PASS:
            return heard
    if p is None:
        return ops.bernoulli(input, generator=generator)
    return random_ops.bernoulli(input, p, generator=generator)


def block_diag(*tensors: Any) -> Any:
    """The tensors as the blocks of a block-diagonal matrix: torch's Python function, which
    takes them one by one and calls the spec's op on the list."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(block_diag, tensors, {})
        if heard is not _modes.PASS:
            return heard
    return ops.block_diag(list(tensors))


def aminmax(input: Any, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """(amin, amax) in one call: the spec's op (its node AminmaxBackward0, as torch's)."""
    _check_tensor("aminmax", input)
    return ops.aminmax(input, dim=dim, keepdim=keepdim)


# -- quantiles --------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(name: str, input: Any, q: Any, interpolation: str) -> list[float]:
    _check_tensor(name, input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        values = [float(v) for v in q.reshape(-1).tolist()]
        if any(not 0 <= v <= 1 for v in values):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        values = [float(q)]
        if not 0 <= values[0] <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    return values


def _one_quantile(ordered: Any, count: Any, q: Any, dim: int, interpolation: str) -> Any:
    """The q-th quantile of each row of `ordered` (sorted along dim, keepdim shapes) whose
    first `count` entries are the numbers to use; a row with none gives NaN (its last,
    NaN, entry)."""
    last = ordered.shape[dim] - 1
    ranks = ops.where(count > 0, (count - 1) * q, float(last))
    if interpolation == "nearest":
        return ops.gather(ordered, dim, ranks.round().long())
    below_rank = ranks.floor()
    below = ops.gather(ordered, dim, below_rank.long())
    above = ops.gather(ordered, dim, ranks.ceil().long())
    if interpolation == "lower":
        return below
    if interpolation == "higher":
        return above
    # midpoint's weight is a constant, with no gradient for q (torch's full_like)
    weight = ranks - below_rank if interpolation == "linear" else ranks.detach() * 0 + 0.5
    return ops.lerp(below, above, weight.to(ordered.dtype))


def _quantile(name: str, input: Any, q: Any, dim: Any, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Any:
    qs = _quantile_checks(name, input, q, interpolation)
    flat = dim is None or input.ndim == 0  # a 0-dim input's one dim: as a flattened one
    if dim is not None:
        kernels._wrap_dim(dim, input.ndim)  # torch's error for a dim out of range
    source = input.reshape(-1) if flat else input
    axis = 0 if flat else kernels._wrap_dim(dim, input.ndim)
    ordered = ops.sort(source, axis).values  # NaNs sort last
    numbers = ops.logical_not(source.isnan()).sum(axis, True)
    if ignore_nan:
        count = numbers
    else:  # a row with a NaN has NaN quantiles: no count, so its last entry
        count = ops.where(numbers == source.shape[axis], numbers, 0)
    if isinstance(q, Tensor):  # each q as a 0-dim tensor: a q that requires grad gets one
        qs = list(q.reshape(-1).unbind(0))
    results = []
    for value in qs:
        result = _one_quantile(ordered, count, value, axis, interpolation)
        if flat:
            result = result.reshape([1] * input.ndim) if keepdim else result.reshape(())
        elif not keepdim:
            result = result.squeeze(axis)
        results.append(result)
    return ops.stack(results, 0) if isinstance(q, Tensor) and q.ndim == 1 else results[0]


def quantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Any:
    """The q-th quantiles along dim (of all elements without one), NaN where a NaN is."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Any, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> Any:
    """quantile of the numbers that are not NaN."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# -- the older linalg names (deprecated in torch, each warning once a process) ----------------

_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """torch's TORCH_WARN_ONCE: the first call in the process warns, later ones do not."""
    if key not in _warned:
        _warned.add(key)
        warn_at_caller(message, UserWarning)


_svd_return = collections.namedtuple("svd", ["U", "S", "V"])
_qr_return = collections.namedtuple("qr", ["Q", "R"])


def svd(input: Any, some: bool = True, compute_uv: bool = True, *, out: Any = None) -> Any:
    """(U, S, V) with input = U diag(S) V^T (linalg.svd gives V^T); without compute_uv, U
    and V are full-size zeros."""
    _check_tensor("svd", input)
    if not compute_uv:
        values = linalg.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        return _svd_return(factories.zeros(*batch, m, m, dtype=input.dtype), values,
                           factories.zeros(*batch, n, n, dtype=input.dtype))
    u, s, vh = linalg.svd(input, full_matrices=not some)
    return _svd_return(u, s, vh.mT)


def qr(input: Any, some: bool = True, *, out: Any = None) -> Any:
    _check_tensor("qr", input)
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
               "a future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
               "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    q, r = linalg.qr(input, "reduced" if some else "complete")
    return _qr_return(q, r)


def lu(A: Any, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple:
    """(LU, pivots) of linalg.lu_factor_ex, and its info with get_infos."""
    _check_tensor("lu", A, "A")
    _warn_once("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
               "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
               "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots "
               "= torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
               "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, "
               "pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
    factors, pivots, info = linalg.lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return (factors, pivots, info) if get_infos else (factors, pivots)


def lu_solve(input: Any, LU_data: Any, LU_pivots: Any, *, out: Any = None) -> Any:  # noqa: N803
    """linalg.lu_solve with the right-hand side first."""
    _check_tensor("lu_solve", input)
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand "
               "will be removed in a future PyTorch release.\nNote that torch.linalg.lu_solve "
               "has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
               "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return linalg.lu_solve(LU_data, LU_pivots, input)


def cholesky(input: Any, upper: bool = False, *, out: Any = None) -> Any:
    """The spec's cholesky (its node CholeskyBackward0), after torch's deprecation warning."""
    _check_tensor("cholesky", input)
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and "
               "will be removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould "
               "be replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
               "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
               "transform will produce equivalent results for all valid (symmetric positive "
               "definite) inputs.")
    return ops.cholesky(input, upper)


# -- types -------------------------------------------------------------------------------------

def _category(d: Any) -> int:
    return 0 if d is dtypes.bool_ else 3 if d.is_complex else 2 if d.is_floating_point else 1


def can_cast(from_: Any, to: Any) -> bool:
    """Whether torch's type promotion allows casting `from_` to `to`: never to a lower
    category (float to int, int to bool)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(can_cast, (from_, to), {})
        if heard is not _modes.PASS:
            return heard
    for name, value in (("from", from_), ("to", to)):
        if not isinstance(value, dtypes.dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position "
                            f"{1 if name == 'from' else 2}) must be torch.dtype, not "
                            f"{arguments.type_name(value)}")
    return _category(from_) <= _category(to)


def promote_types(type1: Any, type2: Any) -> Any:
    """The dtype that both promote to."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(promote_types, (type1, type2), {})
        if heard is not _modes.PASS:
            return heard
    for position, value in enumerate((type1, type2), 1):
        if not isinstance(value, dtypes.dtype):
            raise TypeError(f"promote_types(): argument 'type{position}' (position "
                            f"{position}) must be torch.dtype, not {arguments.type_name(value)}")
    if {_category(type1), _category(type2)} == {2, 3}:  # complex of the wider parts
        return dtypes.from_numpy(kernels.promote_types([type1.numpy, type2.numpy]))
    if _category(type1) != _category(type2):  # bool < integers < floats < complex
        return type1 if _category(type1) > _category(type2) else type2
    return dtypes.from_numpy(np.promote_types(type1.numpy, type2.numpy))


def result_type(tensor: Any, other: Any) -> Any:
    """The dtype an op of `tensor` and `other` (tensors or Python numbers) gives."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(result_type, (tensor, other), {})
        if heard is not _modes.PASS:
            return heard
    operands = [v._data if isinstance(v, Tensor) else v for v in (tensor, other)]
    if not any(isinstance(v, np.ndarray) for v in operands):
        operands[0] = np.asarray(operands[0], dtype=np.int64 if isinstance(operands[0], int)
                                 and not isinstance(operands[0], bool) else None
                                 if isinstance(operands[0], bool) else
                                 dtypes.get_default_dtype().numpy)
    return dtypes.from_numpy(kernels.result_type(*operands))


# -- predicates without a gradient -------------------------------------------------------------

def _bool_tensor(array: Any) -> Any:
    return Tensor._make(np.asarray(array, dtype=np.bool_), None)


def isneginf(input: Any, *, out: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isneginf, (input,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isneginf", input)
    return _bool_tensor(np.isneginf(input._data) if input.dtype.is_floating_point
                        else np.zeros(input.shape, np.bool_))


def isposinf(input: Any, *, out: Any = None) -> Any:
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isposinf, (input,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isposinf", input)
    return _bool_tensor(np.isposinf(input._data) if input.dtype.is_floating_point
                        else np.zeros(input.shape, np.bool_))


def isreal(input: Any) -> Any:
    """Every element of a real tensor is real."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(isreal, (input,), {})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("isreal", input)
    return _bool_tensor(np.ones(input.shape, np.bool_))


def signbit(input: Any, *, out: Any = None) -> Any:
    """Where the sign bit is set (-0.0 included)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(signbit, (input,), {"out": out})
        if heard is not _modes.PASS:
            return heard
    _check_tensor("signbit", input)
    return _bool_tensor(np.signbit(input._data))


class FunctionMethods:
    """The Tensor methods of these functions, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def kron(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.kron, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return kron(self, other)

    def inner(self, other: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.inner, (self, other), {})
            if heard is not _modes.PASS:
                return heard
        return inner(self, other)

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.diff, (self, n, dim, prepend, append), {})
            if heard is not _modes.PASS:
                return heard
        return diff(self, n, dim, prepend, append)

    def diagflat(self, offset: int = 0) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.diagflat, (self, offset), {})
            if heard is not _modes.PASS:
                return heard
        return diagflat(self, offset)

    def diag(self, diagonal: int = 0) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.diag, (self, diagonal), {})
            if heard is not _modes.PASS:
                return heard
        return diag(self, diagonal)

    def fliplr(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.fliplr, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return fliplr(self)

    def hsplit(self, indices_or_sections: Any) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.hsplit, (self, indices_or_sections), {})
            if heard is not _modes.PASS:
                return heard
        return hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections: Any) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.vsplit, (self, indices_or_sections), {})
            if heard is not _modes.PASS:
                return heard
        return vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections: Any) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.dsplit, (self, indices_or_sections), {})
            if heard is not _modes.PASS:
                return heard
        return dsplit(self, indices_or_sections)

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.tensor_split, (self, indices_or_sections, dim),
                {})
            if heard is not _modes.PASS:
                return heard
        return tensor_split(self, indices_or_sections, dim)

    def tile(self, *dims: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.tile, (self, *dims), {})
            if heard is not _modes.PASS:
                return heard
        return tile(self, dims[0] if len(dims) == 1 else dims)

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.take_along_dim, (self, indices, dim), {})
            if heard is not _modes.PASS:
                return heard
        return take_along_dim(self, indices, dim)

    def det(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.det, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return det(self)

    def slogdet(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.slogdet, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return slogdet(self)

    def logdet(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.logdet, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return logdet(self)

    def matrix_exp(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.matrix_exp, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return matrix_exp(self)

    def pinverse(self, rcond: float = 1e-15) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.pinverse, (self, rcond), {})
            if heard is not _modes.PASS:
                return heard
        return pinverse(self, rcond)

    def cov(self, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.cov, (self,), {"correction": correction,
                "fweights": fweights, "aweights": aweights})
            if heard is not _modes.PASS:
                return heard
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.corrcoef, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return corrcoef(self)

    def float_power(self, exponent: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.float_power, (self, exponent), {})
            if heard is not _modes.PASS:
                return heard
        return float_power(self, exponent)

    def float_power_(self, exponent: Any) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.float_power_, (self, exponent), {})
            if heard is not _modes.PASS:
                return heard
        if self.dtype is not dtypes.float64:
            raise RuntimeError("the base given to float_power_ has dtype "
                               f"{kernels._TYPE_NAMES.get(self.dtype.name, self.dtype)} but the "
                               "operation's result requires dtype Double")
        return self.pow_(exponent.double() if isinstance(exponent, Tensor) else
                         float(exponent))

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.nanmean, (self, dim, keepdim), {"dtype": dtype})
            if heard is not _modes.PASS:
                return heard
        return nanmean(self, dim, keepdim, dtype=dtype)

    def isneginf(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.isneginf, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isneginf(self)

    def repeat_interleave(self, repeats: Any = None, dim: int | None = None, *,
                          output_size: int | None = None) -> Any:
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def cross(self, other: Any, dim: int | None = None) -> Any:
        return cross(self, other, dim)

    def matrix_power(self, n: int) -> Any:
        return matrix_power(self, n)

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Any:
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Any:
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        return svd(self, some, compute_uv)

    def qr(self, some: bool = True) -> Any:
        return qr(self, some)

    def lu(self, pivot: bool = True, get_infos: bool = False) -> tuple:
        return lu(self, pivot, get_infos)

    def lu_solve(self, LU_data: Any, LU_pivots: Any) -> Any:  # noqa: N803 - torch's names
        return lu_solve(self, LU_data, LU_pivots)

    def cholesky(self, upper: bool = False) -> Any:
        return cholesky(self, upper)

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> Any:
        return aminmax(self, dim=dim, keepdim=keepdim)

    def bernoulli(self, p: float | None = None, *, generator: Any = None) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.bernoulli, (self, p), {"generator": generator})
            if heard is not _modes.PASS:
                return heard
        return bernoulli(self, p, generator=generator)

    def polygamma(self, n: int) -> Any:
        """x.polygamma(n): torch.polygamma(n, x), n first as in torch's function."""
        return ops.polygamma(n, self)

    def isposinf(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.isposinf, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isposinf(self)

    def isreal(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.isreal, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return isreal(self)

    def signbit(self) -> Any:
        if _modes.active:  # a mode may hear the call (runtime/modes.py)
            heard = _modes.dispatch(FunctionMethods.signbit, (self,), {})
            if heard is not _modes.PASS:
                return heard
        return signbit(self)
