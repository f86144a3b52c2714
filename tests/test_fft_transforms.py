"""torch.fft's transforms against torch: values and dtypes for each function over its
arguments (n / s, dim, norm), the errors of bad arguments, the node names, and the gradients
of a real loss through each transform (torch.autograd.grad on both sides)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch  # the oracle

import runtime
from tests.oracle import close, same, same_outcome

ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_DIM = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_DIM = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}

_RNG = np.random.default_rng(7)
_REAL = _RNG.standard_normal((4, 6, 5))
_COMPLEX = _RNG.standard_normal((4, 6, 5)) + 1j * _RNG.standard_normal((4, 6, 5))


def _input(lib: Any, kind: str, dtype: str = "64") -> Any:
    if kind == "real":
        return lib.tensor(_REAL, dtype=lib.float64 if dtype == "64" else lib.float32)
    if kind == "int":
        return lib.tensor((_REAL * 3).astype(np.int64))
    return lib.tensor(_COMPLEX, dtype=lib.complex128 if dtype == "64" else lib.complex64)


def _tolerance(kind: str) -> float:
    return 1e-5 if kind == "int" else 1e-9  # integers are transformed in float32


def _kinds(name: str) -> list[str]:
    return ["real", "int"] if name in REAL_ONLY else ["real", "int", "complex"]


ONE_DIM_CASES = [(name, kind, args) for name in ONE_DIM for kind in _kinds(name)
                 for args in ({}, {"n": 4}, {"n": 9}, {"dim": 0}, {"dim": -2, "n": 3},
                              {"norm": "ortho"}, {"norm": "forward", "dim": 1},
                              {"norm": "backward"})]


@pytest.mark.parametrize(("name", "kind", "args"), ONE_DIM_CASES)
def test_one_dim_values(name: str, kind: str, args: dict) -> None:
    close(lambda lib: getattr(lib.fft, name)(_input(lib, kind), **args).resolve_conj(),
          rtol=_tolerance(kind), atol=_tolerance(kind))


MULTI_CASES = [(name, kind, args) for name in TWO_DIM + N_DIM for kind in _kinds(name)
               for args in ({}, {"s": (3, 8)}, {"dim": (0, 2)}, {"s": (5, -1), "dim": (2, 0)},
                            {"norm": "ortho"}, {"norm": "forward", "dim": (-1, 1)})]
MULTI_CASES += [(name, "real", args) for name in N_DIM
                for args in ({"dim": (1,)}, {"s": (2, 3, 4)}, {"dim": (0, 1, 2), "norm": "ortho"})]


@pytest.mark.parametrize(("name", "kind", "args"), MULTI_CASES)
def test_multi_dim_values(name: str, kind: str, args: dict) -> None:
    close(lambda lib: getattr(lib.fft, name)(_input(lib, kind), **args).resolve_conj(),
          rtol=_tolerance(kind), atol=_tolerance(kind))


@pytest.mark.parametrize("name", ONE_DIM + TWO_DIM + N_DIM)
def test_float32_gives_complex64_or_float32(name: str) -> None:
    close(lambda lib: getattr(lib.fft, name)(_input(lib, "real", "32")).resolve_conj(),
          rtol=1e-4, atol=1e-4)


ERRORS = [
    lambda lib: lib.fft.fft(lib.ones(4), norm="bad"),
    lambda lib: lib.fft.fft(lib.ones(4), n=0),
    lambda lib: lib.fft.fft(lib.ones(4), n=-1),
    lambda lib: lib.fft.fft(lib.ones(4, 6), dim=2),
    lambda lib: lib.fft.fftn(lib.ones(4, 6), s=(3,), dim=(0, 1)),
    lambda lib: lib.fft.fftn(lib.ones(4, 6), dim=(0, 0)),
    lambda lib: lib.fft.rfft(lib.ones(4, dtype=lib.cfloat)),
    lambda lib: lib.fft.rfft2(lib.ones(4, 4, dtype=lib.cfloat)),
    lambda lib: lib.fft.ihfft(lib.ones(4, dtype=lib.cdouble)),
    lambda lib: lib.fft.ihfftn(lib.ones(4, 4, dtype=lib.cfloat)),
    lambda lib: lib.fft.irfft(lib.ones(4), n=0),
    lambda lib: lib.fft.irfft(lib.ones(1, dtype=lib.cfloat)),
    lambda lib: lib.fft.fft2(lib.ones(3)),
    lambda lib: lib.fft.fft(lib.ones(3, dtype=lib.float16)),
    lambda lib: lib.fft.fft(lib.tensor(1.0)),
    lambda lib: lib.fft.fft(lib.ones(3), dim=(0,)),
    lambda lib: lib.fft.fft("a"),
    lambda lib: lib.fft.fftn(lib.ones(4, 6), s=(2, 3, 4)),
    lambda lib: lib.fft.irfftn(lib.ones(4, 6, dtype=lib.cfloat), s=(4, 0)),
]


@pytest.mark.parametrize("program", ERRORS)
def test_errors(program: Any) -> None:
    same_outcome(lambda lib: program(lib).tolist())


def _node_names(result: Any) -> list[str]:
    names, node = [], result.grad_fn
    while node is not None and len(names) < 3:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return [n for n in names if "AccumulateGrad" not in n]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_node_names(name: str) -> None:
    def program(lib: Any) -> Any:
        x = _input(lib, "real").requires_grad_()
        z = _input(lib, "complex").requires_grad_()
        results = [getattr(lib.fft, name)(x)]
        if name not in REAL_ONLY:
            results.append(getattr(lib.fft, name)(z))
        return [_node_names(r)[:1] for r in results]
    same(program)


def _loss(lib: Any, result: Any) -> Any:
    """A real loss of a real or complex result, with weights that break its symmetries."""
    weights = lib.arange(result.numel(), dtype=lib.float64).reshape(result.shape) % 5 - 2
    if result.dtype.is_complex:
        parts = lib.view_as_real(result.resolve_conj())
        return (parts[..., 0] * weights).sum() + (parts[..., 1] ** 2 * weights).sum()
    return (result * weights).sum() + (result ** 2).sum()


def _differentiable_kinds(name: str) -> list[str]:
    return [kind for kind in _kinds(name) if kind != "int"]


GRADIENT_CASES = [(name, kind, args) for name in ONE_DIM for kind in _differentiable_kinds(name)
                  for args in ({}, {"n": 4}, {"n": 9, "norm": "ortho"}, {"dim": 0})]
GRADIENT_CASES += [(name, kind, args) for name in TWO_DIM + N_DIM
                   for kind in _differentiable_kinds(name)
                   for args in ({}, {"s": (3, 8)}, {"dim": (0, 2), "norm": "forward"},
                                {"s": (5, -1), "dim": (2, 0)})]


@pytest.mark.parametrize(("name", "kind", "args"), GRADIENT_CASES)
def test_gradients(name: str, kind: str, args: dict) -> None:
    def program(lib: Any) -> Any:
        x = _input(lib, kind).requires_grad_()
        return lib.autograd.grad(_loss(lib, getattr(lib.fft, name)(x, **args)), x)[0] \
            .resolve_conj()
    close(program, rtol=1e-8, atol=1e-8)


def test_gradient_of_a_float32_transform() -> None:
    def program(lib: Any) -> Any:
        x = _input(lib, "real", "32").requires_grad_()
        y = lib.fft.irfft(lib.fft.rfft(x) * (1 + 2j), n=7)
        return lib.autograd.grad((y * y).sum(), x)[0]
    close(program, rtol=1e-4, atol=1e-4)


def test_every_torch_fft_name() -> None:
    public = [n for n in dir(torch.fft) if not n.startswith("_") and callable(getattr(torch.fft, n))
              and n != "Tensor"]
    assert [n for n in public if not hasattr(runtime.fft, n)] == []


# -- torch.stft ----------------------------------------------------------------------------------

def _signal(lib: Any, *shape: int) -> Any:
    return lib.tensor(np.random.default_rng(3).standard_normal(shape), dtype=lib.float64)


STFT_CASES = [
    lambda lib: lib.stft(_signal(lib, 20), 8, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 2, 21), 4, hop_length=3, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, window=lib.hann_window(6, dtype=lib.float64),
                         win_length=6, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, center=False, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, onesided=False, normalized=True,
                         return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, win_length=5, hop_length=1, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20) * (1 + 0.5j), 8, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20).float(), 16, return_complex=True),
]


@pytest.mark.parametrize("program", STFT_CASES)
def test_stft_values(program: Any) -> None:
    close(program, rtol=1e-6, atol=1e-6)


def test_stft_real_output_warns_and_views_as_real() -> None:
    same_outcome(lambda lib: lib.stft(_signal(lib, 12), 4, return_complex=False).shape)


@pytest.mark.parametrize("program", [
    lambda lib: lib.stft(_signal(lib, 20), 8),
    lambda lib: lib.stft(_signal(lib, 20), 30, center=False, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, win_length=9, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 20), 8, hop_length=0, return_complex=True),
    lambda lib: lib.stft(_signal(lib, 1, 1, 20), 8, return_complex=True),
])
def test_stft_errors(program: Any) -> None:
    same_outcome(lambda lib: program(lib).tolist())


@pytest.mark.parametrize("args", [{}, {"hop_length": 3, "normalized": True},
                                  {"win_length": 6, "center": False}])
def test_stft_gradients(args: dict) -> None:
    def program(lib: Any) -> Any:
        x = _signal(lib, 2, 20).requires_grad_()
        return lib.autograd.grad(_loss(lib, lib.stft(x, 8, return_complex=True, **args)), x)[0]
    close(program, rtol=1e-8, atol=1e-8)
