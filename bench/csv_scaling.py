#!/usr/bin/env python3
"""CSV at threads = 1 and 2: ours against read_csv, since CSV files are cut
into byte ranges. A benchmark, not a test.

Usage (from the repository root; bench.py's csv case generates the input):

    .venv/bin/python bench/csv_scaling.py --runs 5 --input bench/data/events-300mb-seed42.csv

For each threads setting, COPY (FROM sanitize_csv(f, <the bench's parsers>))
TO parquet and COPY (FROM read_csv(f, sample_size=-1)) TO parquet, all four
statements interleaved in the same rounds (scan_targets.compare: each on a fresh
connection, the order reversed every run). Prints the medians, ours t1/t2
(scaling), read_csv t1/t2, and read_csv / ours at each setting.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
import scan_targets  # noqa: E402
from bench import sql_literal as lit  # noqa: E402

PARSERS = "parse_integers := true, parse_floats := true, parse_iso_timestamps := true"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="CSV scaling (benchmark, not a test)")
    p.add_argument("--input", default=os.path.join(HERE, "data", "events-300mb-seed42.csv"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    p.add_argument("--extension", default=bench.DEFAULT_EXTENSION)
    a = p.parse_args(argv)
    f = os.path.abspath(a.input)
    if not os.path.exists(f):
        p.error(f"{f} does not exist (run bench/bench.py --cases csv once to generate it)")
    data_dir = os.path.abspath(a.data_dir)
    loaded, sha = bench.private_extension_copy(os.path.abspath(a.extension), data_dir)
    root = bench.connect(loaded, None)
    bench.warm_page_cache(f)
    out = lit(os.path.join(data_dir, "csv-scaling.parquet"))
    ours = f"COPY (FROM sanitize_csv({lit(f)}, {PARSERS})) TO {out}"
    theirs = f"COPY (FROM read_csv({lit(f)}, sample_size=-1)) TO {out}"
    sides = {
        "ours_t1": (ours, None, None, 1),
        "ours_t2": (ours, None, None, 2),
        "csv_t1": (theirs, None, None, 1),
        "csv_t2": (theirs, None, None, 2),
    }
    t = scan_targets.compare(root, a.runs, sides, "csv")
    m = {k: scan_targets.med(v) for k, v in t.items()}
    print(f"\nextension sha256 {sha[:12]}, {a.runs} runs, {os.path.getsize(f) / 1e6:.0f} MB")
    for k, v in m.items():
        print(f"  {k:8s} median {v:.2f} s")
    print(f"  ours scaling t1/t2       {m['ours_t1'] / m['ours_t2']:.2f}x")
    print(f"  read_csv scaling t1/t2   {m['csv_t1'] / m['csv_t2']:.2f}x")
    print(f"  read_csv / ours at 1     {m['csv_t1'] / m['ours_t1']:.2f}x")
    print(f"  read_csv / ours at 2     {m['csv_t2'] / m['ours_t2']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
