"""A file system registered in Python (`con.register_filesystem`) serves the
sanitize_* readers through DuckDB's own file system: fsspec's `memory://`,
and s3fs for `s3://` against the moto S3 server on 127.0.0.1.

Each case reads the same files (tests/registered_fs.py) on local disk and on
the registered file system, with sanitize_jsonl, sanitize_csv (as read and
with the sniffer), sanitize_json and sanitize_parquet: one file, a list, a
glob and directory mode. The two reads must give the same rows in the same
order, the same column types, the same registry and drifts, and the same
sanitize_probe; and on the registered path, the same ids, names and file
names as DuckDB's read_json, read_csv and read_parquet.

A glob or a directory of a registered file system cannot be listed by an
extension (the C API has no glob): it is listed with DuckDB's glob() and
passed as a list, `SET VARIABLE files = (SELECT list(file) FROM glob(...))`
then `sanitize_*(getvariable('files'))`, and compared with the extension's
own glob and directory mode on the local copies.

s3fs gets its endpoint and keys from its constructor, and the reads run
with no AWS_* variable that configures the extension's own S3 client
(object_store), so only DuckDB's file system can serve them;
`sanitize_stats().file_system` says which one did. In-process, every AWS_*
variable is removed but AWS_EC2_METADATA_DISABLED, the switch every test
sets (without it a read the extension sent to object_store would ask the
EC2 metadata endpoint, beyond 127.0.0.1). One more test runs the whole
matrix with no AWS_* variable at all, in a network namespace of its own
where nothing but its loopback is reachable.

sanitize_pipeline takes a source prefix that it lists itself, never a
list (docs/partitions.md), so a registered file system cannot feed it; the
incremental run it automates, a registry carried from one scan into the
next, is checked here on lists instead.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import pytest

import registered_fs as cases
from conftest import sql_literal

# moto's S3 server on 127.0.0.1, started as tests/test_remote_storage.py
# starts it (its own bucket "lake" is left alone here).
from test_remote_storage import s3_server  # noqa: F401  (a fixture)

BACKENDS = ["memory", "s3fs"]


@pytest.fixture(scope="module")
def local_root(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("registered") / "local"
    cases.write_local(root)
    return f"{root}/"


@pytest.fixture(scope="module")
def memory_fs():
    import fsspec

    fs = fsspec.filesystem("memory")
    prefix = f"/registered-{uuid.uuid4().hex}/"
    cases.write_fs(fs, prefix)
    yield fs, f"memory://{prefix}"
    fs.rm(prefix, recursive=True)


@pytest.fixture(scope="module")
def s3fs_fs(s3_server):  # noqa: F811
    import boto3

    boto3.client(
        "s3", endpoint_url=s3_server, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    ).create_bucket(Bucket="registered")
    fs = cases.s3fs_filesystem(s3_server)
    cases.write_fs(fs, "registered/parity/")
    return fs, "s3://registered/parity/"


@pytest.fixture
def no_aws_configuration(monkeypatch, tmp_path):
    """No AWS_* variable but the metadata switch, and no ~/.aws: nothing
    configures the extension's own S3 client."""
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def registered(request, con, backend):
    """(the loaded connection with the backend's file system registered, its root URI)."""
    if backend == "s3fs":
        request.getfixturevalue("no_aws_configuration")
    fs, root = request.getfixturevalue("memory_fs" if backend == "memory" else "s3fs_fs")
    con.execute("SET enable_progress_bar = false")
    con.register_filesystem(fs)
    return con, root


def file_systems(con) -> list[tuple[str, int]]:
    return con.execute("SELECT file_system, count(*) FROM sanitize_stats() GROUP BY ALL ORDER BY ALL").fetchall()


@pytest.mark.parametrize("shape", cases.SHAPES)
@pytest.mark.parametrize("name", list(cases.FORMATS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_registered_file_system_reads_like_local_disk(registered, local_root, backend, name, shape):
    con, root = registered
    problems = cases.check_case(con, name, shape, local_root, root)
    assert not problems, "\n".join(problems)
    # Every scan, local and registered, went through DuckDB's file system.
    systems = file_systems(con)
    assert [s for s, _ in systems] == ["duckdb"], systems


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_registry_carries_from_one_registered_scan_into_the_next(registered, local_root, backend):
    con, root = registered

    def run(base: str):
        con.execute(
            "SET VARIABLE reg = (SELECT schema_registry FROM "
            f"sanitize_jsonl({sql_literal(base + 'raw/a.jsonl')}) WHERE schema_registry IS NOT NULL)"
        )
        con.execute(f"SET VARIABLE day2 = [{sql_literal(base + 'raw/b.jsonl')}, {sql_literal(base + 'raw/nested/c.jsonl')}]")
        query = (
            "SELECT * EXCLUDE (ingestion_timestamp, schema_drifts) "
            f"REPLACE (replace(source_file, {sql_literal(base)}, '') AS source_file) "
            "FROM sanitize_jsonl(getvariable('day2'), registry := getvariable('reg'))"
        )
        return con.execute(query).fetchall(), con.execute(f"DESCRIBE {query}").fetchall()

    local_rows, local_columns = run(local_root)
    rows, columns = run(root)
    assert len(local_rows) == 2 and local_rows[0][-1] is not None, local_rows
    # The second run starts from the first's registry: amount stays the
    # integer column it was, so 2.5 takes a new version (read alone, b.jsonl
    # would make amount a DOUBLE), and the registry moves on.
    assert [c[0] for c in local_columns][:3] == ["amount", "amount_v2_string", "amount_v3_float"], local_columns
    assert json.loads(local_rows[0][-1])["schema_generation"] == 2
    assert (rows, columns) == (local_rows, local_columns)
    assert [s for s, _ in file_systems(con)] == ["duckdb"]


def test_a_glob_or_directory_of_a_registered_file_system_says_to_list_it_with_glob(con, memory_fs):
    fs, root = memory_fs
    con.execute("SET enable_progress_bar = false")
    con.register_filesystem(fs)
    for call in (
        f"sanitize_jsonl({sql_literal(root + 'raw/*.jsonl')})",
        f"sanitize_jsonl({sql_literal(root + 'raw/')}, input_mode := 'directory')",
        f"sanitize_parquet({sql_literal(root + 'raw/*.parquet')})",
    ):
        with pytest.raises(duckdb.Error, match=r"list it with DuckDB's glob\(\): SET VARIABLE files"):
            con.execute(f"SELECT * FROM {call}").fetchall()


def namespace_available() -> str | None:
    """Why a private network namespace cannot be made here, or None."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return "unshare or ip is missing"
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -n fails: {probe.stderr.strip()}"


def test_s3fs_serves_the_readers_with_no_aws_variable_at_all(repository, tmp_path, subprocess_env):
    why = namespace_available()
    if why:
        pytest.skip(f"needs a private network namespace: {why}")
    env = {k: v for k, v in subprocess_env.items() if not k.startswith("AWS_")}
    # A read the extension sent to object_store fails at once instead of retrying.
    env["SCHEMA_SANITIZER_ASYNC_RETRIES"] = "0"
    script = Path(__file__).with_name("registered_fs.py")
    # Its own loopback only: moto starts there, and nothing else is reachable.
    command = "ip link set lo up && exec " + " ".join(shlex.quote(str(a)) for a in (sys.executable, script, repository, tmp_path))
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", command], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["aws_variables"] == []
    assert outcome["file_systems"] == ["duckdb"], outcome["file_systems"]
    assert len(outcome["cases"]) == len(cases.FORMATS) * len(cases.SHAPES)
    problems = [p for found in outcome["cases"].values() for p in found]
    assert not problems, "\n".join(problems)
