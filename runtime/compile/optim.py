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

from runtime.compile.emit import GRAD_NONE, GRAD_STATE, attribute, call, subscript, var
from runtime.compile.numbers import Number
from runtime.optim.hooks import has_step_hooks
from runtime.optim.optimizer import Optimizer

if TYPE_CHECKING:
    from runtime.compile.trace import Tracer


def run_step(tracer: Tracer, proceed: Callable, args: tuple, kwargs: dict) -> Any:
    """The handler of optimizer.py's `run_step(optimizer, step, args, kwargs)`."""
    if tracer.recording and any(v is not None for v in (*args[2], *args[3].values())):
        tracer.stop("optimizer.step(closure): the closure runs eagerly")
    if tracer.recording and has_step_hooks(args[0]):
        tracer.stop(f"a step hook on a {type(args[0]).__name__} optimizer (hooks run eagerly)")
    if not tracer.recording:
        return proceed(*args)
    return _traced_step(tracer, *args, run_step=proceed)


def _traced_step(tracer: Tracer, optimizer: Any, step: Callable, args: tuple, kwargs: dict,
                 run_step: Callable) -> Any:
    """The step traced through its own code (stopping where it reads a tensor's value or changes
    its Python state)."""
    phase, tracer.phase = tracer.phase, "update"
    tracer.comment = type(optimizer).__name__
    if all(o is not optimizer for o in tracer.optimizers):
        tracer.optimizers.append(optimizer)
    _make_state(tracer, optimizer)
    before, broken = _python_state(optimizer), tracer.broken
    stepping, tracer.stepping = tracer.stepping, optimizer
    rates = _learning_rates(tracer, optimizer)
    try:
        return run_step(optimizer, step, args, kwargs)
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
            name = tracer.source.fresh("lr")
            where = subscript(subscript(attribute(owner, "param_groups"), ast.Constant(index)),
                              ast.Constant("lr"))
            tracer.source.add(name, where, (),
                              f"{type(optimizer).__name__}: the learning rate, read at "
                              "every step", "update").neutral = True
            rate = Number(group["lr"], var(name), (name,))
            rates.append((group, rate, group["lr"]))
            group["lr"] = rate
    return rates


def holds_state(tracer: Tracer, tensor: Any) -> bool:
    """Whether `tensor` is 0-d state of the optimizer being traced."""
    optimizer = getattr(tracer, "stepping", None)
    return optimizer is not None and tensor.ndim == 0 and any(
        value is tensor for state in optimizer.state.values() for value in state.values())


def _python_state(optimizer: Any) -> list[tuple]:
    """What of an optimizer its step may change in Python (attributes, groups, state), by
    identity."""
    held = [tuple(vars(optimizer).items())]
    held += [tuple(group.items()) for group in optimizer.param_groups]
    held += [tuple((optimizer.state.get(p) or {}).items())
             for group in optimizer.param_groups for p in group["params"]]
    return held


def _same_items(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1]
                                    for x, y in zip(a, b, strict=True))


def _check_python_state(tracer: Tracer, optimizer: Any, before: list[tuple],
                        broken: str | None) -> None:
    """Stop the trace if the step changed the optimizer's Python state (a first step that made
    it: the next call traces again)."""
    after = _python_state(optimizer)
    if len(after) == len(before) and all(map(_same_items, before, after)):
        return
    name = type(optimizer).__name__
    states = 1 + len(optimizer.param_groups)
    if len(after) == len(before) and any(
            not old and new for old, new in zip(before[states:], after[states:], strict=True)):
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
            # zero_grad on leaves, set_to_none: each .grad emptied; the optimizer is guarded from
            # here on.
            if all(o is not self for o in tracer.optimizers):
                tracer.optimizers.append(self)
            for group in self.param_groups:
                for param in group["params"]:
                    name = tracer.tensor_name(param)
                    label = tracer.of(param).label or name
                    tracer.source.add((), None, (), f"{type(self).__name__}.zero_grad: "
                                      f"{label}.grad = None", phase, GRAD_NONE,
                                      name).tensor_tree = tracer.tensor_tree(name)
        else:
            owner = tracer.source.constant(self, "O")
            zero_grad_call = call(attribute(owner, "zero_grad"), [ast.Constant(set_to_none)])
            tracer.source.add((), ast.Expr(zero_grad_call), (),
                              f"{type(self).__name__}.zero_grad: runs as in eager", phase,
                              GRAD_STATE)
    tracer.pause(proceed, *args, **kwargs)

