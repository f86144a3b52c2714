"""The spec's `numpy:` forms: a kernel call written as the numpy expression it computes.

derivatives.yaml may declare, per op, the kernel's result as one numpy expression over the
op's arguments (`mm`: `self @ mat2`, `t`: `self.T`). Where a traced step calls such a
kernel, the generated line is that expression with the step's variables in place of the
arguments (`g5 = g4 @ x3` for `g5 = kernels.mm(g4, x3)`): the same numpy work without a
Python call around it and the checks the trace already passed (the guards keep the shapes
and dtypes those checks looked at). The form is used only when, on the traced call, it
gives what the kernel gave: the same dtype, shape, strides and bits, and a view exactly
where the kernel made a view. Nothing here knows an op by name: what an op allows is
declared in the spec, and checked by codegen/load.py.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from runtime import kernels

_FORMS: dict[str, tuple[tuple[str, ...], ast.Expression]] | None = None


def forms() -> dict[str, tuple[tuple[str, ...], ast.Expression]]:
    """Kernel name -> (its parameters, the parsed `numpy:` form), from the checked spec."""
    global _FORMS
    if _FORMS is None:
        from codegen.load import load_spec

        spec = Path(__file__).resolve().parent.parent.parent / "derivatives.yaml"
        table = {}
        for info in load_spec(spec):
            if info.numpy_form is None:
                continue
            name = info.name.replace(".", "_")  # the kernel's name (generated/ops.py's)
            kernel = getattr(kernels, name, None)
            if kernel is None:
                continue
            # (While a step is traced, the kernels are listeners that wrap them.)
            kernel = getattr(kernel, "__wrapped__", kernel)
            params = tuple(inspect.signature(kernel).parameters)
            table[name] = (params, ast.parse(info.numpy_form, mode="eval"))
        _FORMS = table
    return _FORMS


def rewrite(kernel: str, args: tuple, kwargs: dict, values: tuple, result: Any,
            render: Any) -> str | None:
    """The source of `kernel(*args)` as its `numpy:` form, or None (no form, or the form
    does not give the kernel's result on these values). `values` are the arrays and
    numbers of `args`; `render` writes one argument as source."""
    entry = forms().get(kernel)
    if entry is None or kwargs or type(result) is not np.ndarray:
        return None
    params, tree = entry
    if len(args) > len(params):
        return None
    bound = dict(zip(params, values, strict=False))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} - {"np"}
    if not names <= bound.keys():
        return None
    try:
        with quiet():  # a check, not the step's work: it must not warn
            got = eval(compile(tree, "<numpy form>", "eval"), {"np": np}, bound)  # noqa: S307
    except Exception:  # the form does not apply to these arguments: keep the kernel
        return None
    if not _same_result(got, result):
        return None
    sources = dict(zip(params, map(render, args), strict=False))
    return ast.unparse(_Substitute(sources).visit(copy.deepcopy(tree))).strip()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """numpy's floating-point warnings off, and Python's warnings not shown: for work the
    tracer does only to check a rewrite, which the eager call it watches never did."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _same_result(got: Any, expected: np.ndarray) -> bool:
    if type(got) is not np.ndarray or got.dtype != expected.dtype or \
            got.shape != expected.shape or got.strides != expected.strides:
        return False
    if (got.base is None) != (expected.base is None) or \
            (expected.base is not None and got.base is not expected.base):
        return False
    return np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes()


class _Substitute(ast.NodeTransformer):
    """Each argument's name replaced by the step's source for it (a variable, a literal)."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = sources

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 - ast's naming
        source = self.sources.get(node.id)
        if source is None:
            return node
        return ast.parse(source, mode="eval").body
