#!/usr/bin/env python3
"""Benchmark of the schema_sanitizer readers against DuckDB's own readers.

This is a benchmark, not a test: it reports numbers and never fails because
of one. It exits non-zero only when a query raises an error (or on bad
arguments), so a broken extension is still noticed by `make bench`.

The extension is loaded from a private copy in <data-dir>/ext-<sha12>/ (see
private_extension_copy: it pins the exact binary measured, named by its
sha256). For every case (see CASES) it

0. imports the case's optional Python modules ("requires"); if one is
   missing, the case is skipped with the reason printed (not an error);
1. generates the input file (or directory of files) into --data-dir if it
   is missing (the name carries the size and seed, so it is generated once
   and then reused);
2. reads the input once to put it in the page cache;
3. in ONE DuckDB database (one process), runs the case's "ours" and
   "baseline" statements --runs times each, each on a fresh connection to
   it (con.cursor(): the extension caches bound plans per connection, and a
   cached plan would skip the schema inference every run must include),
   interleaved (ours, baseline, baseline, ours, ours, ...:
   the order alternates every run so neither side always goes first; a case
   with "per_file" times four statements per round, see below), timing
   each statement's wall-clock time (execute + fetch of COPY's row count;
   for a Python-callable side, the call);
4. runs each statement (or callable) once more in a fresh Python subprocess (same duckdb,
   same extension, same threads setting) and reads the peak resident set size
   (VmHWM of /proc/self/status) at the end, because both sides share the main
   process and its peak would mix them;
5. prints a markdown table and writes everything to <data-dir>/results.json.

Throughput is input bytes / wall seconds, in decimal MB/s (10^6 bytes; the
bytes on disk: compressed bytes for a .gz input, the sum over the files for
a glob). The ratio is ours-throughput / baseline-throughput (> 1 means ours is faster),
from medians.

Adding a case: append a dict to CASES with
    name       short identifier (used in file names and --cases)
    what       one line for the report
    input      {"prefix", "ext", "generate": callable(path, seed, size_mb)};
               the extension checks the file extension, so ext must be the
               format's own (csv, json, xml, ...; a compression suffix
               such as jsonl.gz is allowed). Instead of prefix and ext:
               "path": callable(data_dir, seed, size_mb) -> the input's
               path; with "glob" (e.g. "*.jsonl") that path is a directory,
               generate(dir, seed, size_mb) creates it, {input} is
               <dir>/<glob>, and the bytes are summed over the files
    ours       SQL template; {input} and {out} are replaced by quoted literals
               (the template goes through str.format: write literal braces
               doubled, {{ and }})
    baseline   SQL template, same placeholders
    labels     {"ours": ..., "baseline": ...} reader names for the table
and optionally
    baseline_py  instead of baseline (ours_py likewise instead of ours): a
               Python callable f(input_path, out_path) -> row count that
               writes Parquet to out_path. It must be a module-level function
               of a module in bench/ (see py_baselines.py): the peak-RSS run
               imports it by module and name in the fresh subprocess, which
               loads DuckDB and the extension the same way as for SQL and
               then calls it instead of executing a statement. Timed runs
               call it in this process, interleaved with the other side as
               usual; its "sql" entry in results.json is a description.
    per_file   {"path": callable(data_dir, seed, size_mb), "generate":
               callable(path, seed, size_mb)}: one file holding the same
               rows as the glob's files. Both statements also run on it,
               in the same rounds (order ours, baseline, ours on the one
               file, baseline on the one file, reversed every other round),
               and the report gives each side's per-file overhead:
               (median on the files - median on the one file) / files
    size_scale the case's input is size_scale x --size-mb (jsonl_messy: 1/3,
               so 100 MB at the default 300); the scaled size is in the
               file name and in results.json as the case's "input_mb"
    requires   module names the case needs beyond duckdb (e.g. ["pandas",
               "lxml"]); they are imported before the case starts, and when
               one cannot be imported the case is skipped with the reason
               printed and recorded in results.json (not an error).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import faulthandler
import glob as globmod
import importlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import gen_formats  # noqa: E402
import gen_jsonl  # noqa: E402
import gen_jsonl_messy  # noqa: E402
import gen_strings  # noqa: E402
import py_baselines  # noqa: E402

DEFAULT_EXTENSION = os.path.join(ROOT, "build", "release", "schema_sanitizer.duckdb_extension")


def _gen_jsonl(path: str, seed: int, size_mb: float) -> None:
    rows, nbytes = gen_jsonl.generate_file(path, seed, size_mb=size_mb)
    print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)


def _gen_jsonl_messy(path: str, seed: int, size_mb: float) -> None:
    rows, nbytes = gen_jsonl_messy.generate_file(path, seed, size_mb)
    print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)


def _gen_strings(path: str, seed: int, size_mb: float) -> None:
    rows, nbytes = gen_strings.generate_file(path, seed, size_mb=size_mb)
    print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)


def _gen_format(fmt: str):
    def gen(path: str, seed: int, size_mb: float) -> None:
        rows, nbytes = gen_formats.generate_file(fmt, path, seed, size_mb=size_mb)
        print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)

    return gen


def _gen_parquet(path: str, seed: int, size_mb: float) -> None:
    """The jsonl case's events (size_mb of JSON Lines) written as Parquet by DuckDB:
    nested structs and lists, typed columns."""
    import duckdb

    jsonl = path + ".source.jsonl"
    rows, nbytes = gen_jsonl.generate_file(jsonl, seed, size_mb=size_mb)
    try:
        with duckdb.connect() as con:
            con.execute(
                f"COPY (FROM read_json({sql_literal(jsonl)}, sample_size=-1)) TO {sql_literal(path)} (FORMAT parquet)"
            )
    finally:
        os.remove(jsonl)
    print(f"  generated {path}: {rows} rows from {nbytes / 1e6:.1f} MB of JSON Lines, "
          f"{os.path.getsize(path) / 1e6:.1f} MB of Parquet", flush=True)


# many_small_jsonl: MANY_FILES files of MANY_ROWS_PER_FILE events each (the
# jsonl case's rows, ~494 bytes each: 100,000 rows, 49.3 MB in all). Fixed:
# --size-mb does not change this case. Both numbers are in the directory name.
MANY_FILES = 2000
MANY_ROWS_PER_FILE = 50
MANY_TAG = f"{MANY_FILES}x{MANY_ROWS_PER_FILE}"

# jsonl_gz: gzip level of the compressed copy (6 is gzip(1)'s and zlib's
# default; Python's gzip module defaults to 9).
GZIP_LEVEL = 6


def _many_single_path(data_dir: str, seed: int, size_mb: float) -> str:
    """The one file holding exactly the rows of the many_small_jsonl files, in order."""
    return os.path.join(data_dir, f"events-{MANY_FILES * MANY_ROWS_PER_FILE}rows-seed{seed}.jsonl")


def _gen_many_single(path: str, seed: int, size_mb: float) -> None:
    rows, nbytes = gen_jsonl.generate_file(path, seed, rows=MANY_FILES * MANY_ROWS_PER_FILE)
    print(f"  generated {path}: {rows} rows, {nbytes / 1e6:.1f} MB", flush=True)


def _gen_many_jsonl(path: str, seed: int, size_mb: float) -> None:
    """Directory `path` of MANY_FILES JSON Lines files, part-0000.jsonl ...: the
    rows of _many_single_path cut into consecutive runs of MANY_ROWS_PER_FILE,
    so the parts concatenated in name order are that file byte for byte."""
    single = _many_single_path(os.path.dirname(path), seed, size_mb)
    if not os.path.exists(single):
        _gen_many_single(single, seed, size_mb)
    with open(single, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    if len(lines) != MANY_FILES * MANY_ROWS_PER_FILE:
        raise RuntimeError(f"{single}: {len(lines)} rows, expected {MANY_FILES * MANY_ROWS_PER_FILE}")
    tmp = f"{path}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    width = len(str(MANY_FILES - 1))
    for k in range(MANY_FILES):
        with open(os.path.join(tmp, f"part-{k:0{max(4, width)}d}.jsonl"), "wb") as out:
            out.writelines(lines[k * MANY_ROWS_PER_FILE:(k + 1) * MANY_ROWS_PER_FILE])
    os.replace(tmp, path)  # the directory appears complete or not at all
    print(f"  generated {path}/: {MANY_FILES} files of {MANY_ROWS_PER_FILE} rows, "
          f"{sum(len(x) for x in lines) / 1e6:.1f} MB in all", flush=True)


def _many_path(data_dir: str, seed: int, size_mb: float) -> str:
    return os.path.join(data_dir, f"many-jsonl-{MANY_TAG}-seed{seed}")


def _gen_jsonl_gz(path: str, seed: int, size_mb: float) -> None:
    """gzip (level GZIP_LEVEL, no name and mtime 0 in the header, so the bytes
    depend only on the input and zlib) of the jsonl case's input, which is
    generated first if missing and kept (it is that case's cached input)."""
    import gzip

    src = path[: -len(".gz")]
    if not os.path.exists(src):
        _gen_jsonl(src, seed, size_mb)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(src, "rb") as f, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=GZIP_LEVEL, fileobj=raw, mtime=0) as gz:
            shutil.copyfileobj(f, gz, 4 << 20)
    os.replace(tmp, path)
    print(f"  generated {path}: gzip level {GZIP_LEVEL} of {os.path.getsize(src) / 1e6:.1f} MB, "
          f"{os.path.getsize(path) / 1e6:.1f} MB", flush=True)


# Every string parser on, as a CSV-heavy pipeline would use them.
ALL_PARSERS = (
    "parse_integers := true, parse_floats := true, parse_iso_timestamps := true, "
    "parse_iso_dates := true, parse_iso_times := true, true_tokens := ['yes', 'y'], false_tokens := ['no', 'n'], "
    "custom_date_patterns := ['(\\d{{4}})/(\\d{{2}})/(\\d{{2}})']"  # braces doubled for str.format
)

CASES: list[dict] = [
    {
        "name": "jsonl",
        "what": "clean JSON Lines events -> Parquet",
        "input": {"prefix": "events", "ext": "jsonl", "generate": _gen_jsonl},
        "ours": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "baseline": "COPY (FROM read_json({input}, sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_jsonl", "baseline": "read_json(sample_size=-1)"},
    },
    {
        "name": "strings-parsers",
        "what": "CSV-like JSON Lines (every value a string): every parser on vs parsers off",
        "input": {"prefix": "strings", "ext": "jsonl", "generate": _gen_strings},
        "ours": "COPY (FROM sanitize_jsonl({input}, " + ALL_PARSERS + ")) TO {out}",
        "baseline": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "labels": {"ours": "sanitize_jsonl, all parsers on", "baseline": "sanitize_jsonl, parsers off"},
    },
    {
        "name": "strings-vs-read_json",
        "what": "CSV-like JSON Lines: every parser on vs read_json's own date/timestamp detection",
        "input": {"prefix": "strings", "ext": "jsonl", "generate": _gen_strings},
        "ours": "COPY (FROM sanitize_jsonl({input}, " + ALL_PARSERS + ")) TO {out}",
        "baseline": "COPY (FROM read_json({input}, sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_jsonl, all parsers on", "baseline": "read_json(sample_size=-1)"},
    },
    {
        "name": "csv",
        "what": "flat CSV events -> Parquet; ours with the integer, float and ISO-timestamp parsers on,"
        " because read_csv types columns too (parsers off would leave every column VARCHAR)",
        "input": {"prefix": "events", "ext": "csv", "generate": _gen_format("csv")},
        "ours": "COPY (FROM sanitize_csv({input}, parse_integers := true, parse_floats := true,"
        " parse_iso_timestamps := true)) TO {out}",
        "baseline": "COPY (FROM read_csv({input}, sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_csv, int/float/ISO-ts parsers on", "baseline": "read_csv(sample_size=-1)"},
    },
    {
        "name": "json_array",
        "what": "one top-level JSON array of the jsonl case's events -> Parquet",
        "input": {"prefix": "events", "ext": "json", "generate": _gen_format("json_array")},
        "ours": "COPY (FROM sanitize_json_array({input})) TO {out}",
        "baseline": "COPY (FROM read_json({input}, format='array', sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_json_array", "baseline": "read_json(format='array', sample_size=-1)"},
    },
    {
        "name": "xml",
        "what": "XML events (<event> rows with attributes and nested elements) -> Parquet; DuckDB has no XML"
        " reader, so the baseline is pandas.read_xml (lxml), which reads one level only",
        "input": {"prefix": "events", "ext": "xml", "generate": _gen_format("xml")},
        "ours": "COPY (FROM sanitize_xml({input}, xml_row_tag := 'event', parse_integers := true,"
        " parse_floats := true)) TO {out}",
        "baseline_py": py_baselines.pandas_read_xml,
        "requires": ["pandas", "lxml", "pyarrow"],
        "labels": {"ours": "sanitize_xml, int/float parsers on", "baseline": "pandas.read_xml (lxml) + to_parquet"},
    },
    {
        "name": "parquet",
        "what": "Parquet events (the jsonl case's rows, nested, typed) -> Parquet; declared types kept",
        "input": {"prefix": "events-parquet", "ext": "parquet", "generate": _gen_parquet},
        "ours": "COPY (FROM sanitize_parquet({input})) TO {out}",
        "baseline": "COPY (FROM read_parquet({input})) TO {out}",
        "labels": {"ours": "sanitize_parquet", "baseline": "read_parquet"},
    },
    {
        "name": "many_small_jsonl",
        "what": f"{MANY_FILES:,} small JSON Lines files ({MANY_ROWS_PER_FILE} events each) through one glob"
        " -> Parquet; per-file overhead against one file of the same rows",
        "input": {"path": _many_path, "glob": "*.jsonl", "generate": _gen_many_jsonl},
        "per_file": {"path": _many_single_path, "generate": _gen_many_single},
        "ours": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        # sample_size=-1 alone infers from the first 32 files only (DuckDB's
        # maximum_sample_files); raised so that read_json, like ours and like
        # the jsonl case, infers the schema from every row of every file.
        "baseline": "COPY (FROM read_json({input}, format := 'newline_delimited', sample_size=-1,"
        f" maximum_sample_files := {MANY_FILES})) TO {{out}}",
        "labels": {
            "ours": "sanitize_jsonl",
            "baseline": f"read_json(format='newline_delimited', sample_size=-1, maximum_sample_files={MANY_FILES})",
        },
    },
    {
        "name": "jsonl_gz",
        "what": f"the jsonl case's input gzipped (level {GZIP_LEVEL}) -> Parquet",
        "input": {"prefix": "events", "ext": "jsonl.gz", "generate": _gen_jsonl_gz},
        "ours": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "baseline": "COPY (FROM read_json({input}, format := 'newline_delimited', sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_jsonl", "baseline": "read_json(format='newline_delimited', sample_size=-1)"},
    },
]

CASES.append(
    {
        "name": "jsonl_messy",
        "what": "messy JSON Lines events with schema drift (bench/gen_jsonl_messy.py: amount sometimes a"
        " string, quantity sometimes a float, device sometimes a string, extra and missing keys, tags"
        " sometimes a scalar) -> Parquet",
        "input": {"prefix": "events-messy", "ext": "jsonl", "generate": _gen_jsonl_messy, "size_scale": 1 / 3},
        "ours": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "baseline": "COPY (FROM read_json({input}, format := 'newline_delimited', sample_size=-1)) TO {out}",
        "labels": {"ours": "sanitize_jsonl", "baseline": "read_json(format='newline_delimited', sample_size=-1)"},
    }
)

# What recording rejects and a rescue column cost on clean input
# (no record is bad, so neither should cost anything but the extra column).
CASES.append(
    {
        "name": "rejects_clean",
        "what": "clean JSON Lines -> Parquet: rejects recorded (the default max_rejects) vs not recorded"
        " (max_rejects := 0); the overhead of recording when no record is bad",
        "input": {"prefix": "events", "ext": "jsonl", "generate": _gen_jsonl},
        "ours": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "baseline": "COPY (FROM sanitize_jsonl({input}, max_rejects := 0)) TO {out}",
        "labels": {"ours": "sanitize_jsonl (rejects on)", "baseline": "sanitize_jsonl, max_rejects := 0"},
    }
)
CASES.append(
    {
        "name": "rescue_clean",
        "what": "clean JSON Lines -> Parquet: with a rescue column (all NULL here) vs without",
        "input": {"prefix": "events", "ext": "jsonl", "generate": _gen_jsonl},
        "ours": "COPY (FROM sanitize_jsonl({input}, rescue_column := '_rescued_data')) TO {out}",
        "baseline": "COPY (FROM sanitize_jsonl({input})) TO {out}",
        "labels": {"ours": "sanitize_jsonl, rescue_column", "baseline": "sanitize_jsonl"},
    }
)

SIDES = ("ours", "baseline")


def sql_literal(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def render(template: str, input_path: str, out_path: str) -> str:
    return template.format(input=sql_literal(input_path), out=sql_literal(out_path))


def py_ref(fn) -> dict:
    """Where the peak-RSS subprocess finds a Python-callable side."""
    module = fn.__module__
    if module == "__main__":  # defined in bench.py run as a script
        module = os.path.splitext(os.path.basename(__file__))[0]
    if "<locals>" in fn.__qualname__:
        raise ValueError(f"{fn.__qualname__}: a Python side must be a module-level function")
    return {"dir": HERE, "module": module, "func": fn.__qualname__}


def side_spec(case: dict, s: str, input_path: str, out_path: str) -> dict:
    """{"sql": statement} or {"py": callable, "ref": py_ref, "desc": text} for side s."""
    fn = case.get(f"{s}_py")
    if fn is not None:
        ref = py_ref(fn)
        doc = (fn.__doc__ or "").strip().splitlines()
        desc = f"python: {ref['module']}.{ref['func']}(input, out)" + (f"  # {doc[0]}" if doc else "")
        return {"py": fn, "ref": ref, "desc": desc}
    return {"sql": render(case[s], input_path, out_path)}


def missing_requirements(case: dict) -> str | None:
    """Import the case's optional modules; return why not, or None if all import."""
    missing = []
    for m in case.get("requires", []):
        try:
            importlib.import_module(m)
        except Exception as e:  # ImportError, or a broken install raising something else
            missing.append(f"{m} ({type(e).__name__}: {e})")
    if not missing:
        return None
    return (
        f"needs Python module(s) {', '.join(case['requires'])}; cannot import: {'; '.join(missing)}."
        f" Install with `.venv/bin/pip install {' '.join(case['requires'])}`"
    )


def size_tag(size_mb: float) -> str:
    return f"{size_mb:g}".replace(".", "p")


def case_size_mb(case: dict, size_mb: float) -> float:
    """--size-mb scaled by the case's input "size_scale" (default 1), rounded to 0.1 MB."""
    return round(size_mb * case["input"].get("size_scale", 1), 1)


def input_path(case: dict, data_dir: str, size_mb: float, seed: int) -> str:
    """The case's input file, or its input directory when the input has a "glob"."""
    inp = case["input"]
    size_mb = case_size_mb(case, size_mb)
    if "path" in inp:
        return inp["path"](data_dir, seed, size_mb)
    return os.path.join(data_dir, f"{inp['prefix']}-{size_tag(size_mb)}mb-seed{seed}.{inp['ext']}")


def input_arg(case: dict, path: str) -> str:
    """What {input} stands for: the file, or <directory>/<glob>."""
    g = case["input"].get("glob")
    return os.path.join(path, g) if g else path


def input_files(case: dict, path: str) -> list[str]:
    g = case["input"].get("glob")
    return sorted(globmod.glob(os.path.join(path, g))) if g else [path]


def _machine_cpu_seconds() -> tuple[float, float] | None:
    """(busy, steal) CPU seconds of the whole machine since boot, all cores.

    busy excludes idle, iowait and steal; steal is time the hypervisor gave
    this VM's virtual CPUs to someone else.
    """
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    v += [0] * (8 - len(v))
    tick = os.sysconf("SC_CLK_TCK")
    busy = v[0] + v[1] + v[2] + v[5] + v[6]  # user nice system irq softirq
    return busy / tick, v[7] / tick


def _own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def warm_page_cache(path: str) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def connect(extension: str, threads: int | None):
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD {sql_literal(extension)}")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    return con


# Run in a fresh interpreter: load, run one statement, report peak RSS.
RSS_SCRIPT = r"""
import json, resource, sys, time
import duckdb
args = json.loads(sys.argv[1])

def status_kb(key):
    try:
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith(key + ':'):
                    return int(line.split()[1])
    except OSError:
        pass
    return None

def peak_kb():
    v = status_kb('VmHWM')
    if v is None:  # no procfs: ru_maxrss is KiB on Linux, bytes on macOS
        v = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if sys.platform == 'darwin':
            v //= 1024
    return v

con = duckdb.connect(config={'allow_unsigned_extensions': 'true'})
con.execute("LOAD '" + args['extension'].replace("'", "''") + "'")
if args['threads'] is not None:
    con.execute('SET threads = %d' % int(args['threads']))
before = peak_kb()
out = {}
py = args.get('py')
fn = None
if py:  # a Python-callable side: import it (and the case's modules) first
    import importlib
    sys.path.insert(0, py['dir'])
    try:
        for m in args.get('requires') or []:
            importlib.import_module(m)
        fn = getattr(importlib.import_module(py['module']), py['func'])
    except Exception as e:
        out['error'] = 'import: %s: %s' % (type(e).__name__, e)
    out['peak_rss_kib_after_imports'] = peak_kb()
t0 = time.perf_counter()
if 'error' not in out:
    try:
        if py:
            out['rows'] = fn(py['input'], py['out'])
        else:
            out['rows'] = con.execute(args['sql']).fetchall()[0][0]
    except Exception as e:
        out['error'] = '%s: %s' % (type(e).__name__, e)
out['seconds'] = time.perf_counter() - t0
out['peak_rss_kib_before'] = before
out['peak_rss_kib'] = peak_kb()
print(json.dumps(out))
"""


def measure_rss(spec: dict, extension: str, threads: int | None, requires=(), input_path="", out_path="") -> dict:
    """Run one side (a side_spec) once in a fresh interpreter; return its report."""
    a: dict = {"extension": extension, "threads": threads}
    if "py" in spec:
        a["py"] = dict(spec["ref"], input=input_path, out=out_path)
        a["requires"] = list(requires)
    else:
        a["sql"] = spec["sql"]
    args = json.dumps(a)
    p = subprocess.run([sys.executable, "-c", RSS_SCRIPT, args], capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        return {"error": f"subprocess exited {p.returncode}: {p.stderr.strip()[-2000:]}"}
    return json.loads(lines[-1])


def machine_info() -> dict:
    info: dict = {"nproc": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["ram_gib"] = round(int(line.split()[1]) / 1024**2, 1)
                    break
    except OSError:
        pass
    return info


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def private_extension_copy(path: str, data_dir: str) -> tuple[str, str]:
    """Copy the extension to <data_dir>/ext-<sha12>/ and return (copy, sha256).

    scripts/build.sh now writes a temporary file and renames it over
    build/release/*.duckdb_extension, so a loaded file is never rewritten in
    place (older builds truncated it, and a process that had it loaded died
    with SIGSEGV). The copy is kept anyway: every run of a benchmark (and its
    fresh peak-RSS subprocesses) loads the same binary, recorded by sha256,
    even when a build replaces build/release meanwhile. The file name must
    stay <name>.duckdb_extension: DuckDB derives the init symbol from it.
    """
    for _ in range(5):
        sha = sha256_file(path)
        dest_dir = os.path.join(data_dir, f"ext-{sha[:12]}")
        dest = os.path.join(dest_dir, os.path.basename(path))
        if os.path.exists(dest) and sha256_file(dest) == sha:
            return dest, sha
        os.makedirs(dest_dir, exist_ok=True)
        tmp = f"{dest}.tmp-{os.getpid()}"
        shutil.copyfile(path, tmp)
        if sha256_file(tmp) == sha:  # not rewritten while copying
            os.replace(tmp, dest)
            return dest, sha
        os.remove(tmp)
        time.sleep(2)
    raise RuntimeError(f"{path} keeps changing (a build is writing it?)")


def extension_info(path: str, sha: str, loaded: str) -> dict:
    st = os.stat(path)
    info = {
        "path": path,
        "loaded_copy": loaded,
        "sha256": sha,
        "mtime": _dt.datetime.fromtimestamp(st.st_mtime, _dt.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src"], capture_output=True, text=True)
        info["git_head"] = head.stdout.strip()
        info["src_dirty"] = bool(dirty.stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def summarize(times: list[float], nbytes: int) -> dict:
    if not times:
        return {}
    med = statistics.median(times)
    return {
        "median_s": med,
        "min_s": min(times),
        "max_s": max(times),
        "mb_per_s_median": nbytes / 1e6 / med,
        "mb_per_s_best": nbytes / 1e6 / min(times),
    }


def fmt_mib(kib) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.0f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="schema_sanitizer vs DuckDB readers (benchmark, not a test)")
    p.add_argument("--size-mb", type=float, default=300, help="input size in MB (10^6 bytes), default 300")
    p.add_argument("--runs", type=int, default=5, help="timed runs per side, default 5")
    p.add_argument("--data-dir", default=os.path.join(HERE, "data"), help="inputs, outputs, results.json")
    p.add_argument("--threads", type=int, default=None, help="DuckDB threads setting (default: DuckDB's default)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    p.add_argument("--extension", default=DEFAULT_EXTENSION, help="path of the .duckdb_extension to LOAD")
    p.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocess runs")
    a = p.parse_args(argv)
    faulthandler.enable()  # a crash inside a query prints the Python stack
    if a.runs < 1:
        p.error("--runs must be >= 1")

    cases = CASES
    if a.cases:
        wanted = [c.strip() for c in a.cases.split(",") if c.strip()]
        unknown = sorted(set(wanted) - {c["name"] for c in CASES})
        if unknown:
            p.error(f"unknown case(s) {unknown}; known: {[c['name'] for c in CASES]}")
        cases = [c for c in CASES if c["name"] in wanted]

    extension = os.path.abspath(a.extension)
    if not os.path.exists(extension):
        print(f"extension not found: {extension} (run `make build`)", file=sys.stderr)
        return 2
    data_dir = os.path.abspath(a.data_dir)
    os.makedirs(data_dir, exist_ok=True)
    started = time.perf_counter()
    loaded, sha = private_extension_copy(extension, data_dir)

    import duckdb

    con = connect(loaded, a.threads)
    threads_effective = con.execute("SELECT current_setting('threads')").fetchone()[0]
    results: dict = {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "duckdb_version": duckdb.__version__,
        "threads_setting": a.threads,
        "threads_effective": threads_effective,
        "size_mb": a.size_mb,
        "seed": a.seed,
        "runs": a.runs,
        "machine": machine_info(),
        "loadavg_start": os.getloadavg(),
        "extension": extension_info(extension, sha, loaded),
        "cases": [],
    }
    errors = 0

    for case in cases:
        name = case["name"]
        path = input_path(case, data_dir, a.size_mb, a.seed)
        print(f"== {name}: {case['what']}", flush=True)
        why_not = missing_requirements(case)
        if why_not:
            print(f"  SKIPPED: {why_not}", flush=True)
            results["cases"].append(
                {"name": name, "what": case["what"], "labels": case.get("labels", {}), "skipped": why_not}
            )
            continue
        if not os.path.exists(path):
            t0 = time.perf_counter()
            case["input"]["generate"](path, a.seed, case_size_mb(case, a.size_mb))
            print(f"  generation took {time.perf_counter() - t0:.1f} s", flush=True)
        files = input_files(case, path)
        nbytes = sum(os.path.getsize(f) for f in files)
        for f in files:
            warm_page_cache(f)
        arg = input_arg(case, path)
        outs = {s: os.path.join(data_dir, f"{name}-{s}.parquet") for s in SIDES}
        specs = {s: side_spec(case, s, arg, outs[s]) for s in SIDES}
        sql = {s: specs[s]["sql"] if "sql" in specs[s] else specs[s]["desc"] for s in SIDES}
        res: dict = {
            "name": name,
            "what": case["what"],
            "labels": case.get("labels", {}),
            "input": arg,
            "input_files": len(files),
            "input_mb": case_size_mb(case, a.size_mb),
            "input_bytes": nbytes,
            "sql": sql,
            "order": [],
        }
        for s in SIDES:
            res[s] = {"times_s": [], "cpu_s": [], "other_cpu_s": [], "steal_s": [], "rows": None, "error": None}
        slots = [(s, s, specs[s], arg, outs[s], res[s], nbytes) for s in SIDES]

        pf = case.get("per_file")
        if pf:
            # The same statements on one file holding the same rows, timed in
            # the same rounds (per-file overhead = difference / files).
            single = pf["path"](data_dir, a.seed, a.size_mb)
            if not os.path.exists(single):
                t0 = time.perf_counter()
                pf["generate"](single, a.seed, a.size_mb)
                print(f"  generation took {time.perf_counter() - t0:.1f} s", flush=True)
            single_bytes = os.path.getsize(single)
            warm_page_cache(single)
            res["per_file"] = {"input": single, "input_bytes": single_bytes, "files": len(files), "sql": {}}
            for s in SIDES:
                out1 = os.path.join(data_dir, f"{name}-{s}-one-file.parquet")
                spec1 = side_spec(case, s, single, out1)
                res["per_file"]["sql"][s] = spec1["sql"] if "sql" in spec1 else spec1["desc"]
                side1 = {"times_s": [], "cpu_s": [], "other_cpu_s": [], "steal_s": [], "rows": None, "error": None}
                res["per_file"][s] = side1
                slots.append((f"{s}-one-file", s, spec1, single, out1, side1, single_bytes))

        for run in range(a.runs):
            order = slots if run % 2 == 0 else slots[::-1]
            for key, s, spec, inp, out, side, nb in order:
                if side["error"]:
                    continue  # failed once: do not repeat a failing statement
                res["order"].append(key)
                # A fresh connection to the same database for every statement:
                # the extension keeps bound plans per connection (its bind
                # cache), and a cached plan would skip the schema inference
                # that every run is meant to include.
                cur = None if "py" in spec else con.cursor()
                m0, own0 = _machine_cpu_seconds(), _own_cpu_seconds()
                t0 = time.perf_counter()
                try:
                    if cur is None:
                        rows = spec["py"](inp, out)
                    else:
                        rows = cur.execute(spec["sql"]).fetchall()[0][0]
                    dt = time.perf_counter() - t0
                except (duckdb.Error if "sql" in spec else Exception) as e:
                    side["error"] = f"{type(e).__name__}: {e}"
                    errors += 1
                    print(f"  run {run + 1} {key}: ERROR {side['error']}", flush=True)
                    continue
                finally:
                    if cur is not None:
                        cur.close()
                m1, own1 = _machine_cpu_seconds(), _own_cpu_seconds()
                own = own1 - own0
                # CPU time other processes used (and hypervisor steal) during
                # this run: noise indicators.
                other = steal = None
                if m0 is not None and m1 is not None:
                    other = max(0.0, m1[0] - m0[0] - own)
                    steal = m1[1] - m0[1]
                side["times_s"].append(dt)
                side["cpu_s"].append(own)
                side["other_cpu_s"].append(other)
                side["steal_s"].append(steal)
                side["rows"] = rows
                print(
                    f"  run {run + 1} {key:8s} {dt:7.2f} s  {nb / 1e6 / dt:7.1f} MB/s  rows={rows}"
                    f"  cpu {own:.1f} s"
                    + ("" if other is None else f"  other processes {other:.1f} cpu-s  steal {steal:.1f} s"),
                    flush=True,
                )

        if pf:
            p1 = res["per_file"]
            for s in SIDES:
                side1 = p1[s]
                side1.update(summarize(side1["times_s"], p1["input_bytes"]))
                if side1["cpu_s"]:
                    side1["cpu_s_median"] = statistics.median(side1["cpu_s"])
                if res[s]["times_s"] and side1["times_s"]:
                    many = statistics.median(res[s]["times_s"])
                    p1[f"overhead_ms_per_file_{s}"] = 1000 * (many - side1["median_s"]) / len(files)
                if side1["rows"] is not None and res[s]["rows"] is not None and side1["rows"] != res[s]["rows"]:
                    p1.setdefault("notes", []).append(
                        f"{s}: {res[s]['rows']} rows from the files, {side1['rows']} from the one file"
                    )
                    print(f"  NOTE per-file {p1['notes'][-1]}", flush=True)

        for s in SIDES:
            side = res[s]
            side.update(summarize(side["times_s"], nbytes))
            if side["cpu_s"]:
                side["cpu_s_median"] = statistics.median(side["cpu_s"])
            others = [x for x in side["other_cpu_s"] if x is not None]
            if others:
                side["other_cpu_s_total"] = sum(others)
            steals = [x for x in side["steal_s"] if x is not None]
            if steals:
                side["steal_s_total"] = sum(steals)
            out = outs[s]
            if not side["error"] and os.path.exists(out):
                side["output_schema"] = [
                    f"{r[0]} {r[1]}" for r in con.execute(f"DESCRIBE FROM {sql_literal(out)}").fetchall()
                ]
            if not a.no_rss and not side["error"]:
                m = measure_rss(specs[s], loaded, a.threads, case.get("requires", ()), arg, out)
                side["rss_run"] = m
                side["peak_rss_kib"] = m.get("peak_rss_kib")
                if m.get("error"):
                    print(f"  peak-RSS run {s}: ERROR {m['error']}", flush=True)
                    errors += 1
                else:
                    imports = (
                        f", after imports: {fmt_mib(m['peak_rss_kib_after_imports'])} MiB"
                        if "peak_rss_kib_after_imports" in m
                        else ""
                    )
                    print(
                        f"  peak-RSS run {s:8s} {m['seconds']:7.2f} s  peak RSS {fmt_mib(m['peak_rss_kib'])} MiB"
                        f" (after LOAD: {fmt_mib(m['peak_rss_kib_before'])} MiB{imports})  rows={m.get('rows')}",
                        flush=True,
                    )
        o, b = res["ours"], res["baseline"]
        if o.get("median_s") and b.get("median_s"):
            res["ratio_median"] = b["median_s"] / o["median_s"]
            res["ratio_best"] = b["min_s"] / o["min_s"]
        if o["rows"] is not None and b["rows"] is not None and o["rows"] != b["rows"]:
            res["note"] = f"row counts differ: ours {o['rows']}, baseline {b['rows']}"
            print(f"  NOTE {res['note']}", flush=True)
        results["cases"].append(res)

    results["loadavg_end"] = os.getloadavg()
    results["total_seconds"] = time.perf_counter() - started
    with open(os.path.join(data_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")

    print()
    print(report_markdown(results))
    print(f"\nresults: {os.path.join(data_dir, 'results.json')}  (total {results['total_seconds']:.0f} s)")
    return 1 if errors else 0


def report_markdown(results: dict) -> str:
    lines = [
        f"DuckDB {results['duckdb_version']}, threads={results['threads_effective']}"
        f" ({'default' if results['threads_setting'] is None else 'set'}), "
        f"{results['runs']} runs per side, input {results['size_mb']:g} MB, seed {results['seed']}",
        "",
        "| case | reader | median s | min s | MB/s (median) | MB/s (best) | CPU s (median) | peak RSS MiB | rows |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for c in results["cases"]:
        if c.get("skipped"):
            for s in SIDES:
                lines.append(f"| {c['name']} | {c.get('labels', {}).get(s, s)} | skipped | | | | | | |")
            ratios.append(f"- {c['name']}: SKIPPED: {c['skipped']}")
            continue
        for s in SIDES:
            side = c[s]
            reader = c.get("labels", {}).get(s, s)
            if side.get("median_s") is None:
                lines.append(f"| {c['name']} | {reader} | error | | | | | | |")
                continue
            lines.append(
                f"| {c['name']} | {reader} | {side['median_s']:.2f} | {side['min_s']:.2f} | "
                f"{side['mb_per_s_median']:.1f} | {side['mb_per_s_best']:.1f} | "
                f"{side.get('cpu_s_median', float('nan')):.1f} | "
                f"{fmt_mib(side.get('peak_rss_kib'))} | {side['rows']} |"
            )
        if c.get("input_mb") is not None and c["input_mb"] != results["size_mb"]:
            ratios.append(f"- {c['name']}: input {c['input_mb']:g} MB ({c['input_bytes']:,} bytes), not {results['size_mb']:g} MB")
        if "ratio_median" in c:
            ratios.append(
                f"- {c['name']}: ours/baseline throughput = {c['ratio_median']:.2f}x (medians), "
                f"{c['ratio_best']:.2f}x (best runs)"
            )
        for s in SIDES:
            if c[s]["error"]:
                ratios.append(f"- {c['name']} {s}: ERROR {c[s]['error']}")
        if c.get("note"):
            ratios.append(f"- {c['name']}: {c['note']}")
        p1 = c.get("per_file")
        if p1:
            parts = []
            for s in SIDES:
                reader = c.get("labels", {}).get(s, s)
                if p1[s].get("median_s") is None or f"overhead_ms_per_file_{s}" not in p1:
                    parts.append(f"{reader}: n/a")
                    continue
                parts.append(
                    f"{reader} {c[s]['median_s']:.2f} s on the files vs {p1[s]['median_s']:.2f} s on one file"
                    f" ({p1[s]['rows']} rows): {p1[f'overhead_ms_per_file_{s}']:.3f} ms per file"
                )
            ratios.append(
                f"- {c['name']}: per-file overhead = (median on the {p1['files']:,} files - median on one file"
                f" of the same rows) / {p1['files']:,}; " + "; ".join(parts)
            )
            for n in p1.get("notes", []):
                ratios.append(f"- {c['name']}: NOTE per-file {n}")
        other = sum(c[s].get("other_cpu_s_total", 0.0) for s in SIDES)
        steal = sum(c[s].get("steal_s_total", 0.0) for s in SIDES)
        timed = sum(sum(c[s]["times_s"]) for s in SIDES)
        if p1:  # the one-file runs were timed in the same rounds
            other += sum(sum(x for x in p1[s]["other_cpu_s"] if x is not None) for s in SIDES)
            steal += sum(sum(x for x in p1[s]["steal_s"] if x is not None) for s in SIDES)
            timed += sum(sum(p1[s]["times_s"]) for s in SIDES)
        if timed:
            ratios.append(
                f"- {c['name']}: during the {timed:.0f} s of timed runs other processes used {other:.1f} CPU-s"
                f" ({100 * other / timed:.0f}% of one core); hypervisor steal {steal:.1f} s"
            )
    lines.append("")
    lines.extend(ratios)
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
