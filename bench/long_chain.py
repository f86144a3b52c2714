"""One system's long chain (time, and bytes kept per node); run by bench/run.py in a
process of its own, so that memory an earlier benchmark freed cannot hide the growth."""

from __future__ import annotations

import json
import sys

from bench import systems


def main() -> None:
    name, length = sys.argv[1], int(sys.argv[2])
    print(json.dumps(systems.LONG_CHAINS[name](length)))


if __name__ == "__main__":
    main()
