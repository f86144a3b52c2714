"""torch.func's remaining names against torch: linearize, functionalize, debug_unwrap,
replace_all_batch_norm_modules_ and rearrange (values, gradients, errors and warnings)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import runtime as rt


def _pair(array):
    return rt.tensor(array), torch.tensor(array)


def _same(ours, theirs, tol=1e-12):
    assert isinstance(ours, rt.Tensor) and isinstance(theirs, torch.Tensor)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol,
                               atol=tol)


def _raises_like(ours_call, theirs_call):
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(Exception) as ours:
        ours_call()
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


# -- linearize ----------------------------------------------------------------------------------

def _two_outputs(lib):
    return lambda a, b: (lib.sin(a) * b, {"s": (a * b).exp()})


def test_linearize_values_like_torch():
    data = np.random.default_rng(0).standard_normal((2, 3))
    (xa, xt), (ya, yt) = _pair(data), _pair(data[::-1].copy())
    (va, vt), (wa, wt) = _pair(data * 0.5), _pair(data + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's fx constant folding warns; gradgen does not
        out_t, fn_t = torch.func.linearize(_two_outputs(torch), xt, yt)
    out_a, fn_a = rt.func.linearize(_two_outputs(rt), xa, ya)
    _same(out_a[0], out_t[0])
    _same(out_a[1]["s"], out_t[1]["s"])
    for _ in range(2):  # the jvp function may be called again
        jvp_a, jvp_t = fn_a(va, wa), fn_t(vt, wt)
        _same(jvp_a[0], jvp_t[0])
        _same(jvp_a[1]["s"], jvp_t[1]["s"])


def test_linearize_keeps_the_graph_of_its_output():
    data = np.array([0.5, -1.0, 2.0])
    xa = rt.tensor(data, requires_grad=True)
    xt = torch.tensor(data, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_t, fn_t = torch.func.linearize(torch.sin, xt)
    out_a, fn_a = rt.func.linearize(rt.sin, xa)
    _same(out_a, out_t)
    out_a.sum().backward()
    out_t.sum().backward()
    _same(xa.grad, xt.grad)
    _same(fn_a(rt.ones(3, dtype=rt.float64)).detach(), fn_t(torch.ones(3, dtype=torch.float64))
          .detach())


@pytest.mark.parametrize("tangents", [
    lambda lib: (lib.ones(4, dtype=lib.float64),),
    lambda lib: (lib.ones(3, dtype=lib.float32),),
    lambda lib: (lib.ones(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)),
    lambda lib: ((lib.ones(3, dtype=lib.float64),),),
    lambda lib: (),
])
def test_linearize_tangent_errors_like_torch(tangents):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fn_t = torch.func.linearize(torch.sin, torch.zeros(3, dtype=torch.float64))
    _, fn_a = rt.func.linearize(rt.sin, rt.zeros(3, dtype=rt.float64))
    _raises_like(lambda: fn_a(*tangents(rt)), lambda: fn_t(*tangents(torch)))


def test_linearize_nested_tangent_structure_error_like_torch():
    def make(lib):
        return lambda a, pair: a * pair[0] * pair[1]

    def primals(lib):
        return lib.ones(2), (lib.ones(2), lib.ones(2))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, fn_t = torch.func.linearize(make(torch), *primals(torch))
    _, fn_a = rt.func.linearize(make(rt), *primals(rt))
    _raises_like(lambda: fn_a(rt.ones(2), [rt.ones(2), rt.ones(2)]),
                 lambda: fn_t(torch.ones(2), [torch.ones(2), torch.ones(2)]))
    _same(fn_a(rt.ones(2), (rt.ones(2), rt.ones(2))),
          fn_t(torch.ones(2), (torch.ones(2), torch.ones(2))))


# -- functionalize, debug_unwrap ----------------------------------------------------------------

def test_functionalize_runs_the_function_like_torch():
    def body(lib):
        def f(x):
            y = x.clone()
            y.add_(1.0)
            x.mul_(2.0)
            return y.view(-1)[:2] * 3
        return f

    data = np.arange(6.0).reshape(2, 3)
    for remove in ("mutations", "mutations_and_views"):
        xa, xt = _pair(data)
        g_a = rt.func.functionalize(body(rt), remove=remove)
        g_t = torch.func.functionalize(body(torch), remove=remove)
        _same(g_a(xa), g_t(xt))
        _same(xa, xt)  # the input's mutation is kept, as torch copies it back
    g_a, g_t = rt.func.functionalize(rt.sin), torch.func.functionalize(torch.sin)
    assert g_a.__name__ == g_t.__name__ == "sin"


def test_functionalize_rejects_an_unknown_remove_like_torch():
    _raises_like(lambda: rt.func.functionalize(rt.sin, remove="views"),
                 lambda: torch.func.functionalize(torch.sin, remove="views"))


def test_debug_unwrap_like_torch():
    xa = rt.ones(2)
    assert rt.func.debug_unwrap(xa) is xa
    assert rt.func.debug_unwrap(xa, recurse=False) is xa
    _raises_like(lambda: rt.func.debug_unwrap(3), lambda: torch.func.debug_unwrap(3))


# -- replace_all_batch_norm_modules_ --------------------------------------------------------------

def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4),
                         nn.Sequential(nn.BatchNorm1d(5, track_running_stats=False),
                                       nn.InstanceNorm2d(4, track_running_stats=True)),
                         nn.BatchNorm3d(2))


def test_replace_all_batch_norm_modules_like_torch():
    ours, theirs = _model(rt), _model(torch)
    assert rt.func.replace_all_batch_norm_modules_(ours) is ours
    torch.func.replace_all_batch_norm_modules_(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    for a, b in zip(ours.modules(), theirs.modules(), strict=True):
        for name in ("running_mean", "running_var", "num_batches_tracked",
                     "track_running_stats"):
            assert (getattr(a, name, "absent") is None) == (getattr(b, name, "absent") is None)
    single = rt.nn.BatchNorm1d(3)
    rt.func.replace_all_batch_norm_modules_(single)
    assert single.running_mean is None and not single.track_running_stats
    data = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    single.eval()
    reference = torch.nn.BatchNorm1d(3)
    torch.func.replace_all_batch_norm_modules_(reference)
    reference.eval()
    _same(single(rt.tensor(data)).detach(), reference(torch.tensor(data)).detach(), 1e-6)


# -- rearrange ------------------------------------------------------------------------------------

CASES = [
    ((2, 3, 4), "a b c -> c a b", {}),
    ((2, 3, 4), "a b c -> a (b c)", {}),
    ((2, 3, 4), "a b c -> (a b c)", {}),
    ((2, 3, 4), "a b c -> (c a) b", {}),
    ((2, 6, 4), "a (h w) c -> a h w c", {"h": 2}),
    ((2, 6, 4), "a (h w) c -> (w a) c h", {"w": 2}),
    ((2, 6, 4), "a (h w) c -> a h w c", {"h": 3, "w": 2}),
    ((2, 3, 4), "a b c -> a b c 1", {}),
    ((2, 3, 4), "a b c -> 1 a 1 b (1 c)", {}),
    ((2, 3, 4), "a 1 c -> a c", {}),
    ((2, 1, 4), "a (b 1) c -> a b c", {}),
    ((2, 3, 4), "... c -> c ...", {}),
    ((2, 3, 4), "a ... -> ... a", {}),
    ((2, 3, 4), "a ... -> (... a)", {}),
    ((2, 3, 4), "... -> ...", {}),
    ((2, 3, 4), "a b c ... -> a b c ...", {}),
    ((2, 0), "a (b c) -> a b c", {"b": 2}),
    ((), "->", {}),
    ((), "-> 1", {}),
    ((8, 6), "(h1 h) (w1 w) -> (h1 w1) h w", {"h1": 2, "w1": 3}),
]


@pytest.mark.parametrize(("shape", "pattern", "lengths"), CASES)
def test_rearrange_like_torch(shape, pattern, lengths):
    data = np.arange(float(np.prod(shape))).reshape(shape)
    xa = rt.tensor(data, requires_grad=True)
    xt = torch.tensor(data, requires_grad=True)
    ya = rt.func.rearrange(xa, pattern, **lengths)
    yt = torch.func.rearrange(xt, pattern, **lengths)
    _same(ya, yt)
    if ya.numel():
        weights = np.linspace(-1.0, 1.0, ya.numel()).reshape(tuple(ya.shape))
        (ya * rt.tensor(weights)).sum().backward()
        (yt * torch.tensor(weights)).sum().backward()
        _same(xa.grad, xt.grad)


def test_rearrange_stacks_a_list_like_torch():
    rows = np.arange(6.0).reshape(2, 3)
    ours = rt.func.rearrange([rt.tensor(r) for r in rows], "a b -> b a")
    theirs = torch.func.rearrange(tuple(torch.tensor(r) for r in rows), "a b -> b a")
    _same(ours, theirs)


ERRORS = [
    ((2, 3, 4), "a (b c) -> a b c", {}),
    ((2, 3, 4), "a b -> a b", {}),
    ((2, 3, 4), "a b c d e ... -> a b c d e ...", {}),
    ((2, 3, 4), "a (b c d e) ... -> a b c d e ...", {}),
    ((2, 3, 4), "1 1 1 1 ... -> ...", {}),
    ((2, 3, 4), "a b c -> a b", {}),
    ((2, 3, 4), "a b c -> a b c d", {}),
    ((2, 3, 4), "a b c -> a b 2 c", {}),
    ((2, 3, 4), "a b c", {}),
    ((2, 3, 4), "a -> b -> c", {}),
    ((2, 3, 4), "a b c -> a b c", {"d": 2}),
    ((2, 3, 4), "a b c -> a b c", {"a": 3}),
    ((2, 3, 4), "a b c -> a b c", {"a": 2.0}),
    ((2, 3, 4), "a b b -> a b", {}),
    ((2, 3, 4), "a b (c -> a b c", {}),
    ((2, 3, 4), "a b c) -> a b c", {}),
    ((2, 3, 4), "a b ((c)) -> a b c", {}),
    ((2, 3, 4), "a b c_ -> a b c_", {}),
    ((2, 3, 4), "a b 1c -> a b 1c", {}),
    ((2, 3, 4), "a b c. -> a b c", {}),
    ((2, 3, 4), "a ... ... -> a", {}),
    ((2, 3, 4), "a b c -> ... a b c", {}),
    ((2, 3, 4), "a (b ...) -> a b ...", {}),
    ((2, 3, 4), "a b c -> a b c!", {}),
    ((2, 3, 4), "a b c -> a 0 b c", {}),
    ((2, 6, 4), "(a b) c d -> a b c d", {}),
    ((2, 6, 4), "a (h w) c -> a h w c", {"h": 4}),
    ((2, 6, 4), "a (h w) c -> a h w c", {"h": 3, "w": 3}),
    ((2, 3), "a (b c d) -> a b c d", {"b": 3, "d": 2}),
    ((2, 6), "a (b c) -> a b c", {"b": 0}),
]


@pytest.mark.parametrize(("shape", "pattern", "lengths"), ERRORS)
def test_rearrange_errors_like_torch(shape, pattern, lengths):
    _raises_like(lambda: rt.func.rearrange(rt.zeros(shape), pattern, **lengths),
                 lambda: torch.func.rearrange(torch.zeros(shape), pattern, **lengths))


def test_rearrange_ellipsis_length_is_refused_like_torch():
    lengths = {"\u2026": 1}
    _raises_like(lambda: rt.func.rearrange(rt.zeros(2), "a -> a", **lengths),
                 lambda: torch.func.rearrange(torch.zeros(2), "a -> a", **lengths))


def test_rearrange_warns_on_discouraged_names_like_torch():
    pattern = "for axis -> axis for"  # a keyword and 'axis' (each warned per side, once)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.func.rearrange(torch.zeros(2, 3), pattern)
        torch.func.rearrange(torch.zeros(2, 3), pattern)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        rt.func.rearrange(rt.zeros(2, 3), pattern)
        rt.func.rearrange(rt.zeros(2, 3), pattern)
    assert [(w.category, str(w.message)) for w in ours] == \
        [(w.category, str(w.message)) for w in theirs]
