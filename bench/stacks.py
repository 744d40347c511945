"""Where a profiled server spent its time: the functions of py-spy's collapsed stacks, by share of samples.

``bench/live_load.py --profile DIR`` records, for each run, the stacks of
the thread holding the interpreter lock (``py-spy record --gil --format
raw``). This prints, for one such file, the share of samples in which each
function was on the stack (inclusive) and at its top (leaf).

    python bench/stacks.py /tmp/profiles/test-50-41234.txt --top 40
"""

from __future__ import annotations

import argparse
import collections
import re
import sys

FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^():]*)(?::\d+)?\)$")


def _function(frame: str) -> str:
    """``Class.method file.py`` for a frame ``Class.method (path/file.py:123)``."""
    found = FRAME.match(frame)
    if found is None:
        return frame[:120]
    return f"{found['name']} {found['file'].rsplit('/', 1)[-1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="py-spy raw (collapsed) output")
    parser.add_argument("--top", type=int, default=30, help="functions to list (default 30)")
    args = parser.parse_args()
    inclusive: collections.Counter[str] = collections.Counter()
    leaf: collections.Counter[str] = collections.Counter()
    total = 0
    with open(args.file) as lines:
        for line in lines:
            stack, _, count = line.rstrip().rpartition(" ")
            samples = int(count)
            total += samples
            frames = [_function(frame) for frame in stack.split(";")[1:]]  # [0]: the process
            if frames:
                leaf[frames[-1]] += samples
            for name in set(frames):
                inclusive[name] += samples
    print(f"{total} samples")
    print("| inclusive % | function |\n|---|---|")
    for name, samples in inclusive.most_common(args.top):
        print(f"| {samples * 100 / total:.1f} | `{name}` |")
    print("\n| leaf % | function |\n|---|---|")
    for name, samples in leaf.most_common(args.top // 2):
        print(f"| {samples * 100 / total:.1f} | `{name}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
