"""Every file is opened through DuckDB's own file system: a lockdown, a
disabled file system or a Python-registered file system applies to the
sanitize_* readers exactly as to read_json, read_csv and read_parquet.

A table: each setting (a row) against each call (a column); the expected
answer of a cell, allowed or refused, is what DuckDB's own reader gives in
the same cell, on the same connection.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import connect_and_load, sql_literal


@pytest.fixture
def connect(repository: Path, extension_dir: Path):
    """A new connection with the extension loaded, for each cell."""

    def make() -> duckdb.DuckDBPyConnection:
        con = connect_and_load(repository, extension_dir)
        con.execute("SET enable_progress_bar = false")
        return con

    return make


@pytest.fixture
def lake(tmp_path: Path) -> dict[str, Path]:
    ok, out = tmp_path / "ok", tmp_path / "out"
    ok.mkdir()
    out.mkdir()
    for d, n in ((ok, 1), (out, 2)):
        (d / "in.jsonl").write_text(f'{{"a": {n}}}\n')
        (d / "more.jsonl").write_text(f'{{"a": {n + 10}}}\n')
        (d / "in.csv").write_text(f"a\n{n}\n")
        duckdb.execute(f"COPY (SELECT {n} AS a) TO {sql_literal(str(d / 'in.parquet'))} (FORMAT parquet)")
    return {"ok": ok, "out": out}


# Each call: ours and the reference reader, on a directory's files.
CALLS = {
    "jsonl": ("SELECT a FROM sanitize_jsonl({f})", "SELECT a FROM read_json({f})", "in.jsonl"),
    "csv": ("SELECT a::BIGINT FROM sanitize_csv({f})", "SELECT a FROM read_csv({f})", "in.csv"),
    "parquet": ("SELECT a FROM sanitize_parquet({f})", "SELECT a FROM read_parquet({f})", "in.parquet"),
    "glob": ("SELECT a FROM sanitize_jsonl({f}) ORDER BY a", "SELECT a FROM read_json({f}) ORDER BY a", "*.jsonl"),
    "probe": (
        "SELECT count(*) FROM sanitize_probe({f}, input_format := 'jsonl')",
        "SELECT count(*) FROM (DESCRIBE SELECT * FROM read_json({f}))",
        "in.jsonl",
    ),
}


def settings(lake: dict[str, Path]) -> dict[str, list[str]]:
    ok = str(lake["ok"]) + "/"
    return {
        "no lockdown": [],
        "LocalFileSystem disabled": ["SET disabled_filesystems = 'LocalFileSystem'"],
        "external access off": ["SET enable_external_access = false"],
        "allowed_directories": [f"SET allowed_directories = [{sql_literal(ok)}]", "SET enable_external_access = false"],
        "allowed_paths": [
            "SET allowed_paths = ["
            + ", ".join(sql_literal(str(lake["ok"] / n)) for n in ("in.jsonl", "in.csv", "in.parquet"))
            + "]",
            "SET enable_external_access = false",
        ],
        "locked configuration": [
            f"SET allowed_directories = [{sql_literal(ok)}]",
            "SET enable_external_access = false",
            "SET lock_configuration = true",
        ],
    }


def outcome(con: duckdb.DuckDBPyConnection, sql: str):
    try:
        return ("rows", con.execute(sql).fetchall())
    except duckdb.Error as e:
        return ("refused", str(e).splitlines()[0])


@pytest.mark.parametrize("prepared", [False, True], ids=["bound after", "prepared before"])
@pytest.mark.parametrize("where", ["ok", "out"])
@pytest.mark.parametrize("call", list(CALLS))
def test_every_setting_refuses_what_duckdbs_readers_refuse(connect, lake, call, where, prepared):
    ours, theirs, name = CALLS[call]
    path = sql_literal(str(lake[where] / name))
    for setting, statements in settings(lake).items():
        con = connect()
        if prepared:
            # Bound before the lockdown, executed after it: the files are
            # opened again when the statement runs, and checked then.
            con.execute(f"PREPARE ours AS {ours.format(f=path)}")
            con.execute(f"PREPARE theirs AS {theirs.format(f=path)}")
        for s in statements:
            con.execute(s)
        run = (lambda q: f"EXECUTE {q}") if prepared else None
        got = outcome(con, run("ours") if run else ours.format(f=path))
        want = outcome(con, run("theirs") if run else theirs.format(f=path))
        cell = f"{setting} / {call} in {where}/ ({'prepared' if prepared else 'bound'})"
        assert got[0] == want[0], f"{cell}: ours {got}, DuckDB's reader {want}"
        if got[0] == "rows":
            assert got[1] == want[1] or call == "probe", f"{cell}: ours {got}, DuckDB's reader {want}"
        con.close()


def test_a_python_registered_file_system_serves_the_readers(connect):
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    with memory.open("/parity/x.jsonl", "wb") as f:
        f.write(b'{"a": 1}\n{"a": 2}\n')
    with memory.open("/parity/y.jsonl", "wb") as f:
        f.write(b'{"a": 3, "b": "s"}\n')
    con = connect()
    con.register_filesystem(memory)
    one = "memory:///parity/x.jsonl"
    assert con.execute(f"SELECT a FROM sanitize_jsonl('{one}')").fetchall() == con.execute(
        f"SELECT a FROM read_json('{one}')"
    ).fetchall()
    # A list, as DuckDB's glob() lists the files (the C API gives an
    # extension no glob of its own).
    con.execute("SET VARIABLE files = (SELECT list(file ORDER BY file) FROM glob('memory:///parity/*.jsonl'))")
    got = con.execute("SELECT a, b FROM sanitize_jsonl(getvariable('files')) ORDER BY a").fetchall()
    want = con.execute("SELECT a, b FROM read_json('memory:///parity/*.jsonl') ORDER BY a").fetchall()
    assert got == want
    # A glob of such a file system is an error that says how to list it.
    with pytest.raises(duckdb.Error, match="list it with DuckDB's glob"):
        con.execute("SELECT * FROM sanitize_jsonl('memory:///parity/*.jsonl')").fetchall()
    memory.rm("/parity", recursive=True)


def test_local_globs_list_what_duckdbs_glob_lists_in_its_order(connect, tmp_path):
    # Hidden files and directories, nested levels, upper and lower case.
    for name in ["a/x.jsonl", "a/.y.jsonl", "a/.h/z.jsonl", "a/b/w.jsonl", ".hd/v.jsonl", "a/B.jsonl", "a/b/.u.jsonl"]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"f": 1}\n')
    con = connect()
    for pattern in ["a/*.jsonl", "**/*.jsonl", "a/**", "*/*.jsonl", "a/**/*.jsonl", "a/*/*.jsonl"]:
        full = sql_literal(str(tmp_path / pattern))
        theirs = [r[0] for r in con.execute(f"SELECT file FROM glob({full})").fetchall()]
        ours = [r[0] for r in con.execute(f"SELECT source_file FROM sanitize_jsonl({full})").fetchall()]
        assert ours == theirs, pattern
