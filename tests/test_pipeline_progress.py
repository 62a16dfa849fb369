"""sanitize_pipeline's progress: another connection watches the
running pipeline through sanitize_stats(all_connections := true)."""
from __future__ import annotations

import json
import threading
import time

from conftest import sql_literal


def test_another_connection_sees_the_pipeline_reads_only_with_all_connections(con, tmp_path):
    lake, silver = tmp_path / "bronze", tmp_path / "silver"
    days = 4
    for day in range(1, days + 1):
        d = lake / f"year=2026/month=06/date=2026-06-{day:02d}"
        d.mkdir(parents=True)
        with open(d / "e.jsonl", "w") as f:
            for i in range(60_000):
                f.write(json.dumps({"id": i, "day": day, "text": "x" * (i % 50)}) + "\n")
    runner = con.cursor()  # a second connection to the same database
    watcher = con.cursor()
    result: dict = {}

    def run():
        result["rows"] = runner.execute(
            f"SELECT partition_key, status, rows_written FROM sanitize_pipeline({sql_literal(str(lake))}, "
            f"{sql_literal(str(silver))}, start_date := '2026-06-01', end_date := '2026-06-{days:02d}', input_format := 'jsonl')"
        ).fetchall()

    thread = threading.Thread(target=run)
    thread.start()
    seen_running = False
    deadline = time.time() + 120
    while thread.is_alive() and time.time() < deadline:
        rows = watcher.execute(
            "SELECT finished FROM sanitize_stats(all_connections := true) WHERE function = 'sanitize_pipeline'"
        ).fetchall()
        seen_running |= any(not finished for (finished,) in rows)
        time.sleep(0.01)
    thread.join()
    assert [r[1] for r in result["rows"]] == ["written"] * days
    assert all(r[2] == 60_000 for r in result["rows"])

    # The watcher's own scans do not include the pipeline's; all of them do,
    # one finished read per partition, with the runner's connection id.
    own = watcher.execute("SELECT count(*) FROM sanitize_stats() WHERE function = 'sanitize_pipeline'").fetchone()[0]
    assert own == 0
    reads = watcher.execute(
        "SELECT count(*), count(DISTINCT connection_id), bool_and(finished), sum(rows_emitted) "
        "FROM sanitize_stats(all_connections := true) WHERE function = 'sanitize_pipeline'"
    ).fetchone()
    assert reads == (days, 1, True, days * 60_000)
    runner_id = runner.execute(
        "SELECT DISTINCT connection_id FROM sanitize_stats() WHERE function = 'sanitize_pipeline'"
    ).fetchall()
    assert len(runner_id) == 1 and runner_id[0][0] is not None
    # Four partitions of 60,000 rows take long enough to be seen running.
    assert seen_running
