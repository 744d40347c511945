"""How long ``import chatledger`` and ``chatledger --help`` take (fresh processes, best and median).

Usage: ``python bench/startup.py [runs]`` (default 5). Also times importing
the store (what any command that touches a store pays once).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

CASES = {
    "import chatledger": [sys.executable, "-c", "import chatledger"],
    "chatledger --help": [sys.executable, "-m", "chatledger", "--help"],
    "import the store": [sys.executable, "-c", "from chatledger import ConversationStore"],
}


def main(runs: int) -> None:
    for name, command in CASES.items():
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - started)
        print(f"{name:<20} best {min(times):.3f} s  median {statistics.median(times):.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
