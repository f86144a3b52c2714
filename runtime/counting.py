"""torch functions whose results have no gradient: counting and searching (bincount, histc,
bucketize, searchsorted, isin, unravel_index) and integer or logical element-wise ops (gcd,
lcm, logical_xor, heaviside). They compute on the arrays, as runtime/predicates.py does;
`CountingMethods` holds their Tensor methods, set on Tensor by runtime/methods.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime import arguments, dtypes, kernels, recording
from runtime._tensor import Tensor

__all__ = ["bincount", "histc", "bucketize", "searchsorted", "isin", "unravel_index", "gcd",
           "gcd_", "lcm", "lcm_", "logical_xor", "heaviside", "unique", "unique_consecutive",
           "bitwise_left_shift", "bitwise_right_shift", "argwhere"]


def _check_tensor(name: str, value: Any, argument: str = "input", position: int = 1) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {arguments.type_name(value)}")


def _type_name(array: np.ndarray) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "bool": "Bool", "uint8": "Byte", "float16": "Half", "int16": "Short",
            "int8": "Char"}.get(array.dtype.name,
                                                                     array.dtype.name)


def _new(array: Any, dtype: Any = None) -> Tensor:
    return Tensor._make(np.asarray(array, dtype=dtype), None)


def _integral(array: np.ndarray) -> bool:
    return array.dtype.kind in "iub"


# -- counting and searching --------------------------------------------------------------------

def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative integers (or
    the sum of the weights of its occurrences)."""
    _check_tensor("bincount", input)
    data = input._data
    if not _integral(data) or data.dtype == np.bool_:
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_type_name(data)}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != data.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return _new(np.bincount(data, minlength=minlength), np.int64)
    kind = weights._data.dtype if weights.dtype.is_floating_point else np.float64
    counts = np.bincount(data, weights=weights._data.astype(np.float64), minlength=minlength)
    return _new(counts.astype(kind), kind)


def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0, *,
          out: Any = None) -> Tensor:
    """A histogram of `bins` equal bins over [min, max] (the data's range when both are 0);
    values outside are left out, and max falls in the last bin."""
    _check_tensor("histc", input)
    return _new(kernels.histc(input._data, bins, min, max))


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False,
              right: bool = False, out: Any = None) -> Tensor:
    """For each value, the index of the bucket of the sorted 1-D `boundaries` it falls in."""
    _check_tensor("bucketize", boundaries, "boundaries", 2)
    if boundaries.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    values = input._data if isinstance(input, Tensor) else np.asarray(input)
    found = np.searchsorted(boundaries._data, values, side="right" if right else "left")
    return _new(found, np.int32 if out_int32 else np.int64)


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Any = None,
                 out: Any = None) -> Tensor:
    """Where each value would be inserted in `sorted_sequence`'s last dimension to keep it
    sorted (row by row when the sequence has more dimensions)."""
    _check_tensor("searchsorted", sorted_sequence, "sorted_sequence", 1)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    sequence = sorted_sequence._data
    if sorter is not None:
        sequence = np.take_along_axis(sequence, sorter._data, -1)
    scalar = not isinstance(input, Tensor)
    values = np.asarray(input) if scalar else input._data
    found = _search(sequence, values, "right" if right else "left")
    return _new(found, np.int32 if out_int32 else np.int64)


def _search(sequence: np.ndarray, values: np.ndarray, side: str) -> np.ndarray:
    if sequence.ndim == 1:
        return np.searchsorted(sequence, values, side=side)
    if values.ndim == 0 or sequence.shape[:-1] != values.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           "first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(sequence.shape)} and "
                           f"input value tensor {list(values.shape)}")
    count = int(np.prod(sequence.shape[:-1]))  # (explicit: a -1 is ambiguous when empty)
    rows = [np.searchsorted(s, v, side=side) for s, v in
            zip(sequence.reshape(count, sequence.shape[-1]),
                values.reshape(count, values.shape[-1]), strict=True)]
    return np.array(rows, dtype=np.int64).reshape(values.shape)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Where the elements are among test_elements (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected one of:\n * (Tensor elements, Tensor test_elements, *, "
                        "bool assume_unique = False, bool invert = False)")
    values = elements._data if isinstance(elements, Tensor) else np.asarray(elements)
    tests = test_elements._data if isinstance(test_elements, Tensor) else \
        np.asarray(test_elements)
    return _new(np.isin(values, tests, invert=invert), np.bool_)


def unravel_index(indices: Any, shape: Any) -> tuple:
    """The coordinates in a tensor of `shape` of flat indices (one tensor per dimension)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{type(indices).__name__}" if isinstance(indices, float) else
                        f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if not _integral(indices._data) or indices.dtype is dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = [shape] if isinstance(shape, int) else list(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    rest = indices._data.astype(np.int64)
    coordinates = []
    for size in reversed(shape):
        coordinates.append(np.mod(rest, size) if size else rest * 0)
        rest = np.floor_divide(rest, size) if size else rest * 0
    return tuple(_new(c, np.int64) for c in reversed(coordinates))


def _unique_result(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
                   return_inverse: bool, return_counts: bool) -> Any:
    found = [_new(values)]
    if return_inverse:
        found.append(_new(inverse, np.int64))
    if return_counts:
        found.append(_new(counts, np.int64))
    return found[0] if len(found) == 1 else tuple(found)


def unique(input: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (or slices along dim), sorted; with where each element went
    and how often each occurs. NaNs are all distinct, as in torch. (torch records a node
    whose backward is not implemented; gradgen's result has no history.)"""
    _check_tensor("unique", input)
    if dim is None:
        values, inverse, counts = kernels._unique2(input._data, sorted, True, True)
    else:
        values, inverse, counts = kernels.unique_dim(input._data, dim, sorted, True, True)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Each run of equal consecutive elements (or slices along dim) kept once."""
    _check_tensor("unique_consecutive", input)
    values, inverse, counts = kernels.unique_consecutive(input._data, True, True, dim)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


# -- element-wise, without a gradient ----------------------------------------------------------

def _integer_pair(name: str, input: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
    _check_tensor(name, input)
    b = other._data if isinstance(other, Tensor) else np.asarray(other)
    dtype = kernels.result_type(input._data, other._data if isinstance(other, Tensor) else other)
    if dtype.kind not in "iu":
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{_type_name(np.empty(0, dtype))}'")
    return input._data.astype(dtype), np.asarray(b).astype(dtype)


def gcd(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """The greatest common divisor, element by element (of integers)."""
    _check_tensor("gcd", other, "other", 2)
    a, b = _integer_pair("gcd", input, other)
    return _new(np.gcd(a, b))


def lcm(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """The least common multiple, element by element (of integers; never negative)."""
    _check_tensor("lcm", other, "other", 2)
    a, b = _integer_pair("lcm", input, other)
    return _new(np.abs(np.lcm(a, b)))


def _other_of_method(name: str, other: Any) -> None:
    """A method's `other` must be a Tensor (torch counts its position without self)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                        f"{arguments.type_name(other)}")


def _in_place(tensor: Any, result: Tensor) -> Any:
    recording.check_inplace(tensor, differentiable=False)
    recording.write_inplace(tensor, result._data)
    return tensor


def gcd_(input: Any, other: Any) -> Any:
    return _in_place(input, gcd(input, other))


def lcm_(input: Any, other: Any) -> Any:
    return _in_place(input, lcm(input, other))


def logical_xor(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """Where exactly one of the two is nonzero."""
    _check_tensor("logical_xor", input)
    _check_tensor("logical_xor", other, "other", 2)
    kernels.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    return _new(np.logical_xor(input._data, other._data), np.bool_)


def heaviside(input: Any, values: Any, *, out: Any = None) -> Tensor:
    """The step function: 0 below zero, 1 above, `values` at zero."""
    _check_tensor("heaviside", input)
    _check_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    kernels.broadcast_shapes(tuple(input.shape), tuple(values.shape))
    # torch's kernel: `values` where input == 0, else input > 0 (so NaN gives 0, where
    # numpy's heaviside gives NaN)
    a, v = input._data, values._data
    return _new(np.where(a == 0, v, a > 0).astype(a.dtype))


def _shift_operands(input: Any, other: Any) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    a = input._data if isinstance(input, Tensor) else np.asarray(input)
    b = other._data if isinstance(other, Tensor) else other
    if not isinstance(input, Tensor):  # a number first: it is the wrapped one
        dtype = kernels.result_type(b, input)
    else:
        dtype = kernels.result_type(a, b)
    return a, np.asarray(b), dtype


def _shift(kernel: str, input: Any, other: Any, left: bool) -> Tensor:
    """Shifts of integers by other's bits: a left shift by a count outside [0, bits) gives 0,
    a right shift the sign (0 or -1), as torch defines them."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        name = "bitwise_left_shift" if left else "bitwise_right_shift"
        got = f"{arguments.type_name(input)}, {arguments.type_name(other)}"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other)\n      didn't match because some of the arguments "
            f"have invalid types: (!{arguments.type_name(input)}!, "
            f"!{arguments.type_name(other)}!)\n * (Tensor input, Number other, *, Tensor out = "
            "None)\n")
    a, b, dtype = _shift_operands(input, other)
    if dtype.kind not in "iu":
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_type_name(np.empty(0, dtype))}'")
    a, b = a.astype(dtype), b.astype(dtype)
    kernels.broadcast_shapes(a.shape, b.shape)
    inside = (b >= 0) & (b < dtype.itemsize * 8)
    count = np.where(inside, b, 0)
    if left:
        result = np.where(inside, np.left_shift(a, count), 0)
    else:
        result = np.where(inside, np.right_shift(a, count), np.where(a < 0, -1, 0))
    return _new(result.astype(dtype))


def bitwise_left_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    return _shift("lshift_cpu", input, other, True)


def bitwise_right_shift(input: Any, other: Any, *, out: Any = None) -> Tensor:
    return _shift("rshift_cpu", input, other, False)


def _shift_in_place(self: Any, other: Any, left: bool) -> Any:
    _, b, dtype = _shift_operands(self, other)
    kernels.check_inplace_result(self._data, dtype,
                                 kernels.broadcast_shapes(self._data.shape, b.shape))
    return _in_place(self, _shift("lshift_cpu" if left else "rshift_cpu", self, other, left))


def argwhere(input: Any) -> Tensor:
    """The indices of the nonzero elements, one row each."""
    _check_tensor("argwhere", input)
    return _new(np.argwhere(input._data), np.int64)


class CountingMethods:
    """The Tensor methods of these functions, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def bincount(self, weights: Any = None, minlength: int = 0) -> Tensor:
        return bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        return histc(self, bins, min, max)

    def gcd(self, other: Any) -> Tensor:
        _other_of_method("gcd", other)
        return gcd(self, other)

    def gcd_(self, other: Any) -> Any:
        _other_of_method("gcd_", other)
        return gcd_(self, other)

    def lcm(self, other: Any) -> Tensor:
        _other_of_method("lcm", other)
        return lcm(self, other)

    def lcm_(self, other: Any) -> Any:
        _other_of_method("lcm_", other)
        return lcm_(self, other)

    def logical_xor(self, other: Any) -> Tensor:
        return logical_xor(self, other)

    def logical_xor_(self, other: Any) -> Any:
        return _in_place(self, logical_xor(self, other))

    def heaviside(self, values: Any) -> Tensor:
        return heaviside(self, values)

    def bitwise_left_shift(self, other: Any) -> Tensor:
        return bitwise_left_shift(self, other)

    def bitwise_left_shift_(self, other: Any) -> Any:
        return _shift_in_place(self, other, True)

    def bitwise_right_shift(self, other: Any) -> Tensor:
        return bitwise_right_shift(self, other)

    def bitwise_right_shift_(self, other: Any) -> Any:
        return _shift_in_place(self, other, False)

    def argwhere(self) -> Tensor:
        return argwhere(self)

    def unique(self, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
               return_counts: bool = False, dim: int | None = None) -> Any:
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def heaviside_(self, values: Any) -> Any:
        return _in_place(self, heaviside(self, values))
