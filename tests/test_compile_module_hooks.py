"""A compiled step meets the hooks this work added: a module's full backward hooks, the
global module hooks and an optimizer's step hooks run eagerly, registered before the
first call or after it (a guard sees them), with the eager step's results."""

from __future__ import annotations

import runtime
from runtime.nn import module as module_module
from runtime.optim import optimizer as optimizer_module
from tests.test_compile import _bits, _pair, _same


def _register(index, model, optimizer, seen):
    """The hooks added at step `index`, on the eager and the compiled copies alike."""
    handles = []
    if index == 1:
        handles.append(model[-1].register_full_backward_hook(
            lambda m, gi, go: (seen.append("bw"), (gi[0] * 0.5,))[1]))
    if index == 2:
        handles.append(optimizer.register_step_pre_hook(lambda o, a, k: seen.append("step")))
    return handles


def test_hooks_added_after_compiling_run_at_every_step():
    (eager_model, eager_opt, eager_step), (model, opt, _), compiled = _pair()
    seen_eager, seen = [], []
    for index in range(5):
        _register(index, eager_model, eager_opt, seen_eager)
        _register(index, model, opt, seen)
        eager_step()
        compiled()
        assert _same(_bits(model), _bits(eager_model)), index
    assert seen == seen_eager and seen.count("bw") == 4 and seen.count("step") == 3
    assert "hook" in compiled.fallback_reason


def test_a_global_module_hook_added_after_compiling_runs():
    (eager_model, _, eager_step), (model, _, _), compiled = _pair()
    compiled()
    eager_step()
    seen = []
    handle = module_module.register_module_forward_hook(
        lambda m, a, o: seen.append(type(m).__name__))
    global_step = optimizer_module.register_optimizer_step_post_hook(
        lambda o, a, k: seen.append("stepped"))
    try:
        compiled()
        eager_step()
    finally:
        handle.remove()
        global_step.remove()
    assert _same(_bits(model), _bits(eager_model))
    assert seen.count("stepped") == 2 and seen.count("Linear") == 4
    compiled()
    eager_step()
    assert _same(_bits(model), _bits(eager_model))
    assert isinstance(model, runtime.nn.Module)
