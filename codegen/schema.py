"""Function schemas: `base[.overload](args) -> returns`, parsed into frozen dataclasses.

The grammar is the subset of torchgen's `FunctionSchema` that gradgen uses:

    schema   := name "(" [arg ("," arg)*] ")" "->" returns
    name     := base ["." overload]
    arg      := "*" | type NAME ["=" default]
    returns  := ret | "(" [ret ("," ret)*] ")"
    ret      := type [NAME]
    type     := BASE ["(" ALIAS ")"] ["?"] ["[" [SIZE] "]"] ["?"]

`Tensor?[]` is a list whose items may be None (index's `indices`); `Tensor(a)[]` a list
of views of the argument annotated `(a)` (split's results).

`str(parse_schema(text))` gives the text back in canonical spacing.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

# Base types and the suffixes they may carry.
BASE_TYPES = ("Tensor", "int", "SymInt", "float", "bool", "Scalar", "ScalarType", "str")
_TYPE_RE = re.compile(
    r"^(?P<base>[A-Za-z]+)(\((?P<alias>[a-z]!?)\))?(?P<item_optional>\?(?=\[))?"
    r"(?P<list>\[(?P<size>\d*)\])?(?P<optional>\?)?$"
)
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OPNAME_RE = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(\.(?P<overload>[A-Za-z0-9_]+))?$")


class SchemaError(ValueError):
    """A schema string that does not follow the grammar; `column` is 0-based within it."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class Type:
    base: str
    is_list: bool = False
    list_size: int | None = None
    optional: bool = False
    # Alias annotation: `Tensor(a)` on an argument and a return marks a view of it,
    # `Tensor(a!)` an argument written in place.
    alias: str | None = None
    # `Tensor?[]`: the items of the list may be None.
    optional_items: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        return self.base == "Tensor" and self.is_list

    @property
    def is_tensor_like(self) -> bool:
        return self.base == "Tensor"

    def __str__(self) -> str:
        text = self.base if self.alias is None else f"{self.base}({self.alias})"
        if self.optional_items:
            text += "?"
        if self.is_list:
            text += f"[{self.list_size if self.list_size is not None else ''}]"
        if self.optional:
            text += "?"
        return text


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None = None
    kwarg_only: bool = False

    def __str__(self) -> str:
        text = f"{self.type} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type

    def __str__(self) -> str:
        return str(self.type) if self.name is None else f"{self.type} {self.name}"


@dataclass(frozen=True)
class FunctionSchema:
    base: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    # True when the returns were written in parentheses, e.g. `-> (Tensor, Tensor)`.
    tuple_return: bool = False

    @property
    def name(self) -> str:
        return f"{self.base}.{self.overload}" if self.overload else self.base

    @property
    def kernel_name(self) -> str:
        """The Python identifier of this overload: `pow_Tensor_Scalar`, `mm`."""
        return f"{self.base}_{self.overload}" if self.overload else self.base

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    def return_names(self) -> list[str]:
        """Names a formula uses for the outputs: named returns, else result / result0..N."""
        if len(self.returns) == 1 and self.returns[0].name is None:
            return ["result"]
        return [r.name or f"result{i}" for i, r in enumerate(self.returns)]

    def __str__(self) -> str:
        parts: list[str] = []
        star = False
        for arg in self.arguments:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(arg))
        if self.tuple_return:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        else:
            rets = str(self.returns[0])
        return f"{self.name}({', '.join(parts)}) -> {rets}"


def _split_top_level(text: str, start: int) -> list[tuple[str, int]]:
    """Split on commas outside brackets; each piece comes with its column in the schema."""
    pieces: list[tuple[str, int]] = []
    depth = 0
    begin = 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append((text[begin:i], start + begin))
            begin = i + 1
    pieces.append((text[begin:], start + begin))
    result = []
    for piece, column in pieces:
        stripped = piece.strip()
        result.append((stripped, column + len(piece) - len(piece.lstrip())))
    return result


def parse_type(text: str, column: int = 0) -> Type:
    match = _TYPE_RE.match(text)
    if not match:
        raise SchemaError(f"malformed type {text!r}", column)
    base = match["base"]
    if base not in BASE_TYPES:
        raise SchemaError(
            f"unknown type {base!r}; expected one of {', '.join(BASE_TYPES)}", column
        )
    size = match["size"]
    if match["alias"] and base != "Tensor":
        raise SchemaError(f"only Tensor types take an alias annotation, not {base!r}", column)
    return Type(
        base=base,
        is_list=match["list"] is not None,
        list_size=int(size) if size else None,
        optional=match["optional"] is not None,
        alias=match["alias"],
        optional_items=match["item_optional"] is not None,
    )


def _check_name(name: str, column: int, what: str) -> None:
    if not _NAME_RE.match(name):
        raise SchemaError(f"malformed {what} name {name!r}", column)
    if keyword.iskeyword(name):
        raise SchemaError(f"{what} name {name!r} is a Python keyword", column)


def _parse_argument(text: str, column: int, kwarg_only: bool) -> Argument:
    decl, eq, default = text.partition("=")
    decl = decl.strip()
    type_text, _, name = decl.rpartition(" ")
    if not type_text:
        raise SchemaError(f"argument {text!r} needs a type and a name", column)
    type_ = parse_type(type_text.strip(), column)
    _check_name(name, column + len(type_text) + 1, "argument")
    if name == "result":
        raise SchemaError("'result' is reserved for outputs; rename the argument", column)
    if eq and not default.strip():
        raise SchemaError(f"argument {name!r} has an empty default", column)
    return Argument(name, type_, default.strip() if eq else None, kwarg_only)


def _parse_return(text: str, column: int) -> Return:
    type_text, _, name = text.strip().partition(" ")
    type_ = parse_type(type_text, column)
    if name:
        _check_name(name.strip(), column + len(type_text) + 1, "return")
    return Return(name.strip() or None, type_)


def parse_schema(text: str) -> FunctionSchema:
    """Parse one schema; raises SchemaError with the column of the problem."""
    head, arrow, tail = text.partition("->")
    if not arrow:
        raise SchemaError("missing '->' before the returns", len(text))
    open_paren = head.find("(")
    close_paren = head.rfind(")")
    if open_paren < 0 or close_paren < open_paren or head[close_paren + 1 :].strip():
        raise SchemaError("expected 'name(arguments) -> returns'", max(open_paren, 0))
    name_match = _OPNAME_RE.match(head[:open_paren].strip())
    if not name_match:
        raise SchemaError(f"malformed operator name {head[:open_paren].strip()!r}", 0)

    arguments: list[Argument] = []
    kwarg_only = False
    body = head[open_paren + 1 : close_paren]
    if body.strip():
        for piece, column in _split_top_level(body, open_paren + 1):
            if piece == "*":
                if kwarg_only:
                    raise SchemaError("'*' appears twice", column)
                kwarg_only = True
                continue
            if not piece:
                raise SchemaError("empty argument", column)
            arguments.append(_parse_argument(piece, column, kwarg_only))
    seen: set[str] = set()
    for arg in arguments:
        if arg.name in seen:
            raise SchemaError(f"argument {arg.name!r} is declared twice")
        seen.add(arg.name)
    positional = [a for a in arguments if not a.kwarg_only]
    for earlier, later in zip(positional, positional[1:], strict=False):
        if earlier.default is not None and later.default is None:
            raise SchemaError(
                f"argument {later.name!r} without a default follows one with a default"
            )

    returns_text = tail.strip()
    returns_column = len(head) + 2 + (len(tail) - len(tail.lstrip()))
    tuple_return = returns_text.startswith("(")
    if tuple_return:
        if not returns_text.endswith(")"):
            raise SchemaError("unbalanced parentheses in the returns", returns_column)
        inner = returns_text[1:-1]
        returns = [
            _parse_return(piece, column)
            for piece, column in _split_top_level(inner, returns_column + 1)
            if piece or inner.strip()
        ]
    else:
        if not returns_text:
            raise SchemaError("missing return type", returns_column)
        returns = [_parse_return(returns_text, returns_column)]
    if not returns:
        raise SchemaError("an op must return at least one value", returns_column)
    names = [r.name for r in returns if r.name]
    if len(names) != len(set(names)):
        raise SchemaError("two returns share a name", returns_column)
    if names and len(names) != len(returns):
        raise SchemaError("name all returns or none", returns_column)
    clash = set(names) & seen
    if clash:
        raise SchemaError(
            f"return {sorted(clash)[0]!r} has the name of an argument", returns_column
        )

    return FunctionSchema(
        base=name_match["base"],
        overload=name_match["overload"] or "",
        arguments=tuple(arguments),
        returns=tuple(returns),
        tuple_return=tuple_return,
    )
