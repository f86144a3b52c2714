"""gradgen's benchmarks (`python bench/run.py`, `python -m bench.batch_scaling`, ...).

Importing the package first, as `python -m bench.NAME` does, drops OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE before numpy loads OpenBLAS: some machines set them for old OpenBLAS
builds, and they slow a current numpy's matrix products about 1.6x. The benchmarks time
the BLAS numpy picks by itself (bench/run.py reports which); tests and CI leave them set.
"""

import os
import sys

# Only before numpy loads: imported by a test (numpy already loaded), the environment its
# subprocesses inherit stays as it was.
if "numpy" not in sys.modules:
    for _variable in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        os.environ.pop(_variable, None)
