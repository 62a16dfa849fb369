#!/usr/bin/env python3
"""Small runner for DuckDB-dialect sqllogictest files (the subset DuckDB's own tests use).

Usage: python scripts/sqllogictest.py [--extension PATH.duckdb_extension] [--repository DIR]
                                      [--verbose] FILE_OR_DIR...
Each file gets a fresh in-memory connection (unsigned extensions allowed, auto-install off);
directories are searched recursively for *.test. Relative paths in tests resolve against the cwd.

Rendering: rather than turning Python objects back into text (which cannot reproduce DuckDB's
formatting of nested types, timestamps, intervals, ...), each statement is opened with `con.sql()`
and projected through `CAST(#i AS VARCHAR)`, so DuckDB renders every value itself, as its own
runner does (Value::CastAs(VARCHAR)); NULL -> `NULL`, '' -> `(empty)`. Non-SELECT statements
(PRAGMA, CALL, INSERT ... RETURNING) run once in `con.sql()`; the projection reads their result.
Comparison as in DuckDB's runner: exact, else `<REGEX>:`/`<!REGEX>:` (full match), else numeric
columns as numbers (FLOAT/DOUBLE within 1%) and BOOLEAN true/1, false/0 alike. Expected rows are
tab-separated or one value per line; rowsort/valuesort sort only the actual result.
Directives: statement ok|error|maybe, query <letters> [nosort|rowsort|valuesort] [label], `N values
hashing to <md5>`, require, require-env, mode skip|unskip, halt, skipif/onlyif, reconnect,
hash-threshold (ignored). Others (loop, foreach, load, restart, connections) fail the file.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb

TESTS = ("statement", "query")
SORT_MODES = {"nosort", "rowsort", "sort", "valuesort"}
INT_TYPES = {u + t for u in ("", "U") for t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")}
# `require` arguments that describe the build/platform, not an extension; all true on Linux.
PLATFORM_REQUIRES = {"notwindows", "notmingw", "64bit", "skip_reload", "noforcestorage",
                     "nothreadsan", "strinline", "noalternativeverify", "no_vector_verification"}
HASH_RE = re.compile(r"\d+ values hashing to [0-9a-z]{32}")
REGEX_PREFIXES = ("<REGEX>:", "<!REGEX>:")
EXT_SUFFIX = ".duckdb_extension"


@dataclass
class Record:
    kind: str  # first token: statement, query, require, mode, ...
    line: int  # 1-based line of the directive
    params: list[str]
    conditions: list[tuple[str, str]] = field(default_factory=list)  # skipif/onlyif
    sql: str = ""
    expected: list[str] | None = None  # lines after `----` (None: no `----`)


class FileSkip(Exception):
    """Stop the file; its remaining records count as skipped."""


class FileAbort(Exception):
    """Stop the file with one failure; its remaining records count as skipped."""


def is_separator(line: str) -> bool:
    return not line.strip() or line.startswith("#")


def parse(text: str) -> list[Record]:
    """Split a test file into records, mirroring DuckDB's SQLLogicParser."""
    lines = text.replace("\r", "").split("\n")
    records, i, n = [], 0, len(lines)
    while True:
        while i < n and is_separator(lines[i]):
            i += 1
        if i >= n:
            return records
        start, tokens, conditions = i, lines[i].split(), []
        while tokens[0] in ("skipif", "onlyif") and i + 1 < n and not is_separator(lines[i + 1]):
            conditions.append((tokens[0], tokens[1].lower() if len(tokens) > 1 else ""))
            i += 1
            tokens = lines[i].split()
        rec = Record(tokens[0], i + 1, tokens[1:], conditions)
        i += 1
        if rec.kind in TESTS:
            sql = []
            while i < n and not is_separator(lines[i]) and lines[i] != "----":
                sql.append(lines[i])
                i += 1
            rec.sql = "\n".join(sql)
            if i < n and lines[i] == "----":
                rec.expected, i = [], i + 1
                while i < n and lines[i].strip():  # only a blank line ends results; `#...` is a value
                    rec.expected.append(lines[i])
                    i += 1
        elif i < n and not is_separator(lines[i]):
            # DuckDB rejects this too; silently dropping the following lines would hide tests.
            rec = Record("parse-error", start + 1, [f"'{lines[start]}' must be followed by a blank line"])
        records.append(rec)
        while i < n and not is_separator(lines[i]):
            i += 1


def execute(con, sql: str) -> tuple[list[str], list[list[str]]]:
    """Run `sql`; return (column types, rows of rendered strings); no columns if no result set."""
    rel = con.sql(sql)
    if rel is None:
        return [], []
    types = [str(t) for t in rel.types]
    # Positional references (#i) sidestep duplicate or odd column names.
    rows = rel.project(", ".join(f"CAST(#{i} AS VARCHAR)" for i in range(1, len(types) + 1))).fetchall()
    return types, [["NULL" if v is None else v.replace("\0", "\\0") if v else "(empty)" for v in row]
                   for row in rows]


def sort_values(rows: list[list[str]], mode: str) -> list[str]:
    flat = [v for row in (sorted(rows) if mode in ("rowsort", "sort") else rows) for v in row]
    return sorted(flat) if mode == "valuesort" else flat


def regex_matches(actual: str, pattern: str) -> bool:
    return bool(re.fullmatch(pattern.split(":", 1)[1], actual, re.DOTALL)) == pattern.startswith("<REGEX>:")


def values_equal(actual: str, expected: str, sql_type: str) -> bool:
    if actual == expected:
        return True
    if expected.startswith(REGEX_PREFIXES):
        return regex_matches(actual, expected)
    if "NULL" in (actual, expected):
        return False
    base = sql_type.split("(")[0].upper()
    try:
        if base in ("FLOAT", "DOUBLE"):
            a, e = float(actual), float(expected)
            if not (math.isfinite(a) and math.isfinite(e)):
                return a == e or (math.isnan(a) and math.isnan(e))
            return abs(a - e) <= abs(e) * 0.01 + 1e-8
        if base in INT_TYPES or base == "DECIMAL":
            return Decimal(actual) == Decimal(expected)
    except (ValueError, InvalidOperation):
        return False
    canon = {"true": "1", "1": "1", "false": "0", "0": "0"}
    a, e = canon.get(actual.lower()), canon.get(expected.lower())
    return base == "BOOLEAN" and a is not None and a == e


def result_hash(types: list[str], rows: list[list[str]], mode: str) -> str:
    # DuckDB's runner hashes booleans as 1/0, and each value followed by a newline.
    rows = [[{"true": "1", "false": "0"}.get(v, v) if t == "BOOLEAN" else v for v, t in zip(row, types)]
            for row in rows]
    values = sort_values(rows, mode)
    digest = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()
    return f"{len(values)} values hashing to {digest}"


class Runner:
    def __init__(self, extension: str | None, repository: str | None, verbose: bool):
        self.ext_path = Path(extension).resolve() if extension else None
        self.repo = Path(repository).resolve() if repository else None
        # Extensions present in --repository are installed from there (never from ~/.duckdb).
        found = self.repo.rglob("*" + EXT_SUFFIX) if self.repo else []
        self.repo_exts = {p.name.split(EXT_SUFFIX)[0] for p in found}
        self.verbose = verbose
        self.passed = self.failed = self.skipped = 0

    def fail(self, where: str, msg: str, sql: str | None = None, **blocks: str | None) -> None:
        self.failed += 1
        out = ["=" * 72, f"FAIL {where}: {msg}"] + (["---- SQL", sql] if sql is not None else [])
        for title, text in blocks.items():
            out += [f"---- {title.replace('_', ' ')}", text or "(nothing)"] if text is not None else []
        print("\n".join(out), flush=True)

    def ok(self, where: str) -> None:
        self.passed += 1
        if self.verbose:
            print(f"ok   {where}")

    def run_file(self, path: Path) -> None:
        if self.verbose:
            print(f"== {path}")
        records = parse(path.read_text(encoding="utf-8"))
        tmp = tempfile.mkdtemp(prefix="sqllogictest_")
        self.subst = {"__TEST_DIR__": tmp, "{TEMP_DIR}": tmp, "__WORKING_DIRECTORY__": os.getcwd()}
        self.labels: dict[str, str] = {}
        db = duckdb.connect(config={"allow_unsigned_extensions": "true",
                                    "autoinstall_known_extensions": "false"})
        con, skip_level = db, 0
        try:
            for idx, rec in enumerate(records):
                where = f"{path}:{rec.line}"
                remaining = sum(r.kind in TESTS for r in records[idx + 1:])  # if the file stops here
                if rec.kind == "mode" and rec.params[:1] in (["skip"], ["unskip"]):
                    skip_level += 1 if rec.params[0] == "skip" else -1
                    continue
                # `skipif duckdb` and `onlyif <other system>` exclude a record.
                if skip_level > 0 or any((k == "skipif") == (s == "duckdb") for k, s in rec.conditions):
                    self.skipped += rec.kind in TESTS
                    continue
                try:
                    if rec.kind == "statement":
                        self.check_statement(con, rec, where)
                    elif rec.kind == "query":
                        self.check_query(con, rec, where)
                    elif rec.kind == "require":
                        self.require(con, rec.params)
                    elif rec.kind == "require-env":
                        value = os.environ.get(rec.params[0]) if rec.params else None
                        if value is None or rec.params[1:2] not in ([], [value]):
                            raise FileSkip(f"require-env {' '.join(rec.params)}: not set")
                        self.subst["${" + rec.params[0] + "}"] = value
                    elif rec.kind == "halt":
                        raise FileSkip("halt")
                    elif rec.kind == "reconnect":
                        con = db.cursor()
                    elif rec.kind == "parse-error":
                        raise FileAbort(rec.params[0])
                    elif rec.kind not in ("hash-threshold", "mode"):  # these do not affect pass/fail
                        raise FileAbort(f"unsupported directive '{rec.kind}'")
                except (FileSkip, FileAbort) as e:
                    if isinstance(e, FileSkip):
                        print(f"SKIP {where}: {e} (skipping the rest of the file)", flush=True)
                    else:
                        self.fail(where, f"{e} (aborting the rest of the file)")
                    self.skipped += remaining
                    break
        finally:
            db.close()
            shutil.rmtree(tmp, ignore_errors=True)

    def replace(self, text: str) -> str:
        for key, value in self.subst.items():
            text = text.replace(key, value)
        return text

    def require(self, con, params: list[str]) -> None:
        name = params[0].lower() if params else ""
        if name in PLATFORM_REQUIRES:
            return
        if not re.fullmatch(r"\w+", name) or name in ("windows", "mingw"):
            raise FileSkip(f"require {name}: not available here")
        try:
            if name in self.repo_exts:
                con.execute("SET custom_extension_repository='{}'".format(str(self.repo).replace("'", "''")))
                con.execute(f"FORCE INSTALL {name}")  # FORCE: a stale copy in ~/.duckdb must not win
                con.execute(f"LOAD {name}")
                return
            if self.ext_path and name == self.ext_path.name.split(EXT_SUFFIX)[0]:
                con.execute("LOAD '{}'".format(str(self.ext_path).replace("'", "''")))
                return
        except duckdb.Error as e:
            raise FileAbort(f"require {name}: loading the extension under test failed: {e}")
        try:
            con.execute(f"LOAD {name}")
        except duckdb.Error as e:
            raise FileSkip(f"require {name}: {e}".splitlines()[0])

    def check_statement(self, con, rec: Record, where: str) -> None:
        mode = rec.params[0] if len(rec.params) == 1 else ""
        if mode not in ("ok", "error", "maybe") or (mode == "ok" and rec.expected is not None) or not rec.sql:
            raise FileAbort(f"unsupported form 'statement {' '.join(rec.params)}' (or ---- or empty SQL)")
        sql, expected = self.replace(rec.sql), self.replace("\n".join(rec.expected or []))
        error, internal = None, False
        try:
            execute(con, sql)
        except Exception as e:  # noqa: BLE001 - any failure of the statement is its result
            error, internal = str(e), isinstance(e, duckdb.InternalException)
        if error is None:
            if mode == "error":
                return self.fail(where, "statement succeeded but an error was expected", sql,
                                 expected_error=expected or None)
        elif mode == "ok":
            return self.fail(where, "statement failed", sql, error=error)
        elif internal:  # as in DuckDB: an internal error never satisfies `statement error`
            return self.fail(where, "internal error", sql, error=error)
        elif expected and expected not in error and not (
                expected.startswith(REGEX_PREFIXES) and regex_matches(error, expected)):
            return self.fail(where, "statement failed with a different error", sql,
                             expected_error=expected, actual_error=error)
        self.ok(where)

    def check_query(self, con, rec: Record, where: str) -> None:
        letters, mode, label = (rec.params + ["", "nosort", None][len(rec.params):])[:3]
        sql, raw = self.replace(rec.sql), rec.expected or []
        if not letters or mode not in SORT_MODES or not sql:
            raise FileAbort(f"unsupported query form 'query {' '.join(rec.params)}' (or empty SQL)")
        try:
            types, rows = execute(con, sql)
        except Exception as e:  # noqa: BLE001
            return self.fail(where, "query failed", sql, error=str(e), expected="\n".join(raw))
        ncols, actual = len(types), sort_values(rows, mode)
        show = {"expected": "\n".join(raw),
                "actual": "\n".join("\t".join(actual[i:i + ncols]) for i in range(0, len(actual), ncols))}
        if ncols != len(letters):
            return self.fail(where, f"query declares {len(letters)} column(s) ({letters}) but the result has "
                                    f"{ncols} ({', '.join(types)})", sql, **show)

        is_hash = len(raw) == 1 and HASH_RE.fullmatch(raw[0])
        if is_hash or label:  # as in DuckDB, labelled queries compare only hashes
            digest = result_hash(types, rows, mode)
            if is_hash and digest != raw[0]:
                return self.fail(where, "result hash differs", sql, expected=raw[0], actual=digest)
            if label and self.labels.setdefault(label, digest) != digest:
                return self.fail(where, f"result differs from the earlier query labelled '{label}'", sql,
                                 expected=self.labels[label], actual=digest)
            return self.ok(where)

        # DuckDB's rules: row-wise (tab-separated) if there is one line per result row or every
        # line has a tab; otherwise one value per line.
        expected = raw
        if (ncols > 1 and len(raw) == len(rows)) or (raw and all("\t" in v for v in raw)):
            expected = [part for line in raw for part in line.split("\t")]
            bad = [k for k, line in enumerate(raw, 1) if line.count("\t") != ncols - 1]
            if bad:
                return self.fail(where, f"expected line {bad[0]} does not have {ncols} tab-separated "
                                        "values", sql, **show)
        if len(expected) != len(actual):
            return self.fail(where, f"expected {len(expected)} value(s) ({ncols} per row), the query "
                                    f"returned {len(rows)} row(s)", sql, **show)
        for k, (a, e) in enumerate(zip(actual, expected)):
            t = types[k % ncols]
            if not values_equal(a, e, t) and not values_equal(a, self.replace(e), t):
                return self.fail(where, f"wrong result at row {k // ncols + 1}, column {k % ncols + 1}: "
                                        f"{a!r} <> expected {e!r}", sql, **show)
        self.ok(where)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extension", help="extension binary that `require <its name>` LOADs")
    ap.add_argument("--repository", help="local extension repository to FORCE INSTALL from")
    ap.add_argument("--verbose", "-v", action="store_true", help="also list passing records")
    ap.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    args = ap.parse_args(argv)
    runner = Runner(args.extension, args.repository, args.verbose)
    for arg in map(Path, args.paths):
        if not arg.exists():
            runner.fail(str(arg), "no such file or directory")
        for path in sorted(arg.rglob("*.test")) if arg.is_dir() else [arg] if arg.is_file() else []:
            runner.run_file(path)
    if runner.passed + runner.failed == 0:
        print("error: no test records were run", file=sys.stderr)
    print(f"{runner.passed} passed, {runner.failed} failed, {runner.skipped} skipped", flush=True)
    return 1 if runner.failed or runner.passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
