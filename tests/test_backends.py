"""torch.backends' flags and torch.use_deterministic_algorithms, as a CPU-only torch reports
them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle import same, same_outcome


def test_flags_as_a_cpu_only_torch_reports_them() -> None:
    def program(lib: Any) -> Any:
        b = lib.backends
        return [b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
                b.cudnn.is_available(), b.cudnn.version(), b.cudnn.benchmark_limit,
                b.mps.is_available(), b.mps.is_built(), b.mkldnn.is_available(),
                b.mkldnn.enabled, b.openmp.is_available(), b.mkl.is_available(),
                b.cuda.is_built(), b.opt_einsum.is_available(), b.opt_einsum.enabled,
                b.opt_einsum.strategy, b.opt_einsum.get_opt_einsum(),
                b.cuda.matmul.allow_tf32, b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                b.cuda.matmul.allow_bf16_reduced_precision_reduction,
                b.cuda.flash_sdp_enabled(), b.cuda.math_sdp_enabled(),
                b.cuda.mem_efficient_sdp_enabled(), b.cpu.get_cpu_capability()]

    assert same(program)[0][0] == "returns"


@pytest.fixture(autouse=True)
def _torch_flags_as_a_fresh_process_has_them() -> Any:
    """torch's backend flags as a fresh CPU-only process has them, restored afterwards:
    torch's test utilities (imported by other test files of the run) freeze the global
    flags (torch.backends.disable_global_flags), which a fresh program's torch does not."""
    import torch

    backends = torch.backends.flags_frozen.__globals__  # the module where the flag lives
    frozen_key = "__allow_nonbracketed_mutation_flag"
    frozen = backends[frozen_key]
    backends[frozen_key] = True
    saved = (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
             torch.backends.cudnn.deterministic, torch.backends.mkldnn.enabled)
    torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark = True, False
    torch.backends.cudnn.deterministic, torch.backends.mkldnn.enabled = False, True
    yield
    (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark,
     torch.backends.cudnn.deterministic, torch.backends.mkldnn.enabled) = saved
    backends[frozen_key] = frozen


def test_flags_can_be_set_and_restored() -> None:
    def program(lib: Any) -> Any:
        b = lib.backends
        seen = []
        with b.cudnn.flags(enabled=False, deterministic=True):
            seen.append((b.cudnn.enabled, b.cudnn.deterministic, b.cudnn.benchmark))
        seen.append((b.cudnn.enabled, b.cudnn.deterministic))
        seen.append(b.cudnn.set_flags(True, True))
        seen.append(b.cudnn.set_flags(True, False))
        with b.mkldnn.flags(enabled=False):
            seen.append(b.mkldnn.enabled)
        seen.append(b.mkldnn.enabled)
        b.cudnn.benchmark = True
        seen.append(b.cudnn.benchmark)
        b.cudnn.benchmark = False
        return seen

    # (mkldnn's TF32 warning is torch's once per process: another test may have drawn it)
    assert same_outcome(program)[0] == "returns"


def test_importing_the_submodules() -> None:
    def program(lib: Any) -> Any:
        import importlib

        name = lib.__name__
        found = []
        for sub in ("cudnn", "mps", "mkldnn", "openmp", "mkl", "cuda", "opt_einsum", "cpu"):
            found.append(getattr(lib.backends, sub) is importlib.import_module(
                f"{name}.backends.{sub}"))
        return found

    assert same(program)[0] == ("returns", [True] * 8)


DETERMINISTIC = {
    "on": lambda lib: (lib.use_deterministic_algorithms(True),
                       lib.are_deterministic_algorithms_enabled(),
                       lib.is_deterministic_algorithms_warn_only_enabled(),
                       lib.get_deterministic_debug_mode()),
    "warn only": lambda lib: (lib.use_deterministic_algorithms(True, warn_only=True),
                              lib.are_deterministic_algorithms_enabled(),
                              lib.is_deterministic_algorithms_warn_only_enabled(),
                              lib.get_deterministic_debug_mode()),
    "debug modes": lambda lib: [(lib.set_deterministic_debug_mode(mode),
                                 lib.get_deterministic_debug_mode(),
                                 lib.are_deterministic_algorithms_enabled())
                                for mode in ("warn", "error", "default", 1, 2, 0, True)],
    "mode not bool": lambda lib: lib.use_deterministic_algorithms(1),
    "warn_only not bool": lambda lib: lib.use_deterministic_algorithms(True, warn_only=1),
    "bad name": lambda lib: lib.set_deterministic_debug_mode("x"),
    "bad number": lambda lib: lib.set_deterministic_debug_mode(5),
    "bad type": lambda lib: lib.set_deterministic_debug_mode(1.5),
}


@pytest.mark.parametrize("case", sorted(DETERMINISTIC))
def test_deterministic_algorithms(case: str) -> None:
    def program(lib: Any) -> Any:
        try:
            return DETERMINISTIC[case](lib)
        finally:
            lib.use_deterministic_algorithms(False)

    same(program)
