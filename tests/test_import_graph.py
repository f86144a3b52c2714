"""The modules of runtime/ and generated/ import each other in one direction: no cycle.

Each module's imports are read with ast, as it writes them at module level: `import a.b`
is an edge to the module a.b, `from a.b import c` to the module a.b.c when c is a module
(`from runtime import node`), else to a.b (a module, or a package's `__init__`). What is
not an edge, and why:

- An import inside a function runs when the function is called, after every module has
  been imported: it cannot make an import fail. (It can hide a cycle, so the runtime
  keeps none that does not break one, and says which.)
- An import under `if TYPE_CHECKING:` never runs.
- Importing runtime.node first runs runtime/__init__.py, which imports everything. That is
  Python running a package before its modules, not something node.py asks for; counted,
  it would put every module in one cycle and the test would say nothing. A package's
  `__init__` is a module like the others: it may import its submodules (runtime/__init__.py
  is the top, it imports all of them), and a module that writes an import of its package
  (`from runtime import ones_like`) depends on that `__init__`, which is then a cycle.

The graph spans every package of PACKAGES, so a cycle through two packages is found; the
test is parametrized by package, and a package's test reports each cycle through one of
its modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["runtime", "generated"]

# Each cycle as the list of modules it passes, from its first in sorted order.
KNOWN_CYCLES = [
    # removed when nodes bind their formulas' op namespace (issue 11, item 1)
    ("generated.forward", "generated.ops"),
    ("generated.forward", "runtime.manual", "generated.ops"),
    ("generated.functions", "generated.ops"),
    ("generated.functions", "runtime.manual", "generated.ops"),
]


def module_name(path: Path) -> str:
    """`runtime/node.py` -> runtime.node, `runtime/autograd/__init__.py` -> runtime.autograd."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of PACKAGES, by name."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported: at the top, and in the `if`,
    `try`, `with` and class bodies there, but not in functions or under TYPE_CHECKING."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                found.append(statement)
            elif isinstance(statement, ast.If):
                if not _is_type_checking(statement.test):
                    visit(statement.body)
                visit(statement.orelse)
            elif isinstance(statement, ast.Try | ast.TryStar):
                visit(statement.body)
                for handler in statement.handlers:
                    visit(handler.body)
                visit(statement.orelse)
                visit(statement.finalbody)
            elif isinstance(statement, ast.With | ast.For | ast.While | ast.ClassDef):
                visit(statement.body)
                visit(getattr(statement, "orelse", []))

    visit(tree.body)
    return found


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that module `name` imports at module level."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # `from . import x`, `from .node import Node`
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            targets.add(submodule if submodule in known else base)
    return targets & known


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of PACKAGES it imports at module level."""
    found = modules()
    known = set(found)
    return {name: imported_modules(name, path, known) for name, path in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every simple cycle of the graph, once, from its first module in sorted order."""
    found = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            module, path = stack.pop()
            for target in sorted(graph[module]):
                if target == start:
                    found.append(tuple(path))
                elif target > start and target not in path:
                    stack.append((target, [*path, target]))
    return sorted(found)


def _cycle_text(cycle: tuple[str, ...]) -> str:
    return " -> ".join([*cycle, cycle[0]])


def test_the_graph_sees_the_modules_and_the_top_imports_them() -> None:
    graph = import_graph()
    assert {"runtime", "runtime._tensor", "runtime.node", "runtime.recording",
            "generated.ops", "runtime.methods"} <= set(graph)
    assert {"generated.ops", "runtime.methods", "runtime.autograd"} <= graph["runtime"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package: str) -> None:
    """No cycle through a module of `package`, but those KNOWN_CYCLES lists."""
    mine = [c for c in cycles(import_graph())
            if any(m == package or m.startswith(package + ".") for m in c)]
    unexpected = [_cycle_text(c) for c in mine if c not in KNOWN_CYCLES]
    assert not unexpected, "import cycles:\n" + "\n".join(unexpected)


def test_known_cycles_are_still_there() -> None:
    """A cycle that is gone leaves KNOWN_CYCLES too, so that it cannot come back unseen."""
    found = cycles(import_graph())
    gone = [_cycle_text(c) for c in KNOWN_CYCLES if c not in found]
    assert not gone, "no longer cycles, remove them from KNOWN_CYCLES:\n" + "\n".join(gone)


@pytest.mark.parametrize(("source", "expected"), [
    ("import runtime.node\n", {"runtime.node"}),
    ("from runtime import node, ones_like\n", {"runtime.node", "runtime"}),
    ("from runtime.node import Node\n", {"runtime.node"}),
    ("from . import node\n", {"runtime.node"}),
    ("def f():\n    import runtime.node\n", set()),
    ("if TYPE_CHECKING:\n    import runtime.node\nelse:\n    import runtime\n", {"runtime"}),
    ("try:\n    import runtime.node\nexcept ImportError:\n    pass\n", {"runtime.node"}),
    ("class C:\n    import runtime.node\n", {"runtime.node"}),
])
def test_what_counts_as_an_import(tmp_path: Path, source: str, expected: set[str]) -> None:
    path = tmp_path / "probe.py"
    path.write_text(source)
    known = {"runtime", "runtime.node"}
    assert imported_modules("runtime.probe", path, known) == expected


def test_a_cycle_is_found_once_from_its_first_module() -> None:
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [("a", "b"), ("a", "b", "c")]
