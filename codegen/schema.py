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

import ast
import difflib
import keyword
import re
from dataclasses import dataclass

# Base types and the suffixes they may carry.
BASE_TYPES = ("Tensor", "int", "SymInt", "float", "bool", "Scalar", "ScalarType", "str",
              "Generator")
# Matched with fullmatch, in ASCII: a `$` would let a final newline through, and `\d` or
# `\w` would take digits and letters of any script into generated code.
_TYPE_RE = re.compile(
    r"(?P<base>[A-Za-z]+)(\((?P<alias>[a-z]!?)\))?(?P<item_optional>\?(?=\[))?"
    r"(?P<list>\[(?P<size>\d*)\])?(?P<optional>\?)?", re.ASCII
)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPNAME_RE = re.compile(r"(?P<base>[A-Za-z_][A-Za-z0-9_]*)(\.(?P<overload>[A-Za-z0-9_]+))?")
_INT_RE = re.compile(r"-?\d+", re.ASCII)
_NUMBER_RE = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", re.ASCII)
# Names torch uses for `int reduction` defaults (at::Reduction), and their values.
REDUCTIONS = {"Mean": 1, "Sum": 2}


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


def varargs_list(schema: FunctionSchema) -> Argument | None:
    """`x.view(2, 3)`: as a Tensor method, an op whose only other positional argument is an
    int list takes it as separate arguments too."""
    rest = [a for a in schema.arguments[1:] if not a.kwarg_only]
    if len(rest) == 1 and rest[0].type.is_list and rest[0].type.base in ("int", "SymInt") \
            and rest[0].default is None:
        return rest[0]
    return None


def _check_brackets(text: str) -> None:
    """Raise at the first bracket that is never closed or closes nothing."""
    pairs = {")": "(", "]": "["}
    stack: list[tuple[str, int]] = []
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([":
            stack.append((char, i))
        elif char in ")]":
            if not stack:
                raise SchemaError(f"unbalanced parentheses: {char!r} closes nothing", i)
            if stack[-1][0] != pairs[char]:
                opener, column = stack[-1]
                raise SchemaError(f"unbalanced parentheses: {opener!r} is never closed", column)
            stack.pop()
    if stack:
        char, i = stack[-1]
        raise SchemaError(f"unbalanced parentheses: {char!r} is never closed", i)


def _split_top_level(text: str, start: int) -> list[tuple[str, int]]:
    """Split on commas outside brackets and quotes; each stripped piece comes with its column."""
    pieces: list[tuple[str, int]] = []
    depth = 0
    begin = 0
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append((text[begin:i], start + begin))
            begin = i + 1
    pieces.append((text[begin:], start + begin))
    return [(piece.strip(), column + len(piece) - len(piece.lstrip())) for piece, column in pieces]


def parse_type(text: str, column: int = 0) -> Type:
    match = _TYPE_RE.fullmatch(text)
    if not match:
        raise SchemaError(f"malformed type {text!r}", column)
    base = match["base"]
    if base not in BASE_TYPES:
        close = difflib.get_close_matches(base, BASE_TYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SchemaError(
            f"unknown type {base!r}{hint}; expected one of {', '.join(BASE_TYPES)}", column
        )
    size = match["size"]
    if base == "Generator" and (match["list"] is not None or match["optional"] is None):
        raise SchemaError("a Generator argument is `Generator? generator=None`: optional, "
                          "one, the default generator when None", column)
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
    if not _NAME_RE.fullmatch(name):
        raise SchemaError(f"malformed {what} name {name!r}", column)
    if keyword.iskeyword(name):
        raise SchemaError(f"{what} name {name!r} is a Python keyword", column)


def _default_error(type_: Type, default: str) -> str | None:
    """Why `default` is not a default of `type_`, or None when it is one.

    Defaults are pasted into generated Python, so only literals pass: numbers, True/False,
    None for an optional, a quoted string for str, a list of numbers (or one number) for
    an int list, and the reduction names Mean and Sum for an int.
    """
    if default == "None":
        return None if type_.optional else f"None is a default only for an optional type " \
            f"({type_}?)"
    if type_.is_list:
        return _list_default_error(type_, default)
    if type_.base == "bool":
        return None if default in ("True", "False") else f"expected True or False, " \
            f"not {default!r}"
    if type_.base == "str":
        return _str_default_error(default)
    if type_.base in ("int", "SymInt") and (default in REDUCTIONS or _INT_RE.fullmatch(default)):
        return None
    if type_.base in ("float", "Scalar") and _NUMBER_RE.fullmatch(default):
        return None
    return f"{default!r} is not a literal of type {type_}"


def _list_default_error(type_: Type, default: str) -> str | None:
    """A list's default: a list of numbers (`[]`, `[0, 1]`), or one number for an int list."""
    items = default[1:-1].split(",") if default[:1] == "[" and default[-1:] == "]" else None
    if items is None and _NUMBER_RE.fullmatch(default) and type_.base in ("int", "SymInt"):
        return None
    if items is not None and (default == "[]" or all(
            _NUMBER_RE.fullmatch(item.strip()) for item in items)):
        return None
    return f"expected a list of numbers like [0, 1], not {default!r}"


def _str_default_error(default: str) -> str | None:
    """A str's default: a quoted string literal."""
    try:
        value = ast.literal_eval(default)
    except (ValueError, SyntaxError, RecursionError, MemoryError):
        value = None
    return None if isinstance(value, str) else f"expected a quoted string, not {default!r}"


def _parse_argument(text: str, column: int, kwarg_only: bool) -> tuple[Argument, int]:
    """The argument and the column of its name."""
    decl, eq, default = text.partition("=")
    type_text, _, name = decl.strip().rpartition(" ")
    if not type_text:
        raise SchemaError(f"argument {text!r} needs a type and a name", column)
    type_ = parse_type(type_text.strip(), column)
    name_column = column + len(type_text) + 1
    _check_name(name, name_column, "argument")
    if name == "result":
        raise SchemaError("'result' is reserved for outputs; rename the argument", name_column)
    if eq:
        default_column = column + len(decl) + 1
        if not default.strip():
            raise SchemaError(f"argument {name!r} has an empty default", default_column)
        default = default.strip()
        problem = _default_error(type_, default)
        if problem is not None:
            raise SchemaError(f"bad default for {name!r}: {problem}", default_column)
    return Argument(name, type_, default if eq else None, kwarg_only), name_column


def _parse_return(text: str, column: int) -> tuple[Return, int]:
    """The return and the column of its name (of its type when it has none)."""
    type_text, _, name = text.strip().partition(" ")
    type_ = parse_type(type_text, column)
    name_column = column
    if name:
        name_column = column + len(type_text) + 1
        _check_name(name.strip(), name_column, "return")
    return Return(name.strip() or None, type_), name_column


def _parse_arguments(body: str, column: int) -> list[Argument]:
    arguments: list[Argument] = []
    seen: set[str] = set()
    kwarg_only = False
    star_column = None
    required_after_default = False
    for piece, piece_column in _split_top_level(body, column) if body.strip() else ():
        if piece == "*":
            if kwarg_only:
                raise SchemaError("'*' appears twice", piece_column)
            kwarg_only, star_column = True, piece_column
            continue
        if not piece:
            raise SchemaError("empty argument", piece_column)
        arg, name_column = _parse_argument(piece, piece_column, kwarg_only)
        if arg.name in seen:
            raise SchemaError(f"argument {arg.name!r} is declared twice", name_column)
        seen.add(arg.name)
        if not arg.kwarg_only:
            if arg.default is None and required_after_default:
                raise SchemaError(
                    f"argument {arg.name!r} without a default follows one with a default",
                    name_column,
                )
            required_after_default |= arg.default is not None
        arguments.append(arg)
    if kwarg_only and not any(a.kwarg_only for a in arguments):
        raise SchemaError("'*' must be followed by keyword-only arguments", star_column or 0)
    return arguments


def _parse_returns(text: str, column: int) -> tuple[list[Return], bool]:
    """The returns and whether they were written as a tuple."""
    returns_text = text.strip()
    column += len(text) - len(text.lstrip())
    if not returns_text:
        raise SchemaError("missing return type", column)
    tuple_return = returns_text.startswith("(")
    if not tuple_return:
        return [_parse_return(returns_text, column)[0]], False
    if not returns_text.endswith(")"):
        close = returns_text.rfind(")")
        extra = close + 1 + len(returns_text[close + 1 :]) - len(returns_text[close + 1 :].lstrip())
        raise SchemaError("unexpected text after the returns", column + extra)
    inner = returns_text[1:-1]
    if not inner.strip():
        raise SchemaError("an op must return at least one value", column)
    parsed = [_parse_return(piece, piece_column)
              for piece, piece_column in _split_top_level(inner, column + 1)]
    seen: set[str] = set()
    for ret, name_column in parsed:
        if ret.name in seen:
            raise SchemaError(f"two returns are named {ret.name!r}", name_column)
        if ret.name:
            seen.add(ret.name)
    named = [ret.name is not None for ret, _ in parsed]
    if any(named) and not all(named):
        first_unnamed = next(c for (ret, c) in parsed if ret.name is None)
        raise SchemaError("name all returns or none", first_unnamed)
    return [ret for ret, _ in parsed], True


def parse_schema(text: str) -> FunctionSchema:
    """Parse one schema; raises SchemaError with the column of the problem."""
    _check_brackets(text)
    open_paren = text.find("(")
    if open_paren < 0:
        raise SchemaError("expected 'name(arguments) -> returns'", len(text))
    close_paren = _matching_paren(text, open_paren)
    name_text = text[:open_paren]
    name_match = _OPNAME_RE.fullmatch(name_text.strip())
    if not name_match:
        raise SchemaError(f"malformed operator name {name_text.strip()!r}", 0)
    _check_name(name_match["base"], len(name_text) - len(name_text.lstrip()), "operator")
    after = text[close_paren + 1 :]
    arrow_column = close_paren + 1 + len(after) - len(after.lstrip())
    if not after.lstrip().startswith("->"):
        raise SchemaError("missing '->' before the returns", arrow_column)

    arguments = _parse_arguments(text[open_paren + 1 : close_paren], open_paren + 1)
    returns, tuple_return = _parse_returns(text[arrow_column + 2 :], arrow_column + 2)
    names = {a.name for a in arguments}
    for ret in returns:
        if ret.name in names:
            column = text.rfind(f" {ret.name}") + 1
            raise SchemaError(f"return {ret.name!r} has the name of an argument", column)

    return FunctionSchema(
        base=name_match["base"],
        overload=name_match["overload"] or "",
        arguments=tuple(arguments),
        returns=tuple(returns),
        tuple_return=tuple_return,
    )


def _matching_paren(text: str, open_paren: int) -> int:
    """The index of the `)` that closes the `(` at `open_paren` (brackets are balanced)."""
    depth = 0
    quote = None
    for i in range(open_paren, len(text)):
        char = text[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
    raise AssertionError("unreachable: brackets were checked")
