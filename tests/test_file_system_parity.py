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
    "directory": (
        "SELECT a FROM sanitize_jsonl({f}, input_mode := 'directory') ORDER BY a",
        "SELECT a FROM read_json({f} || '/*.jsonl') ORDER BY a",
        "",
    ),
    # A registry with a contract: the options are parsed again from it,
    # and the file system must survive that.
    "registry": (
        "SELECT a FROM sanitize_jsonl({f}, registry := getvariable('reg'))",
        "SELECT a FROM read_json({f})",
        "in.jsonl",
    ),
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
        registry = f"SELECT schema_registry FROM sanitize_jsonl({sql_literal(str(lake['ok'] / 'in.jsonl'))}) LIMIT 1"
        con.execute(f"SET VARIABLE reg = ({registry})")
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


@pytest.fixture
def lakes(lake: dict[str, Path]) -> dict[str, Path]:
    """Beside each directory's files: a partitioned lake, and a Parquet
    output with a registry in its footer (written before any lockdown)."""
    con = duckdb.connect()
    for where in ("ok", "out"):
        day = lake[where] / "lake" / "date=2024-01-01"
        day.mkdir(parents=True)
        (day / "x.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    return lake


def row_calls(root: Path, n: int) -> dict[str, tuple[str, str]]:
    """Each row function, and the reader or COPY that touches the same
    paths; `n` makes every output name new."""
    lake = sql_literal(str(root / "lake"))
    day = sql_literal(str(root / "lake" / "date=2024-01-01" / "x.jsonl"))
    silver = str(root / f"silver{n}")
    template = "partition_template := 'date={yyyy}-{mm}-{dd}'"
    dates = "start_date := '2024-01-01', end_date := '2024-01-01'"
    written = sql_literal(str(root / "written.parquet"))
    return {
        "pipeline": (
            f"SELECT rows_written FROM sanitize_pipeline({lake}, {sql_literal(silver)}, {dates}, {template}, input_format := 'jsonl')",
            f"COPY (FROM read_json({day})) TO {sql_literal(silver + '.parquet')}",
        ),
        "partitions": (
            f"SELECT files FROM sanitize_partitions({lake}, {dates}, {template}, input_format := 'jsonl')",
            f"SELECT count(*) FROM read_json({day})",
        ),
        "ingest": (
            f"SELECT rows_written FROM sanitize_ingest({sql_literal(str(root / 'lake' / '*' / '*.jsonl'))}, {sql_literal(silver)}, input_format := 'jsonl')",
            f"COPY (FROM read_json({day})) TO {sql_literal(silver + '.parquet')}",
        ),
        "registry_from_parquet": (
            f"SELECT sanitize_registry_from_parquet({written}) IS NOT NULL",
            f"SELECT count(*) FROM read_parquet({written})",
        ),
        "latest_registry": (
            f"SELECT count(*) FROM sanitize_latest_registry({sql_literal(str(root / 'silver0'))}, {template})",
            f"SELECT count(*) FROM read_parquet({written})",
        ),
    }


@pytest.mark.parametrize("prepared", [False, True], ids=["bound after", "prepared before"])
@pytest.mark.parametrize("where", ["ok", "out"])
def test_row_functions_read_and_write_where_duckdbs_readers_and_copy_may(connect, lakes, where, prepared):
    root = lakes[where]
    # Written before any lockdown: an output with a registry in its footer.
    setup = connect()
    first = row_calls(root, 0)["pipeline"][0]
    assert setup.execute(first).fetchall() == [(2,)]
    written = next((root / "silver0").rglob("*.parquet"))
    written.rename(root / "written.parquet")
    assert setup.execute(first).fetchall() == [(2,)]
    setup.close()
    n = 1
    for setting, statements in settings(lakes).items():
        for call, (ours, theirs) in row_calls(root, n).items():
            n += 1
            con = connect()
            if prepared:
                con.execute(f"PREPARE ours AS {ours}")
                con.execute(f"PREPARE theirs AS {theirs}")
            for s in statements:
                con.execute(s)
            got = outcome(con, "EXECUTE ours" if prepared else ours)
            want = outcome(con, "EXECUTE theirs" if prepared else theirs)
            cell = f"{setting} / {call} in {where}/ ({'prepared' if prepared else 'bound'})"
            assert got[0] == want[0], f"{cell}: ours {got}, DuckDB's {want}"
            con.close()
    # Nothing refused left a file or a directory behind.
    made = sorted(p.name for p in root.iterdir() if p.name.startswith("silver"))
    assert all((root / m).exists() for m in made)


def test_the_pipelines_reads_and_writes_go_through_duckdbs_file_system(connect, lakes):
    root = lakes["ok"]
    con = connect()
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    lake, silver = sql_literal(str(root / "lake")), sql_literal(str(root / "s"))
    with pytest.raises(duckdb.Error, match="disabled"):
        con.execute(
            f"SELECT * FROM sanitize_pipeline({lake}, {silver}, start_date := '2024-01-01', end_date := '2024-01-01', "
            "partition_template := 'date={yyyy}-{mm}-{dd}', input_format := 'jsonl')"
        ).fetchall()
    assert not (root / "s").exists()
    con = connect()
    con.execute(
        f"SELECT * FROM sanitize_pipeline({lake}, {silver}, start_date := '2024-01-01', end_date := '2024-01-01', "
        "partition_template := 'date={yyyy}-{mm}-{dd}', input_format := 'jsonl')"
    ).fetchall()
    systems = con.execute("SELECT DISTINCT file_system FROM sanitize_stats()").fetchall()
    assert systems == [("duckdb",)]


@pytest.mark.parametrize("call", ["jsonl", "csv", "parquet", "glob"])
@pytest.mark.parametrize("how", ["file_search_path", "home_directory"])
def test_relative_and_home_paths_resolve_as_duckdbs_readers_resolve_them(connect, lake, call, how):
    ours, theirs, name = CALLS[call]
    con = connect()
    if how == "file_search_path":
        # A directory without the file first: the search goes on to the next.
        con.execute(f"SET file_search_path = {sql_literal(str(lake['out'] / 'none') + ',' + str(lake['ok']))}")
        path = sql_literal(name)
    else:
        con.execute(f"SET home_directory = {sql_literal(str(lake['ok']))}")
        path = sql_literal("~/" + name)
    got = outcome(con, ours.format(f=path))
    want = outcome(con, theirs.format(f=path))
    assert got[0] == want[0] == "rows", (got, want)
    assert got[1] == want[1]
