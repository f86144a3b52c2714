"""Every name the formulas and helpers call through `ops` is in every namespace.

codegen checks a formula's calls against the spec and codegen.formula.CORE_TENSOR_METHODS;
runtime/manual.py lists what its helpers call (NAMESPACE_NAMES). Both namespaces of the
runtime must give each of them, so no formula meets a missing name mid-backward.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import runtime  # noqa: F401 - fills the namespaces
from codegen.formula import CORE_TENSOR_METHODS
from runtime import manual
from runtime.namespaces import array_ops, tensor_ops

ROOT = Path(__file__).resolve().parent.parent


def _called_through_ops(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name) and n.value.id == "ops"}


# Backward formulas and helpers run on both; forward-mode (JVP) formulas on Tensors only.
BOTH = sorted(_called_through_ops(ROOT / "generated" / "functions.py")
              | set(manual.NAMESPACE_NAMES) | CORE_TENSOR_METHODS)
TENSORS_ONLY = sorted(_called_through_ops(ROOT / "generated" / "forward.py") - set(BOTH))


def test_the_lists_are_not_empty() -> None:
    assert len(BOTH) > 60 and "unpack" in BOTH and TENSORS_ONLY


@pytest.mark.parametrize("name", BOTH)
def test_both_namespaces_give_it(name: str) -> None:
    assert callable(getattr(tensor_ops, name))
    assert callable(getattr(array_ops, name))


@pytest.mark.parametrize("name", TENSORS_ONLY)
def test_the_tensor_namespace_gives_what_jvps_call(name: str) -> None:
    assert callable(getattr(tensor_ops, name))


def test_type_as_on_both() -> None:
    import numpy as np

    x, y = runtime.ones(2), runtime.zeros(2, dtype=runtime.float64)
    assert tensor_ops.type_as(x, y).dtype == runtime.float64
    assert array_ops.type_as(np.ones(2, np.float32), np.zeros(2)).dtype == np.float64
