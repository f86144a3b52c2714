"""`python -m runtime.compile prog.py [args]`: run a PyTorch program on gradgen (as
`python -m runtime` does) and print the generated code of every step it compiles with
`torch.compile`, when it is traced (or, for a step that runs eagerly, the reason)."""

from __future__ import annotations

import os
import sys

from runtime.__main__ import main
from runtime.compile.step import PRINT_CODE

if __name__ == "__main__":
    os.environ[PRINT_CODE] = "1"
    sys.exit(main(sys.argv[1:]))
