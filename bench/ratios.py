"""Ours against DuckDB's own reader on the cases of docs/performance.md
"Against DuckDB's readers: where the ratios stand" (a benchmark, not a
test): each statement on a fresh connection, the two sides interleaved,
medians of --runs, threads = 2, insertion order kept and off.

    .venv/bin/python bench/ratios.py --runs 5
    .venv/bin/python bench/ratios.py --runs 3 --cases parquet,flat

Generates what is missing under bench/data: the 200 MB events (bench.py's
generator, seed 42), that file cut into 64 files, 10,000 small JSON Lines
files, the 300 MB events written as Parquet (bench.py's `parquet` input)
and a flat 130 MB Parquet file of 3 million rows. Prints one Markdown row
per case and order.
"""
import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (the inputs of bench.py)
import gen_jsonl  # noqa: E402
import split_jsonl  # noqa: E402

DATA = os.path.join(HERE, "data")

FLAT_SQL = """COPY (SELECT range AS l_orderkey, (range % 200000)::INTEGER AS l_partkey,
 (range % 50 + 1)::DECIMAL(15,2) AS l_quantity, ((range * 7919) % 10000000 / 100.0)::DECIMAL(15,2) AS l_extendedprice,
 ((range % 11) / 100.0)::DECIMAL(15,2) AS l_discount, DATE '1992-01-01' + (range % 2500)::INTEGER AS l_shipdate,
 ['A','N','R'][range % 3 + 1] AS l_returnflag, ['MAIL','SHIP','AIR','TRUCK','RAIL','FOB','REG AIR'][range % 7 + 1] AS l_shipmode,
 md5(range::VARCHAR)[:20 + range % 20] AS l_comment FROM range(3000000)) TO {path}"""


def events_200mb() -> str:
    path = os.path.join(DATA, "events-200mb-seed42.jsonl")
    if not os.path.exists(path):
        gen_jsonl.generate_file(path, 42, size_mb=200)
    return path


def csv_200mb() -> str:
    path = os.path.join(DATA, "events-200mb-seed42.csv")
    if not os.path.exists(path):
        bench._gen_format("csv")(path, 42, 200)
    return path


def sixty_four_files() -> str:
    out = os.path.join(DATA, "events-200mb-64files")
    split_jsonl.split(events_200mb(), out, 64)
    return out


def small_files() -> str:
    """10,000 files of 10-200 records each (about 99 MB), seed 42."""
    out = os.path.join(DATA, "small-10000files-seed42")
    if os.path.isdir(out) and len(os.listdir(out)) == 10_000:
        return out
    rng = random.Random(42)
    tmp = tempfile.mkdtemp(dir=DATA)
    n = 0
    for f in range(10_000):
        with open(os.path.join(tmp, f"f{f:05d}.jsonl"), "w") as w:
            for _ in range(rng.randint(10, 200)):
                tags = rng.choice(['[]', '["a"]', '["a", "b"]'])
                w.write(f'{{"id": {n}, "name": "{"x" * rng.randint(1, 20)}", "v": {rng.random()!r}, "tags": {tags}}}\n')
                n += 1
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    return out


def events_parquet() -> str:
    path = os.path.join(DATA, "events-parquet-300mb-seed42.parquet")
    if not os.path.exists(path):
        bench._gen_parquet(path, 42, 300)
    return path


def flat_parquet() -> str:
    path = os.path.join(DATA, "lineitem-like-3m.parquet")
    if not os.path.exists(path):
        with duckdb.connect() as con:
            con.execute(FLAT_SQL.format(path=bench.sql_literal(path)))
    return path


def cases():
    lit = bench.sql_literal
    ours_out, theirs_out = lit(os.path.join(DATA, "ratios-ours.parquet")), lit(os.path.join(DATA, "ratios-duckdb.parquet"))
    j = lit(events_200mb())
    g64 = lit(os.path.join(sixty_four_files(), "*.jsonl"))
    g10k = lit(os.path.join(small_files(), "*.jsonl"))
    pq, flat = lit(events_parquet()), lit(flat_parquet())
    c = lit(csv_200mb())
    copy = lambda src, out: f"COPY (FROM {src}) TO {out}"  # noqa: E731
    return [
        ("count", "`count(*)` of the 200 MB JSON Lines file, cold bind", f"SELECT count(*) FROM sanitize_jsonl({j})",
         f"SELECT count(*) FROM read_json({j}, sample_size=-1)"),
        ("jsonl", "`COPY` of the 200 MB JSON Lines file", copy(f"sanitize_jsonl({j})", ours_out),
         copy(f"read_json({j}, sample_size=-1)", theirs_out)),
        ("csv", "`COPY` of the 200 MB events as CSV, parsers on",
         copy(f"sanitize_csv({c}, parse_integers := true, parse_floats := true, parse_iso_timestamps := true)", ours_out),
         copy(f"read_csv({c}, sample_size=-1)", theirs_out)),
        ("64", "`COPY` of the same split into 64 files", copy(f"sanitize_jsonl({g64})", ours_out),
         copy(f"read_json({g64}, sample_size=-1, maximum_sample_files=64)", theirs_out)),
        ("10000", "`COPY` of 10,000 files of 10-200 records", copy(f"sanitize_jsonl({g10k})", ours_out),
         copy(f"read_json({g10k}, format='newline_delimited', sample_size=-1, maximum_sample_files=10000)", theirs_out)),
        ("parquet", "`COPY` of the events as Parquet (44 MB, nested)", copy(f"sanitize_parquet({pq})", ours_out),
         copy(f"read_parquet({pq})", theirs_out)),
        ("flat", "`COPY` of the flat 130 MB Parquet file", copy(f"sanitize_parquet({flat})", ours_out),
         copy(f"read_parquet({flat})", theirs_out)),
    ]


def connect(a, order: str):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD {bench.sql_literal(os.path.abspath(a.ext))}")
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET threads = {a.threads}")
    con.execute(f"SET preserve_insertion_order = {order}")
    return con


def timed(con, sql: str) -> float:
    start = time.perf_counter()
    con.execute(sql).fetchall()
    return time.perf_counter() - start


def sink_bounds(a, chosen) -> int:
    """What the Parquet sink alone costs, and so the best ratio a reader of
    ours taking no time at all could reach. Our result is first stored in a
    table; a `COPY` of that table is then the writer's work alone: at
    threads = 1 it is the writer on the one thread that runs a scan without
    a batch index (order kept), and at --threads it is the writer on every
    thread (order off, or a source with a batch index). DuckDB's own `COPY`
    of the case is timed as in the main table."""
    print("| case | DuckDB's `COPY` | sink, one thread | sink, every thread"
          " | bound, order kept | bound, order off |\n|---|---:|---:|---:|---:|---:|")
    for key, label, ours, theirs in chosen:
        source = ours[len("COPY (FROM "):ours.rindex(") TO ")]
        theirs_t, one, every = [], [], []
        for _ in range(a.runs):
            con = connect(a, "true")
            theirs_t.append(timed(con, theirs))
            con.close()
        con = connect(a, "true")
        con.execute(f"CREATE TABLE result AS FROM {source}")
        out = bench.sql_literal(os.path.join(DATA, "ratios-sink.parquet"))
        for _ in range(a.runs):
            con.execute("SET threads = 1")
            one.append(timed(con, f"COPY result TO {out}"))
            con.execute(f"SET threads = {a.threads}")
            every.append(timed(con, f"COPY result TO {out}"))
        con.close()
        d, s1, sn = (statistics.median(v) for v in (theirs_t, one, every))
        print(f"| {label} | {d:.2f} s | {s1:.2f} s | {sn:.2f} s | {d / s1:.2f}× | {d / sn:.2f}× |", flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ext", default=os.path.join(HERE, "..", "build", "release", "schema_sanitizer.duckdb_extension"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cases", default="", help="comma-separated keys: count, jsonl, csv, 64, 10000, parquet, flat")
    p.add_argument("--bounds", action="store_true", help="print the sink bound of each COPY case instead (see sink_bounds)")
    a = p.parse_args(argv)
    wanted = set(filter(None, a.cases.split(",")))
    chosen = [c for c in cases() if not wanted or c[0] in wanted]
    if a.bounds:
        return sink_bounds(a, [c for c in chosen if c[0] != "count"])
    print("| case | order | ours, median (fastest–slowest) | DuckDB, median | DuckDB's time / ours"
          " | with our fastest run |\n|---|---|---:|---:|---:|---:|")
    for order in ("true", "false"):
        for key, label, ours, theirs in chosen:
            if key == "count" and order == "false":
                continue
            times = {"ours": [], "duckdb": []}
            for r in range(a.runs):
                pair = [("ours", ours), ("duckdb", theirs)]
                for side, sql in pair if r % 2 == 0 else pair[::-1]:
                    con = connect(a, order)
                    times[side].append(timed(con, sql))
                    con.close()
            ours_s, theirs_s = statistics.median(times["ours"]), statistics.median(times["duckdb"])
            fastest, slowest = min(times["ours"]), max(times["ours"])
            kept = "kept" if order == "true" else "off"
            # With order kept our runs fall in two groups (which of DuckDB's
            # threads takes our one-task pipeline, docs/performance.md
            # "Notes on the figures"): the spread shows which a median is.
            print(f"| {label} | {kept} | {ours_s:.2f} s ({fastest:.2f}–{slowest:.2f}) | {theirs_s:.2f} s"
                  f" | **{theirs_s / ours_s:.2f}×** | {theirs_s / fastest:.2f}× |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
