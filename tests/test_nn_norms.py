"""GroupNorm, InstanceNorm1d/2d/3d, LocalResponseNorm, CrossMapLRN2d, RMSNorm, BatchNorm3d
and SyncBatchNorm, and F.group_norm, instance_norm, local_response_norm, rms_norm, against
PyTorch: values, gradients, running statistics, reprs, state_dict keys, warnings, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.oracle import close, same


def _data(shape: tuple[int, ...], seed: int = 0, dtype: str = "float32") -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 2 + 0.5).astype(dtype)


TIGHT = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "groups", "affine"), [
    ((2, 6, 5), 3, True), ((3, 4, 2, 3), 2, False), ((2, 4), 2, True), ((1, 6, 2, 2, 2), 1, True),
])
def test_group_norm(shape: tuple, groups: int, affine: bool, dtype: str) -> None:
    x, g = _data(shape, 1, dtype), _data(shape, 2, dtype)

    def program(lib: Any) -> list:
        input = lib.tensor(x, requires_grad=True)
        weight = lib.tensor(_data(shape[1:2], 3, dtype), requires_grad=True) if affine else None
        bias = lib.tensor(_data(shape[1:2], 4, dtype), requires_grad=True) if affine else None
        out = lib.nn.functional.group_norm(input, groups, weight, bias, eps=1e-3)
        out.backward(lib.tensor(g))
        grads = [weight.grad, bias.grad] if affine else []
        return [out, input.grad, *grads]

    close(program, *TIGHT[dtype])


def test_group_norm_module() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.GroupNorm(2, 4)
        no_bias = lib.nn.GroupNorm(2, 4, bias=False)
        plain = lib.nn.GroupNorm(4, 4, eps=0.1, affine=False)
        input = lib.tensor(_data((3, 4, 5), 1), requires_grad=True)
        out = module(input) + plain(input)
        out.pow(2).sum().backward()
        return [out, input.grad, module.weight.grad, module.bias.grad, repr(module),
                repr(plain), repr(no_bias), list(module.state_dict()),
                list(plain.state_dict()), list(no_bias.state_dict())]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.GroupNorm(3, 4)",
    "lib.nn.functional.group_norm(lib.zeros(4), 2)",
    "lib.nn.functional.group_norm(lib.zeros(2, 3, 4), 2)",
    "lib.nn.functional.group_norm(lib.zeros(1, 2), 2)",
    "lib.nn.functional.group_norm(lib.zeros(2, 4, 3), 2, lib.ones(3))",
    "lib.nn.functional.group_norm(lib.zeros(2, 4, 3), 2, None, lib.ones(2, 2))",
    "lib.nn.functional.group_norm(lib.zeros(2, 4, 3), 2, lib.ones(4), lib.ones(2))",
    "lib.nn.functional.group_norm(lib.ones(2, 4, 3), -2)",
    "lib.nn.functional.group_norm(lib.ones(0, 4, 3), 2, lib.ones(4), lib.ones(4))",
])
def test_group_norm_errors(call: str) -> None:
    same(lambda lib: repr(eval(call)))


# -- instance norm --------------------------------------------------------------------------------

@pytest.mark.parametrize(("cls", "shape"), [
    ("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)), ("InstanceNorm2d", (2, 3, 4, 3)),
    ("InstanceNorm2d", (3, 4, 3)), ("InstanceNorm3d", (2, 3, 2, 3, 2)),
])
@pytest.mark.parametrize("options", [
    {}, {"affine": True}, {"track_running_stats": True}, {"affine": True, "momentum": None,
                                                          "track_running_stats": True},
])
def test_instance_norm_modules(cls: str, shape: tuple, options: dict) -> None:
    x = _data(shape, 1)

    def program(lib: Any) -> list:
        module = getattr(lib.nn, cls)(3, **options)
        if module.affine:
            with lib.no_grad():
                module.weight.copy_(lib.tensor([0.5, 2.0, -1.0]))
                module.bias.copy_(lib.tensor([0.1, 0.2, 0.3]))
        input = lib.tensor(x, requires_grad=True)
        first = module(input)
        second = module(input * 2)
        module.eval()
        evaluated = module(input)
        (first.sum() + second.pow(2).sum() + evaluated.pow(3).sum()).backward()
        return [first, second, evaluated, input.grad, *[p.grad for p in module.parameters()],
                *module.buffers(), repr(module), list(module.state_dict())]

    close(program)


@pytest.mark.parametrize("use_input_stats", [True, False])
def test_functional_instance_norm(use_input_stats: bool) -> None:
    def program(lib: Any) -> list:
        input = lib.tensor(_data((2, 3, 4), 1, "float64"), requires_grad=True)
        weight = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        mean, var = lib.zeros(3, dtype=lib.float64) + 0.3, lib.ones(3, dtype=lib.float64) * 2
        out = lib.nn.functional.instance_norm(input, mean, var, weight, None, use_input_stats,
                                              0.2, 1e-3)
        out.pow(2).sum().backward()
        return [out, input.grad, weight.grad, mean, var]

    close(program, 1e-10, 1e-12)


@pytest.mark.parametrize("call", [
    "lib.nn.InstanceNorm1d(3)(lib.zeros(2, 3, 4, 5))",
    "lib.nn.InstanceNorm2d(3)(lib.zeros(3, 4))",
    "lib.nn.InstanceNorm3d(3)(lib.zeros(3, 4, 2))",
    "lib.nn.InstanceNorm1d(3, affine=True)(lib.zeros(2, 4, 5))",
    "lib.nn.InstanceNorm1d(3)(lib.ones(2, 4, 5)).shape",
    "lib.nn.InstanceNorm1d(3)(lib.zeros(2, 3, 1))",
    "lib.nn.functional.instance_norm(lib.zeros(2, 3, 1, 1))",
])
def test_instance_norm_errors_and_warnings(call: str) -> None:
    same(lambda lib: repr(eval(call)))


# -- batch norm 3d and sync batch norm ------------------------------------------------------------

@pytest.mark.parametrize(("cls", "shape"), [
    ("BatchNorm3d", (3, 2, 2, 3, 2)), ("SyncBatchNorm", (4, 2)), ("SyncBatchNorm", (2, 2, 3, 2)),
])
@pytest.mark.parametrize("options", [{}, {"affine": False, "momentum": None}])
def test_batch_norm_3d_and_sync_batch_norm(cls: str, shape: tuple, options: dict) -> None:
    x = _data(shape, 1)

    def program(lib: Any) -> list:
        module = getattr(lib.nn, cls)(2, **options)
        input = lib.tensor(x, requires_grad=True)
        outs = [module(input), module(input + 1)]
        module.eval()
        outs.append(module(input))
        sum(o.pow(2).sum() for o in outs).backward()
        return [*outs, input.grad, *[p.grad for p in module.parameters()], *module.buffers(),
                repr(module), list(module.state_dict())]

    close(program)


def test_convert_sync_batchnorm_keeps_parameters_and_buffers() -> None:
    def program(lib: Any) -> list:
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4),
                                  lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False)))
        model(lib.randn(5, 3))
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        return [repr(converted), list(converted.state_dict()),
                *converted.state_dict().values(), converted[1].weight is model[1].weight]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.BatchNorm3d(2)(lib.zeros(2, 2, 3, 3))",
    "lib.nn.SyncBatchNorm(2)(lib.zeros(2))",
    "lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0))",
])
def test_batch_norm_3d_and_sync_errors(call: str) -> None:
    same(lambda lib: repr(eval(call)))


# -- local response norm --------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "size"), [
    ((2, 5, 4), 3), ((2, 6, 3, 3), 2), ((1, 4, 2, 2, 3), 5), ((2, 3, 4), 1),
])
def test_local_response_norm(shape: tuple, size: int) -> None:
    def program(lib: Any) -> list:
        input = lib.tensor(_data(shape, 1, "float64"), requires_grad=True)
        out = lib.nn.functional.local_response_norm(input, size, alpha=0.1, beta=0.6, k=1.5)
        module = lib.nn.LocalResponseNorm(size)
        out2 = module(input)
        (out.pow(2).sum() + out2.sum()).backward()
        return [out, out2, input.grad, repr(module)]

    close(program, 1e-10, 1e-12)


def test_cross_map_lrn2d() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.CrossMapLRN2d(3, alpha=0.1, beta=0.5, k=2)
        input = lib.tensor(_data((2, 4, 3, 3), 1), requires_grad=True)
        out = module(input)
        out.sum().backward()
        return [out, input.grad, repr(module)]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.functional.local_response_norm(lib.zeros(2, 3), 2)",
    "lib.nn.functional.local_response_norm(lib.zeros(0, 3, 2), 2).shape",
    "lib.nn.CrossMapLRN2d(3)(lib.zeros(2, 3, 4))",
    "lib.nn.functional.local_response_norm(lib.ones(2, 4, 3), 0)",
    "lib.nn.functional.local_response_norm(lib.ones(2, 4, 3, 2), 0)",
])
def test_local_response_norm_errors(call: str) -> None:
    same(lambda lib: repr(eval(call)))


# -- RMS norm -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "normalized", "eps", "weighted"), [
    ((3, 4), [4], None, True), ((2, 3, 4), (3, 4), 1e-3, True), ((5,), [5], None, False),
])
def test_rms_norm(shape: tuple, normalized: Any, eps: Any, weighted: bool, dtype: str) -> None:
    def program(lib: Any) -> list:
        input = lib.tensor(_data(shape, 1, dtype), requires_grad=True)
        norm_shape = tuple(normalized)
        weight = (lib.tensor(_data(norm_shape, 2, dtype), requires_grad=True)
                  if weighted else None)
        out = lib.nn.functional.rms_norm(input, normalized, weight, eps)
        out.pow(2).sum().backward()
        return [out, input.grad] + ([weight.grad] if weighted else [])

    close(program, *TIGHT[dtype])


def test_rms_norm_module() -> None:
    def program(lib: Any) -> list:
        module = lib.nn.RMSNorm([2, 3], eps=1e-4)
        plain = lib.nn.RMSNorm(3, elementwise_affine=False)
        input = lib.tensor(_data((4, 2, 3), 1), requires_grad=True)
        out = module(input) * plain(input)
        out.sum().backward()
        return [out, input.grad, module.weight.grad, repr(module), repr(plain),
                list(module.state_dict()), list(plain.state_dict())]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.functional.rms_norm(lib.zeros(2, 3), [4])",
    "lib.nn.functional.rms_norm(lib.zeros(2, 3), 3)",
    "lib.nn.functional.rms_norm(lib.zeros(2, 3), [3], lib.ones(2))",
    "lib.nn.functional.rms_norm(lib.zeros(2, 3), [])",
    "lib.nn.functional.rms_norm(lib.zeros(3), [2, 3])",
    "lib.nn.functional.rms_norm(lib.zeros(2, 3, 4), [2, 4, 4])",
    "lib.nn.functional.rms_norm(lib.ones(2, 5), [5], lib.ones(5, 1))",
])
def test_rms_norm_errors(call: str) -> None:
    same(lambda lib: repr(eval(call)))


# -- the lazy forms -------------------------------------------------------------------------------

@pytest.mark.parametrize(("cls", "options", "shape"), [
    ("LazyBatchNorm3d", {}, (2, 3, 2, 2, 2)),
    ("LazyBatchNorm3d", {"affine": False, "momentum": None}, (3, 2, 1, 2, 2)),
    ("LazyInstanceNorm1d", {}, (2, 3, 4)),
    ("LazyInstanceNorm2d", {"affine": False, "track_running_stats": False}, (2, 3, 4, 2)),
    ("LazyInstanceNorm3d", {"eps": 1e-3}, (2, 3, 2, 2, 3)),
])
def test_lazy_norms(cls: str, options: dict, shape: tuple) -> None:
    def program(lib: Any) -> list:
        module = getattr(lib.nn, cls)(**options)
        before = [repr(module), list(module.state_dict()), module.has_uninitialized_params()]
        input = lib.tensor(_data(shape, 1), requires_grad=True)
        out = module(input)
        out.pow(3).sum().backward()
        return [*before, type(module).__name__, repr(module), list(module.state_dict()), out,
                input.grad, *module.buffers(), *[p.grad for p in module.parameters()]]

    close(program)


@pytest.mark.parametrize("call", [
    "lib.nn.LazyInstanceNorm2d()(lib.ones(3, 4, 5))",
    "lib.nn.LazyBatchNorm3d()(lib.ones(2, 3, 4))",
])
def test_lazy_norm_errors(call: str) -> None:
    same(lambda lib: repr(eval(call)))
