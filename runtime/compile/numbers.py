"""The Python numbers a traced step meets: the ones it reads afresh at every call (the learning
rate, the step count) and the floats `.item()` gives it.

While an optimizer is traced, its float learning rate and a `.item()` of its state are
`Number`s: floats that know the expression reading them (`lr0`), so arithmetic on them writes
the same arithmetic into the kernel's argument (`-lr0 / (1 - 0.9 ** item0)`), the same float
operations at every call. A comparison gives a `Condition`; an `if` on it, or an int made of a
Number, stops the trace, while runtime.optim.optimizer's `select` writes the choice into the
step (as torch's capturable optimizers use torch.where). Any other `.item()` is an `Item`, a
float whose every use stops the trace: the step may only return it (listen.py's `returned`)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.compile.emit import BINARY, COMPARE, call, number, var


def data_reason(what: str) -> str:
    return f"the step reads a tensor's values in Python ({what}): its control flow may " \
        "depend on the data"


def _stop(reason: str) -> None:
    """Stop the trace listening on this thread, if it records."""
    from runtime.compile.listen import current  # (a cycle: listen imports this module)

    tracer = current()
    if tracer is not None and tracer.recording:
        tracer.stop(reason)


def _branch(what: str) -> None:
    """A Number used where later calls could not follow it."""
    _stop("the step's Python uses a number it reads afresh at each call (the learning rate, "
          f"the step count): {what}")


class _Afresh:
    """A value with the expression (`tree`) computing it from the step's variables."""

    tree: ast.expr
    # numpy's arrays and scalars leave their operations with one to it.
    __array_ufunc__ = None

    def __new__(cls, value: Any, tree: ast.expr) -> Any:
        made = super().__new__(cls, value)
        made.tree = tree
        return made

    def __hash__(self) -> int:
        _branch("hashed")
        return super().__hash__()


class Number(_Afresh, float):
    """A float read afresh at every call."""

    def __repr__(self) -> str:
        return float.__repr__(self)

    def __bool__(self) -> bool:
        _branch("tested for truth")
        return float(self) != 0

    def __pos__(self) -> Number:
        return self

    def __neg__(self) -> Number:
        return Number(-float(self), ast.UnaryOp(ast.USub(), self.tree))

    def __abs__(self) -> Number:
        return Number(abs(float(self)), call(var("abs"), [self.tree]))


class Condition(_Afresh, int):
    """A comparison of Numbers: the bool it is (an int: bool cannot be subclassed), with its
    expression."""

    def __repr__(self) -> str:
        return repr(bool(self))

    def __bool__(self) -> bool:
        _branch("an `if` on a comparison of it (runtime.optim.optimizer.select makes such a "
                "choice at each call)")
        return int(self) != 0

    def __index__(self) -> int:
        _branch("used as an index")
        return int(self)

    def choose(self, if_true: Any, if_false: Any) -> Any:
        """`if_true if self else if_false`, chosen at each call: a conditional Number, or
        `where` on a 0-d flag for tensors."""
        sources = _source(if_true), _source(if_false)
        if None not in sources:
            value = if_true if int(self) else if_false
            return Number(float(value), ast.IfExp(self.tree, *sources))
        import runtime  # (a cycle: the runtime imports the compiler)

        flag = runtime.zeros((), dtype=runtime.bool)
        flag.fill_(self)
        return runtime.where(flag, if_true, if_false)


READ_AFRESH = (Number, Condition)


def plain(values: tuple | dict) -> tuple | dict:
    """`values` (arguments, or keyword arguments) with each Number as the float it is, each
    Condition as the bool."""
    if type(values) is dict:
        return {key: _plain(value) for key, value in values.items()}
    return tuple(map(_plain, values))


def _plain(value: Any) -> Any:
    kind = type(value)
    return float(value) if kind is Number else int(value) != 0 if kind is Condition else value


def _source(value: Any) -> ast.expr | None:
    if type(value) in READ_AFRESH:
        return value.tree
    if type(value) in (int, float) and math.isfinite(value):
        return number(value)
    return None


def _float(value: Any) -> Any:
    return float(value) if type(value) is Number else value


def _arithmetic(name: str, symbol: ast.operator) -> Callable:
    """Number's `name` (`__add__`, `__rsub__`): with a number (read afresh or not), the same
    operation written into the step; with a numpy value, float's result, and the trace stops;
    with anything else, float's answer (NotImplemented: the other operand's turn)."""
    method = getattr(float, name)
    reflected = name.startswith("__r")
    plain_operator = getattr(operator, name.replace("__r", "__"))

    def arithmetic(self: Number, other: Any) -> Any:
        source = _source(other)
        if source is None and isinstance(other, np.ndarray | np.generic):
            # numpy operands leave the operation to the Number; a numpy scalar would be a constant.
            _branch(f"arithmetic with {type(other).__name__}")
            return plain_operator(other, float(self)) if reflected else \
                plain_operator(float(self), other)
        result = method(float(self), _float(other))
        if source is None or type(result) is not float:
            return result
        left, right = (source, self.tree) if reflected else (self.tree, source)
        return Number(result, ast.BinOp(left, symbol, right))

    arithmetic.__name__ = name
    return arithmetic


def _comparison(name: str, symbol: ast.cmpop) -> Callable:
    """A comparison with a number: a Condition (see the module's docstring)."""
    method = getattr(float, name)

    def compare(self: Number, other: Any) -> Any:
        source = _source(other)
        result = method(float(self), _float(other))
        if source is None or type(result) is not bool:
            _branch(f"{name.strip('_')}()")
            return result
        return Condition(result, ast.Compare(self.tree, [symbol], [source]))

    compare.__name__ = name
    return compare


def _conversion(name: str, stop: Callable[[str], None] = _branch) -> Callable:
    """A use that leaves the float behind (an int made of it, a Number's rounding): the trace
    stops, with `stop(what)`."""
    method = getattr(float, name)

    def convert(self: float, *other: Any) -> Any:
        stop(f"{name.strip('_')}()")
        return method(float.__float__(self), *map(_float, other))

    convert.__name__ = name
    return convert


for _name in ("add", "sub", "mul", "truediv", "pow"):
    setattr(Number, f"__{_name}__", _arithmetic(f"__{_name}__", BINARY[_name]()))
    setattr(Number, f"__r{_name}__", _arithmetic(f"__r{_name}__", BINARY[_name]()))
for _name, _symbol in COMPARE.items():
    setattr(Number, f"__{_name}__", _comparison(f"__{_name}__", _symbol()))
for _name in ("int", "floor", "ceil", "trunc", "round", "floordiv", "rfloordiv", "mod", "rmod",
              "divmod", "rdivmod"):
    setattr(Number, f"__{_name}__", _conversion(f"__{_name}__"))


class Item(float):
    """A float `.item()` gave the step: every use of it stops the trace (as a float, the
    result), for the generated step could not repeat it."""


for _name, _value in vars(float).items():
    if callable(_value) and _name not in ("__new__", "__getattribute__", "__getnewargs__",
                                          "__getformat__", "fromhex"):
        setattr(Item, _name, _conversion(_name, lambda _: _stop(data_reason("item()"))))
