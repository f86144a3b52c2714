"""torch.nn.functional.grid_sample and affine_grid, and torch.grid_sampler.

grid_sample reads its input at the points of a grid (x, y[, z] in [-1, 1]) through the spec
ops grid_sampler_2d / grid_sampler_3d (GridSampler2DBackward0 in the graph, as in torch);
affine_grid makes such a grid from a batch of affine matrices through the spec op
affine_grid_generator. The string options become torch's enums here, with torch's Python
checks, warnings and messages.
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller

__all__ = ["affine_grid", "grid_sample", "grid_sampler"]

_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """torch.grid_sampler: the 2-d sampler for a 4-d input, else the 3-d one (which makes the
    checks of the input's rank)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(grid_sampler, (input, grid, interpolation_mode, padding_mode,
            align_corners), {})
        if heard is not _modes.PASS:
            return heard
    sampler = ops.grid_sampler_2d if input.ndim == 4 else ops.grid_sampler_3d
    return sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """The input (N, C, H, W) or (N, C, D, H, W) read at the grid's points, (N, H_out,
    W_out, 2) or (N, D_out, H_out, W_out, 3), as torch.nn.functional.grid_sample."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(grid_sample, (input, grid), {
            "mode": mode, "padding_mode": padding_mode, "align_corners": align_corners})
        if heard is not _modes.PASS:
            return heard
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warn_at_caller(_ALIGN_WARNING)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDING_MODES[padding_mode], align_corners)


def _affine_spatial(theta: Tensor, size: Any) -> list:
    """torch's checks of affine_grid's theta against the size asked for; the spatial
    sizes."""
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        return list(size[-2:])
    if len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        return list(size[-3:])
    raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                              f"affine transforms, respectively. Got size {size}.")


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of a batch of affine matrices
    theta (N, 2, 3) or (N, 3, 4), for an output of `size`, as
    torch.nn.functional.affine_grid."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(affine_grid, (theta, size), {"align_corners": align_corners})
        if heard is not _modes.PASS:
            return heard
    if align_corners is None:
        warn_at_caller(_ALIGN_WARNING)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    spatial = _affine_spatial(theta, size)
    if align_corners and min(spatial) == 1:
        warn_at_caller("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                       "grids when align_corners=True. This is not an intended use case of "
                       "affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return ops.affine_grid_generator(theta, list(size), align_corners)
