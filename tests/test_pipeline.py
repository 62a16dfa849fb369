"""sanitize_pipeline through the DuckDB Python client: every file it writes is
what the documented manual flow (sanitize_jsonl with the registry carried
from the previous partition, COPY ... TO parquet) writes; the report rows
stream in partition order; an hourly run with a warm-up after and overlapping
its range starts from the warm-up's probe registry; a run killed midway never
leaves a partial file at a final path, and its temporary file goes at the
next write; enable_external_access; the output
codec; a dbt-duckdb run-operation.

Every expectation is computed independently of the function under test: with
DuckDB's own COPY/read_parquet over the extension's scans, and with pyarrow.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from conftest import sql_literal
from test_dbt import dbt_command  # noqa: F401 (a fixture)

import pyarrow as pa  # noqa: E402  (scripts/requirements-test.txt pins it: a missing one fails, never skips)
import pyarrow.parquet as pq  # noqa: E402

REGISTRY_KEY = b"schema_sanitizer.registry"
# Columns that carry the run's time (the ingestion time and the drifts'
# detected_at), so never equal between two runs.
RUN_TIME_COLUMNS = ("ingestion_timestamp", "schema_drifts")
REPORT_COLUMNS = [
    "phase", "partition_key", "status", "pass", "rows_read", "rows_written", "rows_skipped", "rows_nulled",
    "rows_rescued", "output_path", "output_bytes", "schema_generation", "drifts", "registry", "elapsed_ms", "error",
]


# --- helpers ---------------------------------------------------------------


def day_key(day: date) -> str:
    return f"year={day:%Y}/month={day:%m}/date={day:%Y-%m-%d}"


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def sql_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return sql_literal(str(value))


def named(params: dict) -> str:
    return "".join(f", {name} := {sql_value(value)}" for name, value in params.items())


def pipeline_sql(source, output, **params) -> str:
    return f"SELECT * FROM sanitize_pipeline({sql_literal(str(source))}, {sql_literal(str(output))}{named(params)})"


def run_pipeline(con, source, output, **params) -> list[dict]:
    result = con.execute(pipeline_sql(source, output, **params))
    names = [d[0] for d in result.description]
    assert names == REPORT_COLUMNS
    return [dict(zip(names, row)) for row in result.fetchall()]


def footer_registry(path) -> str | None:
    """The registry in a Parquet footer, read by pyarrow (not by the extension)."""
    metadata = pq.read_metadata(str(path)).metadata or {}
    value = metadata.get(REGISTRY_KEY)
    return None if value is None else value.decode("utf-8")


def without_detected_at(drifts_json: str) -> list[dict]:
    return [{k: v for k, v in d.items() if k != "detected_at"} for d in json.loads(drifts_json)]


def reference_file(con, source: Path, target: Path, *, registry: str | None, strict: bool, **options) -> Path:
    """What the manual flow writes for one partition: sanitize_jsonl from the
    registry so far, COPY'd to Parquet by DuckDB itself."""
    params = dict(hive_partitioning=False, **options)
    if registry is not None:
        params["registry"] = registry
    if strict:
        params["schema_mode"] = "strict"
    target.parent.mkdir(parents=True, exist_ok=True)
    con.execute(
        f"COPY (FROM sanitize_jsonl({sql_literal(str(source))}{named(params)})) "
        f"TO {sql_literal(str(target))} (FORMAT parquet)"
    )
    return target


def describe(con, path) -> list[tuple[str, str]]:
    return [
        (name, ty)
        for name, ty, *_ in con.execute(
            f"DESCRIBE SELECT * FROM read_parquet({sql_literal(str(path))}, hive_partitioning = false)"
        ).fetchall()
    ]


def assert_same_file(con, got: Path, expected: Path, key: str) -> None:
    """`got` (the pipeline's) and `expected` (DuckDB's COPY) hold the same
    columns, DuckDB types and values; the same Arrow schema for pyarrow."""
    got_columns, expected_columns = describe(con, got), describe(con, expected)
    assert got_columns == expected_columns, f"{key}: DuckDB columns differ"

    keep = f"* EXCLUDE ({', '.join(RUN_TIME_COLUMNS)})"
    read = lambda p: f"SELECT {keep} FROM read_parquet({sql_literal(str(p))}, hive_partitioning = false)"  # noqa: E731
    count = lambda p: con.execute(f"SELECT count(*) FROM read_parquet({sql_literal(str(p))})").fetchone()[0]  # noqa: E731
    assert count(got) == count(expected), key
    only_got = con.execute(f"{read(got)} EXCEPT ALL {read(expected)}").fetchall()
    only_expected = con.execute(f"{read(expected)} EXCEPT ALL {read(got)}").fetchall()
    assert only_got == [] and only_expected == [], f"{key}: rows differ\n+{only_got}\n-{only_expected}"

    # pyarrow, reading the file itself (ParquetFile: no hive keys from the path).
    got_table, expected_table = pq.ParquetFile(str(got)).read(), pq.ParquetFile(str(expected)).read()
    assert got_table.schema.names == expected_table.schema.names, key
    for a, b in zip(got_table.schema, expected_table.schema):
        assert a.type == b.type and a.nullable == b.nullable, f"{key}: column {a.name}: {a} != {b}"
    assert got_table.num_rows == expected_table.num_rows, key
    values = lambda t: t.drop_columns(list(RUN_TIME_COLUMNS)).sort_by("id").to_pylist()  # noqa: E731
    assert values(got_table) == values(expected_table), f"{key}: pyarrow values differ"


# --- the lake of the equivalence test -------------------------------------

START = date(2026, 6, 1)
DAYS = [START + timedelta(days=i) for i in range(5)]
ROWS_PER_DAY = 40


def day_records(index: int) -> list[dict]:
    """Day `index` (0-based) of the lake. Day 3 (index 2) changes amount
    (integer -> text) and a nested field (user.score float -> text); day 4
    adds a field; days 2 and 5 fit what came before."""
    rng = random.Random(index)
    day = DAYS[index]
    records = []
    for i in range(ROWS_PER_DAY):
        offset = "Z" if i % 3 else "+02:00"
        fraction = f".{rng.randrange(1_000_000):06d}" if i % 4 == 0 else ""
        record = {
            "id": (index + 1) * 1000 + i,
            "Event Name": f"evt-{i % 5}",
            "amount": rng.randrange(-500, 5000),
            "seen_at": f"{day:%Y-%m-%d}T{i % 24:02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}{fraction}{offset}",
            "birthday": f"19{rng.randrange(50, 99)}-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}",
            "user": {
                "name": rng.choice(["ana", "luis", "marta", "jürgen", "Zoë", None]),
                "score": rng.randrange(0, 10_000) / 7.0,
                "address": {"city": rng.choice(["Lisboa", "Porto", "Madrid"]), "zip": f"{rng.randrange(10_000):05d}"},
            },
            "tags": rng.sample(["new", "vip", "promo", "beta"], k=rng.randrange(0, 4)),
            "items": [{"sku": f"s{rng.randrange(99)}", "qty": rng.randrange(1, 9)} for _ in range(rng.randrange(0, 3))],
            "paid": rng.random() < 0.5,
        }
        if i % 7 == 3:
            record["user"]["name"] = None
            record.pop("tags")
        if index == 2 and i % 2 == 0:
            record["amount"] = f"{record['amount']} EUR"
        if index == 2 and i == 5:
            record["user"]["score"] = "n/a"
        if index == 3 and i % 3 == 0:
            record["channel"] = rng.choice(["web", "app"])
        records.append(record)
    return records


# The pass each partition needs, from the design of the lake above: the first
# has no registry; day 3 changes types and day 4 adds a field (strict fails,
# redone additively); days 2 and 5 fit the registry they start from.
EXPECTED_PASSES = ["additive", "strict", "strict_then_additive", "strict_then_additive", "strict"]
SCAN_OPTIONS = dict(parse_iso_timestamps=True, parse_iso_dates=True)


@pytest.fixture
def daily_lake(tmp_path: Path) -> Path:
    lake = tmp_path / "bronze"
    # Written newest first: the run's order must not be the file system's.
    for index in reversed(range(len(DAYS))):
        write_lines(lake / day_key(DAYS[index]) / "events.jsonl", day_records(index))
    return lake


# --- the tests -------------------------------------------------------------


def test_every_written_file_equals_the_manual_flow(con, tmp_path: Path, daily_lake: Path):
    silver = tmp_path / "silver"
    report = run_pipeline(
        con, daily_lake, silver, start_date="2026-06-01", end_date="2026-06-05", input_format="jsonl", **SCAN_OPTIONS
    )
    assert [(r["phase"], r["partition_key"], r["status"]) for r in report] == [
        ("partition", day_key(d), "written") for d in DAYS
    ]
    assert [r["pass"] for r in report] == EXPECTED_PASSES

    registry_before = None  # the registry each partition starts from
    generations = []
    for index, (row, day) in enumerate(zip(report, DAYS)):
        key = row["partition_key"]
        source = daily_lake / key / "events.jsonl"
        target = silver / key / f"part_{day:%Y%m%d}.parquet"
        assert row["output_path"] == str(target)
        assert target.is_file(), key
        assert row["output_bytes"] == target.stat().st_size
        assert row["rows_read"] == row["rows_written"] == ROWS_PER_DAY and row["rows_skipped"] == 0
        assert row["error"] is None
        # No temporary file is left beside the file.
        assert sorted(p.name for p in target.parent.iterdir()) == [target.name]

        expected = reference_file(
            con, source, tmp_path / "expected" / f"{index}.parquet",
            registry=registry_before, strict=row["pass"] == "strict", **SCAN_OPTIONS,
        )
        assert_same_file(con, target, expected, key)

        # The registry: footer == report column == the first row's
        # schema_registry (the only row carrying it) == the manual flow's.
        footer = footer_registry(target)
        assert footer is not None, f"{key}: no {REGISTRY_KEY!r} in the footer"
        assert footer == row["registry"]
        in_rows = pq.ParquetFile(str(target)).read(columns=["schema_registry"]).column(0).to_pylist()
        assert in_rows[0] == footer and all(v is None for v in in_rows[1:]), key
        expected_registry = pq.ParquetFile(str(expected)).read(columns=["schema_registry"]).column(0)[0].as_py()
        assert footer == expected_registry, key
        assert con.execute("SELECT sanitize_registry_from_parquet(?)", [str(target)]).fetchone()[0] == footer
        assert row["schema_generation"] == json.loads(footer)["schema_generation"]
        # The drifts reported are the manual flow's (but for their time).
        expected_drifts = pq.ParquetFile(str(expected)).read(columns=["schema_drifts"]).column(0)[0].as_py()
        assert without_detected_at(row["drifts"]) == without_detected_at(expected_drifts), key
        generations.append(row["schema_generation"])
        registry_before = footer

    # The type changes of day 3 and the field of day 4 each opened a generation.
    assert generations[0] == generations[1] < generations[2] < generations[3] == generations[4]
    registry = json.loads(registry_before)
    names = {f["name"] for f in registry["canonical_schema"]["fields"]}
    assert {"amount", "amount_v2_string", "channel"} <= names
    # The newest partition's registry is what sanitize_latest_registry finds.
    latest = con.execute(f"SELECT partition_key, path, registry FROM sanitize_latest_registry({sql_literal(str(silver))})").fetchall()
    assert latest == [(day_key(DAYS[-1]), report[-1]["output_path"], report[-1]["registry"])]


def test_reports_stream_in_partition_order(con, tmp_path: Path):
    lake = tmp_path / "bronze"
    days = [START + timedelta(days=i) for i in range(6)]
    # Day 3 missing, day 4 an empty file; written newest first.
    for index in reversed(range(6)):
        if index == 2:
            continue
        records = [] if index == 3 else [{"id": index * 100_000 + i, "v": f"d{index}"} for i in range(20_000)]
        write_lines(lake / day_key(days[index]) / "e.jsonl", records)
    silver = tmp_path / "silver"
    finals = lambda: sorted(p.relative_to(silver).as_posix() for p in silver.rglob("*.parquet")) if silver.exists() else []  # noqa: E731
    sql = pipeline_sql(lake, silver, start_date=days[0], end_date=days[-1], input_format="jsonl")
    expected = [
        (day_key(d), "skipped_missing" if i == 2 else "skipped_empty" if i == 3 else "written")
        for i, d in enumerate(days)
    ]

    # A row reaches a streaming client as soon as its partition is done.
    # DuckDB buffers a streamed result up to streaming_buffer_size first (by
    # default far more than a run's rows), so make the buffer one row.
    con.execute("SET streaming_buffer_size = '1B'")
    result = con.execute(sql)
    first = result.fetchone()
    assert (first[1], first[2]) == expected[0]
    written_then = finals()
    assert f"{day_key(days[-1])}/part_{days[-1]:%Y%m%d}.parquet" not in written_then, (
        f"the last partition was written before the first row was fetched: {written_then}"
    )
    assert len(written_then) < 4
    rest = result.fetchall()
    assert [(r[1], r[2]) for r in [first, *rest]] == expected
    assert len(finals()) == 4

    # With DuckDB's default buffer the rows come whole, in the same order.
    con.execute("RESET streaming_buffer_size")
    result = con.execute(sql)
    assert result.fetchone()[1:3] == expected[0]
    assert [r[1:3] for r in result.fetchall()] == expected[1:]


def test_hourly_warm_up_after_and_overlapping_the_range(con, tmp_path: Path):
    lake = tmp_path / "bronze"
    day = date(2026, 6, 1)
    hour_key = lambda h: f"{day_key(day)}/hour={h:02d}"  # noqa: E731
    files = {}
    for hour in range(6):
        records = [
            {"id": hour * 10 + i, "v": i * 1.5, "ts": f"2026-06-01T{hour:02d}:{i:02d}:00Z", "obj": {"k": f"h{hour}"}}
            for i in range(5)
        ]
        if hour == 0:
            records[0]["early"] = "x"  # not in the warm-up's hours
        if hour == 5:
            records[1]["late"] = {"k": 1}  # only in the warm-up's hours
        files[hour] = write_lines(lake / hour_key(hour) / "e.jsonl", records)
    silver = tmp_path / "silver"
    report = run_pipeline(
        con, lake, silver, start_date=day, end_date=day, granularity="hourly", start_hour=0, end_hour=3,
        warm_up_start_date=day, warm_up_end_date=day, warm_up_start_hour=2, warm_up_end_hour=5,
        input_format="jsonl", parse_iso_timestamps=True,
    )
    assert [(r["phase"], r["partition_key"], r["status"], r["pass"]) for r in report] == [
        ("warm_up", f"{hour_key(2)}..{hour_key(5)}", "warmed", "additive"),
        ("partition", hour_key(0), "written", "strict_then_additive"),
        ("partition", hour_key(1), "written", "strict"),
        ("partition", hour_key(2), "written", "strict"),
        ("partition", hour_key(3), "written", "strict"),
    ]

    warm = report[0]
    assert (warm["rows_read"], warm["rows_written"], warm["output_path"], warm["output_bytes"]) == (20, 0, None, None)
    probe_files = "[" + ", ".join(sql_literal(str(files[h])) for h in range(2, 6)) + "]"
    probe_registry = con.execute(
        f"SELECT schema_registry FROM sanitize_probe({probe_files}, input_format := 'jsonl', "
        "hive_partitioning := false, parse_iso_timestamps := true)"
    ).fetchone()[0]
    assert warm["registry"] == probe_registry
    assert warm["schema_generation"] == json.loads(probe_registry)["schema_generation"]
    warm_fields = {f["name"] for f in json.loads(probe_registry)["canonical_schema"]["fields"]}
    assert "late" in warm_fields and "early" not in warm_fields

    # Nothing is written for the warm-up's own hours.
    assert sorted(p.relative_to(silver).as_posix() for p in silver.rglob("*") if p.is_file()) == [
        f"{hour_key(h)}/part_20260601_{h:02d}.parquet" for h in range(4)
    ]

    registry_before = probe_registry
    for hour, row in zip(range(4), report[1:]):
        target = silver / hour_key(hour) / f"part_20260601_{hour:02d}.parquet"
        assert row["output_path"] == str(target)
        expected = reference_file(
            con, files[hour], tmp_path / "expected" / f"{hour}.parquet",
            registry=registry_before, strict=row["pass"] == "strict", parse_iso_timestamps=True,
        )
        assert_same_file(con, target, expected, row["partition_key"])
        assert footer_registry(target) == row["registry"]
        registry_before = row["registry"]
    # The warm-up's field is in every file, the early hour's field from hour 0 on.
    for hour in range(4):
        names = pq.read_schema(str(silver / hour_key(hour) / f"part_20260601_{hour:02d}.parquet")).names
        assert "late" in names and "early" in names


# Enough rows that the run is still writing when the test looks for the
# temporary file (400,000 became too few once the probe got faster).
CRASH_ROWS = 1_200_000

CRASH_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from conftest import connect_and_load
    con = connect_and_load(Path(sys.argv[2]), Path(sys.argv[3]))
    con.execute("SET threads = 1")
    print("loaded", flush=True)
    con.execute(sys.argv[4]).fetchall()
    print("finished", flush=True)
    """
)


def test_a_run_killed_midway_leaves_no_file_at_the_final_path(con, tmp_path: Path, repository, subprocess_env):
    lake = tmp_path / "bronze"
    source = lake / day_key(START) / "e.jsonl"
    source.parent.mkdir(parents=True)
    with source.open("w", encoding="utf-8") as f:
        for i in range(CRASH_ROWS):
            f.write(
                '{"id": %d, "name": "user-%d", "amount": %d.5, "tags": ["a", "b%d"], "device": {"os": "ios", "v": %d}}\n'
                % (i, i, i % 1000, i % 7, i % 17)
            )
    silver = tmp_path / "silver"
    final = silver / day_key(START) / f"part_{START:%Y%m%d}.parquet"
    sql = pipeline_sql(lake, silver, start_date=START, end_date=START, input_format="jsonl")
    script = tmp_path / "child.py"
    script.write_text(CRASH_CHILD, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(script), str(Path(__file__).parent), str(repository), str(tmp_path / "child_ext"), sql],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env, text=True,
    )
    temp = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            if final.parent.is_dir():
                for entry in os.scandir(final.parent):
                    if entry.name.startswith(".part_") and entry.name.endswith(".tmp") and entry.stat().st_size > 0:
                        temp = Path(entry.path)
                        break
            if temp is not None:
                break
            time.sleep(0.002)
        if temp is not None:
            child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    stdout, stderr = child.stdout.read(), child.stderr.read()
    assert temp is not None, (
        f"no non-empty temporary file was seen before the child ended (rc {child.returncode}); "
        f"make CRASH_ROWS larger\nstdout: {stdout}\nstderr: {stderr}"
    )
    assert child.returncode == -signal.SIGKILL
    assert "finished" not in stdout
    # The temporary file is hidden, named after its target, in the target's directory.
    assert temp.name.startswith(f".{final.name}.") and temp.parent == final.parent
    assert not final.exists(), "a killed run left a file at the final path"
    # At most the hidden temporary file is left beside it.
    assert [p.name for p in final.parent.iterdir()] in ([], [temp.name])
    assert list(silver.rglob("*.parquet")) == []
    assert con.execute(f"SELECT count(*) FROM sanitize_latest_registry({sql_literal(str(silver))})").fetchone() == (0,)

    # The run again completes the partition.
    report = run_pipeline(con, lake, silver, start_date=START, end_date=START, input_format="jsonl")
    assert [(r["status"], r["rows_written"]) for r in report] == [("written", CRASH_ROWS)]
    assert final.is_file()
    got = con.execute(
        f"SELECT count(*), count(DISTINCT id), sum(id) FROM read_parquet({sql_literal(str(final))}, hive_partitioning = false)"
    ).fetchone()
    assert got == (CRASH_ROWS, CRASH_ROWS, CRASH_ROWS * (CRASH_ROWS - 1) // 2)
    metadata = pq.read_metadata(str(final))
    assert metadata.num_rows == CRASH_ROWS and metadata.num_row_groups > 1
    footer = footer_registry(final)
    assert footer is not None and footer == report[0]["registry"]
    assert {f["name"] for f in json.loads(footer)["canonical_schema"]["fields"]} == {"amount", "device", "id", "name", "tags"}
    assert con.execute(f"SELECT path FROM sanitize_latest_registry({sql_literal(str(silver))})").fetchall() == [(str(final),)]
    # The rerun removed the killed run's temporary file (its process is
    # gone), so even a glob of every file reads only the partition's.
    assert not temp.exists()
    assert [p.name for p in final.parent.iterdir()] == [final.name]
    everything = sql_literal(str(silver) + "/**")
    assert con.execute(f"SELECT count(*) FROM read_parquet({everything})").fetchone() == (CRASH_ROWS,)


def test_temporary_files_of_live_processes_and_other_files_stay(con, tmp_path: Path):
    """The cleanup takes only temporary files of this writer's pattern whose
    process is gone: a live process's (this one's: a write in progress)
    and every other file stay. `read_parquet('<prefix>/**/*.parquet')`
    never matches a temporary file (it ends in .tmp; DuckDB's globs do
    match hidden files)."""
    lake = tmp_path / "bronze"
    write_lines(lake / day_key(START) / "e.jsonl", [{"id": 1}, {"id": 2}])
    silver = tmp_path / "silver"
    partition = silver / day_key(START)
    partition.mkdir(parents=True)
    dead_child = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_child.wait()
    stale = f".part_{START:%Y%m%d}.parquet.{dead_child.pid}-1700000000000000000-0.tmp"
    live = f".part_{START:%Y%m%d}.parquet.{os.getpid()}-1700000000000000000-0.tmp"
    others = ["notes.txt", f".part_{START:%Y%m%d}.parquet.tmp", "other.parquet.1-2-3.tmp"]
    for name in [stale, live, *others]:
        (partition / name).write_bytes(b"not parquet")
    report = run_pipeline(con, lake, silver, start_date=START, end_date=START, input_format="jsonl")
    assert [r["status"] for r in report] == ["written"]
    left = sorted(p.name for p in partition.iterdir())
    assert left == sorted([live, *others, f"part_{START:%Y%m%d}.parquet"])
    parquet_only = sql_literal(str(silver) + "/**/*.parquet")
    assert con.execute(f"SELECT count(*) FROM read_parquet({parquet_only})").fetchone() == (2,)


def test_enable_external_access_false_refuses_the_pipeline(con, tmp_path: Path):
    lake = tmp_path / "bronze"
    write_lines(lake / day_key(START) / "e.jsonl", [{"id": 1}])
    silver = tmp_path / "silver"
    con.execute("SET enable_external_access = false")
    with pytest.raises(duckdb.Error) as info:
        con.execute(pipeline_sql(lake, silver, start_date=START, end_date=START, input_format="jsonl")).fetchall()
    message = str(info.value)
    assert "sanitize_pipeline" in message and "enable_external_access" in message, message
    assert not silver.exists()


@pytest.mark.parametrize(
    "compression, codec",
    [(None, "ZSTD"), ("snappy", "SNAPPY"), ("gzip", "GZIP"), ("uncompressed", "UNCOMPRESSED")],
)
def test_output_compression(con, tmp_path: Path, compression, codec):
    lake = tmp_path / "bronze"
    records = [{"id": i, "s": f"text {i % 13}", "n": {"x": i * 0.5, "l": [i, i + 1]}} for i in range(2_000)]
    write_lines(lake / day_key(START) / "e.jsonl", records)
    silver = tmp_path / "silver"
    params = dict(start_date=START, end_date=START, input_format="jsonl")
    if compression is not None:
        params["compression"] = compression
    [row] = run_pipeline(con, lake, silver, **params)
    assert row["status"] == "written"
    metadata = pq.read_metadata(row["output_path"])
    assert metadata.row_group(0).column(0).compression == codec
    codecs = {
        metadata.row_group(g).column(c).compression
        for g in range(metadata.num_row_groups)
        for c in range(metadata.row_group(g).num_columns)
    }
    assert codecs == {codec}
    table = pq.ParquetFile(row["output_path"]).read(columns=["id", "s", "n"])
    assert table.to_pylist() == [{"id": r["id"], "s": r["s"], "n": r["n"]} for r in records]


def test_an_unknown_output_codec_names_the_input_codec_parameter(con, tmp_path: Path):
    lake = tmp_path / "bronze"
    write_lines(lake / day_key(START) / "e.jsonl", [{"id": 1}])
    with pytest.raises(duckdb.Error) as info:
        con.execute(
            pipeline_sql(lake, tmp_path / "silver", start_date=START, end_date=START, input_format="jsonl", compression="lz4")
        ).fetchall()
    message = str(info.value)
    assert '"compression"' in message and "input_compression" in message and "'lz4'" in message, message


def test_gzipped_input_with_input_compression(con, tmp_path: Path):
    lake = tmp_path / "bronze"
    records = [{"id": i, "v": f"v{i}"} for i in range(100)]
    path = lake / day_key(START) / "e.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    silver = tmp_path / "silver"
    [row] = run_pipeline(
        con, lake, silver, start_date=START, end_date=START, input_format="jsonl", input_compression="gzip",
        compression="snappy",
    )
    assert (row["status"], row["rows_written"]) == ("written", len(records))
    assert pq.read_metadata(row["output_path"]).row_group(0).column(0).compression == "SNAPPY"
    table = pq.ParquetFile(row["output_path"]).read(columns=["id", "v"])
    assert table.to_pylist() == records


def test_dbt_run_operation_runs_the_pipeline(dbt_command, repository, extension_dir, tmp_path: Path, subprocess_env):
    """docs/partitions.md: the pipeline works from a dbt-duckdb run-operation."""
    from test_dbt import write_project

    lake = tmp_path / "bronze"
    days = DAYS[:2]
    for index, day in enumerate(days):
        write_lines(lake / day_key(day) / "e.jsonl", [{"id": index * 10 + i, "v": i} for i in range(3)])
    silver = tmp_path / "silver"
    project = tmp_path / "project"
    write_project(
        project, database=tmp_path / "warehouse.duckdb", repository=repository, extension_dir=extension_dir,
        data=lake / day_key(days[0]) / "e.jsonl",
    )
    (project / "macros").mkdir()
    (project / "macros" / "run_pipeline.sql").write_text(
        "{% macro run_pipeline(source, output) %}\n"
        "  {% set result = run_query(\"select partition_key, status, rows_written from sanitize_pipeline('\" ~ source ~ \"', '\""
        " ~ output ~ \"', start_date := '2026-06-01', end_date := '2026-06-02', input_format := 'jsonl')\") %}\n"
        "  {% for row in result.rows %}{{ log('PIPELINE ' ~ row[0] ~ ' ' ~ row[1] ~ ' ' ~ row[2], info=True) }}{% endfor %}\n"
        "{% endmacro %}\n"
    )
    env = dict(subprocess_env, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
    proc = subprocess.run(
        [*dbt_command, "--no-send-anonymous-usage-stats", "--no-version-check", "run-operation", "run_pipeline",
         "--args", json.dumps({"source": str(lake), "output": str(silver)}),
         "--project-dir", str(project), "--profiles-dir", str(project)],
        cwd=project, capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, f"dbt run-operation failed ({proc.returncode})\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    logged = [line[line.index("PIPELINE ") + 9:] for line in proc.stdout.splitlines() if "PIPELINE " in line]
    assert logged == [f"{day_key(d)} written 3" for d in days], proc.stdout
    for index, day in enumerate(days):
        path = silver / day_key(day) / f"part_{day:%Y%m%d}.parquet"
        assert pq.ParquetFile(str(path)).read(columns=["id"]).column(0).to_pylist() == [index * 10 + i for i in range(3)]
        assert footer_registry(path) is not None
