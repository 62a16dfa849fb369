"""What DuckDB's Parquet writer costs on our rows against `read_csv`'s
(a benchmark, not a test): both readers' results of the 200 MB bench CSV
stored as tables, then a `COPY` of each table to Parquet timed, and of
ours without its four columns of provenance and registry
(`source_file`, `ingestion_timestamp`, `schema_registry`,
`schema_drifts`), and of those four alone and the file's name alone.
threads = 1 unless --threads says otherwise: the writer on one thread,
as it runs for our scan with order kept (docs/benchmarks.md "What bounds
the ratios").

    .venv/bin/python bench/writer_share.py --runs 3

Prints each table's median seconds, fastest and slowest.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ratios  # noqa: E402  (the bench CSV and its generator)

PARSERS = "parse_integers := true, parse_floats := true, parse_iso_timestamps := true"
FOUR = "source_file, ingestion_timestamp, schema_registry, schema_drifts"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ext", default=os.path.join(HERE, "..", "build", "release", "schema_sanitizer.duckdb_extension"))
    args = p.parse_args()
    csv = ratios.csv_200mb().replace("'", "''")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{args.ext}'")
    con.execute(f"CREATE TABLE ours AS FROM sanitize_csv('{csv}', {PARSERS})")
    con.execute(f"CREATE TABLE theirs AS FROM read_csv('{csv}', sample_size = -1)")
    tables = {
        "ours": "ours",
        "ours without the four columns": f"(SELECT * EXCLUDE ({FOUR}) FROM ours)",
        "the four columns alone": f"(SELECT {FOUR} FROM ours)",
        "source_file alone": "(SELECT source_file FROM ours)",
        "read_csv's": "theirs",
    }
    for name, source in tables.items():
        if source.startswith("("):
            con.execute(f"CREATE TABLE \"{name}\" AS {source[1:-1]}")
    con.execute(f"SET threads = {args.threads}")
    times = {name: [] for name in tables}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w.parquet").replace("'", "''")
        for _ in range(args.runs):
            for name, source in tables.items():
                table = source if not source.startswith("(") else f'"{name}"'
                t = time.perf_counter()
                con.execute(f"COPY {table} TO '{out}'")
                times[name].append(time.perf_counter() - t)
    print(f"| table | `COPY` to Parquet, threads = {args.threads}, median (fastest–slowest) |")
    print("|---|---:|")
    for name, ts in times.items():
        print(f"| {name} | {statistics.median(ts):.3f} s ({min(ts):.3f}–{max(ts):.3f}) |")


if __name__ == "__main__":
    main()
