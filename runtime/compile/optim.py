"""An optimizer's step, traced through its own code, and the handlers at `step` and `zero_grad`.
Every optimizer's step runs through runtime/optim/optimizer.py's `run_step`; its ops are
lines of the update, its learning rate and `.item()`s of its state read afresh at each call
(numbers.py), its other hyperparameters constants the guards hold. A state made as
`Optimizer._make_state` makes it is made before the traced step; any other first step runs
eagerly and the next call traces again."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runtime.compile.emit import GRAD_STATE, attribute, call, reads_of, subscript, var
from runtime.compile.numbers import Number
from runtime.compile.reads import contents, same_contents
from runtime.optim.hooks import has_step_hooks
from runtime.optim.optimizer import Optimizer

if TYPE_CHECKING:
    from runtime.compile.trace import Tracer


def run_step(tracer: Tracer, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """The handler of optimizer.py's `run_step(optimizer, step, args, kwargs)`: the step traced
    through its own code (stopping where it reads a tensor's value or changes its Python
    state)."""
    optimizer, step, step_args, step_kwargs = args
    if tracer.recording and any(v is not None for v in (*step_args, *step_kwargs.values())):
        tracer.stop("optimizer.step(closure): the closure runs eagerly")
    if tracer.recording and has_step_hooks(optimizer):
        tracer.stop(f"a step hook on a {type(optimizer).__name__} optimizer (hooks run eagerly)")
    return _traced_step(tracer, optimizer, proceed, args) if tracer.recording else \
        proceed(*args)


def _traced_step(tracer: Tracer, optimizer: Any, proceed: Callable, args: tuple) -> Any:
    phase, tracer.phase = tracer.phase, "update"
    tracer.comment = type(optimizer).__name__
    tracer.guard(optimizer)
    _make_state(tracer, optimizer)
    before, broken = _python_state(optimizer), tracer.broken
    stepping, tracer.stepping = tracer.stepping, optimizer
    rates = _learning_rates(tracer, optimizer)
    try:
        return proceed(*args)
    finally:
        tracer.stepping = stepping
        for group, rate, value in rates:
            if group.get("lr") is rate:
                group["lr"] = value
        tracer.phase = phase if phase != "backward" else "update"
        if broken is None and tracer.broken is not None:
            tracer.broken = f"in {type(optimizer).__name__}.step: {tracer.broken}"
        _check_python_state(tracer, optimizer, before, broken)


def _make_state(tracer: Tracer, optimizer: Any) -> None:
    """Each parameter's state made unrecorded, as the step would make it."""
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None and not optimizer.state.get(param):
                tracer.pause(optimizer._make_state, param, group)


def _learning_rates(tracer: Tracer, optimizer: Any) -> list[tuple[dict, Number, float]]:
    """Each group's float learning rate replaced, for the traced step, by a Number read from the
    group at every call."""
    owner = tracer.source.constant(optimizer, "O")
    rates = []
    for index, group in enumerate(optimizer.param_groups):
        if type(group.get("lr")) is float:
            where = subscript(subscript(attribute(owner, "param_groups"), ast.Constant(index)),
                              ast.Constant("lr"))
            rate = _read_afresh(tracer, "lr", group["lr"], where,
                                f"{type(optimizer).__name__}: the learning rate, read at "
                                "every step", "update")
            rates.append((group, rate, group["lr"]))
            group["lr"] = rate
    return rates


def state_item(tracer: Tracer, tensor: Any, value: float) -> float | None:
    """`.item()` of a 0-d tensor of the state of the optimizer being traced (Adam's step
    count): a Number, read at every call; None for any other tensor."""
    optimizer = tracer.stepping
    if optimizer is None or tensor.ndim != 0 or all(
            v is not tensor for state in optimizer.state.values() for v in state.values()):
        return None
    array = tracer.value_of(tensor._data, "an optimizer's state").name
    return _read_afresh(tracer, "item", value, call(attribute(array, "item")),
                        f"{tracer.where}: a number of its state, read at every call",
                        tracer.phase)


def _read_afresh(tracer: Tracer, prefix: str, value: float, tree: ast.expr, comment: str,
                 phase: str) -> Number:
    """A Number the step reads at every call, by the line `prefixN = tree`."""
    name = tracer.source.fresh(prefix)
    tracer.source.add(name, tree, reads_of(tree), comment, phase).neutral = True
    return Number(value, var(name))


def _python_state(optimizer: Any) -> tuple[list[tuple], list[bool]]:
    """What of an optimizer its step may change in Python: the contents of its attributes, its
    groups and its parameters' states, and which parameters have no state yet."""
    states = [optimizer.state.get(p) or {} for group in optimizer.param_groups
              for p in group["params"]]
    held = [contents(held) for held in (vars(optimizer), *optimizer.param_groups, *states)]
    return held, [not state for state in states]


def _check_python_state(tracer: Tracer, optimizer: Any, before: tuple, broken: str | None
                        ) -> None:
    """Stop the trace if the step changed the optimizer's Python state (a first step that made
    it: the next call traces again)."""
    (held, stateless), (now_held, now_stateless) = before, _python_state(optimizer)
    if len(held) == len(now_held) and all(map(same_contents, now_held, held)):
        return
    name = type(optimizer).__name__
    if len(stateless) == len(now_stateless) and any(
            old and not new for old, new in zip(stateless, now_stateless, strict=True)):
        # Its first step made its state: the next call, which finds it made, traces again.
        if broken is None:
            tracer.broken = None
        tracer.stop(f"{name} made its state in this step", passing=True)
    else:
        tracer.stop(f"{name}.step changes the optimizer's Python state (a number or an "
                    "object it holds, rebound: later calls of the generated update would "
                    "not)")


def zero_grad(tracer: Tracer, proceed: Callable, args: tuple, kwargs: dict) -> None:
    """The handler of `zero_grad(self, set_to_none)` (an optimizer's or a module's, which hand
    both on by position): a line of the step."""
    self, set_to_none = args
    if tracer.recording:
        phase = "update" if tracer.backwards else "forward"
        if set_to_none is True and isinstance(self, Optimizer) and \
                all(p.grad_fn is None for g in self.param_groups for p in g["params"]):
            tracer.guard(self)  # (its leaves' .grad emptied, a line each)
            for group in self.param_groups:
                for param in group["params"]:
                    tracer.grad_emptied(param, f"{type(self).__name__}.zero_grad", phase)
        else:
            owner = tracer.source.constant(self, "O")
            zero_grad_call = call(attribute(owner, "zero_grad"), [ast.Constant(set_to_none)])
            tracer.source.add((), ast.Expr(zero_grad_call), (),
                              f"{type(self).__name__}.zero_grad: runs as in eager", phase,
                              GRAD_STATE)
    tracer.pause(proceed, *args, **kwargs)
