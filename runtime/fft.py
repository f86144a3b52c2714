"""torch.fft: the discrete Fourier transforms (fft, ifft, rfft, irfft, hfft, ihfft and their
2-d and n-d forms), the sample frequencies (fftfreq, rfftfreq) and the shifts that put the
zero frequency in the middle (fftshift, ifftshift).

Each transform is made, as torch makes it, of the spec's three transform ops (`_fft_r2c`,
`_fft_c2r`, `_fft_c2c`, with their gradients) and of conjugates, after its arguments are
read as torch reads them: `n` / `s` (a signal cut or zero-padded to that many points),
`dim` and `norm` ("backward", the default, scales the inverse by 1 / n; "forward" the
forward transform; "ortho" both by 1 / sqrt(n)).
"""

from __future__ import annotations

from typing import Any

from generated import ops
from runtime import arguments, dtypes, factories, kernels
from runtime import modes as _modes
from runtime import out as _out
from runtime import tensor_attributes as _attributes
from runtime._tensor import Tensor
from runtime._warn import warn_at_caller
from runtime.aliases import missing_attribute

__all__ = ["fftfreq", "fftshift", "ifftshift", "rfftfreq",
           "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]


# -- reading the arguments ----------------------------------------------------------------------

# torch's normalization modes: 0 none, 1 by 1 / sqrt(n), 2 by 1 / n; per norm string, the
# forward transform's and the inverse's.
_NORMS = {None: (0, 2), "backward": (0, 2), "forward": (2, 0), "ortho": (1, 1)}


def _normalization(norm: Any, forward: bool) -> int:
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm][0 if forward else 1]


def _check_input(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{arguments.type_name(input)}")


def _promoted(input: Tensor, require_complex: bool = False) -> Tensor:
    """Integers and bools as the default float dtype (or its complex), as torch's
    promote_tensor_fft; float16 is refused (gradgen has no complex32)."""
    dtype = input.dtype
    if dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"Unsupported dtype {'Half' if dtype is dtypes.float16 else 'BFloat16'}")
    if not (dtype.is_floating_point or dtype.is_complex):
        input = input.to(dtypes.get_default_dtype())
    if require_complex and not input.dtype.is_complex:
        input = input.to(input.dtype.to_complex())
    return input


def _require_real(input: Tensor, message: str) -> None:
    if input.dtype.is_complex:
        raise RuntimeError(f"{message}, but got {kernels._TYPE_NAMES[input.dtype.name]}")


def _points(n: Any) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _wrap(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _dims_and_sizes(input: Tensor, s: Any, dim: Any,
                    onesided_inverse: bool = False) -> tuple[list[int], list | None]:
    """The transformed dims and their signal sizes (None: the input's), as torch's
    canonicalize_fft_shape_and_dim_args; for a onesided inverse, a last size of -1 stays
    None (its default is 2 (m - 1))."""
    ndim = input.ndim
    if dim is not None:
        dims = [_wrap(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    if s is None:
        return dims, None
    sizes = [input.shape[d] if n == -1 else _points(n) for d, n in zip(dims, s, strict=True)]
    if onesided_inverse and s[-1] == -1:
        sizes[-1] = None
    return dims, sizes


def _resized(input: Tensor, dims: list[int], sizes: list[int]) -> Tensor:
    """The input cut or zero-padded to `sizes` along `dims` (torch's resize_fft_input)."""
    for d, size in zip(dims, sizes, strict=True):
        have = input.shape[d]
        if size < have:
            input = input.narrow(d, 0, size)
        elif size > have:
            shape = list(input.shape)
            shape[d] = size - have
            input = ops.cat([input, factories.zeros(shape, dtype=input.dtype)], d)
    return input


def _one_dim(name: str, input: Any, n: Any, dim: Any) -> tuple[Tensor, list[int], list | None]:
    _check_input(name, input)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"fft_{name}(): argument 'dim' must be int, not "
                        f"{arguments.type_name(dim)}")
    dims = [_wrap(dim, input.ndim)]
    return input, dims, None if n is None else [_points(n)]


def _conj(input: Tensor) -> Tensor:
    return _attributes.conj(input)


# -- complex to complex: fft, ifft, fft2, ifft2, fftn, ifftn ------------------------------------

def _c2c(input: Tensor, dims: list[int], sizes: Any, norm: Any, forward: bool,
         one_dim: bool) -> Tensor:
    """fft and ifft take a real input through _fft_r2c (the inverse conjugated); the n-d
    forms make it complex first, as torch's do."""
    input = _promoted(input, require_complex=not one_dim)
    if sizes is not None:
        input = _resized(input, dims, sizes)
    mode = _normalization(norm, forward)
    if input.dtype.is_complex:
        return ops._fft_c2c(input, dims, mode, forward)
    result = ops._fft_r2c(input, dims, mode, False)
    return result if forward else _conj(result)


def fft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The one-dimensional discrete Fourier transform along `dim`."""
    input, dims, sizes = _one_dim("fft", input, n, dim)
    return _c2c(input, dims, sizes, norm, True, True)


def ifft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The one-dimensional inverse discrete Fourier transform along `dim`."""
    input, dims, sizes = _one_dim("ifft", input, n, dim)
    return _c2c(input, dims, sizes, norm, False, True)


def fftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The n-dimensional discrete Fourier transform over `dim` (every dim by default)."""
    _check_input("fftn", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _c2c(input, dims, sizes, norm, True, False)


def ifftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The n-dimensional inverse discrete Fourier transform."""
    _check_input("ifftn", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _c2c(input, dims, sizes, norm, False, False)


def fft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """The two-dimensional discrete Fourier transform (of the last two dims by default)."""
    _check_input("fft2", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _c2c(input, dims, sizes, norm, True, False)


def ifft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """The two-dimensional inverse discrete Fourier transform."""
    _check_input("ifft2", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _c2c(input, dims, sizes, norm, False, False)


# -- real to complex and back: rfft, irfft and their n-d forms ----------------------------------

def _r2c(input: Tensor, dims: list[int], sizes: Any, norm: Any, forward: bool) -> Tensor:
    """The onesided transform of a real input (the inverse, for ihfft: conjugated)."""
    input = _promoted(input)
    if sizes is not None:
        input = _resized(input, dims, sizes)
    result = ops._fft_r2c(input, dims, _normalization(norm, forward), True)
    return result if forward else _conj(result)


def _half_spectrum(input: Tensor, dims: list[int], sizes: Any) -> tuple[Tensor, int]:
    """The input of a onesided inverse, resized, and the signal's size along the last of
    `dims`: sizes[-1], or by default (no sizes, or -1 there) 2 (m - 1) for m points."""
    default = sizes is None or sizes[-1] is None
    last = _points(2 * (input.shape[dims[-1]] - 1) if default else sizes[-1])
    wanted = ([input.shape[d] for d in dims[:-1]] if sizes is None else list(sizes[:-1])) \
        + [last // 2 + 1]
    return _resized(input, dims, wanted), last


def _c2r(input: Tensor, dims: list[int], sizes: Any, norm: Any, forward: bool) -> Tensor:
    """The real signal of a onesided spectrum; the last of `dims` has `sizes[-1]` points
    (by default 2 (m - 1) for an input of m there). hfft conjugates the input first."""
    input = _promoted(input, require_complex=True)
    input, last = _half_spectrum(input, dims, sizes)
    if forward:
        input = _conj(input)
    return ops._fft_c2r(input, dims, _normalization(norm, forward), last)


def rfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The transform of a real signal, its non-negative frequencies only (n // 2 + 1)."""
    input, dims, sizes = _one_dim("rfft", input, n, dim)
    _require_real(input, "rfft expects a real input tensor")
    return _r2c(input, dims, sizes, norm, True)


def irfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The inverse of rfft: a real signal of n points (2 (m - 1) by default)."""
    input, dims, sizes = _one_dim("irfft", input, n, dim)
    return _c2r(input, dims, sizes, norm, False)


def rfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The n-dimensional transform of a real signal, onesided in its last dim."""
    _check_input("rfftn", input)
    _require_real(input, "rfftn expects a real-valued input tensor")
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _r2c(input, dims, sizes, norm, True)


def irfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The inverse of rfftn."""
    _check_input("irfftn", input)
    dims, sizes = _dims_and_sizes(input, s, dim, onesided_inverse=True)
    return _c2r(input, dims, sizes, norm, False)


def rfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """rfftn over two dims (the last two by default)."""
    _check_input("rfft2", input)
    _require_real(input, "rfftn expects a real-valued input tensor")
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _r2c(input, dims, sizes, norm, True)


def irfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """irfftn over two dims (the last two by default)."""
    _check_input("irfft2", input)
    dims, sizes = _dims_and_sizes(input, s, dim, onesided_inverse=True)
    return _c2r(input, dims, sizes, norm, False)


# -- Hermitian signals: hfft, ihfft and their n-d forms -----------------------------------------

def hfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The transform of a Hermitian-symmetric signal given by its first half: real."""
    input, dims, sizes = _one_dim("hfft", input, n, dim)
    return _c2r(input, dims, sizes, norm, True)


def ihfft(input: Any, n: Any = None, dim: int = -1, norm: Any = None) -> Any:
    """The inverse of hfft: the onesided inverse transform of a real signal."""
    input, dims, sizes = _one_dim("ihfft", input, n, dim)
    _require_real(input, "ihfft expects a real input tensor")
    return _r2c(input, dims, sizes, norm, False)


def _hfftn(input: Tensor, dims: list[int], sizes: Any, norm: Any) -> Tensor:
    """The complex transform over all but the last of `dims`, then hfft over the last."""
    input = _promoted(input, require_complex=True)
    input, last = _half_spectrum(input, dims, sizes)
    mode = _normalization(norm, True)
    if len(dims) > 1:
        input = ops._fft_c2c(input, dims[:-1], mode, True)
    return ops._fft_c2r(_conj(input), dims[-1:], mode, last)


def _ihfftn(input: Tensor, dims: list[int], sizes: Any, norm: Any) -> Tensor:
    """ihfft over the last of `dims`, then the complex transform over the others."""
    if input.dtype.is_complex:
        raise RuntimeError("Only supports floating-point dtypes, but found: "
                           f"{kernels._TYPE_NAMES[input.dtype.name]}")
    input = _promoted(input)
    if sizes is not None:
        input = _resized(input, dims, sizes)
    mode = _normalization(norm, False)
    result = ops._fft_r2c(input, dims[-1:], mode, True)
    if len(dims) == 1:
        return _conj(result)
    return ops._fft_c2c(_attributes.conj_physical(result), dims[:-1], mode, False)


def hfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The n-dimensional transform of a Hermitian-symmetric signal: real."""
    _check_input("hfftn", input)
    dims, sizes = _dims_and_sizes(input, s, dim, onesided_inverse=True)
    return _hfftn(input, dims, sizes, norm)


def ihfftn(input: Any, s: Any = None, dim: Any = None, norm: Any = None) -> Any:
    """The inverse of hfftn, onesided in its last dim."""
    _check_input("ihfftn", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _ihfftn(input, dims, sizes, norm)


def hfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """hfftn over two dims (the last two by default)."""
    _check_input("hfft2", input)
    dims, sizes = _dims_and_sizes(input, s, dim, onesided_inverse=True)
    return _hfftn(input, dims, sizes, norm)


def ihfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Any:
    """ihfftn over two dims (the last two by default)."""
    _check_input("ihfft2", input)
    dims, sizes = _dims_and_sizes(input, s, dim)
    return _ihfftn(input, dims, sizes, norm)


def _frequencies(name: str, count: int, n: int, d: float, out: Any, dtype: Any,
                 requires_grad: bool, **options: Any) -> Any:
    """arange(count) (its upper half made negative for fftfreq), then times 1 / (n d) in
    the result's dtype, as torch computes it."""
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if out is not None:
        return _out.call(name, _frequencies, (name, count, n, d, None, dtype, False),
                         options, out)
    steps = factories.arange(count, dtype=dtype if dtype is not None
                             else dtypes.get_default_dtype(), **options)
    if name == "fftfreq" and n > 0:
        steps[(n + 1) // 2:] = factories.arange(-(n // 2), 0, dtype=steps.dtype)
    scale = 1.0 / (n * d) if n * d != 0 else float("inf")
    return (steps * scale).detach().requires_grad_(requires_grad)


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None,
            requires_grad: bool = False, **options: Any) -> Any:
    """The frequencies of an n-point FFT with sample spacing d: [0, 1, ..., -2, -1] / (n d)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _frequencies("fftfreq", n, n, d, out, dtype, requires_grad, **options)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None,
             requires_grad: bool = False, **options: Any) -> Any:
    """The non-negative frequencies of an n-point real FFT: [0, 1, ..., n // 2] / (n d)."""
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n // 2 + 1}: "
                           f"[{n // 2 + 1}]")
    return _frequencies("rfftfreq", n // 2 + 1, n, d, out, dtype, requires_grad, **options)


def _shift(input: Any, dim: Any, inverse: bool) -> Any:
    if not isinstance(input, Tensor):
        name = "fft_ifftshift" if inverse else "fft_fftshift"
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) \
        else list(dim)
    sizes = [input.shape[d] if -input.ndim <= d < input.ndim else 0 for d in dims]
    shifts = [(size + 1) // 2 if inverse else size // 2 for size in sizes]
    return input.roll(shifts, dims)


def fftshift(input: Any, dim: Any = None) -> Any:
    """Rolls each of `dim` (every dim by default) by half its size: the zero frequency of an
    fft's output to the middle (RollBackward0)."""
    return _shift(input, dim, False)


def ifftshift(input: Any, dim: Any = None) -> Any:
    """fftshift undone: rolls by half the size, rounded up, backwards."""
    return _shift(input, dim, True)


def __getattr__(name: str) -> Any:
    if name == "Tensor":  # torch.fft re-exports torch.Tensor
        return Tensor
    raise missing_attribute(__name__, name)


# -- the short-time Fourier transform (torch.stft) ----------------------------------------------

_warned_rectangular = False  # torch gives this warning once per process


def _stft_call(input: Tensor, n_fft: int, hop_length: int, win_length: int, window: Any,
               normalized: bool, onesided: Any, return_complex: Any) -> str:
    """How torch's stft errors describe the call (the input after its centre padding)."""
    shape = ", ".join(str(size) for size in input.shape)
    described = "None" if window is None else \
        f"{dtypes.type_string(window._data)}{{{list(window.shape)}}}"
    flags = ["None" if v is None else str(int(v)) for v in (onesided, return_complex)]
    return (f"stft({dtypes.type_string(input._data)}[{shape}], n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={described}, "
            f"normalized={int(normalized)}, onesided={flags[0]}, return_complex={flags[1]}, "
            "align_to_window=None)")


def _reflect_pad(input: Tensor, pad: int) -> Tensor:
    """The last dim extended by `pad` mirrored values at each end (the ends not repeated)."""
    if pad == 0:
        return input
    length = input.shape[-1]
    if pad >= length:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({pad}, {pad}) at dimension "
                           f"{input.ndim - 1} of input {list(input.shape)}")
    # as torch's stft pads: reflection_pad1d of a 3-d view, whose backward node keeps
    # `input` as an input (so a gradient made with create_graph=True is in its graph)
    extended = (1,) * (3 - input.ndim) + tuple(input.shape)
    padded = ops.reflection_pad1d(input.view(extended), [pad, pad])
    return padded.view(tuple(padded.shape)[-input.ndim:])


def _stft_checks(input: Tensor, n_fft: int, hop_length: int, win_length: int,
                 window: Any, describe: Any) -> None:
    length = input.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{describe()} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{describe()} : expected hop_length > 0, but got "
                           f"hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{describe()} : expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{describe()} : expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")


def _stft_window(window: Any, n_fft: int, win_length: int, dtype: Any) -> Any:
    """The window, zero-padded on both sides to n_fft; None for the rectangular default."""
    global _warned_rectangular
    if window is None:
        if not _warned_rectangular:
            _warned_rectangular = True
            warn_at_caller(
                "A window was not provided. A rectangular window will be applied,which is "
                "known to cause spectral leakage. Other windows such as torch.hann_window or "
                "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
                "this warning and use a rectangular window, explicitly set "
                "`window=torch.ones(n_fft, device=<device>)`.", UserWarning)
        if win_length == n_fft:
            return None
        window = factories.ones(win_length, dtype=dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = ops.cat([factories.zeros(left, dtype=window.dtype), window,
                          factories.zeros(n_fft - win_length - left, dtype=window.dtype)])
    return window


def stft(input: Any, n_fft: int, hop_length: Any = None, win_length: Any = None,
         window: Any = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: Any = None, return_complex: Any = None,
         align_to_window: Any = None) -> Any:
    """The short-time Fourier transform: the transforms of windowed frames of n_fft
    samples, hop_length apart, as (freq, frames) (a batch first for a 2-d input)."""
    _check_input("stft", input)
    if return_complex is None and not (input.dtype.is_complex or
                                       window is not None and window.dtype.is_complex):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if center and input.ndim:
        if pad_mode != "reflect":
            raise NotImplementedError(f"stft: gradgen pads the centre with 'reflect' only, "
                                      f"not {pad_mode!r}")
        input = _reflect_pad(input, n_fft // 2)

    def describe() -> str:
        return _stft_call(input, n_fft, hop_length, win_length, window, normalized, onesided,
                          return_complex)

    if input.ndim not in (1, 2):
        raise RuntimeError(f"{describe()} : expected a 1D or 2D tensor")
    _stft_checks(input, n_fft, hop_length, win_length, window, describe)
    batched = input if input.ndim == 2 else input.unsqueeze(0)
    frames = _promoted(batched).unfold(-1, n_fft, hop_length)
    window = _stft_window(window, n_fft, win_length, frames.dtype)
    if window is not None:
        frames = frames * window
    mode = 1 if normalized else 0
    if frames.dtype.is_complex:
        out = ops._fft_c2c(frames, [2], mode, True)
    else:
        out = ops._fft_r2c(frames, [2], mode, True if onesided is None else onesided)
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.squeeze(0)
    if return_complex is False:
        warn_at_caller("stft with return_complex=False is deprecated. In a future pytorch "
                       "release, stft will return complex tensors for all inputs, and "
                       "return_complex=False will raise an error.\nNote: you can still call "
                       "torch.view_as_real on the complex output to recover the old return "
                       "format.", UserWarning)
        return ops.view_as_real(out)
    return out


# -- the inverse short-time Fourier transform (torch.istft) -------------------------------------

_warned_istft: set[str] = set()  # torch's TORCH_WARN_ONCE, per message


def _warn_istft_once(message: str) -> None:
    if message not in _warned_istft:
        _warned_istft.add(message)
        warn_at_caller(message, UserWarning)


def _cpp_type_string(array: Any) -> str:
    """A tensor's type as torch's toString() prints it: `torch.DoubleTensor`, and for the
    complex dtypes, which have no legacy name, `CPUComplexDoubleType`."""
    if array.dtype.kind == "c":
        return "CPUComplexDoubleType" if array.dtype.itemsize == 16 else "CPUComplexFloatType"
    return dtypes.type_string(array)


def _istft_call(input: Tensor, n_fft: int, hop_length: int, win_length: int, window: Any,
                center: bool, normalized: bool, onesided: Any, length: Any,
                return_complex: bool) -> str:
    """How torch's istft errors describe the call."""
    shape = ", ".join(str(size) for size in input.shape)
    described = "None" if window is None else \
        f"{dtypes.type_string(window._data)}{{{list(window.shape)}}}"
    optional = ["None" if v is None else str(int(v)) for v in (onesided, length)]
    return (f"istft({_cpp_type_string(input._data)}[{shape}], n_fft={n_fft}, "
            f"hop_length={hop_length}, win_length={win_length}, window={described}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={optional[0]}, "
            f"length={optional[1]}, return_complex={int(return_complex)})")


def _istft_checks(input: Tensor, n_fft: int, hop_length: int, win_length: int, window: Any,
                  onesided: bool, describe: Any) -> None:
    """torch's checks of istft's arguments, in its order (after the input's)."""
    fft_size = input.shape[-2]
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"{describe()} : expected the frequency dimension (3rd to the last) of "
                           "the input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(f"{describe()} : expected the frequency dimension (3rd to the last) of "
                           "the input tensor to match n_fft when onesided=False, but got "
                           f"{fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{describe()} : expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{describe()} : expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{describe()} : Invalid window shape. window has to be 1D and length "
                           "of `win_length`")


def _istft_window(window: Any, n_fft: int, win_length: int, dtype: Any) -> Tensor:
    """The window (ones when none is given, with torch's warning), zero-padded on both sides
    to n_fft."""
    if window is None:
        _warn_istft_once(
            "A window was not provided. A rectangular window will be applied.Please provide "
            "the same window used by stft to make the inversion lossless.To suppress this "
            "warning and use a rectangular window, explicitly set "
            "`window=torch.ones(n_fft, device=<device>)`.")
        window = factories.ones(win_length, dtype=dtype)
    if win_length != n_fft:
        left = (n_fft - win_length) // 2
        window = ops.constant_pad_nd(window, [left, n_fft - win_length - left], 0)
    return window


def _istft_frames(input: Tensor, n_fft: int, window: Any, onesided: bool, normalized: bool,
                  return_complex: bool) -> Tensor:
    """Each frame's inverse transform, (batch, frames, n_fft)."""
    frames = (input if input.ndim == 3 else input.unsqueeze(0)).transpose(1, 2)
    mode = 1 if normalized else 2  # torch's fft_norm_mode: by_root_n, by_n
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        return ops._fft_c2c(frames, [2], mode, False)
    if window is not None and window.dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if not onesided:
        frames = frames[..., :n_fft // 2 + 1]
    return ops._fft_c2r(frames, [2], mode, n_fft)


def _istft_arguments(input: Any, n_fft: Any, window: Any) -> None:
    """torch's checks of istft's input, n_fft and window before the call is described."""
    _check_input("istft", input)
    if isinstance(n_fft, bool) or not isinstance(n_fft, int):
        raise TypeError("istft(): argument 'n_fft' (position 2) must be int, not "
                        f"{arguments.type_name(n_fft)}")
    if window is not None and not isinstance(window, Tensor):
        raise TypeError("istft(): argument 'window' must be Tensor, not "
                        f"{arguments.type_name(window)}")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.ndim < 2:  # torch reads the sizes of view_as_real(input) at -2 and -3
        dims = input.ndim + 1
        raise IndexError(f"Dimension out of range (expected to be in range of [{-dims}, "
                         f"{dims - 1}], but got {-2 if dims < 2 else -3})")


def istft(input: Any, n_fft: int, hop_length: Any = None, win_length: Any = None,
          window: Any = None, center: bool = True, normalized: bool = False,
          onesided: Any = None, length: Any = None, return_complex: bool = False) -> Any:
    """The signal whose stft `input` is: each frame's inverse transform, windowed, added
    back in place (overlap-add) and divided by the sum of the squared windows there; the
    centre padding trimmed, or the result cut (or zero-padded) to `length`."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(istft, (input, n_fft), {
            "hop_length": hop_length, "win_length": win_length, "window": window,
            "center": center, "normalized": normalized, "onesided": onesided,
            "length": length, "return_complex": return_complex})
        if heard is not _modes.PASS:
            return heard
    _istft_arguments(input, n_fft, window)
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length

    def describe() -> str:
        return _istft_call(input, n_fft, hop_length, win_length, window, center, normalized,
                           onesided, length, return_complex)

    if input.numel() == 0:
        raise RuntimeError(f"{describe()} : input tensor cannot be empty.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{describe()} : expected a tensor with 3 or 4 dimensions, but got "
                           f"{input.ndim + 1}")
    sided = input.shape[-2] != n_fft if onesided is None else onesided
    _istft_checks(input, n_fft, hop_length, win_length, window, sided, describe)
    real = dtypes.from_numpy(input._data.real.dtype)
    padded_window = _istft_window(window, n_fft, win_length, real)
    frames = _istft_frames(input, n_fft, window, sided, normalized, return_complex)
    n_frames, signal = input.shape[-1], n_fft + hop_length * (input.shape[-1] - 1)
    added = ops.unfold_backward(frames * padded_window.view(1, 1, n_fft),
                                [frames.shape[0], signal], 1, n_fft, hop_length)
    envelope = ops.unfold_backward(padded_window.pow(2).expand(1, n_frames, n_fft),
                                   [1, signal], 1, n_fft, hop_length)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else signal)
    added, envelope = added[:, start:end], envelope[:, start:end]
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(f"{describe()} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    result = added / envelope
    if input.ndim == 2:
        result = result.squeeze(0)
    if end > signal:
        _warn_istft_once("The length of signal is shorter than the length parameter. Result is "
                         "being padded with zeros in the tail. Please check your center and "
                         "hop_length settings.")
        result = ops.constant_pad_nd(result, [0, end - signal], 0)
    return result


class SpectralMethods:
    """Tensor.stft and Tensor.istft, set on Tensor by runtime/methods.py."""

    __slots__ = ()

    def stft(self, n_fft: int, hop_length: Any = None, win_length: Any = None,
             window: Any = None, center: bool = True, pad_mode: str = "reflect",
             normalized: bool = False, onesided: Any = None, return_complex: Any = None,
             align_to_window: Any = None) -> Any:
        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                    onesided, return_complex, align_to_window)

    def istft(self, n_fft: int, hop_length: Any = None, win_length: Any = None,
              window: Any = None, center: bool = True, normalized: bool = False,
              onesided: Any = None, length: Any = None, return_complex: bool = False) -> Any:
        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                     length, return_complex)
