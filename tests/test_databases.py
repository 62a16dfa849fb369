"""Two databases in one process (two duckdb.connect() calls in Python, a
pytest fixture per test, a dbt run beside a notebook): DuckDB numbers
connections per database, so both have the same connection ids. Each
database's sanitize_stats() and sanitize_rejects() show its own scans only,
with and without all_connections := true."""
from __future__ import annotations

from conftest import connect_and_load, sql_literal


def test_a_database_does_not_see_the_scans_of_another(repository, extension_dir, tmp_path):
    data = tmp_path / "a.csv"
    data.write_text("a\n1\nx\n2\n")
    first = connect_and_load(repository, extension_dir)
    second = connect_and_load(repository, extension_dir)
    try:
        rows = first.execute(
            f"SELECT a FROM sanitize_csv({sql_literal(str(data))}, pin_types := {{'a': 'BIGINT'}}) WHERE a IS NOT NULL OR 1=1"
        ).fetchall()
        assert sorted(r[0] for r in rows if r[0] is not None) == [1, 2]
        stats_first = first.execute("SELECT function, rows_read, connection_id FROM sanitize_stats()").fetchall()
        assert [(f, n) for f, n, _ in stats_first] == [("sanitize_csv", 3)]
        # The second database scans too, so that its connection has an id
        # of its own to compare: the same id as the first's.
        second.execute(f"SELECT count(*) FROM sanitize_csv({sql_literal(str(data))})").fetchall()
        stats_second = second.execute("SELECT function, rows_read, connection_id FROM sanitize_stats()").fetchall()
        assert len(stats_second) == 1
        assert stats_second[0][2] == stats_first[0][2], "the scenario needs two connections with one id"
        # The first database's reject (the 'x' its pin nulled) is its own.
        assert first.execute("SELECT kind, action FROM sanitize_rejects()").fetchall() == [
            ("type_mismatch", "value_nulled")
        ]
        for scope in ("", "all_connections := true"):
            assert second.execute(f"SELECT count(*) FROM sanitize_rejects({scope})").fetchall() == [(0,)], scope
            assert second.execute(f"SELECT count(*) FROM sanitize_stats({scope})").fetchall() == [(1,)], scope
            assert first.execute(f"SELECT count(*) FROM sanitize_stats({scope})").fetchall() == [(1,)], scope
        # Another connection of the same database sees its scans with
        # all_connections only.
        cursor = first.cursor()
        assert cursor.execute("SELECT count(*) FROM sanitize_stats()").fetchall() == [(0,)]
        assert cursor.execute("SELECT count(*) FROM sanitize_stats(all_connections := true)").fetchall() == [(1,)]
        assert cursor.execute("SELECT count(*) FROM sanitize_rejects(all_connections := true)").fetchall() == [(1,)]
    finally:
        first.close()
        second.close()
