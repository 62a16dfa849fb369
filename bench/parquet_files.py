"""`COPY ... TO` Parquet of given Parquet files, ours against
`read_parquet` (a benchmark, not a test): each statement on a fresh
connection, the two sides interleaved, medians of --runs, threads = 2,
insertion order kept. For files nobody here wrote, such as
apache/parquet-testing's larger ones:

    .venv/bin/python bench/parquet_files.py --runs 7 DIR/data/alltypes_tiny_pages_plain.parquet ...

A file our reader refuses, or that read_parquet refuses, is reported with
the error instead of a ratio. Prints one Markdown row per file.
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import ratios  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--ext", default=os.path.join(HERE, "..", "build", "release", "schema_sanitizer.duckdb_extension"))
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    out = bench.sql_literal(os.path.join(tempfile.mkdtemp(), "o.parquet"))
    print("| file | size | rows | ours, median | `read_parquet`, median | DuckDB's time / ours |\n|---|---:|---:|---:|---:|---:|")
    for path in a.files:
        f = bench.sql_literal(os.path.abspath(path))
        sides = [("ours", f"COPY (FROM sanitize_parquet({f})) TO {out}"), ("duckdb", f"COPY (FROM read_parquet({f})) TO {out}")]
        times = {"ours": [], "duckdb": []}
        rows, error = None, None
        for r in range(a.runs):
            for side, sql in sides if r % 2 == 0 else sides[::-1]:
                con = ratios.connect(a, "true")
                try:
                    times[side].append(ratios.timed(con, sql))
                    if rows is None and side == "duckdb":
                        rows = con.execute(f"SELECT count(*) FROM read_parquet({f})").fetchone()[0]
                except Exception as e:  # noqa: BLE001 (reported in the row)
                    error = f"{side}: {str(e).splitlines()[0][:120]}"
                finally:
                    con.close()
            if error:
                break
        name, size = os.path.basename(path), os.path.getsize(path)
        if error:
            print(f"| {name} | {size:,} B | | | | {error} |", flush=True)
            continue
        o, d = statistics.median(times["ours"]), statistics.median(times["duckdb"])
        print(f"| {name} | {size:,} B | {rows:,} | {o * 1000:.1f} ms | {d * 1000:.1f} ms | {d / o:.2f}× |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
