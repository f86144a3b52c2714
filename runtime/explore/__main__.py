"""`python -m runtime.explore prog.py [args] --out page.html [--var NAME] [--profile]`.

Runs the program on gradgen as `python -m runtime` does, recording its backward calls (and,
with --profile, everything under gradgen's profiler with FLOPs), then writes the explorer
page of the tensor `--var` (by default `loss`, else the last global tensor with a graph),
showing the last backward that ran through it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from runtime import __main__ as runner
from runtime import aliases, viz
from runtime.explore import _Last, explore
from runtime.explore.record import Recording
from runtime.profiler import recorder as profiler

USAGE = "python -m runtime.explore prog.py [args ...] [--out page.html] [--var NAME] [--profile]"


def _run(program: str, args: list[str]) -> dict[str, Any]:
    aliases.install_as_torch()
    runner.run_program(program, args)
    return vars(sys.modules["__main__"])


def main(argv: list[str] | None = None, run: Callable[[str, list[str]], dict] = _run) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime.explore", usage=USAGE,
                                     description="Write the autograd explorer page of a "
                                                 "program's tensor.", allow_abbrev=False)
    parser.add_argument("program")
    parser.add_argument("--out", default="explore.html", help="the page (explore.html)")
    parser.add_argument("--var", default=None, help="the global tensor to show (loss)")
    parser.add_argument("--profile", action="store_true",
                        help="time each node and count its FLOPs with the profiler")
    parser.add_argument("--layout", default="auto", choices=("auto", "dot", "layered"))
    options, program_args = parser.parse_known_args(argv)
    recorder = Recording()
    _Last.recording = recorder
    timer = profiler.Recorder(with_flops=True) if options.profile else None
    with recorder:
        if timer is not None:
            profiler.start(timer)
        try:
            namespace = run(options.program, program_args)
        finally:
            if timer is not None:
                profiler.stop(timer)
    name, tensor = viz.pick_tensor(namespace, options.var)
    page = explore(tensor, options.out, params=viz._parameters(namespace), name=name,
                   record=recorder, layout=options.layout)
    ran = len(page.data["order"])
    what = f"{ran} nodes of its backward" if ran else "no backward recorded"
    print(f"runtime.explore: the page of {name!r} ({len(page.data['boxes'])} boxes, {what}) "
          f"is in {options.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
