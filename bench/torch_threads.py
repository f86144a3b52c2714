"""torch's TinyModel step with torch's default threads; run by bench/run.py in its own process."""

from __future__ import annotations

import json
import sys

from bench import systems
from bench.common import LR, median_time, repeats


def main() -> None:
    batches, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
    results = {}
    for batch in batches:
        step = systems.torch_step(*systems.tinymodel_inputs(batch), LR)
        results[batch] = median_time(step, repeats(batch, repeat))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
