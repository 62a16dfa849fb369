#!/usr/bin/env python3
"""Value agreement between DuckDB's readers and the extension's, file by file.

For every file of one format below the given paths, read it with DuckDB's own
reader and with ours, and compare the row counts and, row by row, every
top-level column of DuckDB's result (a cell):

  --format json     read_json(path)                  -- defaults (auto-detection)
                    ours: sanitize_json_array when the file's first byte is
                    '[' (after a BOM and whitespace), sanitize_jsonl for
                    .jsonl/.ndjson, else sanitize_json
                    files: *.json, *.jsonl, *.ndjson (+ .gz)
  --format parquet  read_parquet(path), or with --reference pyarrow the table
                    pyarrow.parquet.read_table gives (through DuckDB's Arrow
                    import); ours: sanitize_parquet
                    files: *.parquet, *.parq, *.pq and files starting with PAR1
  --format csv      read_csv(path, all_varchar = true) -- DuckDB's sniffer
                    ours: sanitize_csv (every cell a string unless parse_*
                    options are given: docs/formats.md "CSV"), column_order
                    'source'; add --option csv_auto_detect=true for our
                    sniffer; --typed compares read_csv(path) with its types
                    against ours with parse_integers, parse_floats,
                    parse_iso_dates, parse_iso_timestamps, parse_iso_times
                    files: *.csv, *.tsv, *.txt (+ .gz)

Ours always gets field_name_policy := 'preserve', on_error := 'stop' and
validate_extension := false (a bad record is an error, not a NULL row), plus
any --option NAME=VALUE. It is a measurement, not a test: the exit code is 0
whatever the figures are (2 when misused or when the extension cannot load).

Usage (from the repository root):

    .venv/bin/python scripts/value_agreement.py --format json DIR_OR_FILE...
        [--reference duckdb|pyarrow] [--jobs 2] [--timeout 60] [--memory-gib 4]
        [--out /tmp/value_agreement/report.jsonl] [--option NAME=VALUE]...
        [--typed] [--extension build/release/schema_sanitizer.duckdb_extension]
    .venv/bin/python scripts/value_agreement.py --format parquet --reference pyarrow DIR
    .venv/bin/python scripts/value_agreement.py --format csv --option csv_auto_detect=true DIR

Each file is read in its own subprocess (timeout, RLIMIT_AS, DuckDB threads=1),
from a private copy of the build (which may be replaced during the run); the
sha256 of the build is printed.

How values are compared. Both rows are taken as JSON (DuckDB's to_json) and
parsed in Python. Ours is first put back into the source's shape with the
registry of the scan (the first row's schema_registry): the columns of one
source key's versions (`a`, `a_v2_struct`) are one value again, at every
struct level, and names are the source keys. Then a cell agrees when the
values are equal (numbers exactly as printed, so 1 and 1.0 agree, NaN
agrees with NaN; objects key by key, a missing key being NULL), or equal
only through one of these documented differences, each counted by name:

  temporal_text      two texts of the same date, time or instant: read_json
                     typed a string as DATE/TIME/TIMESTAMP (its auto-detection)
                     where ours keeps the string (docs/parsing.md: ours parses
                     strings only when asked); or read_parquet's TIMESTAMP /
                     TIMETZ against our TIMESTAMPTZ / TIME (docs/formats.md
                     "Parquet": a naive timestamp is taken as UTC)
  double_rounding    two numbers equal only once both are DOUBLEs (one reader
                     kept more digits: DuckDB's VARIANT-to-JSON cast goes
                     through DOUBLE where ours keeps the DECIMAL)
  uuid_detection     read_json typed a string as UUID (lowercased), ours kept
                     the string as written
  scalar_in_struct   ours holds a scalar in an object's scalar_object_key
                     (docs/engine.md "Reconciliation")
  singleton_in_list  ours wraps a scalar (or a shallower list) in a list
                     (docs/engine.md "Reconciliation", "List depth drift")
  json_text          ours holds a value as its JSON text (list elements that
                     disagree, over-depth values: docs/engine.md)
  empty_as_null      a value without a non-null scalar inside ({}, [], [{}],
                     {"a": []}) that ours gives as NULL (docs/engine.md
                     "Evidence"; docs/formats.md "Parquet"), or an object
                     whose every field is NULL against a NULL
  quoted_empty       CSV: a quoted "" that ours reads as the empty string and
                     read_csv as NULL (docs/formats.md "CSV", NULL)
  duckdb_kept_text   CSV --typed: read_csv typed the column VARCHAR (one type a
                     column, from its sniffer) where ours parsed this cell's
                     number (a value's own type, docs/parsing.md); the text
                     spells our number
  ours_kept_text     CSV --typed: read_csv parsed a number or boolean that ours
                     kept as text (ours reads Boolean text only with
                     true_tokens/false_tokens, docs/parsing.md)

Anything else is a differing cell, listed with the deepest path where the two
values part. A file where only one reader fails, or where the counts differ
(its cells are not compared), is listed with the errors or counts. Columns
are matched by name (ours by source key; for CSV, read_csv's trimmed header
names and its `column00` for an empty one are matched to ours), so a column
DuckDB renamed otherwise (duplicate header cells, case-insensitive duplicate
keys, an empty JSON key) shows as differing: check those by hand.

Output: a summary on stdout and, in --out (JSON lines), one record per file:
path, function, both counts or errors, cells, the counts per category and up to
five differing cells.
"""

import argparse
import concurrent.futures
import datetime
import decimal
import hashlib
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_EXTENSION = "build/release/schema_sanitizer.duckdb_extension"
DEFAULT_OUT = "/tmp/value_agreement/report.jsonl"
COMPRESSION = (".gz", ".zst")
SUFFIXES = {
    "json": (".json", ".jsonl", ".ndjson"),
    "parquet": (".parquet", ".parq", ".pq"),
    "csv": (".csv", ".tsv", ".txt"),
}
ETL = ("source_file", "ingestion_timestamp", "schema_registry", "schema_drifts")
BASE_OPTIONS = {"field_name_policy": "preserve", "on_error": "stop", "validate_extension": False}


def sql_literal(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


# --------------------------------------------------------------------------
# Worker: one file, in its own subprocess.
# --------------------------------------------------------------------------

def first_byte(path):
    """The first non-whitespace byte of the (decompressed) file, after a BOM."""
    opener = open
    if path.endswith(".gz"):
        import gzip
        opener = gzip.open
    elif path.endswith(".zst"):
        return None  # zstd is not in the standard library: treated as not an array
    try:
        with opener(path, "rb") as f:
            head = f.read(65536)
    except OSError:
        return None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.lstrip(b" \t\r\n")
    return head[:1] or None


def our_function(fmt, path):
    if fmt == "parquet":
        return "sanitize_parquet"
    if fmt == "csv":
        return "sanitize_csv"
    name = path.lower()
    for c in COMPRESSION:
        if name.endswith(c):
            name = name[: -len(c)]
    if name.endswith((".jsonl", ".ndjson")):
        return "sanitize_jsonl"
    return "sanitize_json_array" if first_byte(path) == b"[" else "sanitize_json"


ROW = "agreement_row_"  # an alias no data column is likely to be named


def worker_main():
    spec = json.load(sys.stdin)
    import duckdb

    out = {}
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "threads": spec["threads"]})
    con.execute("SET enable_progress_bar = false")
    try:
        con.execute(f"LOAD {sql_literal(spec['extension'])}")
    except Exception as e:  # noqa: BLE001
        out["connect"] = str(e)
        print(json.dumps(out))
        return
    path = sql_literal(spec["path"])
    fmt = spec["format"]
    try:
        if spec["reference"] == "pyarrow":
            import pyarrow as pa
            import pyarrow.parquet as pq
            pyarrow_table_ = pq.read_table(spec["path"])
            for f in pyarrow_table_.schema:
                if (pa.types.is_struct(f.type) and "metadata" in {c.name for c in f.type}
                        and pa.types.is_binary(f.type.field("metadata").type)):
                    raise ValueError(f"pyarrow gives VARIANT column {f.name!r} undecoded (its metadata/value bytes)")
            # DuckDB's Arrow import has no FLOAT16: widen it, as DuckDB's own reader does
            pyarrow_table_ = pyarrow_table_.cast(pa.schema([
                f.with_type(pa.float32()) if pa.types.is_float16(f.type) else f for f in pyarrow_table_.schema]))
            source = "pyarrow_table_"  # read by DuckDB's replacement scan
        else:
            source = {"json": f"read_json({path})", "parquet": f"read_parquet({path})",
                      "csv": f"read_csv({path})" if spec.get("typed") else f"read_csv({path}, all_varchar = true)"}[fmt]
        cols = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
        variants = [c[0] for c in cols if c[1] == "VARIANT"]
        if variants:  # to_json would give a VARIANT's VARCHAR text; its JSON cast gives the value
            replace = ", ".join(f'CAST("{v.replace(chr(34), chr(34) * 2)}" AS JSON) AS "{v.replace(chr(34), chr(34) * 2)}"'
                                for v in variants)
            source = f"(SELECT * REPLACE ({replace}) FROM {source})"
        rows = con.execute(f"SELECT to_json({ROW})::VARCHAR FROM {source} {ROW}").fetchall()
        out["ref"] = {"columns": [[c[0], c[1]] for c in cols], "rows": [r[0] for r in rows]}
    except Exception as e:  # noqa: BLE001
        out["ref"] = {"error": f"{type(e).__name__}: {e}"}
    fn = spec["function"]
    opts = "".join(f", {k} := {sql_literal(v)}" for k, v in spec["options"].items())
    try:
        rows = con.execute(
            f"SELECT to_json({ROW})::VARCHAR FROM (SELECT * EXCLUDE (source_file, ingestion_timestamp, "
            f"schema_drifts) FROM {fn}({path}{opts})) {ROW}").fetchall()
        out["ours"] = {"rows": [r[0] for r in rows]}
    except Exception as e:  # noqa: BLE001
        out["ours"] = {"error": str(e)}
    sys.stdout.write(json.dumps(out))


# --------------------------------------------------------------------------
# Comparison.
# --------------------------------------------------------------------------

class Schema:
    """Our registry's canonical schema, to put our values back into the source's shape."""

    def __init__(self, registry):
        self.scalar_key = registry.get("contract", {}).get("scalar_object_key", "default_key")
        self.fields = registry.get("canonical_schema", {}).get("fields", [])

    def to_source(self, value, fields):
        """A struct value keyed by output names -> a dict keyed by source keys (versions merged)."""
        if not isinstance(value, dict):
            return value
        by_name = {f["name"]: f for f in fields}
        merged, multiple = {}, []
        for name, v in value.items():
            f = by_name.get(name)
            if f is None:  # not in the registry (should not happen): kept as it is
                merged.setdefault(name, v)
                continue
            v = self.typed(v, f["type"])
            key = f["source_key"]
            if v is None:
                merged.setdefault(key, None)
            elif merged.get(key) is None:
                merged[key] = v
            else:
                multiple.append(key)
        if multiple:
            merged["__several_versions_set__"] = multiple
        return merged

    def typed(self, value, typ):
        if value is None:
            return None
        kind = typ.get("kind")
        if kind == "struct":
            return self.to_source(value, typ.get("fields", []))
        if kind == "list" and isinstance(value, list):
            return [self.typed(v, typ.get("element", {})) for v in value]
        if kind == "map" and isinstance(value, dict):
            vt = next((f["type"] for f in typ.get("fields", []) if f.get("name") == "value"), {})
            return {k: self.typed(v, vt) for k, v in value.items()}
        return value


# DuckDB's text of a DATE, TIME, TIMESTAMP or TIMESTAMPTZ.
DUCKDB_TEMPORAL = re.compile(r"^-?\d{4,}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}(:\d{2})?)?)?$"
                             r"|^\d{2}:\d{2}:\d{2}(\.\d+)?$")
# Formats read_json and read_csv detect beside ISO 8601.
OTHER_FORMATS = ["%d-%m-%Y %H:%M:%S", "%m-%d-%Y %H:%M:%S", "%d/%m/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S",
                 "%Y/%m/%d %H:%M:%S", "%d-%m-%Y", "%m-%d-%Y", "%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d",
                 "%d.%m.%Y", "%Y%m%d"]


def instant(text, duckdb_text):
    """A comparable form of a date, time or timestamp text, or None."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if duckdb_text and not DUCKDB_TEMPORAL.match(t):
        return None
    if re.match(r"^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$", t):
        try:
            return ("time", datetime.time.fromisoformat(t))
        except ValueError:
            return None
    iso = re.sub(r"([+-]\d{2})$", r"\1:00", t.replace("Z", "+00:00"))
    try:
        d = datetime.datetime.fromisoformat(iso)
    except ValueError:
        d = None
        if not duckdb_text:
            for f in OTHER_FORMATS:
                try:
                    d = datetime.datetime.strptime(t, f)
                    break
                except ValueError:
                    pass
        if d is None:
            return None
    if d.tzinfo is not None:
        d = d.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if d.time() == datetime.time(0) and re.fullmatch(r"[^:]*", t):
        return ("date", d.date())
    return ("ts", d)


UTC_SUFFIX = re.compile(r"(\+00(:00)?|Z)$")


def same_instant(ref, ours):
    # the same text but for a UTC suffix or the T (years past 9999, TIME WITH TIME ZONE)
    if UTC_SUFFIX.sub("", ref).replace("T", " ") == UTC_SUFFIX.sub("", ours).replace("T", " "):
        return True
    a = instant(ref, True)
    if a is None:
        return False
    b = instant(ours, False)
    if b is None:
        return False
    if a[0] == b[0]:
        return a == b
    # a date against a timestamp at midnight
    if {a[0], b[0]} == {"date", "ts"}:
        da = a[1] if a[0] == "date" else a[1].date() if a[1].time() == datetime.time(0) else None
        db = b[1] if b[0] == "date" else b[1].date() if b[1].time() == datetime.time(0) else None
        return da is not None and da == db
    return False


def is_number(x):
    return isinstance(x, (int, float, decimal.Decimal)) and not isinstance(x, bool)


def as_float(x):
    try:
        return float(x)
    except (OverflowError, ValueError):
        return math.nan


def all_null(d):
    return all(v is None or (isinstance(v, dict) and all_null(v)) for v in d.values())


def no_evidence(x):
    """null, {}, [] and containers without a non-null scalar inside (docs/engine.md "Evidence")."""
    if x is None:
        return True
    if isinstance(x, dict):
        return all(no_evidence(v) for v in x.values())
    if isinstance(x, list):
        return all(no_evidence(v) for v in x)
    return False


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def equiv(ref, ours, used, scalar_key):
    """Does our value stand for DuckDB's? Adds the names of the differences used."""
    if ref is None:
        if ours is None:
            return True
        if isinstance(ours, dict) and all_null(ours):
            used.add("empty_as_null")
            return True
        if ours == "" and scalar_key == "__csv__":
            used.add("quoted_empty")
            return True
        return False
    if ours is None:
        if no_evidence(ref):
            used.add("empty_as_null")
            return True
        return False
    if isinstance(ref, bool) or isinstance(ours, bool):
        if isinstance(ref, bool) and isinstance(ours, bool):
            return ref == ours
    elif is_number(ref) and is_number(ours):
        if ref == ours:
            return True
        fr, fo = as_float(ref), as_float(ours)
        if math.isnan(fr) and math.isnan(fo):
            return True
        if fr == fo:  # equal only as DOUBLEs: one side holds more digits than the other
            used.add("double_rounding")
            return True
        return False
    if isinstance(ref, str) and isinstance(ours, str):
        if ref == ours:
            return True
        if same_instant(ref, ours):
            used.add("temporal_text")
            return True
        if UUID.match(ref) and ref == ours.strip("{}").lower():
            used.add("uuid_detection")
            return True
    if isinstance(ref, str) and (is_number(ours) or isinstance(ours, bool)) and scalar_key == "__csv__":
        if text_is(ref, ours):
            used.add("duckdb_kept_text")
            return True
    if isinstance(ours, str) and (is_number(ref) or isinstance(ref, bool)) and scalar_key == "__csv__":
        if text_is(ours, ref):
            used.add("ours_kept_text")
            return True
    if isinstance(ref, dict) and isinstance(ours, dict):
        return all(equiv(ref.get(k), ours.get(k), used, scalar_key) for k in set(ref) | set(ours))
    if isinstance(ref, list) and isinstance(ours, list):
        if len(ref) == len(ours) and all(equiv(r, o, used, scalar_key) for r, o in zip(ref, ours)):
            return True
        if len(ours) == 1 and equiv(ref, ours[0], used, scalar_key):  # a shallower list wrapped
            used.add("singleton_in_list")
            return True
        return False
    if isinstance(ours, dict) and not isinstance(ref, dict) and scalar_key in ours:
        rest = {k: v for k, v in ours.items() if k != scalar_key}
        if all_null(rest) and equiv(ref, ours[scalar_key], used, scalar_key):
            used.add("scalar_in_struct")
            return True
    if isinstance(ours, list) and not isinstance(ref, list) and len(ours) == 1:
        if equiv(ref, ours[0], used, scalar_key):
            used.add("singleton_in_list")
            return True
    if isinstance(ours, str) and not isinstance(ref, str):
        try:
            parsed = json.loads(ours)
        except ValueError:
            return False
        if equiv(ref, parsed, used, scalar_key):
            used.add("json_text")
            return True
    return False


def text_is(text, value):
    """Does a CSV cell's text spell this number or boolean?"""
    t = text.strip()
    if isinstance(value, bool):
        return t.lower() in (("true", "t", "yes", "y", "1") if value else ("false", "f", "no", "n", "0"))
    try:
        d = decimal.Decimal(t)
    except decimal.InvalidOperation:
        return False
    return d == value or as_float(d) == as_float(value)


def locate(ref, ours, scalar_key, path=""):
    """The deepest path where the two values still differ, with both values there."""
    if isinstance(ref, dict) and isinstance(ours, dict):
        for k in sorted(set(ref) | set(ours), key=str):
            if not equiv(ref.get(k), ours.get(k), set(), scalar_key):
                return locate(ref.get(k), ours.get(k), scalar_key, f"{path}.{k}")
    if isinstance(ref, list) and isinstance(ours, list) and len(ref) == len(ours):
        for i, (r, o) in enumerate(zip(ref, ours)):
            if not equiv(r, o, set(), scalar_key):
                return locate(r, o, scalar_key, f"{path}[{i}]")
    return {"path": path, "duckdb": short(ref), "ours": short(ours)}


def short(v, limit=300):
    text = json.dumps(v, default=str)
    return v if len(text) <= limit else text[:limit] + "..."


def loads(text):
    """JSON with every fraction as an exact Decimal (DuckDB's to_json prints DECIMALs in full)."""
    return json.loads(text, parse_float=decimal.Decimal,
                      parse_constant=lambda c: float(c.replace("Infinity", "inf")))


def letters(i):
    """Spreadsheet letters of a 0-based position: 0 -> a, 25 -> z, 26 -> aa."""
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = chr(ord("a") + r) + out
    return out


def compare(result, fmt):
    """Classify one file's worker result; returns a record."""
    ref, ours = result.get("ref", {}), result.get("ours", {})
    rec = {}
    if "error" in ref or "error" in ours:
        rec["class"] = ("both_fail" if "error" in ref and "error" in ours
                        else "only_duckdb_fails" if "error" in ref else "only_ours_fails")
        if "error" in ref:
            rec["duckdb_error"] = ref["error"].splitlines()[0][:300]
        else:
            rec["duckdb_rows"] = len(ref["rows"])
        if "error" in ours:
            rec["ours_error"] = ours["error"].splitlines()[0][:300]
        else:
            rec["ours_rows"] = len(ours["rows"])
        return rec
    rrows, orows = [loads(r) for r in ref["rows"]], [loads(r) for r in ours["rows"]]
    rec["duckdb_rows"], rec["ours_rows"] = len(rrows), len(orows)
    registry = next((r.get("schema_registry") for r in orows if r.get("schema_registry")), None)
    schema = Schema(json.loads(registry)) if registry else Schema({})
    scalar_key = "__csv__" if fmt == "csv" else schema.scalar_key
    columns = [c[0] for c in ref["columns"]]
    counts, diffs, extra = {}, [], set()
    cells = 0
    alias = {}  # CSV: DuckDB's name of a header cell -> ours (docs/formats.md "CSV", Header)
    if fmt == "csv":
        keys = [f["source_key"] for f in schema.fields]
        for c in columns:
            if c in keys:
                continue
            stripped = [k for k in keys if k.strip() == c.strip()]  # read_csv trims names, ours keeps them
            m = re.fullmatch(r"column(\d+)", c)  # read_csv's name of an empty cell, ours is column_<letters>
            if len(stripped) == 1:
                alias[c] = stripped[0]
            elif m:
                alias[c] = "column_" + letters(int(m.group(1)))
    if len(rrows) != len(orows):
        rrows = orows = []  # rows are not matched when the counts differ: no cell is compared
    for i, (r, o) in enumerate(zip(rrows, orows)):
        o = {k: v for k, v in o.items() if k not in ETL}
        o = schema.to_source(o, schema.fields)
        o = {next((c for c, a in alias.items() if a == k), k): v for k, v in o.items()}
        extra |= {k for k, v in o.items() if k not in columns and v is not None} - {"__several_versions_set__"}
        for c in columns:
            cells += 1
            used = set()
            if equiv(r.get(c), o.get(c), used, scalar_key):
                for u in used or {"equal"}:
                    counts[u] = counts.get(u, 0) + 1
            else:
                counts["differ"] = counts.get("differ", 0) + 1
                if len(diffs) < 5:
                    diffs.append(dict(locate(r.get(c), o.get(c), scalar_key, c), row=i))
        if "__several_versions_set__" in o:
            counts["several_versions_set"] = counts.get("several_versions_set", 0) + 1
    rec.update(cells=cells, categories=counts, differing=diffs,
               duckdb_types={c[0]: c[1] for c in ref["columns"]})
    if extra:
        rec["ours_extra_columns"] = sorted(extra)
    if rec["duckdb_rows"] != rec["ours_rows"]:
        rec["class"] = "counts_differ"
    elif counts.get("differ") or extra or counts.get("several_versions_set"):
        rec["class"] = "values_differ"
    else:
        rec["class"] = "agree"
    return rec


# --------------------------------------------------------------------------
# Parent.
# --------------------------------------------------------------------------

def list_files(fmt, roots):
    found = []
    for root in roots:
        walk = [(os.path.dirname(root), [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
        for dirpath, dirnames, filenames in walk:
            dirnames.sort()
            for f in sorted(filenames):
                p = os.path.join(dirpath, f)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                name = f.lower()
                for c in COMPRESSION:
                    if name.endswith(c):
                        name = name[: -len(c)]
                ok = name.endswith(SUFFIXES[fmt])
                if not ok and fmt == "parquet":
                    with open(p, "rb") as fh:
                        ok = fh.read(4) == b"PAR1"
                if ok:
                    found.append(os.path.abspath(p))
    return sorted(set(found))


def run_one(spec, timeout, memory_bytes):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    cmd = [sys.executable, os.path.abspath(__file__), "--_worker"]
    try:
        p = subprocess.run(cmd, input=json.dumps(spec).encode(), capture_output=True, timeout=timeout,
                           preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"ref": {"error": f"timeout after {timeout:g} s (either reader)"},
                "ours": {"error": f"timeout after {timeout:g} s (either reader)"}}
    try:
        return json.loads(p.stdout.decode("utf-8", "replace"))
    except ValueError:
        why = f"worker exit code {p.returncode}: {p.stderr.decode('utf-8', 'replace')[-300:]}"
        return {"ref": {"error": why}, "ours": {"error": why}}


def parse_option_value(text):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--format", required=True, choices=sorted(SUFFIXES))
    ap.add_argument("--reference", default="duckdb", choices=["duckdb", "pyarrow"])
    ap.add_argument("--extension", default=DEFAULT_EXTENSION)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--memory-gib", type=float, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--typed", action="store_true",
                    help="CSV: read_csv with its own types, ours with parse_integers, parse_floats and parse_iso_*")
    args = ap.parse_args(argv)
    if args.reference == "pyarrow" and args.format != "parquet":
        ap.error("--reference pyarrow is for --format parquet")
    options = dict(BASE_OPTIONS)
    if args.format == "csv":
        options["column_order"] = "source"
        if args.typed:
            options.update(parse_integers=True, parse_floats=True, parse_iso_dates=True,
                           parse_iso_timestamps=True, parse_iso_times=True)
    elif args.typed:
        ap.error("--typed is for --format csv")
    for item in args.option:
        name, eq, value = item.partition("=")
        if not eq:
            ap.error(f"--option {item!r}: expected NAME=VALUE")
        options[name] = parse_option_value(value)
    for p in args.paths:
        if not os.path.exists(p):
            ap.error(f"no such file or directory: {p}")
    if not os.path.isfile(args.extension):
        ap.error(f"no extension at {args.extension}")
    private = tempfile.mkdtemp(prefix="value_agreement_")
    ext = os.path.join(private, os.path.basename(args.extension))
    shutil.copy2(args.extension, ext)  # the build may be replaced during the run
    with open(ext, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    import duckdb
    print(f"extension {args.extension} sha256 {sha}; duckdb {duckdb.__version__}; "
          f"reference {args.reference}; options {options}")
    files = list_files(args.format, args.paths)
    print(f"{len(files)} files")
    memory = int(args.memory_gib * (1 << 30))
    records, started = [], time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futs = {}
            for p in files:
                spec = {"path": p, "format": args.format, "reference": args.reference,
                        "function": our_function(args.format, p), "options": options, "extension": ext,
                        "threads": args.threads, "typed": args.typed}
                futs[pool.submit(run_one, spec, args.timeout, memory)] = spec
            for n, fut in enumerate(concurrent.futures.as_completed(futs), 1):
                spec = futs[fut]
                res = fut.result()
                if "connect" in res:
                    print(f"cannot load the extension: {res['connect']}", file=sys.stderr)
                    return 2
                rec = {"path": spec["path"], "function": spec["function"]}
                rec.update(compare(res, args.format))
                records.append(rec)
                if n % 100 == 0:
                    print(f"  {n}/{len(files)}", file=sys.stderr)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    records.sort(key=lambda r: r["path"])
    classes, cats = {}, {}
    cells = rows = 0
    for r in records:
        classes[r["class"]] = classes.get(r["class"], 0) + 1
        if r.get("cells"):
            cells += r["cells"]
            rows += r["duckdb_rows"]
        for k, v in r.get("categories", {}).items():
            cats[k] = cats.get(k, 0) + v
    both = sum(classes.get(c, 0) for c in ("agree", "values_differ", "counts_differ"))
    summary = [
        f"{len(records)} files: both read {both} (agree {classes.get('agree', 0)}, values differ "
        f"{classes.get('values_differ', 0)}, counts differ {classes.get('counts_differ', 0)}); only ours fails "
        f"{classes.get('only_ours_fails', 0)}, only DuckDB fails {classes.get('only_duckdb_fails', 0)}, "
        f"both fail {classes.get('both_fail', 0)}",
        f"{rows} rows, {cells} cells: " + ", ".join(f"{k} {v}" for k, v in sorted(cats.items())),
    ]
    print("\n".join(summary))
    print(f"elapsed {time.monotonic() - started:.0f} s")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(json.dumps({"kind": "header", "extension_sha256": sha, "duckdb": duckdb.__version__,
                            "format": args.format, "reference": args.reference, "options": options,
                            "summary": summary, "classes": classes, "cells": cells,
                            "categories": cats}) + "\n")
        for r in records:
            f.write(json.dumps(r, default=str) + "\n")
    print(f"per-file records: {args.out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        worker_main()
        sys.exit(0)
    sys.exit(main())
