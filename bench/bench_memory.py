#!/usr/bin/env python3
"""Peak memory of sanitize_jsonl against read_json on a small and a large file.

This is a benchmark, not a test: it reports numbers and the two targets
below as "met" / "not met", and never fails because of a number. It exits
non-zero only when a statement raises an error (or on bad arguments).

Inputs: gen_jsonl.py's clean events (seed 42 by default) of --small-mb
(default 200) and --large-mb (default 2000) decimal megabytes, in --data-dir
(default bench/data) as events-<N>mb-seed<S>.jsonl, the naming bench.py uses.
A file that exists is reused. The small file is a prefix of the large one.

For every file, each statement runs --runs times (default 1), every time in a
fresh Python subprocess (bench.py's RSS_SCRIPT: duckdb, LOAD of a private
copy of the extension, optional SET threads, one statement), which reports
the wall time of the statement and the peak resident set size (VmHWM of
/proc/self/status) at the end, as well as VmHWM right after LOAD:

  ours      COPY (FROM sanitize_jsonl(f, batch_memory_limit_bytes := 64 MiB)) TO 'x.parquet'
  read_json COPY (FROM read_json(f, sample_size=-1)) TO 'y.parquet'

The input is read once before each file's runs (page cache). The Parquet
outputs are deleted after every run.

Targets (from the issue):
  1. our peak RSS on the large file <= 1.2 x our peak RSS on the small file
  2. our peak RSS on the large file <= read_json's peak RSS on the large file
With --runs > 1 the peaks compared are the highest of each side's runs.

Results: a markdown table on stdout and <data-dir>/memory.json.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import faulthandler
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench  # noqa: E402  (private_extension_copy, measure_rss, machine_info, ...)
import gen_jsonl  # noqa: E402

BATCH_LIMIT = 64 * 1024 * 1024
TARGET_GROWTH = 1.2

SIDES = {
    "ours": {
        "label": "sanitize_jsonl(batch_memory_limit_bytes := 64 MiB)",
        "sql": "COPY (FROM sanitize_jsonl({input}, batch_memory_limit_bytes := " + str(BATCH_LIMIT) + ")) TO {out}",
    },
    "read_json": {
        "label": "read_json(sample_size=-1)",
        "sql": "COPY (FROM read_json({input}, sample_size=-1)) TO {out}",
    },
}


def input_file(data_dir: str, size_mb: float, seed: int) -> str:
    return os.path.join(data_dir, f"events-{bench.size_tag(size_mb)}mb-seed{seed}.jsonl")


def ensure_input(path: str, size_mb: float, seed: int) -> dict:
    info: dict = {"path": path, "size_mb": size_mb}
    if os.path.exists(path):
        info["generated"] = False
    else:
        need = int(size_mb * 1_000_000 * 1.05)
        free = shutil.disk_usage(os.path.dirname(path)).free
        if free < need:
            raise SystemExit(f"not enough disk space for {path}: need ~{need / 1e9:.1f} GB, free {free / 1e9:.1f} GB")
        print(f"  generating {path} ({size_mb:g} MB, seed {seed}) ...", flush=True)
        t0 = time.perf_counter()
        rows, nbytes = gen_jsonl.generate_file(path, seed, size_mb=size_mb)
        info["generated"] = True
        info["generation_s"] = time.perf_counter() - t0
        print(f"  generated {rows} rows, {nbytes / 1e6:.1f} MB in {info['generation_s']:.1f} s", flush=True)
    info["bytes"] = os.path.getsize(path)
    return info


def mib(kib) -> float | None:
    return None if kib is None else kib / 1024


def fmt(x, spec=".0f") -> str:
    return "n/a" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="peak RSS: sanitize_jsonl vs read_json (benchmark, not a test)")
    p.add_argument("--small-mb", type=float, default=200, help="small input in MB (10^6 bytes), default 200")
    p.add_argument("--large-mb", type=float, default=2000, help="large input in MB (10^6 bytes), default 2000")
    p.add_argument("--runs", type=int, default=1, help="fresh-process runs per statement and file, default 1")
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"), help="inputs, outputs, memory.json")
    p.add_argument("--threads", type=int, default=None, help="DuckDB threads setting (default: DuckDB's default)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--extension", default=bench.DEFAULT_EXTENSION, help="path of the .duckdb_extension to LOAD")
    a = p.parse_args(argv)
    faulthandler.enable()
    if a.runs < 1:
        p.error("--runs must be >= 1")
    if not (0 < a.small_mb < a.large_mb):
        p.error("need 0 < --small-mb < --large-mb")

    extension = os.path.abspath(a.extension)
    if not os.path.exists(extension):
        print(f"extension not found: {extension} (run `make build`)", file=sys.stderr)
        return 2
    data_dir = os.path.abspath(a.data_dir)
    os.makedirs(data_dir, exist_ok=True)
    started = time.perf_counter()
    loaded, sha = bench.private_extension_copy(extension, data_dir)

    import duckdb

    con = bench.connect(loaded, a.threads)
    threads_effective = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.close()
    du = shutil.disk_usage(data_dir)
    results: dict = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "duckdb_version": duckdb.__version__,
        "threads_setting": a.threads,
        "threads_effective": threads_effective,
        "seed": a.seed,
        "runs": a.runs,
        "batch_memory_limit_bytes": BATCH_LIMIT,
        "machine": bench.machine_info(),
        "disk_free_gb_start": round(du.free / 1e9, 1),
        "loadavg_start": os.getloadavg(),
        "extension": bench.extension_info(extension, sha, loaded),
        "sql": {s: SIDES[s]["sql"] for s in SIDES},
        "files": [],
    }
    errors = 0

    for size_mb in (a.small_mb, a.large_mb):
        path = input_file(data_dir, size_mb, a.seed)
        print(f"== {os.path.basename(path)}", flush=True)
        finfo = ensure_input(path, size_mb, a.seed)
        bench.warm_page_cache(path)
        finfo["sides"] = {}
        for s, side in SIDES.items():
            out = os.path.join(data_dir, f"memory-{s}.parquet")
            sql = bench.render(side["sql"], path, out)
            runs = []
            for run in range(a.runs):
                m = bench.measure_rss({"sql": sql}, loaded, a.threads)
                out_bytes = os.path.getsize(out) if os.path.exists(out) else None
                if os.path.exists(out):
                    os.remove(out)
                m["output_bytes"] = out_bytes
                runs.append(m)
                if m.get("error"):
                    errors += 1
                    print(f"  {s:9s} run {run + 1}: ERROR {m['error']}", flush=True)
                    break  # do not repeat a failing statement
                print(
                    f"  {s:9s} run {run + 1}: {m['seconds']:7.2f} s  peak RSS {mib(m['peak_rss_kib']):7.0f} MiB"
                    f"  (after LOAD {mib(m['peak_rss_kib_before']):.0f} MiB)  rows={m.get('rows')}"
                    f"  parquet {out_bytes / 1e6 if out_bytes else 0:.1f} MB",
                    flush=True,
                )
            ok = [m for m in runs if not m.get("error")]
            summary: dict = {"label": side["label"], "sql": sql, "runs": runs}
            if ok:
                summary["seconds_median"] = statistics.median(m["seconds"] for m in ok)
                summary["peak_rss_kib_max"] = max(m["peak_rss_kib"] for m in ok)
                summary["peak_rss_kib_min"] = min(m["peak_rss_kib"] for m in ok)
                summary["after_load_kib"] = statistics.median(m["peak_rss_kib_before"] for m in ok)
                summary["rows"] = ok[-1].get("rows")
            else:
                summary["error"] = runs[-1].get("error")
            finfo["sides"][s] = summary
        results["files"].append(finfo)

    small, large = results["files"]
    checks: dict = {}
    o_small = small["sides"]["ours"].get("peak_rss_kib_max")
    o_large = large["sides"]["ours"].get("peak_rss_kib_max")
    r_large = large["sides"]["read_json"].get("peak_rss_kib_max")
    if o_small and o_large:
        g = o_large / o_small
        checks["ours_large_over_small"] = {
            "ratio": g,
            "target": f"<= {TARGET_GROWTH}",
            "met": g <= TARGET_GROWTH,
        }
        base = small["sides"]["ours"].get("after_load_kib")
        if base and o_small > base:
            # The same ratio with the process's footprint after LOAD taken out.
            checks["ours_large_over_small"]["ratio_above_after_load"] = (o_large - base) / (o_small - base)
    if o_large and r_large:
        checks["ours_vs_read_json_large"] = {
            "ours_mib": o_large / 1024,
            "read_json_mib": r_large / 1024,
            "ratio": o_large / r_large,
            "target": "ours <= read_json",
            "met": o_large <= r_large,
        }
    results["checks"] = checks
    results["loadavg_end"] = os.getloadavg()
    results["disk_free_gb_end"] = round(shutil.disk_usage(data_dir).free / 1e9, 1)
    results["total_seconds"] = time.perf_counter() - started
    out_json = os.path.join(data_dir, "memory.json")
    with open(out_json, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")

    print()
    print(report_markdown(results))
    print(f"\nresults: {out_json}  (total {results['total_seconds']:.0f} s)")
    return 1 if errors else 0


def report_markdown(results: dict) -> str:
    lines = [
        f"DuckDB {results['duckdb_version']}, threads={results['threads_effective']}"
        f" ({'default' if results['threads_setting'] is None else 'set'}), seed {results['seed']},"
        f" {results['runs']} fresh-process run(s) per statement and file",
        "",
        "| file | bytes | case | seconds | peak RSS MiB | RSS after LOAD MiB | rows |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for f in results["files"]:
        for s, side in f["sides"].items():
            name = f"{f['size_mb']:g} MB"
            if side.get("error"):
                lines.append(f"| {name} | {f['bytes']:,} | {side['label']} | error | | | |")
                continue
            lines.append(
                f"| {name} | {f['bytes']:,} | {side['label']} | {side['seconds_median']:.2f} | "
                f"{mib(side['peak_rss_kib_max']):.0f} | {mib(side['after_load_kib']):.0f} | {side['rows']:,} |"
            )
    lines.append("")
    c = results["checks"]
    g = c.get("ours_large_over_small")
    if g:
        extra = ""
        if "ratio_above_after_load" in g:
            extra = f" (above the after-LOAD footprint: {g['ratio_above_after_load']:.2f}x)"
        lines.append(
            f"- our peak RSS, large / small file: {g['ratio']:.2f}x{extra}; target {g['target']}: "
            f"{'MET' if g['met'] else 'NOT MET'}"
        )
    else:
        lines.append("- our peak RSS, large / small file: n/a (a run failed)")
    v = c.get("ours_vs_read_json_large")
    if v:
        lines.append(
            f"- large file, our peak RSS vs read_json's: {v['ours_mib']:.0f} MiB vs {v['read_json_mib']:.0f} MiB"
            f" ({v['ratio']:.2f}x); target {v['target']}: {'MET' if v['met'] else 'NOT MET'}"
        )
    else:
        lines.append("- large file, our peak RSS vs read_json's: n/a (a run failed)")
    for f in results["files"]:
        for s, side in f["sides"].items():
            if side.get("error"):
                lines.append(f"- {f['size_mb']:g} MB {s}: ERROR {side['error']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
