"""The extension from dbt-duckdb: a one-model project whose profile installs
schema_sanitizer by name from build/repository and loads it, then `dbt run`
materializes `sanitize_jsonl(...)` into a table of a .duckdb file."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import EXTENSION_NAME, sql_literal

ORDERS = [
    {"Order ID": 1, "Customer Name": "Ana", "price": 10, "items": ["a", "b"]},
    {"Order ID": 2, "Customer Name": "Luis", "price": 2.5, "items": ["c"]},
    {"Order ID": 3, "Customer Name": None, "price": 4},
]
# lower_alpha names, sorted; price mixes integers and a float -> DOUBLE.
EXPECTED_COLUMNS = [
    ("customername", "VARCHAR"),
    ("items", "VARCHAR[]"),
    ("orderid", "BIGINT"),
    ("price", "DOUBLE"),
    ("source_file", "VARCHAR"),
    ("ingestion_timestamp", "TIMESTAMP WITH TIME ZONE"),
]


@pytest.fixture(scope="module")
def dbt_command() -> list[str]:
    if importlib.util.find_spec("dbt.adapters.duckdb") is None:
        pytest.fail(
            "dbt-duckdb is not installed in this venv; it is pinned in scripts/requirements-test.txt "
            "(run `bash scripts/setup.sh`)",
            pytrace=False,
        )
    dbt = Path(sys.executable).parent / "dbt"
    return [str(dbt)] if dbt.is_file() else [sys.executable, "-m", "dbt.cli.main"]


def write_project(project: Path, *, database: Path, repository: Path, extension_dir: Path, data: Path) -> None:
    (project / "models").mkdir(parents=True)
    # YAML is a superset of JSON: json.dumps quotes the paths safely.
    (project / "dbt_project.yml").write_text(json.dumps({
        "name": "sanitizer_smoke",
        "version": "1.0.0",
        "config-version": 2,
        "profile": "sanitizer_smoke",
        "model-paths": ["models"],
    }))
    (project / "profiles.yml").write_text(json.dumps({
        "sanitizer_smoke": {
            "target": "dev",
            "outputs": {
                "dev": {
                    "type": "duckdb",
                    "path": str(database),
                    "threads": 1,
                    # Passed to duckdb.connect(config=...): must be in place
                    # before dbt-duckdb installs the extensions below.
                    "config_options": {
                        "allow_unsigned_extensions": True,
                        "custom_extension_repository": str(repository),
                        "extension_directory": str(extension_dir),
                    },
                    # INSTALL schema_sanitizer; LOAD schema_sanitizer (by name).
                    "extensions": [EXTENSION_NAME],
                }
            },
        }
    }))
    (project / "models" / "orders.sql").write_text(
        "{{ config(materialized='table') }}\n"
        f"select * exclude (schema_registry, schema_drifts) from sanitize_jsonl({sql_literal(str(data))})\n"
    )


def test_dbt_run_materializes_a_sanitized_table(dbt_command, repository, extension_dir, tmp_path, write_jsonl, subprocess_env):
    data = write_jsonl(tmp_path / "orders.jsonl", ORDERS)
    project = tmp_path / "project"
    database = tmp_path / "warehouse.duckdb"
    write_project(project, database=database, repository=repository, extension_dir=extension_dir, data=data)

    env = dict(subprocess_env, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    proc = subprocess.run(
        [*dbt_command, "--no-send-anonymous-usage-stats", "--no-version-check", "run",
         "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, f"dbt run failed ({proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"

    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    assert [(r["unique_id"], r["status"]) for r in results] == [("model.sanitizer_smoke.orders", "success")]
    # The profile installed into the test's extension directory.
    assert list(extension_dir.rglob(f"{EXTENSION_NAME}.duckdb_extension"))

    with duckdb.connect(str(database), read_only=True) as con:
        kind = con.execute(
            "SELECT table_type FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'orders'"
        ).fetchall()
        assert kind == [("BASE TABLE",)]
        result = con.execute("SELECT * FROM main.orders ORDER BY orderid")
        assert [(name, str(ty)) for name, ty, *_ in result.description] == EXPECTED_COLUMNS
        rows = result.fetchall()
    assert [row[:4] for row in rows] == [
        ("Ana", ["a", "b"], 1, 10.0),
        ("Luis", ["c"], 2, 2.5),
        (None, None, 3, 4.0),
    ]
    assert {row[4] for row in rows} == {str(data)}
    assert len({row[5] for row in rows}) == 1 and rows[0][5] is not None
