"""DuckDB's thread budget: with `SET threads = 1` the extension decodes on
DuckDB's own thread and starts no thread of its own; with `threads = N` it
runs at most N - 1 decoder threads named `sanitize-decode` beside DuckDB's
thread (scan/ordered.rs). The results are the same either way."""
from __future__ import annotations

import os
import threading
import time

from conftest import sql_literal


def decoder_threads_seen(con, sql: str) -> tuple[bool, list]:
    """Runs `sql` in a Python thread while watching this process's threads
    (Linux: /proc/self/task/*/comm) for the decoder thread."""
    most, result = decoder_threads_counted(con, sql)
    return most > 0, result


def decoder_threads_counted(con, sql: str) -> tuple[int, list]:
    """Runs `sql` in a Python thread; the most decoder threads seen at once."""
    result: list = []
    done = threading.Event()

    def run():
        try:
            result.extend(con.execute(sql).fetchall())
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    most = 0
    while not done.is_set():
        now = 0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/comm") as f:
                    if f.read().strip() == "sanitize-decode":
                        now += 1
            except OSError:
                pass  # the thread ended while we looked
        most = max(most, now)
        time.sleep(0.001)
    worker.join()
    return most, result


def test_threads_1_starts_no_thread_of_ours(con, tmp_path):
    data = tmp_path / "rows.jsonl"
    con.execute(
        f"COPY (SELECT i, 'row ' || i AS s, i * 0.5 AS f FROM range(1500000) t(i)) TO {sql_literal(str(data))} (FORMAT json)"
    )
    sql = f"SELECT count(*), sum(i), count(DISTINCT s) FROM sanitize_jsonl({sql_literal(str(data))})"
    con.execute("SET threads = 1")
    seen_1, rows_1 = decoder_threads_seen(con, sql)
    con.execute("SET threads = 2")
    seen_2, rows_2 = decoder_threads_seen(con, sql)
    assert rows_1 == rows_2 == [(1500000, 1500000 * 1499999 // 2, 1500000)]
    # The watch can see the thread: at threads = 2 it is there.
    assert seen_2, "the decoder thread was not seen at threads = 2"
    assert not seen_1, "a decoder thread ran at threads = 1"


def test_threads_n_runs_at_most_n_minus_1_decoders(con, tmp_path):
    """A file cut into many ranges (scan_range_bytes) could keep any number
    of decoders busy: the setting caps them at threads - 1, and all of them
    are used. Threads = 8 on this 2-core machine must still just work."""
    data = tmp_path / "rows.jsonl"
    con.execute(
        f"COPY (SELECT i, 'row ' || i AS s FROM range(1000000) t(i)) TO {sql_literal(str(data))} (FORMAT json)"
    )
    sql = (
        f"SELECT count(*), sum(i) FROM sanitize_jsonl({sql_literal(str(data))}, scan_range_bytes := 1000000)"
    )
    expected = [(1000000, 1000000 * 999999 // 2)]
    for threads in (3, 8):
        con.execute(f"SET threads = {threads}")
        most, rows = decoder_threads_counted(con, sql)
        assert rows == expected
        assert most == threads - 1, f"threads = {threads}: {most} decoder threads at once"
    con.execute("SET threads = 1")
    assert decoder_threads_counted(con, sql) == (0, expected)
