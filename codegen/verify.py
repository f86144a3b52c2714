"""`python -m codegen verify [OP ...]`: prove each formula of the spec on its sample inputs.

What is proven is the spec given (`--spec`, derivatives.yaml by default), never the files in
generated/: `prove` renders the spec into a temporary `generated` package and runs the
repository's runtime/ on it, in this process when neither `runtime` nor `generated` has been
imported yet, else in a fresh `python -m codegen verify` subprocess. It writes nothing to
generated/.

For every sample of every op (float64 throughout):
  fd     the vector-Jacobian product from the generated backward against central finite
         differences of <v, op(x)>, for every differentiable input;
  gg     the same for the backward of the backward (create_graph=True), differentiating
         with respect to the inputs and to v, as torch's gradgradcheck does;
  torch  forward values, gradients and the grad_fn name against PyTorch's own op
         (torch.ops.aten.<name>.<overload>), when torch is installed;
and forward mode (the generated JVP, through runtime.autograd.forward_ad), with a random
tangent on each differentiable input in turn, then on all of them at once:
  jvp fd     against central differences of the op along the tangent;
  jvp rev    against reverse mode: <u, J v> from the JVP equals <Jᵀ u, v> from the VJP for
             the random cotangent u above, so the Jacobian the JVPs build column by column
             is the one the VJPs build row by row;
  jvp torch  against torch's forward AD on the same inputs and tangents.

A sample marked `kink: true` sits where the derivative jumps (relu at 0): finite
differences mean nothing there, so only the comparison with torch runs; the same holds
for a sample whose output is not float64 (`_to_copy` to float32).
An op without samples, a sample on which no check ran, a missing kernel and an op torch
lacks (unless its samples say `no_torch: true`) are failures too: nothing passes unproven.
The tests (tests/test_ops.py) run the same checks; this command prints them as a table.

For other commands: `prove(spec, ops, use_torch)` returns the checks, `format_table(checks)`
and `format_summary(checks, ...)` print them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codegen.formula import local_name
from codegen.generate import generate
from codegen.load import load_spec
from codegen.model import SAMPLE_KEYS, OpInfo, SpecError

# runtime, generated and torch are imported inside the functions that use them, never here:
# `prove` imports the spec's fresh `generated` (and runtime/ with it) itself, and refuses to
# once either is imported; torch is optional.

ROOT = Path(__file__).resolve().parent.parent
EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-7  # float64 central differences with EPS=1e-6
RAW_TOLERANCE = 1e-12  # raw and Tensor forms: the same arithmetic, in the same dtype

# Ops on which torch's forward AD raises, so their JVPs are checked against finite
# differences and reverse mode only: the first three have no forward formula in PyTorch
# 2.13's derivatives.yaml; norm.Scalar's (norm_jvp) gives a [1, 1] tangent for a 0-d norm.
TORCH_WITHOUT_FORWARD_AD = frozenset({
    "native_dropout_backward", "native_layer_norm_backward", "nll_loss_backward",
    "norm.Scalar",
})
# `torch_only: true` (see model.SAMPLE_FLAGS) serves formulas that treat one input as a
# function of another (native_layer_norm_backward's mean and rstd) and gradients that by
# design are not derivatives (embedding's padding_idx row); `no_jvp_rev: true` the latter.


@dataclass
class Check:
    """One row of the table: one check of one op on one sample (or of the op itself)."""

    op: str
    sample: int  # the sample's index in `samples:`; OP_LEVEL for a check of the op itself
    what: str  # a check of CHECKS ("fd", "gg", "torch grad", ...) or of FAILURES ("kernel")
    input: str
    error: float | None  # see _error: max abs difference over (ATOL/RTOL + |reference|)
    ok: bool
    detail: str = ""


OP_LEVEL = -1  # Check.sample of a check about the op, not one of its samples


@dataclass
class Sample:
    """One sample, as values for the runtime and for torch."""

    index: int
    args: dict[str, Any]  # schema name -> numpy array / list of arrays / value
    flags: dict[str, Any] = field(default_factory=dict)


def load(spec: Path | None = None) -> list[OpInfo]:
    """The spec's ops (derivatives.yaml by default); raises SpecError."""
    return load_spec(spec or ROOT / "derivatives.yaml")


def _tensor_value(spec: Any, rng: np.random.Generator) -> np.ndarray:
    if isinstance(spec, list | tuple) and all(isinstance(s, int) for s in spec):
        return rng.standard_normal(tuple(spec))
    if isinstance(spec, tuple):  # a frozen mapping
        spec = dict(spec)
    if not isinstance(spec, dict):
        raise ValueError(f"cannot make a tensor from sample {spec!r}")
    if "values" in spec:
        values = spec["values"]
        dtypes = {"int64": np.int64, "int32": np.int32, "bool": np.bool_}
        return np.array(_thaw(values), dtype=dtypes.get(spec.get("dtype"), np.float64))
    shape = tuple(_thaw(spec.get("shape", ())))
    if spec.get("complex"):
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    if "int" in spec:
        low, high = _thaw(spec["int"])
        return rng.integers(low, high, shape).astype(np.int64)
    if spec.get("bool"):
        return rng.random(shape) < 0.5
    if "low" in spec or "high" in spec:
        low, high = spec.get("low", 0.0), spec.get("high", 1.0)
        return rng.uniform(low, high, shape)
    return rng.standard_normal(shape)


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                         for v in value):
            return {k: _thaw(v) for k, v in value}
        return [_thaw(v) for v in value]
    return value


def samples(info: OpInfo, seed: int = 0) -> list[Sample]:
    """The op's samples made concrete, with a fixed seed per op and sample."""
    result = []
    for index, raw in enumerate(info.samples or ()):
        rng = np.random.default_rng([seed, index, sum(map(ord, info.name))])
        raw = dict(raw)
        flags = {k: raw.pop(k) for k in SAMPLE_KEYS if k in raw}
        if flags.get("torch_only"):
            flags["kink"] = True
        args: dict[str, Any] = {}
        for arg in info.schema.arguments:
            if arg.name not in raw:
                continue
            value = _thaw(raw.pop(arg.name))
            if arg.type.is_tensor_list:  # a `Tensor?[]` sample may hold None items
                args[arg.name] = [None if v is None else _tensor_value(v, rng) for v in value]
            elif arg.type.is_tensor and value is not None and not isinstance(
                    value, int | float) or arg.type.is_tensor and isinstance(value, dict):
                args[arg.name] = _tensor_value(value, rng)
            else:
                args[arg.name] = value
        if raw:
            raise ValueError(f"{info.name}: sample {index} names no argument: {sorted(raw)}")
        result.append(Sample(index, args, flags))
    return result


# -- running the op on either side -------------------------------------------------------------

def _unimplemented(info: OpInfo) -> set[str]:
    """The inputs whose formula is not_implemented(...): they require grad (the op records
    its node, as torch's does), but no check asks for their gradient."""
    return {name for d in info.derivatives if d.not_implemented is not None
            for name in d.var_names}


def _differentiable(info: OpInfo) -> list[str]:
    """The inputs whose gradients are checked: those with a formula."""
    unimplemented = _unimplemented(info)
    return [i.name for i in info.inputs if i.name not in unimplemented]


def _make_runtime_args(info: OpInfo, sample: Sample) -> tuple[dict, list]:
    import runtime

    kwargs, leaves = {}, []
    wanted = set(_differentiable(info))
    for name, value in sample.args.items():
        arg = info.schema.argument(name)
        if arg.type.is_tensor_list:
            tensors = [None if v is None else
                       runtime.tensor(v, requires_grad=name in wanted and v.dtype.kind in "fc")
                       for v in value]
            leaves.extend(t for t in tensors if t is not None and t.requires_grad)
            kwargs[local_name(name)] = tensors
        elif arg.type.is_tensor and isinstance(value, np.ndarray):
            floating = value.dtype.kind in "fc"
            tensor = runtime.tensor(value, requires_grad=floating and (
                name in wanted or name in _unimplemented(info)))
            if floating and name in wanted:
                leaves.append(tensor)
            kwargs[local_name(name)] = tensor
        elif arg.type.base == "ScalarType" and value is not None:
            kwargs[local_name(name)] = getattr(runtime, value)
        else:
            kwargs[local_name(name)] = value
    return kwargs, leaves


def _make_torch_args(info: OpInfo, sample: Sample) -> tuple[list, dict, list]:
    import torch

    positional, keywords, leaves = [], {}, []
    wanted = set(_differentiable(info))

    def convert(name: str, value: Any) -> Any:
        if isinstance(value, np.ndarray):
            tensor = torch.tensor(value)
            if value.dtype.kind in "fc" and (name in wanted or name in _unimplemented(info)):
                tensor.requires_grad_(True)
                if name in wanted:
                    leaves.append(tensor)
            return tensor
        return value

    for arg in info.schema.arguments:
        if arg.name not in sample.args:
            continue
        value = sample.args[arg.name]
        if arg.type.is_tensor_list:
            value = [convert(arg.name, v) for v in value]
        elif arg.type.base == "ScalarType" and value is not None:
            value = getattr(torch, value)
        else:
            value = convert(arg.name, value)
        if arg.kwarg_only or arg.default is not None:
            keywords[arg.name] = value
        else:
            positional.append(value)
    return positional, keywords, leaves


def _outputs(result: Any) -> list:
    if isinstance(result, list | tuple):
        return list(result)
    return [result]


def run_runtime(info: OpInfo, sample: Sample) -> tuple[list, list, dict, Callable]:
    """(outputs, leaves, kwargs, call): call(kwargs) runs the op again."""
    import runtime  # noqa: F401 - first: generated/ is a layer of the runtime, imported by it
    from generated import ops

    function = ops.OVERLOADS[info.name].wrapper
    kwargs, leaves = _make_runtime_args(info, sample)
    writes_self = _writes_self(info)

    def call(kw: dict) -> list:
        if writes_self:  # an in-place op may not write into a leaf: give it a copy
            kw = {**kw, "self_": kw["self_"].clone()}
        return _outputs(function(**kw))

    return call(kwargs), leaves, kwargs, call


def _writes_self(info: OpInfo) -> bool:
    alias = info.schema.arguments[0].type.alias if info.schema.arguments else None
    return bool(alias and alias.endswith("!"))


class TorchLacksOp(LookupError):
    """torch.ops.aten has no op of this schema name (a gradgen-only op)."""


def torch_lacks_message(name: str) -> str:
    return f"torch has no aten::{name}: mark its samples `no_torch: true`"


def torch_overload(info: OpInfo) -> Any:
    """torch.ops.aten.<base>.<overload>; TorchLacksOp (with the no_torch hint) if absent.

    ImportError when torch is not installed is left to the caller.
    """
    import torch

    try:
        packet = getattr(torch.ops.aten, info.schema.base)
        return getattr(packet, info.schema.overload or "default")
    except (AttributeError, RuntimeError):
        raise TorchLacksOp(torch_lacks_message(info.name)) from None


def run_torch(info: OpInfo, sample: Sample) -> tuple[list, list]:
    overload = torch_overload(info)
    positional, keywords, leaves = _make_torch_args(info, sample)
    if _writes_self(info):
        positional[0] = positional[0].clone()
    return _outputs(overload(*positional, **keywords)), leaves


# -- the checks -------------------------------------------------------------------------------

def _error(actual: np.ndarray, expected: np.ndarray) -> float:
    if np.iscomplexobj(actual) or np.iscomplexobj(expected):  # both parts compared
        return max(_error(np.real(actual), np.real(expected)),
                   _error(np.imag(actual), np.imag(expected)))
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    if actual.size == 0:
        return 0.0
    scale = ATOL / RTOL + np.abs(expected)
    with np.errstate(invalid="ignore"):
        ratio = np.abs(actual - expected) / scale
    # NaN where both are NaN is agreement (its scale is NaN too), and so is the same
    # infinity in both (inf - inf is NaN)
    agree = (np.isnan(actual) & np.isnan(expected)) | (actual == expected)
    return float(np.max(np.where(agree, 0.0, ratio)))


def _differentiable_outputs(info: OpInfo, outputs: list) -> list[int]:
    if len(info.schema.returns) == 1 and info.schema.returns[0].type.is_list:
        return list(range(len(outputs)))
    return [i for i, d in enumerate(info.output_differentiability)
            if d and i < len(outputs) and (outputs[i].dtype.is_floating_point
                                           or outputs[i].dtype.is_complex)]


def _cotangents(outputs: list, indices: list[int], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(outputs[i].shape) + 1j * rng.standard_normal(outputs[i].shape)
            if outputs[i].dtype.is_complex else rng.standard_normal(outputs[i].shape)
            for i in indices]


def _vjp_numeric(objective: Callable[[], float], leaf_arrays: list[np.ndarray]) -> list:
    """Central differences of a scalar objective with respect to every leaf element."""
    grads = []
    for array in leaf_arrays:
        grad = np.zeros(array.shape)
        flat = array.reshape(-1)
        for k in range(flat.size):
            original = flat[k]
            flat[k] = original + EPS
            plus = objective()
            flat[k] = original - EPS
            minus = objective()
            flat[k] = original
            grad.reshape(-1)[k] = (plus - minus) / (2 * EPS)
        grads.append(grad)
    return grads


@dataclass
class _Run:
    """The op run by gradgen on one sample: what every check of that sample reads."""

    info: OpInfo
    sample: Sample
    outputs: list
    leaves: list  # the differentiable inputs' tensors that require grad
    kwargs: dict
    call: Callable[[dict], list]  # call(kwargs) runs the op again
    diff_outputs: list[int]  # the indices of the differentiable outputs
    leaf_names: list[str]

    def check(self, what: str, input_: str, error: float | None, ok: bool,
              detail: str = "") -> Check:
        return Check(self.info.name, self.sample.index, what, input_, error, ok, detail)


def check_sample(info: OpInfo, sample: Sample, use_torch: bool = True) -> list[Check]:
    """Every check of one op on one sample, in the table's order: forward values and the
    grad_fn name against torch, arrays against Tensors, fd and gg, torch grad, then forward mode."""
    import runtime
    from runtime import autograd

    outputs, leaves, kwargs, call = run_runtime(info, sample)
    run = _Run(info, sample, outputs, leaves, kwargs, call,
               _differentiable_outputs(info, outputs) if info.differentiable else [],
               _leaf_names(info, sample))
    flags = sample.flags
    checks: list[Check] = []
    torch_run = None
    if use_torch and not flags.get("no_torch"):
        torch_run = run_torch(info, sample)
        checks += _torch_forward_checks(run, torch_run[0])
    if not flags.get("random"):
        checks += _forward_formula_checks(run)
    if not run.diff_outputs or not leaves:
        return checks
    if all(d.not_implemented is not None for d in info.derivatives):
        return checks + _not_implemented_checks(run, torch_run)

    cotangents = _cotangents(outputs, run.diff_outputs, seed=sample.index + 7)
    vs = [runtime.tensor(c) for c in cotangents]
    analytic = autograd.grad([outputs[i] for i in run.diff_outputs], leaves, vs,
                             allow_unused=True, retain_graph=True, materialize_grads=True)
    checks += _raw_form_checks(run, vs, analytic)
    # Central differences need float64 outputs: float32 rounds away a 1e-6 step.
    precise = all(outputs[i]._data.dtype == np.float64 for i in run.diff_outputs)
    fd = precise and not flags.get("kink")
    if fd and not flags.get("random"):
        checks += _finite_difference_checks(run, cotangents, analytic)
    if torch_run is not None and not flags.get("random"):
        checks += _torch_grad_checks(run, *torch_run, cotangents, analytic)
    if info.forward_derivatives and not flags.get("random"):
        checks += _forward_mode(run, cotangents, [g._data for g in analytic], fd=fd,
                                use_torch=torch_run is not None)
    return checks


def _torch_forward_checks(run: _Run, torch_outputs: list) -> list[Check]:
    """forward: the outputs against torch's (not for a random op); grad_fn: the node's name
    against torch's, when a node is made."""
    checks = []
    if not run.sample.flags.get("random"):
        for i, (ours, theirs) in enumerate(zip(run.outputs, torch_outputs, strict=False)):
            # (a ZeroTensor, _efficientzerotensor's, refuses numpy() unless forced)
            theirs = _plain(theirs.detach())
            error = _error(ours._data, theirs.numpy(force=theirs._is_zerotensor()))
            checks.append(run.check("forward", f"output {i}", error, error <= 1e-9 or error < RTOL))
    if run.diff_outputs and run.leaves:
        ours_name = run.outputs[run.diff_outputs[0]].grad_fn.name()
        theirs_fn = torch_outputs[run.diff_outputs[0]].grad_fn
        theirs_name = theirs_fn.name() if theirs_fn is not None else None
        checks.append(run.check("grad_fn", ours_name, None, ours_name == theirs_name,
                                f"torch: {theirs_name}"))
    return checks


def _kernel_value(value: Any) -> Any:
    """An argument as a kernel takes it: a Tensor's array, a dtype as numpy's."""
    from runtime import Tensor, dtypes
    from runtime.recording import numpy_dtype

    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, list):
        return [_kernel_value(v) for v in value]
    return numpy_dtype(value) if isinstance(value, dtypes.dtype) else value


def _forward_formula_checks(run: _Run) -> list[Check]:
    """formula: where an entry has both a `forward:` formula and a kernel written by hand
    (which the op runs), the kernel derived from the formula must give the same outputs."""
    from generated import spec_kernels
    from runtime import kernels

    info = run.info
    name = info.schema.kernel_name
    if info.forward_formula is None or not hasattr(kernels, name):
        return []
    kwargs = {("self" if k == "self_" else k): _kernel_value(v) for k, v in run.kwargs.items()}
    derived = getattr(spec_kernels, name)(**kwargs)
    derived = list(derived) if isinstance(derived, tuple | list) else [derived]
    checks = []
    for i, ours in enumerate(run.outputs):
        theirs = np.asarray(derived[i]) if i < len(derived) else None
        error = float("inf") if theirs is None else _error(theirs, ours._data)
        same_dtype = theirs is not None and theirs.dtype == ours._data.dtype
        detail = "forward: formula against the kernel" if same_dtype else \
            f"forward: formula gives {getattr(theirs, 'dtype', None)}, the kernel " \
            f"{ours._data.dtype}"
        checks.append(run.check("formula", f"output {i}", error, same_dtype and error < RTOL,
                                detail))
    return checks


def _raw_form_checks(run: _Run, vs: list, analytic: list) -> list[Check]:
    """raw: the first-order backward (`analytic`) ran the formulas on numpy arrays
    (array_ops); on Tensors (tensor_ops) they must give the same gradients."""
    from runtime import autograd, engine

    with engine.tensor_backward():
        tensor_form = autograd.grad([run.outputs[i] for i in run.diff_outputs], run.leaves, vs,
                                    allow_unused=True, materialize_grads=True)
    form = "arrays against Tensors"
    checks = []
    for leaf_name, ours, theirs in zip(run.leaf_names, analytic, tensor_form, strict=True):
        error = _error(ours._data, theirs._data)
        same_dtype = ours._data.dtype == theirs._data.dtype
        checks.append(run.check("raw", leaf_name, error, same_dtype and error <= RAW_TOLERANCE,
                                form))
    return checks


def _finite_difference_checks(run: _Run, cotangents: list[np.ndarray],
                              analytic: list) -> list[Check]:
    """fd: the vector-Jacobian products against central differences of <v, op(x)>; then gg,
    unless the sample says no_gradgrad."""
    import runtime

    def objective() -> float:
        # The leaves' arrays are perturbed in place; the op reads them through kwargs.
        with runtime.no_grad():
            outs = run.call(run.kwargs)
        return float(sum(np.sum(outs[i]._data.astype(np.float64) * c)
                         for i, c in zip(run.diff_outputs, cotangents, strict=True)))

    numeric = _vjp_numeric(objective, [leaf._data for leaf in run.leaves])
    checks = []
    for leaf_name, ours, theirs in zip(run.leaf_names, analytic, numeric, strict=True):
        error = _error(ours._data, theirs)
        checks.append(run.check("fd", leaf_name, error, error < RTOL * 10))
    if not run.sample.flags.get("no_gradgrad"):
        checks += _gradgrad(run, cotangents)
    return checks


def _backward_error(grad: Callable, outputs: list, leaves: list, ones: Callable) -> str:
    """The error a backward through `outputs` raises, as `Class: message`."""
    try:
        grad(outputs, leaves, [ones(o) for o in outputs], allow_unused=True)
    except Exception as error:  # noqa: BLE001 - the error is what is checked
        return f"{type(error).__name__}: {error}"
    return "no error"


def _not_implemented_checks(run: _Run, torch_run: tuple | None) -> list[Check]:
    """An op whose every derivative is `not_implemented` (torch's acosh_): its backward
    raises, with torch's error when torch is there to compare."""
    import runtime
    from runtime import autograd

    outputs = [run.outputs[i] for i in run.diff_outputs]
    ours = _backward_error(autograd.grad, outputs, run.leaves, runtime.ones_like)
    if torch_run is None:
        return [run.check("not implemented", "all", None, ours.startswith(
            "NotImplementedError: the derivative for "), ours)]
    import torch

    theirs = _backward_error(torch.autograd.grad, [torch_run[0][i] for i in run.diff_outputs],
                             torch_run[1], torch.ones_like)
    return [run.check("not implemented", "all", None, ours == theirs,
                      "" if ours == theirs else f"{ours}; torch: {theirs}")]


def _torch_grad_checks(run: _Run, torch_outputs: list, torch_leaves: list,
                       cotangents: list[np.ndarray], analytic: list) -> list[Check]:
    """torch grad: the vector-Jacobian products against torch's, for the same cotangents."""
    import torch

    torch_vs = [torch.tensor(c) for c in cotangents]
    theirs = torch.autograd.grad([torch_outputs[i] for i in run.diff_outputs], torch_leaves,
                                 torch_vs, allow_unused=True, materialize_grads=True)
    checks = []
    for leaf_name, ours, t in zip(run.leaf_names, analytic, theirs, strict=True):
        # (torch's gradient known to be zero is a ZeroTensor, which needs force= for numpy)
        error = _error(ours._data, _plain(t).numpy(force=t._is_zerotensor()))
        checks.append(run.check("torch grad", leaf_name, error, error < RTOL))
    return checks


# -- forward mode -----------------------------------------------------------------------------

def _swap(value: Any, replacements: dict[int, Any]) -> Any:
    """`value` with the tensors in `replacements` (by id) swapped in, also inside lists."""
    if isinstance(value, list):
        return [_swap(v, replacements) for v in value]
    return replacements.get(id(value), value)


def _jvp(kwargs: dict, call: Callable, leaves: list, tangents: dict[int, np.ndarray],
         diff_outputs: list[int]) -> list[np.ndarray]:
    """The output tangents from gradgen's forward AD, leaf k carrying tangents[k]."""
    import runtime
    from runtime.autograd import forward_ad

    with forward_ad.dual_level():
        duals = {id(leaves[k]): forward_ad.make_dual(leaves[k], runtime.tensor(t))
                 for k, t in tangents.items()}
        outputs = call({name: _swap(value, duals) for name, value in kwargs.items()})
        result = []
        for i in diff_outputs:
            tangent = forward_ad.unpack_dual(outputs[i]).tangent
            result.append(np.zeros(outputs[i].shape) if tangent is None
                          else tangent._data.astype(_wide(tangent._data.dtype)))
    return result


def _plain(tensor: Any) -> Any:
    """A torch tensor with its lazy conjugate and negative bits resolved (numpy() refuses
    them), as gradgen's values always are."""
    return tensor.resolve_conj().resolve_neg()


def _wide(dtype: np.dtype) -> type:
    """float64, or complex128 for a complex dtype: what tangents are compared in."""
    return np.complex128 if dtype.kind == "c" else np.float64


def _torch_jvp(info: OpInfo, sample: Sample, tangents: dict[int, np.ndarray],
               diff_outputs: list[int]) -> list[np.ndarray]:
    """The same through torch.autograd.forward_ad and torch.ops.aten.<op>.<overload>.

    Every leaf gets a tangent, zeros where `tangents` has none: some of torch's formulas
    write into the tangent of an input that has none, its immutable zero tensor, and raise.
    """
    import torch
    import torch.autograd.forward_ad as torch_forward_ad

    overload = torch_overload(info)
    positional, keywords, leaves = _make_torch_args(info, sample)
    with torch_forward_ad.dual_level():
        duals = {id(leaf): torch_forward_ad.make_dual(
                     leaf, torch.tensor(tangents[k]) if k in tangents else torch.zeros_like(leaf))
                 for k, leaf in enumerate(leaves)}
        positional = [_swap(v, duals) for v in positional]
        keywords = {name: _swap(v, duals) for name, v in keywords.items()}
        if _writes_self(info):
            positional[0] = positional[0].clone()
        outputs = _outputs(overload(*positional, **keywords))
        result = []
        for i in diff_outputs:
            tangent = torch_forward_ad.unpack_dual(outputs[i]).tangent
            # torch gives a ZeroTensor (which refuses .numpy()) for a tangent known to be 0
            result.append(np.zeros(tuple(outputs[i].shape))
                          if tangent is None or tangent._is_zerotensor()
                          else _plain(tangent.detach()).numpy().astype(
                              _wide(_plain(tangent.detach()).numpy().dtype)))
    return result


def _directional_difference(call: Callable, kwargs: dict, leaves: list,
                            tangents: dict[int, np.ndarray],
                            diff_outputs: list[int]) -> list[np.ndarray]:
    """(f(x + eps v) - f(x - eps v)) / 2 eps, the leaves' arrays moved in place and back."""
    import runtime

    def outputs_at(step: float) -> list[np.ndarray]:
        originals = {k: leaves[k]._data.copy() for k in tangents}
        for k, t in tangents.items():
            leaves[k]._data += step * t
        try:
            with runtime.no_grad():
                outs = call(kwargs)
            return [outs[i]._data.astype(np.float64) for i in diff_outputs]
        finally:
            for k, original in originals.items():
                leaves[k]._data[...] = original

    plus, minus = outputs_at(EPS), outputs_at(-EPS)
    return [(p - m) / (2 * EPS) for p, m in zip(plus, minus, strict=True)]


def _forward_mode(run: _Run, cotangents: list[np.ndarray], vjps: list[np.ndarray], fd: bool,
                  use_torch: bool) -> list[Check]:
    """jvp fd, jvp rev and jvp torch, for a tangent on each leaf alone, then on all."""
    info, sample, leaves = run.info, run.sample, run.leaves
    kwargs, call, diff_outputs = run.kwargs, run.call, run.diff_outputs
    checks = []
    rng = np.random.default_rng(sample.index + 13)
    directions = [rng.standard_normal(leaf.shape) + 1j * rng.standard_normal(leaf.shape)
                  if leaf.dtype.is_complex else rng.standard_normal(leaf.shape)
                  for leaf in leaves]
    cases = [(name, {k: directions[k]}) for k, name in enumerate(run.leaf_names)]
    if len(leaves) > 1:
        cases.append(("all", dict(enumerate(directions))))
    with_torch = use_torch and info.name not in TORCH_WITHOUT_FORWARD_AD

    def add(what: str, label: str, error: float | None, ok: bool, detail: str = "") -> None:
        checks.append(run.check(what, label, error, ok, detail))

    for label, tangents in cases:
        try:
            ours = _jvp(kwargs, call, leaves, tangents, diff_outputs)
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            add("jvp", label, None, False, f"{type(error).__name__}: {error}")
            continue
        flat = np.concatenate([o.reshape(-1) for o in ours])
        if fd:
            numeric = _directional_difference(call, kwargs, leaves, tangents, diff_outputs)
            error = _error(flat, np.concatenate([n.reshape(-1) for n in numeric]))
            add("jvp fd", label, error, error < RTOL * 10)
        # <u, J v> against <Jᵀ u, v>, scaled by the size of the terms summed (for complex
        # values the real inner product Re(conj(a) b), under which torch's gradient is J^H u).
        forward_terms = np.concatenate([np.real(np.conj(u) * o).reshape(-1) for u, o in
                                        zip(cotangents, ours, strict=True)])
        reverse_terms = np.concatenate([np.real(np.conj(vjps[k]) * t).reshape(-1)
                                        for k, t in tangents.items()])
        scale = ATOL / RTOL + max(np.abs(forward_terms).sum(), np.abs(reverse_terms).sum())
        error = abs(forward_terms.sum() - reverse_terms.sum()) / scale
        if not sample.flags.get("no_jvp_rev"):
            add("jvp rev", label, error, error < RTOL)
        if with_torch and not sample.flags.get("no_jvp_torch"):
            theirs = _torch_jvp(info, sample, tangents, diff_outputs)
            error = _error(flat, np.concatenate([t.reshape(-1) for t in theirs]))
            add("jvp torch", label, error, error < RTOL)
    return checks


def _leaf_names(info: OpInfo, sample: Sample) -> list[str]:
    names = []
    wanted = set(_differentiable(info))
    for arg in info.schema.arguments:
        value = sample.args.get(arg.name)
        if arg.name not in wanted or value is None:
            continue
        if arg.type.is_tensor_list:
            names.extend(f"{arg.name}[{i}]" for i, v in enumerate(value) if v.dtype.kind in "fc")
        elif isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            names.append(arg.name)
    return names


def _gradgrad(run: _Run, cotangents: list[np.ndarray]) -> list[Check]:
    """Second order: d/d(x, v) of <w, grad_x <v, f(x)>> against finite differences."""
    import runtime
    from runtime import autograd

    sample, leaves, diff_outputs = run.sample, run.leaves, run.diff_outputs
    kwargs, call = run.kwargs, run.call
    checks = []
    vs = [runtime.tensor(c, requires_grad=True) for c in cotangents]
    rng = np.random.default_rng(sample.index + 11)
    ws = [rng.standard_normal(leaf.shape) for leaf in leaves]

    def first_order(create_graph: bool) -> list:
        outs = call(kwargs)
        return list(autograd.grad([outs[i] for i in diff_outputs], leaves, vs,
                                  create_graph=create_graph, allow_unused=True,
                                  materialize_grads=True))

    try:
        grads = first_order(True)
        total = None
        for g, w in zip(grads, ws, strict=True):
            term = (g * runtime.tensor(w)).sum()
            total = term if total is None else total + term
        if not total.requires_grad:
            analytic = [np.zeros(t.shape) for t in leaves + vs]
        else:
            analytic = [g._data for g in autograd.grad(total, leaves + vs, allow_unused=True,
                                                       materialize_grads=True)]
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        return [run.check("gg", "all", None, False, f"{type(error).__name__}: {error}")]

    def objective() -> float:
        grads = first_order(False)
        return float(sum(np.sum(g._data * w) for g, w in zip(grads, ws, strict=True)))

    numeric = _vjp_numeric(objective, [leaf._data for leaf in leaves] + [v._data for v in vs])
    names = run.leaf_names + [f"grad[{i}]" for i in diff_outputs]
    for label, ours, theirs in zip(names, analytic, numeric, strict=True):
        error = _error(ours, theirs)
        checks.append(run.check("gg", label, error, error < RTOL * 100))
    return checks


# -- one op, all its samples ------------------------------------------------------------------

NO_SAMPLES = "no samples: add `samples:` to its entry"
NO_CHECK = ("no check ran: nothing in the sample is differentiable, and torch did not "
            "compare it (--no-torch, `no_torch: true`, or an op torch lacks)")


def verify(infos: Iterable[OpInfo], use_torch: bool) -> list[Check]:
    """Every check of every op of `infos`, run on the `generated` package imported here.

    This proves whatever `generated` the process imports: to prove a spec, call `prove`,
    which imports the spec's own freshly generated code. Nothing passes unproven: an op
    without samples, a sample on which no check ran, a missing kernel, and (with
    `use_torch`) an op torch lacks are failed checks.
    """
    checks: list[Check] = []
    for info in infos:
        checks.extend(_verify_op(info, use_torch))
    return checks


def _verify_op(info: OpInfo, use_torch: bool) -> list[Check]:
    def failure(what: str, input_: str, detail: str, sample: int = OP_LEVEL) -> Check:
        return Check(info.name, sample, what, input_, None, False, detail)

    if not info.samples:
        return [failure("samples", "", NO_SAMPLES)]
    try:
        op_samples = samples(info)
    except ValueError as error:
        return [failure("samples", "", str(error))]
    checks: list[Check] = []
    if use_torch and any(not s.flags.get("no_torch") for s in op_samples):
        try:
            torch_overload(info)
        except TorchLacksOp as error:
            checks.append(failure("torch", f"aten::{info.name}", str(error)))
            use_torch = False  # the other checks still run, without torch
        except ImportError as error:
            checks.append(failure("torch", "", f"torch is not installed ({error}): install "
                                               "it, or verify without torch (--no-torch)"))
            use_torch = False
    from runtime import kernels

    kernel = info.schema.kernel_name
    if not hasattr(kernels, kernel) and info.forward_formula is None:
        checks.append(failure("kernel", kernel, f"runtime/kernels.py has no function "
                                                f"`{kernel}`: write {info.name}'s kernel there "
                                                "(or give its entry a `forward:` formula)"))
        return checks
    for sample in op_samples:
        try:
            found = check_sample(info, sample, use_torch)
        except Exception as error:  # noqa: BLE001 - a crash is a failed check, not a stop
            found = [failure("run", "", f"{type(error).__name__}: {error}", sample.index)]
        checks.extend(found or [failure("checks", "", NO_CHECK, sample.index)])
    return checks


# -- choosing ops -----------------------------------------------------------------------------

class UnknownOp(LookupError):
    """An op name the spec does not have; the message says which, with a close match."""


def unknown_op_message(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f"unknown op {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def select(infos: list[OpInfo], names: Iterable[str]) -> list[OpInfo]:
    """The ops named (a base name takes all its overloads), in spec order; all if none.

    Raises UnknownOp, one line per unknown name, with a `did you mean` from the base and
    full (`base.overload`) names.
    """
    names = list(names)
    if not names:
        return list(infos)
    known = {i.name for i in infos} | {i.schema.base for i in infos}
    unknown = [n for n in dict.fromkeys(names) if n not in known]
    if unknown:
        raise UnknownOp("\n".join(unknown_op_message(n, known) for n in unknown))
    wanted = set(names)
    return [i for i in infos if i.name in wanted or i.schema.base in wanted]


# -- proving a spec: its code generated fresh, never generated/ -------------------------------

DEFAULT_SPEC = ROOT / "derivatives.yaml"
_REQUEST, _RESULT = "request.json", "checks.json"  # in the temporary directory
_WORKER_FLAG = "--worker"  # internal: prove the package in DIR, as `prove` asked


def prove(spec: Path | str | None = None, ops: Iterable[str] = (),
          use_torch: bool = True) -> list[Check]:
    """Prove the formulas of `spec` (default derivatives.yaml) for `ops` (default: all).

    `ops` are base names (all overloads) or `base.overload` names. The spec is rendered
    (codegen's `generate`) into a `generated` package in a temporary directory, and the
    repository's runtime/ runs on it: what is proven is the spec's code, never the files
    in generated/, and nothing is written there. In a process that has not imported
    `runtime` or `generated`, this happens here (and both are unimported afterwards);
    otherwise in a fresh `python -m codegen verify` subprocess. Either way the proving
    side refuses to run unless `generated` was imported from the temporary directory.

    Returns the checks (`format_table` prints them). Raises SpecError for a bad spec and
    UnknownOp for a name the spec lacks. With use_torch and no torch installed, each op's
    torch check fails: pass use_torch=False to prove without it.
    """
    spec = Path(spec) if spec is not None else DEFAULT_SPEC
    infos = select(load(spec), ops)
    files = generate(spec)
    with tempfile.TemporaryDirectory(prefix="gradgen-verify-") as tmp:
        root = Path(tmp)
        (root / "generated").mkdir()
        for name, text in files.items():
            (root / "generated" / name).write_text(text, encoding="utf-8")
        if "runtime" in sys.modules or "generated" in sys.modules:
            return _prove_in_subprocess(root, spec, infos, use_torch)
        return _prove_here(root, infos, use_torch)


def _prove_here(root: Path, infos: list[OpInfo], use_torch: bool) -> list[Check]:
    """Import `generated` from root (runtime/ from the repository) and verify on it."""
    if "runtime" in sys.modules or "generated" in sys.modules:
        raise RuntimeError("runtime or generated is already imported: cannot prove fresh code")

    def failed(detail: str) -> list[Check]:
        return [Check(i.name, OP_LEVEL, "import", "generated", None, False, detail)
                for i in infos]

    added = [str(root), str(ROOT)]
    sys.path[:0] = added
    importlib.invalidate_caches()
    try:
        try:
            generated = importlib.import_module("generated")
            runtime = importlib.import_module("runtime")
        except Exception as error:  # noqa: BLE001 - every op fails, named
            return failed(f"the generated package does not import: "
                          f"{type(error).__name__}: {error}")
        for module, home in ((generated, root / "generated"), (runtime, ROOT / "runtime")):
            where = Path(module.__file__).resolve().parent
            if where != home.resolve():
                return failed(f"{module.__name__} was imported from {where}, not {home}: "
                              "nothing proven")
        return verify(infos, use_torch)
    finally:
        for entry in added:
            sys.path.remove(entry)
        for name in [m for m in sys.modules if m.split(".")[0] in ("generated", "runtime")]:
            del sys.modules[name]


def _prove_in_subprocess(root: Path, spec: Path, infos: list[OpInfo],
                         use_torch: bool) -> list[Check]:
    request = {"spec": str(spec.resolve()), "ops": [i.name for i in infos],
               "use_torch": use_torch}
    (root / _REQUEST).write_text(json.dumps(request), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    process = subprocess.run(
        [sys.executable, "-m", "codegen", "verify", _WORKER_FLAG, str(root)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    result = root / _RESULT
    if process.returncode or not result.exists():
        raise RuntimeError(f"the verify subprocess failed (exit {process.returncode}):\n"
                           f"{process.stderr[-3000:]}")
    sys.stderr.write(process.stderr)  # warnings, as they would show in this process
    return [Check(**c) for c in json.loads(result.read_text(encoding="utf-8"))]


def _worker(root: Path) -> int:
    """The subprocess side of `prove`: the request in root, the checks written back."""
    request = json.loads((root / _REQUEST).read_text(encoding="utf-8"))
    wanted = set(request["ops"])
    infos = [i for i in load(Path(request["spec"])) if i.name in wanted]
    checks = _prove_here(root, infos, request["use_torch"])
    rows = [{**asdict(c), "ok": bool(c.ok), "error": None if c.error is None else float(c.error)}
            for c in checks]  # numpy's bool_ and float64 as JSON's
    (root / _RESULT).write_text(json.dumps(rows), encoding="utf-8")
    return 0


# -- the table --------------------------------------------------------------------------------

def format_table(checks: Iterable[Check]) -> str:
    """The checks as the table `verify` prints: one row per check, details of failures."""
    lines = [f"{'op':<28} {'sample':>6}  {'check':<10} {'input':<14} {'error':>10}  result"]
    for c in checks:
        sample = "-" if c.sample == OP_LEVEL else str(c.sample)
        error = "" if c.error is None else f"{c.error:.2e}"
        verdict = "pass" if c.ok else "FAIL"
        detail = f"  {c.detail}" if c.detail and not c.ok else ""
        lines.append(f"{c.op:<28} {sample:>6}  {c.what:<10} {c.input:<14} {error:>10}  "
                     f"{verdict}{detail}")
    return "\n".join(lines)


def format_summary(checks: list[Check], note: str = "") -> str:
    """What failed, op by op, then `N passed, M failed, over K ops` (and the note)."""
    failed: dict[str, list[str]] = {}
    for c in checks:
        if not c.ok:
            if c.error is not None or c.what == "grad_fn":  # a comparison: which one
                reason = f"{c.what} {c.input}" + (f" ({c.detail})" if c.what == "grad_fn"
                                                   else "")
            elif c.sample == OP_LEVEL:  # about the op itself: what to do
                reason = c.detail
            else:  # a crash, or no check: what happened
                reason = f"{c.what} (sample {c.sample}): {c.detail}"
            failed.setdefault(c.op, [])
            if reason not in failed[c.op]:
                failed[c.op].append(reason)
    lines = ["failed:"] if failed else []
    lines += [f"  {op}: {'; '.join(reasons)}" for op, reasons in failed.items()]
    passed = sum(c.ok for c in checks)
    ops = len({c.op for c in checks})
    count = f"{passed} passed, {len(checks) - passed} failed, over {ops} ops"
    lines.append(f"{count}; {note}" if note else count)
    return "\n".join(lines)


# -- the command ------------------------------------------------------------------------------

EPILOG = f"""\
What it proves: the formulas of --spec (default derivatives.yaml), rendered fresh into a
temporary package: never the files in generated/, and nothing is written there. An edit
to the spec is proven without running `python -m codegen` first.

The table has one row per check, per sample, per input:
  sample   the sample's index in the op's `samples:` (- for a check of the op itself)
  input    the input differentiated (x[i]: an item of a Tensor[]; all: tangents on every
           input at once; grad[i]: the cotangent of output i, in gg)
  error    max |ours - reference| / (ATOL/RTOL + |reference|), ATOL={ATOL:g}, RTOL={RTOL:g}:
           a relative error where |reference| is well above {ATOL / RTOL:g}, the absolute
           difference / {ATOL / RTOL:g} near 0. Each check below ends with its pass mark
  check    forward     outputs against torch's op (torch.ops.aten.NAME.OVERLOAD); < RTOL
           grad_fn     the output's grad_fn name against torch's (NegBackward0); equal
           formula     where the entry has a `forward:` formula and a kernel written by
                       hand: the kernel derived from the formula against it; < RTOL
           raw         gradients of the raw backward (numpy arrays) against the Tensor
                       backward's: same dtype, error <= {RAW_TOLERANCE:g}
           fd          the backward (a vector-Jacobian product) against central finite
                       differences, step {EPS:g}; < 10 RTOL
           gg          second order: the backward of the backward against finite
                       differences, in the inputs and the cotangent; < 100 RTOL
           torch grad  gradients against torch.autograd.grad's; < RTOL
           jvp fd      forward mode (the JVP formula) against central differences along
                       a random tangent; < 10 RTOL
           jvp rev     forward against reverse mode: <u, J t> = <J^T u, t>; < RTOL
           jvp torch   the JVP against torch's forward AD; < RTOL
           failures that compare nothing: run, jvp (the op raised), samples (none),
           checks (none ran on a sample), kernel (runtime/kernels.py lacks it),
           torch (torch lacks the op), import (the generated code does not import)
  result   pass, or FAIL and what went wrong; a summary of the failures, op by op, follows

Sample flags (keys of a sample beside its arguments):
  kink: true         the derivative jumps there (relu at 0): no finite differences
                     (fd, gg, jvp fd); torch judges the gradients
  torch_only: true   the same, for another reason (a gradient that is not a derivative)
  no_torch: true     no comparison with torch; to verify an op torch.ops.aten lacks
                     (a `torch` row fails), mark each of its samples so
  no_gradgrad: true  no gg
  no_jvp_rev: true   no jvp rev (a backward that is not the derivative's transpose)
  no_jvp_torch: true no jvp torch (torch has no forward formula for the op)
  random: true       the op draws random numbers (dropout): only grad_fn and raw run

Exit status: 0 when every selected op was proven, 1 when a check failed (an op without
samples, a sample on which nothing ran included), 2 for a spec error or an unknown op.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m codegen verify", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Prove the spec's formulas on its sample inputs: finite differences "
                    "(first and second order,\nforward mode) and PyTorch.",
        epilog=EPILOG)
    parser.add_argument("ops", nargs="*", metavar="OP",
                        help="op names, base (all overloads) or base.overload; all by default")
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC,
                        help="the spec whose formulas to prove (default: derivatives.yaml)")
    parser.add_argument("--no-torch", action="store_true",
                        help="skip the comparison with torch")
    parser.add_argument(_WORKER_FLAG, type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.worker is not None:
        return _worker(args.worker)
    use_torch, note = not args.no_torch, "torch comparison skipped (--no-torch)"
    if use_torch:
        # Not imported here (seconds, before the spec is even read); a torch that is found
        # but fails to import fails each op's torch check with its ImportError.
        if importlib.util.find_spec("torch") is None:
            use_torch, note = False, "torch not installed: no torch comparison"
        else:
            note = ""
    try:
        checks = prove(args.spec, args.ops, use_torch)
    except (SpecError, UnknownOp) as error:
        print(error, file=sys.stderr)
        return 2
    if not checks:
        print(f"nothing to prove: {args.spec} has no ops", file=sys.stderr)
        return 1
    print(format_table(checks))
    print()
    print(format_summary(checks, note))
    return 0 if all(c.ok for c in checks) else 1
