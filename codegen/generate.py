"""`generate(spec)`: the whole pipeline, from a spec's path to the text of every generated file.

It reads the spec, and runtime/'s kernels.py and manual.py (with ast: codegen never imports
runtime), and writes nothing. `python -m codegen` writes what it returns (through
codegen/output.py); `verify.prove` and `explain` render a spec fresh with it.
"""

from __future__ import annotations

from pathlib import Path

from codegen.load import check_kernels, function_signatures, load_spec
from codegen.render import render_all

ROOT = Path(__file__).resolve().parent.parent


def generate(spec: Path) -> dict[str, str]:
    """Spec path -> {file name: text}; raises SpecError."""
    kernels = function_signatures(ROOT / "runtime" / "kernels.py", private=True)
    infos = load_spec(spec)
    check_kernels(infos, kernels, "runtime/kernels.py")
    return render_all(infos, spec.name, frozenset(kernels))
