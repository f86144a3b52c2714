"""Memory formats against torch: clone, contiguous, to and the dtype methods with
memory_format= give torch's strides (channels_last, channels_last_3d, preserve_format,
contiguous_format), is_contiguous(memory_format=) torch's answer, and torch's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import runtime

DATA = np.random.default_rng(0).standard_normal((2, 3, 4, 5, 6))


def _facts(tensor: Any) -> tuple:
    values = tensor.detach()  # (a complex one as its parts: a cast to real would warn once)
    values = values.resolve_conj().cdouble() if values.dtype.is_complex else values.double()
    return (tuple(tensor.shape), tuple(tensor.stride()), str(tensor.dtype),
            tensor.is_contiguous(), np.asarray(values.tolist()).tolist())


def same(program: Callable[[Any, Any], list], shape: tuple = (2, 3, 4, 5)) -> None:
    """`program(lib, x)` gives the same shapes, strides, dtypes, values and answers."""
    results = []
    for lib in (torch, runtime):
        x = lib.tensor(DATA.ravel()[:int(np.prod(shape))].reshape(shape).copy(), requires_grad=True)
        results.append([_facts(r) if isinstance(r, torch.Tensor | runtime.Tensor) else r
                        for r in program(lib, x)])
    assert results[1] == results[0]


def same_error(program: Callable[[Any, Any], Any], shape: tuple) -> None:
    messages = []
    for lib in (torch, runtime):
        x = lib.tensor(DATA.ravel()[:int(np.prod(shape))].reshape(shape).copy())
        with pytest.raises(RuntimeError) as caught:
            program(lib, x)
        messages.append(str(caught.value))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("name", ["clone", "contiguous", "float", "double", "half", "bfloat16",
                                  "long", "int", "bool", "byte", "char", "short", "cfloat",
                                  "cdouble"])
def test_channels_last_copies(name: str) -> None:
    same(lambda t, x: [getattr(x, name)(memory_format=t.channels_last),
                       getattr(x.permute(0, 2, 3, 1), name)(memory_format=t.channels_last)])


def test_channels_last_3d() -> None:
    same(lambda t, x: [x.clone(memory_format=t.channels_last_3d),
                       x.contiguous(memory_format=t.channels_last_3d),
                       x.to(memory_format=t.channels_last_3d),
                       x.clone(memory_format=t.channels_last_3d).is_contiguous(
                           memory_format=t.channels_last_3d),
                       x.is_contiguous(memory_format=t.channels_last_3d)], (2, 3, 4, 5, 6))


def test_is_contiguous_in_a_format() -> None:
    def program(t: Any, x: Any) -> list:
        last = x.clone(memory_format=t.channels_last)
        return [last.is_contiguous(), last.is_contiguous(memory_format=t.channels_last),
                last.is_contiguous(memory_format=t.contiguous_format),
                x.is_contiguous(memory_format=t.channels_last),
                x[:, :1].is_contiguous(memory_format=t.channels_last),
                x[:, :, :1, :1].is_contiguous(memory_format=t.channels_last),
                x[0].is_contiguous(memory_format=t.channels_last),
                last.contiguous() is last, last.contiguous(memory_format=t.channels_last) is last,
                x.contiguous(memory_format=t.contiguous_format) is x,
                x.to(memory_format=t.contiguous_format) is x,
                x.to(memory_format=t.channels_last) is x,
                last.to(memory_format=t.channels_last) is last]

    same(program)


def test_preserve_format_keeps_dense_strides() -> None:
    same(lambda t, x: [x.permute(0, 2, 3, 1).clone(memory_format=t.preserve_format),
                       x.transpose(1, 3).clone(memory_format=t.preserve_format),
                       x[:, :, ::2].clone(memory_format=t.preserve_format),
                       x.permute(0, 2, 3, 1)[:, :, ::2].clone(memory_format=t.preserve_format),
                       x.permute(0, 2, 3, 1).double(memory_format=t.preserve_format),
                       x.permute(0, 2, 3, 1).to(t.float32, memory_format=t.preserve_format),
                       x.clone(memory_format=t.contiguous_format),
                       x.permute(0, 2, 3, 1).clone(memory_format=t.contiguous_format),
                       t.clone(x, memory_format=t.channels_last)])


def test_gradients_through_formatted_copies() -> None:
    def program(t: Any, x: Any) -> list:
        y = x.clone(memory_format=t.channels_last) * 2 + x.float(
            memory_format=t.channels_last).double()
        y.sum().backward()
        return [y, x.grad]

    same(program)


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 4, 5, 6)])
def test_rank_errors(shape: tuple) -> None:
    same_error(lambda t, x: x.contiguous(memory_format=t.channels_last), shape)
    same_error(lambda t, x: x.half(memory_format=t.channels_last), shape)
    same_error(lambda t, x: x.to(memory_format=t.channels_last), shape)


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4, 5)])
def test_rank_errors_3d(shape: tuple) -> None:
    same_error(lambda t, x: x.clone(memory_format=t.channels_last_3d), shape)
    same_error(lambda t, x: x.contiguous(memory_format=t.channels_last_3d), shape)


def test_contiguous_refuses_preserve_format() -> None:
    same_error(lambda t, x: x.permute(0, 2, 3, 1).contiguous(memory_format=t.preserve_format),
               (2, 3, 4, 5))


def test_like_factories_in_a_memory_format() -> None:
    def program(t: Any, x: Any) -> list:
        x = x.detach()
        made = [f(x, memory_format=t.channels_last) for f in (t.zeros_like, t.ones_like)]
        made += [t.full_like(x, 2.5, memory_format=t.channels_last),
                 t.zeros_like(x.permute(0, 2, 3, 1), memory_format=t.preserve_format),
                 t.ones_like(x, memory_format=t.contiguous_format)]
        return made + [tuple(t.empty_like(x, memory_format=t.channels_last).stride())]

    same(program)
    same_error(lambda t, x: t.zeros_like(x, memory_format=t.channels_last), (2, 3, 4))
