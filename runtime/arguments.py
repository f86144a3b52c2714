"""Arguments, read as PyTorch's Python argument parser reads them: one module for every call.

torch binds each function and Tensor method to Python through one parser
(torch/csrc/utils/python_arg_parser.cpp): each declares its Python signature(s), and a call
binds to the first signature its arguments fit, every argument checked against its declared
type. When none fits, the parser says why in one of a few fixed forms, which users see and
search for:

    add(): argument 'other' (position 2) must be Tensor, not NoneType
    zeros(): argument 'size' (position 1) must be tuple of ints, not float
    zeros() takes 1 positional argument but 2 were given
    full() missing 1 required positional arguments: "fill_value"
    exp() got an unexpected keyword argument 'foo'
    eye() received an invalid combination of arguments - got (int, NoneType), but ...

It also takes numpy's names for four parameters besides their own (`input`: x, a, x1;
`other`: x2; `dim`: axis; `keepdim`: keepdims). Nothing here reads a signature's text: what
each function takes was decided when the code was generated. The callers:

- the generated wrappers (generated/ops.py): a quick isinstance test lets the common call
  through; anything else (a number for a Tensor, a 0-dim tensor for a Scalar, a numpy-style
  keyword, a missing argument, a wrong type) comes to `bind`, which binds what torch binds
  and raises torch's TypeError for the rest. Where a Python number may stand for a Tensor is
  a fact about each op's binding, decided at generation time (codegen/wrapped_numbers.py:
  `Param(..., number=True)`);
- the names with several overloads (`torch.pow`, `x.sum`): `call` resolves the overload,
  first strictly (a Tensor parameter takes only a Tensor), then letting a Python number or a
  0-dim tensor that needs no gradient stand for a Tensor or a number;
- the factories (runtime/factories.py, runtime/random_ops.py): `Parser(SIGNATURES["zeros"])`
  with torch's signatures, which the generator parsed (codegen/python_signatures.py) into
  the records of generated/signatures.py; `parser.parse(args, kwargs)` is the signature that
  matched and the arguments by name. It checks types only, as torch's does: each factory
  checks the values afterwards with its kernel's message;
- the hand-written functions and methods torch binds in C++ (runtime/composite.py, ...):
  `numpy_keywords(function)` gives them the numpy-style keywords.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable, Sequence
from numbers import Integral, Number
from typing import Any, NamedTuple

import numpy as np

from runtime import devices, dtypes, memory_formats, modes
from runtime._tensor import Size, Tensor
from runtime._warn import warn_at_caller
from runtime.random import Generator

# -- records: what the generator wrote about each parameter and overload ---------------------

class Param(NamedTuple):
    """One parameter, as binding reads it: `dim` of type `int[1]?`; for a factory's
    signature (generated/signatures.py), `ScalarType? dtype=None` with its default value."""

    name: str  # the wrapper's parameter name (`self_` for `self`)
    type: str  # the schema type, aliases dropped, SymInt read as int: `Tensor`, `int[1]?`
    has_default: bool = False
    keyword_only: bool = False
    number: bool = False  # a Tensor argument a Python number may stand for (`other` of mul)
    default: Any = None  # a factory signature's default (the wrappers hold their own)

    @property
    def kind(self) -> str:
        """The type without its `?`."""
        return self.type.removesuffix("?")

    @property
    def allow_none(self) -> bool:
        """Whether None is taken (`?`, or a factory signature's default of None)."""
        return self.type.endswith("?") or self.has_default and self.default is None


class Overload(NamedTuple):
    """One overload of a spec op: what a call that resolves to it runs."""

    wrapper: Callable  # the generated forward wrapper (generated/ops.py), on Tensors
    kernel: Callable | None  # its kernel (runtime/kernels.py), on arrays; None: a composite
    schema: str
    params: tuple[Param, ...]
    # torch binds more signatures for this name than the spec has (where.ScalarOther...), so
    # its error for a bad argument is "received an invalid combination of arguments"
    several: bool = False
    # torch's parser takes numbers for all its Tensor arguments at once (`torch.add(2, 3)`)
    only_numbers: bool = False


# -- what torch's messages say about a value -------------------------------------------------

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python, not in C

# The names Python would print for gradgen's own classes, as torch's C types print theirs.
_GRADGEN_NAMES = {Tensor: "Tensor", Size: "torch.Size", dtypes.dtype: "torch.dtype",
                  devices.device: "torch.device", Generator: "torch._C.Generator"}


def type_name(value: Any) -> str:
    """The type of `value` as torch's messages name it, CPython's tp_name: `int`,
    `NoneType`, `numpy.ndarray` (a C type carries its module), a Python class's own name;
    gradgen's classes as torch's (`Tensor`, `torch.Size`, `torch.dtype`)."""
    kind = type(value)
    name = _GRADGEN_NAMES.get(kind)
    if name is not None:
        return name
    if isinstance(value, dtypes.dtype):  # bfloat16 is a dtype of a class of its own
        return "torch.dtype"
    if kind.__module__ == "builtins" or kind.__flags__ & _HEAP_TYPE:
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _python_name(param: Param) -> str:
    """The name PyTorch's Python binding gives a schema argument: `self` is `input`."""
    return "input" if param.name == "self_" else param.name


def _is_number(value: Any) -> bool:
    return isinstance(value, Number)


def _is_real_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, complex | np.complexfloating)


def _stands_for_number(value: Any, integral: bool = False) -> bool:
    """PyTorch's parser takes a 0-dim tensor that does not require grad for a Scalar or a
    float (its value is read, so it would get no gradient), and an integral one for an int."""
    if not isinstance(value, Tensor) or value.dim() != 0 or value.requires_grad:
        return False
    return not integral or not value.dtype.is_floating_point and value.dtype != dtypes.bool_


def _set_method_form(error: TypeError, name: str, message: str) -> TypeError:
    """Attach to `error` how torch words it for the Tensor method `name`, which does not count
    self: `x.add(None)` is "argument 'other' (position 1)" where `torch.add(x, None)` says
    position 2. A generated method catches the error and calls `reword_for_method`."""
    error.method_form = (name, message)  # type: ignore[attr-defined]
    return error


def reword_for_method(error: TypeError, name: str) -> None:
    """Reword an argument error raised by the function a Tensor method `name` calls as torch
    words it for the method. An error from any other op (a nested call) is left alone."""
    form = getattr(error, "method_form", None)
    if form is not None and form[0] == name:
        error.args = (form[1],)


_deprecated_form_warned = False  # torch warns of a deprecated form once per process


def deprecated_form(name: str, given: tuple, form: tuple[str, ...],
                    targets: tuple[str, ...]) -> tuple:
    """A Tensor method's arguments given in torch's deprecated positional form (`form`, as
    `x.add_(alpha, other)`), returned in the order of `targets`, the method's own
    parameters; torch's warning the first time in the process."""
    global _deprecated_form_warned
    if len(given) != len(form):
        raise TypeError(f"{name}() takes {len(form) + 1} positional arguments in its "
                        f"deprecated form, but {len(given) + 1} were given")
    if not _deprecated_form_warned:
        _deprecated_form_warned = True
        scalar = form[0]
        old = ", ".join([f"Number {scalar}", *(f"Tensor {n}" for n in form[1:])])
        new = ", ".join([*(f"Tensor {n}" for n in form[1:]), f"*, Number {scalar} = 1"])
        warn_at_caller(f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider "
                       f"using one of the following signatures instead:\n\t{name}({new})",
                       UserWarning)
    values = dict(zip(form, given, strict=True))
    return tuple(values[target] for target in targets)


def _missing(name: str, names: Sequence[str]) -> TypeError:
    """torch's message for a required argument not given: it names each required one from
    there on, and says "arguments" for one and "argument" for more (its own slip)."""
    quoted = ", ".join(f'"{n}"' for n in names)
    return TypeError(f"{name}() missing {len(names)} required positional argument"
                     f"{'s' if len(names) == 1 else ''}: {quoted}")


def _positions_message(name: str, least: int, most: int, given: int) -> str:
    """torch's message for more positional arguments than a signature takes ("mul() takes 2
    positional arguments but 3 were given"; "from 1 to 2" where some may be left out)."""
    if least != most:
        return (f"{name}() takes from {least} to {most} positional arguments but {given} "
                "were given")
    return (f"{name}() takes {most} positional argument{'' if most == 1 else 's'} but "
            f"{given} were given")


def _too_many_positional(name: str, overload: Overload, values: tuple, extra: tuple,
                         kwargs: dict) -> TypeError:
    """torch's error for a call of a generated wrapper with more positional arguments than
    its schema has (they came in its `*extra`), with its method form (self not counted)."""
    params = overload.params
    positional = [v for p, v in zip(params, values, strict=True) if not p.keyword_only]
    if overload.several:  # torch binds more signatures: it lists them
        return _invalid_combination(name, [overload], (*positional, *extra), kwargs)
    most = len(positional)
    least = sum(not p.has_default for p in params)  # torch counts keyword-only ones too
    given = most + len(extra)
    return _set_method_form(TypeError(_positions_message(name, least, most, given)), name,
                            _positions_message(name, least - 1, most - 1, given - 1))


def no_arguments(name: str, given: tuple) -> None:
    """A Tensor method that takes no argument, given some: torch's message for it."""
    raise TypeError(f"TensorBase.{name}() takes no arguments ({len(given)} given)")


def _extra_keywords(name: str, names: Sequence[str], positional: int, kwargs: dict
                    ) -> TypeError:
    """torch's message for a keyword no parameter took: the first that names no parameter,
    or one that names a parameter given by position too (among the first `positional`)."""
    for key in kwargs:
        if key not in names:
            return TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        if names.index(key) < positional:
            return TypeError(f"{name}() got multiple values for argument '{key}'")
    return TypeError("invalid keyword arguments")


def _describe(args: Sequence[Any], kwargs: dict, tensor_types: tuple = ()) -> str:
    """The arguments' types as torch's "received an invalid combination" message lists them:
    each followed by ", ", the last one's cut only when there are positional ones (so torch
    writes `(min=str, )` for a method given only keywords). torch reads the keywords into a
    C++ unordered_map, whose order (with libstdc++, for a few keys) is the reverse of the
    order they were given in: `clamp(x, min=a, max=b)` lists max first."""
    def name(value: Any) -> str:
        return "Tensor" if tensor_types and isinstance(value, tensor_types) else \
            type_name(value)
    text = "".join(f"{name(a)}, " for a in args) + "".join(
        f"{k}={name(v)}, " for k, v in reversed(kwargs.items()))
    return f"({text[:-2] if args else text})"


def _invalid_combination_message(name: str, got: str, expected: str) -> str:
    return (f"{name}() received an invalid combination of arguments - got {got}, but expected "
            f"one of:\n{expected}")


# -- numpy-style keywords ----------------------------------------------------------------------

# The numpy-style names torch's parser accepts for a parameter besides its own, by the
# parameter's Python name (`self` is `input` to it, as in its messages): `x.sum(1,
# keepdims=True)`, `torch.cat(ts, axis=0)`, `torch.add(x=a, x2=b)`.
PYTHON_ALIASES = {"input": ("x", "a", "x1"), "other": ("x2",), "dim": ("axis",),
                  "keepdim": ("keepdims",)}


def _keyword_names(python_name: str) -> tuple[str, ...]:
    """The keywords a parameter is looked up by, in torch's order: its name, its aliases."""
    return (python_name, *PYTHON_ALIASES.get(python_name, ()))


# The functions and Tensor methods torch writes in Python (torch/functional.py,
# torch/_tensor.py) rather than binding them through its argument parser: they take no
# numpy-style keywords (`torch.norm(x, axis=1)` is a TypeError).
TORCH_PYTHON_FUNCTIONS = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
    "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft", "lu",
    "meshgrid", "norm", "split", "stft", "tensordot", "unique", "unique_consecutive",
    "unravel_index"})
TORCH_PYTHON_METHODS = frozenset({
    "backward", "istft", "lu", "norm", "register_hook", "register_post_accumulate_grad_hook",
    "resize", "resize_as", "split", "stft", "unflatten", "unique", "unique_consecutive"})


def numpy_keywords(function: Callable, method: bool = False) -> Callable:
    """`function` (hand-written; a Tensor method's with `method`, whose first parameter is
    self) taking torch's numpy-style keywords too: `torch.softmax(x, axis=1)`,
    `torch.matmul(x1=a, x2=b)`. A keyword stands for its parameter when that was given
    neither by position nor by its own name, as in torch's parser; otherwise it is passed
    on unchanged, and the function refuses it as torch does. Returns `function` itself when
    none of its parameters has an alias."""
    parameters = list(inspect.signature(function).parameters.values())
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY,
                                                            p.POSITIONAL_OR_KEYWORD)]
    names = {p.name for p in parameters[1 if method else 0:]
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    renames = {alias: name for name in sorted(names) for alias in PYTHON_ALIASES.get(name, ())
               if alias not in names}
    if not renames:
        return function
    heard = modes.consults(function)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        # A mode hears this function, the public one (`func is torch.softmax` holds in a
        # handler), before the keywords are renamed; the function inside, run with the
        # mode off its stack, does not hear it again.
        if heard and modes.active:
            answer = modes.dispatch(call, args, kwargs)
            if answer is not modes.PASS:
                return answer
        if kwargs and not renames.keys().isdisjoint(kwargs):
            kwargs = _renamed(kwargs, renames, positional[:len(args)])
        return function(*args, **kwargs)
    return call


def _renamed(kwargs: dict, renames: dict[str, str], given: list[str]) -> dict:
    """The keywords with each numpy-style one renamed to its parameter, when that parameter
    was given neither by position (`given`) nor by name, nor by an earlier alias."""
    result: dict[str, Any] = {}
    for key, value in kwargs.items():
        target = renames.get(key)
        if target is None or target in given or target in kwargs or target in result:
            result[key] = value
        else:
            result[target] = value
    return result


# -- the generated wrappers: the quick test, then `bind` ----------------------------------------

# What a generated wrapper's quick isinstance test lets through without a call: a Tensor;
# where the binding takes a wrapped number, a Python int or float (bool is an int) too; and
# for a Scalar or float parameter, a Python number. Anything else (np.float32, None, a
# 0-dim tensor for a Scalar) is decided by `check_arguments`.
TENSOR_OR_NUMBER = (Tensor, int, float, complex)
NUMBER = (int, float)
NUMBER_OR_NONE = (int, float, type(None))


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


def _only_numbers(values: list) -> bool:
    """Whether some of these Tensor arguments were given, and all of those as numbers."""
    given = [v for v in values if v is not None and v is not _DEFAULT]
    return bool(given) and not any(isinstance(v, Tensor) for v in given)


def all_tensors(values: Any) -> bool:
    """Whether a Tensor[] argument is a list or tuple of Tensors."""
    return isinstance(values, list | tuple) and all(isinstance(v, Tensor) for v in values)


# The number types a 0-dim tensor may stand for, and the name PyTorch's messages give each.
_NUMBER_KINDS = {"Scalar": "Number", "Scalar?": "Number", "float": "float", "float?": "float"}


def checked(param: Param) -> bool:
    """Whether a generated wrapper checks this parameter on every call (codegen/render.py's
    `_argument_guard` picks the same ones): a Tensor, a list of Tensors, or a number that a
    0-dim tensor may stand for. Optional Tensors (`Tensor? weight`) are the kernels' to read.
    """
    kind = param.type
    return kind == "Tensor" or kind.startswith("Tensor[") and not kind.endswith("?") \
        or kind in _NUMBER_KINDS


def _as_number(kind: str, value: Any) -> Any:
    """A 0-dim tensor given for a number parameter of type `kind`, as the Python number a
    wrapper and its kernel take (`.item()`; a float parameter gets a float)."""
    if not isinstance(value, Tensor):
        return value
    number = value.item()
    return float(number) if kind.startswith("float") else number


def _where(param: Param, position: int | None) -> str:
    return f"argument '{_python_name(param)}'" + (
        f" (position {position})" if position is not None else "")


def _wrong_argument(name: str, param: Param, position: int | None, expected: str,
                    value: Any) -> TypeError:
    """torch's "add(): argument 'other' (position 2) must be Tensor, not NoneType", with its
    method form."""
    got = type_name(value)
    method_position = position - 1 if position is not None and position > 1 else position
    return _set_method_form(
        TypeError(f"{name}(): {_where(param, position)} must be {expected}, not {got}"),
        name, f"{name}(): {_where(param, method_position)} must be {expected}, not {got}")


def _wrong_element(name: str, position: int | None, index: int, item: Any) -> TypeError:
    """torch's message for a Tensor list with something else in it; it counts the argument
    from 0, and a method does not count self."""
    argument = (position or 1) - 1
    message = "expected Tensor as element {} in argument {}, but got {}"
    return _set_method_form(TypeError(message.format(index, argument, type_name(item))),
                            name, message.format(index, max(argument - 1, 0), type_name(item)))


def _argument_problem(param: Param, value: Any, numbers_fit: bool) -> str | None:
    """What torch says a value of `param` must be, if it is not that; None if it fits."""
    kind = param.type
    if kind == "Tensor":
        fits = isinstance(value, Tensor) or (numbers_fit and param.number and _is_number(value))
        return None if fits else "Tensor"
    if kind in _NUMBER_KINDS:
        fits = (_is_number(value) if kind.startswith("Scalar") else _is_real_number(value)) \
            or (value is None and kind.endswith("?")) \
            or _stands_for_number(value)
        return None if fits else _NUMBER_KINDS[kind]
    return None if isinstance(value, list | tuple) else "tuple of Tensors"


def check_arguments(overload: Overload, values: tuple, inplace: bool = False) -> tuple:
    """Check the values a generated wrapper was given for the parameters it checks (see
    `checked`; in schema order), as PyTorch's argument parser does, when the wrapper's quick
    isinstance test refused one. Return them with each 0-dim tensor given for a number
    replaced by that number, or raise torch's TypeError: a value that is no Tensor where the
    schema says Tensor (a Python number only where the binding takes one beside a tensor),
    a Tensor list holding something else, a Scalar that is neither a number nor a 0-dim
    tensor without grad (`add(x, y, alpha=torch.tensor(2., requires_grad=True))`).
    """
    name = _op_name(overload, inplace)
    params = [p for p in overload.params if checked(p)]
    positional = [p.name for p in overload.params if not p.keyword_only]
    if overload.only_numbers and all(_is_number(v) for p, v in zip(params, values, strict=True)
                                     if p.type == "Tensor"):
        values = _first_as_tensor(params, values)
    # a number beside a tensor (on the parser's own list, beside anything)
    numbers_fit = overload.only_numbers or not _only_numbers(
        [v for p, v in zip(params, values, strict=True) if p.type == "Tensor"])
    for param, value in zip(params, values, strict=True):
        position = positional.index(param.name) + 1 if param.name in positional else None
        expected = _argument_problem(param, value, numbers_fit)
        if expected is not None:
            raise _several_signatures_error(name, overload, params, values) \
                if overload.several else _wrong_argument(name, param, position, expected, value)
        if param.type.startswith("Tensor["):
            _check_elements(name, value, position)
    return tuple(_as_number(p.type, v) if p.type in _NUMBER_KINDS else v
                 for p, v in zip(params, values, strict=True))


def _check_elements(name: str, values: Sequence[Any], position: int | None) -> None:
    """torch's TypeError for a Tensor list with something else in it."""
    for index, item in enumerate(values):
        if not isinstance(item, Tensor):
            raise _wrong_element(name, position, index, item)


class _Missing:
    """The default of a wrapper's parameter that a call may give by a numpy-style keyword
    instead (`torch.exp(x=a)`): no value was given under the parameter's own name."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def _is_default(value: Any, default: Any) -> bool:
    """Whether a parameter's value is its default, so that a numpy-style keyword may give
    it (`torch.stack(ts, axis=1)`: the wrapper saw dim=0). A value given equal to the
    default is taken for one not given."""
    return value is default or type(value) is type(default) and value == default


def _defaults(function: Callable) -> dict[str, Any]:
    """A wrapper's parameters' defaults, by name."""
    return {p.name: p.default for p in inspect.signature(function).parameters.values()
            if p.default is not p.empty}


def _rebind(name: str, overload: Overload, values: tuple, kwargs: dict) -> tuple:
    """The values with each one not given taken from `kwargs`, by the parameter's Python
    name (`input` for self) or one of its numpy-style aliases, as torch's parser looks a
    keyword up; torch's TypeError for a required one not given or a keyword left over."""
    if not kwargs and not any(v is MISSING for v in values):
        return values
    params, defaults = overload.params, _defaults(overload.wrapper)
    left = dict(kwargs)
    bound = list(values)
    for index, param in enumerate(params):
        value = bound[index]
        if value is not MISSING and not (
                param.has_default and _is_default(value, defaults.get(param.name))):
            continue
        key = next((k for k in _keyword_names(_python_name(param)) if k in left), None)
        if key is not None:
            bound[index] = left.pop(key)
        elif value is MISSING:
            raise _missing(name, [_python_name(p) for p in params[index:] if not p.has_default])
    if left:  # Python took each parameter's own name: any other was given by position too
        names = [_python_name(p) for p in params]
        raise _extra_keywords(name, names, len(names), left)
    return tuple(bound)


def bind(overload: Overload, values: tuple, kwargs: dict, extra: tuple = (),
         inplace: bool = False) -> tuple:
    """A generated wrapper's slow path: its parameters' values (in schema order, MISSING
    where none was given), the keywords that are none of its parameters' own names, and
    the positional arguments past its parameters (`extra`, an error). Return the values
    bound as torch's parser binds them (numpy-style keywords taken, each 0-dim tensor given
    for a number read as that number), or raise torch's TypeError."""
    name = _op_name(overload, inplace)
    if extra:
        raise _too_many_positional(name, overload, values, extra, kwargs)
    values = _rebind(name, overload, values, kwargs)
    indices = [i for i, p in enumerate(overload.params) if checked(p)]
    if not indices:
        return values
    converted = check_arguments(overload, tuple(values[i] for i in indices), inplace)
    bound = list(values)
    for index, value in zip(indices, converted, strict=True):
        bound[index] = value
    return tuple(bound)


def _op_name(overload: Overload, inplace: bool) -> str:
    """The name torch's messages give: the schema's (`copy_` keeps its underscore), and an
    in-place wrapper's (`add_`)."""
    return overload.schema.split("(", 1)[0].split(".", 1)[0] + ("_" if inplace else "")


def _first_as_tensor(params: list[Param], values: tuple) -> tuple:
    """`torch.mul(2, 3)`: torch wraps both numbers, and the result is a 0-dim tensor of their
    promoted type. Making the first a 0-dim tensor of its own type (int64, the default float
    dtype, bool), with the second a wrapped number beside it, promotes the same way."""
    first = next(i for i, p in enumerate(params) if p.type == "Tensor")
    value = values[first]
    if isinstance(value, bool | np.bool_):
        array = np.array(value)
    elif isinstance(value, Integral):
        array = np.array(value, dtype=np.int64)
    else:
        array = np.array(value, dtype=dtypes.get_default_dtype().numpy)
    return (*values[:first], Tensor._make(array, None), *values[first + 1:])


def _several_signatures_error(name: str, overload: Overload, params: list[Param],
                              values: tuple) -> TypeError:
    """torch's error for a bad argument of an op it binds with several signatures. The
    wrapper does not know which arguments came by keyword: it lists the positional ones."""
    given = [v for p, v in zip(params, values, strict=True) if not p.keyword_only]
    return _invalid_combination(name, [overload], tuple(given), {})


def _invalid_combination(name: str, overloads: Sequence[Overload], args: tuple, kwargs: dict,
                         tensor_types: tuple = ()) -> TypeError:
    """torch's "received an invalid combination of arguments", with its method form (the
    types listed without self's)."""
    expected = "\n".join(f" * {overload.schema}" for overload in overloads)

    def message(given: tuple) -> str:
        return _invalid_combination_message(name, _describe(given, kwargs, tensor_types),
                                            expected)
    return _set_method_form(TypeError(message(args)), name, message(args[1:]))


# -- the names with several overloads: resolution -------------------------------------------------

def _matches_number(kind: str, value: Any, strict: bool) -> bool | None:
    """Whether `value` fits a number parameter (None: `kind` is no number type). In the
    loose pass, a 0-dim tensor may stand for one, as in PyTorch's parser."""
    if kind in ("Scalar", "float"):
        fits = _is_number(value) if kind == "Scalar" else (
            _is_real_number(value) and not isinstance(value, bool))
        return fits or not strict and _stands_for_number(value)
    if kind == "int":
        fits = isinstance(value, int) and not isinstance(value, bool)
        return fits or not strict and _stands_for_number(value, integral=True)
    if kind.startswith("int["):
        if isinstance(value, int) and not isinstance(value, bool):
            return True  # `int[1] dim` given one int
        if not strict and _stands_for_number(value, integral=True):
            return True
        return isinstance(value, list | tuple) and all(isinstance(v, int) for v in value)
    return None


def _matches_tensor(kind: str, value: Any, strict: bool, number: bool,
                    tensor_types: tuple) -> bool | None:
    """Whether `value` fits a Tensor or Tensor list parameter (None: `kind` is neither). On
    Tensors, a number only where PyTorch's binding takes one; in the raw layer, numpy
    arrays stand for Tensors, and a number for any Tensor."""
    tensor = tensor_types or Tensor
    if kind == "Tensor":
        return isinstance(value, tensor) or (not strict and _is_number(value) and (
            bool(tensor_types) or number))
    if kind.startswith("Tensor["):
        return isinstance(value, list | tuple) and all(isinstance(v, tensor) for v in value)
    if kind.startswith("Tensor?["):
        return isinstance(value, list | tuple) and all(
            v is None or isinstance(v, tensor) for v in value)
    return None


def _matches(param: Param, value: Any, strict: bool, tensor_types: tuple = ()) -> bool:
    kind = param.type
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    for fits in (_matches_tensor(kind, value, strict, param.number, tensor_types),
                 _matches_number(kind, value, strict or bool(tensor_types))):
        if fits is not None:
            return fits
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "ScalarType":  # on arrays, an array's own dtype (numpy's) is one too
        return isinstance(value, dtypes.dtype) or bool(tensor_types) and isinstance(value,
                                                                                   np.dtype)
    if kind == "Generator":
        return isinstance(value, Generator)
    return False


def _keyword_target(params: Sequence[Param], key: str) -> str | None:
    """The parameter a keyword names: by its own name, or by one of its numpy aliases."""
    for param in params:
        if param.name == key:
            return key
    for param in params:
        if key in _keyword_names(_python_name(param)):
            return param.name
    return None


def _renames(params: Sequence[Param], kwargs: dict) -> tuple[tuple[str, str], ...] | None:
    """(keyword, parameter) for each keyword given by an alias; None if there is none."""
    pairs = tuple((key, target) for key in kwargs
                  if (target := _keyword_target(params, key)) is not None and target != key)
    return pairs or None


def _bind(params: Sequence[Param], args: tuple, kwargs: dict, strict: bool,
          tensor_types: tuple = (), only_numbers: bool = False) -> tuple | None:
    """The arguments in schema order if they match `params`, else None (`only_numbers`: a
    call with numbers for all the Tensor arguments is one, as for torch's parser's list)."""
    positional = [p for p in params if not p.keyword_only]
    if len(args) > len(positional):
        return None
    bound: dict[str, Any] = {}
    for param, value in zip(positional, args, strict=False):
        bound[param.name] = value
    for key, value in kwargs.items():
        target = _keyword_target(params, key)
        if target is None or target in bound:
            return None
        bound[target] = value
    for param in params:
        if param.name not in bound:
            if not param.has_default:
                return None
            continue
        if not _matches(param, bound[param.name], strict, tensor_types):
            return None
    if not tensor_types and not only_numbers and _only_numbers(
            [bound.get(p.name) for p in params if p.type in ("Tensor", "Tensor?")]):
        return None  # every Tensor argument a number: no Tensor to work on
    return tuple(bound.get(p.name, _DEFAULT) for p in params)


def _number_kind(kind: str) -> bool:
    """Whether a parameter of this type takes a number that a 0-dim tensor may stand for."""
    kind = kind.removesuffix("?")
    return kind in ("Scalar", "float", "int") or kind.startswith("int[")


def _tensor_for_number(overloads: Sequence[Overload], args: tuple, kwargs: dict) -> bool:
    """Whether a Tensor was given where some overload takes a number: the loose pass then
    read the tensor's dim and requires_grad, not only its type, so what it resolved to holds
    for these values only (a 2-dim tensor of the same type would resolve otherwise)."""
    for overload in overloads:
        positional = [p for p in overload.params if not p.keyword_only]
        given = [*zip(positional, args, strict=False),
                 *((p, v) for k, v in kwargs.items() for p in overload.params
                   if _keyword_target(overload.params, k) == p.name)]
        if any(isinstance(v, Tensor) and _number_kind(p.type) for p, v in given):
            return True
    return False


class _ByValue(NamedTuple):
    """A resolution that a 0-dim tensor standing for a number decided: called with each such
    tensor replaced by its number (the wrapper takes a number there), and never cached."""

    wrapper: Callable
    params: tuple[Param, ...]
    bound: tuple
    extra: tuple = ()  # (keyword, value) pairs that are no schema argument: out=

    def __call__(self) -> Any:
        return self.wrapper(**{
            p.name: _as_number(p.type, v) if _number_kind(p.type) else v
            for p, v in zip(self.params, self.bound, strict=True) if v is not _DEFAULT},
            **dict(self.extra))


_DEFAULT = object()


# Resolution depends only on the types of the arguments, so it is done once per
# combination of types: (name, argument types) -> (wrapper, names of the positional args,
# the keywords given by a numpy-style alias with the parameter each names).
_resolved: dict[tuple, tuple[Callable, tuple[str, ...] | None, tuple | None]] = {}


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
        resolved = resolve(name, overloads, args, kwargs, tensor_types)
        if type(resolved) is _ByValue:  # decided by a tensor's values, not its type
            return resolved()
        _resolved[key] = resolved
    function, names, renames = resolved
    if renames is not None:  # numpy-style keywords, given the parameters' own names
        kwargs = dict(kwargs)
        for key, target in renames:
            kwargs[target] = kwargs.pop(key)
    if names is None:  # the wrapper takes the arguments in the schema's order
        return function(*args, **kwargs)
    # The generated wrappers name their parameters as the schema does.
    return function(**dict(zip(names, args, strict=True)), **kwargs)


def _resolve_with_out(name: str, overloads: Sequence[Overload], args: tuple, kwargs: dict,
                      tensor_types: tuple = ()) -> tuple:
    """Resolution of a call with out= (runtime/out.py): out is no schema argument, so the
    overload is chosen by the others, and it must be one whose wrapper takes out= (torch's
    overloads without an out= form refuse it); else torch's invalid-combination TypeError."""
    rest = {key: value for key, value in kwargs.items() if key != "out"}
    resolved = _resolve(name, overloads, args, rest, tensor_types)
    by_value = type(resolved) is _ByValue
    function = resolved.wrapper if by_value else resolved[0]
    if "out" not in inspect.signature(function).parameters:
        _resolve(name, overloads, args, kwargs, tensor_types)  # no overload binds out: raises
    return resolved._replace(extra=(("out", kwargs["out"]),)) if by_value else resolved


def method_keywords(name: str, kwargs: dict) -> dict:
    """The keywords a Tensor method passes on to its function (numpy-style ones, which the
    function's `bind` takes): any but out=, which torch's methods do not take."""
    if "out" in kwargs:
        no_out(name)
    return kwargs


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
             tensor_types: tuple = ()) -> tuple[Callable, tuple[str, ...] | None, tuple | None] \
        | _ByValue:
    """The overload the arguments bind to, or torch's TypeError."""
    for strict in (True, False):
        for overload in overloads:
            bound = _bind(overload.params, args, kwargs, strict, tensor_types,
                          overload.only_numbers)
            if bound is None:
                continue
            function = overload.wrapper
            if not strict and not tensor_types and _tensor_for_number(overloads, args, kwargs):
                return _ByValue(function, overload.params, bound)
            names = tuple(p.name for p in overload.params if not p.keyword_only)[:len(args)]
            return (function, None if _leading_parameters(function, len(args)) == names
                    else names, _renames(overload.params, kwargs))
    error = _invalid_combination(name, overloads, args, kwargs, tensor_types)
    # torch's parser, when no signature binds, finds those that take as many arguments as
    # were given: if just one does, its own error is the one raised (`torch.sum(x, 0, True,
    # None, 4)`: "sum() takes from 2 to 3 positional arguments but 5 were given"); for a
    # method, self is not counted and out= is no parameter.
    function = _one_plausible(name, overloads, len(args), len(kwargs), method=False)
    method = _one_plausible(name, overloads, len(args) - 1, len(kwargs), method=True)
    if function is not None:
        error.args = (function,)
    if method is not None:
        _set_method_form(error, name, method)
    raise error


def _one_plausible(name: str, overloads: Sequence[Overload], positional: int, keywords: int,
                   method: bool) -> str | None:
    """torch's message for too many positional arguments, when exactly one overload takes as
    many arguments as were given but fewer by position; None otherwise (or when torch binds
    signatures the spec does not have)."""
    plausible = []
    for overload in overloads:
        if overload.several:
            return None
        params = overload.params[1:] if method else overload.params
        takes_out = not method and "out" in inspect.signature(overload.wrapper).parameters
        least = sum(not p.has_default for p in params)
        if least <= positional + keywords <= len(params) + takes_out:
            plausible.append((least, sum(not p.keyword_only for p in params)))
    if len(plausible) != 1 or positional <= plausible[0][1]:
        return None
    least, most = plausible[0]
    return _positions_message(name, least, most, positional)


# -- the factories: torch's signatures, tried in order ---------------------------------------------

_MISSING_KEYWORD: Any = object()  # a keyword not given

# What torch's messages call each parameter type of a factory (FunctionParameter::type_name).
_TYPE_NAMES = {
    "int[]": "tuple of ints", "SymInt": "int", "int": "int", "Scalar": "Number",
    "float": "float", "Tensor": "Tensor", "ScalarType": "torch.dtype",
    "Layout": "torch.layout", "MemoryFormat": "torch.memory_format", "Device": "torch.device",
    "bool": "bool", "Generator": "torch.Generator", "object": "object",
}


def _is_long(value: Any) -> bool:
    """A Python int that is not a bool, or a numpy integer (THPUtils_checkLong)."""
    kind = type(value)
    return kind is int or (isinstance(value, int | np.integer) and kind is not bool)


def is_index(value: Any) -> bool:
    """Anything but a bool that converts to an index: an int, a numpy integer, a 0-dim
    integer array or tensor (THPUtils_checkIndex)."""
    if isinstance(value, bool | np.bool_):
        return False
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _is_symint(value: Any) -> bool:
    """An int, a one-element integer (or bool) tensor, or anything with __index__."""
    if _is_long(value):
        return True
    if isinstance(value, Tensor):
        return value._data.size == 1 and value._data.dtype.kind in "iub"
    return is_index(value)


def _is_any_number(value: Any) -> bool:
    """A Python number (bool, int, float, complex) or a numpy scalar number."""
    return isinstance(value, int | float | complex) or (
        isinstance(value, np.generic) and value.dtype.kind in "biufcV")


def _is_int_list(value: Any) -> tuple[bool, int]:
    """(fits, index of the item that does not): a tuple or list whose first item is an int;
    torch checks only the first here, and each later one as it unpacks them."""
    if not isinstance(value, tuple | list):
        return False, -1
    if not value or _is_symint(value[0]):
        return True, -1
    return False, 0


def _check(kind: str, value: Any) -> bool:
    """Whether `value` fits a factory's parameter of type `kind` (FunctionParameter::check)."""
    if kind == "SymInt":
        return _is_symint(value)
    if kind == "int":  # int64_t: an int, or a 0-dim integer tensor that needs no gradient
        return _stands_for_number(value, integral=True) if isinstance(value, Tensor) \
            else _is_long(value)
    if kind in ("Scalar", "float"):
        if isinstance(value, Tensor):
            return _stands_for_number(value)
        return _is_any_number(value) and (
            kind == "Scalar" or not isinstance(value, complex | np.complexfloating))
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "ScalarType":
        return isinstance(value, dtypes.dtype) or value in (int, float, bool, complex)
    if kind == "Device":
        return _is_long(value) or isinstance(value, str | devices.device)
    if kind == "bool":
        return type(value) is bool
    if kind == "Generator":
        return isinstance(value, Generator)
    if kind == "MemoryFormat":  # (taken, and the copy made row-major: a factory's result
        return isinstance(value, memory_formats.memory_format)  # has no source to preserve)
    return kind == "object"  # torch.tensor's data: anything, looked at later; Layout: gradgen
    # has no such objects, only None is taken


def _fits(param: Param, value: Any) -> tuple[bool, int]:
    """(whether `value` fits, index of the item of an int list that does not, or -1)."""
    if param.kind == "int[]":
        return _is_int_list(value)
    return _check(param.kind, value), -1


def _keyword(kwargs: dict, name: str) -> Any:
    """A keyword argument by the parameter's name or, as torch's parser looks, by one of its
    numpy-style aliases (`zeros_like(x=t)`); _MISSING_KEYWORD if none was given."""
    if not kwargs:
        return _MISSING_KEYWORD
    for key in _keyword_names(name):
        value = kwargs.get(key, _MISSING_KEYWORD)
        if value is not _MISSING_KEYWORD:
            return value
    return _MISSING_KEYWORD


def _describe_param(param: Param) -> str:
    """A parameter as torch's "expected one of" lists print it: `int n`, `bool
    requires_grad = False`."""
    text = f"{_TYPE_NAMES[param.kind]} {param.name}"
    return f"{text} = {param.default!r}" if param.has_default else text


class _NoMatch(Exception):
    """The arguments do not fit a signature; `error()` is torch's TypeError saying why."""

    def __init__(self, error: Callable[[], TypeError]) -> None:
        super().__init__()
        self.error = error


class Signature:
    """One Python signature of a factory, as torch declares it:
    `eye(SymInt n, SymInt m, *, Tensor? out=None, ScalarType? dtype=None, ...)`; the
    generator writes each as a name and Param records (generated/signatures.py)."""

    def __init__(self, name: str, params: tuple[Param, ...]) -> None:
        self.name = name
        self.params = params
        self.names = [p.name for p in params]
        self.min_args = sum(not p.has_default for p in params)
        self.max_args = len(params)
        self.max_pos_args = sum(not p.keyword_only for p in params)

    def __str__(self) -> str:
        parts, starred = [], False
        for p in self.params:
            if p.keyword_only and not starred:
                parts.append("*")
                starred = True
            parts.append(_describe_param(p))
        return f"({', '.join(parts)})"

    def parse(self, args: tuple, kwargs: dict, raise_error: bool) -> dict | None:
        """The arguments by name if they fit (defaults filled in), else None; with
        `raise_error`, the TypeError that says why instead (FunctionSignature::parse)."""
        try:
            return self._bind(args, kwargs)
        except _NoMatch as failure:
            if raise_error:
                raise failure.error() from None
            return None

    def _bind(self, args: tuple, kwargs: dict) -> dict:
        nargs = len(args)
        # One positional int list takes varargs too: zeros(2, 3) is zeros((2, 3)).
        varargs = (self.max_pos_args == 1 and self.params[0].kind == "int[]"
                   and _is_int_list(args)[0])
        if nargs > self.max_pos_args and not varargs:
            raise _NoMatch(lambda: self._extra_args(nargs))
        bound, arg_pos, used_kwargs = {}, 0, 0
        for param in self.params:
            is_kwd = arg_pos >= nargs
            if not is_kwd and param.keyword_only:  # more positional arguments than varargs took
                raise _NoMatch(lambda: self._extra_args(nargs))
            value = _keyword(kwargs, param.name) if is_kwd else args[arg_pos]
            if value is _MISSING_KEYWORD and param.has_default or \
                    value is None and param.allow_none:
                bound[param.name] = param.default
            elif value is _MISSING_KEYWORD:
                raise _NoMatch(lambda param=param: _missing(self.name, self._required(param)))
            elif varargs and arg_pos == 0 and not is_kwd and not _fits(param, value)[0]:
                bound[param.name] = args  # every positional argument
                arg_pos = nargs
                continue
            else:
                bound[param.name] = self._checked(param, value, is_kwd, arg_pos)
            arg_pos += not is_kwd
            used_kwargs += is_kwd and value is not _MISSING_KEYWORD
        if used_kwargs < len(kwargs):
            raise _NoMatch(lambda: _extra_keywords(self.name, self.names, nargs, kwargs))
        return bound

    def _required(self, param: Param) -> list[str]:
        return [p.name for p in self.params[self.params.index(param):] if not p.has_default]

    def _checked(self, param: Param, value: Any, is_kwd: bool, arg_pos: int) -> Any:
        fits, failed = _fits(param, value)
        if not fits:
            raise _NoMatch(lambda: self._wrong_type(param, value, is_kwd, arg_pos, failed))
        return value

    def _extra_args(self, nargs: int) -> TypeError:
        if self.min_args != self.max_pos_args:
            return TypeError(f"{self.name}() takes from {self.min_args} to {self.max_pos_args} "
                             f"positional arguments but {nargs} were given")
        plural = "" if self.max_pos_args == 1 else "s"
        return TypeError(f"{self.name}() takes {self.max_pos_args} positional argument{plural} "
                         f"but {nargs} {'was' if nargs == 1 else 'were'} given")

    def _wrong_type(self, param: Param, value: Any, is_kwd: bool, arg_pos: int,
                    failed: int) -> TypeError:
        expected = _TYPE_NAMES[param.kind]
        if is_kwd:
            return TypeError(f"{self.name}(): argument '{param.name}' must be {expected}, "
                             f"not {type_name(value)}")
        where = f"{self.name}(): argument '{param.name}' (position {arg_pos + 1})"
        if failed >= 0:
            return TypeError(f"{where} must be {expected}, but found element of type "
                             f"{type_name(value[failed])} at pos {failed}")
        return TypeError(f"{where} must be {expected}, not {type_name(value)}")


class Parser:
    """A factory's signatures, tried in order (PythonArgParser)."""

    def __init__(self, signatures: tuple[Signature, ...]) -> None:
        self.signatures = signatures
        self.name = signatures[0].name

    def parse(self, args: tuple, kwargs: dict) -> tuple[int, dict]:
        """(index of the signature the call fits, its arguments by name), or torch's
        TypeError. `kwargs` holds only the keywords the caller gave."""
        if len(self.signatures) == 1:
            return 0, self.signatures[0].parse(args, kwargs, True)
        for index, signature in enumerate(self.signatures):
            bound = signature.parse(args, kwargs, False)
            if bound is not None:
                return index, bound
        count = len(args) + len(kwargs)
        plausible = [s for s in self.signatures if s.min_args <= count <= s.max_args]
        if len(plausible) == 1:  # the one signature that could take this many arguments
            plausible[0].parse(args, kwargs, True)
        options = "".join(f" * {s}\n" for s in self.signatures)
        raise TypeError(_invalid_combination_message(self.name, _describe(args, kwargs),
                                                     options))
