"""The extension from Node.js (docs/clients.md): @duckdb/node-api,
pinned to the DuckDB of extension_config, INSTALLs schema_sanitizer by name
from build/repository, LOADs it and queries it; the rows, values, column
names and types must equal what the Python client returns for the same query.

The package is installed with npm into .tools/node-api/ the first time (and
whenever the pinned version changes); later runs reuse it.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from conftest import EXTENSION_NAME, sql_literal

# @duckdb/node-api publishes releases of a DuckDB version as <duckdb>-r.<n>
# (1.5.6-r.1 wraps DuckDB 1.5.6). The DuckDB part comes from extension_config,
# the one place that pins versions; this suffix picks the release of it.
NODE_API_RELEASE_SUFFIX = "-r.1"

FIXTURE = "examples/events.jsonl"

SCRIPT = r"""
// argv: repository, extension directory, queries as a JSON array.
// Prints {"version": ..., "results": [{"columns", "types", "rows"}]} as JSON.
const { DuckDBInstance } = require('@duckdb/node-api');

const literal = (text) => "'" + text.replaceAll("'", "''") + "'";

(async () => {
  const [repository, extensionDirectory, queriesJson] = process.argv.slice(2);
  const instance = await DuckDBInstance.create(':memory:', {
    allow_unsigned_extensions: 'true',
    autoinstall_known_extensions: 'false',
  });
  const connection = await instance.connect();
  await connection.run(`SET extension_directory = ${literal(extensionDirectory)}`);
  await connection.run(`INSTALL schema_sanitizer FROM ${literal(repository)}`);
  await connection.run('LOAD schema_sanitizer');
  const version = (await connection.runAndReadAll('SELECT version()')).getRows()[0][0];
  const results = [];
  for (const query of JSON.parse(queriesJson)) {
    const reader = await connection.runAndReadAll(query);
    results.push({
      columns: reader.columnNames(),
      types: reader.columnTypes().map((t) => t.toString()),
      // The lossless JSON form: BIGINT and timestamps as strings, structs as objects.
      rows: reader.getRowsJson(),
    });
  }
  connection.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify({ version, results }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
"""


def pinned_duckdb_version(repo_root: Path) -> str:
    config = (repo_root / "extension_config").read_text(encoding="utf-8")
    match = re.search(r"^DUCKDB_VERSION=(\S+)$", config, re.MULTILINE)
    assert match, "extension_config has no DUCKDB_VERSION line"
    return match.group(1)


@pytest.fixture(scope="session")
def node_api(repo_root: Path) -> Path:
    """node_modules of .tools/node-api/, holding @duckdb/node-api at the pinned version."""
    version = pinned_duckdb_version(repo_root) + NODE_API_RELEASE_SUFFIX
    prefix = repo_root / ".tools" / "node-api"
    manifest = prefix / "node_modules" / "@duckdb" / "node-api" / "package.json"

    def installed() -> str | None:
        return json.loads(manifest.read_text())["version"] if manifest.is_file() else None

    if installed() != version:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is not installed: install Node.js 20+ with npm", pytrace=False)
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--save-exact", "--no-audit", "--no-fund", "--silent",
             f"@duckdb/node-api@{version}"],
            capture_output=True, text=True, timeout=600,
        )
        assert proc.returncode == 0, f"npm install failed:\n{proc.stdout}\n{proc.stderr}"
    assert installed() == version
    return prefix / "node_modules"


def node_json_form(value, type_: duckdb.typing.DuckDBPyType):
    """A Python client value in @duckdb/node-api's JSON form (JsonDuckDBValueConverter)
    for the types these queries return."""
    if value is None:
        return None
    kind = type_.id
    if kind == "struct":
        return {name: node_json_form(value[name], child) for name, child in type_.children}
    if kind == "list":
        child = type_.children[0][1]
        return [node_json_form(element, child) for element in value]
    if kind in ("bigint", "hugeint", "ubigint", "uhugeint", "varchar"):
        return str(value)
    if kind in ("boolean", "tinyint", "smallint", "integer", "utinyint", "usmallint", "uinteger", "double", "float"):
        return value
    raise AssertionError(f"no JSON form written here for {type_}")


def without_detected_at(drifts: str | None):
    """schema_drifts, without the scan's start time (each client runs its own scan)."""
    if drifts is None:
        return None
    return [{k: v for k, v in event.items() if k != "detected_at"} for event in json.loads(drifts)]


def test_node_api_returns_what_the_python_client_returns(node_api, repo_root, repository, con, tmp_path,
                                                         subprocess_env):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: install Node.js 20+", pytrace=False)
    fixture = str(repo_root / FIXTURE)
    queries = [
        f"SELECT * FROM sanitize_jsonl({sql_literal(fixture)})",
        # Named parameters from Node too.
        f"SELECT * FROM sanitize_jsonl({sql_literal(fixture)}, field_name_policy := 'lower_snake', "
        "column_order := 'source')",
    ]
    script = tmp_path / "query.js"
    script.write_text(SCRIPT, encoding="utf-8")
    node_extensions = tmp_path / "node-ext"
    proc = subprocess.run(
        [node, str(script), str(repository), str(node_extensions), json.dumps(queries)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env=dict(subprocess_env, NODE_PATH=str(node_api)),
    )
    assert proc.returncode == 0, f"node failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(proc.stdout)

    # The Node client is the pinned DuckDB, as the Python client is, and the
    # extension was installed by name into the directory the script gave.
    assert out["version"] == f"v{pinned_duckdb_version(repo_root)}" == f"v{duckdb.__version__}"
    installed = list(node_extensions.rglob(f"{EXTENSION_NAME}.duckdb_extension"))
    assert [p.relative_to(node_extensions).parts[:2] for p in installed] == [
        (f"v{duckdb.__version__}", con.execute("PRAGMA platform").fetchone()[0])]

    for query, node_result in zip(queries, out["results"], strict=True):
        result = con.execute(query)
        names = [d[0] for d in result.description]
        types = [d[1] for d in result.description]
        rows = result.fetchall()
        assert node_result["columns"] == names, query
        # Node quotes every struct field name ("os"), Python only keywords ("version").
        assert [t.replace('"', "") for t in node_result["types"]] == [str(t).replace('"', "") for t in types], query
        assert len(node_result["rows"]) == len(rows) == 4, query

        for node_row, row in zip(node_result["rows"], rows, strict=True):
            for name, type_, node_value, value in zip(names, types, node_row, row, strict=True):
                if name == "ingestion_timestamp":
                    # One timestamp per scan: each client ran its own.
                    assert value is not None and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00", node_value)
                elif name == "schema_drifts":
                    assert without_detected_at(node_value) == without_detected_at(value), query
                else:
                    assert node_value == node_json_form(value, type_), (query, name)

    # The values themselves, so that two clients agreeing on nothing cannot pass.
    first = out["results"][0]
    by_name = [dict(zip(first["columns"], row)) for row in first["rows"]]
    assert [r["eventid"] for r in by_name] == ["1", "2", "3", "4"]
    assert [r["amount"] for r in by_name] == [12, 7.5, None, 3]
    assert [r["amount_v2_string"] for r in by_name] == [None, None, "unknown", None]
    assert by_name[0]["device"] == {"os": "ios", "version": "17", "version_v2_string": None}
    assert by_name[2]["device"] == {"os": "web", "version": None, "version_v2_string": "beta"}
    assert by_name[2]["tags"] == ["vip"]
    assert sum(r["schema_registry"] is not None for r in by_name) == 1
    snake = out["results"][1]["columns"]
    assert "event_id" in snake and "user_name" in snake
