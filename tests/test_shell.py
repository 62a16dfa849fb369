"""The extension in the DuckDB shell (duckdb-cli of the venv): INSTALL by name
from build/repository with -unsigned, LOAD, queries, and error reporting."""
from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

from conftest import EXTENSION_NAME, sql_literal


def run_cli(cli: Path, env: dict, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)


def setup_sql(extension_dir: Path, repository: Path | None = None, install: bool = True) -> str:
    sql = f"SET extension_directory = {sql_literal(str(extension_dir))};\n"
    if repository is not None:
        sql += f"SET custom_extension_repository = {sql_literal(str(repository))};\n"
    if install:
        sql += f"INSTALL {EXTENSION_NAME};\n"
    return sql + f"LOAD {EXTENSION_NAME};\n"


def test_cli_installs_by_name_loads_and_queries(duckdb_cli, repository, extension_dir, tmp_path, write_jsonl, subprocess_env):
    data = write_jsonl(tmp_path / "people.jsonl", [
        {"Person ID": 2, "City": "Porto", "score": 1.5},
        {"Person ID": 1, "City": "Lisboa", "score": 3},
    ])
    sql = setup_sql(extension_dir, repository) + (
        f"SELECT personid, city, score, source_file FROM sanitize_jsonl({sql_literal(str(data))}) ORDER BY personid;"
    )
    proc = run_cli(duckdb_cli, subprocess_env, "-unsigned", "-csv", "-c", sql)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    assert rows == [
        ["personid", "city", "score", "source_file"],
        ["1", "Lisboa", "3.0", str(data)],
        ["2", "Porto", "1.5", str(data)],
    ]
    # INSTALL went to the test's extension_directory, not to $HOME.
    installed = list(extension_dir.rglob(f"{EXTENSION_NAME}.duckdb_extension"))
    assert len(installed) == 1, installed
    assert not list(Path(subprocess_env["HOME"]).rglob(f"{EXTENSION_NAME}.duckdb_extension"))


def test_cli_json_mode_nested_values_and_registry(duckdb_cli, repository, extension_dir, tmp_path, write_jsonl, subprocess_env):
    data = write_jsonl(tmp_path / "nested.jsonl", [
        {"id": 1, "geo": {"lat": 1.25, "Place Name": "x"}, "labels": ["a", "b"]},
        {"id": 2, "geo": {"lat": 2}, "labels": "c"},
    ])
    sql = setup_sql(extension_dir, repository) + (
        f"SELECT id, geo, labels, json_extract(schema_registry, '$.schema_generation') AS generation "
        f"FROM sanitize_jsonl({sql_literal(str(data))}) ORDER BY id;"
    )
    proc = run_cli(duckdb_cli, subprocess_env, "-unsigned", "-json", "-c", sql)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert rows == [
        {"id": 1, "geo": {"lat": 1.25, "placename": "x"}, "labels": ["a", "b"], "generation": 1},
        {"id": 2, "geo": {"lat": 2.0, "placename": None}, "labels": ["c"], "generation": None},
    ]


def test_cli_refuses_the_unsigned_extension_without_flag(duckdb_cli, repository, extension_dir, subprocess_env):
    proc = run_cli(duckdb_cli, subprocess_env, "-c", setup_sql(extension_dir, repository) + "SELECT 1;")
    assert proc.returncode != 0
    assert "signature" in proc.stderr


def test_cli_error_names_the_function_and_exits_non_zero(duckdb_cli, repository, extension_dir, tmp_path, write_jsonl, subprocess_env):
    bad = write_jsonl(tmp_path / "events.ndjson", [{"a": 1}])
    sql = setup_sql(extension_dir, repository) + (
        f"SELECT * FROM sanitize_jsonl({sql_literal(str(bad))});\nSELECT 'not reached' AS marker;"
    )
    proc = run_cli(duckdb_cli, subprocess_env, "-unsigned", "-csv", "-c", sql)
    assert proc.returncode != 0
    assert proc.returncode > 0, f"killed by signal {-proc.returncode}"
    assert "sanitize_jsonl" in proc.stderr
    assert ".jsonl" in proc.stderr
    assert "not reached" not in proc.stdout


def test_cli_keeps_running_after_an_error_in_a_script(duckdb_cli, repository, extension_dir, tmp_path, write_jsonl, subprocess_env):
    good = write_jsonl(tmp_path / "ok.jsonl", [{"n": 7}])
    script = setup_sql(extension_dir, repository) + (
        "SELECT * FROM sanitize_jsonl('does/not/exist.jsonl');\n"
        f"SELECT n FROM sanitize_jsonl({sql_literal(str(good))});\n"
    )
    proc = run_cli(duckdb_cli, subprocess_env, "-unsigned", "-csv", stdin=script)
    assert proc.returncode == 1, proc.stderr
    assert "sanitize_jsonl" in proc.stderr and "does/not/exist.jsonl" in proc.stderr
    assert proc.stdout.split() == ["n", "7"]
