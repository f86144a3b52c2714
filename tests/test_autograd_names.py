"""torch.autograd's remaining names against torch: ProfilerState, ProfilerConfig,
ProfilerEvent, SavedTensor, NestedIOFunction and enforce_grad_layout_policy."""

from __future__ import annotations

import warnings

import pytest
import torch

import runtime as rt
from runtime.autograd.switches import _is_grad_layout_enforcement_enabled


def _raises_like(ours_call, theirs_call):
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(Exception) as ours:
        ours_call()
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value) == str(theirs.value)


def test_profiler_state_members_like_torch():
    ours, theirs = rt.autograd.ProfilerState, torch.autograd.ProfilerState
    assert list(ours.__members__) == list(theirs.__members__)
    for name in theirs.__members__:
        a, b = getattr(ours, name), getattr(theirs, name)
        assert (repr(a), str(a), int(a), a.name, a.value) == \
            (repr(b), str(b), int(b), b.name, b.value)
    assert ours(1) is ours.CPU and theirs(1) == theirs.CPU


def test_profiler_config_made_and_refused_like_torch():
    flags = (True, False, False, True, False)
    rt.autograd.ProfilerConfig(rt.autograd.ProfilerState.CPU, *flags, object())
    rt.autograd.ProfilerConfig(rt.autograd.ProfilerState.KINETO, *flags, object(),
                               trace_id="run")
    assert not [name for name in dir(rt.autograd.ProfilerConfig) if not name.startswith("_")]
    _raises_like(lambda: rt.autograd.ProfilerConfig(), lambda: torch.autograd.ProfilerConfig())
    _raises_like(lambda: rt.autograd.ProfilerConfig(rt.autograd.ProfilerState.CPU),
                 lambda: torch.autograd.ProfilerConfig(torch.autograd.ProfilerState.CPU))


def test_profiler_event_and_saved_tensor_cannot_be_made_like_torch():
    _raises_like(lambda: rt.autograd.ProfilerEvent(), lambda: torch.autograd.ProfilerEvent())
    _raises_like(lambda: rt.autograd.SavedTensor(), lambda: torch.autograd.SavedTensor())
    theirs = {name for name in dir(torch.autograd.ProfilerEvent) if not name.startswith("_")}
    assert theirs  # the class exists with its fields in torch; ours is a name to refer to
    assert isinstance(rt.autograd.SavedTensor, type)


# -- NestedIOFunction -----------------------------------------------------------------------------

def _subclass(lib):
    class Double(lib.autograd.NestedIOFunction):
        def forward_extended(self, pair):
            return pair[0] * 2, [pair[1] * 3]

        def backward_extended(self, g0, g1):
            return (g0 * 2, g1[0] * 3)

    return Double


def _instance(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = _subclass(lib)()
    return made, [(w.category, str(w.message).replace(lib.__name__, "")) for w in caught]


def test_nested_io_function_is_a_function_like_torch():
    assert issubclass(rt.autograd.NestedIOFunction, rt.autograd.Function)
    assert rt.autograd.function.NestedIOFunction is rt.autograd.NestedIOFunction
    (_, ours), (_, theirs) = _instance(rt), _instance(torch)
    assert [w[0] for w in ours] == [w[0] for w in theirs] == [DeprecationWarning]


def test_nested_io_function_call_fails_like_torch():
    (a, _), (t, _) = _instance(rt), _instance(torch)
    _raises_like(lambda: a((rt.ones(2), rt.ones(2))), lambda: t((torch.ones(2), torch.ones(2))))
    _raises_like(lambda: a._do_backward((rt.ones(2),), False),
                 lambda: t._do_backward((torch.ones(2),), False))


def test_nested_io_function_apply_fails_like_torch():
    for requires_grad in (True, False):
        _raises_like(lambda r=requires_grad: _subclass(rt).apply(rt.ones(2, requires_grad=r)),
                     lambda r=requires_grad: _subclass(torch).apply(
                         torch.ones(2, requires_grad=r)))


def test_nested_io_function_forward_and_backward_extended_like_torch():
    (a, _), (t, _) = _instance(rt), _instance(torch)
    xa, xt = rt.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0],
                                                                      requires_grad=True)
    a._nested_input, t._nested_input = ((xa, xa + 1),), ((xt, xt + 1),)
    out_a, out_t = a.forward(), t.forward()
    assert len(out_a) == len(out_t) == 2
    for p, q in zip(out_a, out_t, strict=True):
        assert p.tolist() == q.tolist() and p.requires_grad == q.requires_grad
    grads_a = a.backward(rt.ones(2), rt.ones(2))
    grads_t = t.backward(torch.ones(2), torch.ones(2))
    assert [g.tolist() for g in grads_a] == [g.tolist() for g in grads_t]


def test_nested_io_function_bookkeeping_like_torch():
    (a, _), (t, _) = _instance(rt), _instance(torch)
    xa, xt = rt.ones(2), torch.ones(2)
    a.save_for_backward(xa, (xa, None), [xa])
    t.save_for_backward(xt, (xt, None), [xt])
    assert len(a.to_save) == len(t.to_save) == 3
    _raises_like(lambda: a.saved_tensors, lambda: t.saved_tensors)
    a.mark_dirty(xa, other=xa)
    t.mark_dirty(xt, other=xt)
    assert len(a.dirty_tensors) == len(t.dirty_tensors) == 2
    a.mark_non_differentiable([xa])
    t.mark_non_differentiable([xt])
    assert len(a.non_differentiable) == len(t.non_differentiable) == 1
    for bad in (3, "s"):
        _raises_like(lambda b=bad: a.save_for_backward(xa, b),
                     lambda b=bad: t.save_for_backward(xt, b))


def test_nested_io_function_base_methods_raise_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, t = rt.autograd.NestedIOFunction(), torch.autograd.NestedIOFunction()
    _raises_like(lambda: a.forward_extended(rt.ones(1)), lambda: t.forward_extended(torch.ones(1)))
    _raises_like(lambda: a.backward_extended(rt.ones(1)),
                 lambda: t.backward_extended(torch.ones(1)))


# -- enforce_grad_layout_policy -----------------------------------------------------------------

def _states(lib, flag):
    policy = lib.autograd.enforce_grad_layout_policy
    seen = [flag()]
    made = policy(False)
    seen.append(flag())
    with made:
        seen.append(flag())
    seen.append(flag())
    with policy(False):
        with policy(True):
            seen.append(flag())
        seen.append(flag())
    seen.append(flag())

    @policy(False)
    def inside():
        return flag()

    seen += [flag(), inside(), flag(), policy(False).clone().mode]
    policy(True)
    return seen


def test_enforce_grad_layout_policy_like_torch():
    ours = _states(rt, _is_grad_layout_enforcement_enabled)
    theirs = _states(torch, torch._C._is_grad_layout_enforcement_enabled)
    assert ours == theirs
    assert _is_grad_layout_enforcement_enabled()


def test_gradients_under_relaxed_layout_policy_like_torch():
    def run(lib):
        p = lib.ones(2, 3, 4).permute(2, 0, 1).requires_grad_()
        with lib.autograd.enforce_grad_layout_policy(False):
            (p * 2).sum().backward()
        return p.grad

    ours, theirs = run(rt), run(torch)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.tolist() == theirs.tolist()
