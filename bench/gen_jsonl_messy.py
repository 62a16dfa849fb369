#!/usr/bin/env python3
"""Seeded generator of "messy" JSON Lines events (schema drift) for the benchmark.

The rows of bench/gen_jsonl.py (same keys, same event shape, same seed
gives the same clean rows), then each row independently, from a second
random stream seeded with seed + 1, gets zero or more of these drifts:

    p      drift
    5%     amount written as a JSON string ("123.45") instead of a number
    5%     quantity a float (e.g. 3.5) instead of an int
    3%     device a string (e.g. "ios/14") instead of an object
    3%     extra keys: "coupon" (string) and "experiment" (object {id: int, arm: string})
    3%     missing keys: one or two of referrer, note, scores, geo removed
    3%     tags a scalar string instead of a list

About 20% of rows carry at least one drift. Drifted rows are re-serialised
with json.dumps(separators=(",", ":")) (key order kept, extras appended), so
they stay one line each. The size limit applies to the output: generation
stops after the first row that reaches --size-mb (decimal MB). Output is a
pure function of (--seed, --size-mb).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time

import gen_jsonl

P_AMOUNT_STR = 0.05
P_QTY_FLOAT = 0.05
P_DEVICE_STR = 0.03
P_EXTRA_KEYS = 0.03
P_MISSING_KEYS = 0.03
P_TAGS_SCALAR = 0.03
DROPPABLE = ["referrer", "note", "scores", "geo"]
ARMS = ["control", "a", "b"]
COUPONS = ["SAVE10", "WELCOME", "FREESHIP", "VIP20"]


def _drift(line: bytes, rng: random.Random) -> bytes:
    r = rng.random
    flags = (r() < P_AMOUNT_STR, r() < P_QTY_FLOAT, r() < P_DEVICE_STR,
             r() < P_EXTRA_KEYS, r() < P_MISSING_KEYS, r() < P_TAGS_SCALAR)
    if not any(flags):
        return line
    amount_s, qty_f, dev_s, extra, missing, tags_s = flags
    row = json.loads(line)
    if amount_s:
        row["amount"] = f"{row['amount']:.2f}"
    if qty_f:
        row["quantity"] = row["quantity"] + rng.choice([0.5, 0.25, 0.75])
    if dev_s:
        d = row["device"]
        row["device"] = f"{d['os']}/{d['version']}"
    if extra:
        row["coupon"] = rng.choice(COUPONS)
        row["experiment"] = {"id": rng.randrange(1, 50), "arm": rng.choice(ARMS)}
    if missing:
        for k in rng.sample(DROPPABLE, rng.randrange(1, 3)):
            row.pop(k, None)
    if tags_s:
        row["tags"] = row["tags"][0] if row["tags"] else "none"
    return (json.dumps(row, separators=(",", ":")) + "\n").encode("utf-8")


def generate_file(path: str, seed: int, size_mb: float) -> tuple[int, int]:
    """Write to `path` atomically (tmp file + rename); return (rows, bytes)."""
    size_bytes = int(size_mb * 1_000_000)
    clean = io.BytesIO()
    # The clean rows, a little more than the target (drift changes row sizes).
    gen_jsonl.generate(clean, seed, size_bytes=int(size_bytes * 1.02) + 4096)
    rng = random.Random(seed + 1)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    rows = written = 0
    with open(tmp, "wb", buffering=gen_jsonl.BLOCK_BYTES) as out:
        for line in clean.getvalue().splitlines(keepends=True):
            b = _drift(line, rng)
            out.write(b)
            rows += 1
            written += len(b)
            if written >= size_bytes:
                break
    os.replace(tmp, path)
    return rows, written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size-mb", type=float, required=True, help="target size in MB (10^6 bytes)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True, help="output path")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    rows, nbytes = generate_file(a.out, a.seed, a.size_mb)
    dt = time.perf_counter() - t0
    print(f"wrote {rows} rows, {nbytes / 1e6:.1f} MB in {dt:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
