"""The drift scenario and the two checks that tests/test_distributed_dask.py
and tests_distributed/test_spark.py share (docs/distributed.md).

Shards of JSON Lines files whose schema drifts from shard to shard: `amount`
is an integer, then a double, then a string; `code` is a string, then an
integer; a list field (`tags`) and a struct field (`device`) appear, and the
struct gains fields later. Two of
the shards have two files each.

The checks compare a distributed run with ONE single-machine run over every
file in shard order, computed here with the extension's own scans:
(a) the merged registry equals that run's registry, as parsed JSON;
(b) the rows written by the shards, read back with read_parquet, equal that
    run's rows (data columns plus source_file) as a multiset, with the same
    column names and types.

No pytest fixture and no import of tests/conftest.py here, so that the Spark
test (its own venv and conftest) can import it too.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb

# The scan's columns that are not data (shard_job.NON_DATA_COLUMNS, spelled
# out again so that the expectation does not come from the code under test).
NON_DATA = "schema_registry, schema_drifts, ingestion_timestamp"


def _shard_records(shard: int, rng: random.Random, n: int) -> list[dict]:
    records = []
    for i in range(n):
        key = shard * 1000 + i
        r: dict = {"id": key, "name": f"user-{rng.randrange(50)}"}
        if shard == 0:
            r["amount"] = rng.randrange(-500, 500)  # int64
            r["code"] = f"C{rng.randrange(100)}"  # a string first ...
        elif shard == 1:
            r["amount"] = rng.randrange(1000) + 0.25 if i % 3 else rng.randrange(1000)  # double (and ints)
        elif shard == 2:
            r["amount"] = f"{rng.randrange(100)} EUR" if i % 2 else rng.randrange(100)  # string appears
            if i % 4 == 0:
                r["tags"] = [f"t{rng.randrange(5)}" for _ in range(rng.randrange(1, 4))]  # a list appears
        elif shard == 3:
            r["amount"] = rng.random() * 100
            r["tags"] = [f"t{rng.randrange(5)}"] if i % 2 else []
            r["device"] = {"os": rng.choice(["linux", "mac", "windows"])}  # a struct appears
        elif shard == 4:
            r["amount"] = None
            r["device"] = {"os": "mac", "model": f"m{rng.randrange(4)}"}  # the struct gains a field
            r["code"] = rng.randrange(100)  # ... an integer later: code_v2_integer, so the order of the merge matters
        else:
            r["amount"] = rng.randrange(10)
            r.pop("name")
            if i % 2:
                r["device"] = {"os": "linux", "model": None, "cores": rng.randrange(1, 64)}
                r["tags"] = ["x", "y"]
        records.append(r)
    return records


def write_shards(root: Path, n_shards: int = 6, rows_per_file: int = 25) -> list[list[Path]]:
    """Writes the scenario's files under `root`; returns the shards' files, in shard order."""
    rng = random.Random(17)
    shards: list[list[Path]] = []
    for shard in range(n_shards):
        n_files = 2 if shard in (2, 5) else 1
        files = []
        for part in range(n_files):
            path = root / f"shard{shard}" / f"part{part}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            records = _shard_records(shard, rng, rows_per_file)
            path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            files.append(path)
        shards.append(files)
    return shards


def all_files(shards: list[list[Path]]) -> list[str]:
    return [str(p) for files in shards for p in files]


def single_machine_registry(con: duckdb.DuckDBPyConnection, shards: list[list[Path]]) -> str:
    """The registry of one scan over every file, in shard order."""
    rows = con.execute(
        "SELECT schema_registry FROM sanitize_jsonl(?::VARCHAR[]) WHERE schema_registry IS NOT NULL",
        [all_files(shards)],
    ).fetchall()
    assert len(rows) == 1, rows
    return rows[0][0]


def registry_difference(got: dict, want: dict, path: str = "") -> list[str]:
    """Every place where two parsed registries differ, as 'path: got != want'."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = []
        for key in sorted(set(got) | set(want)):
            out += registry_difference(got.get(key, "<missing>"), want.get(key, "<missing>"), f"{path}.{key}")
        return out
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            label = g.get("name", i) if isinstance(g, dict) else i
            out += registry_difference(g, w, f"{path}[{label}]")
        return out
    return [] if got == want else [f"{path}: {json.dumps(got)} != {json.dumps(want)}"]


def check_registry(con: duckdb.DuckDBPyConnection, merged: str, shards: list[list[Path]]) -> dict:
    """(a): the merged registry is the single-machine run's. Returns it parsed."""
    want = json.loads(single_machine_registry(con, shards))
    got = json.loads(merged)
    difference = registry_difference(got, want)
    assert got == want, "merged registry != single-machine registry:\n" + "\n".join(difference)
    # The scenario really drifted: the checks would be weak otherwise.
    names = [f["name"] for f in got["canonical_schema"]["fields"]]
    assert {"amount", "amount_v2_string", "code", "code_v2_integer", "tags", "device"} <= set(names), names
    amount = next(f for f in got["canonical_schema"]["fields"] if f["name"] == "amount")
    assert amount["type"] == {"kind": "double"}, amount
    device = next(f for f in got["canonical_schema"]["fields"] if f["name"] == "device")
    assert [f["name"] for f in device["type"]["fields"]] == ["cores", "model", "os"], device
    return got


def check_rows(con: duckdb.DuckDBPyConnection, outputs: list[dict], shards: list[list[Path]]) -> None:
    """(b): the written rows are the single-machine run's, as a multiset, with its columns and types."""
    assert [o["shard"] for o in outputs] == list(range(len(shards))), outputs
    written = [o["output"] for o in outputs]
    for o in outputs:
        assert Path(o["output"]).is_file(), o
    # Rows per shard: one per line of the shard's files.
    for o, files in zip(outputs, shards):
        lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
        assert o["rows"] == lines, (o, lines)

    con.execute(
        f"CREATE OR REPLACE TEMP TABLE expected AS SELECT * EXCLUDE ({NON_DATA}) FROM sanitize_jsonl(?::VARCHAR[])",
        [all_files(shards)],
    )
    con.execute("CREATE OR REPLACE TEMP TABLE written AS SELECT * FROM read_parquet(?::VARCHAR[])", [written])
    want_types = con.execute("SELECT column_name, column_type FROM (DESCRIBE expected)").fetchall()
    got_types = con.execute("SELECT column_name, column_type FROM (DESCRIBE written)").fetchall()
    assert got_types == want_types
    assert want_types[-1] == ("source_file", "VARCHAR"), want_types

    n_expected = con.execute("SELECT count(*) FROM expected").fetchone()[0]
    n_written = con.execute("SELECT count(*) FROM written").fetchone()[0]
    assert n_expected == sum(o["rows"] for o in outputs) == n_written
    missing = con.execute("SELECT count(*) FROM (FROM expected EXCEPT ALL FROM written)").fetchone()[0]
    extra = con.execute("SELECT count(*) FROM (FROM written EXCEPT ALL FROM expected)").fetchone()[0]
    assert (missing, extra) == (0, 0), f"{missing} expected rows not written, {extra} written rows not expected"
    # Every file's rows are in the file of its own shard.
    for o, files in zip(outputs, shards):
        sources = {r[0] for r in con.execute("SELECT DISTINCT source_file FROM read_parquet(?)", [o["output"]]).fetchall()}
        assert sources == {str(p) for p in files}, (o, sources)
