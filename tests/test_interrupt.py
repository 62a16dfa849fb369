"""Query interruption: a long scan stops promptly when the client interrupts.

DuckDB checks for interruption between the chunks a table function returns;
every call of ours returns at most 2048 rows, so the check comes often. The
probe of an additive scan runs inside bind, where the C API offers no
interruption check, so this test uses a strict scan (no probe) to measure the
scan phase alone (docs/errors.md).
"""
from __future__ import annotations

import threading
import time

import duckdb
import pytest

from conftest import sql_literal


def test_a_long_scan_stops_promptly_on_interrupt(con, tmp_path):
    data = tmp_path / "big.jsonl"
    con.execute(f"COPY (SELECT i, 'row ' || i AS s FROM range(4000000) t(i)) TO {sql_literal(str(data))} (FORMAT json)")
    one = tmp_path / "one.jsonl"
    one.write_text('{"i": 1, "s": "x"}\n')
    registry = con.execute(
        f"SELECT schema_registry FROM sanitize_jsonl({sql_literal(str(one))}) WHERE schema_registry IS NOT NULL"
    ).fetchone()[0]
    sql = (
        f"SELECT count(*), sum(i), sum(length(s)) FROM sanitize_jsonl({sql_literal(str(data))}, "
        f"schema_mode := 'strict', registry := {sql_literal(registry)})"
    )
    rows = 4000000
    expected = con.execute(
        f"SELECT count(*), sum(i), sum(length('row ' || i)) FROM range({rows}) t(i)"
    ).fetchone()
    # Uninterrupted, the scan must take long enough for an interrupt to cut it
    # short. Machines differ and the scan keeps getting faster, so the file is
    # doubled (appended to itself) until the full scan takes over a second.
    copies = 1
    while True:
        start = time.monotonic()
        assert con.execute(sql).fetchone() == tuple(copies * v for v in expected)
        full = time.monotonic() - start
        if full > 1.0 or copies >= 16:
            break
        text = data.read_bytes()
        with data.open("ab") as out:
            out.write(text)
        copies *= 2
    timer = threading.Timer(full / 5, con.interrupt)
    timer.start()
    with pytest.raises(duckdb.InterruptException):
        con.execute(sql).fetchall()
    timer.join()
    # The scan stopped where the interrupt found it: the records it read
    # (sanitize_stats() logs the interrupted scan too) are a part of the
    # file's. Counted, not timed: a loaded machine must not fail the test.
    read = con.execute("SELECT rows_read FROM sanitize_stats() ORDER BY scan_id DESC LIMIT 1").fetchone()[0]
    assert 0 < read < copies * rows, f"the interrupted scan read {read} of {copies * rows} records"
    # The connection is still usable.
    assert con.execute("SELECT 42").fetchone() == (42,)
