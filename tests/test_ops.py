"""Every op of the spec, on every one of its samples: finite differences, second order,
and PyTorch (forward values, gradients, grad_fn names). Driven by the spec alone."""

from __future__ import annotations

import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

from codegen import verify

INFOS = verify.load()
CASES = [(info, sample) for info in INFOS for sample in verify.samples(info)]


def test_torch_is_the_pinned_oracle() -> None:
    assert torch.__version__.split("+")[0] == "2.13.0"


@pytest.mark.parametrize("info", INFOS, ids=lambda info: info.name)
def test_every_op_declares_samples(info) -> None:
    assert info.samples, f"{info.name} ({info.location}) declares no samples"


@pytest.mark.parametrize(
    ("info", "sample"), CASES, ids=[f"{i.name}-{s.index}" for i, s in CASES]
)
def test_formula(info, sample) -> None:
    checks = verify.check_sample(info, sample, use_torch=True)
    assert checks, f"{info.name} sample {sample.index}: nothing was checked"
    failed = [c for c in checks if not c.ok]
    assert not failed, "\n".join(
        f"{c.op} sample {c.sample}: {c.what} {c.input}: error {c.error} {c.detail}"
        for c in failed
    )
