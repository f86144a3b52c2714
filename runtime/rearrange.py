"""torch.func.rearrange: einops' pattern language for reshapes and permutations.

A pattern "b (h w) c -> b c h w" names the elementary axes of each side; a parenthesised
group is one tensor dimension made of several axes, `1` is a dimension of size one and `...`
stands for the dimensions not named. rearrange splits the input into its elementary axes
(one reshape), orders them as the right side lists them (one permute) and merges the groups
of the right side (one more reshape).

torch binds the axes to functorch's first-class dimensions and reports size mismatches as
their `DimensionBindError`; the same class and messages are given here. Like torch, an
anonymous `1` on the left binds whatever size the input has there and sums it out.
"""

from __future__ import annotations

import functools
import keyword
import math
from dataclasses import dataclass, field

from runtime._tensor import Tensor
from runtime._warn import warn_at_caller

ELLIPSIS = "\u2026"


class DimensionBindError(Exception):
    """A pattern's axis sizes do not fit the tensor's dimensions."""


class _Anonymous:
    """An unnamed axis of size `value` (only 1 is accepted by rearrange); every one is
    distinct from every other."""

    def __init__(self, text: str) -> None:
        self.value = int(text)
        if self.value < 1:
            raise ValueError(f"Anonymous axis should have positive length, not {self.value}")

    def __repr__(self) -> str:
        return f"{self.value}-axis"


@dataclass
class _Side:
    """One side of a pattern: its groups (each a list of axis names, or ELLIPSIS alone), the
    names it uses, and what the checks need to know."""

    groups: list = field(default_factory=list)
    identifiers: set = field(default_factory=set)
    has_ellipsis: bool = False
    ellipsis_in_group: bool = False
    has_large_anonymous: bool = False


def _axis_name_problem(name: str) -> str | None:
    if not name.isidentifier():
        return "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        return "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        warn_at_caller(f"It is discouraged to use axes names that are keywords: {name}",
                       RuntimeWarning)
    if name == "axis":
        warn_at_caller("It is discouraged to use 'axis' as an axis name and will raise an error "
                       "in future", FutureWarning)
    return None


def _add_axis(side: _Side, name: str, group: list | None) -> None:
    if name in side.identifiers:
        raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
    if name == ELLIPSIS:
        side.identifiers.add(ELLIPSIS)
        side.ellipsis_in_group = group is not None
        (side.groups if group is None else group).append(ELLIPSIS)
        return
    if name.isdecimal() and int(name) == 1:
        if group is None:
            side.groups.append([])
        return
    problem = None if name.isdecimal() else _axis_name_problem(name)
    if problem is not None:
        raise ValueError(f"Invalid axis identifier: {name}\n{problem}")
    axis = _Anonymous(name) if name.isdecimal() else name
    side.identifiers.add(axis)
    side.has_large_anonymous |= name.isdecimal()
    if group is None:
        side.groups.append([axis])
    else:
        group.append(axis)


def _check_dots(text: str) -> str:
    if "..." not in text:
        raise ValueError("Expression may contain dots only inside ellipsis (...)")
    if text.count("...") != 1 or text.count(".") != 3:
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis for tensor ")
    return text.replace("...", ELLIPSIS)


def _parse_side(text: str) -> _Side:
    side = _Side()
    if "." in text:
        text = _check_dots(text)
        side.has_ellipsis = True
    group: list | None = None
    name = ""
    for char in text + " ":
        if char.isalnum() or char in ("_", ELLIPSIS):
            name += char
            continue
        if char not in "() ":
            raise ValueError(f"Unknown character '{char}'")
        if name:
            _add_axis(side, name, group)
        name = ""
        if char == "(":
            if group is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not "
                                 "allowed)")
            group = []
        elif char == ")":
            if group is None:
                raise ValueError("Brackets are not balanced")
            side.groups.append(group)
            group = None
    if group is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{text}'")
    return side


@functools.lru_cache(256)
def _parse(pattern: str, length_names: frozenset) -> tuple[_Side, _Side]:
    """Both sides of the pattern, checked as torch checks them (cached as torch's are, so a
    discouraged name warns once)."""
    parts = pattern.split("->")
    if len(parts) != 2:
        raise ValueError("Pattern must contain a single '->' separator")
    if ELLIPSIS in length_names:
        raise ValueError(f"'{ELLIPSIS}' is not an allowed axis identifier")
    left, right = _parse_side(parts[0]), _parse_side(parts[1])
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    if left.has_large_anonymous or right.has_large_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {difference}")
    unmatched = length_names - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {set(unmatched)}")
    return left, right


def _check_rank(left: _Side, ndim: int) -> int:
    """How many dimensions the ellipsis stands for."""
    if not left.has_ellipsis:
        if len(left.groups) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.groups)}) must be equal "
                             f"to the number of dimensions in the tensor ({ndim})")
        return 0
    # torch counts the names and the 1s, not the groups, here
    counted = len(left.identifiers) - 1 + sum(not group for group in left.groups)
    if counted > ndim:
        raise ValueError(f"Number of dimensions in pattern ({counted}) must be less than or "
                         f"equal to the number of dimensions in the tensor ({ndim})")
    return ndim - (len(left.groups) - 1)


class _Dim:
    """An elementary axis as torch's first-class dims name it (d0, d1, ...) in error messages."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"d{self.index}"


def _left_axes(left: _Side, ellipsis_dims: int) -> tuple[list, dict, list]:
    """Each tensor dimension's axes (as keys), every key's first-class dim, and the keys of the
    anonymous size-one axes (summed out)."""
    packs: list = []
    dims: dict = {}
    summed: list = []
    for group in left.groups:
        if group == ELLIPSIS:
            keys = [(ELLIPSIS, j) for j in range(ellipsis_dims)]
            packs.extend([key] for key in keys)
        else:
            keys = list(group) or [_Anonymous("1")]
            summed += [] if group else keys
            packs.append(keys)
        for key in keys:
            dims[key] = _Dim(len(dims))
    return packs, dims, summed


def _bind(pack: list, size: int, sizes: dict, dims: dict) -> None:
    """Give every axis of one tensor dimension its size, inferring at most one."""
    unknown = [key for key in pack if key not in sizes]
    if len(unknown) > 1:
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                 f"{dims[unknown[0]]!r} and {dims[unknown[1]]!r}")
    known = math.prod(sizes[key] for key in pack if key in sizes)
    if unknown:
        if known == 0:
            raise ZeroDivisionError("integer modulo by zero")
        if size % known:
            shown = tuple(sizes.get(key, "?") for key in pack)
            raise DimensionBindError("inferred dimension does not evenly fit into larger "
                                     f"dimension: {size} vs {shown}")
        sizes[unknown[0]] = size // known
    elif known != size:
        shown = tuple(dims[key] for key in pack)
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when "
                                 f"matching dimension pack {shown}")


def _right_packs(right: _Side, ellipsis_dims: int) -> list:
    packs: list = []
    for group in right.groups:
        if group == ELLIPSIS:
            packs.extend([(ELLIPSIS, j)] for j in range(ellipsis_dims))
        else:
            packs.append([key for axis in group for key in _expand(axis, ellipsis_dims)])
    return packs


def _expand(axis: object, ellipsis_dims: int) -> list:
    return [(ELLIPSIS, j) for j in range(ellipsis_dims)] if axis == ELLIPSIS else [axis]


def rearrange(tensor: Tensor, pattern: str, axes_lengths: dict) -> Tensor:
    """The rearranged tensor (see the module's docstring)."""
    left, right = _parse(pattern, frozenset(axes_lengths))
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    ellipsis_dims = _check_rank(left, tensor.dim())
    left_packs, dims, summed = _left_axes(left, ellipsis_dims)
    if not dims:
        return tensor
    sizes = dict(axes_lengths)
    for pack, size in zip(left_packs, tensor.shape, strict=True):
        _bind(pack, size, sizes, dims)
    order = list(dims)
    split = tensor.reshape([sizes[key] for key in order])
    if summed:
        split = split.sum([order.index(key) for key in summed])
        order = [key for key in order if key not in summed]
    right_packs = _right_packs(right, ellipsis_dims)
    wanted = [key for pack in right_packs for key in pack]
    moved = split.permute([order.index(key) for key in wanted])
    return moved.reshape([math.prod(sizes[key] for key in pack) for pack in right_packs])
