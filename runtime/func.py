"""`runtime.func`: torch.func's function transforms, built on gradgen's autograd engine.

    grad(f)(x)            the gradient of a scalar f at x, as a function of x
    grad_and_value(f)(x)  (gradient, f(x))
    vjp(f, x)             (f(x), a function u -> uᵀ J)
    jvp(f, (x,), (v,))    (f(x), J v), by forward-mode AD (dual tensors)
    jacrev(f), jacfwd(f)  the Jacobian, row by row (reverse mode) or column by column
                          (forward mode)
    hessian(f)            jacfwd(jacrev(f)), as torch defines it
    functional_call       a module's forward with parameters and buffers taken from a dict
    stack_module_state    the parameters of several models stacked, for vmap over them
    vmap(f)               f mapped over a batch dimension
    linearize(f, *x)      (f(x), a function v -> J v), by forward mode at every call
    functionalize(f)      f itself (gradgen has no aliasing-removal pass; same eager results)
    rearrange(x, pattern) einops' rearrange, without einops (runtime/rearrange.py)
    replace_all_batch_norm_modules_, debug_unwrap   as in torch.func

PyTorch implements the transforms with functorch's "levels": every tensor is wrapped once
per active transform, so that grad(grad(f)) differentiates the inner gradient. gradgen has
no wrappers; it gets the same composition from the engine it already has:

- A reverse-mode transform (grad, vjp, jacrev) gives `f` new tensor objects for the inputs
  it differentiates: a fresh leaf that requires grad, or, when the caller's tensor already
  requires grad (an outer transform, or the user's own graph), a view of it, so that the
  outer level can differentiate through this one. The gradients are always computed with
  `create_graph=True` for the same reason.
- A forward-mode transform (jvp, jacfwd) runs `f` on dual tensors (autograd.forward_ad).
  The engine computes tangents inside reverse-mode recording, so forward over reverse
  (hessian = jacfwd(jacrev(f))) and reverse over forward (jacrev(jacfwd(f))) both work.
  Like the engine, there is a single dual level: jvp inside jvp (or jacfwd(jacfwd(f))) is
  the engine's "Nested forward mode AD is not supported" error.
- When the outermost transform returns, a result whose graph reaches only the fresh
  leaves it made is detached, so `grad(f)(x)` of a plain `x` does not require grad, as in
  torch; a result that also depends on tensors of the user's graph (a closure's weights
  that require grad) stays connected, as torch's does.

`vmap` is honest but not vectorised: it calls `f` once per index of the mapped dimension
and stacks the results along `out_dims`, which gives torch's values and shapes for every
function whose per-example results do not depend on the other examples. Random ops follow
`randomness`: "error" raises as torch does, "same" gives every example the same draws
(torch's stream too), and "different" (torch draws one batched tensor, which a loop
cannot reproduce bit for bit) is refused if the function draws.

Inputs and outputs may be pytrees of Tensors: tuples, lists and dicts (a parameter dict
for functional_call), as in torch.func.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from generated import ops
from runtime import changes, forward_grad
from runtime import random as _random
from runtime._tensor import Tensor
from runtime.aliases import missing_attribute
from runtime.autograd import forward_ad
from runtime.autograd.gradients import grad as _autograd_grad
from runtime.factories import eye, zeros, zeros_like
from runtime.grad_mode import enable_grad
from runtime.nn.batchnorm import _BatchNorm
from runtime.nn.norms import _InstanceNorm
from runtime.node import AccumulateGrad
from runtime.rearrange import rearrange as _rearrange

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "stack_module_state", "vjp", "vmap"]


# -- pytrees ----------------------------------------------------------------------------------
# A spec is None for a leaf, else (kind, keys, child specs) for a tuple, list or dict.

def _flatten(tree: Any) -> tuple[list, Any]:
    """The leaves of `tree` (depth first, dicts in insertion order) and its structure."""
    if isinstance(tree, tuple | list):
        leaves: list = []
        specs = []
        for item in tree:
            item_leaves, spec = _flatten(item)
            leaves += item_leaves
            specs.append(spec)
        return leaves, (type(tree), None, specs)
    if isinstance(tree, dict):
        leaves = []
        specs = []
        for value in tree.values():
            item_leaves, spec = _flatten(value)
            leaves += item_leaves
            specs.append(spec)
        return leaves, (dict, list(tree), specs)
    return [tree], None


def _unflatten(leaves: Iterator, spec: Any) -> Any:
    """The tree of structure `spec` whose leaves come, in order, from the iterator."""
    if spec is None:
        return next(leaves)
    kind, keys, specs = spec
    items = [_unflatten(leaves, child) for child in specs]
    if kind is dict:
        return dict(zip(keys, items, strict=True))
    return kind(items) if kind in (tuple, list) else kind(*items)


def _rebuild(spec: Any, leaves: list) -> Any:
    return _unflatten(iter(leaves), spec)


# -- levels -------------------------------------------------------------------------------------

class _Levels:
    """How many transforms are running (1 inside the outermost one), and the fresh leaves
    they made, by id (the tensors kept alive so that no id is reused meanwhile)."""

    depth = 0
    fresh: dict[int, Tensor] = {}


@contextlib.contextmanager
def _level(fresh: dict[int, Tensor] | None = None) -> Iterator[bool]:
    """One transform's extent; yields whether it is the outermost one. The outermost level
    starts with no fresh leaves, or with `fresh` (those of a vjp whose vjp_fn is called)."""
    _Levels.depth += 1
    if _Levels.depth == 1:
        _Levels.fresh = dict(fresh or {})
    try:
        with enable_grad():
            yield _Levels.depth == 1
    finally:
        _Levels.depth -= 1
        if _Levels.depth == 0:
            _Levels.fresh = {}


def _differentiable_copy(tensor: Any) -> Tensor:
    """The tensor a reverse-mode transform gives `f` in place of `tensor`.

    A view of it when it requires grad (an outer level, or the user's graph, differentiates
    through this level), else a fresh leaf that requires grad, recorded in _Levels.fresh.
    A tangent (an outer jacfwd) is carried over to the fresh leaf.
    """
    if not isinstance(tensor, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(tensor)}")
    if tensor.requires_grad:
        return tensor.view_as(tensor)
    copy = tensor.detach().requires_grad_()
    if tensor._fw_grad is not None and copy._fw_grad is None:
        forward_grad.set_tangent(copy, tensor._fw_grad)
    _Levels.fresh[id(copy)] = copy
    return copy


def _reaches_outside(tensor: Tensor) -> bool:
    """Whether the graph of `tensor` reaches a leaf other than the fresh ones of the levels."""
    if tensor.grad_fn is None:  # a leaf itself
        return id(tensor) not in _Levels.fresh
    seen: set[int] = set()
    stack = [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in _Levels.fresh:
                return True
            continue
        stack.extend(next_node for next_node, _ in node.next_functions)
    return False


def _unwrap(tree: Any, outermost: bool) -> Any:
    """The results of the outermost level, detached from the leaves the levels made (see
    the module docstring); inner levels leave them as they are, for the outer ones."""
    if not outermost:
        return tree
    leaves, spec = _flatten(tree)
    leaves = [leaf.detach() if isinstance(leaf, Tensor) and leaf.requires_grad
              and not _reaches_outside(leaf) else leaf for leaf in leaves]
    return _rebuild(spec, leaves)


def _argnums(argnums: Any, args: tuple) -> tuple[int, ...]:
    """The positions of the differentiated arguments, checked as torch checks them."""
    numbers = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    for number in numbers:
        if not isinstance(number, int) or isinstance(number, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -len(args) <= number < len(args):
            raise RuntimeError(f"Got argnum={number}, but only {len(args)} positional inputs")
    positions = tuple(number % len(args) for number in numbers)
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return positions


class _Inputs:
    """The differentiated arguments of one call: their leaves replaced by the tensors the
    transform gives `f` (`prepared`), and how to put them back into the argument list."""

    def __init__(self, args: tuple, argnums: Any, prepare: Callable[[Any], Tensor]) -> None:
        self.args = args
        self.argnums = argnums
        self.positions = _argnums(argnums, args)
        self.specs = []
        self.prepared: list[Tensor] = []
        self.counts = []
        for position in self.positions:
            leaves, spec = _flatten(args[position])
            self.specs.append(spec)
            self.counts.append(len(leaves))
            self.prepared += [prepare(leaf) for leaf in leaves]

    def call_args(self, leaves: list | None = None) -> list:
        """The arguments for `f`, with `leaves` (default: the prepared tensors) in place."""
        args = list(self.args)
        leaves = self.prepared if leaves is None else leaves
        for position, per_arg in zip(self.positions, self.group(leaves), strict=True):
            args[position] = per_arg
        return args

    def group(self, values: list) -> list:
        """One tree per differentiated argument, of its structure, from a flat list."""
        trees, start = [], 0
        for spec, count in zip(self.specs, self.counts, strict=True):
            trees.append(_rebuild(spec, values[start:start + count]))
            start += count
        return trees

    def result(self, values: list) -> Any:
        """Per-leaf values grouped as torch returns them: like the argument for an int
        argnums, a tuple of those for a tuple argnums."""
        trees = self.group(values)
        return tuple(trees) if isinstance(self.argnums, tuple) else trees[0]


def _split_aux(output: Any, has_aux: bool, api: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return output


def _gradients(outputs: list, inputs: list, cotangents: list | None) -> list:
    """d outputs / d inputs (zeros where unreached), with a graph for outer levels."""
    pairs = [(out, cot) for out, cot in zip(outputs, cotangents or [None] * len(outputs),
                                            strict=True) if out.requires_grad]
    grads: Any = [None] * len(inputs)
    if pairs:
        outs, cots = zip(*pairs, strict=True)
        grads = _autograd_grad(outs, inputs, None if cotangents is None else cots,
                               retain_graph=True, create_graph=True, allow_unused=True)
    return [zeros_like(tensor) if g is None else g for g, tensor in zip(grads, inputs,
                                                                       strict=True)]


# -- grad and vjp -----------------------------------------------------------------------------

def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning (gradient of `func` with respect to the `argnums` arguments,
    value of `func`); with `has_aux`, func returns (value, aux) and the second item is
    (value, aux)."""
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _level() as outermost:
            inputs = _Inputs(args, argnums, _differentiable_copy)
            output, aux = _split_aux(func(*inputs.call_args(), **kwargs), has_aux, api)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {output.dim()} dims. Maybe you wanted to use "
                                   "the vjp or jacrev APIs instead?")
            grads = inputs.result(_gradients([output], inputs.prepared, None))
            value = (output, aux) if has_aux else output
            return _unwrap((grads, value), outermost)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """A function computing the gradient of the scalar `func` with respect to its `argnums`
    arguments (with `has_aux`: (gradient, aux))."""
    with_value = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = with_value(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) is the tuple, one per primal,
    of the cotangents pulled back through func (uᵀ J). vjp_fn may be called many times."""
    with _level() as outermost:
        inputs = _Inputs(primals, tuple(range(len(primals))),
                         _differentiable_copy)
        output, aux = _split_aux(func(*inputs.call_args()), has_aux, "vjp(f, *primals)")
        outputs, out_spec = _flatten(output)
        for leaf in outputs:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                                   f"non-empty output and returns only Tensors, got "
                                   f"{type(leaf)}")
        fresh = dict(_Levels.fresh)  # vjp_fn's calls detach from these leaves too
        result = _unwrap(output, outermost)
        aux = _unwrap(aux, outermost)

    def vjp_fn(cotangents: Any) -> tuple:
        given, spec = _flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function.")
        for out, cot in zip(outputs, given, strict=True):
            if not isinstance(cot, Tensor) or cot.shape != out.shape:
                shape = cot.shape if isinstance(cot, Tensor) else type(cot)
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {shape} "
                                   f"and output[0] has a shape of {out.shape}.")
        with _level(fresh) as outer:
            grads = inputs.result(_gradients(outputs, inputs.prepared, given))
            return _unwrap(grads, outer)

    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)


# -- forward mode ---------------------------------------------------------------------------

def _check_tangents(primals: Any, tangents: Any) -> tuple[list, list, Any]:
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    primal_leaves, primal_spec = _flatten(primals)
    tangent_leaves, tangent_spec = _flatten(tangents)
    if primal_spec != tangent_spec:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {primal_spec} "
                           f"and tangents with structure {tangent_spec}")
    for primal, tangent in zip(primal_leaves, tangent_leaves, strict=True):
        if not isinstance(primal, Tensor) or not isinstance(tangent, Tensor):
            raise RuntimeError(f"{api}: Expected primals and tangents to only contain "
                               "Tensors")
    return primal_leaves, tangent_leaves, primal_spec


def _forward(func: Callable[..., Any], args: list, kwargs: dict, has_aux: bool,
             api: str) -> tuple[list, list, Any, Any]:
    """Run func on args that hold dual tensors: (primal leaves, tangent leaves, output
    structure, aux). Call inside an open dual level."""
    output, aux = _split_aux(func(*args, **kwargs), has_aux, api)
    outputs, spec = _flatten(output)
    primals, tangents = [], []
    for leaf in outputs:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: Expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(leaf)}")
        primal, tangent = forward_ad.unpack_dual(leaf)
        primals.append(primal)
        tangents.append(zeros_like(primal) if tangent is None else tangent)
    if has_aux:
        aux_leaves, aux_spec = _flatten(aux)
        aux = _rebuild(aux_spec, [forward_ad.unpack_dual(a).primal if isinstance(a, Tensor)
                                  else a for a in aux_leaves])
    return primals, tangents, spec, aux


def _nested_forward() -> bool:
    """Whether a forward transform runs inside another one's open dual level.

    gradgen's forward mode has one dual level (runtime/forward_grad.py), where torch.func
    stacks as many as the transforms nest. An inner forward transform (the inner jacfwd
    of `jacfwd(jacfwd(f))`) therefore computes its products by reverse mode, whose ops
    carry the outer level's tangents as any op does (as `hessian`, jacfwd over jacrev,
    relies on): the same derivatives, reached the other way, so rounding may differ.
    """
    return forward_grad.current_level() >= 0


def _jvp_by_reverse(func: Callable[..., Any], primal_leaves: list, tangent_leaves: list,
                    spec: Any, has_aux: bool) -> tuple:
    """(func(*primals), J v) inside an open dual level: J v is the gradient, with respect
    to a cotangent u, of the vector-Jacobian product uᵀJ taken against v."""
    with _level() as outermost:
        inputs = [_differentiable_copy(p) for p in primal_leaves]
        output, aux = _split_aux(func(*_rebuild(spec, inputs)), has_aux,
                                 "jvp(f, primals, tangents)")
        outputs, out_spec = _flatten(output)
        cotangents = [zeros_like(out).requires_grad_() for out in outputs]
        vjps = _gradients(outputs, inputs, cotangents)
        jvps = _gradients(vjps, cotangents, list(tangent_leaves))
        result = (_rebuild(out_spec, outputs), _rebuild(out_spec, jvps))
        return _unwrap((*result, aux) if has_aux else result, outermost)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """(func(*primals), J v) for the tangents v, by forward-mode AD (dual tensors)."""
    api = "jvp(f, primals, tangents)"
    primal_leaves, tangent_leaves, spec = _check_tangents(primals, tangents)
    if _nested_forward():
        return _jvp_by_reverse(func, primal_leaves, tangent_leaves, spec, has_aux)
    with _level() as outermost, forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(primal_leaves, tangent_leaves,
                                                             strict=True)]
        outs, jvps, out_spec, aux = _forward(func, list(_rebuild(spec, duals)), {}, has_aux,
                                             api)
        result = (_rebuild(out_spec, outs), _rebuild(out_spec, jvps))
        return _unwrap((*result, aux) if has_aux else result, outermost)


# -- Jacobians --------------------------------------------------------------------------------

def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None) -> Callable[..., Any]:
    """A function computing the Jacobian of `func` by reverse mode, one vector-Jacobian
    product per output element; each block has shape output.shape + input.shape."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _level() as outermost:
            inputs = _Inputs(args, argnums, _differentiable_copy)
            output, aux = _split_aux(func(*inputs.call_args(), **kwargs), has_aux,
                                     "jacrev(f, ...)(*args)")
            outputs, out_spec = _flatten(output)
            blocks = []
            for out in outputs:
                if not isinstance(out, Tensor):
                    raise RuntimeError("jacrev(f, ...)(*args): Expected f to be a function that "
                                       f"has non-empty output and returns only Tensors, got "
                                       f"{type(out)}")
                blocks.append(inputs.result(_reverse_blocks(out, inputs.prepared)))
            result = _rebuild(out_spec, blocks)
            return _unwrap((result, aux) if has_aux else result, outermost)

    return wrapper


def _reverse_blocks(out: Tensor, inputs: list) -> list:
    """d out / d input for each input, as out.shape + input.shape, row by row."""
    n = out.numel()
    if n == 0:
        return [zeros(*out.shape, *x.shape, dtype=x.dtype) for x in inputs]
    basis = eye(n, dtype=out.dtype)
    rows = [_gradients([out], inputs, [basis[i].reshape(out.shape)]) for i in range(n)]
    return [ops.stack([row[j] for row in rows]).reshape(*out.shape, *x.shape)
            for j, x in enumerate(inputs)]


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, *, randomness: str = "error") -> Callable[..., Any]:
    """A function computing the Jacobian of `func` by forward mode, one Jacobian-vector
    product per input element; each block has shape output.shape + input.shape."""
    api = "jacfwd(f, ...)(*args)"

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _nested_forward():  # the same Jacobian, row by row (see _nested_forward)
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        with _level() as outermost:
            inputs = _Inputs(args, argnums, _tensor_input)
            # One plain call for the output's structure, shapes and aux.
            with forward_ad.dual_level():
                outs, _, out_spec, aux = _forward(func, inputs.call_args(), kwargs, has_aux,
                                                  api)
            columns: list[list[list]] = [[] for _ in outs]  # [output][input] -> blocks
            for j, x in enumerate(inputs.prepared):
                per_output = _forward_columns(func, inputs, kwargs, (j, x), len(outs), has_aux)
                for i, out in enumerate(outs):
                    columns[i].append(_stack_columns(per_output[i], out, x))
            result = _rebuild(out_spec, [inputs.result(blocks) for blocks in columns])
            return _unwrap((result, aux) if has_aux else result, outermost)

    return wrapper


def _tensor_input(value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
    return value


def _forward_columns(func: Callable[..., Any], inputs: _Inputs, kwargs: dict,
                     input: tuple[int, Tensor], outputs: int, has_aux: bool) -> list[list]:
    """The JVPs of every output along each basis direction of input j: [output][k]."""
    j, x = input
    n = x.numel()
    basis = eye(n, dtype=x.dtype) if n else None
    columns: list[list] = [[] for _ in range(outputs)]
    for k in range(n):
        with forward_ad.dual_level():
            leaves = list(inputs.prepared)
            leaves[j] = forward_ad.make_dual(x, basis[k].reshape(x.shape))
            _, tangents, _, _ = _forward(func, inputs.call_args(leaves), kwargs, has_aux,
                                         "jacfwd(f, ...)(*args)")
        for i, tangent in enumerate(tangents):
            columns[i].append(tangent)
    return columns


def _stack_columns(columns: list, out: Tensor, x: Tensor) -> Tensor:
    if not columns:
        return zeros(*out.shape, *x.shape, dtype=out.dtype)
    return ops.stack(columns, dim=-1).reshape(*out.shape, *x.shape)


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The Hessian of a scalar `func`: jacfwd(jacrev(func)), forward over reverse."""
    return jacfwd(jacrev(func, argnums), argnums)


# -- functional_call ------------------------------------------------------------------------

def _merged(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    merged: dict = {}
    for one in dicts:
        for key, value in one.items():
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of "
                                 "functional call is ambiguous")
            merged[key] = value
    return merged


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """module(*args, **kwargs) with the named parameters and buffers replaced, for this
    call only, by the tensors of the dict(s): `functional_call(model, params, (x,))`.

    The module's own parameters are put back afterwards, even if forward raises. With
    `tie_weights`, a parameter registered under two names (tied weights) is replaced
    under both when the dict names one of them.
    """
    values = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        values = _with_tied_names(module, values)
    if strict:
        _check_strict(module, values)
    swaps = []
    try:
        for key, value in values.items():
            owner_path, _, name = key.rpartition(".")
            owner = module.get_submodule(owner_path)
            registry = (owner._parameters if name in owner._parameters else
                        owner._buffers if name in owner._buffers else None)
            if registry is None:
                swaps.append((owner.__dict__, name, owner.__dict__.get(name, _MISSING)))
                changes.changed()  # (as Module.__setattr__ counts: runtime/changes.py)
                owner.__dict__[name] = value
                continue
            swaps.append((registry, name, registry[name]))
            registry[name] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        changes.changed()
        for registry, name, old in reversed(swaps):
            if old is _MISSING:
                del registry[name]
            else:
                registry[name] = old


_MISSING = object()


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(parameters, buffers) of several models of one class, each name's tensors stacked
    along a new first dimension, for `vmap` over `functional_call` (model ensembling).

    A stacked parameter is a new leaf that requires grad (if the models' did), so an
    optimizer can train the ensemble through it.
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(per_model: list[dict[str, Tensor]]) -> dict[str, Tensor]:
        result = {}
        for name in per_model[0]:
            tensors = [named[name] for named in per_model]
            tensor = ops.stack(tensors)
            if any(t.requires_grad for t in tensors):
                tensor = tensor.detach().requires_grad_()
            result[name] = tensor
        return result

    return (stacked([dict(m.named_parameters()) for m in models]),
            stacked([dict(m.named_buffers()) for m in models]))


def _with_tied_names(module: Any, values: dict) -> dict:
    """Add, for a tensor registered under several names, the names the dict leaves out."""
    names_of: dict[int, list[str]] = {}
    for name, tensor in (*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(tensor), []).append(name)
    result = dict(values)
    for names in names_of.values():
        given = [name for name in names if name in values]
        if len(given) > 1 and any(values[n] is not values[given[0]] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {given}, which "
                             "are tied. Consider using tie_weights=False")
        if given:
            for name in names:
                result.setdefault(name, values[given[0]])
    return result


def _check_strict(module: Any, values: dict) -> None:
    expected = [name for name, _ in (*module.named_parameters(remove_duplicate=False),
                                     *module.named_buffers(remove_duplicate=False))]
    missing = [name for name in expected if name not in values]
    unexpected = [name for name in values if name not in expected]
    if missing or unexpected:
        parts = []
        if unexpected:
            parts.append("Unexpected key(s): {}.".format(", ".join(map(repr, unexpected))))
        if missing:
            parts.append("Missing key(s): {}.".format(", ".join(map(repr, missing))))
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(parts)))


# -- vmap -------------------------------------------------------------------------------------

def _name(func: Callable[..., Any]) -> str:
    return getattr(func, "__name__", repr(func))


def _per_leaf_dims(in_dims: Any, args: tuple, func: Callable[..., Any]) -> tuple[list, list,
                                                                                  Any]:
    """(leaves of args, their in_dim each, the args' structure): an int or None in_dims
    applies to every leaf of every argument, a tuple gives one per argument."""
    leaves, spec = _flatten(args)
    if isinstance(in_dims, int | type(None)):
        return leaves, [in_dims] * len(leaves), spec
    if not isinstance(in_dims, tuple):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is "
                         f"not compatible with the structure of `inputs`. in_dims has "
                         f"structure {len(in_dims)} but inputs has structure {len(args)}.")
    dims: list = []
    for arg, dim in zip(args, in_dims, strict=True):
        arg_leaves, _ = _flatten(arg)
        if isinstance(dim, int | type(None)):
            dims += [dim] * len(arg_leaves)
        else:
            dim_leaves, _ = _flatten(dim)
            dims += dim_leaves
    return leaves, dims, spec


def _batch_size(leaves: list, dims: list, func: Callable[..., Any], in_dims: Any) -> int:
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    sizes = []
    for leaf, dim in zip(leaves, dims, strict=True):
        if dim is None:
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{where}: Got in_dim={dim} for an input but the input is of type "
                             f"{type(leaf)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if not -leaf.dim() <= dim < leaf.dim():
            raise ValueError(f"{where}: Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {leaf.dim()} so expected in_dim to "
                             f"satisfy -{leaf.dim()} <= in_dim < {leaf.dim()}.")
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one "
                         "input must be batched over (i.e. have an in_dim that is not None).")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _state() -> bytes:
    return _random.default_generator.get_state()._data.tobytes()


def _call_per_example(func: Callable[..., Any], leaves: list, dims: list, spec: Any,
                      kwargs: dict, size: int, randomness: str) -> list:
    """func's output for each index of the mapped dimension, random draws checked."""
    same_state = _random.default_generator.get_state()
    before = _state()
    results = []
    for index in range(size):
        if randomness == "same":
            _random.default_generator.set_state(same_state)
        example = [leaf if dim is None else leaf.select(dim, index)
                   for leaf, dim in zip(leaves, dims, strict=True)]
        results.append(func(*_rebuild(spec, example), **kwargs))
        if randomness != "same" and _state() != before:
            _random.default_generator.set_state(same_state)  # a failed call draws nothing
            if randomness == "error":
                raise RuntimeError("vmap: called random operation while in randomness error "
                                   "mode. Please either use the 'same' or 'different' "
                                   "randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
            raise NotImplementedError("vmap(randomness='different') of a function that draws "
                                      "random numbers is not in gradgen: torch draws one "
                                      "batched tensor, which gradgen's per-example loop cannot "
                                      "reproduce")
    return results


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its inputs, the results stacked along
    `out_dims`. A loop over the examples (see the module docstring), not vectorised."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        leaves, dims, spec = _per_leaf_dims(in_dims, args, func)
        size = _batch_size(leaves, dims, func, in_dims)
        results = _call_per_example(func, leaves, dims, spec, kwargs, size, randomness)
        per_example = [_flatten(result) for result in results]
        out_spec = per_example[0][1]
        count = len(per_example[0][0])
        out_dim_leaves = ([out_dims] * count if isinstance(out_dims, int | type(None))
                          else _flatten(out_dims)[0])
        stacked = []
        for i in range(count):
            column = [leaves_i[i] for leaves_i, _ in per_example]
            stacked.append(_stack_output(column, out_dim_leaves[i], func))
        return _rebuild(out_spec, stacked)

    return wrapper


def _stack_output(column: list, out_dim: Any, func: Callable[..., Any]) -> Any:
    if out_dim is None:
        return column[0]
    if not isinstance(column[0], Tensor):
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, "
                         f"got type {type(column[0])}. Did you mean to set out_dims= to None "
                         "for output?")
    return ops.stack(column, dim=out_dim)


# -- issue 28, helper funcs: linearize, functionalize, debug_unwrap, rearrange, batch norm ----

def _spec_repr(spec: Any, indent: int = 0) -> str:
    """A pytree structure written as torch's TreeSpec prints it ('*' for a leaf)."""
    if spec is None:
        return "*"
    kind, keys, specs = spec
    separator = ",\n" + " " * (indent + 2)
    children = separator.join(_spec_repr(child, indent + 2) for child in specs)
    return f"TreeSpec({kind.__name__}, {keys!r}, [{children}])"


def _check_linear_tangents(tangents: list, primals: list) -> None:
    for index, (tangent, primal) in enumerate(zip(tangents, primals, strict=True)):
        for what, mine, theirs in (("shape", tangent.shape, primal.shape),
                                   ("device", tangent.device, primal.device),
                                   ("dtype", tangent.dtype, primal.dtype)):
            if mine != theirs:
                raise RuntimeError(f"tangent:{index} with {what} {mine} in flattened pytree "
                                   f"doesn't match the {what} {theirs} of the corresponding "
                                   "primal.")


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is J·tangents at the primals. torch traces
    the forward-mode computation once into a graph; gradgen runs it again on dual tensors at
    every call, which gives the same values."""
    output = func(*primals)
    primal_leaves, primal_spec = _flatten(primals)

    def jvp_fn(*tangents: Any) -> Any:
        tangent_leaves, tangent_spec = _flatten(tangents)
        if tangent_spec != primal_spec:
            raise RuntimeError(f"Expected the tangents {_spec_repr(tangent_spec)} to have the "
                               f"same argspec as the primals {_spec_repr(primal_spec)}")
        _check_linear_tangents(tangent_leaves, primal_leaves)
        with forward_ad.dual_level():
            duals = [forward_ad.make_dual(p, t) for p, t in zip(primal_leaves, tangent_leaves,
                                                                 strict=True)]
            leaves, spec = _flatten(func(*_rebuild(primal_spec, duals)))
            jvps = [_leaf_tangent(leaf) for leaf in leaves]
        return _rebuild(spec, jvps)

    return output, jvp_fn


def _leaf_tangent(leaf: Any) -> Any:
    if not isinstance(leaf, Tensor):
        return leaf
    primal, tangent = forward_ad.unpack_dual(leaf)
    return zeros_like(primal) if tangent is None else tangent


_FUNCTIONALIZE_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """`func` with its in-place and out= operations replaced by out-of-place ones, as torch's
    functionalize does for a tracer. gradgen has no aliasing-removal pass: the wrapper calls
    `func` as it is, whose eager results (values, and the mutations of its inputs, which torch
    copies back) are what torch's functionalized function gives."""
    if remove not in _FUNCTIONALIZE_REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will "
            "be removed from the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapped


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The tensor under a transform's wrappers; gradgen's transforms wrap nothing, so a
    tensor is returned as it is."""
    if not isinstance(tensor, Tensor):
        raise TypeError("is_functorch_wrapped_tensor(): incompatible function arguments. The "
                        "following argument types are supported:\n    1. (arg0: torch.Tensor) "
                        f"-> bool\n\nInvoked with: {tensor!r}")
    return tensor


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Turn off running statistics on every batch norm module of `root` (in place): their
    running_mean, running_var and num_batches_tracked become None."""
    for module in root.modules():
        if (isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm)
                and module.track_running_stats):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Tensor:
    """einops' rearrange, without einops: transpose, reshape, squeeze and unsqueeze written as
    a pattern such as "b (h w) c -> b c h w". A list or tuple of tensors is stacked first."""

    if not isinstance(tensor, Tensor):
        tensor = ops.stack(tensor)
    return _rearrange(tensor, pattern, axes_lengths)


__all__ += ["debug_unwrap", "functionalize", "linearize", "rearrange",
            "replace_all_batch_norm_modules_"]
# -- end of funcs' block ----------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
