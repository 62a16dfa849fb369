#!/usr/bin/env python3
"""The Parquet sink on N cores: what a `COPY ... TO` Parquet of a scan costs at
threads = 1 and 2 with each way of writing, and whether every thread count
gives the same rows. A benchmark, not a test: it fails only when a statement
raises an error or a check of the rows fails.

Usage (from the repository root):

    .venv/bin/python bench/parquet_sink.py time --runs 5          # the timings, then the row checks
    .venv/bin/python bench/parquet_sink.py profile --runs 3      # where the CPU goes, stage by stage
    .venv/bin/python bench/parquet_sink.py identity --threads 1,8,16

`time` generates bench/data/events-200mb-seed42.jsonl if missing
(bench/gen_jsonl.py) and times, at each of --threads (default 1,2):

    ours                  COPY (FROM sanitize_jsonl(f)) TO 'x.parquet'
    ours_unordered        the same after SET preserve_insertion_order = false
    read_json             COPY (FROM read_json(f, sample_size=-1)) TO 'x.parquet'
    read_json_unordered   the same after SET preserve_insertion_order = false
    pipeline              sanitize_pipeline over a one-day lake whose one file is f
                          (a symbolic link), compression := 'snappy' (COPY's default)

Each run is one fresh process of the DuckDB shell (the binary that
`.venv/bin/duckdb` starts), so every statement binds, and so probes, afresh.
Its time is the shell's `.timer on` line: wall (real) and the CPU of the
whole process (user + sys), whose ratio is the cores the statement kept
busy. The runs are interleaved (every side and thread count once per round,
the order reversed every round); the table gives medians, minima and maxima.
A one-task pipeline (our scan and its sink) runs on whichever of DuckDB's
threads takes the task; when a worker takes it, the shell's main thread
polls for work without blocking, as the Python client's does
(docs/performance.md "Notes on the figures"), so such runs are slower at
threads = 2: hence the minima.

Load: before each run the 1-minute load average is recorded (our own runs
raise it to 1-2 on two cores, so it is no test of other work), and during
each run the CPU time every other process took (the busy time of /proc/stat
less our children's rusage). Before each run the script waits (at most
--patience seconds, default 900) until other processes keep fewer than
--max-foreign cores (default 0.15) busy over one second; a run in which they
took more than that on average is run again, up to 3 times in all, and the
table gives how many were run again and the most other processes took in a
kept run.

After the timings, the rows of the last run of each side are checked
against `ours` at threads = 1 (read_json's sides against read_json at
threads = 1), leaving out `ingestion_timestamp` (the time of each run),
`schema_registry` and `schema_drifts` (on the first row only), and for the
pipeline `source_file` (it names the lake's link): in order for the
order-preserving sides (the pipeline too), as a multiset for all (and
whether the unordered ones came out in order too). The registry must sit on
exactly one row, the file's first where order is kept, and equal the
reference's, as must the drift events but for their `detected_at` times.

`profile` times, at threads = 1 and 2, the stages one by one: the probe
alone (`DESCRIBE`), read_json's pass over every record alone (`DESCRIBE
read_json(f, sample_size=-1)`), the `COPY`, the pipeline, and DuckDB's Parquet writer
alone on the same rows (`COPY t TO ...` from an in-memory table holding
them, whose scan gives a batch index, so above one thread that writer runs
in parallel). Where `perf` is installed, each run but the writer's runs
under `perf record -e cpu-clock` (999 samples a
second, which works without hardware counters), and the CPU is split by
thread (our decoding helpers, named sanitize-decode; the shell's main
thread, which binds and so runs the probe's in-order part; DuckDB's other
threads) and by object (the extension; DuckDB's binary with libc; the kernel).
Runs in which one of DuckDB's workers ran our scan (while the main thread
polled) are reported apart from those in which the main thread ran it.

`identity` runs, in fresh shell processes, COPY (FROM sanitize_jsonl(f)) and
COPY (FROM sanitize_csv(f, <the bench's parsers>)) at each --threads (default
1,8,16: more threads than this machine's cores), with insertion order
preserved and not, over the 200 MB events (JSON Lines), their messy variant
(bench/gen_jsonl_messy.py, 100 MB) and the events as CSV
(bench/gen_formats.py, 200 MB), and checks each against threads = 1 as
`time` does: in order where order is preserved, as a multiset always, and
the registry and drift events.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import bench  # noqa: E402
import gen_formats  # noqa: E402
import gen_jsonl  # noqa: E402
import gen_jsonl_messy  # noqa: E402
from bench import sql_literal as lit  # noqa: E402

# The shell's binary itself: .venv/bin/duckdb is a Python script that starts it
# as a child process (one more process in perf's samples and the CPU times).
CLI = next(iter(sorted(glob.glob(os.path.join(ROOT, ".venv", "lib", "python3*", "site-packages", "duckdb_cli",
                                              "duckdb")))), os.path.join(ROOT, ".venv", "bin", "duckdb"))
CSV_PARSERS = "parse_integers := true, parse_floats := true, parse_iso_timestamps := true"
# Columns whose values differ between two runs of one statement.
RUN_COLUMNS = ("ingestion_timestamp", "schema_registry", "schema_drifts")
TIMER = re.compile(r"Run Time \(s\): real ([0-9.]+) user ([0-9.]+) sys ([0-9.]+)")
LAKE_DAY = "2026-01-01"
LAKE_KEY = "year=2026/month=01/date=2026-01-01"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- inputs -----------------------------------------------------------------

def ensure(path: str, make) -> str:
    if not os.path.exists(path):
        rows, nbytes = make(path)
        print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)
    return path


def events_jsonl(data_dir: str, size_mb: float, seed: int) -> str:
    path = os.path.join(data_dir, f"events-{bench.size_tag(size_mb)}mb-seed{seed}.jsonl")
    return ensure(path, lambda p: gen_jsonl.generate_file(p, seed, size_mb=size_mb))


def messy_jsonl(data_dir: str, size_mb: float, seed: int) -> str:
    path = os.path.join(data_dir, f"events-messy-{bench.size_tag(size_mb)}mb-seed{seed}.jsonl")
    return ensure(path, lambda p: gen_jsonl_messy.generate_file(p, seed, size_mb))


def events_csv(data_dir: str, size_mb: float, seed: int) -> str:
    path = os.path.join(data_dir, f"events-{bench.size_tag(size_mb)}mb-seed{seed}.csv")
    return ensure(path, lambda p: gen_formats.generate_file("csv", p, seed, size_mb=size_mb))


def one_day_lake(data_dir: str, f: str) -> str:
    """A lake of one daily partition whose one file is a link to f."""
    lake = os.path.join(data_dir, "sink-lake")
    day = os.path.join(lake, LAKE_KEY)
    os.makedirs(day, exist_ok=True)
    link = os.path.join(day, "events.jsonl")
    if os.path.islink(link) and os.readlink(link) != f:
        os.remove(link)
    if not os.path.lexists(link):
        os.symlink(f, link)
    return lake + "/"


# --- one run ------------------------------------------------------------------

def busy_seconds() -> float:
    with open("/proc/stat") as s:
        fields = [int(x) for x in s.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / CLK_TCK


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def wait_for_quiet(max_cores: float, patience: float) -> float:
    """Wait (at most patience seconds) until other processes keep fewer than
    max_cores busy over one second; return the seconds waited."""
    t0 = time.perf_counter()
    while True:
        b0 = busy_seconds()
        time.sleep(1.0)
        if busy_seconds() - b0 <= max_cores or time.perf_counter() - t0 > patience:
            return time.perf_counter() - t0


PERF_HZ = 999


def perf_split(data: str) -> dict[str, float]:
    """CPU seconds by thread role and object from `perf record` samples:
    role helpers (threads named sanitize-decode), main (the shell's main
    thread: it binds, so it runs the probe's in-order part), workers
    (DuckDB's other threads); object ext (the extension), duckdb (the
    shell's binary: DuckDB, its Parquet writer; with libc and the rest of
    user space), kernel (system calls, page faults: reads and writes, the
    allocator's mappings)."""
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "-n", "--sort", "pid,dso", "-t", ";"],
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = [x.strip() for x in line.split(";")]
        if line.startswith("#") or len(parts) != 4 or ":" not in parts[2]:
            continue
        tid, comm = parts[2].split(":", 1)
        rows.append((int(tid), comm, parts[3], int(parts[1])))
    duck = [tid for tid, comm, _, _ in rows if comm == "duckdb"]
    main = min(duck) if duck else -1
    split: dict[str, float] = {}
    for tid, comm, dso, n in rows:
        role = "helpers" if comm == "sanitize-decode" else "main" if tid == main else "workers"
        # libc is mostly DuckDB's memcpy and allocations; our code's share of it is small.
        obj = "ext" if dso.startswith("schema_sanitizer") else "kernel" if "kernel" in dso else "duckdb"
        if role == "helpers":
            obj = "all"
        split[f"{role}/{obj}"] = split.get(f"{role}/{obj}", 0.0) + n / PERF_HZ
    return split


def shell(ext: str, threads: int, statement: str, ordered: bool = True, setup: str = "",
          perf_data: str | None = None) -> dict:
    """Run statement in a fresh shell process (under perf record into
    perf_data if given); return its timer line, the load, and perf's split."""
    script = "\n".join([
        f"LOAD {lit(ext)};",
        "SET enable_progress_bar = false;",
        f"SET threads = {int(threads)};",
        f"SET preserve_insertion_order = {'true' if ordered else 'false'};",
        setup,
        ".timer on",
        statement.rstrip(";") + ";",
        "",
    ])
    with open("/proc/loadavg") as la:
        load1 = float(la.read().split()[0])
    busy0, cpu0, t0 = busy_seconds(), children_cpu(), time.perf_counter()
    cmd = [CLI, "-unsigned", "-bail"]
    if perf_data:
        cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(PERF_HZ), "-o", perf_data, "--"] + cmd
    p = subprocess.run(cmd, input=script, capture_output=True, text=True)
    stdout, stderr = p.stdout, p.stderr
    wall = time.perf_counter() - t0
    foreign = max(0.0, (busy_seconds() - busy0) - (children_cpu() - cpu0))
    m = TIMER.findall(stdout)
    if p.returncode != 0 or not m or "Error" in stderr:
        raise RuntimeError(f"shell failed ({p.returncode}) on {statement}\n{stdout[-2000:]}\n{stderr[-2000:]}")
    real, user, sys_ = (float(x) for x in m[-1])
    split = perf_split(perf_data) if perf_data else {}
    return {"real": real, "cpu": user + sys_, "load1": load1, "foreign_cores": foreign / wall, "wall": wall,
            "perf": split}


# --- row checks ---------------------------------------------------------------

def rp(path: str, row_numbers: bool = False) -> str:
    # No Hive columns: the pipeline's output path holds year=/month=/date=.
    return (f"read_parquet({lit(path)}, hive_partitioning := false"
            + (", file_row_number := true)" if row_numbers else ")"))


def columns_of(con, path: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE FROM {rp(path)}").fetchall()]


def compare(con, a: str, b: str, in_order: bool, ignore: tuple = ()) -> dict:
    """Rows of a against rows of b, without the per-run columns (and ignore); in order if asked."""
    skip = RUN_COLUMNS + tuple(ignore)
    cols = [c for c in columns_of(con, a) if c not in skip]
    if cols != [c for c in columns_of(con, b) if c not in skip]:
        return {"same": False, "why": "columns differ"}
    sel = ", ".join(f'"{c}"' for c in cols)
    if in_order:
        sel = "file_row_number, " + sel
    q = lambda x, y: (  # noqa: E731
        f"SELECT count(*) FROM (SELECT {sel} FROM {rp(x, True)} EXCEPT ALL SELECT {sel} FROM {rp(y, True)})"
    )
    rows_a = con.execute(f"SELECT count(*) FROM {rp(a)}").fetchone()[0]
    rows_b = con.execute(f"SELECT count(*) FROM {rp(b)}").fetchone()[0]
    only_a = con.execute(q(a, b)).fetchone()[0]
    only_b = con.execute(q(b, a)).fetchone()[0]
    return {"same": rows_a == rows_b and only_a == 0 and only_b == 0, "rows": rows_a, "rows_other": rows_b,
            "only_here": only_a, "only_other": only_b}


def registry_rows(con, path: str) -> list[int] | None:
    if "schema_registry" not in columns_of(con, path):
        return None
    return [r[0] for r in con.execute(
        f"SELECT file_row_number FROM {rp(path, True)} "
        "WHERE schema_registry IS NOT NULL ORDER BY 1").fetchall()]


DETECTED_AT = re.compile(r'"detected_at":"[^"]*"')


def registry_and_drifts(con, path: str) -> tuple[str, str] | None:
    """The registry and the drift events (their detected_at times left out)."""
    row = con.execute(f"SELECT schema_registry, schema_drifts FROM {rp(path)} "
                      "WHERE schema_registry IS NOT NULL LIMIT 1").fetchone()
    return None if row is None else (row[0], DETECTED_AT.sub('"detected_at":""', row[1] or ""))


def check(con, path: str, reference: str, ordered: bool, ignore: tuple = ()) -> dict:
    out = {"multiset": compare(con, path, reference, False, ignore)}
    out["in_order"] = compare(con, path, reference, True, ignore)
    regs = registry_rows(con, path)
    if regs is not None:
        out["registry_rows"] = regs
        out["same_registry"] = registry_and_drifts(con, path) == registry_and_drifts(con, reference)
    ok = out["multiset"]["same"] and (out["in_order"]["same"] or not ordered)
    if regs is not None:
        ok = ok and len(regs) == 1 and (regs == [0] or not ordered) and out["same_registry"]
    out["ok"] = ok
    return out


def show_check(label: str, c: dict, ordered: bool) -> str:
    ms, io = c["multiset"], c["in_order"]
    regs = c.get("registry_rows")
    reg = (f", registry on row(s) {regs}, registry and drifts {'same' if c['same_registry'] else 'DIFFERENT'}"
           if regs is not None else "")
    return (f"  {label:50s} {'OK  ' if c['ok'] else 'FAIL'} rows {ms.get('rows')}: multiset "
            f"{'same' if ms['same'] else 'DIFFERENT'}, order {'same' if io['same'] else 'different'}"
            f"{' (required)' if ordered else ' (not required)'}{reg}")


# --- time ---------------------------------------------------------------------

def cmd_time(a, ext: str, data_dir: str) -> int:
    import duckdb

    f = events_jsonl(data_dir, a.size_mb, a.seed)
    lake = one_day_lake(data_dir, f)
    bench.warm_page_cache(f)
    thread_list = [int(x) for x in a.threads.split(",")]

    def out(side: str, t: int) -> str:
        return os.path.join(data_dir, f"sink-{side}-t{t}.parquet")

    def pipeline_out(t: int) -> str:
        return os.path.join(data_dir, f"sink-pipeline-t{t}")

    def pipeline_file(t: int) -> str:
        return os.path.join(pipeline_out(t), LAKE_KEY, f"events_{LAKE_DAY.replace('-', '')}.parquet")

    def sides(t: int) -> dict[str, tuple[str, bool]]:
        ours = f"COPY (FROM sanitize_jsonl({lit(f)})) TO {{out}}"
        rj = f"COPY (FROM read_json({lit(f)}, sample_size=-1)) TO {{out}}"
        pipe = (f"SELECT status, rows_written FROM sanitize_pipeline({lit(lake)}, {lit(pipeline_out(t))}, "
                f"start_date := DATE '{LAKE_DAY}', end_date := DATE '{LAKE_DAY}', input_format := 'jsonl', "
                "output_file_stem := 'events', compression := 'snappy')")
        return {
            "ours": (ours.format(out=lit(out("ours", t))), True),
            "ours_unordered": (ours.format(out=lit(out("ours_unordered", t))), False),
            "read_json": (rj.format(out=lit(out("read_json", t))), True),
            "read_json_unordered": (rj.format(out=lit(out("read_json_unordered", t))), False),
            "pipeline": (pipe, True),
        }

    names = [(s, t) for t in thread_list for s in sides(t)]
    results = {f"{s}@{t}": [] for s, t in names}
    reruns = {k: 0 for k in results}
    for r in range(a.runs):
        order = names if r % 2 == 0 else names[::-1]
        for s, t in order:
            sql, ordered = sides(t)[s]
            key = f"{s}@{t}"
            for attempt in range(3):
                waited = wait_for_quiet(a.max_foreign, a.patience)
                if waited > 2:
                    print(f"  (waited {waited:.0f} s for other processes to finish)", flush=True)
                res = shell(ext, t, sql, ordered)
                busy = res["foreign_cores"] > a.max_foreign
                print(f"  run {r + 1} {key:24s} {res['real']:7.3f} s  cpu {res['cpu']:7.3f} s "
                      f"({res['cpu'] / res['real']:.2f} cores)  load1 {res['load1']:.2f}  "
                      f"others {res['foreign_cores']:.2f} cores{'  -> again' if busy and attempt < 2 else ''}",
                      flush=True)
                if not busy:
                    break
                if attempt < 2:
                    reruns[key] += 1
            results[key].append(res)

    print(f"\n{os.path.basename(f)}, {os.path.getsize(f) / 1e6:.1f} MB, medians of {a.runs}, "
          f"extension sha256 {a.sha[:12]}, DuckDB shell {a.cli_version}\n")
    print("| side | threads | wall s, median | min–max | CPU s | cores busy | load1 (median) "
          "| others, cores (max) | runs again |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    med = {}
    for key, rs in results.items():
        s, t = key.split("@")
        w = statistics.median(x["real"] for x in rs)
        c = statistics.median(x["cpu"] for x in rs)
        med[key] = w
        print(f"| {s} | {t} | {w:.2f} | {min(x['real'] for x in rs):.2f}–{max(x['real'] for x in rs):.2f} "
              f"| {c:.2f} | {c / w:.2f} | {statistics.median(x['load1'] for x in rs):.2f} "
              f"| {max(x['foreign_cores'] for x in rs):.2f} | {reruns[key]} |")
    if 1 in thread_list:
        print()
        for s in sides(1):
            for t in thread_list:
                if t != 1:
                    print(f"  {s:20s} threads 1 / threads {t}: {med[f'{s}@1'] / med[f'{s}@{t}']:.2f}x")
        for t in thread_list:
            print(f"  threads {t}: read_json / ours {med[f'read_json@{t}'] / med[f'ours@{t}']:.2f}x, "
                  f"read_json_unordered / ours {med[f'read_json_unordered@{t}'] / med[f'ours@{t}']:.2f}x, "
                  f"ours / pipeline {med[f'ours@{t}'] / med[f'pipeline@{t}']:.2f}x, "
                  f"ours / ours_unordered {med[f'ours@{t}'] / med[f'ours_unordered@{t}']:.2f}x")

    print("\nrows of the last run of each side, against threads = 1:")
    con = duckdb.connect()
    ok = True
    checks = {}
    for t in thread_list:
        for s, (_sql, ordered) in sides(t).items():
            path = pipeline_file(t) if s == "pipeline" else out(s, t)
            ref = out("read_json", thread_list[0]) if s.startswith("read_json") else out("ours", thread_list[0])
            if path == ref:
                continue
            # The pipeline reads f through the lake's link, so source_file names the link.
            c = check(con, path, ref, ordered, ("source_file",) if s == "pipeline" else ())
            checks[f"{s}@{t}"] = c
            ok = ok and c["ok"]
            print(show_check(f"{s} at threads = {t}", c, ordered))
    with open(os.path.join(data_dir, "parquet_sink.json"), "w") as j:
        json.dump({"input": f, "runs": a.runs, "sha256": a.sha, "results": results, "reruns": reruns,
                   "checks": checks}, j, indent=1)
    return 0 if ok else 1


# --- profile ------------------------------------------------------------------

def cmd_profile(a, ext: str, data_dir: str) -> int:
    f = events_jsonl(data_dir, a.size_mb, a.seed)
    lake = one_day_lake(data_dir, f)
    bench.warm_page_cache(f)
    rows = os.path.join(data_dir, f"profile-rows-{os.path.basename(f)}.parquet")
    if not os.path.exists(rows):
        shell(ext, 2, f"COPY (FROM sanitize_jsonl({lit(f)})) TO {lit(rows)}")
    thread_list = [int(x) for x in a.threads.split(",")]
    stages = {
        "probe": ("", f"DESCRIBE FROM sanitize_jsonl({lit(f)})"),
        # read_json's own pass over every record (sample_size=-1) at bind.
        "read_json_detect": ("", f"DESCRIBE FROM read_json({lit(f)}, sample_size=-1)"),
        "copy": ("", f"COPY (FROM sanitize_jsonl({lit(f)})) TO {lit(os.path.join(data_dir, 'profile-copy.parquet'))}"),
        "pipeline": ("", f"SELECT status FROM sanitize_pipeline({lit(lake)}, "
                     f"{lit(os.path.join(data_dir, 'profile-pipeline'))}, start_date := DATE '{LAKE_DAY}', "
                     f"end_date := DATE '{LAKE_DAY}', input_format := 'jsonl', output_file_stem := 'events', "
                     "compression := 'snappy')"),
        # DuckDB's Parquet writer alone, on the same rows, from an in-memory table
        # (whose scan gives a batch index: above one thread the writer runs in parallel).
        "writer": (f"CREATE TEMP TABLE t AS FROM read_parquet({lit(rows)});",
                   f"COPY t TO {lit(os.path.join(data_dir, 'profile-writer.parquet'))}"),
    }
    use_perf = a.perf and subprocess.run(["perf", "--version"], capture_output=True).returncode == 0
    perf_data = os.path.join(data_dir, "profile.perf.data") if use_perf else None
    if a.stages:
        stages = {k: v for k, v in stages.items() if k in a.stages.split(",")}
    names = [(s, t) for s in stages for t in thread_list]
    res = {f"{s}@{t}": [] for s, t in names}
    for r in range(a.runs):
        for s, t in (names if r % 2 == 0 else names[::-1]):
            setup, sql = stages[s]
            for attempt in range(3):
                wait_for_quiet(a.max_foreign, a.patience)
                # perf samples the setup (the writer's in-memory table) too: only the
                # stages without setup get a split.
                x = shell(ext, t, sql, True, setup, perf_data=None if setup else perf_data)
                split = " ".join(f"{k} {v:.2f}" for k, v in sorted(x["perf"].items()) if v >= 0.01)
                print(f"  run {r + 1} {s}@{t}: {x['real']:.3f} s, cpu {x['cpu']:.3f} s, "
                      f"others {x['foreign_cores']:.2f} cores; {split}", flush=True)
                if x["foreign_cores"] <= a.max_foreign:
                    break
            # Which thread ran the scan: the main thread, or a worker while the
            # main thread polled (docs/performance.md "Notes on the figures").
            mode = " (a worker)" if x["perf"].get("workers/ext", 0.0) > 0.05 else ""
            res.setdefault(f"{s}@{t}{mode}", []).append(x)
    res = {k: v for k, v in res.items() if v}
    print(f"\n{os.path.basename(f)}, medians of {a.runs}. CPU seconds from perf's cpu-clock samples "
          "(the whole process, LOAD included), by thread: helpers = our sanitize-decode threads, main = the "
          "shell's main thread (bind: the probe's in-order part; and the scan when it takes the task), "
          "workers = DuckDB's other threads (\"(a worker)\": a worker ran the scan while the main thread "
          "polled); and by object: ext = the extension, duckdb = DuckDB (its "
          "Parquet writer) with libc, kernel\n")
    keys = sorted({k for xs in res.values() for x in xs for k in x["perf"]})
    print("| stage | threads | wall s | CPU s | " + " | ".join(keys) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(keys))
    for key in sorted(res, key=lambda k: list(stages).index(k.split("@")[0])):
        xs = res[key]
        s, t = key.split("@")
        w, c = statistics.median(x["real"] for x in xs), statistics.median(x["cpu"] for x in xs)
        cells = [f"{statistics.median(x['perf'].get(k, 0.0) for x in xs):.2f}" if xs[0]["perf"] else ""
                 for k in keys]
        print(f"| {s} | {t}, {len(xs)} run{'s' if len(xs) > 1 else ''} | {w:.2f} | {c:.2f} | "
              + " | ".join(cells) + " |")
    return 0


# --- identity -----------------------------------------------------------------

def cmd_identity(a, ext: str, data_dir: str) -> int:
    import duckdb

    thread_list = [int(x) for x in a.threads.split(",")]
    inputs = {
        "jsonl": (events_jsonl(data_dir, a.size_mb, a.seed), "sanitize_jsonl({f})"),
        "jsonl_messy": (messy_jsonl(data_dir, a.size_mb / 2, a.seed), "sanitize_jsonl({f})"),
        "csv": (events_csv(data_dir, a.size_mb, a.seed), "sanitize_csv({f}, " + CSV_PARSERS + ")"),
    }
    con = duckdb.connect()
    ok = True
    for name, (f, call) in inputs.items():
        scan = call.format(f=lit(f))
        print(f"{name}: COPY (FROM {scan}) TO ..., {os.path.getsize(f) / 1e6:.1f} MB", flush=True)
        ref = None
        for t in thread_list:
            for ordered in (True, False):
                path = os.path.join(data_dir, f"identity-{name}-t{t}-{'ordered' if ordered else 'unordered'}.parquet")
                res = shell(ext, t, f"COPY (FROM {scan}) TO {lit(path)}", ordered)
                label = f"threads = {t}, preserve_insertion_order = {str(ordered).lower()}"
                if ref is None:
                    ref = path
                    print(f"  {label:50s} {res['real']:.2f} s (the reference)", flush=True)
                    continue
                c = check(con, path, ref, ordered)
                ok = ok and c["ok"]
                print(show_check(label, c, ordered) + f", {res['real']:.2f} s", flush=True)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The Parquet sink on N cores (benchmark, not a test)")
    p.add_argument("mode", choices=["time", "profile", "identity"])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", help="comma-separated; default 1,2 (time) or 1,8,16 (identity)")
    p.add_argument("--size-mb", type=float, default=200)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--max-foreign", type=float, default=0.15,
                   help="run again when other processes took more cores than this on average")
    p.add_argument("--patience", type=float, default=900,
                   help="before each run, wait at most this many seconds for other processes to go quiet")
    p.add_argument("--stages", help="profile: a comma-separated subset of probe, read_json_detect, copy, "
                   "pipeline, writer")
    p.add_argument("--no-perf", dest="perf", action="store_false",
                   help="profile: no perf record (no split by thread and object)")
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    p.add_argument("--extension", default=bench.DEFAULT_EXTENSION)
    a = p.parse_args(argv)
    if a.threads is None:
        a.threads = "1,8,16" if a.mode == "identity" else "1,2"
    data_dir = os.path.abspath(a.data_dir)
    os.makedirs(data_dir, exist_ok=True)
    ext, a.sha = bench.private_extension_copy(os.path.abspath(a.extension), data_dir)
    a.cli_version = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.split()[0]
    return {"time": cmd_time, "profile": cmd_profile, "identity": cmd_identity}[a.mode](a, ext, data_dir)


if __name__ == "__main__":
    sys.exit(main())
