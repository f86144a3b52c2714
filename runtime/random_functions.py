"""torch.normal's public name over the spec's random ops: a tensor mean or std calls
normal.Tensor_Tensor, normal.Tensor_float or normal.float_Tensor (which record torch's
NormalBackward1..3), two numbers and a size the factory of runtime/random_ops.py.

torch binds torch.normal with four Python signatures (generated/signatures.py), tried in
its order, so a call that fits none gets torch's TypeError listing them.
"""

from __future__ import annotations

from typing import Any

from generated import ops
from generated.signatures import SIGNATURES
from runtime import factories, random_ops
from runtime import modes as _modes
from runtime import out as _out
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
    op = _NORMAL_OPS[index]
    mean, std = bound["mean"], bound.get("std", 1.0)
    if out is not None:
        # (out's values are drawn in the result's dtype, then written into out)
        return _out.call("normal", op, (mean, std), {"generator": generator}, out)
    return op(mean, std, generator=generator)


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
