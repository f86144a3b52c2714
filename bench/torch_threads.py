"""torch's TinyModel step with torch's default threads; run by bench/run.py in its own process."""

from __future__ import annotations

import json
import sys

from bench import systems
from bench.common import LR, median_time, repeats

USAGE = ("usage: python -m bench.torch_threads BATCHES REPEAT  (bench/run.py's worker: "
         "torch's TinyModel step at each batch of the JSON list BATCHES, as JSON)")


def main() -> None:
    if len(sys.argv) != 3:
        wanted = sys.argv[1:2] in (["-h"], ["--help"])
        print(USAGE, file=sys.stdout if wanted else sys.stderr)
        sys.exit(0 if wanted else 2)
    batches, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
    results = {}
    for batch in batches:
        step = systems.torch_step(*systems.tinymodel_inputs(batch), LR)
        results[batch] = median_time(step, repeats(batch, repeat))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
