#!/usr/bin/env python3
"""The counts of one test layer's log, as its runner printed them (cargo
test, the sqllogictest runner, pytest), or with --total the sum over several
logs as one closing line `N passed, N failed` (scripts/test.sh)."""
from __future__ import annotations

import re
import sys


def counts(text: str) -> tuple[int, int]:
    passed = failed = 0
    # cargo: one "test result: ok. N passed; M failed; ..." per test binary.
    cargo = re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", text)
    if cargo:
        return sum(int(p) for p, _ in cargo), sum(int(f) for _, f in cargo)
    # The sqllogictest runner and pytest: the last line that counts.
    for line in reversed(text.splitlines()):
        p = re.search(r"(\d+) passed", line)
        f = re.search(r"(\d+) (?:failed|error)", line)
        if p or f:
            passed = int(p.group(1)) if p else 0
            failed = int(f.group(1)) if f else 0
            break
    return passed, failed


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--total":
        total_p = total_f = 0
        for path in argv[1:]:
            with open(path, errors="replace") as f:
                p, fl = counts(f.read())
            total_p, total_f = total_p + p, total_f + fl
        print(f"{total_p} passed, {total_f} failed")
        return 0
    with open(argv[0], errors="replace") as f:
        p, fl = counts(f.read())
    print(f"{p} passed, {fl} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
