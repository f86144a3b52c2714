"""What a node saves is found from its formulas: a table of cases from the real spec and
from small inline specs, checked against PyTorch's `_saved_*` attributes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import runtime
from codegen import verify
from codegen.formula import SIZE_KINDS
from codegen.load import manual_helpers, parse_spec
from codegen.render import SIZE_SAVERS, _python_default, save_statements
from codegen.schema import parse_schema
from runtime import recording
from runtime.dtypes import BY_NUMPY
from runtime.node import SavedVariable, SavedVariableList

INFOS = {info.name: info for info in verify.load()}
HELPERS = manual_helpers(verify.ROOT / "runtime" / "manual.py")


def exposed(info) -> set[str]:
    """The `_saved_*` attributes the generated node exposes, as PyTorch names them (a saved
    dtype is kept without one, as in PyTorch)."""
    return {f"_saved_{a.source}" if a.is_saved_variable else f"_saved_{a.name}"
            for a in info.saved if a.kind != "scalar_type"}


# -- the real spec -----------------------------------------------------------------------------

# op -> (kind, source, name) of everything its node saves
REAL = {
    "sum": [("sizes", "self", "self_sym_sizes")],
    # torch's complex-aware formula reads each input's dtype: saved, not exposed
    "mul.Tensor": [("tensor", "other", "other"), ("tensor", "self", "self_"),
                   ("scalar_type", "other", "other_scalar_type"),
                   ("scalar_type", "self", "self_scalar_type")],
    "relu": [("output", "result", "result")],
    "t": [],
    "add.Tensor": [("value", "alpha", "alpha"),
                   ("scalar_type", "other", "other_scalar_type"),
                   ("scalar_type", "self", "self_scalar_type")],
    "expand": [("sizes", "self", "self_sym_sizes")],
    "sum.dim_IntList": [("sizes", "self", "self_sym_sizes"), ("value", "dim", "dim"),
                        ("value", "keepdim", "keepdim")],
    "squeeze.dim": [("value", "dim", "dim"), ("sizes", "self", "self_sym_sizes")],
    "clone": [],
}


@pytest.mark.parametrize("name", REAL)
def test_real_spec_saves(name: str) -> None:
    info = INFOS[name]
    saved = sorted((a.kind, a.source, a.name) for a in info.saved)
    assert saved == sorted(REAL[name])


def _recorded(info):
    """The op's node from its first sample, on our runtime and on torch."""
    sample = verify.samples(info)[0]
    ours, _, _, _ = verify.run_runtime(info, sample)
    theirs, _ = verify.run_torch(info, sample)
    return ours[0].grad_fn, theirs[0].grad_fn


def _same(ours, theirs) -> bool:
    """Equal values; tensors up to the last bits numpy and torch may round differently."""
    if isinstance(theirs, torch.Tensor):
        ours, theirs = ours.detach().numpy(), theirs.detach().numpy()
        return ours.shape == theirs.shape and np.allclose(ours, theirs, rtol=1e-12, atol=0)
    if isinstance(theirs, tuple | list):  # torch returns int[] (and Tensor[]) as a tuple
        return isinstance(ours, tuple | list) and len(ours) == len(theirs) and all(
            map(_same, ours, theirs))
    if isinstance(ours, int) and ours < 0 and isinstance(theirs, int) and theirs >= 2**63:
        # torch 2.13 exposes a negative saved SymInt (ignore_index=-100, padding_idx=-1)
        # as its unsigned 64-bit pattern; the value it uses is the signed one.
        return ours % 2**64 == theirs
    return ours == theirs


@pytest.mark.parametrize("name", REAL)
def test_real_spec_saves_what_torch_saves(name: str) -> None:
    """For these ops PyTorch exposes exactly the same attributes, with the same values."""
    ours, theirs = _recorded(INFOS[name])
    ours_names = {n for n in dir(ours) if n.startswith("_saved_")}
    theirs_names = {n for n in dir(theirs) if n.startswith("_saved_")}
    assert ours_names == exposed(INFOS[name]) == theirs_names
    for attribute in sorted(ours_names):
        assert _same(getattr(ours, attribute), getattr(theirs, attribute)), attribute


def test_torch_sum_saves_only_the_sizes() -> None:
    x = torch.randn(3, requires_grad=True)
    assert x.sum().grad_fn._saved_self_sym_sizes == (3,)
    ours = runtime.randn(3, requires_grad=True).sum().grad_fn
    assert ours._saved_self_sym_sizes == (3,)
    assert not hasattr(ours, "_saved_self")


def _from_inputs(info, attribute, kwargs: dict, outputs: list):
    """What a saved attribute must hold, computed from the op's arguments and outputs as its
    kind says: the reference for an op torch lacks. None for a kind not computed here."""
    names = info.schema.return_names()
    if attribute.source in names:
        value = outputs[names.index(attribute.source)]
    else:
        key = "self_" if attribute.source == "self" else attribute.source
        argument = info.schema.argument(attribute.source)
        value = kwargs[key] if key in kwargs else \
            eval(_python_default(argument), {})  # noqa: S307 - the schema's default
        if argument.type.is_list and isinstance(value, int):
            value = (value,)  # `int[1] dim=0` is (0,), as torch saves it
    data = value._data if isinstance(value, runtime.Tensor) else value
    compute = {"tensor": lambda: data, "output": lambda: data, "value": lambda: value,
               "sizes": lambda: tuple(np.shape(data)), "dim": lambda: np.ndim(data),
               "numel": lambda: int(np.size(data))}
    return compute[attribute.kind]() if attribute.kind in compute else None


def _agrees_with_inputs(info) -> None:
    node_outputs, _, kwargs, _ = verify.run_runtime(info, verify.samples(info)[0])
    node = node_outputs[0].grad_fn
    for attribute in info.saved:
        expected = _from_inputs(info, attribute, kwargs, node_outputs)
        if expected is None:
            continue
        name = f"_saved_{attribute.source if attribute.is_saved_variable else attribute.name}"
        held = getattr(node, name)
        held = held._data if isinstance(held, runtime.Tensor) else held
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(held, expected, err_msg=name)
        else:
            # an int[] argument (a list in the sample) is kept as a tuple, as torch's are
            assert tuple(held) == tuple(expected) if isinstance(expected, tuple | list) \
                else held == expected, (name, held, expected)


@pytest.mark.parametrize("name", ["mul.Tensor", "sum", "add.Tensor", "relu", "mean.dim",
                                  "pow.Tensor_Scalar"])
def test_saved_attributes_agree_with_the_inputs(name: str) -> None:
    """The reference used for ops torch lacks, on ops torch has."""
    _agrees_with_inputs(INFOS[name])


@pytest.mark.parametrize("info", [i for i in INFOS.values() if i.differentiable and i.samples],
                         ids=lambda i: i.name)
def test_shared_attributes_agree_with_torch(info) -> None:
    """Every op of the spec: what both we and torch expose holds the same value. An op torch
    lacks (its first sample `no_torch`) is compared with its inputs instead."""
    if verify.samples(info)[0].flags.get("no_torch"):
        _agrees_with_inputs(info)
        return
    ours, theirs = _recorded(info)
    shared = {n for n in dir(ours) if n.startswith("_saved_")} & set(dir(theirs))
    for attribute in sorted(shared):
        assert _same(getattr(ours, attribute), getattr(theirs, attribute)), attribute


# -- inline specs --------------------------------------------------------------------------------

def load_one(entry: str):
    """The single OpInfo of a one-entry spec (with a few ops for formulas to call)."""
    spec = entry + """
- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  self: grad.sum_to_size(self.shape)
"""
    return parse_spec(spec, "inline.yaml", HELPERS)[0]


INLINE = [
    ("mean(Tensor self) -> Tensor", "maybe_multiply(grad.expand(self.shape), self.numel())",
     [("sizes", "self", "self_sym_sizes"), ("numel", "self", "self_sym_numel")]),
    ("f(Tensor self) -> Tensor", "maybe_multiply(grad, self.ndim)",
     [("dim", "self", "self_dim")]),
    ("f(Tensor self) -> Tensor", "grad.to(self.dtype)",
     [("scalar_type", "self", "self_scalar_type")]),
    ("f(Tensor self) -> Tensor", "maybe_multiply(grad, self.shape[0])",
     [("sizes", "self", "self_sym_sizes")]),
    ("f(Tensor self) -> Tensor", "maybe_multiply(grad, self) + maybe_multiply(grad, self.ndim)",
     [("tensor", "self", "self_"), ("dim", "self", "self_dim")]),
    ("f(Tensor self, Tensor other) -> Tensor", "maybe_multiply(grad, other.shape)",
     [("sizes", "other", "other_sym_sizes")]),
    ("f(Tensor self) -> Tensor", "maybe_multiply(grad, result)",
     [("output", "result", "result")]),
    ("f(Tensor self) -> Tensor", "maybe_multiply(grad, result.shape)",
     [("sizes", "result", "result_sym_sizes")]),
    ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     "maybe_multiply(grads[0], indices.ndim) + maybe_multiply(grads[0], keepdim)",
     [("dim", "indices", "indices_dim"), ("value", "keepdim", "keepdim")]),
    ("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     "maybe_multiply(grad_values, indices)",
     [("output", "indices", "indices")]),
    ("cat(Tensor[] tensors, int dim=0) -> Tensor", "maybe_multiply(grad, to_args_sizes(tensors))",
     [("list_sizes", "tensors", "tensors_args_sizes")]),
    ("stack(Tensor[] tensors, int dim=0) -> Tensor", "maybe_multiply(grad, tensors)",
     [("tensor_list", "tensors", "tensors")]),
    ("f(Tensor self, *, Scalar alpha=1) -> Tensor", "maybe_multiply(grad, alpha)",
     [("value", "alpha", "alpha")]),
    ("f(Tensor self) -> Tensor", "grad", []),
]


@pytest.mark.parametrize(("schema", "formula", "expected"), INLINE,
                         ids=[f"{s.split('(')[0]}: {f}" for s, f, _ in INLINE])
def test_inline_saves(schema: str, formula: str, expected: list) -> None:
    key = "tensors" if "Tensor[]" in schema else "self"
    others = "".join(f"  {a.name}: non_differentiable\n" for a in parse_schema(schema).arguments
                     if a.type.is_tensor_like and a.name != key)
    info = load_one(f"- name: {schema}\n  {key}: {formula}\n{others}")
    assert [(a.kind, a.source, a.name) for a in info.saved] == expected


def test_forward_formulas_save_nothing() -> None:
    info = load_one("- name: f(Tensor self, Tensor other) -> Tensor\n"
                    "  self: grad\n  other: grad\n  result: self_t * other_p + self_p.shape[0]\n")
    assert info.saved == ()


def test_two_formulas_reading_one_thing_save_it_once() -> None:
    info = load_one("- name: f(Tensor self, Tensor other) -> Tensor\n"
                    "  self: maybe_multiply(grad, other.shape)\n"
                    "  other: maybe_multiply(grad, other.shape)\n")
    assert [(a.kind, a.name) for a in info.saved] == [("sizes", "other_sym_sizes")]


def _run_saves(info, values: dict) -> dict:
    """Run the generated save statements of `info` on `values`; the attributes they set."""
    class Recorder:
        pass

    grad_fn = Recorder()
    namespace = {"recording": recording, "SavedVariable": SavedVariable,
                 "SavedVariableList": SavedVariableList, "grad_fn": grad_fn,
                 "Tensor": runtime.Tensor, "DTYPE_OF": BY_NUMPY, **values}
    before, after = save_statements(info)
    for statement in before + after:
        exec(statement, namespace)  # noqa: S102 - generated code, from a spec written here
    return vars(grad_fn)


def test_size_only_saves_run_and_match_torch() -> None:
    """The emitted save statements run on the runtime and give torch's values."""
    info = load_one("- name: mean(Tensor self) -> Tensor\n"
                    "  self: maybe_multiply(grad.expand(self.shape), self.numel()) + "
                    "maybe_multiply(grad, self.ndim) + grad.to(self.dtype)\n")
    data = np.random.default_rng(0).standard_normal((3, 4))
    saved = _run_saves(info, {"self_": runtime.tensor(data, requires_grad=True)})
    x = torch.tensor(data, requires_grad=True)
    theirs = x.mean().grad_fn
    assert saved["_saved_self_sym_sizes"] == theirs._saved_self_sym_sizes == (3, 4)
    assert saved["_saved_self_sym_numel"] == theirs._saved_self_sym_numel == 12
    assert saved["_saved_self_dim"] == x.dim() == 2
    assert str(saved["_kept_self_scalar_type"]) == str(x.dtype)  # torch exposes no dtype


def test_list_sizes_save_runs() -> None:
    info = load_one("- name: cat(Tensor[] tensors, int dim=0) -> Tensor\n"
                    "  tensors: maybe_multiply(grad, to_args_sizes(tensors))\n")
    tensors = [runtime.zeros(2, 3), runtime.zeros(4, 3)]
    saved = _run_saves(info, {"tensors": tensors, "dim": 0})
    assert [tuple(s) for s in saved["_saved_tensors_args_sizes"]] == [(2, 3), (4, 3)]


def test_every_size_kind_has_a_runtime_function() -> None:
    """render.SIZE_SAVERS names, for each size-like kind, the runtime function a wrapper
    calls: every kind has one, and each exists."""
    from runtime import recording

    assert set(SIZE_SAVERS) == set(SIZE_KINDS)
    for name in SIZE_SAVERS.values():
        module, function = name.split(".")
        assert module == "recording" and callable(getattr(recording, function))


_SECOND_BACKWARD = {
    "x * 2": lambda lib, x, y: x * 2,
    "2 / x": lambda lib, x, y: 2 / x,
    "x ** 2": lambda lib, x, y: x ** 2,
    "x + 2": lambda lib, x, y: x + 2,
    "2 - x": lambda lib, x, y: 2 - x,
    "where(c, x, 0.)": lambda lib, x, y: lib.where(x > 0, x, 0.0),
    "masked_fill": lambda lib, x, y: x.masked_fill(x > 0, 0.0),
    "lerp(x, y, 0.5)": lambda lib, x, y: lib.lerp(x, y, 0.5),
    "clamp(x, 0, 1)": lambda lib, x, y: lib.clamp(x, 0, 1),
    "sub(x, y, alpha=2)": lambda lib, x, y: lib.sub(x, y, alpha=2),
    "layer_norm without weight": lambda lib, x, y: lib.nn.functional.layer_norm(x, (3,)),
}


@pytest.mark.parametrize("name", list(_SECOND_BACKWARD))
def test_a_second_backward_raises_where_torchs_does(name):
    """A Python number given where the schema has a Tensor (`x * 2`) is saved as PyTorch
    saves the tensor it wraps it in: freed by the first backward, so a second one raises;
    where nothing was saved (`x + 2`) or only Scalars (`lerp`'s weight), it works."""
    results = []
    for lib in (torch, runtime):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = lib.tensor([0.5, 1.5, 2.0], requires_grad=True)
        out = _SECOND_BACKWARD[name](lib, x, y).sum()
        out.backward()
        try:
            out.backward()
            results.append(("works", x.grad.tolist()))
        except RuntimeError as error:
            results.append(("raises", str(error)))
    assert results[0] == results[1]
