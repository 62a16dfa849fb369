"""The cases of tests/test_registered_filesystems.py: the same files on local
disk and on a file system registered in Python (con.register_filesystem),
read by the sanitize_* functions, and what the two reads must agree on.

Also run as a script (`python tests/registered_fs.py <repository> <dir>`)
by the test that reads through s3fs in a network namespace of its own with
no AWS_* variable at all: it starts a moto S3 server on that namespace's
127.0.0.1, uploads the files with boto3, registers s3fs (endpoint and keys
from its constructor) and prints the checks' outcome as JSON.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb


def _parquet(sql: str) -> bytes:
    with tempfile.TemporaryDirectory() as d, duckdb.connect() as c:
        path = os.path.join(d, "t.parquet")
        c.execute(f"COPY ({sql}) TO '{path}' (FORMAT parquet)")
        return Path(path).read_bytes()


# Every format in one folder (directory mode takes only its own extension),
# with a file of another extension and a subfolder directory mode never
# enters. Each format drifts between a and b, so the registries and
# versioned columns have something to agree on.
FILES: dict[str, bytes] = {
    "raw/a.jsonl": b'{"id": 1, "name": "ana", "amount": 10, "user": {"city": "Lisboa"}}\n'
    b'{"id": 2, "name": "bo", "amount": "n/a", "tags": ["x"]}\n',
    "raw/b.jsonl": b'{"id": 3, "name": "cy", "amount": 2.5, "tags": "y", "ts": "2026-01-02T03:04:05Z"}\n',
    "raw/a.csv": b"id,name,score,day\n1,ana,1.5,2026-01-02\n2,bo,2,2026-01-03\n",
    "raw/b.csv": b"id,name,score,day\n3,cy,x,2026-01-04\n",
    "raw/a.json": b'{\n  "id": 1,\n  "name": "ana",\n  "meta": {"k": [1, 2], "ok": true}\n}\n',
    "raw/b.json": b'{"id": 2, "name": "bo", "meta": {"k": "one"}, "extra": 1.25}\n',
    "raw/a.parquet": _parquet(
        "SELECT 1::BIGINT AS id, 'ana' AS name, 10 AS amount, {'city': 'Lisboa'} AS \"user\" "
        "UNION ALL SELECT 2, 'bo', 20, {'city': 'Porto'}"
    ),
    "raw/b.parquet": _parquet("SELECT 3::BIGINT AS id, 'cy' AS name, 'x' AS amount, [1, 2] AS tags"),
    "raw/notes.txt": b"not data\n",
    "raw/nested/c.jsonl": b'{"id": 99, "name": "deep"}\n',
    "raw/nested/c.csv": b"id,name,score,day\n99,deep,0,2026-01-05\n",
    "raw/nested/c.json": b'{"id": 99, "name": "deep"}\n',
}


@dataclass(frozen=True)
class Format:
    function: str
    ext: str
    input_format: str
    options: str
    # DuckDB's own reader on the same target ({p}), with the file name.
    reference: str
    # Rows of a.<ext>, of a and b.
    rows_a: int
    rows_ab: int


FORMATS: dict[str, Format] = {
    "jsonl": Format("sanitize_jsonl", "jsonl", "jsonl", "", "read_json({p}, filename = true)", 2, 3),
    "csv": Format("sanitize_csv", "csv", "csv", "", "read_csv({p}, filename = true)", 2, 3),
    # The sniffer and the typed columns read the file through the same opener.
    "csv_auto_detect": Format(
        "sanitize_csv", "csv", "csv", ", csv_auto_detect := true", "read_csv({p}, filename = true)", 2, 3
    ),
    "json": Format("sanitize_json", "json", "json", "", "read_json({p}, filename = true)", 1, 2),
    "parquet": Format(
        "sanitize_parquet", "parquet", "parquet", "", "read_parquet({p}, filename = true, union_by_name = true)", 2, 3
    ),
}

# single: one file; list: two named files; glob: a pattern; directory:
# directory mode. A registered file system's glob and directory are listed
# with DuckDB's glob() and passed as a list.
SHAPES = ("single", "list", "glob", "directory")


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def target(fmt: Format, shape: str, root: str, registered: bool) -> tuple[list[str], str, str]:
    """(statements to run first, the function's arguments, the reference reader's path)."""
    a, b, pattern = f"{root}raw/a.{fmt.ext}", f"{root}raw/b.{fmt.ext}", f"{root}raw/*.{fmt.ext}"
    if shape == "single":
        return [], lit(a), lit(a)
    if shape == "list":
        both = f"[{lit(a)}, {lit(b)}]"
        return [], both, both
    if registered:
        # As docs/remote.md and the extension's error say.
        listed = f"SET VARIABLE files = (SELECT list(file) FROM glob({lit(pattern)}))"
        return [listed], "getvariable('files')", lit(pattern)
    if shape == "glob":
        return [], lit(pattern), lit(pattern)
    return [], f"{lit(root + 'raw/')}, input_mode := 'directory'", lit(pattern)


def without_detected_at(drifts: str | None):
    if drifts is None:
        return None
    return [{k: v for k, v in d.items() if k != "detected_at"} for d in json.loads(drifts)]


def scan(con: duckdb.DuckDBPyConnection, fmt: Format, shape: str, root: str, registered: bool) -> dict:
    """What a scan gives, with `root` taken off source_file (local and
    registered paths differ only there)."""
    before, args, _ = target(fmt, shape, root, registered)
    for statement in before:
        con.execute(statement)
    call = f"{fmt.function}({args}{fmt.options})"
    query = (
        "SELECT * EXCLUDE (ingestion_timestamp, schema_registry, schema_drifts) "
        f"REPLACE (replace(source_file, {lit(root)}, '') AS source_file) FROM {call}"
    )
    rows = con.execute(query).fetchall()
    columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {query}").fetchall()]
    registry, drifts = con.execute(
        f"SELECT schema_registry, schema_drifts FROM {call} WHERE schema_registry IS NOT NULL"
    ).fetchall()[0]
    probe_call = f"sanitize_probe({args}, input_format := {lit(fmt.input_format)}{fmt.options})"
    probe = con.execute(f"SELECT * FROM {probe_call}").fetchall()
    assert len(probe) == 1, probe
    probe_registry, probe_drifts, probe_stats = probe[0]
    return {
        "rows": rows,
        "columns": columns,
        "registry": registry,
        "drifts": without_detected_at(drifts),
        "probe_registry": probe_registry,
        "probe_drifts": without_detected_at(probe_drifts),
        "probe_stats": json.loads(probe_stats),
    }


def against_duckdb(con: duckdb.DuckDBPyConnection, fmt: Format, shape: str, root: str) -> tuple[list, list]:
    """(ours, DuckDB's reader's) id, name and file on a registered path, sorted by id."""
    before, args, path = target(fmt, shape, root, registered=True)
    for statement in before:
        con.execute(statement)
    ours = con.execute(
        f"SELECT id::BIGINT, name::VARCHAR, source_file FROM {fmt.function}({args}{fmt.options}) ORDER BY 1"
    ).fetchall()
    theirs = con.execute(
        f"SELECT id::BIGINT, name::VARCHAR, filename FROM {fmt.reference.format(p=path)} ORDER BY 1"
    ).fetchall()
    return ours, theirs


def expected_rows(fmt: Format, shape: str) -> int:
    return fmt.rows_a if shape == "single" else fmt.rows_ab


def check_case(con, name: str, shape: str, local_root: str, uri_root: str) -> list[str]:
    """Every disagreement of one case, as messages (empty: all agree)."""
    fmt = FORMATS[name]
    problems = []
    local = scan(con, fmt, shape, local_root, registered=False)
    remote = scan(con, fmt, shape, uri_root, registered=True)
    if len(local["rows"]) != expected_rows(fmt, shape):
        problems.append(f"local read gave {len(local['rows'])} rows, not {expected_rows(fmt, shape)}: {local['rows']}")
    for key in local:
        if local[key] != remote[key]:
            problems.append(f"{key}: local {local[key]!r}, registered {remote[key]!r}")
    ours, theirs = against_duckdb(con, fmt, shape, uri_root)
    if not ours or ours != theirs:
        problems.append(f"against DuckDB's reader: ours {ours!r}, DuckDB's {theirs!r}")
    return [f"{name} / {shape}: {p}" for p in problems]


def write_local(root: Path) -> None:
    for rel, body in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)


def write_fs(fs, prefix: str) -> None:
    """Uploads FILES below `prefix` ("bucket/key-prefix/" for s3fs, "/dir/" for memory)."""
    for rel, body in FILES.items():
        fs.pipe(prefix + rel, body)


def s3fs_filesystem(endpoint: str):
    import s3fs

    # Everything from the constructor: no AWS_* variable is read for it.
    return s3fs.S3FileSystem(
        key="test", secret="test", client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"}
    )


def _child(repository: str, workdir: str) -> int:
    """The script: see the module's docstring. Exits 0 and prints the
    checks' outcome; a failure to set up raises."""
    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import connect_and_load  # sets AWS_EC2_METADATA_DISABLED: removed below

    for key in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[key]
    from moto.server import ThreadedMotoServer
    import boto3

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        _, port = server.get_host_and_port()
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client(
            "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
        ).create_bucket(Bucket="registered")
        fs = s3fs_filesystem(endpoint)
        write_fs(fs, "registered/parity/")
        local = Path(workdir) / "local"
        write_local(local)
        con = connect_and_load(Path(repository), Path(workdir) / "ext")
        con.execute("SET enable_progress_bar = false")
        con.register_filesystem(fs)
        aws = sorted(k for k in os.environ if k.startswith("AWS_"))
        outcome = {"aws_variables": aws, "cases": {}}
        for name in FORMATS:
            for shape in SHAPES:
                try:
                    outcome["cases"][f"{name}/{shape}"] = check_case(con, name, shape, f"{local}/", "s3://registered/parity/")
                except duckdb.Error as e:
                    outcome["cases"][f"{name}/{shape}"] = [f"{name} / {shape}: {type(e).__name__}: {e}"]
        outcome["file_systems"] = [
            r[0] for r in con.execute("SELECT DISTINCT file_system FROM sanitize_stats() ORDER BY ALL").fetchall()
        ]
        con.close()
        print(json.dumps(outcome))
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2]))
