"""default_collate and default_convert, as torch.utils.data's: samples -> a batch.

default_collate turns a list of samples into one batch with the samples' structure:
tensors are stacked on a new first dimension, numpy arrays become tensors first, Python
floats become one float64 tensor and ints one int64 tensor, strings stay a list, and
mappings, named tuples and sequences are collated field by field (a tuple of fields
comes back as a list, as in torch). default_convert, used when batching is off, only
turns numpy arrays and scalars into tensors.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from generated import ops
from runtime import dtypes, factories
from runtime._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

# numpy dtypes that hold strings or objects: no tensor can hold them.
_STRING_OR_OBJECT = re.compile(r"[SaUO]")

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
          "lists; found {}")


def _is_numpy_value(value: Any) -> bool:
    name = type(value).__name__
    return type(value).__module__ == "numpy" and name not in ("str_", "string_")


def default_convert(data: Any) -> Any:
    """`data` with every numpy array or scalar inside it made a tensor."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _STRING_OR_OBJECT.search(data.dtype.str):
            return data
        return factories.as_tensor(np.asarray(data))  # a numpy scalar keeps its dtype
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(item) for item in data))
    if isinstance(data, tuple):
        return [default_convert(item) for item in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, str | bytes):
        return _rebuild_sequence(data, [default_convert(item) for item in data])
    return data


def _rebuild_mapping(like: Any, values: dict) -> Any:
    """A mapping of `like`'s type holding `values` (a plain dict if the type refuses)."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like: Any, values: list) -> Any:
    """A sequence of `like`'s type holding `values` (a list if the type refuses)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for index, value in enumerate(values):
                clone[index] = value
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _collate_leaf(batch: Sequence[Any]) -> tuple[bool, Any]:
    """(True, batch collated) for tensors, numpy values, numbers and strings; (False,
    None) for containers, which default_collate recurses into."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return True, ops.stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if _STRING_OR_OBJECT.search(elem.dtype.str):
            raise TypeError(_ERROR.format(elem.dtype))
        return True, default_collate([factories.as_tensor(item) for item in batch])
    if isinstance(elem, np.bool_ | np.number | np.object_):
        # numpy's promotion of the scalars' types gives the batch's dtype, as in torch
        return True, factories.as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return True, factories.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return True, factories.tensor(batch)
    if isinstance(elem, str):
        return True, batch
    return False, None


def default_collate(batch: Sequence[Any]) -> Any:
    """One batch from a list of samples of one structure (see the module docstring)."""
    done, collated = _collate_leaf(batch)
    if done:
        return collated
    elem = batch[0]
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([sample[key] for sample in batch])
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(field) for field in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field is a tuple (as zip gives it), which is what a field of strings stays
        fields = [default_collate(field) for field in zip(*batch, strict=False)]
        return fields if isinstance(elem, tuple) else _rebuild_sequence(elem, fields)
    raise TypeError(_ERROR.format(type(elem)))
