"""A compiled step's guard skips its checks of modules and held tensors while
runtime/changes.py's count stands; every change gradgen makes to them moves the count, so
the guard checks again."""

from __future__ import annotations

import numpy as np
import pytest

import runtime
from runtime import changes
from runtime.compile import guards
from tests.test_compile import _tiny_step


class _Scaled(runtime.nn.Module):
    """A Linear whose output is scaled by a buffer of shape (1, 4)."""

    def __init__(self):
        super().__init__()
        self.layer = runtime.nn.Linear(6, 4)
        self.register_buffer("scale", runtime.full((1, 4), 2.0))

    def forward(self, x):
        return self.layer(x) * self.scale


def _scaled_step():
    """A step through _Scaled, SGD; the batch is fixed."""
    model = _Scaled()
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    x = runtime.tensor(np.random.default_rng(3).standard_normal((5, 6)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    return model, step


def _traced(step):
    compiled = runtime.compile(step)
    compiled(), compiled()
    entry = compiled.last
    assert entry.function is not None and entry.holds()
    return compiled, entry


def test_the_guard_skips_its_module_checks_until_the_count_moves(monkeypatch):
    """A write that bypasses gradgen (`vars(module)[name] = value`) is not counted: the guard
    built without VERIFY still passes, though its skipped checks would fail (docs/compile.md
    says so); once anything is counted, it checks again and fails."""
    monkeypatch.setattr(guards, "VERIFY", False)
    model, _, step = _tiny_step(runtime)
    _, entry = _traced(step)
    vars(model[1])["inplace"] = True
    assert entry.holds() is True
    changes.changed()
    assert entry.holds() is False


def test_verify_catches_a_change_that_was_not_counted():
    """Under the tests (VERIFY), the same uncounted write makes the guard raise."""
    assert guards.VERIFY
    model, _, step = _tiny_step(runtime)
    _, entry = _traced(step)
    vars(model[1])["inplace"] = True
    with pytest.raises(AssertionError, match="without counting the change"):
        entry.holds()


# Each change: `prepare(model)` makes what it needs and returns the change itself, so that
# the test sees the count move for the change alone (making a Parameter counts too).
def _direct_layer(model):
    layer = runtime.nn.Linear(20, 5)
    return lambda: model._modules.__setitem__("2", layer)


def _registry_update(model):
    bias = runtime.nn.Parameter(model[0].bias.detach().clone())
    return lambda: model[0]._parameters.update(bias=bias)


def _registry_pop(model):
    return lambda: model[0]._parameters.pop("bias")


def _forward_hook_by_hand(model):
    return lambda: model[2]._forward_hooks.__setitem__(12345, lambda *args: None)


def _deleted_attribute(model):
    return lambda: delattr(model[1], "inplace")


def _tensor_hook(model):
    return lambda: model[0].weight.register_hook(lambda grad: grad)


def _accumulator_hook(model):
    # The classic way to reach a leaf's AccumulateGrad: through a view's grad_fn.
    weight = model[0].weight
    accumulator = weight.view_as(weight).grad_fn.next_functions[0][0]
    model.kept = accumulator  # keep the node, and so its hooks, alive
    return lambda: accumulator.register_hook(lambda *args: None)


def _requires_grad_off(model):
    return lambda: setattr(model[0].bias, "requires_grad", False)


@pytest.mark.parametrize("prepare", [
    _direct_layer, _registry_update, _registry_pop, _forward_hook_by_hand,
    _deleted_attribute, _tensor_hook, _accumulator_hook, _requires_grad_off],
    ids=lambda f: f.__name__.strip("_"))
def test_a_counted_change_makes_the_guard_check_again(prepare):
    model, _, step = _tiny_step(runtime)
    change = prepare(model)
    compiled = runtime.compile(step)
    compiled(), compiled()
    entry = compiled.last
    assert entry.holds()
    before = changes.COUNT.value
    change()
    assert changes.COUNT.value > before
    assert entry.holds() is False


def test_a_buffer_reshaped_in_place_or_given_a_history_is_checked_again():
    """Tensor changes a held buffer goes through: `squeeze_` (a new shape, write_inplace),
    `.data =`, an in-place op with a tensor that requires grad (the buffer becomes a
    non-leaf, rebase_history) and `detach_()` back to a leaf."""
    model, step = _scaled_step()
    _, entry = _traced(step)
    scale = model.scale
    traced = scale.detach()
    scale.squeeze_(0)
    assert entry.holds() is False
    scale.data = traced
    assert entry.holds() is True
    zero = runtime.zeros(1, 4, requires_grad=True)  # (made first: making it counts)
    before = changes.COUNT.value
    scale.add_(zero)
    assert scale.grad_fn is not None and changes.COUNT.value > before
    assert entry.holds() is False
    scale.detach_()
    assert entry.holds() is True


def test_functional_call_through_a_compiled_forward_uses_the_swapped_weights():
    """functional_call swaps a model's parameters for one call through its registries (which
    count): a compiled function reading them traces again for the swapped ones, and its
    result is the eager one."""
    model = runtime.nn.Linear(3, 2)
    compiled = runtime.compile(lambda x: model(x))
    x = runtime.ones(4, 3)
    with runtime.no_grad():
        compiled(x), compiled(x)
        weight = runtime.full((2, 3), 0.5)
        swapped = runtime.func.functional_call(
            runtime.nn.Sequential(model), {"0.weight": weight}, (x,))
        through = runtime.func.functional_call(
            _Calling(model, compiled), {"inner.weight": weight}, (x,))
    assert np.array_equal(through.numpy(), swapped.numpy())
    assert np.array_equal(through.numpy(), (x @ weight.T + model.bias).detach().numpy())
    with runtime.no_grad():
        assert np.array_equal(compiled(x).numpy(), model(x).numpy())


class _Calling(runtime.nn.Module):
    """A module whose forward calls a compiled function of its submodule (`calls` times:
    from the second on, its guard has passed once with the swapped tensors)."""

    def __init__(self, inner, compiled, calls=1):
        super().__init__()
        self.inner = inner
        self.compiled = compiled
        self.calls = calls

    def forward(self, x):
        for _ in range(self.calls):
            y = self.compiled(x)
        return y


def test_an_out_tensor_resized_is_checked_again():
    """`out=` a held buffer of another shape resizes it (with torch's warning)."""
    model, step = _scaled_step()
    _, entry = _traced(step)
    ones = runtime.ones(4)
    before = changes.COUNT.value
    with pytest.warns(UserWarning, match="resized"):
        runtime.add(ones, ones, out=model.scale)
    assert model.scale.shape == (4,) and changes.COUNT.value > before
    assert entry.holds() is False


def test_functional_call_counts_its_swap_of_a_plain_attribute():
    """functional_call may swap a tensor that is a plain attribute of a module (in its
    `__dict__`, not a registry): a compiled function that calls the module then finds the
    module changed (VERIFY raises if that went uncounted) and gives the eager result."""
    model = runtime.nn.Linear(3, 2)
    model.extra = runtime.zeros(1)
    compiled = runtime.compile(lambda x: model(x))
    x, outer, one = runtime.ones(4, 3), _Calling(model, compiled, 2), runtime.ones(1)
    with runtime.no_grad():
        compiled(x), compiled(x)
        through = runtime.func.functional_call(outer, {"inner.extra": one}, (x,))
        assert np.array_equal(through.numpy(), model(x).numpy())
        assert model.extra.item() == 0
        assert np.array_equal(compiled(x).numpy(), model(x).numpy())


# -- an optimizer's parameter groups --------------------------------------------------------

def _fails_then_runs_as_eager(entry, compiled, model, eager_model, eager_step):
    """After a change: the guard fails, as the plain checks do, and three more steps give
    eager's losses and parameters, bit for bit."""
    assert entry.holds() is False
    for _ in range(3):
        assert compiled().item() == eager_step().item()
    for p, q in zip(model.parameters(), eager_model.parameters(), strict=True):
        assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes()


@pytest.mark.parametrize("change", [
    lambda group: group.__setitem__("momentum", 0.5),
    lambda group: group.update(weight_decay=0.1),
    lambda group: group.__setitem__("lr", np.float64(1e-3)),  # an lr of another type
    lambda group: group.setdefault("extra", 1),
    lambda group: group.__ior__({"nesterov": False, "extra": 1}),
], ids=["momentum", "update", "lr_type", "setdefault", "ior"])
def test_a_group_the_optimizer_made_counts_its_writes(change):
    """`SGD(model.parameters())` makes its group: a dict that counts its writes in
    changes.OPTIMIZERS (not COUNT: a scheduler's lr at every step must not make the guard check
    the modules again), and the guard checks the group again after any of them. The step
    retraces and keeps to eager."""
    eager_model, eager_opt, eager_step = _tiny_step(runtime)
    model, optimizer, step = _tiny_step(runtime)
    group = optimizer.param_groups[0]
    assert isinstance(group, dict) and type(group) is changes.ParamGroup
    compiled, entry = _traced(step)
    eager_step(), eager_step()
    modules, groups = changes.COUNT.value, changes.OPTIMIZERS.value
    change(group)
    change(eager_opt.param_groups[0])
    assert changes.OPTIMIZERS.value > groups and changes.COUNT.value == modules
    _fails_then_runs_as_eager(entry, compiled, model, eager_model, eager_step)


def test_a_learning_rate_write_keeps_the_module_checks_skipped(monkeypatch):
    """An lr written at every step (a scheduler) moves OPTIMIZERS only: the modules' block stays
    skipped (an uncounted write to a module goes unseen, as it would without the lr write),
    while the group's block checks again and passes."""
    monkeypatch.setattr(guards, "VERIFY", False)
    model, optimizer, step = _tiny_step(runtime)
    _, entry = _traced(step)
    vars(model[1])["inplace"] = True  # uncounted: only a module check would see it
    optimizer.param_groups[0]["lr"] = 0.5
    assert entry.holds() is True
    changes.changed()
    assert entry.holds() is False


def test_a_group_the_user_gave_stays_theirs_and_is_checked_at_every_call(monkeypatch):
    """A dict passed in the optimizer's groups stays that dict, as in torch, and a plain
    dict counts nothing: its guard checks it at every call, so even a write that goes past
    any count (dict.__setitem__) is seen."""
    import torch

    monkeypatch.setattr(guards, "VERIFY", False)
    for lib in (torch, runtime):
        given = {"params": list(lib.nn.Linear(3, 2).parameters()), "lr": 0.1}
        assert lib.optim.SGD([given]).param_groups[0] is given
    model, _, _ = _tiny_step(runtime)
    given = {"params": list(model.parameters())}
    optimizer = runtime.optim.SGD([given], lr=1e-3)
    x = runtime.ones(4, 30)

    def step():
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        return loss

    _, entry = _traced(step)
    dict.__setitem__(given, "momentum", 0.9)
    assert entry.holds() is False


def test_verify_catches_a_group_write_that_was_not_counted():
    _, optimizer, step = _tiny_step(runtime)
    _, entry = _traced(step)
    dict.__setitem__(optimizer.param_groups[0], "momentum", 0.9)
    with pytest.raises(AssertionError, match="without counting the change"):
        entry.holds()


# -- an optimizer's own lists and state ------------------------------------------------------

def _second_group(optimizer, extra):
    """A group for a parameter outside the model."""
    optimizer.add_param_group({"params": [extra]})


def _state_entry(optimizer, extra):
    optimizer.state[optimizer.param_groups[0]["params"][0]]["momentum_buffer"] = extra


@pytest.mark.parametrize("change", [
    lambda optimizer, _: optimizer.param_groups[0]["params"].reverse(),
    lambda optimizer, _: optimizer.param_groups[0]["params"].pop(),
    lambda optimizer, _: optimizer.param_groups[0]["params"].__setitem__(
        slice(0, 2), optimizer.param_groups[0]["params"][1::-1]),
    _second_group,
    lambda optimizer, _: optimizer.param_groups.pop(),
    _state_entry,
    lambda optimizer, _: setattr(optimizer, "param_groups", []),
], ids=["params_reverse", "params_pop", "params_setitem", "add_param_group", "groups_pop",
        "state_entry", "groups_replaced"])
def test_an_optimizers_lists_and_state_count_their_writes(change):
    """The optimizer's list of groups, each group's list of parameters, its state and each
    entry there, and its attributes count their writes in changes.OPTIMIZERS, so the guard,
    which skips the optimizer's checks whole while that count stands, checks them again
    after any of them and fails. The step then gives what eager gives."""
    eager_model, eager_opt, eager_step = _tiny_step(runtime)
    model, optimizer, step = _tiny_step(runtime)
    assert changes.counts_its_writes(optimizer)
    compiled, entry = _traced(step)
    eager_step(), eager_step()
    extras = [runtime.zeros(3, requires_grad=True) for _ in range(2)]
    modules, counted = changes.COUNT.value, changes.OPTIMIZERS.value
    change(optimizer, extras[0])
    change(eager_opt, extras[1])
    assert changes.OPTIMIZERS.value > counted and changes.COUNT.value == modules
    _fails_then_runs_as_eager(entry, compiled, model, eager_model, eager_step)


def test_an_optimizers_state_is_torchs_kind_and_stays_counted_through_a_state_dict():
    """`state` is a defaultdict as in torch, whose entries made on first read are dicts;
    load_state_dict keeps every container counted (its Adam entries included)."""
    import collections

    import torch

    for lib in (torch, runtime):
        optimizer = lib.optim.Adam(lib.nn.Linear(3, 2).parameters())
        assert isinstance(optimizer.state, collections.defaultdict)
        assert isinstance(optimizer.param_groups, list)
        assert isinstance(optimizer.param_groups[0]["params"], list)
    model = runtime.nn.Linear(3, 2)
    optimizer = runtime.optim.Adam(model.parameters())
    model(runtime.ones(1, 3)).sum().backward()
    optimizer.step()
    assert type(optimizer.state[model.weight]) is changes.StateEntry
    other = runtime.optim.Adam(runtime.nn.Linear(3, 2).parameters())
    other.load_state_dict(optimizer.state_dict())
    assert changes.counts_its_writes(other) and changes.counts_its_writes(optimizer)
    other.state[other.param_groups[0]["params"][0]] = {"step": runtime.tensor(1.0)}
    assert not changes.counts_its_writes(other)  # a dict of the user's own


def test_an_optimizer_holding_a_plain_container_is_checked_at_every_call(monkeypatch):
    """A plain list set as `param_groups` (counted as it is set) counts nothing itself: the
    guard then checks the optimizer at every call, so a write that goes past any count
    (list.reverse) is seen."""
    monkeypatch.setattr(guards, "VERIFY", False)
    _, optimizer, step = _tiny_step(runtime)
    _, entry = _traced(step)
    optimizer.param_groups = list(optimizer.param_groups)
    assert not changes.counts_its_writes(optimizer)
    assert entry.holds() is True and entry.holds() is True
    list.reverse(optimizer.param_groups[0]["params"])
    assert entry.holds() is False


def test_the_guard_skips_the_optimizer_until_its_count_moves(monkeypatch):
    """While OPTIMIZERS stands, an uncounted write to the optimizer's lists goes unseen by
    the guard built without VERIFY (docs/compile.md says so); a counted one makes it look."""
    monkeypatch.setattr(guards, "VERIFY", False)
    _, optimizer, step = _tiny_step(runtime)
    _, entry = _traced(step)
    list.reverse(optimizer.param_groups[0]["params"])
    assert entry.holds() is True
    optimizer.param_groups[0]["lr"] = 1e-3
    assert entry.holds() is False


def test_verify_catches_a_list_write_that_was_not_counted():
    _, optimizer, step = _tiny_step(runtime)
    _, entry = _traced(step)
    list.reverse(optimizer.param_groups[0]["params"])
    with pytest.raises(AssertionError, match="without counting the change"):
        entry.holds()


# -- the tensors a step finds anew at each call ---------------------------------------------

def _input_step():
    """A step reading its batch through a free variable (`box[0]`-style rebinding is done by
    the tests through `set_batch`)."""
    model = runtime.nn.Linear(6, 3)
    optimizer = runtime.optim.SGD(model.parameters(), lr=0.1)
    batch = runtime.tensor(np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32))

    def step():
        optimizer.zero_grad()
        loss = model(batch).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    def set_batch(value):
        nonlocal batch
        batch = value

    return step, lambda: batch, set_batch


@pytest.mark.parametrize("prepare, change", [
    (None, lambda t: t.requires_grad_()),
    (None, lambda t: setattr(t, "data", runtime.zeros(4, 7))),
    (lambda t: t.unsqueeze(0), lambda t: t.squeeze_()),  # (1, 4, 6), then (4, 6)
    (lambda t: t.requires_grad_(), lambda t: t.register_hook(lambda grad: grad)),
], ids=["requires_grad", "data", "squeeze_", "hook"])
def test_an_input_the_guard_passed_is_checked_again_after_a_counted_change(prepare, change):
    """A tensor found anew at each call (here a free variable) is checked field by field only
    when it is not the one last passed or the count moved: each change gradgen makes to it
    moves the count, so the guard checks it again and says what the plain checks say."""
    step, batch, set_batch = _input_step()
    if prepare is not None:
        set_batch(prepare(batch()))
    _, entry = _traced(step)
    before = changes.COUNT.value
    change(batch())
    assert changes.COUNT.value > before
    assert entry.holds() is False


def test_another_input_object_is_checked_in_full(monkeypatch):
    """Another tensor in the variable (a new batch) is checked in full even while the count
    stands: a batch of another shape fails, one of the same layout passes; and a batch freed
    and made again (perhaps at the same address) is never taken for the last one passed,
    which the guard holds only weakly."""
    monkeypatch.setattr(guards, "VERIFY", False)
    step, batch, set_batch = _input_step()
    compiled, entry = _traced(step)
    set_batch(runtime.ones(5, 6))
    assert entry.holds() is False
    for _ in range(20):
        set_batch(runtime.ones(4, 6))
        assert entry.holds() is True
        set_batch(runtime.ones(4, 6, dtype=runtime.float64))
        assert entry.holds() is False


def test_an_uncounted_change_to_an_input_is_skipped_and_verify_catches_it(monkeypatch):
    """A write past gradgen's code (`t._data = ...`) is not counted: without VERIFY the
    guard passes the same tensor unchecked (docs/compile.md says so); under VERIFY it
    raises."""
    step, batch, _ = _input_step()
    _, entry = _traced(step)
    object.__setattr__(batch(), "_data", np.zeros((2, 6), np.float32))
    with pytest.raises(AssertionError, match="without counting the change"):
        entry.holds()
    monkeypatch.setattr(guards, "VERIFY", False)
    _, entry = _traced(_input_step()[0])
    assert entry.holds() is True
