"""The census of torch's everyday API (bench/census.py): it prints the share of each module
present in gradgen and fails when a figure falls below tests/census_floor.json, a floor
that only rises (`python -m bench.census --write-floor` as names land)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import census

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rows() -> list[census.Row]:
    return census.census()


def test_no_module_falls_below_its_floor(
    rows: list[census.Row], capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():  # the figures, in the log of every run
        print("\n" + census.as_text(rows).split("\n\n")[0])
    floor = json.loads(census.FLOOR.read_text(encoding="utf-8"))
    assert set(floor) == set(census.MODULES)
    fallen = [
        f"{r.module}: {len(r.present)} present, the floor is {floor[r.module]['present']}"
        f" (missing now: {', '.join(sorted(set(r.missing)))})"
        for r in rows
        if len(r.present) < floor[r.module]["present"]
    ]
    assert not fallen, "names that gradgen had are gone:\n" + "\n".join(fallen)


def test_the_figures_add_up(rows: list[census.Row]) -> None:
    assert [r.module for r in rows] == list(census.MODULES)
    for r in rows:
        assert len(r.present) + len(r.missing) == r.total > 0, r.module
        assert not set(r.present) & set(r.missing)
    by_module = {r.module: r for r in rows}
    assert "add" in by_module["torch"].present and "Linear" in by_module["torch.nn"].present
    assert "backward" in by_module[census.TENSOR].present


def test_the_left_out_families_are_not_counted(rows: list[census.Row]) -> None:
    counted = {r.module: set(r.present) | set(r.missing) for r in rows}
    assert not {"cuda", "is_cuda", "to_sparse", "q_scale", "to_mkldnn"} & counted[census.TENSOR]
    assert "compile" in counted["torch"] and "jit" not in counted["torch"]  # torch.compile
    assert not {"ScriptModule", "ScriptFunction", "ScriptDict"} & counted["torch"]  # any case
    assert not {"Type", "unify_type_list", "choose_qparams_optimized"} & counted["torch"]
    assert not {"Optional", "Callable", "has_torch_function"} & counted["torch.nn.functional"]
    assert not any(name.startswith("_") for names in counted.values() for name in names)
    assert not any("foreach" in name for names in counted.values() for name in names)
    by_module = {r.module: r for r in rows}
    assert by_module[census.TENSOR].excluded["sparse and nested layouts"] > 0


def test_a_module_gradgen_lacks_has_none_of_its_names(rows: list[census.Row]) -> None:
    from runtime.aliases import TORCH_MODULES

    for r in rows:
        if r.module != census.TENSOR and r.module not in TORCH_MODULES:
            assert r.gradgen_module is None and r.present == []


def test_the_output_states_the_rules(rows: list[census.Row]) -> None:
    text = census.as_text(rows)
    for _, why in census.EXCLUDED_NAMES + census.EXCLUDED_SOURCES:
        assert why in text
    page = census.as_markdown(rows)
    assert "## Missing names" in page and all(f"### {m} (" in page for m in census.MODULES)


def test_importing_the_census_loads_no_torch() -> None:
    code = "import sys, bench.census; assert 'torch' not in sys.modules, 'torch imported'"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr


def test_the_page_exists_and_names_every_module() -> None:
    page = census.DOCS_PAGE.read_text(encoding="utf-8")
    assert page.startswith("# Census: torch's everyday API in gradgen")
    assert all(f"| {m} |" in page for m in census.MODULES)
