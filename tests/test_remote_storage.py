"""Remote inputs against real emulators started on 127.0.0.1 by these tests:
moto for S3, gcp-storage-emulator for GCS, Azurite for Azure Blob Storage, and
a plain HTTP server. Each backend is configured the way a user configures it,
through the provider's standard environment variables (docs/remote.md).
"""
from __future__ import annotations

import functools
import http.server
import io
import json
import os
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO_ROOT, sql_literal

ROWS = [
    ("raw/a.jsonl", b'{"id": 1, "amount": 10}\n{"id": 2, "amount": "n/a"}\n'),
    ("raw/b.jsonl", b'{"id": 3, "amount": 2.5, "tag": "x"}\n'),
    # Not a direct child: directory mode never recurses.
    ("raw/nested/c.jsonl", b'{"id": 99}\n'),
    # Another extension: filtered out in directory mode.
    ("raw/notes.txt", b"not data\n"),
    ("csv/t.csv", b"a,b\n1,x\n2,y\n"),
    ("xml/t.xml", b"<rows><row><a>1</a></row><row><a>2</a></row></rows>"),
    ("bad/x.jsonl", b'{"id": 1}\n{oops\n'),
    # A key with characters object stores allow but URLs must encode.
    ("odd/logs~2024 v1.jsonl", b'{"id": 5}\n'),
    # A Hive-partitioned lake for sanitize_partitions: a ready day, a day
    # with only a text file, then a missing day. (The GCS emulator refuses
    # empty uploads; an empty .jsonl is covered by the local tests.)
    ("hive/year=2026/month=06/date=2026-06-29/e.jsonl", b'{"id": 1}\n{"id": 2}\n'),
    ("hive/year=2026/month=06/date=2026-06-30/notes.txt", b"x"),
    # A two-day raw lake for sanitize_pipeline: day 2 changes v's type and adds a field.
    ("pipe/raw/year=2026/month=06/date=2026-06-01/e.jsonl", b'{"id": 1, "v": 10, "user": {"name": "ana"}}\n{"id": 2, "v": 20, "tags": ["a"]}\n'),
    ("pipe/raw/year=2026/month=06/date=2026-06-02/e.jsonl", b'{"id": 3, "v": "thirty", "new": true}\n{"id": 4, "v": 40}\n{"id": 5}\n'),
]


def _parquet_with_registry() -> tuple[bytes, str]:
    """A Parquet file whose footer carries a registry (DuckDB's KV_METADATA),
    and that registry."""
    import tempfile

    import duckdb

    registry = '{"registry_version": 1, "field_name_policy": "lower_alpha", "schema_generation": 3, "canonical_schema": {"fields": []}, "variants": {}}'
    with tempfile.TemporaryDirectory() as d, duckdb.connect() as c:
        path = os.path.join(d, "r.parquet")
        literal = registry.replace("'", "''")
        # Padding rows make the file larger than the first footer guess
        # would matter for; only the tail is fetched either way.
        c.execute(
            f"COPY (SELECT i, repeat('x', 200) AS pad FROM range(2000) t(i)) TO '{path}' "
            f"(FORMAT parquet, KV_METADATA {{'schema_sanitizer.registry': '{literal}'}})"
        )
        return Path(path).read_bytes(), registry


REGISTRY_PARQUET, REGISTRY_TEXT = _parquet_with_registry()
ROWS.append(("reg/year=2026/month=06/date=2026-06-29/part_20260629.parquet", REGISTRY_PARQUET))
ROWS.append(("reg/year=2026/month=06/date=2026-06-28/part_20260628.parquet", REGISTRY_PARQUET))


# Larger than one 16 MiB download range: staged in two ranged requests.
BIG_ROWS = 400_000
BIG_JSONL = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * 24) for i in range(BIG_ROWS))
assert len(BIG_JSONL) > 16 << 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen | None = None, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the emulator exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {seconds}s")


def parquet_bytes(tmp_path: Path) -> bytes:
    import duckdb

    path = tmp_path / "t.parquet"
    with duckdb.connect() as c:
        c.execute(f"COPY (SELECT 7::INTEGER AS n, 'seven' AS s) TO {sql_literal(str(path))}")
    return path.read_bytes()


@pytest.fixture
def spool(tmp_path, monkeypatch) -> Path:
    """A private spool directory (SCHEMA_SANITIZER_SPOOL_DIR)."""
    path = tmp_path / "spool"
    path.mkdir()
    monkeypatch.setenv("SCHEMA_SANITIZER_SPOOL_DIR", str(path))
    return path


@pytest.fixture
def remote_con(con, spool, monkeypatch):
    """The loaded connection, with a private spool directory and short retries."""
    monkeypatch.setenv("SCHEMA_SANITIZER_ASYNC_RETRIES", "1")
    return con


# --- the emulators -------------------------------------------------------


def s3_environment(endpoint: str) -> dict[str, str]:
    """The provider's variables that point an S3 client at moto on `endpoint`,
    as a user would set them (docs/remote.md)."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
    }


def s3_client(endpoint: str):
    """boto3's S3 client for moto on `endpoint` (the provider's own client,
    not the extension)."""
    import boto3

    env = s3_environment(endpoint)
    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=env["AWS_REGION"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
    )


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    client = s3_client(endpoint)
    client.create_bucket(Bucket="lake")
    for key, body in ROWS:
        client.put_object(Bucket="lake", Key=key, Body=body)
    client.put_object(Bucket="lake", Key="pq/t.parquet", Body=parquet_bytes(tmp_path_factory.mktemp("pq")))
    client.put_object(Bucket="lake", Key="big/big.jsonl", Body=BIG_JSONL)
    yield endpoint
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch):
    for key, value in s3_environment(s3_server).items():
        monkeypatch.setenv(key, value)
    return "s3://lake"


@pytest.fixture(scope="module")
def gcs_server():
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    base = f"http://127.0.0.1:{port}"

    def call(method, url, data, content_type):
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type})
        with urllib.request.urlopen(request) as response:
            return response.read()

    call("POST", f"{base}/storage/v1/b?project=test", json.dumps({"name": "lake"}).encode(), "application/json")
    for key, body in ROWS:
        name = urllib.parse.quote(key, safe="")
        call("POST", f"{base}/upload/storage/v1/b/lake/o?uploadType=media&name={name}", body, "application/octet-stream")
    yield base
    server.stop()


@pytest.fixture
def gcs(gcs_server, monkeypatch):
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_server)
    return "gs://lake"


AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@pytest.fixture(scope="module")
def azure_server():
    azurite = REPO_ROOT / ".tools" / "node_modules" / ".bin" / "azurite-blob"
    if not azurite.exists():
        pytest.fail(f"{azurite} is missing: run `bash scripts/setup.sh` (needs npm)", pytrace=False)
    from azure.storage.blob import BlobServiceClient

    port = free_port()
    process = subprocess.Popen(
        [str(azurite), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence", "--silent",
         "--skipApiVersionCheck", "--loose"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        endpoint = f"http://127.0.0.1:{port}"
        service = BlobServiceClient.from_connection_string(
            f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
            f"BlobEndpoint={endpoint}/devstoreaccount1;"
        )
        container = service.create_container("lake")
        for key, body in ROWS:
            container.upload_blob(key, body)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture
def azure(azure_server, monkeypatch):
    monkeypatch.setenv("AZURE_STORAGE_USE_EMULATOR", "true")
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", azure_server)
    return "az://lake"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []
    # The Authorization header of each request (None without one).
    authorizations: list[str | None] = []

    def do_GET(self):
        QuietHandler.requests.append(self.path)
        QuietHandler.authorizations.append(self.headers.get("Authorization"))
        if self.path.startswith("/stall/"):
            # Headers and a first line, then nothing: a stalled transfer.
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            self.wfile.write(b'{"id": 1}\n')
            self.wfile.flush()
            time.sleep(20)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("www")
    for key, body in ROWS:
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(body)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def web(http_server):
    return http_server


# --- the tests -----------------------------------------------------------

BACKENDS = ["s3", "gcs", "azure"]


def rows(con, sql):
    return con.execute(sql).fetchall()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_single_remote_file_reads_like_a_local_one(backend, request, remote_con):
    base = request.getfixturevalue(backend)
    got = rows(
        remote_con,
        f"SELECT id, amount, amount_v2_string, source_file FROM sanitize_jsonl({sql_literal(base + '/raw/a.jsonl')}) ORDER BY id",
    )
    assert got == [(1, 10, None, f"{base}/raw/a.jsonl"), (2, None, "n/a", f"{base}/raw/a.jsonl")]
    # The provider's variables configure the extension's own client, and
    # sanitize_stats() says which file system served the scan.
    last = remote_con.execute("SELECT file_system FROM sanitize_stats() ORDER BY scan_id DESC LIMIT 1").fetchone()
    assert last == ("object_store",)


@pytest.mark.parametrize("backend", BACKENDS)
def test_directory_mode_lists_direct_children_in_order(backend, request, remote_con):
    base = request.getfixturevalue(backend)
    got = rows(
        remote_con,
        f"SELECT id, source_file FROM sanitize_jsonl({sql_literal(base + '/raw')}, input_mode := 'directory')",
    )
    # Sorted by key; raw/nested/c.jsonl (not a direct child) and raw/notes.txt are left out.
    assert got == [(1, f"{base}/raw/a.jsonl"), (2, f"{base}/raw/a.jsonl"), (3, f"{base}/raw/b.jsonl")]
    # The same with a trailing slash.
    again = rows(
        remote_con,
        f"SELECT id FROM sanitize_jsonl({sql_literal(base + '/raw/')}, input_mode := 'directory')",
    )
    assert [r[0] for r in again] == [1, 2, 3]


@pytest.mark.parametrize("backend", BACKENDS)
def test_remote_globs_list_below_the_literal_prefix(backend, request, remote_con):
    base = request.getfixturevalue(backend)
    got = rows(remote_con, f"SELECT id, source_file FROM sanitize_jsonl({sql_literal(base + '/raw/*.jsonl')}) ORDER BY id")
    # One segment: raw/nested/c.jsonl is deeper, raw/notes.txt has another extension.
    assert got == [(1, f"{base}/raw/a.jsonl"), (2, f"{base}/raw/a.jsonl"), (3, f"{base}/raw/b.jsonl")]
    deep = rows(remote_con, f"SELECT DISTINCT source_file FROM sanitize_jsonl({sql_literal(base + '/raw/**/*.jsonl')}) ORDER BY 1")
    assert [r[0] for r in deep] == [f"{base}/raw/a.jsonl", f"{base}/raw/b.jsonl", f"{base}/raw/nested/c.jsonl"]
    # A list mixing a remote glob and a remote file reads each file once.
    listed = rows(
        remote_con,
        f"SELECT count(*) FROM sanitize_jsonl([{sql_literal(base + '/raw/b.jsonl')}, {sql_literal(base + '/raw/*.jsonl')}])",
    )
    assert listed == [(3,)]  # b.jsonl's row once, a.jsonl's two
    import duckdb

    with pytest.raises(duckdb.Error, match="no file matches"):
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(base + '/raw/*.nothing')})").fetchall()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_missing_object_is_a_clear_error(backend, request, remote_con):
    import duckdb

    base = request.getfixturevalue(backend)
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(base + '/raw/missing.jsonl')})")
    assert f'sanitize_jsonl: no such file "{base}/raw/missing.jsonl"' in str(e.value)


def test_every_format_reads_from_remote_storage(s3, gcs, azure, remote_con):
    assert rows(remote_con, f"SELECT a, b FROM sanitize_csv({sql_literal(gcs + '/csv/t.csv')}, parse_integers := true)") == [
        (1, "x"),
        (2, "y"),
    ]
    assert rows(
        remote_con, f"SELECT a FROM sanitize_xml({sql_literal(azure + '/xml/t.xml')}, xml_row_tag := 'row')"
    ) == [("1",), ("2",)]
    assert rows(remote_con, f"SELECT n, s, typeof(n) FROM sanitize_parquet({sql_literal(s3 + '/pq/t.parquet')})") == [
        (7, "seven", "INTEGER")
    ]


def test_the_extension_is_checked_before_anything_is_downloaded(s3, remote_con, spool):
    import duckdb

    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(s3 + '/csv/t.csv')})")
    assert "input_format 'jsonl' requires .jsonl, not .csv" in str(e.value)
    assert list(spool.iterdir()) == []


def test_the_spool_is_removed_after_the_query(s3, remote_con, spool):
    result = remote_con.execute(f"SELECT count(*) FROM sanitize_jsonl({sql_literal(s3 + '/raw/a.jsonl')})")
    # While the query's result is open, the staged copy exists.
    staged = [p for d in spool.iterdir() for p in d.iterdir()]
    assert [p.name for p in staged] == ["000000_a.jsonl"]
    assert result.fetchall() == [(2,)]
    remote_con.execute("SELECT 1").fetchall()
    assert list(spool.iterdir()) == []


def test_http_single_file_and_refused_directory(web, remote_con):
    import duckdb

    QuietHandler.requests.clear()
    got = rows(remote_con, f"SELECT id, source_file FROM sanitize_jsonl({sql_literal(web + '/raw/b.jsonl')})")
    assert got == [(3, f"{web}/raw/b.jsonl")]
    assert "/raw/b.jsonl" in QuietHandler.requests
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(web + '/raw')}, input_mode := 'directory')")
    assert "input_mode 'directory' is not supported for http(s):// paths" in str(e.value)
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(web + '/raw/none.jsonl')})")
    assert f'no such file "{web}/raw/none.jsonl" (HTTP)' in str(e.value)


def test_unreachable_storage_fails_within_the_timeout(remote_con, monkeypatch):
    import duckdb

    monkeypatch.setenv("SCHEMA_SANITIZER_ASYNC_RETRIES", "1")
    monkeypatch.setenv("SCHEMA_SANITIZER_ASYNC_TIMEOUT", "5")
    port = free_port()  # nothing listens there
    started = time.monotonic()
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl('http://127.0.0.1:{port}/x.jsonl')")
    assert f'cannot download "http://127.0.0.1:{port}/x.jsonl" (HTTP)' in str(e.value)
    assert time.monotonic() - started < 60


def test_remote_paths_obey_enable_external_access(s3, remote_con):
    import duckdb

    remote_con.execute("SET enable_external_access = false")
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(s3 + '/raw/a.jsonl')})")
    assert "enable_external_access" in str(e.value)


def test_the_shell_reads_s3_with_the_provider_environment(s3_server, duckdb_cli, repository, extension_dir, subprocess_env):
    from test_shell import run_cli, setup_sql

    env = dict(subprocess_env)
    env.update(s3_environment(s3_server))
    sql = setup_sql(extension_dir, repository) + (
        "SELECT id, source_file FROM sanitize_jsonl('s3://lake/raw', input_mode := 'directory') ORDER BY id;"
    )
    proc = run_cli(duckdb_cli, env, "-unsigned", "-csv", "-c", sql)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "id,source_file",
        "1,s3://lake/raw/a.jsonl",
        "2,s3://lake/raw/a.jsonl",
        "3,s3://lake/raw/b.jsonl",
    ]
    # Without the endpoint the same query goes to AWS and fails, naming the URI (no network here).
    del env["AWS_ENDPOINT_URL"]
    env["SCHEMA_SANITIZER_ASYNC_RETRIES"] = "0"
    env["SCHEMA_SANITIZER_ASYNC_TIMEOUT"] = "5"
    proc = run_cli(duckdb_cli, env, "-unsigned", "-csv", "-c", sql)
    assert proc.returncode != 0
    assert 'sanitize_jsonl: cannot list "s3://lake/raw" (S3)' in proc.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_and_skips_name_the_remote_uri(backend, request, remote_con):
    import duckdb

    base = request.getfixturevalue(backend)
    uri = base + "/bad/x.jsonl"
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(uri)}, on_error := 'stop')")
    assert f'sanitize_jsonl: bad record in file "{uri}" at line 2' in str(e.value)
    assert rows(remote_con, f"SELECT id FROM sanitize_jsonl({sql_literal(uri)}, on_error := 'skip_row')") == [(1,)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_keys_are_used_as_written(backend, request, remote_con):
    base = request.getfixturevalue(backend)
    got = rows(remote_con, f"SELECT id, source_file FROM sanitize_jsonl({sql_literal(base + '/odd')}, input_mode := 'directory')")
    assert got == [(5, f"{base}/odd/logs~2024 v1.jsonl")]
    single = rows(remote_con, f"SELECT id FROM sanitize_jsonl({sql_literal(base + '/odd/logs~2024 v1.jsonl')})")
    assert single == [(5,)]


def test_a_url_query_is_sent_but_never_shown(web, remote_con):
    QuietHandler.requests.clear()
    url = web + "/raw/b.jsonl?X-Amz-Signature=secret&X-Amz-Expires=60"
    got = rows(remote_con, f"SELECT id, source_file, schema_registry FROM sanitize_jsonl({sql_literal(url)})")
    assert [(r[0], r[1]) for r in got] == [(3, f"{web}/raw/b.jsonl")]
    assert "/raw/b.jsonl?X-Amz-Signature=secret&X-Amz-Expires=60" in QuietHandler.requests
    assert "secret" not in got[0][2]


def planted_secrets() -> tuple[str, str]:
    """A password and a signature no output may ever show."""
    import secrets

    return "pw-" + secrets.token_hex(12), "sig" + secrets.token_hex(16)


def assert_no_secret(where: str, value, planted: tuple[str, ...]) -> None:
    text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
    for secret in planted:
        assert secret not in text, f"{where} shows a planted secret: {text[:2000]}"


def extension_message(error: Exception) -> str:
    """The extension's message, without the statement DuckDB quotes after it
    ("LINE 1: SELECT ..."): that is the user's own text, not ours."""
    return str(error).split("\n\nLINE ")[0]


def test_secrets_in_a_url_never_reach_any_output(web, remote_con, tmp_path):
    """A password in a URL's userinfo and a signature in its query are used
    for the request and shown nowhere: not in the rows (source_file, the
    registry, the drifts), sanitize_stats(), sanitize_rejects(), a probe's
    registry and counters, a Parquet file COPY writes, or any error."""
    import duckdb

    password, signature = planted_secrets()
    planted = (password, signature)
    host = web.removeprefix("http://")
    secret_url = lambda key: f"http://reader:{password}@{host}/{key}?X-Amz-Signature={signature}&X-Amz-Expires=60"  # noqa: E731
    url = secret_url("bad/x.jsonl")
    QuietHandler.requests.clear()
    QuietHandler.authorizations.clear()
    got = rows(remote_con, f"SELECT * FROM sanitize_jsonl({sql_literal(url)}, on_error := 'skip_row')")
    assert [r[0] for r in got] == [1]
    assert got[0][1] == f"{web}/bad/x.jsonl"  # source_file
    assert_no_secret("the rows", got, planted)
    # The request had the signature and the password (as basic authentication).
    import base64

    assert f"/bad/x.jsonl?X-Amz-Signature={signature}&X-Amz-Expires=60" in QuietHandler.requests
    basic = "Basic " + base64.b64encode(f"reader:{password}".encode()).decode()
    assert basic in QuietHandler.authorizations

    # Drift events and the registry, on a file whose types drift.
    drifted = rows(remote_con, f"SELECT source_file, schema_registry, schema_drifts FROM sanitize_jsonl({sql_literal(secret_url('raw/a.jsonl'))})")
    assert drifted[0][1] and drifted[0][2] and drifted[0][2] != "[]"
    assert_no_secret("source_file, schema_registry and schema_drifts", drifted, planted)
    assert_no_secret("a probe", rows(remote_con, f"SELECT * FROM sanitize_probe({sql_literal(url)}, input_format := 'jsonl', on_error := 'skip_row')"), planted)
    assert_no_secret("a registry", rows(remote_con, f"SELECT sanitize_registry({sql_literal(drifted[0][1])})"), planted)

    stats = rows(remote_con, "SELECT * FROM sanitize_stats(all_connections := true)")
    assert any(r[2] == f"{web}/bad/x.jsonl" for r in stats), stats
    assert_no_secret("sanitize_stats()", stats, planted)
    rejects = rows(remote_con, "SELECT * FROM sanitize_rejects(all_connections := true)")
    assert any(r[2] == f"{web}/bad/x.jsonl" for r in rejects), rejects
    assert_no_secret("sanitize_rejects()", rejects, planted)

    # A Parquet file written by COPY: its bytes, not just its rows.
    out = tmp_path / "copy.parquet"
    remote_con.execute(f"COPY (FROM sanitize_jsonl({sql_literal(secret_url('raw/a.jsonl'))})) TO {sql_literal(str(out))}")
    assert_no_secret("a Parquet file COPY wrote", out.read_bytes(), planted)
    assert rows(remote_con, f"SELECT DISTINCT source_file FROM read_parquet({sql_literal(str(out))})") == [(f"{web}/raw/a.jsonl",)]

    # Errors: a bad record under stop, a missing object, a refused listing,
    # an unreachable host, an unknown scheme.
    port = free_port()  # nothing listens there
    failing = [
        f"SELECT * FROM sanitize_jsonl({sql_literal(url)}, on_error := 'stop')",
        f"SELECT * FROM sanitize_jsonl({sql_literal(secret_url('raw/missing.jsonl'))})",
        f"SELECT * FROM sanitize_jsonl({sql_literal(secret_url('raw'))}, input_mode := 'directory')",
        f"SELECT * FROM sanitize_jsonl({sql_literal(f'http://reader:{password}@127.0.0.1:{port}/x.jsonl?sig={signature}')})",
        f"SELECT * FROM sanitize_jsonl({sql_literal(f'ftp://reader:{password}@{host}/x.jsonl')})",
        f"SELECT * FROM sanitize_partitions({sql_literal(secret_url('hive/'))}, start_date := '2026-06-29', end_date := '2026-06-29', input_format := 'jsonl')",
        f"SELECT * FROM sanitize_pipeline('{tmp_path}', {sql_literal(secret_url('silver'))}, start_date := '2026-06-29', end_date := '2026-06-29', input_format := 'jsonl')",
    ]
    for sql in failing:
        with pytest.raises(duckdb.Error) as e:
            remote_con.execute(sql).fetchall()
        message = extension_message(e.value)
        assert any(f in message for f in ("sanitize_jsonl:", "sanitize_partitions:", "sanitize_pipeline:")), message
        assert_no_secret(f"the error of {sql}", message, planted)
    stats = rows(remote_con, "SELECT * FROM sanitize_stats(all_connections := true)")
    assert_no_secret("sanitize_stats() after the failures", stats, planted)


def test_secrets_in_an_object_store_uri_never_reach_a_pipeline_output(s3, s3_server, remote_con, tmp_path):
    """sanitize_partitions and sanitize_pipeline over an s3:// prefix with a
    password in its userinfo (which object stores do not use): the plan,
    the report, the objects and files written, their footers, the latest
    registry and sanitize_stats() never show it."""
    password, _ = planted_secrets()
    planted = (password,)
    with_secret = lambda path: f"s3://reader:{password}@lake/{path}"  # noqa: E731
    plan = rows(
        remote_con,
        f"""SELECT * FROM sanitize_partitions({sql_literal(with_secret('pipe/raw/'))}, start_date := '2026-06-01',
            end_date := '2026-06-02', input_format := 'jsonl', output_prefix := {sql_literal(with_secret('pipe/secret-silver'))})""",
    )
    assert [r[5] for r in plan] == ["ready", "ready"]
    assert plan[0][1] == "s3://lake/pipe/raw/year=2026/month=06/date=2026-06-01/"
    assert_no_secret("sanitize_partitions()", plan, planted)

    for output in [with_secret("pipe/secret-silver"), str(tmp_path / "silver")]:
        report = rows(
            remote_con,
            f"""SELECT * FROM sanitize_pipeline({sql_literal(with_secret('pipe/raw'))}, {sql_literal(output)},
                start_date := '2026-06-01', end_date := '2026-06-02', input_format := 'jsonl')""",
        )
        assert [r[2] for r in report] == ["written", "written"], report
        assert_no_secret("the pipeline's report", report, planted)
    client = s3_client(s3_server)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="lake", Prefix="pipe/secret-silver/")["Contents"]]
    assert len(keys) == 2, keys
    for key in keys:
        assert_no_secret(f"the object {key}", client.get_object(Bucket="lake", Key=key)["Body"].read(), planted)
    local = sorted((tmp_path / "silver").rglob("*.parquet"))
    assert len(local) == 2
    for path in local:
        assert_no_secret(f"the file {path}", path.read_bytes(), planted)
    got = rows(remote_con, f"SELECT DISTINCT source_file FROM read_parquet({sql_literal(str(tmp_path / 'silver') + '/**/*.parquet')}) ORDER BY 1")
    assert got == [(f"s3://lake/pipe/raw/year=2026/month=06/date=2026-06-0{d}/e.jsonl",) for d in (1, 2)]
    latest = rows(remote_con, f"SELECT * FROM sanitize_latest_registry({sql_literal(with_secret('pipe/secret-silver'))})")
    assert latest and latest[0][1].startswith("s3://lake/pipe/secret-silver/")
    assert_no_secret("sanitize_latest_registry()", latest, planted)
    assert_no_secret("sanitize_stats()", rows(remote_con, "SELECT * FROM sanitize_stats(all_connections := true)"), planted)


def test_an_object_larger_than_one_range_is_staged_whole(s3, remote_con):
    got = rows(remote_con, f"SELECT count(*), sum(n), max(n) FROM sanitize_jsonl({sql_literal(s3 + '/big/big.jsonl')})")
    assert got == [(BIG_ROWS, BIG_ROWS * (BIG_ROWS - 1) // 2, BIG_ROWS - 1)]


def test_a_stalled_http_transfer_fails_within_the_timeout(web, remote_con, monkeypatch):
    import duckdb

    monkeypatch.setenv("SCHEMA_SANITIZER_ASYNC_TIMEOUT", "2")
    started = time.monotonic()
    with pytest.raises(duckdb.Error) as e:
        remote_con.execute(f"SELECT * FROM sanitize_jsonl({sql_literal(web + '/stall/x.jsonl')})")
    assert f'cannot download "{web}/stall/x.jsonl" (HTTP)' in str(e.value)
    assert time.monotonic() - started < 15


def test_s3_without_credentials_fails_at_once_naming_them(con, monkeypatch):
    """With the instance metadata endpoint disabled and no credentials in the
    environment, the scan fails before any request, and says what is missing."""
    import time

    import duckdb

    for key in [k for k in os.environ if k.startswith("AWS_") and k != "AWS_EC2_METADATA_DISABLED"]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    start = time.monotonic()
    with pytest.raises(duckdb.Error) as err:
        con.execute("SELECT * FROM sanitize_jsonl('s3://lake/a.jsonl')").fetchall()
    elapsed = time.monotonic() - start
    message = str(err.value)
    assert "no AWS credentials" in message and "AWS_ACCESS_KEY_ID" in message, message
    assert "AWS_EC2_METADATA_DISABLED" in message, message
    assert elapsed < 5, f"took {elapsed:.1f}s: something waited on the network"


def test_gcs_without_credentials_fails_at_once_naming_them(con, monkeypatch, tmp_path):
    """With the GCE metadata server switched off (NO_GCE_CHECK=true, as
    Google's auth libraries read it) and no credentials, a gs:// scan fails
    before any request, and says what is missing."""
    import duckdb

    for key in [k for k in os.environ if k.startswith("GOOGLE_")]:
        monkeypatch.delenv(key)
    for key in ["STORAGE_EMULATOR_HOST", "SERVICE_ACCOUNT", "METADATA_SERVER_DETECTION"]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no gcloud credentials file
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    start = time.monotonic()
    with pytest.raises(duckdb.Error) as err:
        con.execute("SELECT * FROM sanitize_jsonl('gs://lake/a.jsonl')").fetchall()
    elapsed = time.monotonic() - start
    message = str(err.value)
    assert "no GCS credentials: NO_GCE_CHECK=true is set" in message, message
    assert "GOOGLE_APPLICATION_CREDENTIALS" in message and "GOOGLE_SERVICE_ACCOUNT" in message, message
    assert elapsed < 5, f"took {elapsed:.1f}s: something waited on the network"


def test_azure_without_credentials_fails_at_once_naming_them(con, monkeypatch):
    """With managed identity left out (AZURE_TOKEN_CREDENTIALS=dev, as Azure's
    identity libraries read it) and no credentials, an az:// scan fails
    before any request, and says what is missing."""
    import duckdb

    for key in [k for k in os.environ if k.startswith("AZURE") or k in ("MSI_ENDPOINT", "IDENTITY_ENDPOINT")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "dev")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "acct")
    start = time.monotonic()
    with pytest.raises(duckdb.Error) as err:
        con.execute("SELECT * FROM sanitize_jsonl('az://lake/a.jsonl')").fetchall()
    elapsed = time.monotonic() - start
    message = str(err.value)
    assert "no Azure credentials: AZURE_TOKEN_CREDENTIALS=dev leaves managed identity out" in message, message
    assert "AZURE_STORAGE_ACCOUNT_KEY" in message and "AZURE_CLIENT_SECRET" in message, message
    assert elapsed < 5, f"took {elapsed:.1f}s: something waited on the network"


@pytest.mark.parametrize("backend", BACKENDS)
def test_partition_discovery_lists_remote_prefixes(backend, request, remote_con, spool):
    """sanitize_partitions: each planned partition's prefix is
    listed, never downloaded; ready, empty and missing as for local paths."""
    base = request.getfixturevalue(backend)
    got = rows(
        remote_con,
        f"""SELECT partition_key, source_path, files, bytes, status FROM sanitize_partitions({sql_literal(base + '/hive/')},
            start_date := '2026-06-29', end_date := '2026-07-01', input_format := 'jsonl')""",
    )
    day = lambda d: f"year=2026/month={d[:2]}/date=2026-{d}"
    assert got == [
        (day("06-29"), f"{base}/hive/{day('06-29')}/", 1, 20, "ready"),
        (day("06-30"), f"{base}/hive/{day('06-30')}/", 0, 0, "empty"),
        (day("07-01"), f"{base}/hive/{day('07-01')}/", 0, 0, "missing"),
    ]
    assert not any(spool.iterdir()), "discovery downloaded something"


def test_registry_from_a_remote_parquet_footer(s3, remote_con):
    """sanitize_registry_from_parquet on s3://: a footer
    without the key gives NULL; a missing object is an error naming it."""
    assert rows(remote_con, f"SELECT sanitize_registry_from_parquet({sql_literal(s3 + '/pq/t.parquet')}) IS NULL") == [
        (True,)
    ]
    with pytest.raises(Exception, match="no such file"):
        remote_con.execute(f"SELECT sanitize_registry_from_parquet({sql_literal(s3 + '/pq/none.parquet')})")


@pytest.mark.parametrize("backend", BACKENDS)
def test_registries_are_read_from_remote_footers_only(backend, request, remote_con, spool):
    """sanitize_registry_from_parquet and sanitize_latest_registry on every
    object store: the footer comes by range requests, the
    newest partition by one listing; nothing is staged."""
    base = request.getfixturevalue(backend)
    newest = "reg/year=2026/month=06/date=2026-06-29/part_20260629.parquet"
    canonical = rows(remote_con, f"SELECT sanitize_registry({sql_literal(REGISTRY_TEXT)})")[0][0]
    got = rows(remote_con, f"SELECT sanitize_registry_from_parquet({sql_literal(base + '/' + newest)})")
    assert got == [(canonical,)]
    got = rows(remote_con, f"SELECT partition_key, path, registry FROM sanitize_latest_registry({sql_literal(base + '/reg/')})")
    assert got == [("year=2026/month=06/date=2026-06-29", f"{base}/{newest}", canonical)]
    assert not any(spool.iterdir()), "a footer read staged a file"


PIPE_DAYS = [("2026-06-01", [1, 2]), ("2026-06-02", [3, 4, 5])]


def download(backend, request):
    """fetch(key) -> the object's bytes, by the provider's own client (not the extension)."""
    if backend == "s3":
        client = s3_client(request.getfixturevalue("s3_server"))
        return lambda key: client.get_object(Bucket="lake", Key=key)["Body"].read()
    if backend == "gcs":
        host = request.getfixturevalue("gcs_server")

        def fetch(key):
            url = f"{host}/download/storage/v1/b/lake/o/{urllib.parse.quote(key, safe='')}?alt=media"
            with urllib.request.urlopen(url) as response:
                return response.read()

        return fetch
    from azure.storage.blob import BlobServiceClient

    endpoint = request.getfixturevalue("azure_server")
    service = BlobServiceClient.from_connection_string(
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={endpoint}/devstoreaccount1;"
    )
    return lambda key: service.get_container_client("lake").download_blob(key).readall()


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipeline_round_trip_through_the_object_store(backend, request, remote_con, spool, tmp_path):
    """sanitize_pipeline from and to an object store: each
    partition is read from the raw prefix, staged in the spool, uploaded to
    its silver key; the footers, the latest registry and the listing agree
    with the report; the spool is empty afterwards; a second run with
    overwrite := false finds the objects there and carries their registry."""
    import pyarrow.parquet as pq

    base = request.getfixturevalue(backend)
    raw, silver = f"{base}/pipe/raw", f"{base}/pipe/silver"
    call = lambda source, output, extra="": (  # noqa: E731
        f"SELECT partition_key, status, pass, rows_written, output_path, output_bytes, registry, error "
        f"FROM sanitize_pipeline({sql_literal(source)}, {sql_literal(output)}, start_date := '2026-06-01', "
        f"end_date := '2026-06-02', input_format := 'jsonl'{extra})"
    )
    report = rows(remote_con, call(raw, silver))
    keys = [f"year=2026/month=06/date={day}" for day, _ in PIPE_DAYS]
    paths = [f"{silver}/{key}/part_{day.replace('-', '')}.parquet" for key, (day, _) in zip(keys, PIPE_DAYS)]
    assert [r[:5] for r in report] == [
        (keys[0], "written", "additive", 2, paths[0]),
        (keys[1], "written", "strict_then_additive", 3, paths[1]),
    ], report
    assert all(r[7] is None for r in report)
    remote_con.execute("SELECT 1").fetchall()
    assert list(spool.rglob("*")) == [], "the run left staged files in the spool"

    # The objects, as the store lists them: one per partition, of the reported size.
    listed = rows(
        remote_con,
        f"""SELECT partition_key, files, bytes, status FROM sanitize_partitions({sql_literal(silver)},
            start_date := '2026-06-01', end_date := '2026-06-02', input_format := 'parquet')""",
    )
    assert listed == [(keys[0], 1, report[0][5], "ready"), (keys[1], 1, report[1][5], "ready")]

    # The footers carry the registries the report gave; the newest is day 2's.
    for (_, _, _, _, path, _, registry, _) in report:
        assert rows(remote_con, f"SELECT sanitize_registry_from_parquet({sql_literal(path)})") == [(registry,)]
    latest = rows(remote_con, f"SELECT partition_key, path, registry FROM sanitize_latest_registry({sql_literal(silver)})")
    assert latest == [(keys[1], paths[1], report[1][6])]
    day2 = json.loads(report[1][6])
    assert {f["name"] for f in day2["canonical_schema"]["fields"]} >= {"id", "v", "v_v2_string", "new", "user", "tags"}

    # The objects, downloaded by the provider's own client, are the Parquet
    # files a local run over the same raw files writes (but for the paths and
    # the run's time), with the reported size and footer. (sanitize_parquet
    # cannot read them back: it refuses a source whose top-level fields
    # include the reserved source_file, ingestion_timestamp, ... columns.)
    local_raw, local_silver = tmp_path / "raw", tmp_path / "silver"
    for key, body in ROWS:
        if key.startswith("pipe/raw/"):
            (local_raw / key[len("pipe/raw/"):]).parent.mkdir(parents=True, exist_ok=True)
            (local_raw / key[len("pipe/raw/"):]).write_bytes(body)
    local = rows(remote_con, call(str(local_raw), str(local_silver)))
    assert [r[:4] for r in local] == [r[:4] for r in report]
    assert [r[6] for r in local] == [r[6] for r in report]
    fetch = download(backend, request)
    for (key, _, _, _, path, size, registry, _), local_row, (day, ids) in zip(report, local, PIPE_DAYS):
        body = fetch(path[len(base) + 1:])
        assert len(body) == size
        copy = tmp_path / "downloaded" / key / "part.parquet"
        copy.parent.mkdir(parents=True)
        copy.write_bytes(body)
        assert pq.read_metadata(str(copy)).metadata[b"schema_sanitizer.registry"].decode() == registry
        got = rows(remote_con, f"SELECT id, source_file FROM read_parquet({sql_literal(str(copy))}, hive_partitioning = false) ORDER BY id")
        assert got == [(i, f"{raw}/year=2026/month=06/date={day}/e.jsonl") for i in ids]
        describe = lambda f: rows(remote_con, f"DESCRIBE SELECT * FROM read_parquet({sql_literal(str(f))}, hive_partitioning = false)")  # noqa: E731
        assert describe(copy) == describe(local_row[4])
        keep = lambda f: (  # noqa: E731
            "SELECT * EXCLUDE (source_file, ingestion_timestamp, schema_drifts) "
            f"FROM read_parquet({sql_literal(str(f))}, hive_partitioning = false)"
        )
        assert rows(remote_con, f"{keep(copy)} EXCEPT ALL {keep(local_row[4])}") == []
        assert rows(remote_con, f"{keep(local_row[4])} EXCEPT ALL {keep(copy)}") == []
    got = rows(
        remote_con,
        f"SELECT v, v_v2_string, new FROM read_parquet({sql_literal(str(tmp_path / 'downloaded' / keys[1] / 'part.parquet'))}) ORDER BY id",
    )
    assert got == [(None, "thirty", True), (40, None, None), (None, None, None)]
    remote_con.execute("SELECT 1").fetchall()
    assert list(spool.rglob("*")) == []

    # Resuming: the objects exist, nothing is written, their registry is carried.
    again = rows(remote_con, call(raw, silver, ", overwrite := false"))
    assert [(r[0], r[1], r[3], r[6]) for r in again] == [
        (keys[0], "skipped_exists", 0, report[0][6]),
        (keys[1], "skipped_exists", 0, report[1][6]),
    ]
    remote_con.execute("SELECT 1").fetchall()
    assert list(spool.rglob("*")) == []
