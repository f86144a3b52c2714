"""One system's long chain (time, and bytes kept per node); run by bench/run.py in a
process of its own, so that memory an earlier benchmark freed cannot hide the growth."""

from __future__ import annotations

import json
import sys

from bench import systems

USAGE = ("usage: python -m bench.long_chain SYSTEM LENGTH  (bench/run.py's worker: one "
         "system's chain as JSON; SYSTEM is one of {})")


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in systems.LONG_CHAINS:
        print(USAGE.format(", ".join(systems.LONG_CHAINS)),
              file=sys.stdout if sys.argv[1:2] in (["-h"], ["--help"]) else sys.stderr)
        sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
    name, length = sys.argv[1], int(sys.argv[2])
    print(json.dumps(systems.LONG_CHAINS[name](length)))


if __name__ == "__main__":
    main()
