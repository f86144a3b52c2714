"""The module-level imports of the modules of PACKAGES form no cycle.

In a cycle, whichever module is imported first sees the other half-initialised, so the
program works or not by import order; and the usual patch, an import moved into a function,
hides the cycle instead of removing it. The graph spans every package listed, so a cycle
through two packages is found too.

An edge A -> B means that importing A runs B first: `import p.b`, `from p.b import x` and
`from p import b` (b a module) at A's top level, in a class body or under if/try/with there,
but not under `if TYPE_CHECKING:`, which never runs. `from p import x` (x not a module) is
an edge to the package p itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = ["codegen", "runtime", "generated"]


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every .py file of a package and its subpackages."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is imported: not those inside functions."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(reversed(node.orelse))
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(reversed(getattr(node, field, [])))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(reversed(node.body))


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             known: set[str]) -> set[str]:
    """The modules of `known` that one import statement of `module` runs."""
    if isinstance(node, ast.Import):
        found = [_deepest_known(alias.name, known) for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: `from . import x`, `from ..p import x`
            package = module.split(".") if is_package else module.split(".")[:-1]
            anchor = package[: len(package) - (node.level - 1)]
            base = ".".join(anchor + ([node.module] if node.module else []))
        found = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known
                 else _deepest_known(base, known) for alias in node.names]
    return {target for target in found if target is not None}


def _deepest_known(name: str, known: set[str]) -> str | None:
    """`name` if it is a known module, else its closest known parent package."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def import_graph(root: Path, packages: list[str]) -> dict[str, set[str]]:
    """Module -> the modules (of `packages`) its top-level imports run."""
    modules = {name: path for package in packages for name, path in _modules(root, package).items()}
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        graph[name] = set()
        for node in _top_level_imports(tree):
            graph[name] |= _targets(node, name, is_package, known)
        graph[name].discard(name)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge of a depth-first search, each as [a, b, ..., a]; [] if none."""
    cycles: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if target in path:
                cycles.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module)
    return cycles


def function_level_imports(root: Path, packages: list[str]) -> list[str]:
    """`file:line` of each import, inside a function, of a module of the importer's own
    package without a comment that says which cycle it breaks (on its line or the one
    above): only a cycle is a reason to import a sibling there, and the comment names it."""
    found = []
    for package in packages:
        modules = _modules(root, package)
        for name, path in modules.items():
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for function in ast.walk(ast.parse(text, filename=str(path))):
                if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(function):
                    if not isinstance(node, ast.Import | ast.ImportFrom) or not _targets(
                            node, name, path.name == "__init__.py", set(modules)):
                        continue
                    nearby = " ".join(lines[max(node.lineno - 2, 0) : node.lineno])
                    if "cycle" not in nearby:
                        found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return sorted(set(found))


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph(ROOT, PACKAGES))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_reader_finds_a_cycle_and_ignores_what_does_not_run(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\nVALUE = 1\n")
    (package / "b.py").write_text("from pkg.c import x\n\n\ndef f():\n    import pkg.a\n\n\n"
                                  "def g():\n    # pkg.a imports us: a cycle\n    import pkg.a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\n\nfrom . import a\n"
                                  "from pkg import VALUE\n\nif TYPE_CHECKING:\n"
                                  "    from pkg import b\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"},
                     "pkg.c": {"pkg.a", "pkg"}}
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert function_level_imports(tmp_path, ["pkg"]) == ["pkg/b.py:5"]


def test_imports_inside_functions_break_a_cycle() -> None:
    assert function_level_imports(ROOT, PACKAGES) == []


# A compiled TinyModel step, run in a fresh interpreter that records every file it opens
# (an audit hook sees each open, whoever calls it) and then prints what it loaded.
_TRACE_A_STEP = """
import json, os, sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and
                 isinstance(args[0], (str, bytes, os.PathLike)) else None)
import numpy as np
import runtime as torch
model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(3, 6), torch.randn(3, 2)
def step():
    optimizer.zero_grad()
    loss = (y - model(x)).pow(2).sum()
    loss.backward()
    optimizer.step()
    return loss
compiled = torch.compile(step)
for _ in range(3):
    compiled()
print(json.dumps({"fallback": compiled.fallback_reason, "code": compiled.code,
                  "modules": sorted(sys.modules), "opened": opened}))
"""


def test_the_runtime_needs_neither_the_generator_nor_the_spec() -> None:
    """`import runtime` and a compiled step load no module of codegen and open no spec file:
    what the runtime needs of the spec is in generated/ (spec_data.py)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _TRACE_A_STEP], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["fallback"] is None
    # The trace did read the spec's data: a numpy form and a formula's provenance comment.
    assert "np.square(" in seen["code"]
    assert "PowBackward0: self: pow_backward(grad, self, exponent)" in seen["code"]
    assert [m for m in seen["modules"] if m == "codegen" or m.startswith("codegen.")] == []
    assert "generated.spec_data" in seen["modules"]
    assert [p for p in seen["opened"] if p.endswith((".yaml", ".yml"))] == []


def test_no_runtime_file_imports_the_generator_or_names_the_spec_file() -> None:
    """Statically too, anywhere in a file (inside functions as well): no import of codegen,
    and no string that is the spec's file name or a path to it (a message that mentions
    torch's `tools/autograd/derivatives.yaml` in a sentence is no path)."""
    found = []
    for path in sorted((ROOT / "runtime").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n == "codegen" or n.startswith("codegen.") for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports codegen")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    _is_spec_path(node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} names the spec file")
    assert found == []


def _is_spec_path(text: str) -> bool:
    text = text.strip().strip("'\"")
    return text.endswith("derivatives.yaml") and not any(c.isspace() for c in text)


def test_the_static_rule_tells_a_path_from_a_sentence() -> None:
    assert _is_spec_path("derivatives.yaml") and _is_spec_path("../derivatives.yaml")
    assert not _is_spec_path('see "tools/autograd/derivatives.yaml" for the formula')
