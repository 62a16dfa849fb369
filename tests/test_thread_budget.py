"""DuckDB's thread budget: with `SET threads = 1` the extension decodes on
DuckDB's own thread and starts no thread of its own; with more threads it
decodes in a background thread named `sanitize-decode`. The results are the
same either way (issue 13)."""
from __future__ import annotations

import os
import threading
import time

from conftest import sql_literal


def decoder_threads_seen(con, sql: str) -> tuple[bool, list]:
    """Runs `sql` in a Python thread while watching this process's threads
    (Linux: /proc/self/task/*/comm) for the decoder thread."""
    result: list = []
    done = threading.Event()

    def run():
        try:
            result.extend(con.execute(sql).fetchall())
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    seen = False
    while not done.is_set():
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/comm") as f:
                    if f.read().strip() == "sanitize-decode":
                        seen = True
            except OSError:
                pass  # the thread ended while we looked
        time.sleep(0.001)
    worker.join()
    return seen, result


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
