"""`python -m runtime.compile prog.py [args]`: run a PyTorch program on gradgen (as
`python -m runtime` does) and print the generated code of every step it compiles with
`torch.compile`, when it is traced (or, for a step that runs eagerly, the reason)."""

from __future__ import annotations

import os
import sys

from runtime.__main__ import main
from runtime.compile.step import PRINT_CODE, PRINTED

USAGE = """\
usage: python -m runtime.compile prog.py [args ...]
       python -m runtime.compile -m module [args ...]

Run a PyTorch program on gradgen, as `python -m runtime` does, and print the code
runtime.compile generated for each step the program compiles with torch.compile (or, for
a step that runs eagerly, why). A program that compiles nothing is said to."""


def run(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    os.environ[PRINT_CODE] = "1"
    status = main(argv)
    if not PRINTED[0]:
        print("runtime.compile: the program compiled no step (it never called a function "
              "made by torch.compile): nothing to print", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
