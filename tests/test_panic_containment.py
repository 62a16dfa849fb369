"""A Rust panic inside a DuckDB callback must become an ordinary DuckDB error,
and the process and connection must keep working.

`sanitize_debug_panic(where)` exists only when SCHEMA_SANITIZER_PANIC_PROBE=1
is set at LOAD time. Every probe runs in a child process, so an uncontained
panic (an abort) shows up as a bad return code instead of killing pytest.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import EXTENSION_NAME, sql_literal

# The child: INSTALL/LOAD from the repository into a private extension
# directory, run the probe query, then prove the connection still works by
# scanning a real file and running a plain query. Prints one JSON report.
CHILD = textwrap.dedent(
    """
    import json, sys
    import duckdb

    repository, extension_dir, probe_sql, data_path = sys.argv[1:5]
    lit = lambda s: "'" + s.replace("'", "''") + "'"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("SET extension_directory = " + lit(extension_dir))
    con.execute("SET custom_extension_repository = " + lit(repository))
    con.execute("FORCE INSTALL %s")
    con.execute("LOAD %s")
    report = {}
    try:
        report["rows"] = con.execute(probe_sql).fetchall()
    except duckdb.Error as e:
        report["error_class"] = [c.__name__ for c in type(e).__mro__]
        report["error"] = str(e)
    report["after_scan"] = con.execute(
        "SELECT v FROM sanitize_jsonl(" + lit(data_path) + ") ORDER BY v").fetchall()
    report["after_plain"] = con.execute("SELECT 6 * 7").fetchall()
    print(json.dumps(report))
    """
    % (EXTENSION_NAME, EXTENSION_NAME)
)


def run_child(probe_sql: str, *, probe_enabled: bool, repository: Path, extension_dir: Path, data: Path, env: dict) -> dict:
    env = dict(env)
    if probe_enabled:
        env["SCHEMA_SANITIZER_PANIC_PROBE"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repository), str(extension_dir), probe_sql, str(data)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, (
        f"child process failed with return code {proc.returncode} (negative: killed by a signal, "
        f"i.e. the panic was not contained)\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    report["stderr"] = proc.stderr
    return report


@pytest.fixture
def data(tmp_path: Path, write_jsonl) -> Path:
    return write_jsonl(tmp_path / "after.jsonl", [{"v": 2}, {"v": 1}])


@pytest.mark.parametrize("where", ["bind", "scan"])
def test_panic_becomes_a_duckdb_error_python(where, repository, extension_dir, data, subprocess_env):
    report = run_child(
        f"FROM sanitize_debug_panic('{where}')",
        probe_enabled=True, repository=repository, extension_dir=extension_dir, data=data, env=subprocess_env,
    )
    assert "rows" not in report, f"the probe returned rows instead of failing: {report}"
    assert "Error" in report["error_class"], report["error_class"]
    assert "internal error (please report)" in report["error"]
    assert "deliberate panic" in report["error"]
    assert f"in {where}" in report["error"]
    assert report["after_scan"] == [[1], [2]]
    assert report["after_plain"] == [[42]]
    # The extension prints nothing: the panic message only travels as the error.
    assert "panicked" not in report["stderr"] and "deliberate panic" not in report["stderr"], report["stderr"]


def test_probe_is_absent_without_the_environment_variable(repository, extension_dir, data, subprocess_env):
    report = run_child(
        "FROM sanitize_debug_panic('bind')",
        probe_enabled=False, repository=repository, extension_dir=extension_dir, data=data, env=subprocess_env,
    )
    assert "CatalogException" in report["error_class"], report
    assert "sanitize_debug_panic" in report["error"]
    assert "deliberate panic" not in report["error"]
    assert report["after_plain"] == [[42]]


def test_panics_are_contained_in_the_shell(duckdb_cli, repository, extension_dir, data, subprocess_env):
    env = dict(subprocess_env, SCHEMA_SANITIZER_PANIC_PROBE="1")
    script = (
        f"SET extension_directory = {sql_literal(str(extension_dir))};\n"
        f"SET custom_extension_repository = {sql_literal(str(repository))};\n"
        f"INSTALL {EXTENSION_NAME};\nLOAD {EXTENSION_NAME};\n"
        "FROM sanitize_debug_panic('bind');\n"
        "FROM sanitize_debug_panic('scan');\n"
        f"SELECT sum(v) AS alive FROM sanitize_jsonl({sql_literal(str(data))});\n"
    )
    proc = subprocess.run([str(duckdb_cli), "-unsigned", "-csv"], input=script,
                          capture_output=True, text=True, env=env, timeout=120)
    # 1: the script had errors; a negative code would be a signal (abort).
    assert proc.returncode == 1, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    # The only trace of each panic is the DuckDB error (the extension's quiet
    # panic hook keeps Rust's own "thread panicked" report off stderr).
    for where in ("bind", "scan"):
        assert f"internal error (please report): deliberate panic in {where}" in proc.stderr, proc.stderr
    assert "panicked at" not in proc.stderr, proc.stderr
    assert proc.stdout.split() == ["alive", "3"]
