"""The Python signatures of the factories and random factories, parsed when code is generated.

`torch.zeros`, `torch.eye`, `torch.randint`, ... are not ops of the spec: PyTorch binds each
with one or more Python signatures (torch/csrc/utils/python_arg_parser.cpp reads them), such
as `eye(SymInt n, SymInt m, *, Tensor? out=None, ScalarType? dtype=None, ...)`. They are
written here as that text, checked and parsed by `parse_signature`, and emitted into
generated/signatures.py as records (runtime/arguments.py's Param and Signature), so that no
signature text is read while a program runs.

A signature is `name(param, ..., *, param, ...)`, each param `Type[?] name[=default]`: `?`
lets None through; a default (None, False, a number) lets the argument be left out.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

# The parameter types torch's parser knows that these signatures use (FunctionParameter).
TYPES = frozenset(("int[]", "SymInt", "int", "Scalar", "float", "Tensor", "ScalarType", "Layout",
                   "MemoryFormat", "Device", "bool", "Generator", "object"))
_PARAM_RE = re.compile(r"(?P<kind>[A-Za-z]+(\[\])?)(?P<none>\?)? (?P<name>[a-z_][a-z_0-9]*)"
                       r"(=(?P<default>[^,]+))?", re.ASCII)
_NAME_RE = re.compile(r"[a-z_][a-z_0-9]*", re.ASCII)


class SignatureError(ValueError):
    """A signature text that does not follow the grammar above."""


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # the type without its `?`
    allow_none: bool  # `?`, or a default of None
    optional: bool  # it has a default
    default: Any  # the default's value (None when there is none)
    keyword_only: bool
    question: bool = False  # written with `?`

    @property
    def type(self) -> str:
        """The type as runtime/arguments.py's Param holds it: with its `?`."""
        return self.kind + ("?" if self.question else "")

    @property
    def flags(self) -> str:
        """The Param's other fields, as keywords, those that are not their defaults."""
        text = ", has_default=True" if self.optional else ""
        text += ", keyword_only=True" if self.keyword_only else ""
        if self.default is not None:
            text += f", default={self.default!r}"
        return text


@dataclass(frozen=True)
class Signature:
    name: str
    params: tuple[Parameter, ...]


def _parameter(text: str, keyword_only: bool, signature: str) -> Parameter:
    match = _PARAM_RE.fullmatch(text)
    if match is None:
        raise SignatureError(f"{signature!r}: malformed parameter {text!r}")
    if match["kind"] not in TYPES:
        raise SignatureError(f"{signature!r}: unknown type {match['kind']!r}")
    default_text = match["default"]
    default = None
    if default_text is not None:
        try:
            default = ast.literal_eval(default_text)
        except (ValueError, SyntaxError) as error:
            raise SignatureError(f"{signature!r}: bad default {default_text!r}") from error
        if not isinstance(default, bool | int | float | type(None)):
            raise SignatureError(f"{signature!r}: bad default {default_text!r}")
    return Parameter(match["name"], match["kind"], bool(match["none"]) or default_text == "None",
                     default_text is not None, default, keyword_only, bool(match["none"]))


def parse_signature(text: str) -> Signature:
    """One Python signature, checked; raises SignatureError."""
    name, paren, rest = text.partition("(")
    if not paren or not rest.endswith(")") or not _NAME_RE.fullmatch(name):
        raise SignatureError(f"{text!r}: expected 'name(parameters)'")
    params: list[Parameter] = []
    keyword_only = False
    for item in rest[:-1].split(", ") if rest[:-1] else ():
        if item == "*" and not keyword_only:
            keyword_only = True
        else:
            params.append(_parameter(item, keyword_only, text))
    if len({p.name for p in params}) != len(params):
        raise SignatureError(f"{text!r}: a parameter is named twice")
    return Signature(name, tuple(params))


# -- torch's signatures --------------------------------------------------------------------------

# The keyword-only arguments every factory takes, in torch's order.
_OPTIONS = ("Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=False, bool? requires_grad=False")
_RANGE_OPTIONS = _OPTIONS.replace("Tensor? out=None, ", "")
_LIKE_OPTIONS = ("MemoryFormat? memory_format=None, ScalarType? dtype=None, Layout? layout=None, "
                 "Device? device=None, bool? pin_memory=False, bool? requires_grad=False")


def _spaced(name: str, base: str = "") -> tuple[str, ...]:
    """linspace's or logspace's four signatures: start and end each a Tensor or a Number."""
    return tuple(f"{name}({first} start, {second} end, int steps{base}, *, {_OPTIONS})"
                 for first, second in (("Tensor", "Tensor"), ("Scalar", "Tensor"),
                                       ("Tensor", "Scalar"), ("Scalar", "Scalar")))


def _with_generator(*signatures: str) -> tuple[str, ...]:
    """A random factory's signatures: each twice, first with a `generator`, then without."""
    return tuple(text.replace("*, ", f"*, {extra}", 1) for text in signatures
                 for extra in ("Generator? generator, ", ""))


# Function name -> its signatures, in the order torch's parser tries them.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "tensor": ("tensor(object data, *, ScalarType? dtype=None, Device? device=None, "
               "bool? pin_memory=False, bool? requires_grad=False)",),
    "as_tensor": ("as_tensor(object data, *, ScalarType? dtype=None, Device? device=None)",),
    "zeros": (f"zeros(int[] size, *, {_OPTIONS})",),
    "ones": (f"ones(int[] size, *, {_OPTIONS})",),
    "empty": (f"empty(int[] size, *, MemoryFormat? memory_format=None, {_OPTIONS})",),
    "full": (f"full(int[] size, Scalar fill_value, *, {_OPTIONS})",),
    "eye": (f"eye(SymInt n, *, {_OPTIONS})", f"eye(SymInt n, SymInt m, *, {_OPTIONS})"),
    "arange": (f"arange(Scalar end, *, {_OPTIONS})",
               f"arange(Scalar start, Scalar end, *, {_RANGE_OPTIONS})",
               f"arange(Scalar start, Scalar end, Scalar step=1, *, {_OPTIONS})"),
    "linspace": _spaced("linspace"),
    "logspace": _spaced("logspace", ", float base=10.0"),
    "zeros_like": (f"zeros_like(Tensor input, *, {_LIKE_OPTIONS})",),
    "ones_like": (f"ones_like(Tensor input, *, {_LIKE_OPTIONS})",),
    "empty_like": (f"empty_like(Tensor input, *, {_LIKE_OPTIONS})",),
    "full_like": (f"full_like(Tensor input, Scalar fill_value, *, {_LIKE_OPTIONS})",),
    "new_zeros": (f"new_zeros(int[] size, *, {_OPTIONS})",),
    "new_ones": (f"new_ones(int[] size, *, {_OPTIONS})",),
    "new_empty": (f"new_empty(int[] size, *, {_OPTIONS})",),
    "new_full": (f"new_full(int[] size, Scalar fill_value, *, {_OPTIONS})",),
    "rand": _with_generator(f"rand(int[] size, *, {_OPTIONS})"),
    "randn": _with_generator(f"randn(int[] size, *, {_OPTIONS})"),
    "randint": _with_generator(f"randint(SymInt high, int[] size, *, {_OPTIONS})",
                               f"randint(SymInt low, SymInt high, int[] size, *, {_OPTIONS})"),
    "randperm": _with_generator(f"randperm(SymInt n, *, {_OPTIONS})"),
    "rand_like": _with_generator(f"rand_like(Tensor input, *, {_LIKE_OPTIONS})"),
    "randn_like": _with_generator(f"randn_like(Tensor input, *, {_LIKE_OPTIONS})"),
    "randint_like": _with_generator(
        f"randint_like(Tensor input, SymInt low, SymInt high, *, {_LIKE_OPTIONS})",
        f"randint_like(Tensor input, Tensor high, *, {_LIKE_OPTIONS})",
        f"randint_like(Tensor input, SymInt high, *, {_LIKE_OPTIONS})"),
    # torch.normal: its three tensor overloads are the spec's ops (normal.Tensor_Tensor, ...)
    "normal": ("normal(Tensor mean, Tensor std, *, Generator? generator=None, Tensor? out=None)",
               "normal(Tensor mean, float std=1, *, Generator? generator=None, "
               "Tensor? out=None)",
               "normal(float mean, Tensor std, *, Generator? generator=None, Tensor? out=None)",
               f"normal(float mean, float std, int[] size, *, Generator? generator=None, "
               f"{_OPTIONS})"),
}


def signatures_context() -> list[tuple[str, list[Signature]]]:
    """(function name, its parsed signatures) for generated/signatures.py; each signature
    is checked to carry the function's name."""
    table = []
    for function, texts in SIGNATURES.items():
        parsed = [parse_signature(text) for text in texts]
        for signature in parsed:
            if signature.name != function:
                raise SignatureError(f"{function}: a signature is named {signature.name!r}")
        table.append((function, parsed))
    return table
