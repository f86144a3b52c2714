"""codegen reads the spec with libyaml's parser where PyYAML has it (ten times faster than the
pure-Python one): both must give the same nodes, values and marks, which every error
location is computed from."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from codegen import load

ROOT = Path(__file__).resolve().parent.parent


def _nodes(node: yaml.Node) -> list[tuple]:
    here = [(type(node).__name__, node.tag, node.start_mark.index, node.end_mark.index,
             node.start_mark.line, node.start_mark.column,
             node.value if isinstance(node, yaml.ScalarNode) else None,
             getattr(node, "style", None) or None)]
    if isinstance(node, yaml.SequenceNode):
        return here + [n for child in node.value for n in _nodes(child)]
    if isinstance(node, yaml.MappingNode):
        return here + [n for k, v in node.value for n in _nodes(k) + _nodes(v)]
    return here


@pytest.mark.skipif(load._FAST_LOADER is None, reason="PyYAML built without libyaml")
def test_both_parsers_compose_the_spec_alike() -> None:
    path = ROOT / "derivatives.yaml"
    reader = load._Reader(str(path), path.read_text(encoding="utf-8"))
    fast = _nodes(load._compose_with(reader, load._FAST_LOADER))
    slow = _nodes(load._compose_with(reader, yaml.SafeLoader))
    assert len(fast) > 10_000
    assert fast == slow


def test_a_syntax_error_is_reported_by_the_pure_python_parser(tmp_path: Path) -> None:
    """libyaml's messages are not PyYAML's: a spec either parser refuses is read again by
    the pure-Python one, whose message (and location) is the one reported."""
    text = "- name: a(Tensor self) -> Tensor\n  self: [grad\n"
    with pytest.raises(load.SpecError) as fast:
        load._compose(load._Reader("spec.yaml", text))
    with pytest.raises(load.SpecError) as slow:
        load._compose_with(load._Reader("spec.yaml", text), yaml.SafeLoader)
    assert str(fast.value) == str(slow.value)
