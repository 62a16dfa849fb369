"""sanitize_ingest through the DuckDB Python client and in child processes.

- Crash injection: while a producer process keeps adding files to a landing
  folder (local, or an S3 prefix on moto), runs are killed with SIGKILL at
  every phase (listing, scan, write, fsync, commit, rename: the engine's
  SCHEMA_SANITIZER_INGEST_PAUSE hook holds a run there and says so on
  stderr) and at random moments; then runs go on until caught up. The
  committed outputs hold every source row exactly once, no file of an
  uncommitted run is left, and the registry equals that of one scan over
  all files in the order they were taken.
- Concurrency: two and four runs started together, repeatedly: one commits
  each round, the others fail with a clear error and leave nothing behind.
- Drift: versioned columns exactly as one sanitize_jsonl over all files;
  strict runs fall back to additive only when a file drifts.
- Changed files under each on_changed; on_error := 'stop'; the log; the
  latest registry read from the checkpoint.

No assertion reads the clock.
"""
from __future__ import annotations

import collections
import functools
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import sql_literal

PHASES = ["listing", "scan", "write", "fsync", "commit", "rename"]
PAUSE = "SCHEMA_SANITIZER_INGEST_PAUSE"

# Loads the extension, says so on stderr, and runs one statement; prints
# its rows (or its error) as one JSON line.
LOADED = "child: extension loaded"
CHILD = textwrap.dedent(
    f"""
    import json, sys, duckdb
    extension, sql = sys.argv[1], sys.argv[2]
    con = duckdb.connect(config={{"allow_unsigned_extensions": "true"}})
    con.execute("SET enable_progress_bar = false")
    con.execute("LOAD '" + extension.replace("'", "''") + "'")
    print({LOADED!r}, file=sys.stderr, flush=True)
    try:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        print(json.dumps({{"rows": [dict(zip(names, r)) for r in cur.fetchall()]}}), flush=True)
    except Exception as e:  # a DuckDB error: reported, not raised
        print(json.dumps({{"error": str(e)}}), flush=True)
    """
)

# Adds files k = first, first + 1, ... to a landing folder or an S3 prefix
# (publish), one every `pause` seconds.
PRODUCER = textwrap.dedent(
    """
    import sys, time
    landing, first, count, pause = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    sys.path.insert(0, sys.argv[5])
    from test_ingest import publish
    for k in range(first, first + count):
        publish(landing, k)
        time.sleep(pause)
    """
)


def records(k: int) -> list[dict]:
    """File k's records: ids k*10+j; `v` an integer, now and then a string
    (a versioned column); a float `w`; a struct from file 30 on. No type a
    later file widens (docs/ingest.md: a widening across runs is a version)."""
    out = []
    for j in range(3):
        r: dict = {"id": k * 10 + j, "file": k, "w": k + j / 4}
        r["v"] = f"text-{k}-{j}" if k % 11 == 7 else k + j
        if k >= 30:
            r["meta"] = {"source": f"s{k % 3}", "n": j}
        out.append(r)
    return out


def write_file(landing: Path, k: int) -> Path:
    landing.mkdir(parents=True, exist_ok=True)
    path = landing / f"f{k:05}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records(k)), encoding="utf-8")
    return path


def publish(landing: str, k: int) -> None:
    """Adds file k the way a producer should: into a local folder written
    under a hidden name, synced, then renamed into place; into an S3 prefix
    (`s3://bucket/prefix/`, on the endpoint of AWS_ENDPOINT_URL) by one PUT,
    whole by itself."""
    name = f"f{k:05}.jsonl"
    body = "".join(json.dumps(r) + "\n" for r in records(k))
    if landing.startswith("s3://"):
        bucket, _, prefix = landing[len("s3://"):].partition("/")
        landing_client(os.environ["AWS_ENDPOINT_URL"]).put_object(
            Bucket=bucket, Key=prefix + name, Body=body.encode()
        )
        return
    temp = os.path.join(landing, f".{name}.tmp")
    with open(temp, "w", encoding="utf-8") as f:
        f.write(body)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, os.path.join(landing, name))


@functools.cache
def landing_client(endpoint: str):
    from test_remote_storage import s3_client

    return s3_client(endpoint)


def ingest_sql(landing: Path | str, out: Path, extra: str = "") -> str:
    return (
        f"SELECT * FROM sanitize_ingest({sql_literal(str(landing))}, {sql_literal(str(out))}, "
        f"input_format := 'jsonl'{extra})"
    )


def start_child(extension: Path, sql: str, env: dict, pause: str | None) -> subprocess.Popen:
    child_env = dict(env)
    if pause:
        child_env[PAUSE] = pause
    else:
        child_env.pop(PAUSE, None)
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(extension), sql],
        env=child_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_stderr(child: subprocess.Popen, text: str) -> bool:
    """Reads the child's stderr until a line holds `text` (True) or it ends."""
    return any(text in line for line in child.stderr)


def child_result(child: subprocess.Popen) -> dict:
    out, err = child.communicate()
    assert child.returncode == 0, f"the child failed ({child.returncode}): {err}"
    return json.loads(out.strip().splitlines()[-1])


def run_until_caught_up(extension: Path, sql: str, env: dict) -> list[dict]:
    """Runs (in child processes, as the killed ones ran) until a run finds
    nothing new and nothing left."""
    reports = []
    for _ in range(200):
        result = child_result(start_child(extension, sql, env, None))
        assert "rows" in result, result
        report = result["rows"][0]
        reports.append(report)
        if report["status"] == "up_to_date" and report["files_left"] == 0:
            return reports
    raise AssertionError("never caught up")


def log_entries(con, out: Path) -> list[dict]:
    cur = con.execute(f"SELECT * FROM sanitize_ingest_log({sql_literal(str(out))}) ORDER BY entry")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def committed_ids(con, entries: list[dict]) -> collections.Counter:
    outputs = [p for e in entries for p in json.loads(e["output_files"])]
    if not outputs:
        return collections.Counter()
    listed = "[" + ", ".join(sql_literal(p) for p in outputs) + "]"
    rows = con.execute(f"SELECT id FROM read_parquet({listed}, union_by_name = true)").fetchall()
    return collections.Counter(r[0] for r in rows)


def ids_of(texts) -> collections.Counter:
    """The multiset of the ids in JSON Lines texts."""
    ids = collections.Counter()
    for text in texts:
        for line in text.splitlines():
            ids[json.loads(line)["id"]] += 1
    return ids


def source_ids(landing: Path) -> collections.Counter:
    return ids_of(path.read_text(encoding="utf-8") for path in sorted(landing.glob("f*.jsonl")))


def taken_files(entries: list[dict]) -> list[str]:
    return [f["path"] for e in entries for f in json.loads(e["source_files"])]


def leftovers(out: Path) -> list[str]:
    """Hidden files (staged parts, temporary Parquet files and entries) in
    the output folder and the checkpoint."""
    found = [p.name for p in out.iterdir() if p.name.startswith(".")]
    checkpoint = out / "_sanitize_checkpoint"
    if checkpoint.is_dir():
        found += [p.name for p in checkpoint.iterdir() if p.name.startswith(".")]
    return found


def schema_of(registry: str) -> dict:
    """A registry without what counts runs rather than describes the data:
    its generation, the one it started from, and each field's first one
    (one scan is one generation; runs make several)."""
    volatile = {"schema_generation", "base_generation", "since_generation"}

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in volatile}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(registry))


def chained_registries(con, entries: list[dict]) -> list[str]:
    """The registry after each entry's files read by one sanitize_jsonl
    from the registry before (the manual flow a run automates)."""
    out, registry = [], None
    for e in entries:
        files = [f["path"] for f in json.loads(e["source_files"])]
        listed = "[" + ", ".join(sql_literal(p) for p in files) + "]"
        given = "" if registry is None else f", registry := {sql_literal(registry)}"
        registry = con.execute(
            f"SELECT schema_registry FROM sanitize_jsonl({listed}{given}) WHERE schema_registry IS NOT NULL"
        ).fetchone()[0]
        out.append(registry)
    return out


def one_scan_registry(con, files: list[str]) -> str:
    listed = "[" + ", ".join(sql_literal(p) for p in files) + "]"
    return con.execute(
        f"SELECT schema_registry FROM sanitize_jsonl({listed}) WHERE schema_registry IS NOT NULL"
    ).fetchone()[0]


# --- crash injection --------------------------------------------------------


def kill_runs_while_a_producer_adds_files(
    extension: Path, sql: str, env: dict, landing: str, out: Path, total: int = 120
) -> tuple[collections.Counter, int]:
    """Runs `sql` in child processes while a producer process publishes
    files 0..total-1 to `landing`, killing them with SIGKILL: each phase at
    least six times (held there by the pause hook), then at random moments
    of runs, until six such kills. Checks what each phase's kill leaves;
    returns the kills by phase and the number of random ones."""
    tests_dir = str(Path(__file__).resolve().parent)
    producer = subprocess.Popen(
        [sys.executable, "-c", PRODUCER, landing, "0", str(total), "0.05", tests_dir],
        env=env,
    )
    rng = random.Random(20260625)
    kills = collections.Counter()
    random_kills = 0
    try:
        # Every phase at least six times: a run is held at the phase and
        # killed there. A run that never reaches it (nothing new yet, or
        # every file taken before a scan) ends normally and does not count.
        attempts = 0
        extra = total  # the next file to publish once the producer is done
        while min(kills[p] for p in PHASES) < 6:
            attempts += 1
            assert attempts < 400, f"phases not reached: {dict(kills)}"
            phase = min(PHASES, key=lambda p: (kills[p], rng.random()))
            if producer.poll() is not None:
                # Keep the landing folder growing until every phase is hit.
                publish(landing, extra)
                extra += 1
            entries_before = len(list((out / "_sanitize_checkpoint").glob("*.json")))
            child = start_child(extension, sql, env, f"{phase}:60000")
            if wait_for_stderr(child, f"paused at phase {phase}"):
                child.send_signal(signal.SIGKILL)
                child.communicate()
                assert child.returncode == -signal.SIGKILL
                kills[phase] += 1
                # What the kill left is that phase's state.
                left = leftovers(out)
                entries_after = len(list((out / "_sanitize_checkpoint").glob("*.json")))
                staged = [n for n in left if n.endswith(".staged")]
                if phase == "scan":
                    assert any(n.endswith(".tmp") and ".staged." in n for n in left), left
                if phase in ("write", "fsync", "commit", "rename"):
                    assert staged, (phase, left)
                if phase == "commit":
                    assert any(n.endswith(".tmp") and n.startswith(".0") for n in left), left
                assert entries_after == entries_before + (1 if phase == "rename" else 0), phase
            else:
                # A run that finished: it must have succeeded.
                result = child_result(child)
                assert "rows" in result, result
        # And at random moments: each run has new files to take, and is
        # killed after a delay drawn over as long as a whole run of the
        # statement took (measured from the child's LOAD: the interpreter's
        # start is not the run's), unless it ended first.
        producer.wait()

        def start_with_new_files() -> subprocess.Popen:
            nonlocal extra
            for _ in range(3):
                publish(landing, extra)
                extra += 1
            child = start_child(extension, sql, env, None)
            assert wait_for_stderr(child, LOADED), child_result(child)
            return child

        child = start_with_new_files()
        started = time.monotonic()
        assert "rows" in child_result(child)
        span = time.monotonic() - started
        for _ in range(60):
            if random_kills == 6:
                break
            child = start_with_new_files()
            try:
                out_text, _ = child.communicate(timeout=rng.uniform(0, span))
                assert "rows" in json.loads(out_text.strip().splitlines()[-1]), out_text
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGKILL)
                child.communicate()
                random_kills += 1
    finally:
        producer.wait()
    assert random_kills > 0, "no run was killed at a random moment: the test did not test it"
    return kills, random_kills


def assert_caught_up_exactly_once(
    con, extension: Path, sql: str, env: dict, out: Path, sources: list[str], expected: collections.Counter
) -> None:
    """Runs until caught up, then: every source file (its path or URI) was
    taken exactly once and none failed; every row is committed exactly once
    (`expected`, a multiset of ids), through the log and through a glob;
    nothing of the killed runs is left; and the registries are those of the
    manual flow and, last, of one scan over all files in the order taken."""
    reports = run_until_caught_up(extension, sql, env)
    assert all(r["status"] in ("committed", "up_to_date") for r in reports)
    entries = log_entries(con, out)
    assert [e["entry"] for e in entries] == list(range(1, len(entries) + 1))
    # Every source file taken exactly once, none failed.
    taken = taken_files(entries)
    assert sorted(taken) == sorted(sources)
    assert sum(e["files_failed"] for e in entries) == 0
    # Every row exactly once, through the log and through a glob.
    assert committed_ids(con, entries) == expected
    globbed = con.execute(
        f"SELECT id FROM read_parquet({sql_literal(str(out / '*.parquet'))}, union_by_name = true)"
    ).fetchall()
    assert collections.Counter(r[0] for r in globbed) == expected
    assert sum(e["rows_written"] for e in entries) == sum(expected.values())
    # Nothing of the killed runs is left.
    assert leftovers(out) == []
    # Each entry's registry is that of its files read from the one before,
    # and the last is that of one scan over all files in the order taken.
    assert [e["registry"] for e in entries] == chained_registries(con, entries)
    assert schema_of(entries[-1]["registry"]) == schema_of(one_scan_registry(con, taken))


def test_runs_killed_at_every_phase_leave_every_row_exactly_once(
    con, extension_file: Path, tmp_path: Path, subprocess_env
):
    landing, out = tmp_path / "landing", tmp_path / "out"
    landing.mkdir()
    sql = ingest_sql(landing, out, ", max_files_per_run := 3")
    kills, _ = kill_runs_while_a_producer_adds_files(extension_file, sql, subprocess_env, str(landing), out)
    assert sum(kills.values()) >= 36, kills
    sources = [str(p.resolve()) for p in landing.glob("f*.jsonl")]
    assert_caught_up_exactly_once(con, extension_file, sql, subprocess_env, out, sources, source_ids(landing))


# --- concurrency ------------------------------------------------------------


@pytest.mark.parametrize("runners", [2, 4])
def test_runs_started_together_commit_once_and_losers_leave_nothing(
    con, extension_file: Path, tmp_path: Path, subprocess_env, runners: int
):
    landing, out = tmp_path / "landing", tmp_path / "out"
    sql = ingest_sql(landing, out)
    k = 0
    losers = 0
    for _round in range(5):
        for _ in range(3):
            write_file(landing, k)
            k += 1
        # Each run lists, then waits a little: they all race for one entry.
        children = [start_child(extension_file, sql, subprocess_env, "listing:400") for _ in range(runners)]
        results = [child_result(c) for c in children]
        committed = [r for r in results if "rows" in r and r["rows"][0]["status"] == "committed"]
        errors = [r["error"] for r in results if "error" in r]
        assert len(committed) == 1, results
        for e in errors:
            assert "another run committed entry" in e and "this run committed nothing and removed its output" in e, e
        losers += len(errors)
        assert len(committed) + len(errors) + sum(
            1 for r in results if "rows" in r and r["rows"][0]["status"] == "up_to_date"
        ) == runners
        # The losers removed what they wrote; the winner published its parts.
        assert leftovers(out) == []
    assert losers > 0, "no run ever lost a race: the test did not test it"
    run_until_caught_up(extension_file, sql, subprocess_env)
    entries = log_entries(con, out)
    assert committed_ids(con, entries) == source_ids(landing)
    assert sorted(taken_files(entries)) == sorted(str(p.resolve()) for p in landing.glob("f*.jsonl"))


# --- drift ------------------------------------------------------------------


def test_drift_across_runs_gives_the_columns_of_one_scan(con, tmp_path: Path):
    landing, out = tmp_path / "landing", tmp_path / "out"
    files = [
        [{"id": 1, "v": 1}, {"id": 2, "v": 2}],
        [{"id": 3, "v": 3}],
        [{"id": 4, "v": "four"}],  # drifts: a versioned column
        [{"id": 5, "v": 5}],
        [{"id": 6, "v": 6, "w": True}],  # drifts: a new column
        [{"id": 7, "v": "seven", "w": False}],
    ]
    passes = []
    for i, records_ in enumerate(files):
        (landing / f"d{i}.jsonl").parent.mkdir(parents=True, exist_ok=True)
        (landing / f"d{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records_))
        row = con.execute(
            f"SELECT entry, pass, files_taken FROM ({ingest_sql(landing, out)})"
        ).fetchone()
        assert row[0] == i + 1 and row[2] == 1
        passes.append(row[1])
    assert passes == ["additive", "strict", "strict_then_additive", "strict", "strict_then_additive", "strict"]
    entries = log_entries(con, out)
    outputs = "[" + ", ".join(sql_literal(p) for e in entries for p in json.loads(e["output_files"])) + "]"
    all_files = "[" + ", ".join(sql_literal(str(landing / f"d{i}.jsonl")) for i in range(len(files))) + "]"
    etl = "source_file, ingestion_timestamp, schema_registry, schema_drifts"

    def rows(sql: str) -> list[dict]:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    got = rows(f"SELECT * EXCLUDE ({etl}) FROM read_parquet({outputs}, union_by_name = true) ORDER BY id")
    want = rows(f"SELECT * EXCLUDE ({etl}) FROM sanitize_jsonl({all_files}) ORDER BY id")
    assert sorted(got[0]) == sorted(want[0]) == ["id", "v", "v_v2_string", "w"]
    assert len(got) == 7 and got == want
    assert schema_of(entries[-1]["registry"]) == schema_of(
        one_scan_registry(con, [str(landing / f"d{i}.jsonl") for i in range(len(files))])
    )
    assert [e["registry"] for e in entries] == chained_registries(con, entries)


def test_a_type_widened_across_runs_is_a_version_as_the_registry_contract_says(con, tmp_path: Path):
    # docs/engine.md: a float meeting an integer version from the registry
    # gets a new version; within one scan the version becomes a double.
    landing, out = tmp_path / "landing", tmp_path / "out"
    landing.mkdir()
    (landing / "a.jsonl").write_text('{"id": 1, "v": 1}\n')
    con.execute(ingest_sql(landing, out)).fetchall()
    (landing / "b.jsonl").write_text('{"id": 2, "v": 2.5}\n')
    row = con.execute(f"SELECT pass, registry FROM ({ingest_sql(landing, out)})").fetchone()
    assert row[0] == "strict_then_additive"
    entries = log_entries(con, out)
    assert [e["registry"] for e in entries] == chained_registries(con, entries)
    names = [f["name"] for f in json.loads(row[1])["canonical_schema"]["fields"]]
    assert names == ["id", "v", "v_v2_float"]
    one = json.loads(one_scan_registry(con, [str(landing / "a.jsonl"), str(landing / "b.jsonl")]))
    assert [f["name"] for f in one["canonical_schema"]["fields"]] == ["id", "v"]


# --- changed files, errors, the log, the latest registry ----------------------


def test_a_changed_file_follows_each_on_changed_choice(con, tmp_path: Path):
    landing, out = tmp_path / "landing", tmp_path / "out"
    a = write_file(landing, 1)
    con.execute(ingest_sql(landing, out)).fetchall()
    with a.open("a") as f:
        f.write(json.dumps({"id": 99, "file": 1, "v": 0}) + "\n")
    with pytest.raises(Exception) as e:
        con.execute(ingest_sql(landing, out)).fetchall()
    message = str(e.value)
    assert f'"{a.resolve()}" changed since entry 1 took it: then ' in message
    assert "on_changed := 'skip'" in message and "'reingest'" in message
    skip = ingest_sql(landing, out, ", on_changed := 'skip'")
    row = con.execute(f"SELECT status, files_changed_skipped FROM ({skip})").fetchone()
    assert row == ("up_to_date", 1)
    reingest = ingest_sql(landing, out, ", on_changed := 'reingest'")
    row = con.execute(f"SELECT status, entry, rows_written FROM ({reingest})").fetchone()
    assert row == ("committed", 2, 4)
    assert con.execute(f"SELECT status FROM ({ingest_sql(landing, out)})").fetchone()[0] == "up_to_date"


def test_stop_names_file_line_and_byte_and_commits_nothing(con, tmp_path: Path):
    landing, out = tmp_path / "landing", tmp_path / "out"
    write_file(landing, 1)
    (landing / "f00002.jsonl").write_text('{"id": 20}\n{"id": \n')
    with pytest.raises(Exception) as e:
        con.execute(ingest_sql(landing, out, ", on_error := 'stop'")).fetchall()
    message = str(e.value)
    assert "f00002.jsonl" in message and "line 2" in message and "byte" in message, message
    assert message.endswith(". Nothing was committed")
    assert log_entries(con, out) == []
    assert [p.name for p in out.iterdir()] == []


def test_the_log_and_the_latest_registry_read_the_checkpoint(con, tmp_path: Path):
    landing, out = tmp_path / "landing", tmp_path / "out"
    write_file(landing, 1)
    first = con.execute(f"SELECT registry, output_files FROM ({ingest_sql(landing, out)})").fetchone()
    write_file(landing, 7)  # a string `v`: the registry grows
    second = con.execute(f"SELECT registry, checkpoint_entry FROM ({ingest_sql(landing, out)})").fetchone()
    assert first[0] != second[0]
    entries = log_entries(con, out)
    assert [e["entry"] for e in entries] == [1, 2]
    assert json.loads(entries[0]["output_files"]) == json.loads(first[1])
    # By the output prefix (the default checkpoint inside) or the folder itself.
    for path in (out, out / "_sanitize_checkpoint"):
        key, file, registry = con.execute(
            f"SELECT partition_key, path, registry FROM sanitize_latest_registry({sql_literal(str(path))})"
        ).fetchone()
        assert key == "entry=000000000002" and file == second[1] and registry == second[0]
        assert len(log_entries(con, path)) == 2
    # The registry carries into a scan.
    con.execute("SET VARIABLE reg = " + sql_literal(second[0]))
    assert con.execute(
        f"SELECT count(*) FROM sanitize_jsonl({sql_literal(str(landing / 'f00001.jsonl'))}, "
        "registry := getvariable('reg'), schema_mode := 'strict')"
    ).fetchone()[0] == 3
    # A folder without a checkpoint lists nothing.
    assert log_entries(con, tmp_path / "nothing") == []


# --- remote sources -----------------------------------------------------------

from test_remote_storage import remote_con, s3, s3_server, spool  # noqa: E402,F401 (fixtures: moto on 127.0.0.1)
from test_remote_storage import s3_client, s3_environment  # noqa: E402


def test_runs_killed_at_every_phase_with_an_s3_source_leave_every_row_exactly_once(
    s3, s3_server, remote_con, spool, extension_file: Path, tmp_path: Path, subprocess_env
):
    """The crash scenario with the landing folder an S3 prefix on moto, read
    through a glob (the output and the checkpoint are local): the producer
    PUTs objects while runs are killed at every phase and at random."""
    landing = f"{s3}/crash-{tmp_path.name}/landing/"
    out = tmp_path / "out"
    env = {**subprocess_env, **s3_environment(s3_server), "SCHEMA_SANITIZER_SPOOL_DIR": str(spool)}
    sql = ingest_sql(landing + "*.jsonl", out, ", max_files_per_run := 3")
    kills, _ = kill_runs_while_a_producer_adds_files(extension_file, sql, env, landing, out)
    assert sum(kills.values()) >= 36, kills
    client = s3_client(s3_server)
    bucket, _, prefix = landing[len("s3://"):].partition("/")
    keys = [
        o["Key"]
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for o in page.get("Contents", [])
    ]
    sources = [f"s3://{bucket}/{key}" for key in keys]
    expected = ids_of(client.get_object(Bucket=bucket, Key=key)["Body"].read().decode() for key in keys)
    assert_caught_up_exactly_once(remote_con, extension_file, sql, env, out, sources, expected)


def test_a_remote_prefix_is_taken_once_and_its_etags_tell_changes(s3, s3_server, remote_con, tmp_path: Path):
    client = s3_client(s3_server)
    prefix = f"ingest-{tmp_path.name}/"

    def put(k: int, recs: list[dict]) -> None:
        body = "".join(json.dumps(r) + "\n" for r in recs).encode()
        client.put_object(Bucket="lake", Key=f"{prefix}f{k:05}.jsonl", Body=body)

    for k in range(3):
        put(k, records(k))
    # Passed over: a hidden name and a `_` folder below the prefix.
    client.put_object(Bucket="lake", Key=f"{prefix}.f00009.jsonl", Body=b'{"id": -1}\n')
    client.put_object(Bucket="lake", Key=f"{prefix}_staging/f00010.jsonl", Body=b'{"id": -2}\n')
    out = tmp_path / "out"
    source = f"{s3}/{prefix}"
    sql = ingest_sql(source, out, ", max_files_per_run := 2")

    def report():
        return remote_con.execute(f"SELECT entry, status, files_taken, files_left FROM ({sql})").fetchone()

    assert report() == (1, "committed", 2, 1)
    assert report() == (2, "committed", 1, 0)
    assert report() == (None, "up_to_date", 0, 0)
    put(3, records(3))
    assert report() == (3, "committed", 1, 0)
    entries = log_entries(remote_con, out)
    files = [f for e in entries for f in json.loads(e["source_files"])]
    assert [f["path"] for f in files] == [f"{source}f{k:05}.jsonl" for k in range(4)]
    assert all(f["etag"] for f in files)
    want = collections.Counter(r["id"] for k in range(4) for r in records(k))
    assert committed_ids(remote_con, entries) == want
    # An object rewritten in place: a new ETag.
    put(0, records(0) + [{"id": 5000, "file": 0, "w": 0.5, "v": 1}])
    with pytest.raises(Exception) as e:
        remote_con.execute(sql).fetchall()
    assert f'"{source}f00000.jsonl" changed since entry 1 took it' in str(e.value) and "ETag" in str(e.value)
    again = ingest_sql(source, out, ", on_changed := 'reingest'")
    assert remote_con.execute(f"SELECT entry, files_taken, rows_written FROM ({again})").fetchone() == (4, 1, 4)
