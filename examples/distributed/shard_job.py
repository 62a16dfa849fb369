"""The distributed job, written once: plain functions that a Dask or Spark
task calls (dask_sanitize.py and spark_sanitize.py are thin adapters around
them). docs/distributed.md describes the three stages:

1. probe_shard: the registry of one shard (its files, in order), from a
   fresh probe. Every row is read.
2. merge_registries: on the driver, sanitize_registry_merge over the shards'
   registries IN SHARD ORDER (never the order the tasks finished in): that
   is the registry one run over every file in that order would write.
3. materialize_shard: the shard's rows under the merged registry in strict
   mode, written as Parquet. Every shard then has the same columns and types.

Only `duckdb` is needed on a worker: no Dask or Spark import here.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb

EXTENSION_NAME = "schema_sanitizer"

# Columns of a scan that are not data: the registry and the drifts (the run's
# metadata, on the first row of each scan only) and ingestion_timestamp (one
# instant per scan, so it would differ between shards and from a single run).
# The written rows are the data columns plus source_file, which says where
# each row came from.
NON_DATA_COLUMNS = ("schema_registry", "schema_drifts", "ingestion_timestamp")


def sql_literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def connect(extension: str | os.PathLike, threads: int = 1, memory_limit: str = "1GB") -> duckdb.DuckDBPyConnection:
    """A new in-memory connection with the extension loaded.

    `extension` is a local extension repository (a directory laid out as
    build/repository is: INSTALL ... FROM it) or the `.duckdb_extension` file
    itself (LOAD it). `threads` and `memory_limit` are the task's share of its
    worker: a DuckDB connection otherwise takes every core and 80% of the RAM,
    and several tasks run side by side on one machine.

    Opened inside the task, never shipped to it: a DuckDB connection cannot be
    pickled.
    """
    extension = Path(extension)
    if not extension.exists():
        raise FileNotFoundError(f"extension not found: {extension} (a repository directory or a .duckdb_extension file)")
    con = duckdb.connect(
        config={
            # A locally built extension is unsigned.
            "allow_unsigned_extensions": "true",
            "threads": int(threads),
            "memory_limit": str(memory_limit),
        }
    )
    # A temporary extension_directory per connection: INSTALL writes there,
    # never into ~/.duckdb, and tasks running side by side in one process
    # never install into the same place. It is removed once the extension is
    # loaded (the loaded library stays mapped), so a worker that is killed
    # rather than shut down leaves nothing behind.
    with tempfile.TemporaryDirectory(prefix=f"{EXTENSION_NAME}-ext-") as extension_dir:
        try:
            con.execute(f"SET extension_directory = {sql_literal(extension_dir)}")
            if extension.is_dir():
                con.execute(f"INSTALL {EXTENSION_NAME} FROM {sql_literal(str(extension.resolve()))}")
                con.execute(f"LOAD {EXTENSION_NAME}")
            else:
                con.execute(f"LOAD {sql_literal(str(extension.resolve()))}")
        except BaseException:
            con.close()
            raise
    return con


def probe_shard(
    extension: str | os.PathLike,
    shard: int,
    paths: list[str],
    registry: str | None = None,
    threads: int = 1,
    memory_limit: str = "1GB",
) -> str:
    """The registry JSON of shard `shard` (`paths`, read in this order).

    `registry` None is a fresh probe; a registry JSON starts from it. The
    probe reads every row, and gives a registry even for a shard without
    rows (sanitize_probe always returns its one row).
    """
    con = connect(extension, threads, memory_limit)
    try:
        row = con.execute(
            "SELECT schema_registry FROM sanitize_probe(?::VARCHAR[], input_format := 'jsonl', registry := ?)",
            [[str(p) for p in paths], registry],
        ).fetchone()
    finally:
        con.close()
    if row is None or row[0] is None:
        raise RuntimeError(f"shard {shard}: the probe returned no registry")
    return row[0]


def materialize_shard(
    extension: str | os.PathLike,
    shard: int,
    paths: list[str],
    registry: str,
    output: str | os.PathLike,
    threads: int = 1,
    memory_limit: str = "1GB",
) -> dict:
    """Write shard `shard`'s rows under `registry` (strict) to the Parquet file `output`.

    Strict mode: the columns and types are exactly the registry's, so every
    shard's file has the same schema. Returns {"shard", "rows", "output",
    "pid"} (pid: the process that wrote it).

    `output` is a local path (or a shared file system mounted on every
    worker). Writing to s3:// with COPY needs DuckDB's httpfs extension,
    which is installed over the network; docs/distributed.md says what to do
    instead. The inputs may be s3:// (and gs://, az://): the extension reads
    those itself, with the credentials of the worker's own environment.
    """
    output = str(output)
    if "://" in output:
        raise ValueError(
            f"shard {shard}: output {output!r} is not a local path; write locally (or to a shared mount), "
            "or use sanitize_pipeline / httpfs for object storage (docs/distributed.md)"
        )
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    # Write under a temporary name and rename: a task that the scheduler
    # retries (a lost worker) never leaves a partial file at the final path.
    partial = f"{output}.{os.getpid()}.partial"
    con = connect(extension, threads, memory_limit)
    try:
        excluded = ", ".join(NON_DATA_COLUMNS)
        rows = con.execute(
            f"COPY (SELECT * EXCLUDE ({excluded}) "
            "FROM sanitize_jsonl(?::VARCHAR[], registry := ?, schema_mode := 'strict')) "
            f"TO {sql_literal(partial)} (FORMAT parquet)",
            [[str(p) for p in paths], registry],
        ).fetchone()[0]
        os.replace(partial, output)
    finally:
        con.close()
        if os.path.exists(partial):
            os.remove(partial)
    return {"shard": shard, "rows": int(rows), "output": output, "pid": os.getpid()}


def merge_registries(extension: str | os.PathLike, registries: list[str | None]) -> str:
    """sanitize_registry_merge over `registries`, which must be IN SHARD ORDER.

    The merge folds in list order: the order decides which version is v1 and
    how later ones are named, so the caller passes the shards' registries in
    the order of the shards, never in the order their tasks finished.
    """
    con = connect(extension)
    try:
        merged = con.execute("SELECT sanitize_registry_merge(?::VARCHAR[])", [list(registries)]).fetchone()[0]
    finally:
        con.close()
    if merged is None:
        raise ValueError("no registry to merge (an empty list, or only NULLs)")
    return merged
