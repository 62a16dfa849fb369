#!/usr/bin/env python3
"""The scan targets: each target of the scan's speed against one measured value.

Usage (from the repository root; the input files must exist, see below):

    .venv/bin/python bench/scan_targets.py                       # 49 MB file, 3 runs
    .venv/bin/python bench/scan_targets.py --runs 3 \\
        --input bench/data/events-100000rows-seed42.jsonl \\
        --input bench/data/events-300mb-seed42.jsonl         # both files

Inputs are bench/gen_jsonl.py's clean events (seed 42): the 100,000-row file
(49 MB; bench.py's many_small_jsonl case generates it) and the 300 MB file
(bench.py's jsonl case). This script does not generate them.

The extension is loaded as bench.py loads it: a private copy named by its
sha256 in <data-dir>/ext-<sha12>/ (bench.private_extension_copy), from
build/release/schema_sanitizer.duckdb_extension unless --extension is given.
All statements run in ONE in-memory database in this process, each timed
statement on a fresh connection (con.cursor(): the extension's bind cache is
per connection, so a fresh cursor re-infers the schema). `SET threads` is a
database-wide setting: it is set on the root connection before a group and
reset to DuckDB's default after it. Timings are wall clock of execute + fetch
(time.perf_counter); each value is the median of --runs runs; the two sides
of a comparison are interleaved and alternate which goes first each run.
The input is read once beforehand to warm the page cache.

Measures (per input file; "ours" is sanitize_jsonl with default options):

  copy_default   COPY (FROM sanitize_jsonl(f)) TO parquet vs
                 COPY (FROM read_json(f, sample_size=-1)) TO parquet at the
                 default threads. Value: read_json median / ours median
                 (>1 = ours faster). Goal >= 1.5x.
  copy_t1        the same with SET threads = 1 (both sides). Goal >= 1.2x.
  scaling        ours, CREATE TEMP TABLE t AS SELECT * FROM sanitize_jsonl(f)
                 at threads = 1 vs threads = 2, the two interleaved in the same
                 rounds (SET threads on the root connection before each
                 statement). Value: t1 / t2. Goal >= 1.7x. (The COPY
                 statement's t1/t2, timed in the same rounds, is an extra row.)
  proj_one       CREATE TEMP TABLE AS SELECT * vs CREATE TEMP TABLE AS SELECT
                 userid (default threads; ours names the key user_id "userid"). Value: * / one column. Goal >= 3x.
  proj_count     SELECT * (as above) vs SELECT count(*). Goal >= 5x.
  probe          SELECT * FROM sanitize_probe(f, input_format := 'jsonl') vs
                 DESCRIBE SELECT * FROM read_json(f, sample_size=-1).
                 Value: DESCRIBE / probe. Goal >= 2x.
  strict         COPY of sanitize_jsonl(f, schema_mode := 'strict',
                 registry := ?) vs the additive COPY of the same file; the
                 registry is the schema_registry of one additive scan (not
                 timed), i.e. it covers the file. Value: additive / strict.
                 Goal >= 1.3x.
  rebind         on ONE fresh connection, DESCRIBE SELECT * FROM
                 sanitize_jsonl(f) twice; value: second / first (the bind
                 cache; the file must be older than 2 s). Goal < 5%.

Temp tables are dropped after each timed statement (not timed); COPY writes
to <data-dir>/scan-targets-*.parquet. Prints one markdown table per input and
writes the raw times to <data-dir>/scan-targets-results.json.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402
from bench import sql_literal as lit  # noqa: E402

DEFAULT_INPUT = os.path.join(HERE, "data", "events-100000rows-seed42.jsonl")


def timed(root, sql: str, params=None, cleanup: str | None = None) -> float:
    """Run sql on a fresh connection, return wall seconds (execute + fetchall)."""
    cur = root.cursor()
    try:
        t0 = time.perf_counter()
        cur.execute(sql, params) if params is not None else cur.execute(sql)
        cur.fetchall()
        dt = time.perf_counter() - t0
        if cleanup:
            cur.execute(cleanup)
    finally:
        cur.close()
    return dt


def compare(root, runs: int, sides: dict[str, tuple], label: str) -> dict[str, list[float]]:
    """Interleave the sides (each a (sql, params, cleanup) tuple), runs times each;
    the order reverses every run. Returns {side: [seconds, ...]}."""
    names = list(sides)
    out = {n: [] for n in names}
    for r in range(runs):
        order = names if r % 2 == 0 else names[::-1]
        for n in order:
            sql, params, cleanup, *threads = sides[n]
            if threads:  # a side with its own threads setting (the scaling group)
                root.execute(f"SET threads = {int(threads[0])}")
            dt = timed(root, sql, params, cleanup)
            out[n].append(dt)
            print(f"  {label:14s} run {r + 1} {n:10s} {dt:8.3f} s", flush=True)
    return out


def rebind(root, f: str, runs: int) -> dict[str, list[float]]:
    out = {"first": [], "second": []}
    sql = f"DESCRIBE SELECT * FROM sanitize_jsonl({lit(f)})"
    for r in range(runs):
        cur = root.cursor()
        try:
            for k in ("first", "second"):
                t0 = time.perf_counter()
                cur.execute(sql).fetchall()
                dt = time.perf_counter() - t0
                out[k].append(dt)
                print(f"  {'rebind':14s} run {r + 1} {k:10s} {dt:8.4f} s", flush=True)
        finally:
            cur.close()
    return out


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def input_files(f: str) -> list[str]:
    """The files of an input: itself, or a directory's *.jsonl files."""
    if os.path.isdir(f):
        return sorted(os.path.join(f, n) for n in os.listdir(f) if n.endswith(".jsonl"))
    return [f]


def measure_file(root, f: str, runs: int, data_dir: str) -> dict:
    files = input_files(f)
    for x in files:
        bench.warm_page_cache(x)
    age = time.time() - max(os.path.getmtime(x) for x in files)
    if age < 3:
        time.sleep(3 - age)  # the bind cache ignores files modified in the last 2 s
    if os.path.isdir(f):
        f = os.path.join(f, "*.jsonl")  # one glob for both readers
    F = lit(f)
    out_ours = lit(os.path.join(data_dir, "scan-targets-ours.parquet"))
    out_base = lit(os.path.join(data_dir, "scan-targets-baseline.parquet"))
    copy_ours = (f"COPY (FROM sanitize_jsonl({F})) TO {out_ours}", None, None)
    copy_base = (f"COPY (FROM read_json({F}, sample_size=-1)) TO {out_base}", None, None)
    drop = "DROP TABLE t"
    ctas_star = (f"CREATE TEMP TABLE t AS SELECT * FROM sanitize_jsonl({F})", None, drop)
    ctas_one = (f"CREATE TEMP TABLE t AS SELECT userid FROM sanitize_jsonl({F})", None, drop)
    count = (f"SELECT count(*) FROM sanitize_jsonl({F})", None, None)
    t: dict[str, dict[str, list[float]]] = {}

    default_threads = root.execute("SELECT current_setting('threads')").fetchone()[0]
    rows = {
        "ours": root.cursor().execute(f"SELECT count(*) FROM sanitize_jsonl({F})").fetchone()[0],
        "read_json": root.cursor().execute(f"SELECT count(*) FROM read_json({F}, sample_size=-1)").fetchone()[0],
    }
    print(f"  rows: {rows}; default threads = {default_threads}", flush=True)

    t["copy_default"] = compare(root, runs, {"ours": copy_ours, "read_json": copy_base}, "copy_default")
    t["proj"] = compare(root, runs, {"star": ctas_star, "one_col": ctas_one, "count": count}, "proj")
    t["probe"] = compare(
        root, runs,
        {"probe": (f"SELECT * FROM sanitize_probe({F}, input_format := 'jsonl')", None, None),
         "describe": (f"DESCRIBE SELECT * FROM read_json({F}, sample_size=-1)", None, None)},
        "probe")
    registry = root.cursor().execute(
        f"SELECT schema_registry FROM sanitize_jsonl({F}) WHERE schema_registry IS NOT NULL").fetchone()[0]
    t["strict"] = compare(
        root, runs,
        {"additive": copy_ours,
         "strict": (f"COPY (FROM sanitize_jsonl({F}, schema_mode := 'strict', registry := ?)) TO {out_ours}",
                    [registry], None)},
        "strict")
    t["rebind"] = rebind(root, f, runs)

    try:
        root.execute("SET threads = 1")
        t["copy_t1"] = compare(root, runs, {"ours": copy_ours, "read_json": copy_base}, "copy_t1")
        # Scaling: threads=1 and threads=2 interleaved in the same rounds.
        t["scaling"] = compare(
            root, runs,
            {"star_t1": ctas_star + (1,), "star_t2": ctas_star + (2,),
             "copy_t1": copy_ours + (1,), "copy_t2": copy_ours + (2,)},
            "scaling")
    finally:
        root.execute("RESET threads")

    def ratio(name, goal, group, num, den, op, target, labels, unit="s"):
        """One row of the table: median `num` over median `den` of `group`,
        against `target`, with both medians (labelled) for the record."""
        a, b = med(t[group][num]), med(t[group][den])
        scale = 1000 if unit == "ms" else 1
        detail = f"{labels[0]} {a * scale:.2f} {unit}, {labels[1]} {b * scale:.2f} {unit}"
        return (name, goal, a / b, op, target, detail)

    table = [
        ratio("COPY to Parquet, default threads: read_json / ours", "≥ 1.5×", "copy_default", "read_json", "ours",
              ">=", 1.5, ("read_json", "ours")),
        ratio("COPY to Parquet, threads = 1: read_json / ours", "≥ 1.2×", "copy_t1", "read_json", "ours",
              ">=", 1.2, ("read_json", "ours")),
        ratio("scaling, ours SELECT * into temp table: threads=1 / threads=2", "≥ 1.7×", "scaling", "star_t1",
              "star_t2", ">=", 1.7, ("t1", "t2")),
        ratio("(extra) scaling, ours COPY: threads=1 / threads=2", "(≥ 1.7×)", "scaling", "copy_t1", "copy_t2",
              ">=", 1.7, ("t1", "t2")),
        ratio("projection: SELECT * / SELECT userid (both into temp table)", "≥ 3×", "proj", "star", "one_col",
              ">=", 3.0, ("*", "one column")),
        ratio("projection: SELECT * / SELECT count(*)", "≥ 5×", "proj", "star", "count", ">=", 5.0, ("*", "count(*)")),
        ratio("probe: DESCRIBE read_json(sample_size=-1) / sanitize_probe", "≥ 2×", "probe", "describe", "probe",
              ">=", 2.0, ("DESCRIBE", "probe")),
        ratio("strict with covering registry: additive / strict (COPY)", "≥ 1.3×", "strict", "additive", "strict",
              ">=", 1.3, ("additive", "strict")),
        ratio("rebind: second DESCRIBE / first, same connection", "< 5%", "rebind", "second", "first", "<", 0.05,
              ("second", "first"), unit="ms"),
    ]
    return {"file": f, "files": len(files), "bytes": sum(os.path.getsize(x) for x in files), "rows": rows, "default_threads": default_threads,
            "times_s": t, "table": table}


def markdown(res: dict, runs: int) -> str:
    lines = [
        f"`{os.path.relpath(res['file'])}` ({res['files']} file{'s' if res['files'] > 1 else ''},"
        f" {res['bytes'] / 1e6:.1f} MB, {res['rows']['ours']:,} rows;"
        f" read_json {res['rows']['read_json']:,}), medians of {runs}, default threads = {res['default_threads']}",
        "",
        "| measure | goal | measured | met? | medians |",
        "|---|---|---:|---|---|",
    ]
    for name, goal, val, op, target, detail in res["table"]:
        met = val >= target if op == ">=" else val < target
        shown = f"{val * 100:.1f}%" if op == "<" else f"{val:.2f}×"
        verdict = "met" if met else "not met"
        if name.startswith("(extra)"):
            verdict = f"({verdict})"
        lines.append(f"| {name} | {goal} | {shown} | {verdict} | {detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="the scan targets (benchmark, not a test)")
    p.add_argument("--input", action="append",
                   help=f"JSON Lines file, or a directory of them (bench/split_jsonl.py; repeatable; default {DEFAULT_INPUT})")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    p.add_argument("--extension", default=bench.DEFAULT_EXTENSION)
    a = p.parse_args(argv)
    inputs = [os.path.abspath(x) for x in (a.input or [DEFAULT_INPUT])]
    for f in inputs:
        if not os.path.exists(f):
            p.error(f"{f} does not exist (generate it with bench/gen_jsonl.py or bench/bench.py)")
    data_dir = os.path.abspath(a.data_dir)
    loaded, sha = bench.private_extension_copy(os.path.abspath(a.extension), data_dir)
    import duckdb

    root = bench.connect(loaded, None)
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    print(f"{started}  duckdb {duckdb.__version__}  extension sha256 {sha[:12]}", flush=True)
    results = {"date": started, "duckdb_version": duckdb.__version__, "extension_sha256": sha,
               "runs": a.runs, "machine": bench.machine_info(), "files": []}
    reports = []
    for f in inputs:
        print(f"== {f}", flush=True)
        res = measure_file(root, f, a.runs, data_dir)
        results["files"].append(res)
        reports.append(markdown(res, a.runs))
        print("\n" + reports[-1] + "\n", flush=True)
    with open(os.path.join(data_dir, "scan-targets-results.json"), "w") as fh:
        json.dump(results, fh, indent=1, default=str)
    print("\n\n".join(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
