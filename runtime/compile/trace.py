"""Tracing one training step: run it eagerly once, under the tracer's mode (listen.py), and
write down what it computed: each outermost kernel call of the forward as a line, the
backward by running the engine's own GraphTask on traced values (values.py), an optimizer's
update through its own code (optim.py). What the generated step could not replay (`item()`,
in-place writes into inputs, tensors made outside the kernels) stops the trace with a reason,
and the step runs eagerly. See docs/compile.md."""

from __future__ import annotations

import ast
import copy
import dataclasses
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from generated.spec_data import FORMULAS
from runtime import anomaly, forward_grad, grad_mode, kernels
from runtime import node as node_module
from runtime._tensor import Tensor
from runtime.compile import forms, reads
from runtime.compile.emit import (
    ACCUMULATE,
    GRAD_NONE,
    GRAD_READ,
    GRAD_STATE,
    STATE,
    TENSOR,
    Line,
    Source,
    TraceBreak,
    attribute,
    call,
    describe_array,
    leaves,
    reads_of,
    same_bits,
    var,
)
from runtime.compile.listen import AFTER_BACKWARD, current, listening  # noqa: F401
from runtime.compile.numbers import READ_AFRESH, Number, plain
from runtime.compile.values import SymbolicOps, Value, unwrap
from runtime.engine import GraphTask, _Mode
from runtime.nn.module import Module
from runtime.node import AccumulateGrad
from runtime.optim.optimizer import Optimizer

# Kernels that only check: not written into the step.
_CHECKS_ONLY = frozenset({"check_inplace_result"})


# How the step reaches a tensor it reads (Known.how).
ARGUMENT, READ, HELD, GRAD = "argument", "read", "held", "grad"


@dataclasses.dataclass(eq=False)
class Known:
    """A tensor the step touches (Tracer.known): how a later call reaches it, and its name in
    the code once a line reads it."""

    tensor: Tensor
    # ARGUMENT; READ: anew at each call, where the step names it (a global, `self.x`); HELD by a
    # guarded module or optimizer: a constant; GRAD: a .grad the engine set in this step.
    how: str = ""
    name: str = ""  # in the code: `a1`, `a2[0]`, `T0`, `T0._grad`
    tree: ast.expr | None = None  # the expression `name` stands for, if not a variable
    label: str = ""  # for the comments: `model.layer1.weight`
    read: reads.Read | None = None  # where the objects the step names hold it
    made: bool = False  # made in the step
    grad_of: Tensor | None = None  # GRAD: the tensor whose .grad it is


class Tracer:
    """The state of one traced call: the source being written and what it depends on."""

    def __init__(self, arguments: list[tuple[Tensor, ast.expr]], fn: Callable | None = None
                 ) -> None:
        self.source = Source()
        self.names = self.source.traced_ids  # id(array) -> the variable holding it
        self.owners: dict[int, Tensor] = {}  # id(array) -> the Tensor a heard call was given
        # id(Tensor) -> what the trace knows of it, and its name by name.
        self.known: dict[int, Known] = {}
        self.named: dict[str, Known] = {}
        self.closure: list[Known] = []  # the tensors read that are no arguments, in order
        for tensor, tree in arguments:  # (the guard's: where each tensor argument is)
            known = self.of(tensor)
            known.how, known.tree = known.how or ARGUMENT, known.tree or tree
        # id(object) -> the read of each global and free variable fn reads; the reads through
        # those objects (reads.py).
        self.bindings: dict[int, reads.Read] = _bindings(fn) if fn is not None else {}
        self.reads = self._named_tensors(fn) if fn is not None else []
        self.modules: list[Module] = []  # modules called, for the training-mode guard
        if isinstance(getattr(fn, "__self__", None), Module):
            # A module's own method compiled: its attributes are guarded all the same.
            self.modules.append(fn.__self__)
        self.optimizers: list[Optimizer] = []
        self.made_by: dict[str, Line] = {}  # variable -> the line that made it
        self.transposed: dict[str, Value] = {}  # `v = t(x)` -> x, to cancel t(t(x))
        self.ones: set[str] = set()  # variables known to hold ones (the seed, expanded)
        self.phase = "forward"
        self.depth = 0  # > 0 inside a kernel (its own kernel calls are not recorded)
        self.stepping: Optimizer | None = None  # the optimizer whose step is traced now
        self.factors: dict[tuple, str] = {}  # _scaled_add's alphas as 0-d arrays
        self.paused = 0  # > 0 inside backward, step, zero_grad: nothing is recorded
        self.broken: str | None = None
        self.passing = False  # see stop()
        self.comment = ""
        self.backwards = 0
        self.grads_checked: list[tuple[Tensor, np.ndarray]] = []
        self.numpy_forms = True
        # `return loss.item()`: id(the float) -> (the float, the line that computes it).
        self.code = getattr(fn, "__code__", None)
        self.items: dict[int, tuple[float, str]] = {}
        # Where the nodes this call makes start (backward_of).
        self.first_node = next(node_module._sequence_numbers)
        # id(module or container) -> (name, container, its contents as they were): watch().
        self.containers: dict[int, list[tuple]] = {}
        # The nodes a traced backward walked: a returned tensor's graph there is spent.
        self.swept: set = set()

    def _named_tensors(self, fn: Callable) -> list[reads.Read]:
        """The reads under the objects fn names; the tensors found there, and the parameters of
        the modules, known by where the step finds them."""
        reached = {key: read for key, read in self.bindings.items()
                   if isinstance(read.value, Tensor)}
        # (Under the objects fn names and a bound method's self, for the names fn's code and
        # the functions it names read.)
        roots = [read.value for read in self.bindings.values()]
        labels = [str(read.key) for read in self.bindings.values()]
        functions = [fn, *filter(_own_function, roots)]
        if getattr(fn, "__self__", None) is not None:
            roots, labels = [*roots, fn.__self__], [*labels, "self"]
        found = reads.plain_reads(roots, functions, reached, labels)
        named = [(read.key, read.value) for read in self.bindings.values()]
        named += [(read.path, read()) for read in reached.values()]
        for key, value in named:
            if isinstance(value, Module):
                for name, tensor in (*value.named_parameters(), *value.named_buffers()):
                    self.label(tensor, f"{key}.{name}")
            elif isinstance(value, Tensor):
                self.label(value, str(key))
        for read in reached.values():
            if isinstance(read.value, Tensor):
                self.of(read.value).read = read
        return found

    def stop(self, reason: str, passing: bool = False) -> None:
        """Stop the trace (the first reason is kept); `passing`: the next call may trace again
        (the reason may not hold then)."""
        if self.broken is None:
            self.broken = reason
            self.passing = passing

    @property
    def where(self) -> str:
        """The part of the step the lines come from: its phase, or the optimizer's step."""
        return self.phase if self.stepping is None else f"{type(self.stepping).__name__}.step"

    def pause(self, function: Callable, *args: Any, **kwargs: Any) -> Any:
        """`function(*args, **kwargs)`, with nothing recorded meanwhile."""
        self.paused += 1
        try:
            return function(*args, **kwargs)
        finally:
            self.paused -= 1

    @property
    def recording(self) -> bool:
        return self.broken is None and not self.paused and not self.depth

    def watch(self, owner: Any, name: str = "") -> None:
        """Keep the contents of a module's lists, dicts and sets, or of a container the step
        names (`name`), to compare after the step (step.py's _check_python)."""
        if id(owner) in self.containers:
            return
        if isinstance(owner, Module):
            held = [(f"{type(owner).__name__}.{key}", value, reads.contents(value))
                    for key, value in vars(owner).items() if type(value) in reads.CONTAINERS]
        else:
            held = [(name, owner, reads.contents(owner))]
        self.containers[id(owner)] = held

    def bind(self, array: Any, prefix: str) -> str:
        name = self.source.fresh(prefix)
        self.source.traced[name] = array
        self.names[id(array)] = name
        return name

    def of(self, tensor: Tensor) -> Known:
        """The table's record of `tensor` (made at first sight)."""
        known = self.known.get(id(tensor))
        if known is None:
            known = self.known[id(tensor)] = Known(tensor)
        return known

    def label(self, tensor: Tensor, label: str) -> None:
        """Name `tensor` for the comments, unless it has a name already."""
        known = self.of(tensor)
        known.label = known.label or label

    def tensor_name(self, tensor: Tensor) -> str:
        """The step's name for a Tensor it reads (`a1`, `a2[0]`, `T0`, `T0._grad`), decided
        the first time by how the step reaches it."""
        known = self.of(tensor)
        if known.name:
            return known.name
        if known.how == GRAD:
            owner = self.tensor_name(known.grad_of)
            known.tree = attribute(self.tensor_tree(owner), "_grad")
        elif known.made:
            raise TraceBreak("the step makes a tensor outside the spec's kernels (a factory "
                             "or a tensor built from Python data); make it outside the step "
                             "and pass it in")
        elif known.how != ARGUMENT:
            self._closure_name(known)
        known.name = known.name or ast.unparse(known.tree)
        self.named[known.name] = known
        return known.name

    def _closure_name(self, known: Known) -> None:
        """A tensor the step reads that is no argument: read at every call where the step names it
        (a global, a free variable) or reaches it (`self.x`, its holders guarded: reads.py),
        else a constant, held by a guarded module or optimizer (else it could be rebound unseen).
        Found at several places, each must hold it at later calls too."""
        tensor, found = known.tensor, known.read
        if found is not None and (id(tensor) in self.bindings or not self._is_held(tensor)):
            known.how, known.name = READ, self.source.fresh("T")
            holder = self.source.constant(found.holder, "c")
            self.source.add(known.name, found.tree(holder), (), found.path, "prologue", TENSOR)
            self.label(tensor, found.path)
            self.reads += [other.expecting(("same", found)) for other in found.others]
        elif self._is_held(tensor):
            known.how, known.name = HELD, self.source.constant(tensor, "T")
            self.reads += [found, *found.others] if found is not None else []
        else:
            raise TraceBreak("the step reads a tensor through an attribute or a container "
                             "that the guards do not follow, which a later call could "
                             "rebind unseen; pass it as an argument")
        self.closure.append(known)

    def tensor_tree(self, name: str) -> ast.expr:
        """The expression of a tensor's name in the step (tensor_name's)."""
        known = self.named.get(name)
        return var(name) if known is None or known.tree is None else copy.deepcopy(known.tree)

    def _named_modules(self) -> list[Module]:
        """The modules the step names or reaches through the objects it names."""
        named = [read.value for read in (*self.bindings.values(), *self.reads)]
        return [value for value in named if isinstance(value, Module)]

    def _is_held(self, tensor: Tensor) -> bool:
        """Whether a guarded module or optimizer holds `tensor`."""
        if any(_holds(module, tensor) for module in self.modules) or \
                any(_optimizer_holds(optimizer, tensor) for optimizer in self.optimizers):
            return True
        # A module named but not called yet: guarded with its submodules from here on.
        for value in self._named_modules():
            if any(_holds(module, tensor) for module in value.modules()):
                for module in value.modules():
                    self.guard(module)
                return True
        return False

    def guard(self, guarded: Module | Optimizer) -> bool:
        """Guard a module or optimizer from here on; whether it is new to the guard."""
        known = self.modules if isinstance(guarded, Module) else self.optimizers
        if any(other is guarded for other in known):
            return False
        known.append(guarded)
        return True

    def input_name(self, array: np.ndarray, what: str) -> str:
        """The variable of an array no traced line made: the data of a Tensor read here."""
        owner = self.owners.get(id(array))
        if owner is None or owner._data is not array:
            raise TraceBreak(f"{what} is an array that no spec kernel made and no Tensor "
                             "argument gave")
        known = self.of(owner)
        tensor = self.tensor_name(owner)
        data = attribute(self.tensor_tree(tensor), "_data")
        if known.how == GRAD:
            # A gradient read after the backward that set it.
            variable = self.bind(array, "r")
            holder = self.of(known.grad_of)
            label = holder.label or tensor.removesuffix("._grad")
            self.source.add(variable, data, (), f"{label}.grad, as backward left it",
                            self.phase, GRAD_READ, holder.name).neutral = True
            return variable
        variable = self.bind(array, "x")
        comment = f"input {known.label or tensor}: {describe_array(array)}"
        self.source.add(variable, data, (), comment, "prologue", TENSOR, tensor)
        return variable

    def _holders_of(self, array: np.ndarray) -> Iterator[Tensor]:
        """The parameters and buffers of the known modules whose array is `array`."""
        return (tensor for module in [*self.modules, *self._named_modules()]
                for tensor in (*module.parameters(), *module.buffers()) if tensor._data is array)

    def version_moved(self, tensor: Tensor) -> None:
        """A version counter's move on a tensor the step holds by name: a line."""
        known = self.of(tensor)
        name = known.name
        if not name and known.made and tensor._counter is not None:
            # A tensor made on a module's array that shares its counter (`p.detach()`).
            holder = next((holder for holder in self._holders_of(tensor._data)
                           if holder._counter is tensor._counter), None)
            name = self.tensor_name(holder) if holder is not None else ""
        if name and not name.startswith("a"):
            counter = ast.Attribute(attribute(self.tensor_tree(name), "_version_counter"),
                                    "version", ast.Store())
            self.source.add("", ast.AugAssign(counter, ast.Add(), ast.Constant(1), lineno=0), (),
                            f"{self.comment}: the version counter moves", self.phase,
                            GRAD_STATE if known.how == GRAD else STATE).neutral = True

    def value_of(self, array: Any, what: str) -> Value:
        name = self.names.get(id(array))
        if name is None:
            if type(array) is not np.ndarray:
                raise TraceBreak(f"{what} is not an array: {type(array).__name__}")
            name = self.input_name(array, what)
        return Value(name, array, self)

    def render(self, value: Any, in_subscript: bool = False) -> ast.expr:
        """`value` as an expression: a variable, a literal, or a constant of the namespace."""
        kind = type(value)
        if kind is Value:
            return var(value.name)
        if kind in READ_AFRESH:
            return copy.deepcopy(value.tree)
        if kind is np.ndarray:
            return var(self.value_of(value, "an argument").name)
        if kind is tuple or kind is list:
            items = [self.render(v, in_subscript) for v in value]
            return (ast.Tuple if kind is tuple else ast.List)(items, ast.Load())
        if kind is slice and in_subscript:
            return ast.Slice(*(None if v is None else self.render(v)
                               for v in (value.start, value.stop, value.step)))
        if isinstance(value, Tensor):
            raise TraceBreak("a Tensor reached a kernel (not its array)")
        literal = self.source.literal(value)
        return literal if literal is not None else var(self.source.constant(value))

    def render_call(self, function: ast.expr, args: tuple, kwargs: dict) -> ast.Call:
        """`function(args)` over the rendered arguments."""
        return call(function, [self.render(a) for a in args],
                    {k: self.render(v) for k, v in kwargs.items()})

    def line(self, tree: ast.expr, result: Any, quiet: bool = False) -> Any:
        """The one way a value gets its variable: a line binding `result` (an array, or a tuple
        or list of arrays) to `tree`, each array to a fresh variable; its Value(s)."""
        many = type(result) in (tuple, list)
        arrays = result if many else (result,)
        prefix = "g" if self.phase == "backward" else "v"
        targets = tuple(self.bind(array, prefix) for array in arrays)
        line = self.source.add(targets, tree, reads_of(tree), self.comment, self.phase)
        line.quiet = quiet
        self.made_by.update(dict.fromkeys(targets, line))
        values = [Value(n, array, self) for n, array in zip(targets, arrays, strict=True)]
        return type(result)(values) if many else values[0]

    def call(self, callee: ast.expr, args: tuple, kwargs: dict, result: Any) -> Any:
        """A line `target = callee(args)` (or its spec's `numpy:` form: forms.py); a result that
        is not an array is a constant and writes no line."""
        tree = self.render_call(callee, args, kwargs)  # (first: it names the inputs it reads)
        form = self.numpy_forms and forms.rewrite(callee, args, kwargs, unwrap(args), result,
                                                  self.render)
        tree, quiet = form or (tree, False)
        if isinstance(result, np.ndarray | np.generic):
            return self.line(tree, result, quiet)
        if isinstance(result, tuple | list) and result and \
                all(isinstance(r, np.ndarray) for r in result):
            return self.line(tree, result)
        if any(isinstance(item, np.ndarray) for item in leaves(result)):
            raise TraceBreak(f"{ast.unparse(callee)} returned arrays mixed with other values")
        return result

    def kernel_call(self, name: str, function: Callable, args: tuple, kwargs: dict) -> Any:
        """A kernel the step calls: run, and written down where the step called it itself."""
        recording = self.recording
        self.depth += 1
        try:
            # (A Number reaches the kernel as its float: its type would change promotion.)
            result = function(*plain(args), **plain(kwargs))
        finally:
            self.depth -= 1
        if recording and name not in _CHECKS_ONLY:
            try:
                self._kernel_line(name, args, kwargs, result)
            except TraceBreak as stop:  # (the step runs on eagerly)
                self.stop(stop.reason)
        return result

    def _kernel_line(self, name: str, args: tuple, kwargs: dict, result: Any) -> None:
        if name.endswith("_"):
            self._inplace_kernel(name, args, kwargs, result)
            return
        self.comment = f"{self.where}: {name}"
        value = self.call(attribute("kernels", name), args, kwargs, result)
        if name == "t" and type(value) is Value and id(args[0]) in self.names:
            self.transposed[value.name] = Value(self.names[id(args[0])], args[0], self)
        if type(result) in (bool, int, float, complex):
            raise TraceBreak(f"kernel {name} returned a Python number, which the step's "
                             "Python may use (not traced)")

    def local(self, array: Any) -> str | None:
        """The variable of an array this step made (not an input's, nor a view of one)."""
        name = self.names.get(id(array)) if type(array) is np.ndarray else None
        if name is None or name.startswith("x"):
            return None
        for other, array_of in self.source.traced.items():
            if other.startswith("x") and np.may_share_memory(array, array_of):
                return None
        return name

    def _writable(self, array: Any, what: str = "an in-place op") -> str:
        """The variable of an array the step may write in place: one it made, or one that a
        guarded module or optimizer holds (a parameter, running stats; through `p.data` or
        `p.detach()` too), but not an argument's, a global's or a .grad's."""
        target = self.local(array)
        owner = self.owners.get(id(array)) if type(array) is np.ndarray else None
        if target is None and owner is not None and owner._data is array:
            known = self.of(owner)
            holders = [*([owner] if not known.made else []), *self._holders_of(array)]
            stepped = self.stepping is not None and _optimizer_holds(self.stepping, owner)
            if stepped or known.how not in (GRAD, ARGUMENT) and id(owner) not in self.bindings \
                    and any(map(self._is_held, holders)):
                target = self.value_of(array, "a held tensor").name
        if target is None:
            raise TraceBreak(f"{what} on a tensor the step did not make (compiled steps do not "
                             "write into their inputs)")
        return target

    def _inplace_kernel(self, name: str, args: tuple, kwargs: dict, result: Any) -> None:
        """An in-place kernel on an array the step made or holds, replayed in order."""
        self._writable(args[0] if args else None, f"an in-place op ({name})")
        if type(result) is np.ndarray and id(result) not in self.names:
            self.comment = f"{self.where}: {name}, computed (written in place below)"
            self.call(attribute("kernels", name), args, kwargs, result)
            return
        self.comment = f"{self.where}: {name}, in place"
        if name != "add_Tensor_" or not self._scaled_add(args, kwargs):
            inplace = self.render_call(attribute("kernels", name), args, kwargs)
            self.source.add((), ast.Expr(inplace), reads_of(inplace), self.comment, self.phase)

    def _scaled_add(self, args: tuple, kwargs: dict) -> bool:
        """`add_Tensor_(a, b, alpha)` on same-dtype float arrays (an optimizer's `p.add_(grad,
        alpha=-lr)`) as the kernel computes it, without its dispatch: `u = n * b` then `a +=
        u`, `n` alpha as a 0-d array (see docs/compile.md)."""
        if kwargs or len(args) != 3:
            return False
        a, b, alpha = args
        if type(alpha) not in (float, Number) or float(alpha) == 1 or \
                type(a) is not np.ndarray or type(b) is not np.ndarray or \
                a.dtype.kind not in "fV" or b.dtype != a.dtype or b.shape != a.shape or \
                kernels.adds_in_one_pass(a, b, float(alpha)):  # (then the kernel's own call)
            return False
        target, operand = self.render(a).id, self.render(b).id
        reads = reads_of(self.render(alpha))
        key = (ast.dump(self.render(alpha)), a.dtype)
        factor = self.factors.get(key)
        if factor is None:
            factor = self.source.fresh("n")
            self.source.add(factor, self._as_array(alpha, a.dtype), reads,
                            f"{self.comment}: alpha as a 0-d {a.dtype} array",
                            self.phase).neutral = True
            if all(name.startswith("lr") for name in reads):  # (read once: reused)
                self.factors[key] = factor
        product = self.source.fresh("u")
        self.source.add(product, ast.BinOp(var(factor), ast.Mult(), var(operand)),
                        (factor, operand), f"{self.comment}: alpha * other",
                        self.phase).quiet = True
        self.source.add((), ast.AugAssign(ast.Name(target, ast.Store()), ast.Add(),
                                          var(product), lineno=0),
                        (target, product), f"{self.comment}: the sum", self.phase).quiet = True
        return True

    def _as_array(self, alpha: Any, dtype: np.dtype) -> ast.expr:
        """`np.array(alpha, np.float32) if abs(alpha) <= f32_max else kernels.checked(alpha,
        np.float32)` (an infinity or NaN as itself; a finite alpha beyond, torch's error)."""
        kind = attribute("np", dtype.name) if getattr(np, dtype.name, None) is dtype.type \
            else var(self.source.constant(dtype))
        limit = f"{dtype.kind}{dtype.itemsize * 8}_max"  # f32_max: float32's largest
        self.source.namespace[limit] = float(np.finfo(dtype).max)
        fits = ast.Compare(call(var("abs"), [self.render(alpha)]), [ast.LtE()], [var(limit)])
        return ast.IfExp(fits, call(attribute("np", "array"), [self.render(alpha), kind]),
                         call(attribute("kernels", "checked"), [self.render(alpha), kind]))

    def write_inplace(self, tensor: Tensor, result: Any) -> None:
        """recording.write_inplace: a kernel's result copied into a tensor the step made."""
        name = self.names.get(id(result))
        fits = name is not None and np.shape(result) == tensor._data.shape
        target = self._writable(tensor._data if fits else None)
        self.comment = "the result written in place"
        copy_to = call(attribute("np", "copyto"), [var(target), var(name)],
                       {"casting": ast.Constant("unsafe")})
        self.source.add((), ast.Expr(copy_to), (target, name),
                        f"{self.phase}: {self.comment}", self.phase)
        self.version_moved(tensor)

    def grad_emptied(self, tensor: Tensor, by: str, phase: str) -> None:
        """A line `T._grad = None` (`by`: who empties it, for the comment)."""
        name = self.tensor_name(tensor)
        old = self.known.get(id(tensor._grad))
        if old is not None and old.how == GRAD:  # no longer this tensor's .grad
            old.how = old.name = ""
        label = self.of(tensor).label or name
        self.source.add((), None, (), f"{by}: {label}.grad = None", phase, GRAD_NONE,
                        name).tensor_tree = self.tensor_tree(name)

    def data_seen(self, value: Any) -> None:
        """A call was given `value`: remember the owners of its arrays."""
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, Tensor):
                self.owners[id(item._data)] = item
                self.of(item)  # (kept alive: ids stay unique)

    def wrapped(self, array: Any, result: np.ndarray) -> None:
        """recording.wrap turned a kernel's numpy scalar into an array."""
        if self.recording and array is not result and id(array) in self.names:
            self.comment = "forward: a scalar result as a 0-d array"
            scalar = Value(self.names[id(array)], array, self)  # (a numpy scalar, not an array)
            self.call(attribute("np", "asarray"), (scalar,), {}, result)

    def node_made(self, tensor: Tensor, node: Any) -> None:
        """recording.set_history: name the node on the line that made the tensor."""
        line = self.made_by.get(self.names.get(id(tensor._data)))
        if line is not None and line.phase in ("forward", AFTER_BACKWARD) and \
                node.name() not in line.comment:
            line.comment += f" -> {node.name()}"

    def backward(self, tensor: Tensor, gradient: Any, retain_graph: Any, create_graph: bool,
                 inputs: Any) -> None:
        """Trace `tensor.backward()`: the engine's walk over the graph, written out."""
        _check_backward(tensor, gradient, retain_graph or create_graph or inputs is not None)
        self.backwards += 1
        self.phase = "backward"
        loss = self.value_of(tensor._data, "the loss")
        if gradient is not None:  # `y.backward(v)`: v is the seed, a value of the step
            if id(gradient._data) not in self.names:
                self.data_seen(gradient)  # (an input: an argument, a global)
            root = self.value_of(gradient._data, "the gradient given to backward()")
        else:
            self.comment = f"backward: the seed, d {loss.name} / d {loss.name} = 1"
            seed = np.ones_like(tensor._data)
            root = self.call(attribute("np", "ones"), (seed.shape, seed.dtype), {}, seed)
            self.ones.add(root.name)
        _TracedTask(self).trace([((tensor.grad_fn, tensor._output_nr), root)])

    def backward_of(self, outputs: list[Tensor]) -> tuple[list[Value], list[tuple[Tensor, Value]]]:
        """Trace the backward of a forward that calls none (a model compiled on its own): the
        engine's walk from `outputs`, each seeded by a variable `sN`, down to the tensors it
        read. Returns the seeds and (tensor, traced gradient) for each gradient sent there,
        in the engine's order."""
        if not _plain_engine():
            raise TraceBreak("a forward that returns a graph, with anomaly mode, a forward-AD "
                             "level or tensor_backward() on")
        self.phase = "backward"
        roots = []
        for tensor in outputs:
            node = tensor.grad_fn
            if node is None or node._sequence_nr < self.first_node:
                raise TraceBreak("the forward returns a tensor that requires grad and that it "
                                 "did not compute (a parameter, an input)")
            seed = np.ones_like(tensor._data, order="C")
            roots.append(((node, tensor._output_nr), Value(self.bind(seed, "s"), seed, self)))
        task = _TracedTask(self, self.first_node)
        task.trace(roots)
        return [seed for _, seed in roots], [(self._reached_tensor(node, input_nr), grad)
                       for (node, input_nr), grad in task.reached]

    def _reached_tensor(self, node: Any, input_nr: int) -> Tensor:
        """The tensor read by the forward whose gradient goes to (node, input_nr)."""
        if type(node) is AccumulateGrad:
            tensor = node.variable
        else:
            tensor = next((t for t in self.owners.values()
                           if t.grad_fn is node and t._output_nr == input_nr), None)
            if tensor is None:
                raise TraceBreak(f"the forward's graph reaches {node.name()}, made before the "
                                 "call, through no tensor it read")
        self.tensor_name(tensor)
        return tensor

    def accumulate(self, node: AccumulateGrad, grad: Value | None) -> None:
        """AccumulateGrad traced: a line, and what `.grad` will hold kept for check_grads."""
        if grad is None:
            return
        variable = node.variable
        name = self.tensor_name(variable)
        label = self.of(variable).label or name
        self.comment = f"AccumulateGrad: {label}.grad"
        line = self.source.add((), None, (grad.name,), self.comment, "backward", ACCUMULATE,
                               name)
        line.grad, line.tensor_tree = grad.name, self.tensor_tree(name)
        expected = grad.array.copy() if variable._grad is None else \
            variable._grad._data + grad.array
        self.grads_checked.append((variable, expected))

    def check_grads(self) -> None:
        """After the engine ran: every .grad must be, bit for bit, what the lines compute."""
        for variable, expected in self.grads_checked:
            got = variable._grad._data if variable._grad is not None else None
            if not same_bits(got, expected):
                raise TraceBreak("self-check: the traced backward does not reproduce the "
                                 "engine's gradient bit for bit")
            known = self.of(variable._grad)
            known.how, known.grad_of = GRAD, variable
        self.grads_checked.clear()


def _holds(module: Module, tensor: Tensor) -> bool:
    """Whether `tensor` is a parameter, buffer or plain attribute of `module`."""
    return any(t is tensor for t in (*module._parameters.values(), *module._buffers.values(),
                                     *vars(module).values()))


def _optimizer_holds(optimizer: Optimizer, tensor: Tensor) -> bool:
    """Whether `tensor` is a parameter of the optimizer's or a tensor of its state."""
    return any(p is tensor for group in optimizer.param_groups for p in group["params"]) or \
        any(v is tensor for state in optimizer.state.values() for v in state.values())


def _check_backward(tensor: Any, gradient: Any, options: bool) -> None:
    """Stop the trace at a backward the generated step would not run as eager does."""
    if options:
        raise TraceBreak("backward() with retain_graph, create_graph or inputs")
    if not isinstance(tensor, Tensor) or tensor.grad_fn is None:
        raise TraceBreak("backward() of something other than a tensor with a grad_fn")
    if not _plain_engine():
        raise TraceBreak("backward() with anomaly mode, a forward-AD level or "
                         "tensor_backward() on")
    if gradient is not None and (
            type(gradient) is not Tensor or gradient.requires_grad or
            gradient._data.shape != tensor._data.shape or
            gradient._data.dtype != tensor._data.dtype):
        raise TraceBreak("backward() with a gradient other than a tensor of the output's "
                         "shape and dtype that requires no grad")
    if gradient is None and tensor._data.size != 1:
        raise TraceBreak("backward() of a tensor that is not a scalar")


def _plain_engine() -> bool:
    """Whether a backward now runs as the generated code does: no anomaly mode, no forward-AD
    level, tensor_backward() off."""
    return not anomaly.is_enabled() and forward_grad.current_level() < 0 and _Mode.raw_allowed


class _TracedTask(GraphTask):
    """The engine's own walk (GraphTask), each node's formulas run on traced values
    (SymbolicOps), so that each writes its lines. Given `first_node`, the walk over the nodes
    one forward made, from its outputs: each gradient sent to an edge that leaves them is kept
    in `reached`, in the engine's order, instead of delivered."""

    __slots__ = ("tracer", "first_node", "reached")

    def __init__(self, tracer: Tracer, first_node: int | None = None) -> None:
        super().__init__(True, False, SymbolicOps(tracer))
        self.tracer, self.first_node = tracer, first_node
        self.reached: list[tuple[tuple[Any, int], Value]] = []

    def trace(self, roots: list[tuple[tuple[Any, int], Value]]) -> None:
        """The walk from `roots`, (edge, its traced gradient)."""
        edges = [edge for edge, _ in roots]
        self.compute_dependencies(edges, False)
        self.tracer.swept |= set(self.dependencies)
        following = self.deliver(edges, [seed for _, seed in roots])
        # (Paused: the formulas' kernels are the formulas' lines; warnings off, as the engine has.)
        with kernels.silenced():
            self.tracer.pause(self.run, following, self.evaluate)

    def deliver(self, edges: Any, grads: Any) -> Any:
        if self.first_node is None:
            return super().deliver(edges, grads)
        inside: list[tuple[Any, Any]] = []
        for edge, grad in zip(edges, grads, strict=False):
            node = edge[0]
            if node is not None and (type(node) is AccumulateGrad or
                                     node._sequence_nr < self.first_node):
                if grad is not None:
                    self.reached.append((edge, grad))
            else:
                inside.append((edge, grad))
        return super().deliver([e for e, _ in inside], [g for _, g in inside])

    def evaluate(self, node: Any, grads: list) -> Any:
        """The engine's evaluate_raw on traced values: an AccumulateGrad writes its line."""
        tracer = self.tracer
        if node.has_hooks():
            raise TraceBreak(f"a hook on {node.name()} (hooks run eagerly)")
        if type(node) is AccumulateGrad:
            tracer.accumulate(node, grads[0])
            return ()
        if type(node).__module__ != "generated.functions":
            raise TraceBreak(f"{node.name()} is not a node of the spec (no formulas to trace)")
        start = len(tracer.source.lines)
        tracer.comment = node.name()
        outputs = self.evaluate_raw(node, grads)
        if any(grad is not None and type(grad) is not Value for grad in outputs):
            raise TraceBreak(f"{node.name()} returned a gradient not computed by its formulas")
        _label(tracer, node, outputs, start)
        tracer.comment = f"engine: a gradient of {node.name()} added to another"
        return outputs


def _label(tracer: Tracer, node: Any, outputs: list, start: int) -> None:
    """Name, on each line a node's apply wrote, the spec's formula of the first gradient that
    needs it."""
    formulas = FORMULAS.get(node.name(), {})
    lines = tracer.source.lines
    made_here = {target: line for line in lines[start:] for target in line.targets}
    for index, grad in enumerate(outputs):
        if grad is None:
            continue
        formula = formulas.get(index)
        text = f"{node.name()}: {formula}" if formula else node.name()
        stack = [grad.name]
        while stack:
            line = made_here.pop(stack.pop(), None)
            if line is None:
                continue
            if line.comment == node.name():
                line.comment = text
            stack.extend(line.reads)


def _bindings(fn: Callable, found: dict | None = None) -> dict[int, reads.Read]:
    """id(object) -> its read, for the globals and free variables fn reads, and those of the
    Python functions found there."""
    found = {} if found is None else found
    code = getattr(fn, "__code__", None)
    if code is None:
        return found
    namespace = getattr(fn, "__globals__", {})
    places = [(namespace, name) for name in reads.code_names([code]) if name in namespace]
    cells = zip(code.co_freevars, fn.__closure__ or (), strict=False)
    places += [(cell, name) for name, cell in cells]
    new = []
    for holder, name in places:
        try:
            value = holder[name] if holder is namespace else holder.cell_contents
        except ValueError:  # a free variable not bound yet
            continue
        if id(value) not in found:
            found[id(value)] = reads.bound(holder, name, reads.expected_of(value))
            new.append(value)
    for value in filter(_own_function, new):  # (each function once: when first found)
        _bindings(value, found)
    return found


def _own_function(value: Any) -> bool:
    """A Python function of the program's (not gradgen's)."""
    return isinstance(value, types.FunctionType) and \
        not (value.__module__ or "").startswith("runtime")


# The global modes a compiled step depends on, as (holder, attribute); the guard reads the same.
MODES: tuple[tuple[Any, str], ...] = (
    (grad_mode._state, "enabled"), (anomaly._state, "enabled"), (forward_grad._Level, "current"),
    (_Mode, "raw_allowed"),
)
