"""gradgen's warnings point at the user's line, as torch's do.

torch's C++ warnings are reported at the Python line that called the op; gradgen's public
functions call one another, so every warning of runtime/ goes through
`runtime._warn.warn_at_caller`, which reports it at the first line outside gradgen's code.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import runtime as torch
from runtime import nn
from runtime.nn import functional as F

ROOT = Path(__file__).resolve().parent.parent


def test_no_warning_of_gradgen_is_given_at_a_fixed_stack_level() -> None:
    offenders = []
    for path in sorted([*ROOT.joinpath("runtime").rglob("*.py"),
                        *ROOT.joinpath("generated").rglob("*.py")]):
        if path.name == "_warn.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "warnings"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, "use runtime._warn.warn_at_caller: " + ", ".join(offenders)


def _variance_of_one() -> None:
    torch.var(torch.tensor([1.0]))


def _deprecated_init() -> None:
    torch.nn.init.normal(torch.empty(2, 2))


def _upsample() -> None:
    F.upsample(torch.ones(1, 1, 2, 2), scale_factor=2)


def _legacy_loss() -> None:
    nn.MSELoss(size_average=False)


def _clip_grad_norm() -> None:
    torch.nn.utils.clip_grad_norm([nn.Parameter(torch.ones(2))], 1.0)


def _range() -> None:
    torch.range(0, 3)


def _rnn_dropout() -> None:
    nn.LSTM(2, 3, num_layers=1, dropout=0.5)


def _sample_n() -> None:
    torch.distributions.Normal(torch.zeros(1), torch.ones(1)).sample_n(2)


def _scheduler_before_step() -> None:
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
    scheduler.step()


def _trunc_normal_far_mean() -> None:
    torch.nn.init.trunc_normal_(torch.empty(3), mean=10.0, a=-1.0, b=1.0)


@pytest.mark.parametrize("program", [
    _variance_of_one, _deprecated_init, _upsample, _legacy_loss, _clip_grad_norm, _range,
    _rnn_dropout, _sample_n, _scheduler_before_step, _trunc_normal_far_mean,
], ids=lambda program: program.__name__.strip("_"))
def test_a_warning_points_at_the_line_that_called_gradgen(program: Callable[[], None]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program()
    assert caught, "the program gave no warning"
    for warning in caught:
        assert Path(warning.filename).resolve() == Path(__file__).resolve(), (
            f"{warning.message} reported at {warning.filename}:{warning.lineno}")
