"""Formulas: parse with `ast`, check every construct and name, infer what must be saved,
and rewrite into the Python that a generated `apply()` runs.

A formula is a Python expression over a closed scope (see `Scope`). It becomes executed
code, so anything outside that scope is rejected here, before a line is emitted.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field

from codegen.model import SavedAttribute
from codegen.schema import FunctionSchema

# Size-only attributes of a tensor, and the saved attribute each becomes (torchgen's names).
SIZE_ATTRIBUTES = {"shape": ("sizes", "sym_sizes"), "ndim": ("dim", "dim"),
                   "dtype": ("scalar_type", "scalar_type")}
SIZE_METHODS = {"numel": ("numel", "sym_numel")}
# Builtins a formula may call: pure, and needed for index and size arithmetic.
ALLOWED_BUILTINS = frozenset({"len", "int", "float", "tuple", "list", "range", "min", "max", "abs"})
# Tensor methods that the runtime defines by hand (not in the spec) and formulas may call.
CORE_TENSOR_METHODS = frozenset({"size", "dim", "numel", "detach", "sum_to_size", "expand_as",
                                 "reshape", "view_as", "contiguous", "type_as", "to"})

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


class FormulaError(Exception):
    """A problem in a formula; `offset` is (line, column) within the formula, 0-based."""

    def __init__(self, message: str, offset: tuple[int, int] = (0, 0)) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Scope:
    """Everything a formula may name."""

    schema: FunctionSchema
    ops: frozenset[str]  # functions declared in the spec
    methods: frozenset[str]  # Tensor methods declared in the spec
    helpers: frozenset[str]  # functions in runtime/manual.py
    forward: bool = False  # forward-mode formulas see `x_p`, `x_t` instead of `grad`
    fused: bool = False  # `grad_input_mask` is visible


def local_name(name: str) -> str:
    """The Python local that holds a spec name: `self` cannot be one, so it is `self_`."""
    return "self_" if name == "self" else name


@dataclass
class _Analysis:
    saved: list[SavedAttribute] = field(default_factory=list)
    grad_indices: set[int] = field(default_factory=set)
    uses_grad: bool = False
    uses_grads: bool = False

    def save(self, kind: str, source: str, name: str) -> None:
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
        position = (getattr(node, "lineno", 1) - 1, getattr(node, "col_offset", 0))
        return FormulaError(message, position)

    def known_names(self) -> list[str]:
        names = set(self.arguments) | set(self.outputs) | self.scope.ops | self.scope.helpers
        if self.scope.forward:
            names |= {f"{a}_p" for a in self.arguments} | {f"{a}_t" for a in self.arguments}
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

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr.startswith("__"):
            raise self.fail(node, f"dunder attribute {node.attr!r} is not allowed in a formula")
        if node.attr not in SIZE_ATTRIBUTES:
            raise self.fail(
                node,
                f"attribute {node.attr!r} is not allowed; a formula may read only "
                ".shape, .ndim, .dtype and .numel() of a tensor, or call a Tensor method",
            )
        source = self._size_source(node.value)
        if source is not None and not self.scope.forward:
            kind, suffix = SIZE_ATTRIBUTES[node.attr]
            name = f"{local_name(source).rstrip('_')}_{suffix}"
            self.result.save(kind, source, name)
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._method_call(node, func)
        if not isinstance(func, ast.Name):
            raise self.fail(node, "only named functions and Tensor methods can be called")
        name = func.id
        if name.startswith("__"):
            raise self.fail(node, f"dunder name {name!r} is not allowed in a formula")
        if name == "not_implemented":
            raise self.fail(node, "not_implemented(...) must be the whole formula")
        if name == "to_args_sizes" and not self.scope.forward:
            return self._list_sizes(node)
        if name in self.scope.ops:
            module = "ops"
        elif name in self.scope.helpers:
            module = "manual"
        elif name in ALLOWED_BUILTINS:
            return self.generic_visit(node)
        else:
            raise self.unknown(node, name, "function")
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.func = ast.copy_location(
            ast.Attribute(ast.Name(module, ast.Load()), name, ast.Load()), func
        )
        return node

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> ast.AST:
        if func.attr.startswith("__"):
            raise self.fail(func, f"dunder attribute {func.attr!r} is not allowed in a formula")
        if func.attr in SIZE_METHODS:
            if node.args or node.keywords:
                raise self.fail(node, f".{func.attr}() takes no arguments in a formula")
            source = self._size_source(func.value)
            if source is not None and not self.scope.forward:
                kind, suffix = SIZE_METHODS[func.attr]
                name = f"{local_name(source).rstrip('_')}_{suffix}"
                self.result.save(kind, source, name)
                return ast.copy_location(ast.Name(name, ast.Load()), node)
        elif func.attr not in self.scope.methods and func.attr not in CORE_TENSOR_METHODS:
            close = difflib.get_close_matches(
                func.attr, sorted(self.scope.methods | CORE_TENSOR_METHODS), n=1
            )
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.fail(func, f"unknown Tensor method {func.attr!r}{hint}")
        func.value = self.visit(func.value)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        return node

    def _list_sizes(self, node: ast.Call) -> ast.AST:
        args = node.args
        named = len(args) == 1 and isinstance(args[0], ast.Name)
        arg = self.arguments.get(args[0].id) if named else None
        if arg is None or not arg.type.is_tensor_list or node.keywords:
            raise self.fail(node, "to_args_sizes() takes one Tensor[] argument of the op")
        name = f"{arg.name}_args_sizes"
        self.result.save("list_sizes", arg.name, name)
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
            self.result.uses_grads = True
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
            self.result.uses_grad = True
            self.result.grad_indices.add(0)
            return node
        if name == "grads":
            returns = self.scope.schema.returns
            if len(returns) == 1 and returns[0].type.is_list:
                # `-> Tensor[]`: the formula takes the whole list, None where an output
                # got no gradient (split_backward(grads, ...)).
                self.result.uses_grads = True
                return node
            raise self.fail(node, "grads must be indexed with a literal: grads[0]")
        if name in self.named_grads:
            self.result.uses_grads = True
            self.result.grad_indices.add(self.named_grads[name])
            return node
        if name == "grad_input_mask" and self.scope.fused:
            return node
        arg = self.arguments.get(name)
        if arg is not None:
            if arg.type.is_tensor:
                self.result.save("tensor", name, local_name(name))
            elif arg.type.is_tensor_list:
                self.result.save("tensor_list", name, name)
            else:
                self.result.save("value", name, name)
            return ast.copy_location(ast.Name(local_name(name), ast.Load()), node)
        if name in self.outputs:
            self.result.save("output", name, name)
            return node
        if name in self.scope.ops or name in self.scope.helpers or name in ALLOWED_BUILTINS:
            raise self.fail(node, f"{name!r} is a function; call it")
        raise self.unknown(node, name)

    def _forward_name(self, node: ast.Name) -> ast.AST:
        name = node.id
        base, _, suffix = name.rpartition("_")
        if suffix in ("p", "t") and base in self.arguments:
            return node
        if name in self.outputs or name in self.arguments:
            if name in self.arguments and self.arguments[name].type.is_tensor_like:
                raise self.fail(
                    node, f"{name!r} is ambiguous in a forward formula: write {name}_p or {name}_t"
                )
            return node
        if name == "grad_input_mask" and self.scope.fused:
            return node
        if name in ("grad", "grads") or name in self.named_grads:
            raise self.fail(node, f"{name!r} is a backward name; forward formulas use x_p and x_t")
        raise self.unknown(node, name)


@dataclass(frozen=True)
class AnalyzedFormula:
    code: str
    saved: tuple[SavedAttribute, ...]
    grad_indices: tuple[int, ...]
    uses_grad: bool
    uses_grads: bool


def parse_expression(text: str) -> ast.Expression:
    stripped = text.strip()
    first = stripped.split(None, 1)[0] if stripped else ""
    if first in ("import", "from"):
        raise FormulaError("import is not allowed in a formula")
    try:
        return ast.parse(stripped, mode="eval")
    except SyntaxError as error:
        if "=" in stripped and first.isidentifier() and stripped.split(None, 2)[1:2] == ["="]:
            raise FormulaError("an assignment is not allowed in a formula") from None
        raise FormulaError(
            f"invalid Python expression: {error.msg}",
            ((error.lineno or 1) - 1, max((error.offset or 1) - 1, 0)),
        ) from None


def analyze(text: str, scope: Scope) -> AnalyzedFormula:
    """Check one formula against `scope`, and rewrite it for a generated apply()."""
    tree = parse_expression(text)
    rewriter = _Rewriter(scope)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    result = rewriter.result
    if result.uses_grad and result.uses_grads:
        raise FormulaError("a formula uses either grad or grads[i] (grad_<name>), not both")
    return AnalyzedFormula(
        code=ast.unparse(tree),
        saved=tuple(result.saved),
        grad_indices=tuple(sorted(result.grad_indices)),
        uses_grad=result.uses_grad,
        uses_grads=result.uses_grads,
    )
