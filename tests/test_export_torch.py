"""`python -m codegen export-torch`: the spec's formulas, run inside PyTorch, pass torch's own
gradcheck and gradgradcheck (and forward-mode gradcheck where the spec has a forward
formula) on every exported op's samples: a fourth proof of each formula, in the engine that
users scale to."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from codegen import verify
from codegen.export_torch import aten_schemas, class_name, why_not_exported
from codegen.load import load_spec
from codegen.render import _python_default

ROOT = Path(__file__).resolve().parent.parent
INFOS = load_spec(ROOT / "derivatives.yaml")
_ATEN = aten_schemas()  # an entry whose formulas call gradgen's own ops is not exported


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory):
    """The whole spec exported, as an imported module (written by the command itself)."""
    path = tmp_path_factory.mktemp("export") / "gradgen_torch.py"
    run = subprocess.run([sys.executable, "-m", "codegen", "export-torch", "--out", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    spec = importlib.util.spec_from_file_location("gradgen_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, run.stdout


def test_every_op_torch_has_is_exported(exported) -> None:
    """Each differentiable entry whose op torch has is exported; any other is named, with
    why."""
    module, report = exported
    aten = aten_schemas()
    for info in INFOS:
        if not info.differentiable:
            continue
        why = why_not_exported(info, aten)
        if why is None:
            assert hasattr(module, class_name(info)), info.name
        else:
            assert f"not exported: {info.name}: {why}" in report
    # Only an op torch lacks and that has no `forward:` formula is left out.
    left_out = {line.split(": ")[1] for line in report.splitlines() if "not exported" in line}
    assert left_out == {i.name for i in INFOS if i.differentiable
                        and why_not_exported(i, aten) is not None}


def _cases() -> list:
    cases = []
    for info in INFOS:
        if not info.differentiable or why_not_exported(info, _ATEN) is not None:
            continue
        if all(d.not_implemented is not None for d in info.derivatives):
            continue  # its backward only raises (acosh_): verify compares that with torch
        for sample in verify.samples(info):
            # Central differences mean nothing at a kink or on random draws; a sample torch
            # cannot run is for gradgen's other checks.
            # (an op torch lacks runs its `forward:` formula in torch: its samples count)
            skip = ("kink", "random") if info.forward_formula else ("kink", "random", "no_torch")
            if not any(sample.flags.get(f) for f in skip):
                cases.append(pytest.param(info, sample, id=f"{info.name}-{sample.index}"))
    return cases


def _arguments(info, sample) -> list:
    """The sample's arguments in schema order, defaults filled in, as torch values."""
    positional, keywords, _ = verify._make_torch_args(info, sample)
    names = [a.name for a in info.schema.arguments if not (a.kwarg_only or a.default)]
    given = {**dict(zip(names, positional, strict=False)), **keywords}
    for name in verify._unimplemented(info):  # not_implemented: no gradient to check
        if isinstance(given.get(name), torch.Tensor):
            given[name] = given[name].detach()
    return [given[a.name] if a.name in given else
            eval(_python_default(a), {}) if a.default is not None else None  # noqa: S307
            for a in info.schema.arguments]


def _leaves(arguments: list) -> list[tuple[int, int | None]]:
    """Where the tensors that need a gradient are: (argument, None), or (argument, item)
    for a tensor of a Tensor[] argument."""
    found = []
    for i, value in enumerate(arguments):
        if isinstance(value, torch.Tensor) and value.requires_grad:
            found.append((i, None))
        elif isinstance(value, list):
            found += [(i, k) for k, item in enumerate(value)
                      if isinstance(item, torch.Tensor) and item.requires_grad]
    return found


@pytest.mark.parametrize(("info", "sample"), _cases())
def test_gradcheck_inside_torch(exported, info, sample) -> None:
    module, _ = exported
    function = getattr(module, class_name(info))
    call = getattr(function, "call", function.apply)  # schema order (a Tensor[]: see call)
    arguments = _arguments(info, sample)
    leaves = _leaves(arguments)
    differentiable = [i for i, d in enumerate(info.output_differentiability) if d]
    writes = bool(info.schema.arguments[0].type.alias and
                  info.schema.arguments[0].type.alias.endswith("!"))

    def run(*tensors: torch.Tensor):
        values = [list(v) if isinstance(v, list) else v for v in arguments]
        for (position, item), tensor in zip(leaves, tensors, strict=True):
            if item is None:
                values[position] = tensor
            else:
                values[position][item] = tensor
        if writes:  # an op that writes into self writes into a copy: gradcheck's are leaves
            values[0] = values[0].clone()
        outputs = call(*values)
        if isinstance(outputs, tuple) and not info.schema.returns[0].type.is_list:
            return tuple(outputs[i] for i in differentiable)
        return outputs

    inputs = [(arguments[i] if k is None else arguments[i][k]).detach().clone()
              .requires_grad_(True) for i, k in leaves]
    with torch.no_grad():
        outputs = run(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if not inputs or any(o.dtype != torch.float64 for o in outputs):
        pytest.skip("central differences need float64 inputs and outputs")
    forward_ad = bool(info.forward_derivatives) and function.jvp is not \
        torch.autograd.Function.jvp and info.name not in verify.TORCH_WITHOUT_FORWARD_AD
    assert torch.autograd.gradcheck(run, inputs, check_forward_ad=forward_ad)
    if not sample.flags.get("no_gradgrad"):
        assert torch.autograd.gradgradcheck(run, inputs)
