"""The bind cache: a second bind of the same call with the same
files unchanged reuses the plan instead of probing again; a changed file is
probed afresh."""
from __future__ import annotations

import os
import time

import duckdb

from conftest import sql_literal


def test_a_second_bind_reuses_the_plan_and_a_changed_file_does_not(con, tmp_path):
    data = tmp_path / "rows.jsonl"
    con.execute(
        f"COPY (SELECT i, 'row ' || i AS s, i * 0.5 AS f FROM range(600000) t(i)) TO {sql_literal(str(data))} (FORMAT json)"
    )
    # A file modified in the last two seconds is never cached (it could
    # change again within one timestamp tick): age it.
    old = time.time() - 60
    os.utime(data, (old, old))
    describe = f"DESCRIBE SELECT * FROM sanitize_jsonl({sql_literal(str(data))})"
    first = con.execute(describe).fetchall()
    assert con.execute(describe).fetchall() == first
    # The Python relation API binds twice; the rows are those of a plain query.
    rel = con.sql(f"SELECT count(*), sum(i) FROM sanitize_jsonl({sql_literal(str(data))})")
    assert rel.fetchall() == [(600000, 600000 * 599999 // 2)]
    # A changed file is probed afresh: the new field appears.
    with open(data, "a") as f:
        f.write('{"i": 1, "s": "x", "f": 1.0, "extra": true}\n')
    names = [r[0] for r in con.execute(describe).fetchall()]
    assert "extra" in names and "extra" not in [r[0] for r in first]
    # Another connection does not see this connection's plans, and reads the same.
    other = con.cursor()
    assert [r[0] for r in other.execute(describe).fetchall()] == names


def test_a_cached_bind_opens_no_file(con, tmp_path):
    """A second bind of the same call reuses the plan without reading the
    file: with every local file refused by DuckDB's file system, it still
    binds, where a connection without the plan (which must probe) is
    refused. Shown by what is opened, not by how long it takes."""
    data = tmp_path / "rows.jsonl"
    data.write_text('{"i": 1, "s": "x"}\n' * 1000)
    # A file modified in the last two seconds is never cached: age it.
    old = time.time() - 60
    os.utime(data, (old, old))
    describe = f"DESCRIBE SELECT * FROM sanitize_jsonl({sql_literal(str(data))})"
    first = con.execute(describe).fetchall()
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    assert con.execute(describe).fetchall() == first
    other = con.cursor()
    try:
        other.execute(describe).fetchall()
        raise AssertionError("a bind without a cached plan read the file")
    except duckdb.Error as e:
        assert "LocalFileSystem has been disabled" in str(e), str(e)
