"""Templates for the optimizers' updates, and the listeners that trace `step` and `zero_grad`.

An update cannot be traced like the forward: Adam's bias corrections are Python numbers
computed from the step count (`state["step"].item()`), different at every step. So each
optimizer has a template, written here once, that emits the update as eager gradgen runs
it: the same kernels (runtime/kernels.py), in the same order, with the same arguments, so
that the compiled update equals the eager one bit for bit (tests/test_compile.py checks it
over 20 steps). Hyperparameters other than the learning rate are constants of the trace
(the guards re-trace if one changes); the learning rate is read from the param group at
every step, as eager reads it, so a scheduler's change takes effect at once.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime.compile.emit import TraceBreak
from runtime.compile.optimize import number_as_array
from runtime.optim.adadelta import Adadelta
from runtime.optim.adagrad import Adagrad
from runtime.optim.adam import Adam
from runtime.optim.adamw import AdamW
from runtime.optim.optimizer import Optimizer
from runtime.optim.rmsprop import RMSprop
from runtime.optim.sgd import SGD

if TYPE_CHECKING:
    from runtime.compile.trace import Tracer

_NAME = re.compile(r"[A-Za-z_]\w*")

# The hyperparameters read at every step instead of guarded.
RUNTIME_HYPERPARAMETERS = frozenset({"lr"})


def step_listener(tracer: Tracer, run_step: Callable) -> Callable:
    """Listens at runtime/optim/optimizer.py's `run_step`, where every optimizer's step
    runs: the step runs eagerly, unrecorded, and its template writes the update's lines
    (no template: the trace stops)."""
    def listener(self: Any, step: Callable, args: tuple, kwargs: dict) -> Any:
        if not tracer.recording:
            return run_step(self, step, args, kwargs)
        if any(value is not None for value in (*args, *kwargs.values())):
            tracer.stop("optimizer.step(closure): the closure runs eagerly")
        elif type(self) not in TEMPLATES:
            return _traced_step(tracer, self, run_step, step, args, kwargs)
        tracer.paused += 1
        try:
            result = run_step(self, step, args, kwargs)
        finally:
            tracer.paused -= 1
        if tracer.broken is None:
            try:
                TEMPLATES[type(self)](tracer, self)
                if all(o is not self for o in tracer.optimizers):
                    tracer.optimizers.append(self)
            except TraceBreak as stop:
                tracer.stop(stop.reason)
        return result

    return listener


def _traced_step(tracer: Tracer, optimizer: Any, run_step: Callable, step: Callable,
                 args: tuple, kwargs: dict) -> Any:
    """An optimizer without a template, traced through its own code: its ops are lines of
    the update, its hyperparameters (the learning rate too) constants of the trace, which
    the guards hold (a step that reads a tensor's value, `state["step"].item()`, stops the
    trace as any such read does)."""
    phase, tracer.phase = tracer.phase, "update"
    tracer.comment = type(optimizer).__name__
    if all(o is not optimizer for o in tracer.optimizers):
        tracer.optimizers.append(optimizer)
    TRACED.add(optimizer)
    before, broken = _python_state(optimizer), tracer.broken
    try:
        return run_step(optimizer, step, args, kwargs)
    finally:
        tracer.phase = phase if phase != "backward" else "update"
        if broken is None and tracer.broken is not None:
            # (Where it stopped: in the optimizer's own code.)
            tracer.broken = f"in {type(optimizer).__name__}.step: {tracer.broken}"
        _check_python_state(tracer, optimizer, before)


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


def _check_python_state(tracer: Tracer, optimizer: Any, before: list[tuple]) -> None:
    """Stop the trace if the step changed the optimizer's Python state: later calls of the
    generated update would not (a count kept as a Python number, a state made)."""
    after = _python_state(optimizer)
    if len(after) == len(before) and all(map(_same_items, before, after)):
        return
    name = type(optimizer).__name__
    states = 1 + len(optimizer.param_groups)
    if len(after) == len(before) and any(
            not old and new for old, new in zip(before[states:], after[states:], strict=True)):
        # Its first step made its state: the next call, which finds it made, traces again.
        tracer.stop(f"{name} made its state in this step", passing=True)
    else:
        tracer.stop(f"{name}.step changes the optimizer's Python state (a number or an "
                    "object it holds, rebound: later calls of the generated update would "
                    "not)")


# The optimizers traced through their own code (their learning rate guarded by value).
TRACED: weakref.WeakSet = weakref.WeakSet()


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
                        tracer.source.add("", f"{name}._grad = None", (),
                                          f"{type(self).__name__}.zero_grad: {label}.grad = "
                                          "None", phase)
            else:
                owner = tracer.source.constant(self, "O")
                tracer.source.add("", f"{owner}.zero_grad({set_to_none!r})", (),
                                  f"{type(self).__name__}.zero_grad: runs as in eager", phase)
        tracer.paused += 1
        try:
            zero_grad(self, set_to_none)
        finally:
            tracer.paused -= 1

    return listener


class _Writer:
    """Writes one optimizer's update lines."""

    def __init__(self, tracer: Tracer, optimizer: Any) -> None:
        self.tracer = tracer
        self.source = tracer.source
        self.optimizer = optimizer
        self.owner = self.source.constant(optimizer, "O")
        self.label = type(optimizer).__name__
        self.bound = {line.target for line in self.source.lines if line.target}

    def line(self, target: str, expression: str, comment: str, quiet: bool = False,
             neutral: bool = False) -> str:
        """`neutral`: the line does no numpy arithmetic (a read, a version counter, Python
        floats), so it cannot warn, and may sit inside a block where warnings are off."""
        # The variables it reads (the optimisations drop a quiet line nothing reads).
        reads = tuple(name for name in dict.fromkeys(_NAME.findall(expression))
                      if name in self.bound)
        line = self.source.add(target, expression, reads, f"{self.label}: {comment}",
                               "update")
        line.quiet, line.neutral = quiet, neutral
        if target:
            self.bound.add(target)
        return target

    def number(self, value: int | float, dtype: np.dtype) -> str:
        """A hyperparameter written beside arrays of `dtype` (`0.999`, `1e-08`): as a 0-d
        array of the dtype numpy converts it to, named for it (`f32_0_999`), where it
        converts exactly; numpy's ufuncs take a slower path for a Python number, which
        they convert at each call, and run the same loop on the same value. Else (one that
        overflows the dtype, and so warns at each call) the number itself."""
        made = number_as_array(value, dtype)
        if made is None:
            return repr(value)
        name, array = made
        self.source.namespace.setdefault(name, array)
        return name

    def name(self, prefix: str) -> str:
        return self.source.fresh(prefix)

    def inplace(self, kernel: str, tensor: str, args: str, comment: str) -> None:
        """`tensor.kernel_(args)` as the in-place wrapper runs it: the kernel, then the
        version counter moves."""
        self.line("", f"kernels.{kernel}({tensor}._data, {args})", comment)
        self.line("", f"{tensor}._version_counter.version += 1", "the version counter moves",
                  neutral=True)

    def params(self, group_index: int, group: dict) -> list[tuple[Any, str, str]]:
        """(parameter, its name, its gradient's variable) for each parameter with a .grad."""
        found = []
        for param in group["params"]:
            if param.grad is None:
                continue
            tensor = self.tracer.tensor_name(param)
            label = self.tracer.parameter_names.get(id(param), tensor)
            grad = self.line(self.name("d"), f"{tensor}._grad._data", f"{label}.grad",
                             neutral=True)
            found.append((param, tensor, grad))
        return found

    def plain_params(self, group_index: int, group: dict, moments: tuple[str, ...],
                     floats: tuple[Any, ...]) -> Iterator[tuple[Any, str, str]]:
        """`params`, each the plain case the numpy-line templates write (`_plain`, with
        the state tensors `moments` and the Python numbers `floats`); else the trace
        stops."""
        for param, tensor, grad in self.params(group_index, group):
            if not _plain(self.optimizer, param, group, moments, floats):
                raise TraceBreak(f"no update template for {self.label} with these dtypes or "
                                 "hyperparameter types")
            yield param, tensor, grad

    def learning_rate(self, group_index: int) -> str:
        return self.line(self.name("lr"), f"{self.owner}.param_groups[{group_index}]['lr']",
                         "the learning rate, read at every step", neutral=True)

    def negated(self, lr: str, dtype: np.dtype) -> str:
        """`-lr` (a Python float) as a 0-d array of `dtype` where it converts without
        overflow: numpy multiplies by an array operand faster than by a Python float, which
        it converts at each call, and runs the same loop on the same value. A value the
        dtype cannot hold stays the float, whose conversion warns at each product, as the
        kernel's does."""
        kind = f"np.{dtype.name}" if getattr(np, dtype.name, None) is dtype.type else \
            self.source.constant(dtype)
        limit = f"{dtype.kind}{dtype.itemsize * 8}_max"  # f32_max: float32's largest
        self.source.namespace[limit] = float(np.finfo(dtype).max)
        return self.line(self.name("n"), f"np.array(-{lr}, {kind}) if abs({lr}) <= {limit} "
                         f"else -{lr}", f"-lr as a 0-d {dtype} array (a faster operand)")

    def state(self, param: Any, key: str, tensor: str) -> str:
        return self.line(self.name("s"), f"{self.owner}.state[{tensor}][{key!r}]",
                         f"state {key!r}", neutral=True)

    # -- the plain case as numpy lines (see `_plain`) ------------------------------------
    def quiet(self, expression: str, comment: str, prefix: str = "d") -> str:
        """A line whose kernel computes it with numpy's warnings off."""
        return self.line(self.name(prefix) if prefix else "", expression, comment,
                         quiet=True)

    def numpy_inplace(self, tensor: str, expression: str, comment: str,
                      param: Any | None = None) -> None:
        """A numpy line writing into a tensor's array (silent, as the in-place kernels'
        ufunc is), then its version counter. `param`: the tensor is that parameter, whose
        counter, once made, is never unset: read without the property that makes it (a
        state tensor is read anew at each step, and may be another)."""
        self.quiet(expression, comment, "")
        counter = "_counter" if param is not None and param._counter is not None else \
            "_version_counter"
        self.line("", f"{tensor}.{counter}.version += 1", "the version counter moves",
                  neutral=True)

    def array(self, tensor: str, param: Any) -> str:
        """The source of a parameter's array: the step's variable for it where the forward
        read it (`x0` for `T0._data`: no line of the step rebinds a tensor's array, as
        `.data =` stops the trace), else `T0._data`."""
        name = self.tracer.names.get(id(param._data))
        return name if name is not None and name.startswith("x") else f"{tensor}._data"

    def add_into(self, tensor: str, param: Any | None, value: str) -> str:
        """The statement adding `value` into a tensor's array in place: `x0 += u0` where a
        variable holds the parameter's array (the in-place operator is `np.add(x0, u0,
        out=x0)`, without the keyword's cost), else np.add with `out=`."""
        data = self.array(tensor, param) if param is not None else f"{tensor}._data"
        if data.startswith("x"):
            return f"{data} += {value}"
        return f"np.add({data}, {value}, out={data})"

    def scaled_add(self, tensor: str, value: str, alpha: str, comment: str,
                   param: Any | None = None) -> None:
        """`tensor.add_(value, alpha=alpha)` as kernels.add_Tensor_ computes it: the
        product by alpha (which warns as the kernel's does; by 1.0 it is exact, as the
        kernel's unscaled add), then the sum in place, silent. `param`: the tensor is that
        parameter (`add_into`)."""
        product = self.line(self.name("u"), f"{alpha} * {value}", f"{comment}: alpha * (...)")
        self.numpy_inplace(tensor, self.add_into(tensor, param, product),
                           f"{comment}: the sum, in place", param)

    def step_count(self, step: str, dtype: np.dtype) -> None:
        """`state['step'] += 1` on the float step tensor (of `dtype`)."""
        self.numpy_inplace(step, f"np.add({step}._data, {self.number(1, dtype)}, "
                           f"out={step}._data)", "state['step'] += 1")

    def count(self, step: str) -> str:
        """The step count as a Python float (`.item()` of the float step tensor)."""
        return self.line(self.name("n"), f"{step}._data.item()", "the step count",
                         neutral=True)

    def gradient(self, grad: str, tensor: str, group: dict, dtype: np.dtype) -> str:
        """The gradient the update uses: negated (maximize), plus weight decay."""
        if group["maximize"]:
            grad = self.quiet(f"-{grad}", "maximize: -grad")
        if group["weight_decay"] != 0 and not group.get("decoupled_weight_decay"):
            decay = self.number(group["weight_decay"], dtype)
            grad = self.quiet(f"{grad} + {tensor}._data * {decay}", "grad + weight_decay * p")
        return grad


def _sgd(tracer: Tracer, optimizer: SGD) -> None:
    """SGD.step (runtime/optim/sgd.py), as kernels."""
    write = _Writer(tracer, optimizer)
    for index, group in enumerate(optimizer.param_groups):
        lr = write.learning_rate(index)
        momentum, dampening = group["momentum"], group["dampening"]
        plain: list[tuple[Any, str, str]] = []  # (parameter, -lr * grad) to add, see below
        negated: dict[np.dtype, str] = {}  # -lr as a 0-d array, per parameter dtype
        for param, tensor, grad in write.params(index, group):
            if group["maximize"]:
                grad = write.line(write.name("d"), f"kernels.neg({grad})", "maximize: -grad")
            if group["weight_decay"] != 0:
                grad = write.line(write.name("d"), f"kernels.add_Tensor({grad}, {tensor}._data, "
                                  f"{group['weight_decay']!r})", "grad + weight_decay * p")
            if momentum != 0:
                buffer = write.state(param, "momentum_buffer", tensor)
                write.inplace("mul_Tensor_", buffer, repr(momentum), "buffer.mul_(momentum)")
                write.inplace("add_Tensor_", buffer, f"{grad}, {1 - dampening!r}",
                              "buffer.add_(grad, alpha=1 - dampening)")
                if group["nesterov"]:
                    grad = write.line(write.name("d"), f"kernels.add_Tensor({grad}, "
                                      f"{buffer}._data, {momentum!r})", "nesterov: grad + "
                                      "momentum * buffer")
                else:
                    grad = write.line(write.name("d"), f"{buffer}._data", "the buffer")
            if _plain_update(param, group):
                dtype = param._data.dtype
                if dtype not in negated:
                    negated[dtype] = write.negated(lr, dtype)
                plain.append((param, tensor, write.line(
                    write.name("u"), f"{negated[dtype]} * {grad}",
                    "p.add_(grad, alpha=-lr): -lr * grad")))
            else:
                write.inplace("add_Tensor_", tensor, f"{grad}, -{lr}", "p.add_(grad, alpha=-lr)")
        # The plain updates as the kernel computes them without its dispatch: the scaled
        # gradients above (whose overflow warns, as the kernel's product does), then the
        # sums into the parameters, all in one block with numpy's warnings off (the
        # kernel's in-place add is silent), then the version counters.
        for param, tensor, update in plain:
            write.line("", write.add_into(tensor, param, update),
                       "p.add_(grad, alpha=-lr): p + (-lr * grad), in place", quiet=True)
        for param, tensor, _ in plain:
            # (A tensor's counter, once made, is never unset: read it without the property
            # that makes it.)
            counter = "_counter" if param._counter is not None else "_version_counter"
            write.line("", f"{tensor}.{counter}.version += 1", "the version counter moves")


def _plain_update(param: Any, group: dict) -> bool:
    """Whether SGD's last `p.add_(grad, alpha=-lr)` adds a gradient of p's own float dtype
    and shape, scaled by a Python float: what `_sgd` writes as plain numpy, without the
    kernel's promotion and checks (lr == -1, alpha 1, which the kernel adds unscaled, is
    the same: multiplying by 1.0 is exact and never warns). The shapes and dtypes are the
    trace's (guarded), and so is the learning rate's type (`Guard`)."""
    data, grad = param._data, param.grad._data
    return data.dtype.kind == "f" and grad.dtype == data.dtype and \
        grad.shape == data.shape and type(group["lr"]) is float and \
        not group["maximize"] and group["weight_decay"] == 0 and group["momentum"] == 0


def _adam(tracer: Tracer, optimizer: Adam) -> None:
    """Adam.step (runtime/optim/adam.py), as kernels; AdamW is Adam with decoupled decay."""
    write = _Writer(tracer, optimizer)
    for index, group in enumerate(optimizer.param_groups):
        lr = write.learning_rate(index)
        beta1, beta2 = group["betas"]
        eps, weight_decay = group["eps"], group["weight_decay"]
        moments = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")[:3 if group["amsgrad"] else 2]
        for param, tensor, grad in write.params(index, group):
            if _plain(optimizer, param, group, moments, (*group["betas"], group["eps"])):
                _adam_in_numpy(write, param, tensor, grad, group, lr)
                continue
            if group["amsgrad"]:
                raise TraceBreak(f"no update template for {type(optimizer).__name__}'s amsgrad "
                                 "with these dtypes or hyperparameter types")
            if group["maximize"]:
                grad = write.line(write.name("d"), f"kernels.neg({grad})", "maximize: -grad")
            step = write.state(param, "step", tensor)
            write.inplace("add_Tensor_", step, "1, 1", "state['step'] += 1")
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    write.inplace("mul_Tensor_", tensor, f"1 - {lr} * {weight_decay!r}",
                                  "p.mul_(1 - lr * weight_decay)")
                else:
                    grad = write.line(write.name("d"), f"kernels.add_Tensor({grad}, "
                                      f"{tensor}._data, {weight_decay!r})",
                                      "grad + weight_decay * p")
            exp_avg = write.state(param, "exp_avg", tensor)
            exp_avg_sq = write.state(param, "exp_avg_sq", tensor)
            difference = write.line(write.name("d"), f"kernels.sub_Tensor({grad}, "
                                    f"{exp_avg}._data, 1)", "grad - exp_avg")
            write.inplace("add_Tensor_", exp_avg, f"{difference}, {1 - beta1!r}",
                          "exp_avg.add_(grad - exp_avg, alpha=1 - beta1)")
            write.inplace("mul_Tensor_", exp_avg_sq, repr(beta2), "exp_avg_sq.mul_(beta2)")
            square = write.line(write.name("d"), f"kernels.mul_Tensor({grad}, {grad})",
                                "grad * grad")
            write.inplace("add_Tensor_", exp_avg_sq, f"{square}, {1 - beta2!r}",
                          "exp_avg_sq.add_(grad * grad, alpha=1 - beta2)")
            count = write.count(step)
            correction1 = write.line(write.name("b"), f"1 - {beta1!r} ** {count}",
                                     "bias_correction1")
            correction2 = write.line(write.name("b"), f"(1 - {beta2!r} ** {count}) ** 0.5",
                                     "bias_correction2_sqrt")
            root = write.line(write.name("d"), f"kernels.sqrt({exp_avg_sq}._data)",
                              "exp_avg_sq.sqrt()")
            scaled = write.line(write.name("d"), f"kernels.div_Tensor({root}, {correction2})",
                                "/ bias_correction2_sqrt")
            denom = write.line(write.name("d"), f"kernels.add_Tensor({scaled}, {eps!r}, 1)",
                               "+ eps")
            ratio = write.line(write.name("d"), f"kernels.div_Tensor({exp_avg}._data, {denom})",
                               "exp_avg / denom")
            write.inplace("add_Tensor_", tensor, f"{ratio}, -{lr} / {correction1}",
                          "p.add_(exp_avg / denom, alpha=-lr / bias_correction1)")


def _step_dtype(write: _Writer, param: Any) -> np.dtype:
    """The dtype of a parameter's float step count (`_plain` checked it is one)."""
    return write.optimizer.state[param]["step"]._data.dtype


def _plain(optimizer: Any, param: Any, group: dict, moments: tuple[str, ...],
           floats: tuple[Any, ...]) -> bool:
    """Whether an update of `param` is the plain case the numpy-line templates write: a
    float parameter whose gradient and `moments` (its state tensors) share its dtype and
    shape, a float step count, a Python float learning rate and Python numbers for
    `floats` (the other hyperparameters the lines write in; the guard holds them, the
    learning rate's type too)."""
    state = optimizer.state.get(param, {})
    data, grad = param._data, param.grad._data
    tensors = [state.get(key) for key in moments]
    return data.dtype.kind == "f" and grad.dtype == data.dtype and \
        grad.shape == data.shape and type(group["lr"]) is float and \
        all(type(v) in (int, float) for v in (*floats, group["weight_decay"])) and \
        all(t is not None and t._data.dtype == data.dtype and t._data.shape == data.shape
            for t in tensors) and state.get("step") is not None and \
        state["step"]._data.dtype.kind == "f"


def _adam_in_numpy(write: _Writer, param: Any, tensor: str, grad: str, group: dict,
                   lr: str) -> None:
    """Adam.step for one parameter as numpy lines: each op as its kernel computes it in
    the plain case (`_plain`), without the kernel's promotion and checks: the products by
    `alpha` of the in-place adds warn as the kernels' do, the rest is silent as theirs
    is; each in-place op moves its tensor's version counter. tests/test_compile.py checks
    the bits, versions and warnings against eager."""
    beta1, beta2 = group["betas"]
    dtype = param._data.dtype
    step, exp_avg, exp_avg_sq = (write.state(param, key, tensor)
                                 for key in ("step", "exp_avg", "exp_avg_sq"))
    grad = write.gradient(grad, tensor, group, dtype)
    write.step_count(step, _step_dtype(write, param))
    if group["weight_decay"] != 0 and group["decoupled_weight_decay"]:
        # (Made the parameter's type first, as the kernel makes it: that cast warns on
        # overflow, the product after it is silent.)
        scalar = write.source.constant(param._data.dtype.type, "c")
        factor = write.line(write.name("w"), f"{scalar}(1 - {lr} * {group['weight_decay']!r})",
                            "1 - lr * weight_decay, as p's type")
        write.numpy_inplace(tensor, f"np.multiply({tensor}._data, {factor}, "
                            f"out={tensor}._data)", "p.mul_(1 - lr * weight_decay)", param)
    difference = write.quiet(f"{grad} - {exp_avg}._data", "grad - exp_avg")
    write.scaled_add(exp_avg, difference, write.number(1 - beta1, dtype),
                     "exp_avg.add_(grad - exp_avg, alpha=1 - beta1)")
    write.numpy_inplace(exp_avg_sq, f"np.multiply({exp_avg_sq}._data, "
                        f"{write.number(beta2, dtype)}, out={exp_avg_sq}._data)",
                        "exp_avg_sq.mul_(beta2)")
    square = write.quiet(f"{grad} * {grad}", "grad * grad")
    write.scaled_add(exp_avg_sq, square, write.number(1 - beta2, dtype),
                     "exp_avg_sq.add_(grad * grad, alpha=1 - beta2)")
    # Python floats: neutral lines (they cannot raise numpy's warnings)
    count = write.count(step)
    correction1 = write.line(write.name("b"), f"1 - {beta1!r} ** {count}", "bias_correction1",
                             neutral=True)
    correction2 = write.line(write.name("b"), f"(1 - {beta2!r} ** {count}) ** 0.5",
                             "bias_correction2_sqrt", neutral=True)
    second_moment = exp_avg_sq
    if group["amsgrad"]:
        second_moment = write.state(param, "max_exp_avg_sq", tensor)
        write.numpy_inplace(second_moment, f"np.maximum({second_moment}._data, "
                            f"{exp_avg_sq}._data, out={second_moment}._data)",
                            "torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)")
    root = write.quiet(f"np.sqrt({second_moment}._data)", "second moment .sqrt()")
    denom = write.quiet(f"{root} / {correction2}", "/ bias_correction2_sqrt")
    denom = write.quiet(f"{denom} + {write.number(group['eps'], dtype)}", "+ eps")
    ratio = write.quiet(f"{exp_avg}._data / {denom}", "exp_avg / denom")
    alpha = write.line(write.name("a"), f"-{lr} / {correction1}", "-lr / bias_correction1",
                       neutral=True)
    write.scaled_add(tensor, ratio, alpha, "p.add_(exp_avg / denom, alpha=-lr / "
                     "bias_correction1)", param)


def _rmsprop(tracer: Tracer, optimizer: RMSprop) -> None:
    """RMSprop.step (runtime/optim/rmsprop.py) as numpy lines, in the plain case."""
    write = _Writer(tracer, optimizer)
    for index, group in enumerate(optimizer.param_groups):
        lr = write.learning_rate(index)
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        moments = ("square_avg", *(("momentum_buffer",) if momentum > 0 else ()),
                   *(("grad_avg",) if group["centered"] else ()))
        for param, tensor, grad in write.plain_params(index, group, moments,
                                                      (alpha, eps, momentum)):
            dtype = param._data.dtype
            step = write.state(param, "step", tensor)
            square_avg = write.state(param, "square_avg", tensor)
            grad = write.gradient(grad, tensor, group, dtype)
            write.step_count(step, _step_dtype(write, param))
            write.numpy_inplace(square_avg, f"np.multiply({square_avg}._data, "
                                f"{write.number(alpha, dtype)}, out={square_avg}._data)",
                                "square_avg.mul_(alpha)")
            square = write.quiet(f"{grad} * {grad}", "grad * grad")
            write.scaled_add(square_avg, square, write.number(1 - alpha, dtype),
                             "square_avg.add_(grad * grad, alpha=1 - alpha)")
            if group["centered"]:
                grad_avg = write.state(param, "grad_avg", tensor)
                difference = write.quiet(f"{grad} - {grad_avg}._data", "grad - grad_avg")
                write.scaled_add(grad_avg, difference, write.number(1 - alpha, dtype),
                                 "grad_avg.add_(grad - grad_avg, alpha=1 - alpha)")
                mean_square = write.quiet(f"{grad_avg}._data * {grad_avg}._data",
                                          "grad_avg * grad_avg")
                variance = write.quiet(f"{square_avg}._data - {mean_square}",
                                       "square_avg - grad_avg * grad_avg")
                avg = write.quiet(f"np.sqrt({variance})", "(...).sqrt()")
            else:
                avg = write.quiet(f"np.sqrt({square_avg}._data)", "square_avg.sqrt()")
            avg = write.quiet(f"{avg} + {write.number(eps, dtype)}", "avg.add(eps)")
            ratio = write.quiet(f"{grad} / {avg}", "grad / avg")
            if momentum > 0:
                buffer = write.state(param, "momentum_buffer", tensor)
                write.numpy_inplace(buffer, f"np.multiply({buffer}._data, "
                                    f"{write.number(momentum, dtype)}, out={buffer}._data)",
                                    "buffer.mul_(momentum)")
                write.numpy_inplace(buffer, f"np.add({buffer}._data, {ratio}, "
                                    f"out={buffer}._data)", "buffer.add_(grad / avg)")
                write.scaled_add(tensor, f"{buffer}._data", f"-{lr}",
                                 "p.add_(buffer, alpha=-lr)", param)
            else:
                write.scaled_add(tensor, ratio, f"-{lr}", "p.add_(grad / avg, alpha=-lr)", param)


def _adagrad(tracer: Tracer, optimizer: Adagrad) -> None:
    """Adagrad.step (runtime/optim/adagrad.py) as numpy lines, in the plain case."""
    write = _Writer(tracer, optimizer)
    for index, group in enumerate(optimizer.param_groups):
        lr = write.learning_rate(index)
        lr_decay, eps = group["lr_decay"], group["eps"]
        for param, tensor, grad in write.plain_params(index, group, ("sum",), (lr_decay, eps)):
            dtype = param._data.dtype
            step = write.state(param, "step", tensor)
            total = write.state(param, "sum", tensor)
            write.step_count(step, _step_dtype(write, param))
            count = write.count(step)
            grad = write.gradient(grad, tensor, group, dtype)
            rate = write.line(write.name("lr"), f"{lr} / (1 + ({count} - 1) * {lr_decay!r})",
                              "clr = lr / (1 + (step - 1) * lr_decay)", neutral=True)
            square = write.quiet(f"{grad} * {grad}", "grad * grad")
            write.numpy_inplace(total, f"np.add({total}._data, {square}, out={total}._data)",
                                "sum.add_(grad * grad)")
            root = write.quiet(f"np.sqrt({total}._data)", "sum.sqrt()")
            std = write.quiet(f"{root} + {write.number(eps, dtype)}", ".add(eps)")
            ratio = write.quiet(f"{grad} / {std}", "grad / std")
            write.scaled_add(tensor, ratio, f"-{rate}", "p.add_(grad / std, alpha=-clr)", param)


def _adadelta(tracer: Tracer, optimizer: Adadelta) -> None:
    """Adadelta.step (runtime/optim/adadelta.py) as numpy lines, in the plain case."""
    write = _Writer(tracer, optimizer)
    for index, group in enumerate(optimizer.param_groups):
        lr = write.learning_rate(index)
        rho, eps = group["rho"], group["eps"]
        for param, tensor, grad in write.plain_params(index, group, ("square_avg", "acc_delta"),
                                                      (rho, eps)):
            step = write.state(param, "step", tensor)
            square_avg = write.state(param, "square_avg", tensor)
            acc_delta = write.state(param, "acc_delta", tensor)
            dtype = param._data.dtype
            write.step_count(step, _step_dtype(write, param))
            grad = write.gradient(grad, tensor, group, dtype)
            write.numpy_inplace(square_avg, f"np.multiply({square_avg}._data, "
                                f"{write.number(rho, dtype)}, out={square_avg}._data)",
                                "square_avg.mul_(rho)")
            square = write.quiet(f"{grad} * {grad}", "grad * grad")
            write.scaled_add(square_avg, square, write.number(1 - rho, dtype),
                             "square_avg.add_(grad * grad, alpha=1 - rho)")
            eps_array = write.number(eps, dtype)
            std = write.quiet(f"{square_avg}._data + {eps_array}", "square_avg.add(eps)")
            std = write.quiet(f"np.sqrt({std})", ".sqrt(): std")
            delta = write.quiet(f"{acc_delta}._data + {eps_array}", "acc_delta.add(eps)")
            delta = write.quiet(f"np.sqrt({delta})", ".sqrt()")
            delta = write.quiet(f"{delta} / {std}", ".div(std)")
            delta = write.quiet(f"{delta} * {grad}", ".mul(grad): delta")
            write.numpy_inplace(acc_delta, f"np.multiply({acc_delta}._data, "
                                f"{write.number(rho, dtype)}, out={acc_delta}._data)",
                                "acc_delta.mul_(rho)")
            square = write.quiet(f"{delta} * {delta}", "delta * delta")
            write.scaled_add(acc_delta, square, write.number(1 - rho, dtype),
                             "acc_delta.add_(delta * delta, alpha=1 - rho)")
            write.scaled_add(tensor, delta, f"-{lr}", "p.add_(delta, alpha=-lr)", param)


TEMPLATES: dict[type, Callable[[Any, Any], None]] = {
    SGD: _sgd, Adam: _adam, AdamW: _adam, RMSprop: _rmsprop, Adagrad: _adagrad,
    Adadelta: _adadelta,
}


class Guard:
    """What of an optimizer a compiled step depends on: its parameters (identity), its
    hyperparameters other than the learning rate, and which parameters have state."""

    def __init__(self, optimizer: Any) -> None:
        self.optimizer = optimizer
        read_afresh = frozenset() if optimizer in TRACED else RUNTIME_HYPERPARAMETERS
        self.groups = [(group, tuple(group), [(k, v) for k, v in group.items()
                                            if k not in read_afresh
                                            and k != "params"], list(group["params"]))
                       for group in optimizer.param_groups]
        self.stateful = self._stateful()
        # The learning rate is read at every step, but its type chose the template's form
        # (`_plain_update`): a Python float, or anything else.
        self.lr_types = [type(group.get("lr")) for group in optimizer.param_groups]

    def _stateful(self) -> list[bool]:
        state = self.optimizer.state
        return [bool(state.get(p)) for _, _, _, params in self.groups for p in params]

    def holds(self) -> bool:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.groups):
            return False
        for group, (expected, keys, settings, params) in zip(groups, self.groups, strict=True):
            if group is not expected or tuple(group) != keys:  # keys in their order
                return False
            for key, value in settings:
                # By identity: an equal value of another type (np.float64(0.9) for 0.9)
                # would pass `==`, and the update's lines wrote the traced value in.
                if group.get(key, _MISSING) is not value:
                    return False
            current = group["params"]
            if len(current) != len(params) or any(a is not b for a, b in
                                                   zip(current, params, strict=True)):
                return False
        return self._stateful() == self.stateful and \
            [type(group.get("lr")) for group in groups] == self.lr_types


_MISSING = object()
