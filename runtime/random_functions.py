"""torch.normal's public name over the spec's random ops: a tensor mean or std calls
normal.Tensor_Tensor, normal.Tensor_float or normal.float_Tensor (which record torch's
NormalBackward1..3), two numbers and a size the factory of runtime/random_ops.py.

torch binds torch.normal with four Python signatures (generated/signatures.py), tried in
its order, so a call that fits none gets torch's TypeError listing them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from generated import ops
from generated.signatures import SIGNATURES
from runtime import factories, kernels, random_ops
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor
from runtime.arguments import Parser

__all__ = ["normal"]

_NORMAL = Parser(SIGNATURES["normal"])
# the spec's op for each tensor signature, in _NORMAL's order
_NORMAL_OPS = (ops.normal_Tensor_Tensor, ops.normal_Tensor_float, ops.normal_float_Tensor)


def normal(*args: Any, **options: Any) -> Any:
    """torch.normal(mean, std, *, generator=None, out=None) with a tensor mean and/or std
    (broadcast together), or torch.normal(mean, std, size, *, generator=None, out=None,
    dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(normal, args, options)
        if heard is not _modes.PASS:
            return heard
    index, bound = _NORMAL.parse(args, options)
    generator, out = bound.get("generator"), bound.get("out")
    if index == len(_NORMAL_OPS):
        return _normal_sized(bound, generator, out)
    mean, std = bound["mean"], bound.get("std", 1.0)
    if out is not None:
        return _out.call("normal", _normal_out_values(index, out), (mean, std),
                         {"generator": generator}, out)
    return _NORMAL_OPS[index](mean, std, generator=generator)


def _normal_out_values(index: int, out: Any) -> Any:
    """The function that draws normal(mean, std, out=out)'s values, as torch's out= kernels
    do: in out's dtype, of the broadcast of mean's and std's shapes, or for a tensor mean and
    a number std, of mean's shape broadcast with out's own."""
    def draw(mean: Any, std: Any, generator: Any = None) -> Tensor:
        mean_data = mean._data if isinstance(mean, Tensor) else mean
        std_data = std._data if isinstance(std, Tensor) else std
        kernels.check_normal_std(std_data)
        shapes = [value.shape for value in (mean_data, std_data) if isinstance(value, np.ndarray)]
        shapes += [out.shape] if index == 1 else []
        shape = kernels.broadcast_shapes(*shapes) if len(shapes) == 2 else shapes[0]
        result = np.empty(shape, out._data.dtype)
        return Tensor._make(kernels.normal_into(result, mean_data, std_data, generator), None)
    return draw


def _normal_sized(bound: dict, generator: Any, out: Any) -> Any:
    """normal(mean, std, size): N(mean, std²) numbers of the given size (random_ops)."""
    dtype, requires_grad = factories.options_of(bound)
    shape = factories.bound_shape("normal", bound["size"], "numel", out)
    mean, std = bound["mean"], bound["std"]
    if out is not None:
        return _out.factory("normal", random_ops.normal, (mean, std, shape), {
            "dtype": dtype, "requires_grad": requires_grad, "generator": generator}, out)
    return random_ops.normal(mean, std, shape, generator=generator, dtype=dtype,
                             requires_grad=requires_grad)
