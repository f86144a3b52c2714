"""The traced lines are trees from trace to printer (runtime/compile/emit.py): the tracer
builds ast nodes, the passes rewrite them, and the printer unparses them last. No line is
written as text and parsed back on the way."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

import runtime
from runtime.compile import forms
from runtime.compile import step as step_module


def _tiny_step(optimizer_name: str):
    runtime.manual_seed(0)
    model = runtime.nn.Sequential(runtime.nn.Linear(8, 4), runtime.nn.ReLU(),
                                  runtime.nn.Linear(4, 2))
    optimizer = getattr(runtime.optim, optimizer_name)(model.parameters(), lr=0.01)
    x, y = runtime.randn(3, 8), runtime.randn(3, 2)

    def step():
        optimizer.zero_grad()
        loss = (y - model(x)).pow(2).sum()
        loss.backward()
        optimizer.step()
        return loss

    return step


@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
def test_a_trace_parses_no_text(monkeypatch, optimizer_name):
    """While a step is traced and its code printed, nothing under runtime/compile calls
    ast.parse (the spec's numpy: forms are parsed once, before, from spec_data); every line
    holds a tree, and the code is those trees unparsed."""
    forms.forms()  # (the spec's forms, parsed once per process)
    parse, callers = ast.parse, []

    def watched(*args, **kwargs):
        callers.append(inspect.stack()[1].filename)
        return parse(*args, **kwargs)

    printed = []
    format_lines = step_module._format

    def printing(source, returned):
        printed.extend(source.lines)
        return format_lines(source, returned)

    monkeypatch.setattr(step_module, "_format", printing)
    monkeypatch.setattr(ast, "parse", watched)
    compiled = runtime.compile(_tiny_step(optimizer_name))
    for _ in range(3):
        compiled()
    monkeypatch.setattr(ast, "parse", parse)
    assert compiled.fallback_reason is None, compiled.fallback_reason
    assert not [c for c in callers if "runtime/compile" in c.replace("\\", "/")], callers
    lines = printed
    assert lines and all(isinstance(line.statement(), ast.stmt) for line in lines)
    assert not any(hasattr(line, "expression") for line in lines)
    code = compiled.code
    for line in lines:
        assert ast.unparse(line.statement()) in code


def test_a_negative_literal_keeps_its_meaning_in_a_power():
    """A negative number is a unary minus over a constant: printed `(-1) ** x` where the
    power binds tighter, never `-1 ** x` (which Python reads as -(1 ** x))."""
    from runtime.compile.emit import number, var

    tree = ast.BinOp(number(-1.5), ast.Pow(), var("x"))
    text = ast.unparse(tree)
    assert text == "(-1.5) ** x"
    assert eval(text, {"x": np.float64(2.0)}) == 2.25
    assert ast.unparse(number(-0.0)) == "-0.0"
    assert np.signbit(eval(ast.unparse(number(-0.0))))
