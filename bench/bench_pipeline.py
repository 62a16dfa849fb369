#!/usr/bin/env python3
"""sanitize_pipeline against the same loop written by hand. A benchmark, not a test: it prints numbers and whether the
goal is met, and fails only when a statement raises.

Input: 30 daily partitions of JSON Lines, about 300 MB in all: gen_jsonl.py's
clean events (seed 42), the 300 MB file bench.py uses cut into 30 files of
whole lines, in <data-dir>/lake-30d/year=2026/month=06/date=2026-06-DD/.
Made once and reused.

Each side runs --runs times (default 3), every run in a fresh Python
subprocess that loads a private copy of the extension and reports its wall
time and peak RSS (VmHWM). The sides:

  pipeline   SELECT * FROM sanitize_pipeline(lake, out, 30 days, input_format := 'jsonl')
             (day 1 additive: probe + write; days 2-30 one strict pass each)
  hand       per day: a sanitize_probe from the registry so far, then
             COPY (FROM sanitize_jsonl(day, registry := reg)) TO out/...parquet
             (COMPRESSION zstd) (the loop a user writes without the
             pipeline, as the issue states it, with the pipeline's codec)
  hand_strict per day: COPY (FROM sanitize_jsonl(day, registry := reg,
             schema_mode := 'strict')) TO ... (COMPRESSION zstd), reg from
             the first day's probe:
             the same single pass per day as the pipeline, so the two differ
             only in the Parquet writer (ours: the parquet crate; this:
             DuckDB's COPY)

Goal: pipeline >= 1.0x hand (medians of wall time). The hand_strict ratio
shows the writers alone. Results: a markdown table on stdout and
<data-dir>/pipeline.json.

    .venv/bin/python bench/bench_pipeline.py [--runs 3] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402

DAYS = 30

RUN_SCRIPT = r"""
import json, sys, time
import duckdb
args = json.loads(sys.argv[1])

def peak_kb():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1])

def lit(s):
    return "'" + s.replace("'", "''") + "'"

con = duckdb.connect(config={'allow_unsigned_extensions': 'true'})
con.execute('LOAD ' + lit(args['extension']))
if args['threads']:
    con.execute('SET threads = %d' % args['threads'])
lake, out, days = args['lake'], args['out'], args['days']
parts = [(d, '%s/year=2026/month=06/date=2026-06-%02d/events.jsonl' % (lake, d),
          '%s/year=2026/month=06/date=2026-06-%02d/part_202606%02d.parquet' % (out, d, d)) for d in range(1, days + 1)]
start = time.perf_counter()
rows = 0
if args['side'] == 'pipeline':
    for r in con.execute('SELECT rows_written FROM sanitize_pipeline(%s, %s, start_date := DATE %s, end_date := DATE %s, input_format := %s)'
                         % (lit(lake), lit(out), lit('2026-06-01'), lit('2026-06-%02d' % days), lit('jsonl'))).fetchall():
        rows += r[0]
elif args['side'] == 'hand':
    reg = None
    for d, src, dst in parts:
        import os
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        reg_arg = ', registry := $reg' if reg else ''
        params = {'reg': reg} if reg else None
        reg = con.execute('SELECT schema_registry FROM sanitize_probe(%s, input_format := %s%s)' % (lit(src), lit('jsonl'), reg_arg), params).fetchone()[0]
        con.execute('COPY (FROM sanitize_jsonl(%s, registry := $reg)) TO %s (COMPRESSION zstd)' % (lit(src), lit(dst)), {'reg': reg})
        rows += con.execute('SELECT rows_emitted FROM sanitize_stats() ORDER BY scan_id DESC LIMIT 1').fetchone()[0]
else:  # hand_strict
    import os
    reg = con.execute('SELECT schema_registry FROM sanitize_probe(%s, input_format := %s)' % (lit(parts[0][1]), lit('jsonl'))).fetchone()[0]
    for d, src, dst in parts:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        con.execute("COPY (FROM sanitize_jsonl(%s, registry := $reg, schema_mode := 'strict')) TO %s (COMPRESSION zstd)" % (lit(src), lit(dst)), {'reg': reg})
        rows += con.execute('SELECT rows_emitted FROM sanitize_stats() ORDER BY scan_id DESC LIMIT 1').fetchone()[0]
elapsed = time.perf_counter() - start
print(json.dumps({'seconds': elapsed, 'rows': rows, 'peak_rss_kib': peak_kb()}))
"""


def make_lake(data_dir: str, seed: int) -> tuple[str, int]:
    """The 30-day lake cut from the 300 MB events file; (path, bytes)."""
    lake = os.path.join(data_dir, f"lake-{DAYS}d-seed{seed}")
    done = os.path.join(lake, ".complete")
    if not os.path.exists(done):
        source = os.path.join(data_dir, f"events-300mb-seed{seed}.jsonl")
        if not os.path.exists(source):
            bench._gen_jsonl(source, seed, 300)
        shutil.rmtree(lake, ignore_errors=True)
        size = os.path.getsize(source)
        with open(source, "rb") as f:
            for day in range(1, DAYS + 1):
                d = os.path.join(lake, f"year=2026/month=06/date=2026-06-{day:02d}")
                os.makedirs(d)
                with open(os.path.join(d, "events.jsonl"), "wb") as out:
                    limit = size * day // DAYS
                    while f.tell() < limit:
                        line = f.readline()
                        if not line:
                            break
                        out.write(line)
        open(done, "w").close()
    total = sum(
        os.path.getsize(os.path.join(root, n)) for root, _, names in os.walk(lake) for n in names if n.endswith(".jsonl")
    )
    return lake, total


def run_side(side: str, extension: str, lake: str, out: str, threads: int | None) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    args = {"side": side, "extension": extension, "lake": lake, "out": out, "days": DAYS, "threads": threads}
    proc = subprocess.run([sys.executable, "-c", RUN_SCRIPT, json.dumps(args)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{side} failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["output_bytes"] = sum(
        os.path.getsize(os.path.join(root, n)) for root, _, names in os.walk(out) for n in names
    )
    shutil.rmtree(out, ignore_errors=True)
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    p.add_argument("--extension", default=bench.DEFAULT_EXTENSION)
    a = p.parse_args()
    os.makedirs(a.data_dir, exist_ok=True)
    extension, sha = bench.private_extension_copy(a.extension, a.data_dir)
    lake, lake_bytes = make_lake(a.data_dir, a.seed)
    for root, _, names in os.walk(lake):  # page cache
        for n in names:
            bench.warm_page_cache(os.path.join(root, n))
    sides = ("pipeline", "hand", "hand_strict")
    results: dict[str, list[dict]] = {s: [] for s in sides}
    for _ in range(a.runs):  # interleaved, so drift in machine speed hits every side
        for s in sides:
            results[s].append(run_side(s, extension, lake, os.path.join(a.data_dir, f"out-{s}"), a.threads))
    med = {s: statistics.median(r["seconds"] for r in results[s]) for s in sides}
    rows = {s: results[s][0]["rows"] for s in sides}
    if len(set(rows.values())) != 1:
        raise SystemExit(f"the sides wrote different row counts: {rows}")
    print(f"30 daily partitions, {lake_bytes / 1e6:.0f} MB of JSON Lines, {rows['pipeline']:,} rows; "
          f"threads={a.threads or 'default'}; medians of {a.runs} runs; extension sha256 {sha[:12]}\n")
    print("| side | median s | runs s | peak RSS MiB | output MB |")
    print("|---|---:|---|---:|---:|")
    for s in sides:
        runs = ", ".join(f"{r['seconds']:.2f}" for r in results[s])
        peak = max(r["peak_rss_kib"] for r in results[s]) / 1024
        print(f"| {s} | {med[s]:.2f} | {runs} | {peak:.0f} | {results[s][0]['output_bytes'] / 1e6:.1f} |")
    speedup = med["hand"] / med["pipeline"]
    writer = med["hand_strict"] / med["pipeline"]
    print(f"\npipeline vs hand loop: {speedup:.2f}x (goal >= 1.0x: {'met' if speedup >= 1.0 else 'not met'})")
    print(f"pipeline vs hand strict COPY loop (writers alone): {writer:.2f}x")
    with open(os.path.join(a.data_dir, "pipeline.json"), "w") as f:
        json.dump({"machine": bench.machine_info(), "threads": a.threads, "runs": results, "medians": med,
                   "speedup_vs_hand": speedup, "speedup_vs_hand_strict": writer, "lake_bytes": lake_bytes,
                   "extension_sha256": sha}, f, indent=2)


if __name__ == "__main__":
    main()
