"""Spec text never becomes code.

Payloads that try to close a docstring, a string literal or a comment are put in every spec
field that reaches a generated file. Generation either refuses them with a located error or
writes them as inert text: the generated modules then have exactly the syntax tree of a
benign spec but for the values of string constants, and importing them runs nothing.
tests/test_codegen_errors.py has the malformed specs that must be refused.
"""

from __future__ import annotations

import ast
import builtins
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import codegen.__main__ as cli
from codegen import names
from codegen.formula import local_name
from codegen.load import load_spec, parse_spec
from codegen.model import SpecError
from codegen.render import render_all, wrapper_name

ROOT = Path(__file__).resolve().parent.parent
MARKER = "gradgen-payload-ran"


def _payloads(marker: Path) -> list[str]:
    """Texts that would run `marker.touch()` if pasted raw into a docstring, literal or
    comment, with the other characters an escape must survive."""
    run = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    return [
        f'"""; {run}; """',
        f"'''; {run}; '''",
        f'\\"""; {run}; """\\',
        f'\\\\"""; {run}; #',
        f'"\n{run}\n"',
        f"x\r{run}\r",
        f"\u2028{run}\u2029",
        f"\x0c{run}",
        f"{{{{ {run} }}}} {{% if 1 %}}",
        f'"" """ """" {run} \\',
    ]


# Where each field of an entry puts a payload. Each takes the formula-language string
# literal of the payload (or the payload itself, for a comment) and returns YAML.
NEG = "- name: neg(Tensor self) -> Tensor\n  self: {backward}\n  result: {forward}\n"
FIELDS: dict[str, Callable[[str, str], str]] = {
    "backward formula": lambda literal, _: NEG.format(
        backward=_block(f"-grad if {literal} else grad"), forward="auto_element_wise"),
    "comment in a formula": lambda _, text: NEG.format(
        backward=_block(f"-grad  # {text}"), forward="auto_element_wise"),
    "not_implemented message": lambda literal, _: NEG.format(
        backward=_block(f"not_implemented({literal})"), forward="auto_linear"),
    "forward formula": lambda literal, _: NEG.format(
        backward="-grad", forward=_block(f"-self_t if {literal} else self_t")),
    "str default of two overloads": lambda literal, _: (
        "- name: gelu(Tensor self, *, str approximate='none') -> Tensor\n"
        "  self: grad\n"
        f"- name: gelu.other(Tensor self, *, str approximate={literal}) -> Tensor\n"
        "  self: grad\n"),
}


def _block(text: str) -> str:
    """A YAML block scalar holding `text` (its lines indented under the key)."""
    return "|-\n" + "".join(f"    {line}\n" for line in text.split("\n")).rstrip("\n")


def _literal(text: str) -> str:
    return repr(text)


def _shape(source: str) -> str:
    """A module's syntax tree with every string constant emptied: all a payload may change."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def _render(spec: str, spec_name: str = "derivatives.yaml") -> dict[str, str]:
    infos = parse_spec(spec, spec_name, frozenset({"maybe_multiply"}))
    return render_all(infos, spec_name)


def _benign(field: str) -> dict[str, str]:
    text = "benign"
    return _render(FIELDS[field](_literal(text), text))


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_payload_in_a_field_is_refused_or_inert(field: str, tmp_path: Path) -> None:
    marker = tmp_path / MARKER
    benign = _benign(field)
    for payload in _payloads(marker):
        spec = FIELDS[field](_literal(payload), payload)
        try:
            files = _render(spec)
        except SpecError as error:  # refused: then with a location
            assert re.match(r"derivatives\.yaml:\d+:\d+: ", str(error)), str(error)
            continue
        assert sorted(files) == sorted(benign)
        for name, source in files.items():
            assert _shape(source) == _shape(benign[name]), (field, payload, name)
        assert not marker.exists()


def test_the_payload_is_kept_as_text() -> None:
    """Escaped, not dropped: the docstring a reader sees holds the formula as written."""
    payload = '"""; evil(); """'
    files = _render(FIELDS["backward formula"](_literal(payload), payload))
    tree = ast.parse(files["functions.py"])
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "NegBackward0")
    assert f"self: -grad if {_literal(payload)} else grad" in ast.get_docstring(node)
    assert "# self: -grad if '\"\"\"; evil(); \"\"\"' else grad" in files["functions.py"]


@pytest.mark.parametrize("spec_name", ['evil"""\nname.yaml', "a\\", "x\r# y", "\u2028'''"])
def test_a_hostile_spec_file_name_is_inert(spec_name: str) -> None:
    spec = FIELDS["backward formula"](_literal("x"), "x")
    benign, hostile = _render(spec), _render(spec, spec_name)
    for name in benign:
        assert _shape(hostile[name]) == _shape(benign[name]), name
        assert hostile[name].startswith("# Generated by `python -m codegen` from ")
        assert len(hostile[name].splitlines()) == len(benign[name].splitlines())


def test_importing_a_generation_full_of_payloads_runs_none(tmp_path: Path) -> None:
    """The repository's spec with payloads in neg's formulas and messages, generated into a
    package that the runtime then imports and runs: the marker file never appears."""
    marker = tmp_path / MARKER
    payloads = _payloads(marker)
    text = (ROOT / "derivatives.yaml").read_text()
    start = text.index("- name: neg(")
    end = text.index("\n- name:", start) + 1
    hostile = "\n".join([
        "- name: neg(Tensor self) -> Tensor",
        "  inplace: function, method",
        "  self: " + _block(" + ".join(f"(-grad if {_literal(p)} else grad)" for p in payloads)
                            + "  # " + payloads[0]),
        "  result: " + _block(" + ".join(f"(-self_t if {_literal(p)} else self_t)"
                                         for p in payloads)),
        "",
    ])
    spec = tmp_path / "derivatives.yaml"
    spec.write_text(text[:start] + hostile + text[end:])
    package = tmp_path / "package" / "generated"
    package.mkdir(parents=True)
    for name, source in cli.generate(spec).items():
        (package / name).write_text(source)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import runtime, generated\n"
        "assert generated.__file__.startswith(sys.argv[1]), generated.__file__\n"
        "x = runtime.tensor([1.0, 2.0], requires_grad=True)\n"
        "runtime.neg(x).sum().backward()\n"
        "print(x.grad.tolist())\n"
    )
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "package")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # Ten terms `-grad if "<non-empty>" else grad` sum to -10 per element.
    assert run.stdout.strip() == "[-10.0, -10.0]"
    assert not marker.exists()


# -- the names generated code owns ----------------------------------------------------------

def _spec_names() -> set[str]:
    """Every Python name generated code derives from the repository's spec."""
    infos = load_spec(ROOT / "derivatives.yaml")
    groups: dict[str, list] = {}
    for info in infos:
        groups.setdefault(info.schema.base, []).append(info)
    found: set[str] = set()
    for info in infos:
        schema = info.schema
        wrapper = wrapper_name(info, groups[schema.base])
        found |= {schema.base, wrapper, f"{schema.base}_", f"{wrapper}_", f"method_{schema.base}",
                  f"_{schema.base}_overloads", f"_{schema.base}__overloads",
                  f"_{schema.kernel_name}_return"}
        for arg in schema.arguments:
            found |= {arg.name, local_name(arg.name), f"{arg.name}_p", f"{arg.name}_t",
                      f"_saved_{arg.name}"}
        for output in schema.return_names():
            found |= {output, f"grad_{output}", f"{output}_t", f"_saved_{output}"}
        for attr in info.saved:
            found |= {attr.name, local_name(attr.name), f"_saved_{attr.name}"}
        if info.node_name:
            found.add(info.node_name)
    return found


def _bound_or_read(source: str) -> set[str]:
    """Names a module binds or reads: variables, parameters, definitions, imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
    return found


# Names that are not free to clash: dunders of class bodies, methods of Node that the
# classes override, and comprehension variables (a comprehension has its own scope).
_NOT_SHARED = {"__all__", "__slots__", "name", "apply", "release_variables",
               "g", "i", "a"}


@pytest.mark.parametrize("module", ["ops.py", "functions.py", "forward.py",
                                    "tensor_methods.py", "__init__.py"])
def test_names_py_lists_every_name_the_templates_write(module: str) -> None:
    """A name in a generated module that does not come from the spec must be in
    codegen/names.py, so that load.py refuses a spec name equal to it."""
    source = cli.generate(ROOT / "derivatives.yaml")[module]
    own = _bound_or_read(source) - _spec_names() - _NOT_SHARED
    own = {n for n in own if not (n.startswith("__") and n.endswith("__"))}  # operators
    assert own <= names.LOCAL_NAMES, sorted(own - names.LOCAL_NAMES)
    assert not (own & set(dir(builtins))) - names.LOCAL_NAMES


def test_every_reserved_name_is_refused(tmp_path: Path) -> None:
    """And load.py does refuse each of them, as an op and as an argument."""
    for name in sorted(names.LOCAL_NAMES):
        spec = f"- name: relu(Tensor self, Tensor {name}) -> Tensor\n  self: grad\n  {name}: grad\n"
        with pytest.raises(SpecError, match="may not name an argument or output"):
            parse_spec(spec, "x.yaml", frozenset())
    for name in sorted(names.MODULE_NAMES):
        with pytest.raises(SpecError, match="an op may not be named"):
            parse_spec(f"- name: {name}(Tensor self) -> Tensor\n  self: grad\n", "x.yaml",
                       frozenset())


def test_the_repository_spec_needs_no_reserved_name(tmp_path: Path) -> None:
    copy = tmp_path / "derivatives.yaml"
    shutil.copy(ROOT / "derivatives.yaml", copy)
    assert load_spec(copy)
