"""torch's TinyModel step with torch's default threads; run by bench/run.py in its own process."""

from __future__ import annotations

import json
import sys

import numpy as np

from bench import systems
from bench.common import DIM_IN, DIM_OUT, HIDDEN, LR, median_time


def main() -> None:
    batches, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
    results = {}
    for batch in batches:
        rng = np.random.default_rng(batch)
        weights = systems.init_weights(rng, DIM_IN, HIDDEN, DIM_OUT)
        x = rng.standard_normal((batch, DIM_IN)).astype(np.float32)
        y = rng.standard_normal((batch, DIM_OUT)).astype(np.float32)
        step = systems.torch_step(weights, x, y, LR)
        results[batch] = median_time(step, max(3, repeat if batch < 1024 else repeat // 4))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
