"""The raw form of a formula: the same expression, run on numpy arrays instead of Tensors.

A first-order backward (create_graph off) records nothing, so its formulas need not go
through the Tensor wrappers. The raw form keeps a formula's operators as they are (numpy
has the same ones) and sends every call of a spec op (`ops.f(...)`), of a Tensor method
(`x.m(...)`) and of a helper (`manual.h(...)`) to its raw twin: `raw_ops.f`,
`raw_ops.method_m(x, ...)` and `raw_manual.h`. A helper has a twin only when its body
uses nothing but operators, spec ops, Tensor methods that have raw forms, other such
helpers and plain Python; a formula that needs anything else gets no raw form, and its
node runs the Tensor form instead.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

# Tensor methods defined by hand on Tensor (not in the spec) that have a raw form in
# runtime/raw.py.
CORE_RAW_METHODS = frozenset({"size", "dim", "numel", "detach", "sum_to_size", "expand_as",
                              "reshape", "view_as", "contiguous", "type_as", "to",
                              "is_contiguous", "matmul"})
# Methods that a helper calls on Python lists and tuples, never on a tensor.
_SEQUENCE_METHODS = frozenset({"append", "extend", "insert", "index", "count"})
# Attributes a raw formula may read: they mean the same on an array and on a Tensor.
_SAME_ATTRIBUTES = frozenset({"shape", "ndim"})


class _Unsafe(Exception):
    """The code needs something that has no raw form."""


class _ToRaw(ast.NodeTransformer):
    """Rewrite calls for the raw layer; raise _Unsafe on anything without a raw form."""

    def __init__(self, ops: frozenset[str], methods: frozenset[str], helpers: frozenset[str],
                 helper_prefix: str | None, names: frozenset[str] | None) -> None:
        self.ops = ops
        self.methods = methods
        self.helpers = helpers
        # In a formula, helpers are `manual.h` and become `raw_manual.h`; in a helper body
        # they are bare names in the same module (prefix None).
        self.helper_prefix = helper_prefix
        self.names = names  # the names a helper body may read (None: not checked)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in ("ops", "manual"):
            return self._module_call(node, func)
        if isinstance(func, ast.Attribute):
            return self._method_call(node, func)
        if isinstance(func, ast.Name) and self.helper_prefix is None \
                and func.id not in self.helpers and func.id not in (self.names or ()):
            raise _Unsafe(func.id)
        node.func = self.visit(func)
        return node

    def _module_call(self, node: ast.Call, func: ast.Attribute) -> ast.Call:
        """`ops.f(...)` or `manual.h(...)`: to f's or h's twin, when it has one."""
        if func.value.id == "ops":
            if func.attr not in self.ops:
                raise _Unsafe(func.attr)
            func.value = ast.Name("raw_ops" if self.helper_prefix else "ops", ast.Load())
            return node
        if func.attr not in self.helpers:
            raise _Unsafe(func.attr)
        func.value = ast.Name(self.helper_prefix or "", ast.Load())
        return node

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> ast.Call:
        """`x.m(...)`: a Tensor method becomes `raw_ops.method_m(x, ...)`; `math.f(...)` and
        a list's methods stay as they are."""
        receiver = self.visit(func.value)
        if isinstance(receiver, ast.Name) and receiver.id == "math":
            return node
        if func.attr in self.methods:
            module = "raw_ops" if self.helper_prefix else "ops"
            node.func = ast.Attribute(ast.Name(module, ast.Load()), f"method_{func.attr}",
                                      ast.Load())
            node.args = [receiver, *node.args]
            return node
        if func.attr in _SEQUENCE_METHODS:
            func.value = receiver
            return node
        raise _Unsafe(func.attr)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node.value = self.visit(node.value)
        if node.attr in _SAME_ATTRIBUTES:
            return node
        if isinstance(node.value, ast.Name) and node.value.id == "math":
            return node
        raise _Unsafe(node.attr)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if self.names is not None and node.id not in self.names and node.id not in self.helpers:
            raise _Unsafe(node.id)
        return node


def formula_code(code: str, ops: frozenset[str], methods: frozenset[str],
                 helpers: frozenset[str]) -> str | None:
    """The raw form of a formula's generated code, or None if it has none.

    `code` is what a Tensor-form apply() runs (`ops.f(...)`, `manual.h(...)`, `x.m(...)`);
    `ops` and `methods` name the spec ops and Tensor methods with raw forms, `helpers` the
    helpers with raw twins.
    """
    tree = ast.parse(code, mode="eval")
    try:
        tree = _ToRaw(ops, methods | CORE_RAW_METHODS, helpers, "raw_manual", None).visit(tree)
    except _Unsafe:
        return None
    return ast.unparse(ast.fix_missing_locations(tree))


def _local_names(function: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns."""
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _strip_annotations(function: ast.FunctionDef) -> None:
    args = function.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is not None:
            arg.annotation = None
    function.returns = None


def helper_twins(manual_source: str, ops: frozenset[str], methods: Iterable[str],
                 written: frozenset[str] = frozenset()) -> tuple[frozenset[str], list[str]]:
    """The helpers of runtime/manual.py that have raw twins, and the twins' source.

    A twin is the helper's own code with its calls rewritten for arrays; a helper whose
    body needs anything else (or calls a helper without a twin) has none. Helpers named in
    `written` have twins written by hand (in runtime/raw.py) and are taken as they are.
    """
    methods = frozenset(methods) | CORE_RAW_METHODS
    module = ast.parse(manual_source)
    functions = {s.name: s for s in module.body if isinstance(s, ast.FunctionDef)
                 and s.name not in written}
    safe, twins = _twins(functions, frozenset(functions) | written, ops, methods,
                         _module_names(module))
    body = [ast.unparse(ast.fix_missing_locations(twins[name])) for name in functions
            if name in twins]
    return frozenset(n for n in safe if not n.startswith("_")), body


def _module_names(module: ast.Module) -> frozenset[str]:
    """The module-level names a helper's body may read: what manual.py imports and assigns,
    `ops`, and the builtins but those that run or reach arbitrary code."""
    imported: set[str] = set()
    for statement in module.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            imported |= {(a.asname or a.name).split(".")[0] for a in statement.names}
    imported.discard("ops")
    constants = {t.id for s in module.body if isinstance(s, ast.Assign) for t in s.targets
                 if isinstance(t, ast.Name)}
    return frozenset(imported | constants | set(dir(builtins)) | {"ops"}) \
        - {"eval", "exec", "open", "compile", "__import__", "getattr", "setattr"}


def _twins(functions: dict[str, ast.FunctionDef], safe: frozenset[str], ops: frozenset[str],
           methods: frozenset[str], allowed: frozenset[str]
           ) -> tuple[frozenset[str], dict[str, ast.FunctionDef]]:
    """(the helpers that have twins, or hand-written ones; the twins by name).

    A helper found unsafe is dropped from `safe` and the rewriting starts again, since a
    helper that calls it has no twin either; it ends when none is dropped.
    """
    while True:
        twins: dict[str, ast.FunctionDef] = {}
        for name in [n for n in functions if n in safe]:
            twin = _twin(functions[name], ops, methods, safe, allowed)
            if twin is None:
                safe = safe - {name}
                break
            twins[name] = twin
        else:  # no helper was dropped
            return safe, twins


def _twin(function: ast.FunctionDef, ops: frozenset[str], methods: frozenset[str],
          safe: frozenset[str], allowed: frozenset[str]) -> ast.FunctionDef | None:
    """A copy of one helper rewritten for arrays, or None if it needs something else."""
    copy = ast.parse(ast.unparse(function)).body[0]
    _strip_annotations(copy)
    names = frozenset(allowed | _local_names(copy))
    try:
        copy.body = [_ToRaw(ops, methods, safe, None, names).visit(s) for s in copy.body]
    except _Unsafe:
        return None
    return copy


def helper_imports(manual_source: str, twins: list[str], written: frozenset[str]
                   ) -> tuple[list[str], list[str], list[str]]:
    """The imports and constants of manual.py that the twins read (`ops` is imported apart),
    and the hand-written twins (of `written`) that they call."""
    module = ast.parse(manual_source)
    used = {n.id for twin in twins for n in ast.walk(ast.parse(twin)) if isinstance(n, ast.Name)}
    imports, constants, hand_written = [], [], []
    for statement in module.body:
        if isinstance(statement, ast.Import | ast.ImportFrom):
            kept = [a for a in statement.names if (a.asname or a.name) in used and a.name != "ops"]
            if kept and getattr(statement, "module", None) != "__future__":
                statement.names = kept
                imports.append(ast.unparse(statement))
        elif isinstance(statement, ast.FunctionDef) and statement.name in written \
                and statement.name in used:
            hand_written.append(statement.name)
        elif isinstance(statement, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in used for t in statement.targets):
            constants.append(ast.unparse(statement))
    return imports, constants, hand_written


def module_helpers(manual_source: str) -> frozenset[str]:
    """Every function manual.py defines, private ones too."""
    return frozenset(s.name for s in ast.parse(manual_source).body
                     if isinstance(s, ast.FunctionDef))
