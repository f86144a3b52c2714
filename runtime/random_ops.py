"""Random tensors and the in-place random methods, as PyTorch's: torch.rand, randn,
randint, randperm, normal, bernoulli, multinomial, the `*_like` factories, and
Tensor.uniform_, normal_, bernoulli_, exponential_, random_.

runtime.sampling draws the numbers in the order torch's kernels write a tensor's memory;
this module checks arguments as torch does and puts the numbers in place. Tensor's
uniform_, normal_, bernoulli_, exponential_ and random_, torch.multinomial and torch.normal
with tensor arguments are the spec's ops (their kernels in runtime/kernels.py), which record
torch's nodes (UniformBackward0, ...); the functions of those names here, for callers of
this module, write through copy_, so a tensor with history gets CopyBackwards (no gradient
reaches the old values either way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from generated.signatures import SIGNATURES
from runtime import dtypes, factories, kernels, sampling
from runtime import modes as _modes
from runtime import out as _out
from runtime._tensor import Tensor, _scalar_type_name
from runtime.arguments import Parser, int_list
from runtime.random import Generator, default_generator

__all__ = [
    "rand", "randn", "randint", "randperm", "bernoulli", "rand_like",
    "randn_like", "randint_like",
]  # (torch.normal is runtime/random_functions.py's, over the spec's normal overloads)



# -- arguments --------------------------------------------------------------------------------

def _generator(generator: Generator | None) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def _shape(size: Sequence[Any]) -> tuple[int, ...]:
    shape = int_list(size)
    for length in shape:
        if length < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {length}: {list(shape)}")
    return shape


def _number(value: float) -> str:
    """A number as PyTorch's C++ messages print it (`2`, `0.5`)."""
    return format(value, "g")


def _require_float(array: np.ndarray, kernel: str) -> None:
    if array.dtype.kind not in "fV":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_scalar_type_name(array)}'")


def _float_dtype(dtype: dtypes.dtype | None, kernel: str) -> np.dtype:
    numpy_dtype = (dtype or dtypes.get_default_dtype()).numpy
    _require_float(np.empty(0, numpy_dtype), kernel)
    return numpy_dtype


def _write(self: Tensor, values: np.ndarray) -> Tensor:
    """Write values drawn in `self`'s memory order into `self`, through copy_."""
    return self.copy_(Tensor._make(sampling.place(values, self._data, self._data.dtype), None))


# -- in-place methods ---------------------------------------------------------------------------

def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *,
             generator: Generator | None = None) -> Tensor:
    """Fill with U(from_, to) (torch's `from` and `to`): the spec's kernel, through copy_."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(uniform_, (self, from_, to), {"generator": generator},
                                _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    return _write_drawn(self, kernels.uniform_(self._data, from_, to, _generator(generator)))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """Fill with N(mean, std²)."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(normal_, (self, mean, std), {"generator": generator},
                                _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    return _write_drawn(self, kernels.normal_(self._data, mean, std, _generator(generator)))


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Set each element to 1 with probability p (a number, or a tensor of probabilities
    broadcast to self's shape), else 0."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(bernoulli_, (self, p), {"generator": generator},
                                _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    if isinstance(p, Tensor):
        drawn = kernels.bernoulli__Tensor(self._data, p._data, _generator(generator))
    else:
        drawn = kernels.bernoulli__float(self._data, p, _generator(generator))
    return _write_drawn(self, drawn)


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """Fill with Exp(lambd): density lambd·exp(-lambd·x)."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(exponential_, (self, lambd), {"generator": generator},
                                _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    return _write_drawn(self, kernels.exponential_(self._data, lambd, _generator(generator)))


def _write_drawn(self: Tensor, drawn: Any) -> Tensor:
    """A kernel's draws (already in self's layout) written into self through copy_; an
    empty tensor draws nothing and is returned as it is."""
    if self.numel() == 0:
        return self
    return self.copy_(Tensor._make(drawn, None))


_UNSET: Any = object()


def random_(self: Tensor, from_: int | None = None, to: Any = _UNSET, *,
            generator: Generator | None = None) -> Tensor:
    """random_(): integers in [0, 2^mantissa] (floats) or [0, max] (integers);
    random_(to): [0, to); random_(from_, to): [from_, to), to=None meaning up to the
    dtype's maximum (torch's `from` is `from_` here, a Python keyword)."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(random_, (self, from_, to),
                                         {"generator": generator}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    if from_ is None and to is _UNSET:
        bounds = None
    else:
        bounds = (0, from_) if to is _UNSET else (from_ or 0, to)
    values = kernels.random_values(self._data.dtype, self.numel(), bounds, _generator(generator))
    return self if values is None else _write(self, values)


# -- factories ----------------------------------------------------------------------------------

# torch's signatures of the random factories, each twice: with a `generator` and without
# (codegen/python_signatures.py).
_RAND = Parser(SIGNATURES["rand"])
_RANDN = Parser(SIGNATURES["randn"])
_RANDINT = Parser(SIGNATURES["randint"])
_RANDPERM = Parser(SIGNATURES["randperm"])


def _sized(parser: Parser, size: tuple, options: dict) -> tuple:
    """(shape, dtype, requires_grad, generator, out) of rand(*size, ...) or randn: the
    usual call checked quickly, any other through the parser."""
    shape = factories.quick_shape(size) if size else None
    quick = factories.quick_options(options) if shape is not None else None
    if quick is not None:
        return shape, quick[0], quick[1], None, None
    _, bound = parser.parse(size, options)
    dtype, requires_grad = factories.options_of(bound)
    return (factories.bound_shape(parser.name, bound["size"], "numel", bound["out"]), dtype,
            requires_grad, bound.get("generator"), bound["out"])


def rand(*size: Any, **options: Any) -> Tensor:
    """torch.rand(*size, *, generator=None, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False): U(0, 1) samples of the given size."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rand, (*size,), {**options})
        if heard is not _modes.PASS:
            return heard
    return _samples(rand, _RAND, "check_uniform_bounds", sampling.uniform, size, options)


def randn(*size: Any, **options: Any) -> Tensor:
    """torch.randn(*size, *, generator=None, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False): N(0, 1) samples of the given size."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(randn, (*size,), {**options})
        if heard is not _modes.PASS:
            return heard
    return _samples(randn, _RANDN, "normal_kernel_cpu", sampling.normal, size, options)


def _samples(function: Any, parser: Any, kernel: str, draw: Any, size: tuple,
             options: dict) -> Tensor:
    """rand's and randn's work: `draw(generator, count, dtype)` samples of the size asked
    (a floating dtype, or `kernel`'s error), or `function`'s out= form."""
    shape, dtype, requires_grad, generator, out = _sized(parser, size, options)
    if out is not None:
        return _out.factory(parser.name, function, (shape,), {
            "dtype": dtype, "requires_grad": requires_grad, "generator": generator}, out)
    values = draw(_generator(generator), math.prod(shape), _float_dtype(dtype, kernel))
    return factories._finish(values.reshape(shape), requires_grad)


def randint(*args: Any, **options: Any) -> Tensor:
    """torch.randint(high, size) or randint(low, high, size), each with *, generator=None,
    out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False:
    integers in [low, high) (low 0 by default), int64 unless `dtype` says otherwise."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(randint, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    quick = _quick_randint(args, options)
    if quick is not None:
        low, high, shape, (dtype, requires_grad) = quick
        bound = {"out": None}
    else:
        _, bound = _RANDINT.parse(args, options)
        dtype, requires_grad = factories.options_of(bound)
        low = factories.bound_symint(bound["low"]) if "low" in bound else 0
        high = factories.bound_symint(bound["high"])
        shape = factories.bound_shape("randint", bound["size"], "numel", bound["out"])
    if bound["out"] is not None:
        return _out.factory("randint", randint, (low, high, shape), {
            "dtype": dtype, "requires_grad": requires_grad,
            "generator": bound.get("generator")}, bound["out"])
    numpy_dtype = (dtype or dtypes.int64).numpy
    values = kernels.random_values(numpy_dtype, math.prod(shape), (low, high),
                            _generator(bound.get("generator")))
    values = np.empty(0, numpy_dtype) if values is None else values.astype(numpy_dtype)
    return factories._finish(values.reshape(shape), requires_grad)


def _quick_randint(args: tuple, options: dict) -> tuple | None:
    """(low, high, shape, (dtype, requires_grad)) of randint(high, size) or
    randint(low, high, size) with plain ints and the usual keywords, else None."""
    if not 2 <= len(args) <= 3 or type(args[-2]) is not int or type(args[0]) is not int \
            or type(args[-1]) not in (tuple, list):
        return None
    shape = factories.quick_shape(args[-1:])
    quick = factories.quick_options(options) if shape is not None else None
    if quick is None:
        return None
    return (args[0] if len(args) == 3 else 0), args[-2], shape, quick


def randperm(*args: Any, **options: Any) -> Tensor:
    """torch.randperm(n, *, generator=None, out=None, dtype=torch.int64, layout=None,
    device=None, pin_memory=False, requires_grad=False): a random permutation of
    0 .. n-1."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(randperm, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    quick = factories.quick_options(options) if len(args) == 1 and type(args[0]) is int \
        else None
    if quick is not None:
        (dtype, requires_grad), n, bound = quick, args[0], {"out": None}
    else:
        _, bound = _RANDPERM.parse(args, options)
        dtype, requires_grad = factories.options_of(bound)
        n = factories.bound_symint(bound["n"])
    if n < 0 and bound["out"] is not None:
        raise RuntimeError(f"n must be non-negative, got{n}")  # (sic: torch's message)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if bound["out"] is not None:  # out's dtype unless one is given
        return _out.factory("randperm", randperm, (n,), {
            "dtype": dtype, "requires_grad": requires_grad,
            "generator": bound.get("generator")}, bound["out"])
    dtype = dtype or dtypes.int64
    if dtype is dtypes.bool_:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    limit = {dtypes.float32: (2**24 + 1, "2^24+1"), dtypes.float64: (2**53 + 1, "2^53+1")}
    if dtype in limit and n > limit[dtype][0]:
        name = _scalar_type_name(np.empty(0, dtype.numpy))
        raise RuntimeError(f"n cannot be greater than {limit[dtype][1]} for {name} type.")
    values = sampling.randperm(_generator(bound.get("generator")), n).astype(dtype.numpy)
    return factories._finish(values, requires_grad)


def normal(mean: Any, std: Any = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: dtypes.dtype | None = None,
           requires_grad: bool = False, device: Any = None) -> Tensor:
    """N(mean, std²) samples: `mean` and `std` are numbers (then `size` is needed) or
    tensors (broadcast together); the draws are N(0, 1), then scaled and shifted."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(normal, (mean, std, size), {"generator": generator, "dtype": dtype,
            "requires_grad": requires_grad, "device": device})
        if heard is not _modes.PASS:
            return heard
    generator = _generator(generator)
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_is_tensor and not std_is_tensor:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: two "
                            "numbers need a size")
        result = factories.empty(_shape((size,)), dtype=dtype)
        normal_(result, mean, std, generator=generator)
        return factories._finish(result._data, requires_grad)
    # tensor arguments: the spec's kernels (torch.normal records their nodes; this function,
    # for callers of this module, records none)
    if mean_is_tensor and std_is_tensor:
        drawn = kernels.normal_Tensor_Tensor(mean._data, std._data, generator)
    elif mean_is_tensor:
        drawn = kernels.normal_Tensor_float(mean._data, std, generator)
    else:
        drawn = kernels.normal_float_Tensor(mean, std._data, generator)
    return Tensor._make(drawn, None)


def bernoulli(input: Tensor, p: float | None = None, *,
              generator: Generator | None = None) -> Tensor:
    """0/1 samples in input's dtype: with probability input[i], or `p` when given."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(bernoulli, (input, p), {"generator": generator})
        if heard is not _modes.PASS:
            return heard
    result = factories.empty_like(input)
    return bernoulli_(result, input if p is None else p, generator=generator)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Category indices drawn from each row of probabilities (or weights) `input`: the
    spec's kernel (torch.multinomial is the spec's op, generated/ops.py)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(multinomial, (input, num_samples, replacement),
            {"generator": generator})
        if heard is not _modes.PASS:
            return heard
    return Tensor._make(kernels.multinomial(input._data, num_samples, replacement,
                                            _generator(generator)), None)


# -- *_like -------------------------------------------------------------------------------------

def empty_like_layout(input: Tensor, dtype: dtypes.dtype | None = None) -> Tensor:
    """An uninitialised tensor laid out as `input` is (torch's preserve_format)."""
    if _modes.active:  # a runtime mode may hear it (runtime/modes.py)
        heard = _modes.dispatch(empty_like_layout, (input, dtype), {}, _modes.RUNTIME)
        if heard is not _modes.PASS:
            return heard
    return Tensor._make(np.empty_like(input._data, dtype=dtype.numpy if dtype else None), None)


_RAND_LIKE = Parser(SIGNATURES["rand_like"])
_RANDN_LIKE = Parser(SIGNATURES["randn_like"])
_RANDINT_LIKE = Parser(SIGNATURES["randint_like"])


def rand_like(*args: Any, **options: Any) -> Tensor:
    """torch.rand_like(input, *, generator=None, memory_format=None, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(rand_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    input, dtype, requires_grad, bound = factories.like_arguments(_RAND_LIKE, args, options)
    result = uniform_(empty_like_layout(input, dtype), generator=bound.get("generator"))
    return factories._finish(result._data, requires_grad)


def randn_like(*args: Any, **options: Any) -> Tensor:
    """torch.randn_like(input, *, generator=None, memory_format=None, dtype=None,
    layout=None, device=None, pin_memory=False, requires_grad=False)."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(randn_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    input, dtype, requires_grad, bound = factories.like_arguments(_RANDN_LIKE, args, options)
    result = normal_(empty_like_layout(input, dtype), generator=bound.get("generator"))
    return factories._finish(result._data, requires_grad)


def randint_like(*args: Any, **options: Any) -> Tensor:
    """torch.randint_like(input, high) or randint_like(input, low, high), each with *,
    generator=None, memory_format=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False."""
    if _modes.active:  # a mode may hear the call (runtime/modes.py)
        heard = _modes.dispatch(randint_like, (*args,), {**options})
        if heard is not _modes.PASS:
            return heard
    _, bound = _RANDINT_LIKE.parse(args, options)
    dtype, requires_grad = factories.options_of(bound)
    low = factories.bound_symint(bound["low"]) if "low" in bound else 0
    high = factories.bound_symint(bound["high"])
    result = random_(empty_like_layout(bound["input"], dtype), low, high,
                     generator=bound.get("generator"))
    return factories._finish(result._data, requires_grad)


class RandomMethods:
    """The random Tensor methods, which runtime/methods.py sets on Tensor."""

    __slots__ = ()

    # (uniform_, normal_, bernoulli_, exponential_ and random_ are the spec's methods, which
    # record torch's nodes; the functions of those names here serve the module-level callers.
    # Tensor.bernoulli is runtime/tensor_functions.py's: without p, the spec's op;
    # Tensor.multinomial is the spec's method.)
