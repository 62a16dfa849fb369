#!/usr/bin/env python3
"""Seeded generator of "CSV-like" JSON Lines: every value is a string.

Integers, grouped floats ("1,234.56"), Boolean tokens, ISO timestamps, dates
and times, free text, with occasional surrounding spaces and junk values, so
that the string parsers (parse_* options) have real work and real misses.
Usage: gen_strings.py (--rows N | --size-mb M) [--seed S] --out PATH
"""
from __future__ import annotations

import argparse
import os
import random
import time

WORDS = ["alpha", "beta", "gamma", "delta", "n/a", "unknown", "", "  ", "TBD"]
BOOLS = ["yes", "no", "Yes", "NO", "y", "n"]


def _row(rng: random.Random, i: int, base: int) -> str:
    r = rng.random
    ts = base + i * 3
    t = time.gmtime(ts)
    qty = str(rng.randrange(0, 100000)) if r() > 0.02 else rng.choice(WORDS)
    price_int = rng.randrange(0, 10_000_000)
    price = f"{price_int // 100:,}.{price_int % 100:02d}" if r() > 0.02 else "N/A"
    active = rng.choice(BOOLS) if r() > 0.02 else "maybe"
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", t) if r() > 0.02 else "not a date"
    day = time.strftime("%Y-%m-%d", t)
    if r() < 0.1:
        day = f" {day} "
    clock = time.strftime("%H:%M:%S", t)
    note = rng.choice(WORDS)
    return (
        f'{{"id":"{i}","qty":"{qty}","price":"{price}","active":"{active}","created":"{created}",'
        f'"day":"{day}","clock":"{clock}","note":"{note}","code":"{rng.randrange(100000):05d}"}}\n'
    )


def generate_file(path: str, seed: int, rows: int | None = None, size_mb: float | None = None) -> tuple[int, int]:
    rng = random.Random(seed)
    base = 1_767_225_600  # 2026-01-01T00:00:00Z
    limit = int(size_mb * 1_000_000) if size_mb is not None else None
    tmp = f"{path}.tmp-{os.getpid()}"
    written, i = 0, 0
    with open(tmp, "w", encoding="utf-8", buffering=4 << 20) as f:
        while (rows is None or i < rows) and (limit is None or written < limit):
            line = _row(rng, i, base)
            f.write(line)
            written += len(line)
            i += 1
    os.replace(tmp, path)
    return i, written


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rows", type=int)
    g.add_argument("--size-mb", type=float)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    rows, nbytes = generate_file(a.out, a.seed, rows=a.rows, size_mb=a.size_mb)
    print(f"{rows} rows, {nbytes} bytes")


if __name__ == "__main__":
    main()
