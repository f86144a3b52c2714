"""The factories' Python signatures are parsed by the generator, not while a program runs.

codegen/python_signatures.py holds torch's signature text of each factory and parses it;
generated/signatures.py holds the records; runtime/arguments.py's parser reads only those.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import torch

import runtime
from codegen.python_signatures import SIGNATURES, SignatureError, parse_signature
from generated.signatures import SIGNATURES as GENERATED

ROOT = Path(__file__).resolve().parent.parent


def test_generated_records_are_the_parsed_text() -> None:
    assert list(GENERATED) == list(SIGNATURES)
    for function, texts in SIGNATURES.items():
        for text, record in zip(texts, GENERATED[function], strict=True):
            parsed = parse_signature(text)
            assert record.name == parsed.name == function
            assert [(p.name, p.kind, p.allow_none, p.has_default, p.default, p.keyword_only)
                    for p in record.params] == [
                (p.name, p.kind, p.allow_none, p.optional, p.default, p.keyword_only)
                for p in parsed.params]


def test_generated_signatures_print_as_torchs() -> None:
    """The signature lists of an invalid-combination message come from the records."""
    with pytest.raises(TypeError) as expected:
        torch.eye(None, 2)
    with pytest.raises(TypeError) as got:
        runtime.eye(None, 2)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize(("text", "problem"), [
    ("zeros(int[] size", "expected 'name(parameters)'"),
    ("zeros(Blob size)", "unknown type 'Blob'"),
    ("zeros(int[] size=[1])", "bad default"),
    ("zeros(int[] size, int size)", "named twice"),
    ("zeros(int[]size)", "malformed parameter"),
])
def test_bad_signature_text_is_refused(text: str, problem: str) -> None:
    with pytest.raises(SignatureError, match=re.escape(problem)):
        parse_signature(text)


def _signature_text_calls(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line` of each call in a runtime module that gives a parser signature text: a
    string or f-string argument to `Parser` or `Signature` (a Param's name and type are
    no signature text)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
            node.func, "id", "")
        if name in ("Parser", "Signature") and any(
                isinstance(a, ast.Constant | ast.JoinedStr) and isinstance(
                    getattr(a, "value", ""), str) for a in node.args):
            found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return found


def test_no_signature_text_is_parsed_at_run_time() -> None:
    """No runtime module hands a parser signature text, and the parser's records take none:
    a Signature is built from Parameter records only."""
    found = [hit for path in sorted((ROOT / "runtime").rglob("*.py"))
             for hit in _signature_text_calls(path)]
    assert found == []
    with pytest.raises(TypeError):
        runtime.arguments.Signature("zeros(int[] size)")  # type: ignore[call-arg]
    assert not hasattr(runtime.arguments, "parse_signature")
    assert not (ROOT / "runtime" / "factory_args.py").exists()
    assert not (ROOT / "runtime" / "dispatch.py").exists()


def test_the_checker_sees_a_signature_text(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('P = Parser("zeros(int[] size)")\nQ = args.Parser(f"x({1})")\n'
                     'R = Parser(SIGNATURES["zeros"])\n')
    assert _signature_text_calls(probe, tmp_path) == ["probe.py:1", "probe.py:2"]
