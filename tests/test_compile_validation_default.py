"""torch.compile, on its first use, turns off the default argument validation of
torch.distributions in the whole process (torch._dynamo's TorchPatcher); gradgen's compile
does the same, at the same moments: not for a decorator factory or disable=True, but as soon
as a function or module is compiled."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import torch
seen = [torch.distributions.Distribution._validate_args]
torch.compile(lambda x: x, disable=True)
seen.append(torch.distributions.Distribution._validate_args)
decorate = torch.compile(fullgraph=False)
seen.append(torch.distributions.Distribution._validate_args)
decorate(lambda x: x)
seen.append(torch.distributions.Distribution._validate_args)
try:
    torch.distributions.Normal(torch.tensor(0.0), torch.tensor(-1.0))
    seen.append("no error")
except ValueError:
    seen.append("ValueError")
print(seen)
"""


@pytest.mark.parametrize("runner", [[], ["-m", "runtime"]])
def test_compile_turns_off_default_validation_as_torch(tmp_path, runner) -> None:  # noqa: ANN001
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    ran = subprocess.run([sys.executable, "-W", "ignore", *runner, str(program)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[True, True, True, False, 'no error']"
