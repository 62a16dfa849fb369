"""Self-checks for scripts/sqllogictest.py using only built-in DuckDB SQL (no extension)."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[1] / "scripts" / "sqllogictest.py"
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")


def run(tmp_path: Path, files: dict[str, str], *args: str) -> tuple[int, str, tuple[int, int, int]]:
    """Write `files` (name -> content) into tmp_path, run the runner there; return (rc, stdout, counts)."""
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"))
    proc = subprocess.run([sys.executable, str(RUNNER), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    last = proc.stdout.rstrip("\n").splitlines()[-1]
    match = SUMMARY.match(last)
    assert match, f"bad summary line {last!r}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    counts = tuple(int(g or 0) for g in match.groups())
    return proc.returncode, proc.stdout, counts


def test_passing_queries_and_rendering(tmp_path):
    rc, out, counts = run(tmp_path, {"ok.test": """
        # comment
        statement ok
        CREATE TABLE t(i INTEGER, s VARCHAR);

        statement ok
        INSERT INTO t VALUES (3, 'c'), (1, ''), (2, NULL)

        query IT rowsort
        SELECT i, s FROM t
        ----
        1	(empty)
        2	NULL
        3	c

        query IT
        SELECT i, s FROM t ORDER BY i
        ----
        1
        (empty)
        2
        NULL
        3
        c

        query II
        SELECT true, false
        ----
        true	false

        query T
        SELECT {'a': 1, 'b': [1, 2]}
        ----
        {'a': 1, 'b': [1, 2]}

        query TTT
        SELECT [1, 2, 3], ['x', NULL], MAP {'k': 'v'}
        ----
        [1, 2, 3]	[x, NULL]	{k=v}

        query TT
        SELECT TIMESTAMP '2024-01-02 03:04:05', DATE '2024-01-02'
        ----
        2024-01-02 03:04:05	2024-01-02

        query RRR
        SELECT 1.5::DOUBLE, 2.0::DOUBLE, 1.50::DECIMAL(5, 2)
        ----
        1.5	2.0	1.50

        query I valuesort
        SELECT * FROM (VALUES (3), (1), (2))
        ----
        1
        2
        3

        query I
        SELECT * FROM range(3)
        ----
        3 values hashing to 996dc30fa92a088d53929ed16588ec72

        statement ok
        COPY (SELECT 42 AS x) TO '__TEST_DIR__/x.csv'

        query I
        SELECT x FROM read_csv('__TEST_DIR__/x.csv')
        ----
        42
        """}, "-v", "ok.test")
    assert rc == 0, out
    assert counts == (13, 0, 0), out


def test_failing_query_is_reported(tmp_path):
    rc, out, counts = run(tmp_path, {"bad.test": """
        query I
        SELECT 42
        ----
        43

        query II
        SELECT 1
        ----
        1	1

        query I
        SELECT 1
        ----
        1
        """}, "bad.test")
    assert rc == 1
    assert counts == (1, 2, 0), out
    assert "FAIL bad.test:1" in out and "'42' <> expected '43'" in out
    assert "FAIL bad.test:6" in out and "column" in out


def test_statement_error_messages(tmp_path):
    rc, out, counts = run(tmp_path, {"err.test": """
        statement error
        SELECT * FROM no_such_table
        ----
        Table with name no_such_table does not exist

        statement error
        SELECT * FROM no_such_table
        ----
        <REGEX>:.*no_such_table.*exist.*

        statement error
        SELECT 1 +
        """}, "err.test")
    assert rc == 0, out
    assert counts == (3, 0, 0), out

    rc, out, counts = run(tmp_path, {"err2.test": """
        statement error
        SELECT * FROM no_such_table
        ----
        some other message

        statement error
        SELECT 1

        statement ok
        SELECT * FROM no_such_table
        """}, "err2.test")
    assert rc == 1
    assert counts == (0, 3, 0), out
    assert "some other message" in out and "Catalog Error" in out


def test_skip_modes_require_and_unsupported(tmp_path):
    rc, out, counts = run(tmp_path, {
        "dir/a.test": """
            mode skip

            statement ok
            this is not sql

            mode unskip

            statement ok
            SELECT 1

            require no_such_extension_xyz

            statement ok
            SELECT 2
            """,
        "dir/b.test": """
            statement ok
            SELECT 1

            loop i 0 3

            statement ok
            SELECT ${i}

            endloop
            """,
    }, "dir")
    assert rc == 1
    assert counts == (2, 1, 3), out
    assert "SKIP dir/a.test:11" in out and "unsupported directive 'loop'" in out


def test_zero_records_is_a_failure(tmp_path):
    rc, out, counts = run(tmp_path, {"empty.test": "# nothing here\n"}, "empty.test")
    assert rc == 1
    assert counts == (0, 0, 0), out
