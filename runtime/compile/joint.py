"""A compiled forward whose backward runs later: `torch.compile(model)` in an eager loop.

As AOTAutograd does, gradgen writes two functions from the one traced call: the forward (which
returns the outputs' arrays, the tensors that need a gradient and what the backward reads) and
the backward (the formulas of the nodes the forward made, from one gradient per output to one
per tensor). At every call the forward runs and its outputs get one `CompiledFunctionBackward`
node (an autograd.Function's), whose edges go to those tensors; what the backward reads is saved
as a Function saves it, so eager's errors hold."""

from __future__ import annotations

import ast
import dataclasses
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from runtime import grad_mode
from runtime._tensor import Tensor
from runtime.autograd import gradients
from runtime.autograd.function import Function
from runtime.compile.emit import TENSOR, Line, Source, TraceBreak, names_in, same_bits, var, walk
from runtime.compile.guards import hooked
from runtime.compile.optimize import optimize
from runtime.compile.reads import is_plain_value

# PyTorch's words, for the gradients of a compiled backward run with create_graph=True.
DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


@dataclasses.dataclass(frozen=True)
class _Output:
    """Where a returned tensor sits in what the function returns: the index-th output."""

    index: int


class Joint:
    """One traced call of a function that returns a graph: its forward's lines and its backward,
    traced from the outputs to the tensors read."""

    def __init__(self, tracer: Any, result: Any) -> None:
        if tracer.items:
            raise TraceBreak("the forward returns a Python number read from a tensor")
        self.tracer = tracer
        outputs: list[Tensor] = []
        self.template = walk(result, lambda value: _output(value, outputs))
        self.outputs = _output_names(tracer, outputs)
        self.differentiable = tuple(i for i, t in enumerate(outputs) if t.requires_grad)
        seeds, reached = tracer.backward_of([outputs[i] for i in self.differentiable])
        self.seeds = [seed.name for seed in seeds]
        self.reached = [tensor for tensor, _ in reached]
        self.tensors = [tracer.tensor_name(tensor) for tensor, _ in reached]
        self.grads = [grad.name for _, grad in reached]
        _self_check([outputs[i] for i in self.differentiable], seeds, reached)

    def functions(self, name: str, params: str, optimizations: bool) -> list[tuple]:
        """The forward and the backward (optimized first), as step.py's `_function` writes
        them: name, parameters, docstring, lines, what it returns, the variables it keeps."""
        source = self.tracer.source
        if optimizations:
            optimize(source, [*self.outputs, *self.grads])
        forward_lines, backward_lines, made, saved = _split(source)
        self.shared = self._sharing(source, made, saved)
        returned = self._returned(source, made, saved)
        self.names = name, "backward" if name == "forward" else f"{name}_backward"
        title = "the model's forward" if name == "forward" else f"the forward of {name}"
        return [(name, params, f"{title[0].upper()}{title[1:]}, compiled by gradgen from one "
                 "eager run. It returns the outputs'\n    arrays, the tensors that need a "
                 "gradient (the edges of the outputs' node,\n    CompiledFunctionBackward) and "
                 f"what {self.names[1]} will read.", forward_lines, returned, names_in(returned)),
                (self.names[1], ", ".join([*saved, *self.seeds]),
                 f"The backward of {title}: the formulas of the nodes the traced forward made.\n"
                 "    The engine calls it at CompiledFunctionBackward with the outputs' gradients "
                 f"({', '.join(self.seeds)});\n    it returns the gradients of the tensors that "
                 "need one, in their order.", backward_lines, _tuple(map(var, self.grads)),
                 self.grads)]

    def compiled(self, namespace: dict[str, Any]) -> Callable[..., Any]:
        """What later calls run, from the namespace the two functions were defined in: the
        forward, then one CompiledFunctionBackward node on its outputs. `first` is the traced
        call's outputs, given that node too."""
        forward, backward = (namespace[name] for name in self.names)
        function = _function_class(backward, self.differentiable, self.shared)
        template = self.template

        def compiled_forward(*args: Any) -> Any:
            arrays, tensors, saved = forward(*args)
            return _rebuild(template, function.apply((arrays, saved), *tensors))

        self.first = _rebuild(template, function.apply((self.traced_outputs, self.traced_saved),
                                                       *self.reached))
        return compiled_forward

    def _returned(self, source: Source, made: dict[str, Line], saved: list[str]
                  ) -> ast.expr:
        """What the forward returns: the outputs' arrays, the tensors that need a gradient, and
        what the backward reads (a saved input as its Tensor)."""
        kept = [made[name].tensor if made[name].kind == TENSOR and made[name].tensor
                else name for name in saved]
        self.traced_outputs = [source.traced[name] for name in self.outputs]
        self.traced_saved = [self.tracer.owners[id(source.traced[name])] if item != name
                             else source.traced[name]
                             for name, item in zip(saved, kept, strict=True)]
        tensor = self.tracer.tensor_tree
        return _tuple([_tuple(map(var, self.outputs)), _tuple(map(tensor, self.tensors)),
                       _tuple(tensor(name) for name in kept)])

    def _sharing(self, source: Source, made: dict[str, Line], saved: list[str]) -> dict:
        """Saved value (by index) -> the output it shares memory with: the two share a version
        counter, as in eager. A view of an input or another output stops the trace."""
        traced = source.traced
        inputs = [name for name, line in made.items() if line.phase == "prologue"]
        shared = {}
        for index, name in enumerate(self.outputs):
            array = traced[name]
            if any(isinstance(traced.get(other), np.ndarray) and
                   np.may_share_memory(array, traced[other])
                   for other in {*self.outputs, *inputs} - {name}):
                raise TraceBreak("the forward returns a view of an input or of another output "
                                 "(compiled forwards return tensors of their own)")
            for position, other in enumerate(saved):
                if other != name and np.may_share_memory(array, traced[other]):
                    shared[position] = index
        return shared


def _split(source: Source) -> tuple[list[Line], list[Line], dict[str, Line], list[str]]:
    """The forward's lines, the backward's, the forward's by variable, and the forward's
    variables the backward reads."""
    forward_lines = [line for line in source.lines if line.phase != "backward"]
    backward_lines = [line for line in source.lines if line.phase == "backward"]
    made = {target: line for line in forward_lines for target in line.targets}
    saved = list(dict.fromkeys(name for line in backward_lines for name in line.reads
                               if name in made))
    return forward_lines, backward_lines, made, saved


def _tuple(items: Iterable[ast.expr]) -> ast.Tuple:
    return ast.Tuple(list(items), ast.Load())


def _output(value: Any, outputs: list[Tensor]) -> Any:
    """A returned tensor as where it comes in the outputs (appended to `outputs`); a plain
    value as itself."""
    if isinstance(value, Tensor):
        outputs.append(value)
        return _Output(len(outputs) - 1)
    if is_plain_value(value):
        return value
    raise TraceBreak(f"the forward returns a {type(value).__name__}")


def _rebuild(template: Any, outputs: tuple) -> Any:
    return walk(template, lambda item: outputs[item.index] if type(item) is _Output else item)


def computed(tracer: Any, tensor: Tensor, returner: str) -> str | None:
    """The variable of a returned tensor the trace computed (None: one it read, or neither);
    an inference tensor stops the trace."""
    if tensor._counter is not None and tensor._counter.inference:
        raise TraceBreak(f"{returner} returns an inference tensor (made under "
                         "torch.inference_mode())")
    name = tracer.names.get(id(tensor._data))
    return name if not tracer.of(tensor).name else None


def _output_names(tracer: Any, outputs: list[Tensor]) -> list[str]:
    """The returned tensors' variables: each computed by the forward, each once."""
    names = [computed(tracer, tensor, "the forward") for tensor in outputs]
    if any(name is None or name[:1] not in ("v", "g") for name in names):
        raise TraceBreak("the forward returns a tensor it did not compute (an input, a "
                         "parameter)")
    if len(set(names)) != len(names):
        raise TraceBreak("the forward returns the same tensor twice")
    return names


def _self_check(outputs: list[Tensor], seeds: list, reached: list) -> None:
    """The traced backward against the engine's, on the traced call's graph: the same gradients,
    bit for bit (skipped when a tensor reached has hooks)."""
    totals: dict[int, tuple[Tensor, np.ndarray]] = {}
    for tensor, value in reached:
        total = totals.get(id(tensor))
        totals[id(tensor)] = (tensor, value.array if total is None else total[1] + value.array)
    tensors = [tensor for tensor, _ in totals.values()]
    if not tensors or any(hooked(tensor) or tensor.grad_fn is not None and
                          tensor.grad_fn.has_hooks() for tensor in tensors):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = gradients.grad(outputs, tensors,
                             [Tensor._make(seed.array.copy(), None) for seed in seeds],
                             retain_graph=True, allow_unused=True)
        for grad, (_, array) in zip(got, totals.values(), strict=True):
            if grad is None or not same_bits(grad._data, array):
                raise TraceBreak("self-check: the traced backward does not reproduce the "
                                 "engine's gradient bit for bit")


def _function_class(backward: Callable, differentiable: tuple[int, ...],
                    shared: dict[int, int]) -> type[Function]:
    """The autograd.Function of one trace (its node: CompiledFunctionBackward)."""

    class CompiledFunction(Function):
        @staticmethod
        def forward(ctx: Any, payload: tuple, *tensors: Tensor) -> tuple:
            arrays, saved = payload
            outputs = tuple(Tensor._make(array, None) for array in arrays)
            by_array = {id(array): output for array, output in zip(arrays, outputs,
                                                                     strict=True)}
            kept = [item if type(item) is not np.ndarray
                    else by_array[id(item)] if id(item) in by_array
                    else Tensor._make(item, None) for item in saved]
            for position, index in shared.items():
                kept[position]._version_counter = outputs[index]._version_counter
            ctx.save_for_backward(*kept)
            if len(differentiable) != len(outputs):
                ctx.mark_non_differentiable(*(output for index, output in enumerate(outputs)
                                              if index not in differentiable))
            return outputs

        @staticmethod
        def backward(ctx: Any, *grads: Tensor) -> tuple:
            saved = ctx.saved_tensors
            # Each as the engine gives it: the formulas see eager's layouts.
            seeds = [grads[index]._data for index in differentiable]
            results = backward(*(tensor._data for tensor in saved), *seeds)
            if grad_mode.is_grad_enabled():  # create_graph=True
                return (None, *CompiledFunctionBackward.apply(results, *grads, *saved))
            return (None, *(Tensor._make(result, None) for result in results))

    return CompiledFunction


class CompiledFunctionBackward(Function):
    """The gradients of a compiled backward under create_graph=True: their own backward raises,
    as PyTorch's."""

    @staticmethod
    def forward(ctx: Any, results: tuple, *tensors: Tensor) -> tuple:
        return tuple(Tensor._make(result, None) for result in results)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple:
        raise RuntimeError(DOUBLE_BACKWARD)
