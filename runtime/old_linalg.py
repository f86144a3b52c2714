"""torch's older linear-algebra names kept beside torch.linalg: `orgqr` (Tensor.orgqr too),
torch.linalg.householder_product under LAPACK's name; `nuclear_norm`, the sum of the singular
values (torch.linalg.matrix_norm(A, 'nuc'), with torch's deprecation warning, once a
process); and `native_norm`, which torch's CPU build has for sparse tensors only, so on a
dense tensor it fails as torch's dispatcher does.
"""

from __future__ import annotations

from typing import Any

from runtime import arguments, linalg
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller

__all__ = ["orgqr", "nuclear_norm", "native_norm"]

_warned: set[str] = set()
_NUCLEAR = ("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will "
            "be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', "
            "dim, keepdim)` instead")


def _warn_once(key: str) -> None:
    """torch's TORCH_WARN_ONCE: each of its call sites warns on the first call only."""
    if key not in _warned:
        _warned.add(key)
        warn_at_caller(_NUCLEAR, UserWarning)


def orgqr(input: Any, tau: Any, *, out: Any = None) -> Any:  # noqa: A002 - torch's name
    """torch.linalg.householder_product under LAPACK's name (its node and errors)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(orgqr, (input, tau), {"out": out})
        if heard is not _modes.PASS:
            return heard
    for position, (name, value) in enumerate((("input", input), ("input2", tau)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"orgqr(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {arguments.type_name(value)}")
    return linalg.householder_product(input, tau, out=out)


def nuclear_norm(input: Any, dim: Any = None, keepdim: Any = False, *,  # noqa: A002
                 out: Any = None) -> Any:
    """The sum of the singular values of the matrices over dim (the last two dims by
    default): `nuclear_norm(A, keepdim=False)` or `nuclear_norm(A, dim, keepdim=False)`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(nuclear_norm, (input, dim, keepdim), {"out": out})
        if heard is not _modes.PASS:
            return heard
    if isinstance(dim, bool):  # the first overload's keepdim, given by position
        dim, keepdim = None, dim
    if not isinstance(input, Tensor):
        raise TypeError("nuclear_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{arguments.type_name(input)}")
    if isinstance(dim, int):  # torch's int[2] takes one int for both
        dim = (dim, dim)
    if not _fits(dim, keepdim):
        given = [input, *([] if dim is None else [dim]), *([keepdim] if keepdim else [])]
        raise TypeError(arguments._invalid_combination_message(
            "nuclear_norm", arguments._describe(tuple(given), {}, (Tensor,)), _NUCLEAR_FORMS))
    if out is not None:
        _warn_once("nuclear_norm_out" if dim is None else "nuclear_norm_dim_out")
        return _out.call("nuclear_norm", _nuclear, (input, dim, keepdim), {}, out)
    _warn_once("nuclear_norm")
    return _nuclear(input, dim, keepdim)


_NUCLEAR_FORMS = (" * (Tensor input, tuple of ints dim, bool keepdim = False, *, Tensor out = "
                  "None)\n * (Tensor input, bool keepdim = False, *, Tensor out = None)\n")


def _fits(dim: Any, keepdim: Any) -> bool:
    """dim None or a sequence of ints, keepdim a bool: one of torch's two signatures."""
    ints = dim is None or isinstance(dim, list | tuple) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in dim)
    return ints and isinstance(keepdim, bool)


def _nuclear(input: Tensor, dim: Any, keepdim: bool) -> Any:  # noqa: A002
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def native_norm(input: Any, p: Any = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002
                dtype: Any = None) -> Any:
    """torch registers native_norm for sparse CPU tensors only: a dense call fails."""
    if not isinstance(input, Tensor):
        raise TypeError("native_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{arguments.type_name(input)}")
    op = "aten::native_norm" if dim is None and dtype is None else \
        "aten::native_norm.ScalarOpt_dim_dtype"
    raise NotImplementedError(
        f"Could not run '{op}' with arguments from the 'CPU' backend. This could be because "
        "the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook "
        "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        f"possible resolutions. '{op}' is only available for these backends: [SparseCPU] "
        "(gradgen has no sparse tensors).")


class OldLinalgMethods:
    """Tensor.orgqr, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def orgqr(self, input2: Any) -> Any:
        return orgqr(self, input2)
