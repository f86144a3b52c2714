"""`python -m codegen verify [OP ...]`: prove each formula of the spec on its sample inputs.

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
The tests (tests/test_ops.py) run the same checks; this command prints them as a table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from codegen.formula import local_name
from codegen.load import load_spec
from codegen.model import OpInfo

ROOT = Path(__file__).resolve().parent.parent
EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-7  # float64 central differences with EPS=1e-6
RAW_TOLERANCE = 1e-12  # raw and Tensor forms: the same arithmetic, in the same dtype
SAMPLE_KEYS = ("kink", "no_gradgrad", "no_torch", "random", "torch_only", "no_jvp_rev")
# `no_jvp_rev: true` skips the comparison of forward and reverse mode on a sample whose
# backward is by design not the transpose of the derivative (embedding's padding_idx row).

# Ops on which torch's forward AD raises, so their JVPs are checked against finite
# differences and reverse mode only: the first three have no forward formula in PyTorch
# 2.13's derivatives.yaml; norm.Scalar's (norm_jvp) gives a [1, 1] tangent for a 0-d norm.
TORCH_WITHOUT_FORWARD_AD = frozenset({
    "native_dropout_backward", "native_layer_norm_backward", "nll_loss_backward",
    "norm.Scalar",
})
# `torch_only: true` runs the checks a kink sample runs (torch alone) where finite differences
# don't apply for another reason: formulas that treat one input as a function of another
# (native_layer_norm_backward's mean and rstd), gradients that by design are not derivatives
# (embedding's padding_idx row).


@dataclass
class Check:
    op: str
    sample: int
    what: str  # "forward", "grad_fn", "fd", "gg", "torch grad"
    input: str
    error: float | None  # max abs error, scaled by the reference magnitude
    ok: bool
    detail: str = ""


@dataclass
class Sample:
    """One sample, as values for the runtime and for torch."""

    index: int
    args: dict[str, Any]  # schema name -> numpy array / list of arrays / value
    flags: dict[str, Any] = field(default_factory=dict)


def load(spec: Path | None = None) -> list[OpInfo]:
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
        return np.array(_thaw(values), dtype=np.int64 if spec.get("dtype") == "int64"
                        else np.bool_ if spec.get("dtype") == "bool" else np.float64)
    shape = tuple(_thaw(spec.get("shape", ())))
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

def _differentiable(info: OpInfo) -> list[str]:
    return [i.name for i in info.inputs]


def _make_runtime_args(info: OpInfo, sample: Sample) -> tuple[dict, list]:
    import runtime

    kwargs, leaves = {}, []
    wanted = set(_differentiable(info))
    for name, value in sample.args.items():
        arg = info.schema.argument(name)
        if arg.type.is_tensor_list:
            tensors = [None if v is None else
                       runtime.tensor(v, requires_grad=name in wanted and v.dtype.kind == "f")
                       for v in value]
            leaves.extend(t for t in tensors if t is not None and t.requires_grad)
            kwargs[local_name(name)] = tensors
        elif arg.type.is_tensor and isinstance(value, np.ndarray):
            tensor = runtime.tensor(value, requires_grad=name in wanted and value.dtype.kind == "f")
            if tensor.requires_grad:
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
            if name in wanted and value.dtype.kind == "f":
                tensor.requires_grad_(True)
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
    from generated import ops

    function = ops.OVERLOADS[info.name]
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


def run_torch(info: OpInfo, sample: Sample) -> tuple[list, list]:
    import torch

    packet = getattr(torch.ops.aten, info.schema.base)
    overload = getattr(packet, info.schema.overload or "default")
    positional, keywords, leaves = _make_torch_args(info, sample)
    if _writes_self(info):
        positional[0] = positional[0].clone()
    return _outputs(overload(*positional, **keywords)), leaves


# -- the checks -------------------------------------------------------------------------------

def _error(actual: np.ndarray, expected: np.ndarray) -> float:
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    if actual.size == 0:
        return 0.0
    scale = ATOL / RTOL + np.abs(expected)
    with np.errstate(invalid="ignore"):
        diff = np.abs(actual - expected)
        diff = np.where(np.isnan(actual) & np.isnan(expected), 0.0, diff)
    return float(np.max(diff / scale))


def _differentiable_outputs(info: OpInfo, outputs: list) -> list[int]:
    if len(info.schema.returns) == 1 and info.schema.returns[0].type.is_list:
        return list(range(len(outputs)))
    return [i for i, d in enumerate(info.output_differentiability)
            if d and i < len(outputs) and outputs[i].dtype.is_floating_point]


def _cotangents(outputs: list, indices: list[int], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(outputs[i].shape) for i in indices]


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


def check_sample(info: OpInfo, sample: Sample, use_torch: bool = True) -> list[Check]:
    import runtime
    from runtime import autograd

    checks: list[Check] = []
    name = info.name

    def add(what: str, input_: str, error: float | None, ok: bool, detail: str = "") -> None:
        checks.append(Check(name, sample.index, what, input_, error, ok, detail))

    outputs, leaves, kwargs, call = run_runtime(info, sample)
    diff_outputs = _differentiable_outputs(info, outputs) if info.differentiable else []
    leaf_names = _leaf_names(info, sample)

    torch_outputs = torch_leaves = None
    if use_torch and not sample.flags.get("no_torch"):
        torch_outputs, torch_leaves = run_torch(info, sample)
        if not sample.flags.get("random"):
            for i, (ours, theirs) in enumerate(zip(outputs, torch_outputs, strict=False)):
                error = _error(ours._data, theirs.detach().numpy())
                add("forward", f"output {i}", error, error <= 1e-9 or error < RTOL)
        if diff_outputs and leaves:
            ours_name = outputs[diff_outputs[0]].grad_fn.name()
            theirs_fn = torch_outputs[diff_outputs[0]].grad_fn
            theirs_name = theirs_fn.name() if theirs_fn is not None else None
            add("grad_fn", ours_name, None, ours_name == theirs_name,
                f"torch: {theirs_name}")

    if not diff_outputs or not leaves:
        return checks

    cotangents = _cotangents(outputs, diff_outputs, seed=sample.index + 7)
    vs = [runtime.tensor(c) for c in cotangents]
    analytic = autograd.grad([outputs[i] for i in diff_outputs], leaves, vs, allow_unused=True,
                             retain_graph=True, materialize_grads=True)

    # The first-order backward above ran each node's raw form (on arrays) where it has one:
    # the Tensor form must give the same gradients.
    from runtime import engine

    with engine.tensor_backward():
        tensor_form = autograd.grad([outputs[i] for i in diff_outputs], leaves, vs,
                                    allow_unused=True, materialize_grads=True)
    node = outputs[diff_outputs[0]].grad_fn
    form = "raw form" if "apply_raw" in vars(type(node)) else "no raw form: Tensor form run"
    for leaf_name, ours, theirs in zip(leaf_names, analytic, tensor_form, strict=True):
        error = _error(ours._data, theirs._data)
        same_dtype = ours._data.dtype == theirs._data.dtype
        add("raw", leaf_name, error, same_dtype and error <= RAW_TOLERANCE, form)

    # Central differences need float64 outputs: float32 rounds away a 1e-6 step.
    precise = all(outputs[i]._data.dtype == np.float64 for i in diff_outputs)
    if precise and not sample.flags.get("kink") and not sample.flags.get("random"):
        leaf_arrays = [leaf._data for leaf in leaves]

        def objective() -> float:
            # The leaves' arrays are perturbed in place; the op reads them through kwargs.
            with runtime.no_grad():
                outs = call(kwargs)
            return float(sum(np.sum(outs[i]._data.astype(np.float64) * c)
                             for i, c in zip(diff_outputs, cotangents, strict=True)))

        numeric = _vjp_numeric(objective, leaf_arrays)
        for leaf_name, ours, theirs in zip(leaf_names, analytic, numeric, strict=True):
            error = _error(ours._data, theirs)
            add("fd", leaf_name, error, error < RTOL * 10)

        if not sample.flags.get("no_gradgrad"):
            checks.extend(_gradgrad(info, sample, leaves, leaf_names, cotangents, diff_outputs,
                                    kwargs, call))

    if torch_outputs is not None and not sample.flags.get("random"):
        import torch

        torch_vs = [torch.tensor(c) for c in cotangents]
        theirs = torch.autograd.grad([torch_outputs[i] for i in diff_outputs], torch_leaves,
                                     torch_vs, allow_unused=True, materialize_grads=True)
        for leaf_name, ours, t in zip(leaf_names, analytic, theirs, strict=True):
            error = _error(ours._data, t.numpy())
            add("torch grad", leaf_name, error, error < RTOL)

    if info.forward_derivatives and not sample.flags.get("random"):
        checks.extend(_forward_mode(info, sample, leaves, leaf_names, kwargs, call, diff_outputs,
                                    cotangents, [g._data for g in analytic],
                                    fd=precise and not sample.flags.get("kink"),
                                    use_torch=torch_outputs is not None))
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
                          else tangent._data.astype(np.float64))
    return result


def _torch_jvp(info: OpInfo, sample: Sample, tangents: dict[int, np.ndarray],
               diff_outputs: list[int]) -> list[np.ndarray]:
    """The same through torch.autograd.forward_ad and torch.ops.aten.<op>.<overload>.

    Every leaf gets a tangent, zeros where `tangents` has none: some of torch's formulas
    write into the tangent of an input that has none, its immutable zero tensor, and raise.
    """
    import torch
    import torch.autograd.forward_ad as torch_forward_ad

    overload = getattr(getattr(torch.ops.aten, info.schema.base),
                       info.schema.overload or "default")
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
            result.append(np.zeros(tuple(outputs[i].shape)) if tangent is None
                          else tangent.detach().numpy().astype(np.float64))
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


def _forward_mode(info, sample, leaves, leaf_names, kwargs, call, diff_outputs, cotangents,
                  vjps, fd: bool, use_torch: bool) -> list[Check]:
    """jvp fd, jvp rev and jvp torch, for a tangent on each leaf alone, then on all."""
    checks = []
    rng = np.random.default_rng(sample.index + 13)
    directions = [rng.standard_normal(leaf.shape) for leaf in leaves]
    cases = [(name, {k: directions[k]}) for k, name in enumerate(leaf_names)]
    if len(leaves) > 1:
        cases.append(("all", dict(enumerate(directions))))
    with_torch = use_torch and info.name not in TORCH_WITHOUT_FORWARD_AD

    def add(what: str, label: str, error: float | None, ok: bool, detail: str = "") -> None:
        checks.append(Check(info.name, sample.index, what, label, error, ok, detail))

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
        # <u, J v> against <Jᵀ u, v>, scaled by the size of the terms summed.
        forward_terms = np.concatenate([(u * o).reshape(-1) for u, o in
                                        zip(cotangents, ours, strict=True)])
        reverse_terms = np.concatenate([(vjps[k] * t).reshape(-1) for k, t in tangents.items()])
        scale = ATOL / RTOL + max(np.abs(forward_terms).sum(), np.abs(reverse_terms).sum())
        error = abs(forward_terms.sum() - reverse_terms.sum()) / scale
        if not sample.flags.get("no_jvp_rev"):
            add("jvp rev", label, error, error < RTOL)
        if with_torch:
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
            names.extend(f"{arg.name}[{i}]" for i, v in enumerate(value) if v.dtype.kind == "f")
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
            names.append(arg.name)
    return names


def _gradgrad(info, sample, leaves, leaf_names, cotangents, diff_outputs, kwargs, call):
    """Second order: d/d(x, v) of <w, grad_x <v, f(x)>> against finite differences."""
    import runtime
    from runtime import autograd

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
        return [Check(info.name, sample.index, "gg", "all", None, False,
                      f"{type(error).__name__}: {error}")]

    def objective() -> float:
        grads = first_order(False)
        return float(sum(np.sum(g._data * w) for g, w in zip(grads, ws, strict=True)))

    numeric = _vjp_numeric(objective, [leaf._data for leaf in leaves] + [v._data for v in vs])
    names = leaf_names + [f"grad[{i}]" for i in diff_outputs]
    for label, ours, theirs in zip(names, analytic, numeric, strict=True):
        error = _error(ours, theirs)
        checks.append(Check(info.name, sample.index, "gg", label, error, error < RTOL * 100))
    return checks


def verify(infos: Iterable[OpInfo], use_torch: bool) -> list[Check]:
    checks = []
    for info in infos:
        for sample in samples(info):
            try:
                checks.extend(check_sample(info, sample, use_torch))
            except Exception as error:  # noqa: BLE001 - a crash is a failed check, not a stop
                checks.append(Check(info.name, sample.index, "run", "", None, False,
                                    f"{type(error).__name__}: {error}"))
    return checks


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen verify",
                                     description="prove the spec's formulas on sample inputs")
    parser.add_argument("ops", nargs="*", help="op names (base or base.overload); all by default")
    parser.add_argument("--spec", type=Path, default=ROOT / "derivatives.yaml")
    parser.add_argument("--no-torch", action="store_true", help="skip the comparison with torch")
    args = parser.parse_args(argv)
    infos = load(args.spec)
    if args.ops:
        unknown = [o for o in args.ops if not any(o in (i.name, i.schema.base) for i in infos)]
        if unknown:
            print(f"unknown op(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        infos = [i for i in infos if i.name in args.ops or i.schema.base in args.ops]
    use_torch = not args.no_torch and _torch_available()
    checks = verify(infos, use_torch)
    print(f"{'op':<28} {'sample':>6}  {'check':<10} {'input':<14} {'error':>10}  result")
    for c in checks:
        error = "" if c.error is None else f"{c.error:.2e}"
        verdict = "pass" if c.ok else "FAIL"
        detail = f"  {c.detail}" if c.detail and not c.ok else ""
        print(f"{c.op:<28} {c.sample:>6}  {c.what:<10} {c.input:<14} {error:>10}  "
              f"{verdict}{detail}")
    failed = sum(not c.ok for c in checks)
    torch_note = "" if use_torch else " (torch not installed: no torch comparison)"
    print(f"\n{len(checks) - failed} passed, {failed} failed, over {len(infos)} ops{torch_note}")
    return 1 if failed else 0
