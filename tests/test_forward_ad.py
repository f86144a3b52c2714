"""Forward-mode AD against PyTorch: each test runs one program through `runtime` and through
`torch` (each with its own `autograd.forward_ad`) and compares what the program observed:
values, tangents, node names and errors (type and message). The per-op formulas are proved
by `python -m codegen verify` (tests/test_ops.py); this file covers the machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip
import torch.autograd.forward_ad

import runtime
import runtime.autograd.forward_ad
from codegen import verify
from codegen.load import parse_spec
from codegen.render import render_all
from runtime import forward_grad

LIBRARIES = {"torch": torch, "runtime": runtime}
RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
V = RNG.standard_normal((3, 4))
W = RNG.standard_normal(4)


def _open_level(name: str) -> int:
    if name == "torch":
        return torch.autograd.forward_ad._current_level
    return forward_grad.current_level()


def _plain(value: Any) -> Any:
    """What a program observed, as plain values: arrays, names, nested tuples."""
    if isinstance(value, torch.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, runtime.Tensor):
        return value.detach().numpy().copy()
    if isinstance(value, tuple | list):
        return tuple(_plain(v) for v in value)
    return value


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), (ours, theirs)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours, theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    elif isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
    else:
        assert ours == theirs


def both(program: Callable[[Any, Any], Any]) -> Any:
    """Run `program(lib, forward_ad)` with each library; both must observe the same."""
    results = {}
    for name, lib in LIBRARIES.items():
        fw = lib.autograd.forward_ad
        try:
            results[name] = ("value", _plain(program(lib, fw)))
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            results[name] = ("error", type(error).__name__, str(error))
        finally:
            while _open_level(name) >= 0:
                fw.exit_dual_level()
    _same(results["runtime"], results["torch"])
    return results["runtime"]


def _tensor(lib: Any, array: np.ndarray, **kwargs: Any) -> Any:
    return lib.tensor(array, **kwargs)


# -- dual_level, make_dual, unpack_dual -----------------------------------------------------

def test_make_and_unpack_a_dual_tensor() -> None:
    def program(lib, fw):
        x, t = _tensor(lib, X), _tensor(lib, V)
        with fw.dual_level() as level:
            dual = fw.make_dual(x, t)
            unpacked = fw.unpack_dual(dual)
            primal, tangent = unpacked
            return (level, type(unpacked).__name__, unpacked._fields, tangent is t,
                    dual._base is x, primal is x, fw.unpack_dual(primal).tangent is None,
                    primal, tangent)

    both(program)


def test_tangents_are_dropped_when_the_level_closes() -> None:
    def program(lib, fw):
        with fw.dual_level():
            dual = fw.make_dual(_tensor(lib, X), _tensor(lib, V))
            y = dual * 2
        return (fw.unpack_dual(dual).tangent is None, fw.unpack_dual(y).tangent is None,
                fw.unpack_dual(y).primal is y)

    assert both(program) == ("value", (True, True, True))


def test_enter_and_exit_by_hand_and_as_a_decorator() -> None:
    def program(lib, fw):
        first = fw.enter_dual_level()
        fw.exit_dual_level(level=first)
        second = fw.enter_dual_level()
        fw.exit_dual_level()

        @fw.dual_level()
        def inside() -> Any:
            return fw.unpack_dual(fw.make_dual(_tensor(lib, X), _tensor(lib, V)) * 3).tangent

        return first, second, inside()

    both(program)


def test_repr_of_a_dual_tensor() -> None:
    def program(lib, fw):
        with fw.dual_level():
            return repr(fw.make_dual(lib.tensor([1.0, 2.5], dtype=lib.float64),
                                     lib.tensor([0.5, -1.0], dtype=lib.float64)))

    both(program)


MISUSES = {
    "make_dual outside a level": lambda lib, fw: fw.make_dual(_tensor(lib, X), _tensor(lib, V)),
    "integer primal": lambda lib, fw: (fw.enter_dual_level(),
                                       fw.make_dual(lib.arange(3), lib.tensor([1.0, 2, 3]))),
    "integer tangent": lambda lib, fw: (fw.enter_dual_level(),
                                        fw.make_dual(lib.tensor([1.0, 2, 3]), lib.arange(3))),
    "shape mismatch": lambda lib, fw: (fw.enter_dual_level(),
                                       fw.make_dual(_tensor(lib, X), _tensor(lib, W))),
    "nested levels": lambda lib, fw: (fw.enter_dual_level(), fw.enter_dual_level()),
    "exit without a level": lambda lib, fw: fw.exit_dual_level(),
    "exit another level": lambda lib, fw: (fw.enter_dual_level(), fw.exit_dual_level(level=3)),
    "make_dual at another level": lambda lib, fw: (
        fw.enter_dual_level(), fw.make_dual(_tensor(lib, X), _tensor(lib, V), level=2)),
    "unpack_dual at another level": lambda lib, fw: (
        fw.enter_dual_level(),
        fw.unpack_dual(fw.make_dual(_tensor(lib, X), _tensor(lib, V)), level=2)),
    "make_dual of a dual": lambda lib, fw: (
        fw.enter_dual_level(),
        fw.make_dual(fw.make_dual(_tensor(lib, X), _tensor(lib, V)), _tensor(lib, V))),
    "unpack_dual of a number": lambda lib, fw: (fw.enter_dual_level(), fw.unpack_dual(3)),
}


@pytest.mark.parametrize("misuse", MISUSES, ids=list(MISUSES))
def test_misuses_raise_torchs_errors(misuse: str) -> None:
    outcome = both(MISUSES[misuse])
    assert outcome[0] == "error", outcome


def test_a_tangent_of_another_float_dtype_is_kept_as_it_is() -> None:
    def program(lib, fw):
        with fw.dual_level():
            dual = fw.make_dual(_tensor(lib, X), lib.ones(3, 4, dtype=lib.float32))
            return str(fw.unpack_dual(dual).tangent.dtype), str(fw.unpack_dual(dual).primal.dtype)

    both(program)


def test_unpack_outside_a_level_and_of_plain_tensors() -> None:
    def program(lib, fw):
        x = _tensor(lib, X)
        outside = fw.unpack_dual(x)
        with fw.dual_level():
            inside = fw.unpack_dual(x)
            integer = fw.unpack_dual(lib.arange(3))
        return outside.primal is x, outside.tangent, inside.tangent, integer.tangent

    both(program)


# -- propagation -------------------------------------------------------------------------------

def _composite(lib: Any, x: Any, w: Any) -> Any:
    """Broadcasting, reductions, views, indexing and a softmax: many ops' formulas at once."""
    y = (x * w).tanh() + x.exp() / (1 + w.abs())
    z = y.t().reshape(2, 6)[:, 1:4].softmax(-1)
    return (z.sum(0) * y.mean()).pow(2), y.max(1).values, lib.cat([y[0], z[1]])


def test_tangents_flow_through_ops() -> None:
    def program(lib, fw):
        w = _tensor(lib, W)
        with fw.dual_level():
            outputs = _composite(lib, fw.make_dual(_tensor(lib, X), _tensor(lib, V)), w)
            return tuple(fw.unpack_dual(o) for o in outputs)

    both(program)


def test_a_missing_input_tangent_counts_as_zero() -> None:
    def program(lib, fw):
        with fw.dual_level():
            w = fw.make_dual(_tensor(lib, W), _tensor(lib, W) * 0.5)
            outputs = _composite(lib, _tensor(lib, X), w)
            return tuple(fw.unpack_dual(o).tangent for o in outputs)

    both(program)


def test_grad_modes_do_not_stop_forward_ad() -> None:
    def program(lib, fw):
        with fw.dual_level():
            dual = fw.make_dual(_tensor(lib, X), _tensor(lib, V))
            with lib.no_grad():
                a = fw.unpack_dual(dual.sin()).tangent
            with lib.inference_mode():
                b = fw.unpack_dual(dual.sin() * 2).tangent
            return a, b

    both(program)


def test_outputs_that_are_not_differentiable_get_no_tangent() -> None:
    def program(lib, fw):
        with fw.dual_level():
            dual = fw.make_dual(_tensor(lib, X), _tensor(lib, V))
            values, indices = dual.max(1)
            return (fw.unpack_dual(indices).tangent, fw.unpack_dual(dual.argmax()).tangent,
                    fw.unpack_dual(dual > 0).tangent, fw.unpack_dual(values).tangent,
                    str(fw.unpack_dual(dual.float()).tangent.dtype),
                    fw.unpack_dual(dual.detach()).tangent)

    both(program)


def test_views_share_their_base_tangent() -> None:
    def program(lib, fw):
        with fw.dual_level():
            t = _tensor(lib, V)
            dual = fw.make_dual(_tensor(lib, X), t)
            view = dual[1:].t()
            view_tangent = fw.unpack_dual(view).tangent
            return view_tangent._base is t, view_tangent, dual.unbind(1)[2]

    both(program)


# -- in-place ops -------------------------------------------------------------------------------

def test_in_place_ops_update_the_tangent_in_place() -> None:
    def program(lib, fw):
        with fw.dual_level():
            y = fw.make_dual(_tensor(lib, X), _tensor(lib, V)).clone()
            tangent = fw.unpack_dual(y).tangent
            y.mul_(_tensor(lib, W)).add_(y.exp()).div_(2.0).clamp_(-1.0, 0.5)
            return fw.unpack_dual(y).tangent is tangent, fw.unpack_dual(y)

    both(program)


def test_in_place_op_with_a_dual_argument_gives_a_plain_tensor_a_tangent() -> None:
    def program(lib, fw):
        with fw.dual_level():
            z = _tensor(lib, X)
            z.mul_(fw.make_dual(_tensor(lib, W), _tensor(lib, W) + 1))
            return fw.unpack_dual(z)

    both(program)


def test_in_place_op_on_a_view_updates_its_base_tangent() -> None:
    def program(lib, fw):
        with fw.dual_level():
            other = fw.make_dual(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64))
            dual_base = fw.make_dual(lib.zeros(4, dtype=lib.float64),
                                     lib.zeros(4, dtype=lib.float64))
            dual_base[:2].add_(other)
            plain_base = lib.zeros(4, dtype=lib.float64)
            plain_base[1:3].add_(other)
            return fw.unpack_dual(dual_base).tangent, fw.unpack_dual(plain_base).tangent

    both(program)


def test_in_place_spec_entries_update_the_tangent() -> None:
    def program(lib, fw):
        with fw.dual_level():
            y = fw.make_dual(_tensor(lib, X), _tensor(lib, V)).clone()
            y[0].zero_()
            y[1].fill_(fw.make_dual(lib.tensor(2.0, dtype=lib.float64),
                                    lib.tensor(3.0, dtype=lib.float64)))
            z = fw.make_dual(_tensor(lib, X[:1]), _tensor(lib, V[:1])).clone()
            z.squeeze_(0)
            return fw.unpack_dual(y), fw.unpack_dual(z)

    both(program)


# -- nesting with reverse mode ----------------------------------------------------------------

def _loss(lib: Any, x: Any) -> Any:
    return (x.exp() * x.sin()).sum() + (x * x).tanh().sum() + x.pow(3).mean()


def test_make_dual_and_unpack_dual_are_backward_differentiable() -> None:
    def program(lib, fw):
        x = _tensor(lib, X, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(x, _tensor(lib, V))
            primal = fw.unpack_dual(dual).primal
            (grad,) = lib.autograd.grad((primal * dual).sum(), x)
            return dual.grad_fn.name(), primal.grad_fn.name(), grad

    both(program)


@pytest.mark.parametrize("create_graph", [True, False])
def test_forward_over_reverse_gives_hessian_vector_products(create_graph: bool) -> None:
    """The tangent of a gradient is H v; saved outputs (exp's result) keep their tangents."""
    def program(lib, fw):
        x = _tensor(lib, X, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(x, _tensor(lib, V))
            (grad,) = lib.autograd.grad(_loss(lib, dual), dual, create_graph=create_graph)
            return fw.unpack_dual(grad)

    both(program)


@pytest.mark.parametrize("create_graph", [True, False])
def test_forward_over_reverse_through_a_broadcast(create_graph: bool) -> None:
    """The engine sums a broadcast input's gradient back to its shape with the tangent."""
    def program(lib, fw):
        w = _tensor(lib, W, requires_grad=True)
        with fw.dual_level():
            dual = fw.make_dual(w, _tensor(lib, W) * 2)
            loss = ((_tensor(lib, X) * dual).sin() + dual.exp()).sum()
            (grad,) = lib.autograd.grad(loss, dual, create_graph=create_graph)
            return fw.unpack_dual(grad)

    both(program)


def test_reverse_over_forward_differentiates_a_tangent() -> None:
    """A tangent's computation is recorded when its inputs require grad (only the values of
    the result are compared: it carries a tangent of its own that has no meaning)."""
    def program(lib, fw):
        x = _tensor(lib, X, requires_grad=True)
        v = _tensor(lib, V, requires_grad=True)
        with fw.dual_level():
            tangent = fw.unpack_dual(_loss(lib, fw.make_dual(x, v))).tangent
            grads = lib.autograd.grad(tangent, (x, v))
            return tangent, tuple(fw.unpack_dual(g).primal for g in grads)

    both(program)


# -- a small MLP ------------------------------------------------------------------------------

def _mlp(lib: Any, x: Any, w1: Any, b1: Any, w2: Any, b2: Any, target: Any) -> Any:
    functional = lib.nn.functional
    hidden = functional.gelu(functional.linear(x, w1, b1))
    logits = functional.linear(hidden.tanh(), w2, b2)
    return functional.cross_entropy(logits, target), logits


def test_jvp_of_a_small_mlp_against_torch() -> None:
    arrays = [RNG.standard_normal(s) for s in [(5, 4), (6, 4), (6,), (3, 6), (3,)]]
    tangents = [RNG.standard_normal(a.shape) for a in arrays]
    target = np.array([0, 2, 1, 1, 0])

    def program(lib, fw):
        with fw.dual_level():
            duals = [fw.make_dual(_tensor(lib, a), _tensor(lib, t))
                     for a, t in zip(arrays, tangents, strict=True)]
            loss, logits = _mlp(lib, *duals, lib.tensor(target))
            return fw.unpack_dual(loss), fw.unpack_dual(logits)

    both(program)


def test_jvp_of_the_mlp_loss_matches_finite_differences() -> None:
    arrays = [RNG.standard_normal(s) for s in [(5, 4), (6, 4), (6,), (3, 6), (3,)]]
    tangents = [RNG.standard_normal(a.shape) for a in arrays]
    target = runtime.tensor(np.array([0, 2, 1, 1, 0]))
    fw = runtime.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(runtime.tensor(a), runtime.tensor(t))
                 for a, t in zip(arrays, tangents, strict=True)]
        jvp = fw.unpack_dual(_mlp(runtime, *duals, target)[0]).tangent.item()

    def loss_at(step: float) -> float:
        moved = [runtime.tensor(a + step * t) for a, t in zip(arrays, tangents, strict=True)]
        return _mlp(runtime, *moved, target)[0].item()

    assert jvp == pytest.approx((loss_at(1e-6) - loss_at(-1e-6)) / 2e-6, rel=1e-6)


# -- jacobian(strategy="forward-mode") and gradcheck(check_forward_ad=True) -------------------

def test_forward_mode_jacobian_against_torch() -> None:
    def program(lib, fw):
        def f(x, w):
            return (x * w).tanh().sum(0), x.exp().mean()

        inputs = (_tensor(lib, X), _tensor(lib, W))
        forward = lib.autograd.functional.jacobian(f, inputs, strategy="forward-mode",
                                                   vectorize=True)
        single = lib.autograd.functional.jacobian(lambda x: x.sin(), inputs[1],
                                                  strategy="forward-mode", vectorize=True)
        return forward, single

    both(program)
    ours = runtime.autograd.functional
    x = runtime.tensor(X)
    np.testing.assert_allclose(
        ours.jacobian(lambda a: a.pow(3).sum(1), x, strategy="forward-mode")._data,
        ours.jacobian(lambda a: a.pow(3).sum(1), x)._data, rtol=1e-12)


def test_forward_over_reverse_hessian_against_torch() -> None:
    def program(lib, fw):
        def f(x, w):
            return (x * w).tanh().pow(2).sum() + x.exp().mean()

        return lib.autograd.functional.hessian(f, (_tensor(lib, X), _tensor(lib, V)),
                                               vectorize=True,
                                               outer_jacobian_strategy="forward-mode")

    both(program)


@pytest.mark.parametrize("keyword", ["create_graph", "strict"])
def test_forward_mode_jacobian_refuses_what_torch_refuses(keyword: str) -> None:
    def program(lib, fw):
        return lib.autograd.functional.jacobian(lambda x: x * 2, _tensor(lib, W),
                                                strategy="forward-mode", vectorize=True,
                                                **{keyword: True})

    assert both(program)[0] == "error"


def test_gradcheck_checks_forward_mode() -> None:
    x = runtime.tensor(X, requires_grad=True)
    w = runtime.tensor(W, requires_grad=True)

    def f(a: Any, b: Any) -> Any:
        return (a * b).sin().sum(1), a.exp()

    gradcheck = runtime.autograd.gradcheck
    assert gradcheck(f, (x, w), check_forward_ad=True)
    assert gradcheck(f, (x, w), check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(AssertionError, match="at least one of check_forward_ad"):
        gradcheck(f, (x, w), check_forward_ad=False, check_backward_ad=False)


def test_gradcheck_reports_a_wrong_forward_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    from generated import forward

    monkeypatch.setattr(forward, "sin", lambda self_p, self_t, result: self_t * 2)
    x = runtime.tensor(W, requires_grad=True)
    assert runtime.autograd.gradcheck(lambda a: a.sin(), (x,))  # backward is untouched
    with pytest.raises(runtime.autograd.GradcheckError,
                       match="Jacobian computed with forward mode mismatch for output 0 "
                             "with respect to input 0"):
        runtime.autograd.gradcheck(lambda a: a.sin(), (x,), check_forward_ad=True)


# -- the spec ---------------------------------------------------------------------------------

def _torch_forward_less() -> set[str]:
    """The entries of torch's derivatives.yaml with no forward formula (no key that names
    an output): forward AD raises on them in torch."""
    import yaml

    from codegen.compare_torch import torch_spec_path

    names = set()
    for entry in yaml.safe_load(torch_spec_path().read_text(encoding="utf-8")):
        returns = entry["name"].rsplit("->", 1)[1]
        outputs = {"result"} | {word.strip(" ()") for word in returns.replace(",", " ").split()
                                if word.strip(" ()").isidentifier()}
        keys = {name.strip() for key in entry for name in key.split(",")}
        if not keys & outputs:
            names.add(entry["name"].split("(")[0])
    return names


TORCH_FORWARD_LESS = _torch_forward_less()
# Entries torch gives a forward formula that gradgen's lacks, each with its reason.
FORWARD_NOT_YET = {
}


@pytest.mark.parametrize("info", [i for i in verify.load() if i.differentiable and not any(
    d.not_implemented is not None for d in i.derivatives)], ids=lambda info: info.name)
def test_every_differentiable_op_has_a_forward_formula(info) -> None:
    # (an op with a derivative torch does not implement, as torch's acosh_, igamma or zeta,
    # has no forward formula either: forward AD raises there, as in torch; so does an op
    # whose entry in torch's derivatives.yaml has none, as _cdist_forward's)
    if info.name in TORCH_FORWARD_LESS:
        return
    if info.name in FORWARD_NOT_YET:
        assert not info.forward_derivatives, "it has one now: leave FORWARD_NOT_YET"
        pytest.xfail(FORWARD_NOT_YET[info.name])
    assert info.forward_derivatives, f"{info.name} ({info.location}) has no `result:` formula"


def test_an_op_without_a_forward_formula_raises_when_it_meets_a_tangent() -> None:
    spec = "- name: relu(Tensor self) -> Tensor\n  self: grad * 2\n"
    infos = parse_spec(spec, "tiny.yaml", frozenset())
    ops_source = render_all(infos, "tiny.yaml")["ops.py"]
    assert 'forward_grad.not_implemented("relu")' in ops_source
    with pytest.raises(NotImplementedError, match="Trying to use forward AD with relu"):
        forward_grad.not_implemented("relu")
