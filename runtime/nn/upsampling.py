"""Upsampling: F.interpolate (and the deprecated F.upsample, F.upsample_nearest,
F.upsample_bilinear) and the layers Upsample, UpsamplingNearest2d, UpsamplingBilinear2d.

interpolate checks its arguments as torch.nn.functional does, turns a scale factor into an
output size, and calls the spec op of its mode and rank (upsample_nearest2d,
upsample_bilinear2d, ...: UpsampleNearest2DBackward0 and the like in the graph, as in
PyTorch); mode='area' is adaptive average pooling; antialias=True (and mode='lanczos')
takes the antialiased kernels (_upsample_bilinear2d_aa, ...). As torch's `.vec` overloads
do, a scale factor gives the output size int(size * factor) and is also handed to the op,
whose source positions then follow it (unless recompute_scale_factor=True).
"""

from __future__ import annotations

import math
from typing import Any

from generated import ops
from runtime import modes as _modes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.nn import pooling
from runtime.nn.module import Module
from runtime.nn.pooling_more import adaptive_avg_pool3d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "interpolate",
           "upsample", "upsample_bilinear", "upsample_nearest"]

_SPATIAL_NAMES = {3: "linear", 4: "bilinear", 5: "trilinear"}
_NEAREST_OPS = {3: ops.upsample_nearest1d, 4: ops.upsample_nearest2d,
                5: ops.upsample_nearest3d}
_NEAREST_EXACT_OPS = {3: ops._upsample_nearest_exact1d, 4: ops._upsample_nearest_exact2d,
                      5: ops._upsample_nearest_exact3d}
_LINEAR_OPS = {3: ops.upsample_linear1d, 4: ops.upsample_bilinear2d,
               5: ops.upsample_trilinear3d}


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, Tensor) and not value.is_floating_point()
                                      and value.ndim == 0)


def _sizes(input: Tensor, size: Any, scale_factor: Any) -> tuple[list | None, list | None]:
    """torch's interpolate: exactly one of size and scale_factor, as a list per spatial dim."""
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, list | tuple):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            return list(size), None
        return [size] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, list | tuple):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {list(input.shape[2:])} and "
                f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        return None, list(scale_factor)
    return None, [scale_factor] * dim


def _check_mode(input: Tensor, mode: str) -> None:
    """torch's errors for a mode that does not fit the input's rank."""
    if mode in ("bilinear", "trilinear", "linear", "bicubic") and input.ndim in (3, 4, 5) \
            and _SPATIAL_NAMES.get(input.ndim) != mode \
            and not (mode == "bicubic" and input.ndim == 4):
        needed = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}[mode]
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needed}D "
                                  "input")
    if input.ndim not in (3, 4, 5) or mode not in ("nearest", "linear", "bilinear", "bicubic",
                                                     "trilinear", "area", "nearest-exact"):
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | lanczos | area | nearest-exact (got {mode})")


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) input to `size`, or by `scale_factor`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(interpolate, (input, size, scale_factor, mode, align_corners,
            recompute_scale_factor, antialias), {})
        if heard is not _modes.PASS:
            return heard
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scales = _output_size(input, size, scale_factor, mode,
                                       recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if input.ndim == 4 and (antialias or mode == "lanczos"):
        return _resize_antialiased(input, mode, output_size, scales, align_corners, antialias)
    _check_mode(input, mode)
    return _resize(input, mode, output_size, scales, align_corners)


def _output_size(input: Tensor, size: Any, scale_factor: Any, mode: str,
                 recompute_scale_factor: bool | None) -> tuple[list[int], list]:
    """interpolate's output size and the scales its kernels are given (None each where
    torch recomputes them from the sizes)."""
    output_size, scale_factors = _sizes(input, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * s) for i, s in enumerate(scale_factors)]
        scale_factors = None
    if output_size is None:  # the .vec overloads: int(size * factor), the factors as scales
        output_size = [int(math.floor(float(input.shape[i + 2]) * s))
                       for i, s in enumerate(scale_factors)]
    return output_size, (scale_factors if scale_factors is not None
                         else [None] * (input.ndim - 2))


def _resize_antialiased(input: Tensor, mode: str, output_size: list[int], scales: list,
                        align_corners: bool, antialias: bool) -> Tensor:
    """The antialiased kernels (_upsample_bilinear2d_aa and the like); lanczos has no other,
    and takes neither align_corners nor antialias=False."""
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    kernel = {"bilinear": ops._upsample_bilinear2d_aa, "bicubic": ops._upsample_bicubic2d_aa,
              "lanczos": ops._upsample_lanczos2d_aa}[mode]
    return kernel(input, output_size, align_corners, *scales)


def _resize(input: Tensor, mode: str, output_size: list[int], scales: list,
            align_corners: bool | None) -> Tensor:
    """The kernel of `mode` for input's rank, run."""
    if mode == "nearest":
        return _NEAREST_OPS[input.ndim](input, output_size, *scales)
    if mode == "nearest-exact":
        return _NEAREST_EXACT_OPS[input.ndim](input, output_size, *scales)
    if mode == "area":
        if input.ndim == 5:
            return adaptive_avg_pool3d(input, output_size)
        return {3: pooling.adaptive_avg_pool1d,
                4: pooling.adaptive_avg_pool2d}[input.ndim](input, output_size)
    if mode == "bicubic":
        return ops.upsample_bicubic2d(input, output_size, align_corners, *scales)
    return _LINEAR_OPS[input.ndim](input, output_size, align_corners, *scales)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The deprecated name of interpolate."""
    warn_at_caller("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                   "instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """interpolate(mode='nearest'), deprecated."""
    warn_at_caller("`nn.functional.upsample_nearest` is deprecated. Use "
                   "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """interpolate(mode='bilinear', align_corners=True), deprecated."""
    warn_at_caller("`nn.functional.upsample_bilinear` is deprecated. Use "
                   "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


class Upsample(Module):
    """interpolate as a layer: the size or scale factor, mode and align_corners it keeps."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest') for (N, C, H, W) input."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True) for (N, C, H, W) input."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)



# -- the antialiased kernels' two overloads ----------------------------------------------------

def _vec_sizes(input: Tensor, output_size: Any, scale_factors: Any) -> tuple[list, list]:
    """The `.vec` overload's output size and scales: exactly one of the two is given; scale
    factors give floor(size * factor) and are the kernel's scales too."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        return list(output_size), [None, None]
    factors = list(scale_factors)
    return ([int(math.floor(float(size) * f)) for size, f in zip(input.shape[2:], factors,
                                                                strict=False)], factors)


def _antialiased_overloads(kernel: Any, name: str) -> Any:
    """torch's two signatures of an antialiased resize, resolved as its argument parser does:
    (self, output_size, align_corners, scales_h=None, scales_w=None), or `.vec`'s (input,
    output_size, align_corners, scale_factors) -- a list fourth, or the keywords input /
    scale_factors, choose the latter."""
    def resize(*args: Any, **kwargs: Any) -> Tensor:
        vec = "scale_factors" in kwargs or "input" in kwargs or (
            len(args) == 4 and (args[3] is None or isinstance(args[3], list | tuple)))
        if not vec:
            return kernel(*args, **kwargs)
        names = ("input", "output_size", "align_corners", "scale_factors")
        bound = dict(zip(names, args, strict=False)) | kwargs
        input = bound["input"]
        output_size, scales = _vec_sizes(input, bound.get("output_size"),
                                         bound.get("scale_factors"))
        return kernel(input, output_size, bound["align_corners"], *scales)

    resize.__name__ = resize.__qualname__ = name
    resize.__doc__ = f"torch.{name} (and its .vec overload): {kernel.__doc__ or ''}"
    return resize


_upsample_bilinear2d_aa = _antialiased_overloads(ops._upsample_bilinear2d_aa,
                                                 "_upsample_bilinear2d_aa")
_upsample_bicubic2d_aa = _antialiased_overloads(ops._upsample_bicubic2d_aa,
                                                "_upsample_bicubic2d_aa")
_upsample_lanczos2d_aa = _antialiased_overloads(ops._upsample_lanczos2d_aa,
                                                "_upsample_lanczos2d_aa")
