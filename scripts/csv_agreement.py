#!/usr/bin/env python3
"""Row-count agreement between DuckDB's read_csv and the extension's sanitize_csv.

For every CSV-like file under a directory (default: the DuckDB CSV test corpus),
compare

    SELECT count(*) FROM read_csv(path)                 -- DuckDB, defaults (auto-detect)
    SELECT count(*) FROM sanitize_csv(path, <options>)  -- ours, options chosen by --mode

and report how often the two counts agree. It is a measurement, not a test: the
exit code is 0 whatever the figures are (2 only when the script is misused, or
when the extension cannot be loaded at all, since nothing could be measured).

Usage (from the repository root):

    .venv/bin/python scripts/csv_agreement.py                      # mode defaults
    .venv/bin/python scripts/csv_agreement.py --mode defaults --mode by_hand \\
        --jobs 2 --out /tmp/csv_agreement/report.md
    .venv/bin/python scripts/csv_agreement.py --mode sniffed --out report.jsonl
    .venv/bin/python scripts/csv_agreement.py --include 'afl/' path/to/dir other.csv

Modes (--mode, repeatable; default `defaults`):

  defaults  sanitize_csv(path, validate_extension := false, on_error := 'skip_row')
            (these two are the base of every mode; see --option below)
  sniffed   the same plus csv_auto_detect := true
  by_hand   the same as defaults plus DuckDB's own sniffed dialect, taken from
            `SELECT * FROM sniff_csv(path)`: csv_delimiter, csv_quote,
            csv_escape, csv_has_header, csv_skip_lines, csv_comment, each only
            when it differs from our default (`,`, `"`, escape = quote, header,
            0, no comment). DuckDB's "(empty)" quote or escape is passed as ''.
            A value our build rejects (e.g. delimiter ':') is still passed, so
            the bind error shows up as "ours fails". Where sniff_csv fails,
            nothing is added (the same run as defaults).

Every option is first probed against the build (a one-line file, one option at a
time). A named parameter the build does not know ("Invalid named parameter") is
reported; `sniffed` is skipped when csv_auto_detect is unknown, and `by_hand`
drops unknown parameters (the per-file listing says which were dropped).
--option NAME=VALUE adds or overrides a named parameter in every mode (VALUE
true/false/an integer/else a string), --no-option NAME removes one of the base
two (e.g. `--no-option on_error` measures the build's own on_error default,
under which a scan whose every record is bad fails).

Files measured (see list_files): every regular file below the given
directories, recursively, symlinks not followed and not counted (the corpus
holds links to files already counted, and a link to a parent directory). A
compression suffix (.gz, .gzip, .zst, .zstd) is set aside before the name is
judged. Files whose remaining extension names another format (.parquet, .json,
.jsonl, .ndjson, .xml, .arrow, .avro, .orc, .xlsx, archives, images, databases,
...) are skipped; everything else (.csv, .tsv, .txt, .tbl, .dat, no extension,
unknown extensions such as .gzz) counts as something a user might read as CSV.
Both readers get the same path and pick decompression by name.

Isolation: each measurement runs in its own subprocess of this script
(`--_worker`, a spec on stdin, JSON lines on stdout), with a wall-clock
timeout (--timeout, 30 s) and RLIMIT_AS (--memory-gib, 4 GiB), DuckDB threads=1
(--threads); a timeout, a death by signal or a memory failure is recorded as the
reader failing, never stops the run. --jobs (2) subprocesses run at once.

The extension is copied (same file name) into a private temporary directory
before anything else and loaded from there, since the build may be replaced
during the run; its md5 is printed.

DuckDB's results (read_csv count or error, sniff_csv dialect) are cached in a
JSON file (--cache, default /tmp/csv_agreement_cache/duckdb_<version>.json)
keyed by path, mtime and size, so a re-run only measures ours. Timeouts and
deaths are not cached. --refresh-reference ignores the cache.

Output: per mode, on stdout,
    [defaults] agree N of M files where both readers succeed (X.X%)
and the counts of files where only one reader fails or both do; and to --out
(default /tmp/csv_agreement/report.md; `.jsonl` gives JSON lines, anything else
Markdown) the per-file listing of every file that does not agree (path, DuckDB
count or error, ours count or error first line, DuckDB's sniffed dialect, the
options passed). --all lists agreeing files too.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

DEFAULT_DIRS = ["/work/corpora/duckdb/data/csv"]
DEFAULT_EXTENSION = "/work/main/build/release/schema_sanitizer.duckdb_extension"
DEFAULT_OUT = "/tmp/csv_agreement/report.md"
DEFAULT_CACHE_DIR = "/tmp/csv_agreement_cache"
MODES = ("defaults", "sniffed", "by_hand")

# Options every mode passes (besides the path).
BASE_OPTIONS = {"validate_extension": False, "on_error": "skip_row"}

# Optional named parameters and a harmless value to probe each with.
PROBE_OPTIONS = {
    "csv_auto_detect": True,
    "csv_quote": '"',
    "csv_escape": '"',
    "csv_comment": "#",
    "csv_skip_lines": 0,
    "csv_null_padding": False,
    "csv_has_header": True,
    "csv_delimiter": ",",
}

COMPRESSION_SUFFIXES = (".gz", ".gzip", ".zst", ".zstd")
# Extensions (after any compression suffix is set aside) that name other formats.
NOT_CSV_EXTENSIONS = {
    ".parquet", ".json", ".jsonl", ".ndjson", ".geojson", ".xml", ".arrow", ".feather",
    ".ipc", ".avro", ".orc", ".xlsx", ".xls", ".ods", ".zip", ".tar", ".tgz", ".bz2",
    ".xz", ".7z", ".lz4", ".db", ".duckdb", ".sqlite", ".wal", ".png", ".jpg", ".jpeg",
    ".gif", ".pdf", ".so", ".duckdb_extension",
}

# DuckDB's sniff_csv spelling of "no quote / no escape / no comment".
SNIFF_EMPTY = "(empty)"


# --------------------------------------------------------------------------
# Worker side: runs in a fresh subprocess, one measurement, JSON lines out.
# --------------------------------------------------------------------------

def error_summary(text, limit=300):
    """The informative head of an error message, on one line.

    DuckDB's CSV errors read "CSV Error on Line: 4", "Original Line: ..." (which
    may itself span lines), the cause, then advice ("Possible Solution", "Possible
    fixes"), a dump of the dialect ("  file = ...") and the query context
    ("LINE 1: ..."): keep the first line and the cause. Other errors keep their
    first paragraph, without a binder's "Candidates:" list or a sniffer's
    search space.
    """
    lines = str(text).strip().splitlines() or [""]
    head = lines[0].strip()
    if re.search(r"CSV Error on Line: \d+$", head):
        end = next((i for i, line in enumerate(lines)
                    if line.startswith(("Possible", "  file =", "LINE "))), len(lines))
        cause = next((line.strip() for line in reversed(lines[1:end]) if line.strip()), "")
        kept = [head, cause] if cause else [head]
    else:
        kept = []
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("LINE ", "Candidates:", "The search space", "Possible")):
                break
            kept.append(line)
    summary = " — ".join(kept)
    return summary if len(summary) <= limit else summary[:limit] + "…"


def _emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _connect(spec):
    import duckdb  # imported here so the parent never loads DuckDB

    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": spec["threads"]})
    if spec.get("extension"):
        con.execute(f"LOAD {sql_literal(spec['extension'])}")
    return con


def sql_literal(value):
    """A SQL literal for a bool, int or str (strings quoted, ' doubled).

    Values are written into the SQL text rather than bound as parameters: binding
    a Python value makes the duckdb client import pandas, ~0.7 s per process.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def display_literal(value):
    """sql_literal, with a tab shown as chr(9) (which the extension also accepts)."""
    return "chr(9)" if value == "\t" else sql_literal(value)


def options_sql(options):
    """`, name := literal` for each option."""
    return "".join(f", {name} := {sql_literal(value)}" for name, value in options.items())


def _run_step(con, step, sql):
    """Run one query; emit {"step", "ok", "value" | "error", "seconds"}."""
    started = time.monotonic()
    try:
        rows = con.execute(sql).fetchall()
        _emit({"step": step, "ok": True, "value": rows, "seconds": time.monotonic() - started})
    except Exception as e:  # noqa: BLE001 -- every DuckDB error is a result here
        _emit({"step": step, "ok": False, "error": str(e), "seconds": time.monotonic() - started})


def worker_main():
    spec = json.load(sys.stdin)
    try:
        con = _connect(spec)
    except Exception as e:  # noqa: BLE001
        _emit({"step": "connect", "ok": False, "error": str(e)})
        return
    kind, path = spec["kind"], sql_literal(spec.get("path", ""))
    if kind == "reference":
        _run_step(con, "count", f"SELECT count(*) FROM read_csv({path})")
        _run_step(con, "sniff",
                  "SELECT Delimiter, Quote, Escape, NewLineDelimiter, Comment, SkipRows, HasHeader, "
                  f"len(Columns) FROM sniff_csv({path})")
    elif kind == "ours":
        _run_step(con, "count", f"SELECT count(*) FROM sanitize_csv({path}{options_sql(spec['options'])})")
    elif kind == "probe":
        # One option at a time on a tiny file, so each unknown name is found.
        for name, value in PROBE_OPTIONS.items():
            opts = dict(BASE_OPTIONS, **{name: value})
            _run_step(con, name, f"SELECT count(*) FROM sanitize_csv({path}{options_sql(opts)})")
    else:
        raise SystemExit(f"unknown worker kind {kind!r}")


# --------------------------------------------------------------------------
# Parent side.
# --------------------------------------------------------------------------

def _limit_memory(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return apply


def run_worker(spec, timeout, memory_bytes):
    """Run one measurement in a subprocess.

    Returns (steps, failure): steps maps step name -> its JSON record; failure is
    None, or a text such as "timeout after 30 s" / "killed by SIGSEGV" that
    applies to every step the worker did not report.
    """
    cmd = [sys.executable, os.path.abspath(__file__), "--_worker"]
    failure = None
    try:
        proc = subprocess.run(cmd, input=json.dumps(spec).encode(), capture_output=True,
                              timeout=timeout, preexec_fn=_limit_memory(memory_bytes))
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:  # run() has killed the child
        out, err, code = e.stdout or b"", e.stderr or b"", None
        failure = f"timeout after {timeout:g} s"
    steps = {}
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
            steps[record["step"]] = record
        except (ValueError, KeyError):
            pass
    if failure is None and code != 0:
        if code < 0:
            failure = f"killed by {signal.Signals(-code).name}"
        else:
            tail = err.decode("utf-8", "replace").strip().splitlines()
            failure = f"worker exit code {code}" + (f": {tail[-1][:200]}" if tail else "")
        if "MemoryError" in err.decode("utf-8", "replace") or "std::bad_alloc" in err.decode("utf-8", "replace"):
            failure += " (out of memory under RLIMIT_AS)"
    return steps, failure


def step_result(steps, failure, name):
    """Normalise one step to {"ok", "value" or "error", "seconds", "transient" (a timeout)}."""
    record = steps.get(name)
    if record is None:
        if "connect" in steps:
            return {"ok": False, "error": "connect/LOAD failed: " + error_summary(steps["connect"]["error"]),
                    "transient": False}
        return {"ok": False, "error": failure or "no result",
                "transient": bool(failure and failure.startswith("timeout"))}
    if record["ok"]:
        return {"ok": True, "value": record["value"], "seconds": record.get("seconds")}
    # Keep the whole message but shorten each line (an "Original Line:" may be megabytes).
    error = "\n".join(line[:500] for line in record["error"].splitlines())[:8000]
    return {"ok": False, "error": error, "seconds": record.get("seconds"), "transient": False}


def parse_option_value(text):
    """--option's VALUE: true/false, an integer, or else the string itself."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def list_files(roots, include=None):
    """Every regular, CSV-like file below roots (see the module docstring)."""
    pattern = re.compile(include) if include else None
    found = []
    for root in roots:
        if os.path.isfile(root):
            candidates = [root]
        else:
            candidates = []
            for dirpath, dirnames, filenames in os.walk(root):  # followlinks=False
                dirnames.sort()
                candidates.extend(os.path.join(dirpath, f) for f in sorted(filenames))
        for path in candidates:
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            name = os.path.basename(path).lower()
            for suffix in COMPRESSION_SUFFIXES:
                if name.endswith(suffix):
                    name = name[: -len(suffix)]
                    break
            if os.path.splitext(name)[1] in NOT_CSV_EXTENSIONS:
                continue
            if pattern and not pattern.search(path):
                continue
            found.append(os.path.abspath(path))
    return sorted(set(found))


def file_key(path):
    st = os.stat(path)
    return f"{path}|{st.st_mtime_ns}|{st.st_size}"


class Cache:
    """DuckDB reference results in one JSON file, keyed by path|mtime_ns|size."""

    def __init__(self, path, duckdb_version, refresh):
        self.path, self.lock = path, threading.Lock()
        self.entries = {}
        if not refresh and os.path.exists(path):
            try:
                with open(path) as f:
                    data = json.load(f)
                if data.get("duckdb_version") == duckdb_version:
                    self.entries = data.get("entries", {})
            except (OSError, ValueError):
                pass  # an unreadable cache is rebuilt
        self.duckdb_version = duckdb_version

    def get(self, key):
        return self.entries.get(key)

    def put(self, key, value):
        with self.lock:
            self.entries[key] = value

    def save(self):
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        tmp = self.path + ".tmp"
        with self.lock, open(tmp, "w") as f:
            json.dump({"duckdb_version": self.duckdb_version, "entries": self.entries}, f)
        os.replace(tmp, self.path)


def parse_sniff(sniff):
    """sniff_csv's row -> a dict, or None when the sniffer failed."""
    if not sniff or not sniff.get("ok"):
        return None
    delim, quote, escape, newline, comment, skip, header, ncols = sniff["value"][0]
    return {"delimiter": delim, "quote": quote, "escape": escape, "newline": newline,
            "comment": comment, "skip": skip, "header": header, "columns": ncols}


def by_hand_options(dialect):
    """DuckDB's sniffed dialect as our named parameters (defaults left out)."""
    opts = {}
    if dialect is None:
        return opts
    empty = lambda v: "" if v == SNIFF_EMPTY else v  # noqa: E731
    quote, escape = empty(dialect["quote"]), empty(dialect["escape"])
    if dialect["delimiter"] != ",":
        opts["csv_delimiter"] = dialect["delimiter"]
    if quote != '"':
        opts["csv_quote"] = quote
    # Our default escape is the quote doubled; "no quote" makes escape moot.
    if quote and escape != quote:
        opts["csv_escape"] = escape
    if not dialect["header"]:
        opts["csv_has_header"] = False
    if dialect["skip"]:
        opts["csv_skip_lines"] = int(dialect["skip"])
    if empty(dialect["comment"]):
        opts["csv_comment"] = dialect["comment"]
    return opts


def dialect_text(dialect):
    if dialect is None:
        return "sniff failed"
    show = lambda v: {"\t": "tab", SNIFF_EMPTY: "none"}.get(v, f"'{v}'")  # noqa: E731
    parts = [f"delim {show(dialect['delimiter'])}", f"quote {show(dialect['quote'])}",
             f"escape {show(dialect['escape'])}", f"header {'yes' if dialect['header'] else 'no'}",
             f"{dialect['columns']} cols"]
    if dialect["skip"]:
        parts.append(f"skip {dialect['skip']}")
    if dialect["comment"] != SNIFF_EMPTY:
        parts.append(f"comment {show(dialect['comment'])}")
    return ", ".join(parts)


def classify(ref, ours):
    if ref["ok"] and ours["ok"]:
        return "agree" if ref["rows"] == ours["rows"] else "disagree"
    if ref["ok"]:
        return "only_ours_fails"
    if ours["ok"]:
        return "only_duckdb_fails"
    return "both_fail"


def md_cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=DEFAULT_DIRS,
                        help=f"directories (recursive) or files (default {DEFAULT_DIRS[0]})")
    parser.add_argument("--mode", action="append", choices=MODES,
                        help="defaults | sniffed | by_hand; repeatable (default: defaults)")
    parser.add_argument("--extension", default=DEFAULT_EXTENSION)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per measurement")
    parser.add_argument("--memory-gib", type=float, default=4.0, help="RLIMIT_AS per measurement")
    parser.add_argument("--threads", type=int, default=1, help="DuckDB threads per measurement")
    parser.add_argument("--cache", help="reference cache file (default "
                        f"{DEFAULT_CACHE_DIR}/duckdb_<version>.json)")
    parser.add_argument("--refresh-reference", action="store_true", help="ignore cached DuckDB results")
    parser.add_argument("--out", default=DEFAULT_OUT, help=".jsonl for JSON lines, otherwise Markdown")
    parser.add_argument("--all", action="store_true", help="list agreeing files too")
    parser.add_argument("--include", help="only paths matching this regular expression")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="add or override a named parameter of sanitize_csv in every mode")
    parser.add_argument("--no-option", action="append", default=[], metavar="NAME",
                        help=f"leave out a base parameter ({', '.join(BASE_OPTIONS)})")
    args = parser.parse_args(argv)
    modes = list(dict.fromkeys(args.mode or ["defaults"]))
    if args.jobs < 1 or args.timeout <= 0 or args.memory_gib <= 0 or args.threads < 1:
        parser.error("--jobs, --timeout, --memory-gib and --threads must be positive")
    args.base_options = dict(BASE_OPTIONS)
    for name in args.no_option:
        if name not in BASE_OPTIONS:
            parser.error(f"--no-option {name}: not one of {', '.join(BASE_OPTIONS)}")
        del args.base_options[name]
    for item in args.option:
        name, eq, value = item.partition("=")
        if not eq or not re.fullmatch(r"[a-z_]+", name):
            parser.error(f"--option {item!r}: expected NAME=VALUE")
        args.base_options[name] = parse_option_value(value)
    for p in args.paths:
        if not os.path.exists(p):
            parser.error(f"no such file or directory: {p}")
    if not os.path.isfile(args.extension):
        parser.error(f"no extension at {args.extension}")

    import duckdb  # only for the version (the cache key); never used to read here
    duckdb_version = duckdb.__version__
    memory_bytes = int(args.memory_gib * (1 << 30))
    started = time.monotonic()

    # 1. A private copy of the build, same file name (DuckDB derives the init symbol from it).
    private_dir = tempfile.mkdtemp(prefix="csv_agreement_")
    extension = os.path.join(private_dir, os.path.basename(args.extension))
    shutil.copy2(args.extension, extension)
    with open(extension, "rb") as f:
        ext_md5 = hashlib.md5(f.read()).hexdigest()
    ext_mtime = datetime.datetime.fromtimestamp(os.path.getmtime(extension)).isoformat(timespec="seconds")
    print(f"extension {args.extension} (built {ext_mtime}, md5 {ext_md5}) copied to {extension}")
    print(f"duckdb {duckdb_version}, jobs {args.jobs}, timeout {args.timeout:g} s, "
          f"RLIMIT_AS {args.memory_gib:g} GiB, threads {args.threads}")

    try:
        return _measure(args, modes, extension, ext_md5, ext_mtime, duckdb_version, memory_bytes,
                        private_dir, started)
    finally:
        shutil.rmtree(private_dir, ignore_errors=True)


def _measure(args, modes, extension, ext_md5, ext_mtime, duckdb_version, memory_bytes, private_dir, started):
    base_spec = {"threads": args.threads}

    # 2. Which optional named parameters does this build know?
    probe_file = os.path.join(private_dir, "probe.csv")
    with open(probe_file, "w") as f:
        f.write("a,b\n1,2\n")
    steps, failure = run_worker(dict(base_spec, kind="probe", path=probe_file, extension=extension),
                                args.timeout, memory_bytes)
    if "connect" in steps:
        print(f"cannot load the extension: {error_summary(steps['connect']['error'])}", file=sys.stderr)
        return 2
    unsupported = {}
    for name in PROBE_OPTIONS:
        r = step_result(steps, failure, name)
        if not r["ok"]:
            unsupported[name] = r["error"]
    unknown = sorted(n for n, e in unsupported.items() if "Invalid named parameter" in e)
    if unknown:
        print("named parameters this build does not know: " + ", ".join(unknown))
    for name, error in unsupported.items():
        if name not in unknown:
            print(f"probe of {name} failed: {error_summary(error)}")

    # 3. The files.
    files = list_files(args.paths, args.include)
    print(f"{len(files)} files under {', '.join(args.paths)}" + (f" matching {args.include!r}" if args.include else ""))
    if not files:
        return 0

    def run_pool(jobs, label):
        """jobs: list of (key, spec); returns {key: (steps, failure)} with progress on stderr."""
        results, done = {}, 0
        if not jobs:
            return results
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_worker, spec, args.timeout, memory_bytes): key for key, spec in jobs}
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
                done += 1
                if done % 100 == 0 or done == len(jobs):
                    print(f"  {label}: {done}/{len(jobs)} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
        return results

    # 4. DuckDB's reference results, from the cache where possible.
    cache_path = args.cache or os.path.join(DEFAULT_CACHE_DIR, f"duckdb_{duckdb_version}.json")
    cache = Cache(cache_path, duckdb_version, args.refresh_reference)
    keys = {path: file_key(path) for path in files}
    missing = [p for p in files if cache.get(keys[p]) is None]
    print(f"DuckDB reference: {len(files) - len(missing)} cached in {cache_path}, {len(missing)} to measure")
    ref_runs = run_pool([(p, dict(base_spec, kind="reference", path=p)) for p in missing], "read_csv")
    fresh = {}
    for path, (steps, failure) in ref_runs.items():
        entry = {"count": step_result(steps, failure, "count"), "sniff": step_result(steps, failure, "sniff")}
        fresh[path] = entry
        if not (entry["count"].get("transient") or entry["sniff"].get("transient")):
            cache.put(keys[path], entry)  # a timeout may be load, so it is measured again next time
    cache.save()
    reference = {p: fresh.get(p) or cache.get(keys[p]) for p in files}

    # 5. Ours, per mode.
    plans = {}  # (mode, path) -> (options, dropped)
    skipped_modes = {}
    for mode in modes:
        if mode == "sniffed" and "csv_auto_detect" in unknown:
            skipped_modes[mode] = "csv_auto_detect is not a named parameter of this build"
            continue
        for path in files:
            opts, dropped = dict(args.base_options), {}
            if mode == "sniffed":
                opts["csv_auto_detect"] = True
            elif mode == "by_hand":
                for name, value in by_hand_options(parse_sniff(reference[path]["sniff"])).items():
                    (dropped if name in unknown else opts)[name] = value
            plans[(mode, path)] = (opts, dropped)
    for mode, why in skipped_modes.items():
        print(f"[{mode}] skipped: {why}")
    ours_runs = run_pool([(key, dict(base_spec, kind="ours", path=key[1], extension=extension, options=opts))
                          for key, (opts, _) in plans.items()], "sanitize_csv")

    # 6. Classify and report.
    def reader_view(r):
        if r["ok"]:
            return {"ok": True, "rows": r["value"][0][0]}
        return {"ok": False, "error": error_summary(r["error"])}

    records = []
    for (mode, path), (opts, dropped) in plans.items():
        ref = reader_view(reference[path]["count"])
        ours_step = step_result(*ours_runs[(mode, path)], "count")
        ours = reader_view(ours_step)
        extra = {k: v for k, v in opts.items() if k not in args.base_options}
        records.append({
            "mode": mode, "path": path, "class": classify(ref, ours),
            "duckdb": ref, "ours": ours, "ours_seconds": ours_step.get("seconds"),
            "dialect": parse_sniff(reference[path]["sniff"]),
            "options": extra, "dropped_options": dropped,
        })
    records.sort(key=lambda r: (modes.index(r["mode"]), r["path"]))

    summaries = []
    for mode in modes:
        if mode in skipped_modes:
            summaries.append(f"[{mode}] skipped: {skipped_modes[mode]}")
            continue
        rs = [r for r in records if r["mode"] == mode]
        n = {c: sum(r["class"] == c for r in rs) for c in
             ("agree", "disagree", "only_ours_fails", "only_duckdb_fails", "both_fail")}
        both_ok = n["agree"] + n["disagree"]
        pct = 100.0 * n["agree"] / both_ok if both_ok else 0.0
        lines = [
            f"[{mode}] agree {n['agree']} of {both_ok} files where both readers succeed ({pct:.1f}%)",
            f"[{mode}] {len(rs)} files: counts differ {n['disagree']}, only ours fails {n['only_ours_fails']}, "
            f"only DuckDB fails {n['only_duckdb_fails']}, both fail {n['both_fail']}",
        ]
        # Timeouts and deaths of either reader, in whatever class they fell.
        abnormal = []
        for reader in ("ours", "duckdb"):
            errors = [r[reader]["error"] for r in rs if not r[reader]["ok"]]
            timeouts = sum(e.startswith("timeout") for e in errors)
            deaths = sum(e.startswith(("killed by", "worker exit")) for e in errors)
            abnormal.append(f"{'ours' if reader == 'ours' else 'DuckDB'} {timeouts} timeouts, {deaths} crashes")
        lines.append(f"[{mode}] " + "; ".join(abnormal))
        rejected = sum(not r["ours"]["ok"] and bool(re.search(r'the "csv_\w+" parameter', r["ours"]["error"]))
                       for r in rs)
        if rejected:
            lines.append(f"[{mode}] {rejected} files: ours rejected an option value (bind error on a csv_ parameter)")
        dropped_files = sum(bool(r["dropped_options"]) for r in rs)
        if dropped_files:
            lines.append(f"[{mode}] {dropped_files} files had sniffed options this build does not know "
                         f"({', '.join(u for u in unknown if u in BY_HAND_PARAMS) or 'none'}); run without them")
        summaries.extend(lines)
    elapsed = time.monotonic() - started
    for line in summaries:
        print(line)
    print(f"elapsed {elapsed:.0f} s")

    listed = [r for r in records if args.all or r["class"] != "agree"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    header = {
        "command": " ".join([sys.executable, sys.argv[0]] + [shlex.quote(a) for a in sys.argv[1:]]),
        "extension": args.extension, "extension_md5": ext_md5, "extension_mtime": ext_mtime,
        "duckdb_version": duckdb_version, "unknown_parameters": unknown, "summary": summaries,
        "base_options": args.base_options,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    if args.out.endswith(".jsonl"):
        with open(args.out, "w") as f:
            f.write(json.dumps(dict(header, kind="header")) + "\n")
            for r in listed:
                f.write(json.dumps(dict(r, kind="file")) + "\n")
    else:
        write_markdown(args.out, header, listed, modes, skipped_modes, args.paths)
    print(f"per-file listing: {args.out}")
    return 0


BY_HAND_PARAMS = ("csv_delimiter", "csv_quote", "csv_escape", "csv_has_header", "csv_skip_lines", "csv_comment")

CLASS_TITLES = {
    "disagree": "Both read, counts differ",
    "only_ours_fails": "Only ours fails",
    "only_duckdb_fails": "Only DuckDB fails",
    "both_fail": "Both fail",
    "agree": "Agree",
}


def write_markdown(out, header, listed, modes, skipped_modes, roots):
    # Show paths relative to the (first) root when they lie below it.
    root = os.path.abspath(roots[0]) if roots and os.path.isdir(roots[0]) else None

    def short(path):
        return os.path.relpath(path, root) if root and path.startswith(root + os.sep) else path

    def count_or_error(v):
        return f"{v['rows']:,}" if v["ok"] else f"error: {v['error']}"

    def options_text(r):
        text = ", ".join(f"{k} := {display_literal(v)}" for k, v in r["options"].items())
        if r["dropped_options"]:
            text += (", " if text else "") + "dropped (unknown): " + ", ".join(
                f"{k} := {display_literal(v)}" for k, v in r["dropped_options"].items())
        return text

    with open(out, "w") as f:
        f.write("# CSV row-count agreement: read_csv vs sanitize_csv\n\n")
        f.write(f"- command: `{header['command']}`\n- date: {header['date']}\n")
        f.write(f"- extension: `{header['extension']}` (built {header['extension_mtime']}, md5 "
                f"`{header['extension_md5']}`), DuckDB {header['duckdb_version']}\n")
        f.write("- every mode passes: " + (", ".join(f"{k} := {display_literal(v)}" for k, v in header["base_options"].items())
                                          or "nothing") + "\n")
        f.write(f"- named parameters unknown to this build: {', '.join(header['unknown_parameters']) or 'none'}\n")
        if root:
            f.write(f"- paths below are relative to `{root}`\n")
        f.write("\n```\n" + "\n".join(header["summary"]) + "\n```\n")
        for mode in modes:
            if mode in skipped_modes:
                continue
            f.write(f"\n## Mode `{mode}`\n")
            for cls in ("disagree", "only_ours_fails", "only_duckdb_fails", "both_fail", "agree"):
                rs = [r for r in listed if r["mode"] == mode and r["class"] == cls]
                if not rs:
                    continue
                f.write(f"\n### {CLASS_TITLES[cls]} ({len(rs)})\n\n")
                cols = ["file", "DuckDB", "ours", "DuckDB's sniffed dialect"]
                if mode == "by_hand":
                    cols.append("options passed")
                f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
                for r in rs:
                    cells = [f"`{short(r['path'])}`", count_or_error(r["duckdb"]), count_or_error(r["ours"]),
                             dialect_text(r["dialect"])]
                    if mode == "by_hand":
                        cells.append(options_text(r))
                    f.write("| " + " | ".join(md_cell(c) for c in cells) + " |\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        worker_main()
        sys.exit(0)
    sys.exit(main())
