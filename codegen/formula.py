"""Formulas: parse with `ast`, check every construct and name, infer what must be saved,
and rewrite into the Python that a generated `apply()` runs.

A formula is a Python expression over a closed scope (see `Scope`). It becomes executed
code, so anything outside that scope is rejected here, before a line is emitted.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from codegen.model import SavedAttribute, SavedKind
from codegen.schema import FunctionSchema, varargs_list

# Size-only attributes of a tensor, and the saved attribute each becomes (torchgen's names).
SIZE_ATTRIBUTES = {"shape": (SavedKind.SIZES, "sym_sizes"), "ndim": (SavedKind.DIM, "dim"),
                   "dtype": (SavedKind.SCALAR_TYPE, "scalar_type")}
SIZE_METHODS = {"numel": (SavedKind.NUMEL, "sym_numel"),
                "stride": (SavedKind.STRIDES, "sym_strides")}
# Saved-attribute kinds that keep a size (render.SIZE_SAVERS names the runtime function that
# computes each); `to_args_sizes(xs)` gives list_sizes, `TensorGeometry(x)` geometry.
SIZE_KINDS = frozenset(
    [kind for kind, _ in SIZE_ATTRIBUTES.values()] + [kind for kind, _ in SIZE_METHODS.values()]
    + [SavedKind.LIST_SIZES, SavedKind.GEOMETRY]
)
# Calls a backward formula makes of size-only functions, and the method that saves what
# each reads instead of its tensor argument(s).
SIZE_ONLY_CALLS = {"to_args_sizes": "_list_sizes", "TensorGeometry": "_geometry"}
# The name of the op namespace in generated code: a formula's calls of spec ops and Tensor
# methods run as `ops.NAME(...)`, whatever the values are (Tensors, numpy arrays, torch).
OPS = "ops"
# How deep a formula's syntax tree may be: checks and rewrites walk it recursively.
MAX_DEPTH = 100
# Builtins a formula may call: pure, and needed for index and size arithmetic.
ALLOWED_BUILTINS = frozenset({"len", "int", "float", "tuple", "list", "range", "min", "max", "abs"})
# Tensor methods that the runtime defines by hand (not in the spec) and formulas may call.
CORE_TENSOR_METHODS = frozenset({"size", "dim", "numel", "detach", "sum_to_size", "expand_as",
                                 "reshape", "view_as", "contiguous", "type_as", "to",
                                 "is_contiguous", "conj"})

_FORBIDDEN = {
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.NamedExpr: "an assignment",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Starred: "unpacking with *",
    ast.JoinedStr: "an f-string",
    ast.Dict: "a dict",
    ast.Set: "a set",
}
_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Attribute, ast.Subscript, ast.Slice, ast.Name, ast.Constant, ast.Tuple, ast.List,
    ast.keyword, ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 1) - 1, getattr(node, "col_offset", 0)


def _attr_position(node: ast.Attribute) -> tuple[int, int]:
    """Where the attribute's name starts: `x.data` points at `data`, not at `x`."""
    return node.end_lineno - 1, node.end_col_offset - len(node.attr.encode())


class FormulaError(Exception):
    """A problem in a formula; `offset` is ast's (line, UTF-8 byte column), 0-based, within
    the stripped formula."""

    def __init__(self, message: str, offset: tuple[int, int] = (0, 0)) -> None:
        super().__init__(message)
        self.offset = offset

    def index(self, text: str) -> int:
        """The offset as a character index into `text`, the formula as the spec wrote it."""
        stripped = text.strip()
        line, column = self.offset
        lines = stripped.splitlines(keepends=True) or [""]
        line = min(line, len(lines) - 1)
        before = sum(len(x) for x in lines[:line])
        column = len(lines[line].encode()[:column].decode(errors="ignore"))
        return len(text) - len(text.lstrip()) + before + column


@dataclass(frozen=True)
class Signature:
    """What a call may pass to one function: `f(a, b=1, *, c)` is positional ("a", "b")
    with 1 required and keyword-only ("c",) with ("c",) required."""

    name: str  # how an error names it: `pow.Tensor_Scalar(Tensor self, Scalar exponent)`
    positional: tuple[str, ...]
    required: int
    keyword_only: tuple[str, ...] = ()
    required_keywords: tuple[str, ...] = ()
    varargs: bool = False  # `*args`, or a Tensor method's `x.view(2, 3)`
    varkw: bool = False

    @classmethod
    def of_schema(cls, schema: FunctionSchema, method: bool = False) -> Signature:
        """The call a spec op takes (as a Tensor method, without self): Python names of the
        arguments, as generated wrappers have them."""
        arguments = schema.arguments[1:] if method else schema.arguments
        positional = [a for a in arguments if not a.kwarg_only]
        keyword_only = [a for a in arguments if a.kwarg_only]
        return cls(
            str(schema), tuple(local_name(a.name) for a in positional),
            sum(a.default is None for a in positional),
            tuple(local_name(a.name) for a in keyword_only),
            tuple(local_name(a.name) for a in keyword_only if a.default is None),
            varargs=method and varargs_list(schema) is not None,
        )

    @classmethod
    def of_function(cls, function: ast.FunctionDef) -> Signature:
        """The call a Python function takes, read from its definition. A helper's first
        parameter `ops`, the namespace it runs on, is passed by generated code, not by a
        formula: it is not part of the call a formula writes."""
        args = function.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        if positional[:1] == [OPS]:
            positional = positional[1:]
            args = ast.arguments(posonlyargs=[], args=args.args[1:], vararg=args.vararg,
                                 kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults,
                                 kwarg=args.kwarg, defaults=args.defaults)
        return cls(
            f"{function.name}({ast.unparse(args)})", tuple(positional),
            len(positional) - len(args.defaults),
            tuple(a.arg for a in args.kwonlyargs),
            tuple(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                  if d is None),
            args.vararg is not None, args.kwarg is not None,
        )

    def mismatch(self, positional: int, keywords: list[str]) -> str | None:
        """Why a call with `positional` arguments and these keywords does not fit, or None."""
        if positional > len(self.positional) and not self.varargs:
            return f"takes at most {len(self.positional)} positional argument(s), not {positional}"
        given = set(self.positional[:positional]) | set(keywords)
        for name in keywords:
            if name in self.positional[:positional]:
                return f"gets {name!r} twice"
            if name not in self.positional and name not in self.keyword_only and not self.varkw:
                return f"has no argument {name!r}"
        missing = [n for n in self.positional[: self.required] + self.required_keywords
                   if n not in given]
        if missing and not (self.varargs and positional):
            return f"needs {', '.join(map(repr, missing))}"
        return None


@dataclass(frozen=True)
class Scope:
    """Everything a formula may name, and how the functions it names may be called."""

    schema: FunctionSchema
    ops: frozenset[str]  # functions declared in the spec
    methods: frozenset[str]  # Tensor methods declared in the spec
    helpers: frozenset[str]  # functions in runtime/manual.py
    forward: bool = False  # forward-mode formulas see `x_p`, `x_t` instead of `grad`
    fused: bool = False  # `grad_input_mask` is visible
    tangents: frozenset[str] = frozenset()  # forward mode: the inputs that have an `x_t`
    # A `forward:` formula, the op's result over its arguments: no grad, no outputs, and
    # `x.shape` read from x itself (nothing is saved).
    kernel: bool = False
    # The overloads of each op, Tensor method and helper; a name without an entry (a
    # Tensor method the runtime writes by hand) is called unchecked.
    signatures: Mapping[str, tuple[Signature, ...]] = field(default_factory=dict)
    method_signatures: Mapping[str, tuple[Signature, ...]] = field(default_factory=dict)


def local_name(name: str) -> str:
    """The Python local that holds a spec name: `self` cannot be one, so it is `self_`."""
    return "self_" if name == "self" else name


@dataclass
class _Analysis:
    saved: list[SavedAttribute] = field(default_factory=list)
    grad_indices: set[int] = field(default_factory=set)
    grad_names: set[str] = field(default_factory=set)  # `grad` and `grad_<name>` read
    # Where `grad` and `grads[i]` / `grad_<name>` first appear, to point at a mix of both.
    grad_at: tuple[int, int] | None = None
    grads_at: tuple[int, int] | None = None

    def save(self, kind: SavedKind, source: str, name: str) -> None:
        attr = SavedAttribute(kind, source, name)
        if attr not in self.saved:
            self.saved.append(attr)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.result = _Analysis()
        schema = scope.schema
        self.arguments = {a.name: a for a in schema.arguments}
        self.outputs = schema.return_names()
        self.named_grads = {
            f"grad_{name}": i for i, name in enumerate(self.outputs) if name != "result"
        }

    # -- errors ---------------------------------------------------------------------------
    def fail(self, node: ast.AST, message: str) -> FormulaError:
        return FormulaError(message, _position(node))

    def known_names(self) -> list[str]:
        names = set(self.arguments) | set(self.outputs) | self.scope.ops | self.scope.helpers
        if self.scope.kernel:
            names = (names - set(self.outputs)) | set(self.arguments)
        elif self.scope.forward:
            names |= {f"{a}_p" for a, arg in self.arguments.items() if arg.type.is_tensor_like}
            names |= {f"{a}_t" for a in self.scope.tangents}
        else:
            names |= {"grad", "grads", *self.named_grads}
        if self.scope.fused:
            names.add("grad_input_mask")
        return sorted(names | ALLOWED_BUILTINS)

    def unknown(self, node: ast.AST, name: str, what: str = "name") -> FormulaError:
        close = difflib.get_close_matches(name, self.known_names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return self.fail(node, f"unknown {what} {name!r}{hint}")

    # -- the walk ---------------------------------------------------------------------------
    def generic_visit(self, node: ast.AST) -> ast.AST:
        for kind, what in _FORBIDDEN.items():
            if isinstance(node, kind):
                raise self.fail(node, f"{what} is not allowed in a formula")
        if not isinstance(node, _ALLOWED_NODES):
            raise self.fail(node, f"{type(node).__name__} is not allowed in a formula")
        return super().generic_visit(node)

    def _size_source(self, node: ast.AST) -> str | None:
        """The tensor argument or output that `node` names, if it names one."""
        if not isinstance(node, ast.Name):
            return None
        arg = self.arguments.get(node.id)
        if arg is not None and arg.type.is_tensor:
            return node.id
        if node.id in self.outputs:
            return node.id
        return None

    def _size_only(
        self, receiver: ast.AST, kinds: dict, attr: str, node: ast.AST
    ) -> ast.AST | None:
        """`x.shape` (or `x.numel()`) of a tensor argument or output: save the size, not x."""
        source = self._size_source(receiver)
        if source is None or self.scope.forward or self.scope.kernel:
            return None
        kind, suffix = kinds[attr]
        name = f"{local_name(source).rstrip('_')}_{suffix}"
        self.result.save(kind, source, name)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def _check_attribute(self, node: ast.Attribute, allowed: bool) -> None:
        if node.attr.startswith("__"):
            raise FormulaError(
                f"dunder attribute {node.attr!r} is not allowed in a formula", _attr_position(node)
            )
        if not allowed:
            raise FormulaError(
                f"attribute {node.attr!r} is not allowed; a formula may read only "
                ".shape, .ndim, .dtype and .numel() of a tensor, or call a Tensor method",
                _attr_position(node),
            )
        value = node.value
        if isinstance(value, ast.Name) and value.id in self.arguments \
                and self.arguments[value.id].type.is_tensor_list:
            raise self.fail(
                value, f"{value.id!r} is a Tensor[]: it has no .{node.attr}; "
                f"use to_args_sizes({value.id}) for its shapes",
            )

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        # An expression receiver is checked first, so that the leftmost mistake is reported;
        # a plain name waits: `x.shape` must not save x.
        if not isinstance(node.value, ast.Name):
            node.value = self.visit(node.value)
        self._check_attribute(node, node.attr in SIZE_ATTRIBUTES)
        size = self._size_only(node.value, SIZE_ATTRIBUTES, node.attr, node)
        if size is not None:
            return size
        if isinstance(node.value, ast.Name):
            node.value = self.visit(node.value)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._method_call(node, func)
        if not isinstance(func, ast.Name):
            self.visit(func)  # `(lambda g: g)(grad)` is reported as a lambda
            raise self.fail(node, "only named functions and Tensor methods can be called")
        name = func.id
        self._check_callee(node, name)
        if name in SIZE_ONLY_CALLS and not (self.scope.forward or self.scope.kernel):
            return getattr(self, SIZE_ONLY_CALLS[name])(node)
        if name in self.scope.ops:
            module = "ops"
        elif name in self.scope.helpers:
            module = "manual"
        elif name in ALLOWED_BUILTINS:
            if name in self.arguments or name in self.outputs:
                raise self.fail(node, f"{name!r} names an argument of this op here, so the "
                                f"builtin {name}() cannot be called in its formulas")
            return self.generic_visit(node)
        else:
            raise self.unknown(node, name, "function")
        self._check_call(node, name, self.scope.signatures.get(name, ()))
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.func = ast.copy_location(
            ast.Attribute(ast.Name(module, ast.Load()), name, ast.Load()), func
        )
        if module == "manual":  # a helper runs on the namespace it is given
            node.args.insert(0, ast.Name(OPS, ast.Load()))
        return node

    def _check_callee(self, node: ast.Call, name: str) -> None:
        """The names a formula may not call: dunders, not_implemented inside a formula, and
        (in a forward: formula) the op itself."""
        if name.startswith("__"):
            raise self.fail(node, f"dunder name {name!r} is not allowed in a formula")
        if name == "not_implemented":
            raise self.fail(node, "not_implemented(...) must be the whole formula")
        if self.scope.kernel and name == self.scope.schema.base:
            raise self.fail(node, f"a forward: formula cannot call {name}() itself: write it "
                            "with other ops of the spec")

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> ast.AST:
        if not isinstance(func.value, ast.Name):
            func.value = self.visit(func.value)
        self._check_attribute(func, allowed=True)
        if func.attr in SIZE_METHODS:
            if node.args or node.keywords:
                raise self.fail(node, f".{func.attr}() takes no arguments in a formula")
            size = self._size_only(func.value, SIZE_METHODS, func.attr, node)
            if size is not None:
                return size
        elif func.attr not in self.scope.methods and func.attr not in CORE_TENSOR_METHODS:
            close = difflib.get_close_matches(
                func.attr, sorted(self.scope.methods | CORE_TENSOR_METHODS), n=1
            )
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise FormulaError(f"unknown Tensor method {func.attr!r}{hint}", _attr_position(func))
        elif self.scope.kernel and func.attr == self.scope.schema.base:
            raise FormulaError(f"a forward: formula cannot call .{func.attr}() itself: write "
                               "it with other ops of the spec", _attr_position(func))
        else:
            self._check_call(node, f".{func.attr}",
                             self.scope.method_signatures.get(func.attr, ()))
        receiver = self.visit(func.value) if isinstance(func.value, ast.Name) else func.value
        # `x.cos()` runs as `ops.cos(x)`: numpy arrays, one of the targets, have no such method.
        node.args = [receiver, *(self.visit(a) for a in node.args)]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.func = ast.copy_location(ast.Attribute(ast.Name(OPS, ast.Load()), func.attr,
                                                    ast.Load()), func)
        return node

    def _check_call(self, node: ast.Call, name: str, overloads: tuple[Signature, ...]) -> None:
        """A call must fit one overload of what it calls (when its signatures are known)."""
        if not overloads or any(isinstance(a, ast.Starred) for a in node.args):
            return
        keywords = [k.arg for k in node.keywords if k.arg is not None]
        problems = [s.mismatch(len(node.args), keywords) for s in overloads]
        if all(problems):
            fits = "; ".join(f"{s.name} {p}" for s, p in zip(overloads, problems, strict=True))
            raise self.fail(node, f"{name}() called with {len(node.args)} positional "
                            f"argument(s){' and ' + ', '.join(keywords) if keywords else ''}: "
                            f"{fits}")

    def _list_sizes(self, node: ast.Call) -> ast.AST:
        args = node.args
        named = len(args) == 1 and isinstance(args[0], ast.Name)
        arg = self.arguments.get(args[0].id) if named else None
        if arg is None or not arg.type.is_tensor_list or node.keywords:
            raise self.fail(node, "to_args_sizes() takes one Tensor[] argument of the op")
        name = f"{arg.name}_args_sizes"
        self.result.save(SavedKind.LIST_SIZES, arg.name, name)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def _geometry(self, node: ast.Call) -> ast.AST:
        """`TensorGeometry(x)` in a backward formula: x's sizes, strides and storage offset,
        saved instead of x (torch's TensorGeometry)."""
        args = node.args
        named = len(args) == 1 and isinstance(args[0], ast.Name)
        arg = self.arguments.get(args[0].id) if named else None
        if arg is None or not arg.type.is_tensor or arg.type.is_tensor_list or node.keywords:
            raise self.fail(node, "TensorGeometry() takes one Tensor argument of the op")
        name = f"{arg.name}_geometry"
        self.result.save(SavedKind.GEOMETRY, arg.name, name)
        return ast.copy_location(ast.Name(name, ast.Load()), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        value = node.value
        if isinstance(value, ast.Name) and value.id == "grads" and not self.scope.forward:
            index = node.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int):
                raise self.fail(node, "grads[...] takes an integer literal")
            if not 0 <= index.value < len(self.outputs):
                raise self.fail(
                    node,
                    f"grads[{index.value}] is out of range: the op has "
                    f"{len(self.outputs)} output(s)",
                )
            self.result.grads_at = self.result.grads_at or _position(node)
            self.result.grad_indices.add(index.value)
            return node
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        name = node.id
        if name.startswith("__"):
            raise self.fail(node, f"dunder name {name!r} is not allowed in a formula")
        if self.scope.forward:
            return self._forward_name(node)
        if name == "grad":
            self.result.grad_names.add(name)
            self.result.grad_at = self.result.grad_at or _position(node)
            self.result.grad_indices.add(0)
            return node
        if name == "grads":
            returns = self.scope.schema.returns
            if len(returns) == 1 and returns[0].type.is_list:
                # `-> Tensor[]`: the formula takes the whole list, None where an output
                # got no gradient (split_backward(grads, ...)).
                self.result.grads_at = self.result.grads_at or _position(node)
                return node
            raise self.fail(node, "grads must be indexed with a literal: grads[0]")
        if name in self.named_grads:
            self.result.grad_names.add(name)
            self.result.grads_at = self.result.grads_at or _position(node)
            self.result.grad_indices.add(self.named_grads[name])
            return node
        if name == "grad_input_mask" and self.scope.fused:
            return node
        arg = self.arguments.get(name)
        if arg is not None:
            if arg.type.is_tensor:
                self.result.save(SavedKind.TENSOR, name, local_name(name))
            elif arg.type.is_tensor_list:
                self.result.save(SavedKind.TENSOR_LIST, name, name)
            else:
                self.result.save(SavedKind.VALUE, name, name)
            return ast.copy_location(ast.Name(local_name(name), ast.Load()), node)
        if name in self.outputs:
            self.result.save(SavedKind.OUTPUT, name, name)
            return node
        if name in self.scope.ops or name in self.scope.helpers or name in ALLOWED_BUILTINS:
            raise self.fail(node, f"{name!r} is a function; call it")
        raise self.unknown(node, name)

    def _check_kernel_name(self, node: ast.Name) -> None:
        """A `forward:` formula computes the outputs from the arguments: it cannot read them
        (_KernelRewriter calls this on every name)."""
        name = node.id
        if name in ("grad", "grads", "grad_input_mask") or name in self.named_grads:
            raise self.fail(node, f"{name!r} is a backward name; a forward: formula computes "
                            "the op's result from its arguments")
        if name in self.outputs and name not in self.arguments:
            raise self.fail(node, f"{name!r} is the op's output: a forward: formula computes "
                            "it from the arguments")

    def _forward_name(self, node: ast.Name) -> ast.AST:
        name = node.id
        base, _, suffix = name.rpartition("_")
        arg = self.arguments.get(base)
        if suffix in ("p", "t") and arg is not None:
            if not arg.type.is_tensor_like:
                raise self.fail(
                    node, f"{base!r} is a {arg.type}, not a Tensor: write {base}, not {name}"
                )
            if suffix == "t" and base not in self.scope.tangents:
                raise self.fail(
                    node, f"{name!r} names no tangent: {base!r} is not a differentiable input"
                )
            return node
        if name in self.outputs or name in self.arguments:
            if name in self.arguments and self.arguments[name].type.is_tensor_like:
                raise self.fail(
                    node, f"{name!r} is ambiguous in a forward formula: write {name}_p or {name}_t"
                )
            return ast.copy_location(ast.Name(local_name(name), ast.Load()), node)
        if name == "grad_input_mask" and self.scope.fused:
            return node
        if name in ("grad", "grads") or name in self.named_grads:
            raise self.fail(node, f"{name!r} is a backward name; forward formulas use x_p and x_t")
        raise self.unknown(node, name)


class _KernelRewriter(_Rewriter):
    """The rewriter of a `forward:` formula: a name is checked as one first."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        self._check_kernel_name(node)
        return super().visit_Name(node)


@dataclass(frozen=True)
class AnalyzedFormula:
    code: str
    saved: tuple[SavedAttribute, ...]
    grad_indices: tuple[int, ...]
    grad_names: tuple[str, ...]  # which of `grad`, `grad_<name>` the code reads


def parse_expression(text: str) -> ast.Expression:
    """Parse a formula as one Python expression; a statement gets a FormulaError naming it,
    and so does one nested deeper than MAX_DEPTH (checks and rewrites recurse)."""
    stripped = text.strip()
    try:
        tree = ast.parse(stripped, mode="eval")
    except (RecursionError, MemoryError):
        raise FormulaError(f"the formula nests too deeply to parse (the limit is {MAX_DEPTH} "
                           "levels): give part of it a name, as a helper") from None
    except SyntaxError as error:
        _reject_statement(stripped)
        line = (error.lineno or 1) - 1
        line_text = (stripped.splitlines() or [""])[min(line, len(stripped.splitlines()) - 1)]
        # Python reports offset 0 when the text ended too soon: point at its end.
        end = error.offset - 1 if error.offset else len(line_text)
        column = len(line_text[:end].encode())
        raise FormulaError(f"invalid Python expression: {error.msg}", (line, column)) from None
    _check_depth(tree)
    return tree


def _check_depth(tree: ast.AST) -> None:
    """Raise at the first node deeper than MAX_DEPTH, walking without recursion."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FormulaError(f"the formula nests more than {MAX_DEPTH} levels deep (a sum "
                               f"of {MAX_DEPTH} terms is that deep): give part of it a name, as "
                               "a helper", _position(node))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _reject_statement(text: str) -> None:
    """Raise a FormulaError if `text` is a statement (import, assignment, ...)."""
    try:
        module = ast.parse(text, mode="exec")
    except SyntaxError:
        return
    if not module.body:
        return
    statement = module.body[0]
    if isinstance(statement, ast.Import | ast.ImportFrom):
        raise FormulaError("import is not allowed in a formula", _position(statement))
    if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
        target = statement.targets[-1] if isinstance(statement, ast.Assign) else statement.target
        # Point at the operator (`=`, `+=`, `:`) right after the target.
        line = text.splitlines()[target.end_lineno - 1].encode()
        operator = len(line) - len(line[target.end_col_offset :].lstrip())
        raise FormulaError(
            "an assignment is not allowed in a formula", (target.end_lineno - 1, operator)
        )
    raise FormulaError(
        f"a {type(statement).__name__} statement is not allowed in a formula",
        _position(statement),
    )


def analyze(text: str, scope: Scope) -> AnalyzedFormula:
    """Check one formula against `scope`, and rewrite it for a generated apply()."""
    tree = parse_expression(text)
    rewriter = _KernelRewriter(scope) if scope.kernel else _Rewriter(scope)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    result = rewriter.result
    if result.grad_at is not None and result.grads_at is not None:
        raise FormulaError(
            "a formula uses either grad or grads[i] (grad_<name>), not both",
            max(result.grad_at, result.grads_at),
        )
    return AnalyzedFormula(
        code=ast.unparse(tree),
        saved=tuple(result.saved),
        grad_indices=tuple(sorted(result.grad_indices)),
        grad_names=tuple(sorted(result.grad_names)),
    )
