"""The bind cache (issue 13): a second bind of the same call with the same
files unchanged reuses the plan instead of probing again; a changed file is
probed afresh."""
from __future__ import annotations

import os
import time

from conftest import sql_literal


def median_seconds(con, sql: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


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
    start = time.perf_counter()
    first = con.execute(describe).fetchall()
    first_s = time.perf_counter() - start
    again_s = median_seconds(con, describe)
    assert con.execute(describe).fetchall() == first
    # The goal is under 5%; the bound here leaves room for a loaded machine.
    assert again_s < 0.25 * first_s, f"second bind {again_s:.3f} s vs first {first_s:.3f} s"
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
