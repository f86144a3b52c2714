"""The spec's `numpy:` forms: a kernel call written as the numpy expression it computes.

derivatives.yaml may declare, per op, numpy expressions over its arguments (`mm`: `self @
mat2`), each for the calls where its `when` holds; a traced kernel call is written as the first
that gives the kernel's result on the traced values (dtype, shape, strides, bits, and a view
exactly where the kernel made one). A `quiet` form runs with numpy's warnings off, as its kernel
does. Nothing here knows an op by name: generated/spec_data.py holds the forms."""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import inspect
import warnings
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from generated.spec_data import NUMPY_FORMS
from runtime import kernels
from runtime.compile.emit import same_bits
from runtime.compile.numbers import READ_AFRESH


class Form(NamedTuple):
    """One `numpy:` form of a kernel, parsed: where it applies and what it writes."""

    params: tuple[str, ...]  # the kernel's parameters, in order
    defaults: dict[str, Any]  # their defaults (a `when` reads the value the call had)
    tree: ast.Expression
    when: ast.Expression | None  # on the non-Tensor arguments and dtypes; None: always
    quiet: bool  # the kernel computes it with numpy's warnings off


@functools.cache
def forms() -> dict[str, tuple[Form, ...]]:
    """Kernel name -> its parsed `numpy:` forms, in the spec's order."""
    table = {}
    for name, entries in NUMPY_FORMS.items():
        kernel = getattr(kernels, name, None)
        if kernel is None:
            continue
        # (While a step is traced, the kernels are listeners that wrap them.)
        kernel = getattr(kernel, "__wrapped__", kernel)
        parameters = inspect.signature(kernel).parameters
        defaults = {k: p.default for k, p in parameters.items()
                    if p.default is not inspect.Parameter.empty}
        table[name] = tuple(
            Form(tuple(parameters), defaults, ast.parse(form, mode="eval"),
                 ast.parse(when, mode="eval") if when else None, quiet)
            for form, when, quiet in entries)
    return table


def rewrite(callee: ast.expr, args: tuple, kwargs: dict, values: tuple, result: Any,
            render: Any) -> tuple[ast.expr, bool] | None:
    """A kernel's call `kernels.NAME(*args)` as the first of its forms that applies, and whether
    it is quiet; None if none (or if a number read afresh is an argument). `values` are the
    arrays and numbers of `args`."""
    kernel = callee.attr if type(callee) is ast.Attribute and \
        getattr(callee.value, "id", "") == "kernels" else ""
    entries = forms().get(kernel)
    if entries is None or kwargs or type(result) is not np.ndarray or \
            any(type(v) in READ_AFRESH for v in args):
        return None
    for form in entries:
        tree = _apply(form, args, values, result, render)
        if tree is not None:
            return tree, form.quiet
    return None


def _apply(form: Form, args: tuple, values: tuple, result: np.ndarray,
           render: Any) -> ast.expr | None:
    if len(args) > len(form.params):
        return None
    bound = {**form.defaults, **dict(zip(form.params, values, strict=False))}
    if form.when is not None and evaluated(form.when, {"__builtins__": {}}, bound) is not True:
        return None
    names = {node.id for node in ast.walk(form.tree) if isinstance(node, ast.Name)} - {"np"}
    if not names <= set(form.params[:len(args)]):
        return None
    got = evaluated(form.tree, {"np": np}, bound)
    if not _same_result(got, result, [v for v in values if isinstance(v, np.ndarray)]):
        return None
    trees = dict(zip(form.params, map(render, args), strict=False))
    return _Substitute(trees).visit(copy.deepcopy(form.tree)).body


def evaluated(tree: ast.Expression, namespace: dict, bound: dict) -> Any:
    """An expression (a form, its `when`, a line optimize.py rewrites) on traced values,
    quietly (a check, not the step's work: it must not warn); None where it raises."""
    try:
        with quiet():
            return eval(compile(tree, "<numpy form>", "eval"), namespace, bound)  # noqa: S307
    except Exception:
        return None


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """numpy's and Python's warnings off, for work done only to check a rewrite."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _same_result(got: Any, expected: np.ndarray, arguments: list[np.ndarray]) -> bool:
    """Whether `got` is the kernel's `expected`: the same bits and layout, and a view of an
    argument exactly where `expected` is one."""
    if not same_bits(got, expected, strides=True):
        return False
    if _fresh(expected, arguments):
        return _fresh(got, arguments)
    return got.base is expected.base


def _fresh(array: np.ndarray, arguments: list[np.ndarray]) -> bool:
    return array.base is None or not any(np.may_share_memory(array, a) for a in arguments)


class _Substitute(ast.NodeTransformer):
    """Each argument's name replaced by the step's expression for it."""

    def __init__(self, trees: dict[str, ast.expr]) -> None:
        self.trees = trees

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 - ast's naming
        tree = self.trees.get(node.id)
        return node if tree is None else copy.deepcopy(tree)
