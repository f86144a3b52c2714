"""An optimizer's step, traced through its own code, and the listeners at `step` and
`zero_grad`.

Every optimizer's step runs through runtime/optim/optimizer.py's `run_step`, where the
tracer listens: the step's ops are lines of the update, as the forward's are. What Python
computes from numbers that change between steps is read afresh at every call
(runtime/compile/numbers.py): the learning rate, a Python float, is read from its param
group (a scheduler's change takes effect without a new trace), and a `.item()` of the
optimizer's state (Adam's step count, from which it computes its bias corrections) from
that tensor; the other hyperparameters are constants of the trace, which the guards hold
by identity. An optimizer whose state is made as its step would make it
(`Optimizer._make_state`: Adam's zero moments) has it made before the traced step, which
then runs as every later one does; any other's first step, which makes its state, runs
eagerly and the next call traces again.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from runtime.compile.emit import GRAD_NONE, GRAD_STATE, attribute, call, subscript, var
from runtime.compile.numbers import Number
from runtime.optim.optimizer import Optimizer

if TYPE_CHECKING:
    from runtime.compile.trace import Tracer


def step_listener(tracer: Tracer, run_step: Callable) -> Callable:
    """Listens at runtime/optim/optimizer.py's `run_step`, where every optimizer's step
    runs: traced through its own code."""
    def listener(self: Any, step: Callable, args: tuple, kwargs: dict) -> Any:
        if not tracer.recording:
            return run_step(self, step, args, kwargs)
        if any(value is not None for value in (*args, *kwargs.values())):
            tracer.stop("optimizer.step(closure): the closure runs eagerly")
            return run_step(self, step, args, kwargs)
        return _traced_step(tracer, self, run_step, step, args, kwargs)

    return listener


def _traced_step(tracer: Tracer, optimizer: Any, run_step: Callable, step: Callable,
                 args: tuple, kwargs: dict) -> Any:
    """The step traced through its own code: its ops are lines of the update, its
    learning rates read afresh (`_learning_rates`), its other hyperparameters constants
    of the trace, which the guards hold (a step that reads a tensor's value other than
    its state's, or branches on the learning rate, stops the trace)."""
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
            # (Where it stopped: in the optimizer's own code.)
            tracer.broken = f"in {type(optimizer).__name__}.step: {tracer.broken}"
        _check_python_state(tracer, optimizer, before, broken)


def _make_state(tracer: Tracer, optimizer: Any) -> None:
    """The state of each parameter the step will update, made unrecorded as the step
    would make it (`Optimizer._make_state`; nothing for an optimizer without one)."""
    tracer.paused += 1
    try:
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None and not optimizer.state.get(param):
                    optimizer._make_state(param, group)
    finally:
        tracer.paused -= 1


def _learning_rates(tracer: Tracer, optimizer: Any) -> list[tuple[dict, Number, float]]:
    """Each group's learning rate that is a Python float, replaced for the traced step by
    a Number read from the group at every call (`lr0 = O0.param_groups[0]['lr']`)."""
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
    """Whether `tensor` is the state of the optimizer whose step is traced now (its
    `.item()` is read afresh at every call)."""
    optimizer = getattr(tracer, "stepping", None)
    return optimizer is not None and tensor.ndim == 0 and any(
        value is tensor for state in optimizer.state.values() for value in state.values())


def _python_state(optimizer: Any) -> list[tuple]:
    """What of an optimizer its step may change in Python: its attributes, each group's
    values and each parameter's state, by identity (a tensor changed in place keeps its)."""
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
    """Stop the trace if the step changed the optimizer's Python state: later calls of the
    generated update would not (a count kept as a Python number, a state made). `broken`:
    the trace's reason to stop before the step."""
    after = _python_state(optimizer)
    if len(after) == len(before) and all(map(_same_items, before, after)):
        return
    name = type(optimizer).__name__
    states = 1 + len(optimizer.param_groups)
    if len(after) == len(before) and any(
            not old and new for old, new in zip(before[states:], after[states:], strict=True)):
        # Its first step made its state (a step that stopped the trace making it, as SGD
        # clones its first gradient, too): the next call, which finds it made, traces again.
        if broken is None:
            tracer.broken = None
        tracer.stop(f"{name} made its state in this step", passing=True)
    else:
        tracer.stop(f"{name}.step changes the optimizer's Python state (a number or an "
                    "object it holds, rebound: later calls of the generated update would "
                    "not)")


def zero_grad_listener(tracer: Tracer, zero_grad: Callable) -> Callable:
    def listener(self: Any, set_to_none: bool = True) -> None:
        if tracer.recording:
            phase = "update" if tracer.backwards else "forward"
            if set_to_none is True and isinstance(self, Optimizer) and \
                    all(p.grad_fn is None for g in self.param_groups for p in g["params"]):
                # zero_grad_of on a leaf, set_to_none: its .grad slot emptied. The optimizer's
                # parameter list is guarded from here on, as if it had stepped.
                if all(o is not self for o in tracer.optimizers):
                    tracer.optimizers.append(self)
                for group in self.param_groups:
                    for param in group["params"]:
                        name = tracer.tensor_name(param)
                        label = tracer.parameter_names.get(id(param), name)
                        tracer.source.add((), None, (), f"{type(self).__name__}.zero_grad: "
                                          f"{label}.grad = None", phase, GRAD_NONE,
                                          name).tensor_tree = tracer.tensor_tree(name)
            else:
                owner = tracer.source.constant(self, "O")
                zero_grad_call = call(attribute(owner, "zero_grad"), [ast.Constant(set_to_none)])
                tracer.source.add((), ast.Expr(zero_grad_call), (),
                                  f"{type(self).__name__}.zero_grad: runs as in eager", phase,
                                  GRAD_STATE)
        tracer.paused += 1
        try:
            zero_grad(self, set_to_none)
        finally:
            tracer.paused -= 1

    return listener


class Guard:
    """What of an optimizer a compiled step depends on: its parameters (identity), its
    hyperparameters other than the learning rate, and which parameters have state."""

    def __init__(self, optimizer: Any) -> None:
        self.optimizer = optimizer
        # (A learning rate that is a Python float is read at every step.)
        self.groups = [(group, tuple(group), [(k, v) for k, v in group.items()
                                              if k != "params" and not
                                              (k == "lr" and type(v) is float)],
                        list(group["params"]))
                       for group in optimizer.param_groups]
        self.stateful = self._stateful()
        # A learning rate that is a Python float is read at every step, anything else
        # guarded by identity: its type chose which.
        self.lr_types = [type(group.get("lr")) for group in optimizer.param_groups]

    def _stateful(self) -> list[bool]:
        state = self.optimizer.state
        return [bool(state.get(p)) for _, _, _, params in self.groups for p in params]
