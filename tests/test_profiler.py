"""runtime.profiler and runtime.autograd.profiler against torch's profilers: the same op and
node names and call counts for a TinyModel step, the same FLOPs, input shapes and bytes
for the matmuls, torch's table layout and errors, and a chrome trace that loads."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.profiler

import runtime
from generated import ops as generated_ops
from runtime import engine, kernels, modes
from runtime.namespaces import array_ops
from runtime.profiler import ProfilerActivity, profile, record_function
from tests.oracle import tiny_model as tiny_model_of

ROOT = Path(__file__).resolve().parent.parent
EVALUATE = "autograd::engine::evaluate_function: "


def tiny_step(lib, **options):
    """Profile one forward and backward of the seed's TinyModel, built with `lib`."""
    lib.manual_seed(0)
    model = tiny_model_of(lib)
    some_input, ideal_output = lib.randn(16, 1000), lib.randn(16, 10)
    with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], **options) as prof:
        with lib.profiler.record_function("step"):
            loss = (ideal_output - model(some_input)).pow(2).sum()
            loss.backward()
    return prof


def rows(prof, **kwargs):
    return {row.key: row for row in prof.key_averages(**kwargs)}


@pytest.fixture(scope="module")
def both():
    options = {"record_shapes": True, "profile_memory": True, "with_flops": True}
    return tiny_step(runtime, **options), tiny_step(torch, **options)


def test_backward_nodes_are_named_and_counted_as_torch_does(both) -> None:
    ours, theirs = rows(both[0]), rows(both[1])
    nodes = {key: row.count for key, row in ours.items() if key.startswith(EVALUATE)}
    assert nodes == {key: row.count for key, row in theirs.items() if key.startswith(EVALUATE)}
    assert nodes[EVALUATE + "AddmmBackward0"] == 2
    assert nodes[EVALUATE + "torch::autograd::AccumulateGrad"] == 4


def test_forward_ops_have_torch_names_and_counts(both) -> None:
    ours, theirs = rows(both[0]), rows(both[1])
    # The ops of the forward pass, each with as many calls as torch records (the t() calls
    # of the backward formulas included; mm runs only in backward).
    for name in ("aten::addmm", "aten::relu", "aten::sub", "aten::t", "aten::mm"):
        assert ours[name].count == theirs[name].count, name
    assert ours["step"].count == theirs["step"].count == 1


def test_matmul_flops_are_2mnk_as_torch_counts_them(both) -> None:
    ours, theirs = rows(both[0]), rows(both[1])
    assert ours["aten::addmm"].flops == theirs["aten::addmm"].flops == 2 * 16 * 100 * (
        1000 + 10)  # layer1: 16x1000 @ 1000x100, layer2: 16x100 @ 100x10
    assert ours["aten::mm"].flops == theirs["aten::mm"].flops
    # Elementwise: one per element of the result (torch counts mul and add so).
    assert ours["aten::sub"].flops == 16 * 10
    assert ours["aten::t"].flops == 0


def test_input_shapes_and_memory_match_torch(both) -> None:
    ours = rows(both[0], group_by_input_shape=True)
    theirs = {(r.key, str(r.input_shapes)): r
              for r in both[1].key_averages(group_by_input_shape=True)}
    mine = {(r.key, str(r.input_shapes)): r
            for r in both[0].key_averages(group_by_input_shape=True)}
    assert ours  # grouped rows exist
    for key in [("aten::addmm", "[[100], [16, 1000], [1000, 100], [], []]"),
                ("aten::addmm", "[[10], [16, 100], [100, 10], [], []]"),
                ("aten::relu", "[[16, 100]]"), ("aten::t", "[[100, 1000]]")]:
        assert key in mine and key in theirs, key
        # Bytes of the new arrays: 16x100 float32 for layer1's addmm, none for a view (torch's
        # relu allocates in a clamp_min inside it: compare the totals).
        assert mine[key].cpu_memory_usage == theirs[key].cpu_memory_usage, key
    assert mine[("aten::addmm", "[[100], [16, 1000], [1000, 100], [], []]")] \
        .self_cpu_memory_usage == 16 * 100 * 4


def test_times_add_up(both) -> None:
    events = both[0].events()
    step = next(e for e in events if e.name == "step")
    assert all(e.cpu_time_total >= 0 and e.self_cpu_time_total >= -1e-6 for e in events)
    assert step.cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    node = next(e for e in events if e.name == EVALUATE + "AddmmBackward0")
    assert [child.name for child in node.cpu_children].count("aten::mm") >= 1
    assert node.self_cpu_time_total < node.cpu_time_total


def test_table_has_torch_columns_sorting_and_limit(both) -> None:
    ours, theirs = both[0].key_averages(), both[1].key_averages()
    table = ours.table(sort_by="self_cpu_time_total", row_limit=5)
    lines = table.splitlines()
    header = [h for h in lines[1].split("  ") if h.strip()]
    their_header = [h for h in theirs.table(row_limit=1).splitlines()[1].split("  ") if h.strip()]
    assert [h.strip() for h in header] == [h.strip() for h in their_header]
    body = lines[3:-2]
    assert len(body) == 5
    values = sorted((r.self_cpu_time_total for r in ours), reverse=True)[:5]
    assert [line.split()[0] for line in body][0] == max(ours, key=lambda r: r.self_cpu_time_total
                                                        ).key.split()[0]
    assert values == sorted(values, reverse=True)
    assert lines[-1].startswith("Self CPU time total: ")
    with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
        ours.table(sort_by="bogus")
    with pytest.raises(AttributeError, match="'FunctionEventAvg' object has no attribute 'bogus'"):
        theirs.table(sort_by="bogus")


def test_chrome_trace_has_one_event_per_call(both, tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    both[0].export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(both[0].events())
    assert [e["name"] for e in events] == [e.name for e in both[0].events()]
    step = next(e for e in events if e["name"] == "step")
    assert step["cat"] == "user_annotation"
    for event in events:
        assert event["dur"] >= 0 and event["ts"] >= step["ts"]
        assert event["ts"] + event["dur"] <= step["ts"] + step["dur"] + 1e-3
    addmm = next(e for e in events if e["name"] == "aten::addmm")
    assert addmm["args"]["Input Dims"] == [[100], [16, 1000], [1000, 100], [], []]


def test_nothing_is_replaced_while_recording() -> None:
    x = runtime.ones(2, 2, requires_grad=True)
    with profile() as prof:
        # the profiler is a mode on runtime/modes.py's stack: kernels, array ops and the
        # engine stay as they are (tests/test_modes.py snapshots every module)
        assert kernels.mm is generated_ops.OVERLOADS["mm"].kernel
        assert not any(hasattr(value, "__wrapped__") for value in vars(array_ops).values())
        (x @ x).sum().backward()
    assert not hasattr(engine, "node_hook")
    assert modes.op_modes() == []
    count = len(prof.events())
    (x @ x).sum().backward()  # outside: nothing more recorded
    with record_function("ignored"):
        pass
    assert len(prof.events()) == count


def test_a_failing_block_stops_the_recording() -> None:
    x = runtime.ones(2)
    with pytest.raises(ValueError), profile() as prof:
        x + 1
        raise ValueError
    assert modes.op_modes() == [] and modes.active == 0
    count = len(prof.events())
    x + 1
    assert len(prof.events()) == count


def test_one_profiler_at_a_time() -> None:
    with profile(), pytest.raises(RuntimeError, match="Profiler is already enabled"):
        with runtime.autograd.profiler.profile():
            pass


def test_backward_on_tensors_records_its_ops() -> None:
    x = runtime.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    with profile() as prof:
        (gx,) = runtime.autograd.grad(y, x, create_graph=True)
    names = [e.name for e in prof.events()]
    assert names[0] == EVALUATE + "SumBackward0"
    assert EVALUATE + "ExpBackward0" in names and "aten::mul" in names


def test_legacy_profiler_matches_torch_names() -> None:
    def run(lib):
        a = lib.ones(3, 4, requires_grad=True)
        b = lib.ones(4, 2, requires_grad=True)
        with lib.autograd.profiler.profile(with_flops=True) as prof:
            lib.mm(a, b).relu().sum().backward()
        return prof

    ours, theirs = run(runtime), run(torch)
    names = {e.name for e in ours.function_events}
    their_names = {e.name for e in theirs.function_events}
    wanted = {"aten::mm", "aten::relu", "aten::sum", EVALUATE + "MmBackward0",
              EVALUATE + "ReluBackward0", EVALUATE + "SumBackward0"}
    assert wanted <= names and wanted <= their_names
    assert ours.key_averages().table().splitlines()[1] == ours.table().splitlines()[1]
    mm = {r.key: r for r in ours.key_averages()}["aten::mm"]
    their_mm = {r.key: r for r in theirs.key_averages()}["aten::mm"]
    assert mm.flops == their_mm.flops  # forward 3x4 @ 4x2 and the two backward mm's
    assert ours.self_cpu_time_total == pytest.approx(ours.total_average().self_cpu_time_total)
    with runtime.autograd.profiler.profile(enabled=False) as off:
        runtime.ones(2) + 1
    assert off.function_events is None


def test_activities_as_torch() -> None:
    assert str(ProfilerActivity.CPU) == str(torch.profiler.ProfilerActivity.CPU)
    for lib in (runtime, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(AssertionError, match="No activities specified for the profiler"):
                with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CUDA]):
                    pass
        assert any("CUDA is not available, disabling CUDA profiling" in str(w.message)
                   for w in caught)


def test_profiling_works_from_an_unchanged_torch_program(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "import torch\nfrom torch.profiler import profile, record_function\n"
        "import torch.autograd.profiler as legacy\n"
        "x = torch.ones(8, 8, requires_grad=True)\n"
        "with profile(with_flops=True) as prof:\n"
        "    with record_function('mine'):\n"
        "        (x @ x).sum().backward()\n"
        "print(prof.key_averages().table(sort_by='flops', row_limit=1))\n"
        "print(legacy.profile)\n")
    done = subprocess.run([sys.executable, "-m", "runtime", str(program)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    real = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert real.returncode == 0, real.stderr
    ours, theirs = done.stdout.splitlines(), real.stdout.splitlines()
    # The flops column is scaled as torch scales it: 1024 forward, 2 x 1024 backward.
    assert ours[1].split()[-2:] == theirs[1].split()[-2:] == ["Total", "KFLOPs"]
    assert ours[3].split()[0] == theirs[3].split()[0] == "aten::mm"
    assert ours[3].split()[-1] == theirs[3].split()[-1] == "3.072"
    assert "runtime.autograd.profiler.profile" in ours[-1]


def test_memory_counts_new_arrays_only() -> None:
    x = runtime.ones(4, 4)
    with profile(profile_memory=True) as prof:
        y = x * 2  # a new 4x4 float32 array
        y.add_(1)  # written in place
        y.t()  # a view
    memory = {row.key: row.self_cpu_memory_usage for row in prof.key_averages()}
    assert memory == {"aten::mul": 64, "aten::add_": 0, "aten::t": 0}
