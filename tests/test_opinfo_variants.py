"""The other names OpInfo gives an op, against torch's, on tests/test_opinfo.py's samples:

- its Tensor method (`x.acos()` beside `torch.acos(x)`, which test_opinfo compares), where
  the function is the one test_opinfo maps;
- its aliases (`torch.arccos`, `x.arccos()`, `x.arccos_()`, `torch.arccos_`), each called as
  torch calls it.

Each variant's result (values, dtype, shape; for an in-place one, the tensor it changed and
the identity of what it returns) equals torch's in float64, and its gradient through a
non-leaf equals torch's where the OpInfo supports autograd. The op behind them is proven in
depth by test_opinfo and test_opinfo_inplace; this proves the names reach it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import runtime
from tests import test_opinfo as opinfo
from tests import test_opinfo_inplace as inplace


def _method(name: str) -> Callable | None:
    method = getattr(runtime.Tensor, name, None)
    if method is None or isinstance(method, property):
        return None
    return lambda self, *args, **kwargs: method(self, *args, **kwargs)


def _variants(op: Any) -> list[tuple[str, Callable, Callable, bool]]:
    """(label, torch's callable, gradgen's, in place) for the op's method and aliases."""
    found = []
    method = op.method_variant
    name = getattr(method, "__name__", "")
    if method is not None and name and name != "<lambda>" and _method(name) is not None:
        found.append((f"Tensor.{name}", method, _method(name), False))
    for alias in op.aliases:
        function = getattr(runtime, alias.name, None)
        if "." in alias.name:  # special.*, linalg.*, nn.functional.*
            owner: Any = runtime
            for part in alias.name.split("."):
                owner = getattr(owner, part, None)
            function = owner
        if alias.op is not None and callable(function):
            found.append((f"torch.{alias.name}", alias.op, function, False))
        short = alias.name.split(".")[-1]
        if alias.method_variant is not None and _method(short) is not None:
            found.append((f"Tensor.{short}", alias.method_variant, _method(short), False))
        if alias.inplace_variant is not None and _method(short + "_") is not None:
            found.append((f"Tensor.{short}_", alias.inplace_variant, _method(short + "_"), True))
            if callable(getattr(torch, short + "_", None)) and hasattr(runtime, short + "_"):
                found.append((f"torch.{short}_", getattr(torch, short + "_"),
                              getattr(runtime, short + "_"), True))
    return found


SAMPLES = 3  # the first samples of each op: the op itself is compared on more elsewhere
CASES = [(op, *variant) for op in opinfo.OPS for variant in _variants(op)]
IDS = [f"{opinfo._opinfo_name(case[0])}:{case[1]}" for case in CASES]


def _call(function: Callable, sample: Any, library: Any, in_place: bool) -> tuple[Any, Any]:
    """The variant's result on the sample, and the tensor it was called on."""
    if library is torch:
        values = (sample.input, sample.args, sample.kwargs)
    else:
        values = opinfo.to_gradgen((sample.input, sample.args, sample.kwargs))
    first, args, kwargs = values
    if in_place:
        first = first.clone()
    return function(first, *args, **kwargs), first


def _gradients(function: Callable, sample: Any, library: Any, in_place: bool) -> list:
    kind = torch.Tensor if library is torch else runtime.Tensor
    if library is torch:
        values = (sample.input, sample.args, sample.kwargs)
    else:
        values = opinfo.to_gradgen((sample.input, sample.args, sample.kwargs))
    inputs = opinfo._differentiable(values, kind)
    first, args, kwargs = values
    result = sample.output_process_fn_grad(
        function(first.clone() if in_place else first, *args, **kwargs))
    outputs = [o for o in opinfo._leaves(result, kind) if o.requires_grad]
    if not inputs or not outputs:
        return []
    return [opinfo._array(g) for g in opinfo._reverse(library, inputs, outputs, False)]


def _check(op: Any, theirs: Callable, ours: Callable, in_place: bool,
           left_out: Callable[[Any], bool]) -> None:
    supported = op.supported_dtypes("cpu")
    dtype = next(d for d in (torch.float64, torch.int64, torch.bool, torch.float32,
                             torch.complex128)  # (istft takes complex inputs only)
                 if d in supported)
    for index, sample in opinfo._samples(op, dtype, False, left_out):
        if index >= SAMPLES:
            break
        if not isinstance(sample.input, torch.Tensor):
            continue
        where = f"sample {index}: {sample.summary()}"
        result, torch_error = inplace._outcome(
            lambda sample=sample: _call(theirs, sample, torch, in_place))
        if torch_error is not None:  # (an in-place call on a shape it cannot keep)
            _, error = inplace._outcome(lambda sample=sample: _call(ours, sample, runtime,
                                                                   in_place))
            inplace._compare_errors(error, torch_error, where)
            continue
        want, target = result
        got, ours_target = _call(ours, sample, runtime, in_place)
        if in_place:
            assert got is ours_target, f"{where}: the result is not self"
            want, got = target, ours_target
        opinfo.assert_same(opinfo.defined_part(op, sample, got),
                           opinfo.defined_part(op, sample, want), where)
    if not op.supports_autograd or torch.float64 not in op.supported_backward_dtypes("cpu"):
        return
    if dtype != torch.float64:
        return
    if in_place and not op.supports_inplace_autograd:
        return
    for index, sample in opinfo._samples(op, torch.float64, True, left_out):
        if index >= SAMPLES:
            break
        if not isinstance(sample.input, torch.Tensor):
            continue
        where = f"gradient, sample {index}: {sample.summary()}"
        want, torch_error = inplace._outcome(
            lambda sample=sample: _gradients(theirs, sample, torch, in_place))
        if torch_error is not None:
            continue  # the refusal is compared above
        got = _gradients(ours, sample, runtime, in_place)
        opinfo.assert_same_derivatives(got, want, where)


@pytest.mark.parametrize(("op", "label", "theirs", "ours", "in_place"), CASES, ids=IDS)
def test_variant(op: Any, label: str, theirs: Callable, ours: Callable, in_place: bool) -> None:
    check = "float64" if in_place else "forward"
    known = inplace._known(op, check) if in_place else None
    if known is None:
        known_entry = opinfo._known_difference(op, "forward")
        known = (known_entry, False) if known_entry else None
    predicate = known[0][1] if known else None
    if known and predicate is None:
        pytest.skip(f"a known difference of the op itself: {known[0][0]}")
    _check(op, theirs, ours, in_place, predicate or (lambda sample: False))


def test_the_variants_cover_methods_and_aliases() -> None:
    labels = {case[1] for case in CASES}
    for expected in ("Tensor.acos", "torch.arccos", "Tensor.arccos_", "torch.arccos_",
                     "Tensor.greater_", "Tensor.multiply_", "Tensor.fix_", "Tensor.vdot"):
        assert expected in labels, expected
