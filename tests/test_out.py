"""The `out=` keyword (runtime/out.py), against torch: the result written into out's
storage and out returned, its dtype and shape rules, its warnings and errors, autograd's
refusal, several outputs, factories, and which functions take out= at all."""

from __future__ import annotations

import ast
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

import runtime
from codegen import verify
from codegen.render import OUT_DTYPE_RULES, OUT_NOT_YET, OUT_OVERLOADS
from generated import ops
from runtime import out as out_module

LIBRARIES = (torch, runtime)
INTERNAL = " (Triggered internally"  # torch's C++ warnings end with where they came from


def _run(library: Any, code: str, env: dict | None = None) -> tuple:
    """("returns", value, warnings) or ("raises", class name, message, warnings)."""
    scope = {"t": library, **(env or {})}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(code, scope)
        except Exception as error:  # the class is compared, whatever it is
            return "raises", type(error).__name__, str(error), _messages(caught)
    return "returns", value, _messages(caught)


def _messages(caught: list) -> list[tuple[str, str]]:
    return [(w.category.__name__, str(w.message).split(INTERNAL)[0]) for w in caught]


def _array(value: Any) -> np.ndarray:
    return value.detach().numpy()


def _same_tensor(got: Any, want: Any) -> None:
    assert isinstance(got, runtime.Tensor)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(_array(got), _array(want), rtol=1e-6, atol=1e-7)


def _both(code: str, setup: str = "") -> tuple[tuple, tuple, dict, dict]:
    """Run `setup` (statements) then `code` (an expression) with t = torch and t = gradgen;
    each outcome, and the names setup made."""
    outcomes, scopes = [], []
    for library in LIBRARIES:
        scope: dict = {"t": library}
        exec(setup, scope)
        outcomes.append(_run(library, code, scope))
        scopes.append(scope)
    return outcomes[0], outcomes[1], scopes[0], scopes[1]


# -- one output -------------------------------------------------------------------------------

CASES = [
    # same shape: written in place
    ("o = t.zeros(2)", "t.add(t.ones(2), t.tensor([1., 2.]), out=o)"),
    ("o = t.zeros(2)", "t.add(t.ones(2), t.tensor([1., 2.]), alpha=3, out=o)"),
    ("o = t.zeros(2, 3)", "t.mul(t.ones(2, 3), 2, out=o)"),
    ("o = t.zeros(3)", "t.exp(t.tensor([0., 1., 2.]), out=o)"),
    ("o = t.zeros(3, dtype=t.bool)", "t.eq(t.tensor([0., 1., 2.]), 1., out=o)"),
    ("o = t.zeros(2, 2)", "t.mm(t.ones(2, 3), t.ones(3, 2), out=o)"),
    ("o = t.zeros(2)", "t.sum(t.ones(2, 3), 1, out=o)"),
    ("o = t.zeros(4, 3)", "t.cat([t.ones(2, 3), t.zeros(2, 3)], out=o)"),
    ("o = t.zeros(2, 2)", "t.matmul(t.ones(2, 3), t.ones(3, 2), out=o)"),
    ("o = t.zeros(2, 3)", "t.outer(t.ones(2), t.ones(3), out=o)"),
    ("o = t.zeros(2, 2)", "t.inverse(t.tensor([[2., 0.], [0., 4.]]), out=o)"),
    ("o = t.zeros(2)", "t.add(t.ones(2), t.ones(2), out=None)"),
    # empty out: resized silently
    ("o = t.zeros(0)", "t.add(t.ones(2, 3), 1, out=o)"),
    ("o = t.zeros(0, 4)", "t.sub(t.ones(3), t.ones(3), out=o)"),
    # an out with elements and another shape: resized with torch's warning
    ("o = t.zeros(3)", "t.add(t.ones(2), t.ones(2), out=o)"),
    ("o = t.zeros(2, 2)", "t.add(t.ones(4), t.ones(4), out=o)"),
    ("o = t.zeros(5, dtype=t.float64)", "t.sqrt(t.tensor([4., 9.]), out=o)"),
    # dtype: the result cast into out's dtype where torch's canCast allows it
    ("o = t.zeros(2, dtype=t.int64)", "t.add(t.ones(2), t.ones(2), out=o)"),
    ("o = t.zeros(2)", "t.add(t.tensor([1, 2]), t.tensor([3, 4]), out=o)"),
    ("o = t.zeros(2, dtype=t.int64)", "t.add(t.tensor([True, False]), True, out=o)"),
    ("o = t.zeros(2, dtype=t.bool)", "t.add(t.tensor([1, 2]), 1, out=o)"),
    ("o = t.zeros(2, dtype=t.bool)", "t.add(t.ones(2), t.ones(2), out=o)"),
    ("o = t.zeros(2, dtype=t.float64)", "t.add(t.ones(2), t.ones(2), out=o)"),
    ("o = t.zeros(2)", "t.add(t.ones(2, dtype=t.float64), 1, out=o)"),
    ("o = t.zeros(2, dtype=t.int32)", "t.add(t.tensor([1, 2]), 1, out=o)"),
    ("o = t.zeros(3)", "t.lt(t.tensor([0., 1., 2.]), 1., out=o)"),
    ("o = t.zeros(2, dtype=t.float64)", "t.neg(t.ones(2), out=o)"),
    ("o = t.zeros(2, dtype=t.float64)", "t.mm(t.ones(2, 3), t.ones(3, 2), out=o)"),
    ("o = t.zeros(2, dtype=t.float64)", "t.matmul(t.ones(2, 3), t.ones(3, 2), out=o)"),
    ("o = t.zeros(3, dtype=t.int64)", "t.logsumexp(t.ones(2, 3), 0, out=o)"),
    ("o = t.zeros(3)", "t.any(t.ones(2, 3), 0, out=o)"),
    ("o = t.zeros((), dtype=t.int32)", "t.argmax(t.ones(2, 3), out=o)"),
    ("o = t.zeros(3)", "t.amax(t.ones(2, 3, dtype=t.float64), 0, out=o)"),
    ("o = t.zeros(3, dtype=t.int64)", "t.sum(t.ones(2, 3), 0, out=o)"),
    ("o = t.zeros(0, dtype=t.int64)", "t.cat([t.ones(2), t.ones(2)], out=o)"),
    ("o = t.zeros(2, dtype=t.float64)", "t.where(t.tensor([True, False]), t.ones(2), "
                                        "t.zeros(2), out=o)"),
    ("o = t.zeros(2)", "t.index_select(t.ones(3, dtype=t.float64), 0, t.tensor([0, 1]), out=o)"),
    ("o = t.zeros(())", "t.dot(t.ones(2, dtype=t.float64), t.ones(2, dtype=t.float64), out=o)"),
    # out of the wrong kind
    ("o = t.zeros(2)", "t.add(t.ones(2), t.ones(2), out=(o,))"),
    ("o = t.zeros(2)", "t.add(t.ones(2), t.ones(2), out=[1., 2.])"),
    # a bad call: the op's own error, and out untouched
    ("o = t.ones(2, 2)", "t.mm(t.ones(2, 3), t.ones(2, 3), out=o)"),
    ("o = t.ones(2, 2)", "t.cat([t.ones(2, 3), t.ones(2)], out=o)"),
]


@pytest.mark.parametrize(("setup", "code"), CASES, ids=[c for _, c in CASES])
def test_out_as_torch(setup: str, code: str) -> None:
    want, got, torch_scope, scope = _both(code, setup)
    assert got[0] == want[0], f"torch {want}, gradgen {got}"
    assert got[-1] == want[-1], "the warnings differ"
    before = torch_scope["o"]
    if want[0] == "raises":
        assert got[1:3] == want[1:3]
    else:
        _same_tensor(got[1], want[1])
        assert (got[1] is scope["o"]) == (want[1] is before)  # out itself is returned
    # out after the call (unchanged where the call raised), and its version counter
    _same_tensor(scope["o"], torch_scope["o"])
    assert scope["o"]._version == torch_scope["o"]._version


def test_dtype_refused_leaves_out_unchanged() -> None:
    """A result that may not be cast into out's dtype raises before anything is written."""
    for library in LIBRARIES:
        out = library.tensor([7, 8, 9])
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                               "desired output type Long"):
            library.add(library.ones(2), library.ones(2), out=out)
        assert out.tolist() == [7, 8, 9]
        assert out._version == 0


def test_views_of_out_see_the_result() -> None:
    results = []
    for library in LIBRARIES:
        base = library.zeros(6)
        out = base[2:5]
        view = out[1:]
        library.add(library.ones(3), library.tensor([1., 2., 3.]), out=out)
        results.append((base.tolist(), view.tolist(), base._version, view._version))
    assert results[1] == results[0]


def test_resize_keeps_storage_for_views() -> None:
    """Resized to as many elements or fewer, out keeps its storage: a view of it sees the
    values written, as in torch."""
    results = []
    for library in LIBRARIES:
        out = library.zeros(2, 3)
        view = out[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            library.add(library.ones(6), library.arange(6.), out=out)
        results.append((view.tolist(), list(out.shape)))
    assert results[1] == results[0]


def test_version_counter_moves_once_per_write() -> None:
    versions = []
    for library in LIBRARIES:
        out = library.zeros(2)
        library.mul(library.ones(2), 3, out=out)
        library.mul(library.ones(2), 3, out=out)
        versions.append(out._version)
    assert versions[1] == versions[0] == 2


# -- autograd ---------------------------------------------------------------------------------

GRAD_CASES = [
    "t.add(t.ones(2, requires_grad=True), t.ones(2), out=t.zeros(2))",
    "t.add(t.ones(2), t.ones(2), out=t.zeros(2, requires_grad=True))",
    "t.cat([t.ones(2), t.ones(2, requires_grad=True)], out=t.zeros(4))",
    "t.max(t.ones(2, 3, requires_grad=True), 0, out=(t.zeros(3), t.zeros(3, dtype=t.long)))",
    "t.matmul(t.ones(2, 2, requires_grad=True), t.ones(2, 2), out=t.zeros(2, 2))",
    "t.zeros(2, out=t.zeros(2, requires_grad=True))",
]


@pytest.mark.parametrize("code", GRAD_CASES)
def test_requires_grad_is_refused(code: str) -> None:
    want, got, _, _ = _both(code)
    assert want[0] == "raises"
    assert got[:3] == want[:3]


@pytest.mark.parametrize("code", GRAD_CASES)
def test_no_grad_writes_without_a_graph(code: str) -> None:
    results = []
    for library in LIBRARIES:
        with library.no_grad():
            result = eval(code, {"t": library})
        tensors = result if isinstance(result, tuple) else (result,)
        results.append([(t.tolist(), t.requires_grad, t.grad_fn is None) for t in tensors])
    assert results[1] == results[0]


def test_forward_ad_is_refused() -> None:
    """A dual tensor given to an out= call: torch's NotImplementedError, out untouched."""
    outcomes = []
    for library in LIBRARIES:
        forward_ad = library.autograd.forward_ad
        out = library.zeros(2, dtype=library.float64)
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(library.ones(2, dtype=library.float64),
                                        library.ones(2, dtype=library.float64))
            outcome = _run(library, "t.mul(d, 3, out=o)", {"d": dual, "o": out})
        outcomes.append((outcome[:3], out.tolist(), out._version))
    assert outcomes[0][0][0] == "raises"
    assert outcomes[1] == outcomes[0]


# -- several outputs --------------------------------------------------------------------------

MULTI = [
    ("v = t.zeros(3); i = t.zeros(3, dtype=t.long)", "t.max(t.tensor([[1., 5., 2.], "
     "[4., 0., 3.]]), 0, out=(v, i))"),
    ("v = t.zeros(0); i = t.zeros(0, dtype=t.long)", "t.min(t.tensor([[1., 5., 2.], "
     "[4., 0., 3.]]), 1, keepdim=True, out=(v, i))"),
    ("v = t.zeros(2, 3); i = t.zeros(2, 3, dtype=t.long)", "t.sort(t.tensor([[1., 5., 2.], "
     "[4., 0., 3.]]), out=(v, i))"),
    ("v = t.zeros(3); i = t.zeros(3, dtype=t.long)", "t.sort(t.tensor([3., 1., 2.]), "
     "stable=True, descending=True, out=(v, i))"),
    ("v = t.zeros(2); i = t.zeros(2, dtype=t.long)", "t.topk(t.tensor([3., 1., 2.]), 2, "
     "out=[v, i])"),
    ("v = t.zeros(3); i = t.zeros(3, dtype=t.long)", "t.topk(t.tensor([3., 1., 2.]), 2, "
     "out=(v, i))"),  # resized, with a warning for each
    ("v = t.zeros(3); i = t.zeros(3)", "t.max(t.ones(2, 3), 0, out=(v, i))"),
    ("v = t.zeros(3, dtype=t.float64); i = t.zeros(3, dtype=t.long)",
     "t.sort(t.ones(3), out=(v, i))"),
    ("v = t.zeros(3); i = t.zeros(3, dtype=t.long)", "t.max(t.ones(2, 3), 0, out=v)"),
]


@pytest.mark.parametrize(("setup", "code"), MULTI, ids=[c for _, c in MULTI])
def test_several_outputs(setup: str, code: str) -> None:
    want, got, torch_scope, scope = _both(code, setup)
    assert got[0] == want[0], f"torch {want}, gradgen {got}"
    assert got[-1] == want[-1], "the warnings differ"
    if want[0] == "raises":
        assert got[1] == want[1]
        if want[1] != "TypeError":  # torch's argument parser lists its signatures
            assert got[2] == want[2]
    else:
        assert type(got[1]).__name__ == type(want[1]).__name__  # max_out, sort_out, ...
        assert got[1]._fields == ("values", "indices")
        assert got[1].values is scope["v"] and got[1].indices is scope["i"]
        assert want[1].values is torch_scope["v"] and want[1].indices is torch_scope["i"]
    for name in ("v", "i"):
        _same_tensor(scope[name], torch_scope[name])


# -- what takes no out= -----------------------------------------------------------------------

@pytest.mark.parametrize("code", [
    "t.ones(2).add(t.ones(2), out=t.zeros(2))",
    "t.ones(2).add_(t.ones(2), out=t.zeros(2))",
    "t.ones(2).exp(out=t.zeros(2))",
    "t.relu(t.ones(2), out=t.zeros(2))",
    "t.ones(2).matmul(t.ones(2), out=t.zeros(()))",
    "t.ones(2, 3).max(0, out=(t.zeros(3), t.zeros(3, dtype=t.long)))",
    "t.ones(2, 3).sum(0, out=t.zeros(3))",
    "t.ones(2, 3).sort(out=(t.zeros(2, 3), t.zeros(2, 3, dtype=t.long)))",
    "t.ones(2, 3).pow(2, out=t.zeros(2, 3))",
])
def test_methods_and_in_place_forms_take_no_out(code: str) -> None:
    """A TypeError, as in torch, also where the function of the same name takes out=
    (`x.max(0, out=...)`). gradgen's message names the method's class where the method has
    one overload (`TensorMethods.add()`), torch's only the method (or, for some, its list of
    signatures), so the class and the keyword are compared."""
    want, got, _, _ = _both(code)
    assert want[:2] == ("raises", "TypeError")
    assert got[:2] == ("raises", "TypeError")
    assert "unexpected keyword argument 'out'" in got[2]


def test_out_refused_by_an_overload_without_it() -> None:
    """`sum(x, out=o)`: torch has no out= form of the full sum; its argument parser says so."""
    want, got, _, _ = _both("t.sum(t.ones(2), out=t.zeros(()))")
    assert want[:2] == got[:2] == ("raises", "TypeError")
    assert got[2].splitlines()[0] == want[2].splitlines()[0]


def _torch_out_signatures() -> dict[str, list[tuple[set[str], bool]]]:
    """torch's Python signatures of its functions (its type stubs): name -> (parameter
    names but out, takes out=) per signature."""
    stub = Path(torch.__file__).parent / "_C" / "_VariableFunctions.pyi"
    signatures: dict[str, list] = defaultdict(list)
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            names = {a.arg for a in arguments}
            signatures[node.name].append((names - {"out"}, "out" in names))
    return signatures


def test_out_overloads_are_torchs() -> None:
    """Every overload gradgen binds as a torch function takes out= exactly when torch's
    signature with the same parameters does."""
    signatures = _torch_out_signatures()
    expected = set()
    for key, overload in ops.OVERLOADS.items():
        name = key.split(".")[0]
        if name not in ops.__all__ or name not in signatures:
            continue
        # torch's stubs call a Tensor self `input`, a Scalar one `self` (`pow(2, x)`)
        ours = {("input" if p.type.startswith("Tensor") else "self") if p.name == "self_"
                else p.name for p in overload.params}
        # div's signature has rounding_mode, optional: div.Tensor and div.Scalar lack it
        matching = [has for names, has in signatures[name]
                    if names == ours or names == ours | {"rounding_mode"}]
        if any(matching):
            expected.add(key)
    assert OUT_OVERLOADS == expected - OUT_NOT_YET
    assert OUT_NOT_YET <= expected  # a name there that torch binds without out= is stale


def test_wrappers_take_out_as_generated() -> None:
    import inspect

    for key, overload in ops.OVERLOADS.items():
        parameters = inspect.signature(overload.wrapper).parameters
        assert ("out" in parameters) == (key in OUT_OVERLOADS), key
        if key in OUT_OVERLOADS:
            assert parameters["out"].kind is inspect.Parameter.KEYWORD_ONLY
            assert parameters["out"].default is None
    assert set(OUT_DTYPE_RULES) <= OUT_OVERLOADS
    assert set(OUT_DTYPE_RULES.values()) <= out_module.DTYPE_RULES


# -- every out= overload on its spec sample ---------------------------------------------------

def _sample_calls(info: Any) -> tuple[list, dict, dict]:
    sample = verify.samples(info)[0]
    positional, keywords, _ = verify._make_torch_args(info, sample)
    positional = [_detach(v) for v in positional]
    keywords = {k: _detach(v) for k, v in keywords.items()}
    kwargs, _ = verify._make_runtime_args(info, sample)
    return positional, keywords, {k: _detach(v) for k, v in kwargs.items()}


def _detach(value: Any) -> Any:
    """The sample's value without requires_grad (an out= call with one is refused)."""
    if isinstance(value, list):
        return [_detach(v) for v in value]
    return value.detach() if isinstance(value, torch.Tensor | runtime.Tensor) else value


def _empty_like(library: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_empty_like(library, v) for v in value)
    return library.zeros(0, dtype=getattr(library, str(value.dtype).split(".")[1]))


OUT_INFOS = [i for i in verify.load() if i.name in OUT_OVERLOADS]


@pytest.mark.parametrize("info", OUT_INFOS, ids=lambda i: i.name)
def test_every_out_overload_on_its_sample(info: Any) -> None:
    """Each out= overload's first spec sample, with empty out tensors of the result's
    dtypes: gradgen writes what torch writes, and returns the out tensors."""
    positional, keywords, kwargs = _sample_calls(info)
    name = info.schema.base
    want = getattr(torch, name)(*positional, **keywords)
    got = ops.OVERLOADS[info.name].wrapper(**kwargs)
    torch_out, out = _empty_like(torch, want), _empty_like(runtime, got)
    want = getattr(torch, name)(*positional, **keywords, out=torch_out)
    got = ops.OVERLOADS[info.name].wrapper(**kwargs, out=out)
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__  # max_out, or a plain tuple
        for field in getattr(got, "_fields", ()):
            assert getattr(want, field) is want[got._fields.index(field)]
        assert all(g is o for g, o in zip(got, out, strict=True))
        pairs = list(zip(got, want, strict=True))
    else:
        assert got is out
        pairs = [(got, want)]
    for g, w in pairs:
        _same_tensor(g, w)


@pytest.mark.parametrize("info", OUT_INFOS, ids=lambda i: i.name)
def test_every_out_overload_dtype_rule(info: Any) -> None:
    """Out tensors of another dtype than the result's: gradgen accepts what torch accepts,
    and refuses the rest with torch's exception and message (out then unchanged)."""
    positional, keywords, kwargs = _sample_calls(info)
    name = info.schema.base
    result = ops.OVERLOADS[info.name].wrapper(**kwargs)
    first = result[0] if isinstance(result, tuple) else result
    for dtype in ("float32", "float64", "int64", "int32", "bool"):
        if dtype == str(first.dtype).split(".")[1]:
            continue
        outs = []
        for library in LIBRARIES:
            shapes = result if isinstance(result, tuple) else (result,)
            made = [library.zeros(tuple(r.shape), dtype=getattr(
                library, dtype if n == 0 else str(r.dtype).split(".")[1]))
                for n, r in enumerate(shapes)]
            outs.append(tuple(made) if isinstance(result, tuple) else made[0])
        want = _run(torch, "f(*p, **k, out=o)",
                    {"f": getattr(torch, name), "p": positional, "k": keywords, "o": outs[0]})
        got = _run(runtime, "f(**k, out=o)",
                   {"f": ops.OVERLOADS[info.name].wrapper, "k": kwargs, "o": outs[1]})
        if want[0] == "raises" and want[1] == "NotImplementedError":
            continue  # torch's kernel lacks that dtype (cumsum into bool): not an out= rule
        assert got[0] == want[0], f"{dtype}: torch {want[:3]}, gradgen {got[:3]}"
        if want[0] == "raises":
            assert got[1:3] == want[1:3], dtype
            for tensor in outs[1] if isinstance(outs[1], tuple) else (outs[1],):
                assert tensor._version == 0 and not tensor.numpy().any()


# -- factories ------------------------------------------------------------------------------

FACTORIES = [
    "t.zeros(2, 3, out=o)", "t.ones(2, 3, out=o)", "t.full((2, 3), 1.5, out=o)",
    "t.full((2, 3), 7, out=o)", "t.eye(2, out=o)", "t.eye(2, 3, out=o)",
    "t.arange(6, out=o)", "t.arange(0.5, 3, out=o)", "t.arange(1, 4, 0.5, out=o)",
    "t.linspace(0, 1, 6, out=o)", "t.linspace(-2, 3, 4, out=o)",
    "t.ones(6, out=o, requires_grad=True)", "t.zeros(2, out=o, dtype=t.int64)",
    "t.arange(4, out=o, dtype=t.float32)", "t.empty(2, 3, out=o).shape",
]
OUTS = ["t.zeros(6)", "t.zeros(2, 3)", "t.zeros(0)", "t.zeros(6, dtype=t.int64)",
        "t.zeros(6, 1, dtype=t.float64)", "t.zeros(4, dtype=t.bool)",
        "t.zeros(6, requires_grad=True)"]


@pytest.mark.parametrize("out", OUTS)
@pytest.mark.parametrize("code", FACTORIES)
def test_factories(code: str, out: str) -> None:
    want, got, torch_scope, scope = _both(code, f"o = {out}")
    assert got[0] == want[0], f"torch {want[:3]}, gradgen {got[:3]}"
    assert got[-1] == want[-1], "the warnings differ"
    if want[0] == "raises":
        assert got[1:3] == want[1:3]
    elif isinstance(want[1], torch.Tensor):
        assert got[1] is scope["o"]
        _same_tensor(got[1], want[1])
        assert got[1].requires_grad == want[1].requires_grad
    else:
        assert tuple(got[1]) == tuple(want[1])
    assert tuple(scope["o"].shape) == tuple(torch_scope["o"].shape)
    assert scope["o"]._version == torch_scope["o"]._version


def test_factory_views_see_the_values() -> None:
    results = []
    for library in LIBRARIES:
        out = library.zeros(6)
        view = out[:3]
        library.ones(2, 3, out=out)
        results.append((view.tolist(), list(out.shape), out._version))
    assert results[1] == results[0]


def test_factory_under_no_grad_takes_requires_grad_from_the_call() -> None:
    results = []
    for library in LIBRARIES:
        out = library.zeros(2, requires_grad=True)
        with library.no_grad():
            library.ones(2, out=out)
        results.append((out.tolist(), out.requires_grad))
    assert results[1] == results[0]
