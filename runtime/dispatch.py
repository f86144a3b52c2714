"""Overload resolution: which schema a Python call `torch.pow(x, 2)` means.

Like PyTorch's Python argument parser, overloads are tried in order, first strictly
(a Tensor parameter takes only a Tensor), then letting a Python number stand in for a
Tensor (a "wrapped number"), so `pow(x, 2)` is pow.Tensor_Scalar and `pow(2, x)` is
pow.Scalar, while `add(x, 2)` (no Scalar overload bound in Python) is add.Tensor.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any, NamedTuple

import numpy as np

from runtime import dtypes
from runtime._tensor import Tensor


class Param(NamedTuple):
    """One parameter of an overload, as resolution reads it: `dim` of type `int[1]?`."""

    name: str  # the wrapper's parameter name (`self_` for `self`)
    type: str  # the schema type, aliases dropped, SymInt read as int: `Tensor`, `int[1]?`
    has_default: bool = False
    keyword_only: bool = False


class Overload(NamedTuple):
    """One overload of a spec op: what a call that resolves to it runs."""

    wrapper: Callable  # the generated forward wrapper (generated/ops.py), on Tensors
    kernel: Callable | None  # its kernel (runtime/kernels.py), on arrays; None: a composite
    schema: str
    params: tuple[Param, ...]


def int_list(values: Sequence[Any]) -> tuple[int, ...]:
    """`x.view(2, 3)`, `x.view((2, 3))` and `x.view([2, 3])` all mean size (2, 3)."""
    if len(values) == 1 and isinstance(values[0], list | tuple):
        values = values[0]
    return tuple(int(v) for v in values)


def varargs_list(args: tuple, keyword: Any) -> tuple[int, ...]:
    """A Tensor method's int list given as varargs (`x.flip(0, 1)`, `x.flip((0, 1))`) or by
    its keyword (`x.flip(dims=(0, 1))`), not both."""
    if keyword is None:
        return int_list(args)
    if args:
        raise TypeError("an int list given both by position and by keyword")
    return int_list((keyword,))


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, complex)


# Where PyTorch's argument parser lets a Python number stand for a Tensor argument, by op:
# None for any of its Tensor arguments, else the names of those that may be one. Its own
# list takes numbers anywhere (`torch.add(2, x)`); other ops take one where torch binds a
# Scalar overload that gradgen's spec may not have (`torch.where(c, x, 0.)` is
# where.ScalarOther, `torch.eq(x, 2)` eq.Scalar: `torch.eq(2, x)` is a TypeError). Elsewhere
# (`torch.maximum(x, 1.5)`, `torch.dot(x, 2)`) a number is a TypeError, and so is a call
# whose every Tensor argument is a number (`torch.add(2, 3)`).
WRAPPED_NUMBER_OPS: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(("add", "sub", "subtract", "mul", "multiply", "div", "divide",
                     "true_divide", "floor_divide", "to", "copy", "where", "bitwise_and",
                     "bitwise_or", "bitwise_xor", "remainder", "pow", "xlogy")),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "rsub", "fmod"),
                    frozenset({"other"})),
    **dict.fromkeys(("masked_fill", "index_fill", "fill"), frozenset({"value"})),
    **dict.fromkeys(("clamp", "clamp_min", "clamp_max"), frozenset({"min", "max"})),
    "lerp": frozenset({"weight"}),
}


def _number_allowed(name: str, param: str) -> bool:
    """Whether torch's `name` takes a Python number for its Tensor argument `param`."""
    if name not in WRAPPED_NUMBER_OPS:
        return False
    allowed = WRAPPED_NUMBER_OPS[name]
    return allowed is None or param in allowed


def _only_numbers(values: list) -> bool:
    """Whether some of these Tensor arguments were given, and all of those as numbers."""
    given = [v for v in values if v is not None and v is not _DEFAULT]
    return bool(given) and not any(isinstance(v, Tensor) for v in given)


def _op_name(schema: str) -> str:
    """`add` for `add.Tensor(Tensor self, ...)` and for its in-place form `add_`."""
    return schema.split("(", 1)[0].split(".", 1)[0].removesuffix("_")


def all_tensors(values: Any) -> bool:
    """Whether a Tensor[] argument is a list or tuple of Tensors."""
    return isinstance(values, list | tuple) and all(isinstance(v, Tensor) for v in values)


def _python_name(param: Param) -> str:
    """The name PyTorch's Python binding gives a schema argument: `self` is `input`."""
    return "input" if param.name == "self_" else param.name


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


# Per overload, for each of its Tensor and Tensor[] arguments: True where a Python number
# may stand for it, False where it may not, None for a Tensor[] (checked the long way).
_NUMBER_PLANS: dict[str, tuple[bool | None, ...]] = {}


def _number_plan(overload: Overload) -> tuple[bool | None, ...]:
    plan = _NUMBER_PLANS.get(overload.schema)
    if plan is None:
        name = _op_name(overload.schema)
        plan = _NUMBER_PLANS[overload.schema] = tuple(
            _number_allowed(name, p.name) if p.type == "Tensor" else None
            for p in overload.params
            if p.type in ("Tensor", "Tensor[]") or p.type.startswith("Tensor["))
    return plan


def _numbers_where_allowed(overload: Overload, values: tuple) -> bool:
    """The common case, quickly: `x * 2`, a number where torch takes one beside a Tensor."""
    plan = _number_plan(overload)
    if len(plan) != len(values):
        return False
    some_tensor = False
    for allowed, value in zip(plan, values, strict=True):
        if isinstance(value, Tensor):
            some_tensor = True
        elif not (allowed and _is_number(value)):
            return False
    return some_tensor


def check_tensor_arguments(overload: Overload, values: tuple) -> None:
    """Raise PyTorch's TypeError if a value in a Tensor argument of `overload` is no Tensor
    (`values`: the overload's Tensor and Tensor[] arguments, optional ones left out, in
    schema order). A generated wrapper calls this only when its quick isinstance test fails.
    """
    if _numbers_where_allowed(overload, values):
        return
    name = _op_name(overload.schema)
    params = [p for p in overload.params
              if p.type in ("Tensor", "Tensor[]") or p.type.startswith("Tensor[")]
    positional = [p.name for p in overload.params if not p.keyword_only]
    some_tensor = not _only_numbers([v for p, v in zip(params, values, strict=True)
                                     if p.type == "Tensor"])
    for param, value in zip(params, values, strict=True):
        position = positional.index(param.name) + 1 if param.name in positional else None
        where = f"argument '{_python_name(param)}'" + (
            f" (position {position})" if position is not None else "")
        if param.type == "Tensor":
            if isinstance(value, Tensor) or (
                    some_tensor and _is_number(value) and _number_allowed(name, param.name)):
                continue
            raise TypeError(f"{name}(): {where} must be Tensor, not {_type_name(value)}")
        if not isinstance(value, list | tuple):
            raise TypeError(f"{name}(): {where} must be tuple of Tensors, not "
                            f"{_type_name(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, Tensor):
                raise TypeError(f"expected Tensor as element {index} in argument "
                                f"{(position or 1) - 1}, but got {_type_name(item)}")


def _matches(kind: str, value: Any, strict: bool, tensor_types: tuple = (),
             name: str = "", param: str = "") -> bool:
    tensor = tensor_types or Tensor  # in the raw layer, numpy arrays stand for Tensors
    optional = kind.endswith("?")
    if optional:
        if value is None:
            return True
        kind = kind[:-1]
    if kind == "Tensor":  # on Tensors, a number only where PyTorch takes one (above)
        return isinstance(value, tensor) or (not strict and _is_number(value) and (
            bool(tensor_types) or _number_allowed(name, param)))
    if kind.startswith("Tensor["):
        return isinstance(value, list | tuple) and all(isinstance(v, tensor) for v in value)
    if kind.startswith("Tensor?["):
        return isinstance(value, list | tuple) and all(
            v is None or isinstance(v, tensor) for v in value)
    if kind == "Scalar":
        return _is_number(value)
    if kind == "float":
        return _is_number(value) and not isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind.startswith("int["):
        if isinstance(value, int) and not isinstance(value, bool):
            return True
        return isinstance(value, list | tuple) and all(isinstance(v, int) for v in value)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "ScalarType":  # on arrays, an array's own dtype (numpy's) is one too
        return isinstance(value, dtypes.dtype) or bool(tensor_types) and isinstance(value,
                                                                                   np.dtype)
    return False


def _bind(params: Sequence[Param], args: tuple, kwargs: dict, strict: bool,
          tensor_types: tuple = (), name: str = "") -> tuple | None:
    """The arguments in schema order if they match `params`, else None."""
    positional = [p for p in params if not p.keyword_only]
    if len(args) > len(positional):
        return None
    bound: dict[str, Any] = {}
    for param, value in zip(positional, args, strict=False):
        bound[param.name] = value
    for key, value in kwargs.items():
        if key not in {p.name for p in params} or key in bound:
            return None
        bound[key] = value
    for param in params:
        if param.name not in bound:
            if not param.has_default:
                return None
            continue
        if not _matches(param.type, bound[param.name], strict, tensor_types, name, param.name):
            return None
    if not tensor_types and _only_numbers([bound.get(p.name) for p in params
                                           if p.type in ("Tensor", "Tensor?")]):
        return None  # every Tensor argument a number: no Tensor to work on
    return tuple(bound.get(p.name, _DEFAULT) for p in params)


_DEFAULT = object()


# Resolution depends only on the types of the arguments, so it is done once per
# combination of types: (name, argument types) -> (wrapper, names of the positional args).
_resolved: dict[tuple, tuple[Callable, tuple[str, ...]]] = {}


def _type_key(value: Any) -> Any:
    kind = type(value)
    if kind is list or kind is tuple:
        return kind, tuple(map(type, value))
    return kind


def call(name: str, overloads: Sequence[Overload], args: tuple, kwargs: dict,
         tensor_types: tuple = ()) -> Any:
    """Call the overload of `name` that the arguments match (its `wrapper`; with
    `tensor_types`, the function in its place: overloads made for numpy arrays)."""
    count = len(args)  # the key built without a loop for the usual one or two arguments
    types = (type(args[0]), type(args[1])) if count == 2 else \
        (type(args[0]),) if count == 1 else tuple(map(type, args))
    if list in types or tuple in types:  # a list's items decide too: int[] or Tensor[]
        types = tuple(map(_type_key, args))
    key = (name, tensor_types, types, tuple((k, _type_key(v)) for k, v in kwargs.items())) \
        if kwargs else (name, tensor_types, types)
    resolved = _resolved.get(key)
    if resolved is None:
        resolve = _resolve_with_out if "out" in kwargs else _resolve
        resolved = _resolved[key] = resolve(name, overloads, args, kwargs, tensor_types)
    function, names = resolved
    if names is None:  # the wrapper takes the arguments in the schema's order
        return function(*args, **kwargs)
    # The generated wrappers name their parameters as the schema does.
    return function(**dict(zip(names, args, strict=True)), **kwargs)


def _resolve_with_out(name: str, overloads: Sequence[Overload], args: tuple, kwargs: dict,
                      tensor_types: tuple = ()) -> tuple[Callable, tuple[str, ...]]:
    """Resolution of a call with out= (runtime/out.py): out is no schema argument, so the
    overload is chosen by the others, and it must be one whose wrapper takes out= (torch's
    overloads without an out= form refuse it); else torch's invalid-combination TypeError."""
    rest = {key: value for key, value in kwargs.items() if key != "out"}
    function, names = _resolve(name, overloads, args, rest, tensor_types)
    if "out" not in inspect.signature(function).parameters:
        _resolve(name, overloads, args, kwargs, tensor_types)  # no overload binds out: raises
    return function, names


def no_out(name: str) -> None:
    """A Tensor method given out=: torch's methods take none (`x.max(0, out=...)`), though
    the function of the same name does, through the same dispatcher."""
    raise TypeError(f"{name}() got an unexpected keyword argument 'out'")


# In the array namespace (runtime/namespaces.py), numpy arrays stand for Tensors: its
# dispatchers pass these as `call`'s tensor_types.
ARRAY_TYPES = (np.ndarray, np.generic)


def _leading_parameters(function: Callable, count: int) -> tuple[str, ...] | None:
    """The names of `function`'s first `count` positional parameters (None if it has fewer)."""
    parameters = [p.name for p in inspect.signature(function).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return tuple(parameters[:count]) if len(parameters) >= count else None


def _resolve(name: str, overloads: Sequence[Overload], args: tuple, kwargs: dict,
             tensor_types: tuple = ()) -> tuple[Callable, tuple[str, ...]]:
    for strict in (True, False):
        for overload in overloads:
            if _bind(overload.params, args, kwargs, strict, tensor_types,
                     name.removesuffix("_")) is not None:
                function = overload.wrapper
                names = tuple(p.name for p in overload.params if not p.keyword_only)[:len(args)]
                return function, None if _leading_parameters(function, len(args)) == names \
                    else names
    got = ", ".join([type(a).__name__ if not hasattr(a, "dtype") else "Tensor" for a in args]
                    + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    expected = "\n".join(f" * {overload.schema}" for overload in overloads)
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n{expected}"
    )

