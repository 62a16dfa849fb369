"""Hostile inputs: decompression bombs, huge records, lying Parquet footers
and pages, a million columns, lone surrogate escapes and path traversal in a
partition template. Each must end in a DuckDB error that says what is wrong,
or in the correct result: never a crash, an abort or a hang of the process
the extension runs in.

Every read runs in a child process whose address space is capped at 2 GiB
(RLIMIT_AS), so a reader that holds a multi-gigabyte record, or reserves
memory for a count a file merely claims, fails its allocation and aborts
the child: the test sees the signal instead of pytest dying (or of the
machine swapping). A timeout guards against hangs; no test asserts a
duration.

The inputs are generated at test time (tests/hostile_inputs.py); the bombs
are a few MB on disk and decompress to 2.5-3 GB.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pyarrow.parquet as pq  # scripts/requirements-test.txt pins it
import pytest

import hostile_inputs as hi
from conftest import EXTENSION_NAME, sql_literal

ADDRESS_SPACE_LIMIT = 2 << 30
# A hang guard only: a bounded read of the largest input here takes seconds.
CHILD_TIMEOUT = 120
ETL_COLUMNS = "source_file, ingestion_timestamp, schema_registry, schema_drifts"
REPORT_MARK = "HOSTILE-REPORT "

# The child: LOAD the extension installed from build/repository, run each
# statement (an error is recorded and the next one still runs, so a query's
# counters can be read after it failed), prove the connection still answers,
# and print one JSON report.
CHILD = textwrap.dedent(
    """
    import json, sys
    import duckdb

    spec = json.loads(sys.stdin.read())
    lit = lambda s: "'" + s.replace("'", "''") + "'"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("SET extension_directory = " + lit(spec["extension_dir"]))
    if spec["load"]:
        con.execute("SET custom_extension_repository = " + lit(spec["repository"]))
        con.execute("INSTALL %s")
        con.execute("LOAD %s")
    steps = []
    for sql in spec["steps"]:
        try:
            cur = con.execute(sql)
            columns = [d[0] for d in cur.description] if cur.description else []
            steps.append({"columns": columns, "rows": [list(r) for r in cur.fetchall()]})
        except duckdb.Error as e:
            steps.append({"error": str(e), "error_class": type(e).__name__})
    alive = con.execute("SELECT 6 * 7").fetchall()
    print(%r + json.dumps({"steps": steps, "alive": alive}, default=str))
    """
    % (EXTENSION_NAME, EXTENSION_NAME, REPORT_MARK)
)


def limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


def tail(text: str, n: int = 4000) -> str:
    return text if len(text) <= n else "...\n" + text[-n:]


@pytest.fixture(scope="module")
def installed(repository: Path, tmp_path_factory) -> dict:
    """The extension INSTALLed once from build/repository into a private
    extension directory; each child only LOADs it from there."""
    ext_dir = tmp_path_factory.mktemp("hostile_ext")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        con.execute(f"SET extension_directory = {sql_literal(str(ext_dir))}")
        con.execute(f"SET custom_extension_repository = {sql_literal(str(repository))}")
        con.execute(f"FORCE INSTALL {EXTENSION_NAME}")
    finally:
        con.close()
    return {"repository": str(repository), "extension_dir": str(ext_dir)}


@pytest.fixture
def run(installed, subprocess_env):
    """run(*sql, load=True) runs the statements in a child under the address
    space limit and returns one result per statement: {"columns", "rows"} or
    {"error", "error_class"}. Fails the test if the child is killed by a
    signal, exits abnormally or times out."""
    env = dict(subprocess_env)
    # glibc reserves 64 MiB of address space per malloc arena, one arena per
    # thread up to 8 per core: without a cap the limit would measure those
    # reservations rather than what the reader really holds.
    env["MALLOC_ARENA_MAX"] = "2"

    def go(*steps: str, load: bool = True) -> list[dict]:
        spec = json.dumps(dict(installed, steps=list(steps), load=load))
        shown = "\n".join(f"  {s}" for s in steps)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", CHILD], input=spec, capture_output=True, text=True, errors="replace",
                env=env, timeout=CHILD_TIMEOUT, preexec_fn=limit_address_space,
            )
        except subprocess.TimeoutExpired as e:
            pytest.fail(
                f"the child did not finish within {CHILD_TIMEOUT} s (a hang or an unbounded read) running:\n{shown}\n"
                f"stdout:\n{tail(str(e.stdout or ''))}\nstderr:\n{tail(str(e.stderr or ''))}",
                pytrace=False,
            )
        if proc.returncode != 0:
            how = (f"was killed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
                   else f"exited with status {proc.returncode}")
            pytest.fail(
                f"the child {how} (address space limit {ADDRESS_SPACE_LIMIT >> 20} MiB) running:\n{shown}\n"
                f"stdout:\n{tail(proc.stdout)}\nstderr:\n{tail(proc.stderr)}",
                pytrace=False,
            )
        lines = [l for l in proc.stdout.splitlines() if l.startswith(REPORT_MARK)]
        assert lines, f"the child printed no report\nstdout:\n{tail(proc.stdout)}\nstderr:\n{tail(proc.stderr)}"
        report = json.loads(lines[-1][len(REPORT_MARK):])
        assert report["alive"] == [[42]], report
        for step in report["steps"]:
            step["stderr"] = proc.stderr
        return report["steps"]

    return go


# --- SQL helpers --------------------------------------------------------------


def sql_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sql_value(v) for v in value) + "]"
    return sql_literal(str(value))


def call(function: str, path, **params) -> str:
    """`function('path', name := value, ...)`."""
    named = "".join(f", {k} := {sql_value(v)}" for k, v in params.items() if v is not None)
    return f"{function}({sql_literal(str(path))}{named})"


LAST_STATS = ("SELECT rows_read, rows_emitted, rows_skipped, rows_nulled FROM sanitize_stats() "
              "ORDER BY scan_id DESC LIMIT 1")
LAST_REJECTS = ("SELECT record_index, kind, action, message FROM sanitize_rejects() "
                "WHERE scan_id = (SELECT max(scan_id) FROM sanitize_stats()) ORDER BY record_index")


def stats_of(result: dict) -> dict:
    assert "error" not in result, result
    assert len(result["rows"]) == 1, f"sanitize_stats() logged no scan: {result}"
    return dict(zip(["rows_read", "rows_emitted", "rows_skipped", "rows_nulled"], result["rows"][0]))


def probe_stats(result: dict) -> dict:
    assert len(result["rows"]) == 1, result
    return json.loads(result["rows"][0][0])


def shown(result: dict) -> str:
    r = {k: v for k, v in result.items() if k != "stderr"}
    return json.dumps(r, ensure_ascii=False)[:3000] + ("\nstderr:\n" + tail(result["stderr"], 2000) if result.get("stderr") else "")


def error_matches(result: dict, alternatives) -> bool:
    """True when the result is an error containing every word of one of the
    alternatives (a tuple of word tuples)."""
    return "error" in result and any(all(w in result["error"] for w in words) for words in alternatives)


def assert_error(result: dict, *words: str) -> None:
    assert "error" in result, f"expected an error containing {words}, got a result: {shown(result)}"
    missing = [w for w in words if w not in result["error"]]
    assert not missing, f"the error lacks {missing}: {shown(result)}"


# --- 1. decompression bombs ------------------------------------------------------

RECORD_LIMIT = (("max_record_bytes",),)
# Zero bytes are not XML at all: a reader may refuse the first one as a
# syntax error instead of measuring the record; both are bounded outcomes.
RECORD_LIMIT_OR_NOT_XML = (("max_record_bytes",), ("malformed XML",))

# id: (payload, codec, file name, probe format, function, params, accepted errors)
BOMBS = {
    "jsonl_gz_zeros": ("zeros", "gzip", "bomb.jsonl.gz", "jsonl", "sanitize_jsonl", {}, RECORD_LIMIT),
    "jsonl_zst_zeros": ("zeros", "zstd", "bomb.jsonl.zst", "jsonl", "sanitize_jsonl", {}, RECORD_LIMIT),
    "jsonl_gz_x": ("x", "gzip", "bomb.jsonl.gz", "jsonl", "sanitize_jsonl", {}, RECORD_LIMIT),
    "jsonl_gz_objects_no_newline": ("objects_no_newline", "gzip", "bomb.jsonl.gz", "jsonl", "sanitize_jsonl", {},
                                    RECORD_LIMIT),
    "sanitize_jsonl_gz_zeros": ("zeros", "gzip", "bomb.jsonl.gz", "jsonl", "sanitize", {"input_format": "jsonl"},
                                RECORD_LIMIT),
    "csv_gz_zeros": ("zeros", "gzip", "bomb.csv.gz", "csv", "sanitize_csv", {}, RECORD_LIMIT),
    "json_gz_zeros": ("zeros", "gzip", "bomb.json.gz", "json", "sanitize_json", {}, RECORD_LIMIT),
    "xml_gz_zeros": ("zeros", "gzip", "bomb.xml.gz", "xml", "sanitize_xml", {}, RECORD_LIMIT_OR_NOT_XML),
    "xml_gz_zeros_row_tag": ("zeros", "gzip", "bomb.xml.gz", "xml", "sanitize_xml", {"xml_row_tag": "row"},
                             RECORD_LIMIT_OR_NOT_XML),
    "xml_gz_text_in_root": ("xml_text_in_root", "gzip", "bomb.xml.gz", "xml", "sanitize_xml", {}, RECORD_LIMIT),
    "xml_gz_text_in_root_row_tag": ("xml_text_in_root", "gzip", "bomb.xml.gz", "xml", "sanitize_xml",
                                    {"xml_row_tag": "row"}, RECORD_LIMIT),
}


def bomb_file(tmp_path: Path, case: str) -> Path:
    payload, codec, name, *_ = BOMBS[case]
    if codec == "zstd" and hi.zstd_available():
        pytest.skip(hi.zstd_available())
    return hi.write_bomb(tmp_path / name, codec, payload)


@pytest.mark.parametrize("mode", ["default", "skip_row", "probe"])
@pytest.mark.parametrize("case", list(BOMBS))
def test_decompression_bomb(case, mode, tmp_path, run):
    payload, _, _, fmt, function, params, accepted = BOMBS[case]
    path = bomb_file(tmp_path, case)
    if mode == "probe":
        probe_params = {k: v for k, v in params.items() if k != "input_format"}
        (first,) = run(f"SELECT stats FROM {call('sanitize_probe', path, input_format=fmt, **probe_params)}")
    else:
        on_error = "skip_row" if mode == "skip_row" else None
        first, stats, rejects = run(
            f"SELECT count(*) FROM {call(function, path, on_error=on_error, **params)}", LAST_STATS, LAST_REJECTS)
    if error_matches(first, accepted):
        return
    assert "error" not in first, f"{case} ({mode}): the error does not name the record limit: {shown(first)}"
    rows_read = probe_stats(first)["rows_read"] if mode == "probe" else stats_of(stats)["rows_read"]
    # A correct result: every object is there (each value its own record).
    if payload == "objects_no_newline" and rows_read == hi.bomb_objects():
        assert mode == "probe" or first["rows"] == [[hi.bomb_objects()]], shown(first)
        return
    # The row-tag reading of XML whose root holds only text: no rows, and no
    # bad records either (or, below, the text counted as one bad record).
    if payload == "xml_text_in_root" and "xml_row_tag" in params and rows_read == 0:
        assert mode == "probe" or first["rows"] == [[0]], shown(first)
        return
    # Otherwise only skip_row may succeed, and then the bad record is counted
    # and its reject names the limit.
    assert mode == "skip_row", f"{case} ({mode}): expected an error naming max_record_bytes, got: {shown(first)}"
    assert first["rows"] == [[0]], shown(first)
    counters = stats_of(stats)
    assert counters["rows_skipped"] >= 1 and counters["rows_emitted"] == 0, counters
    assert counters["rows_read"] == counters["rows_skipped"], counters
    assert rejects.get("rows"), f"no reject recorded: {shown(rejects)}"
    assert any(error_matches({"error": r[3]}, accepted) for r in rejects["rows"]), shown(rejects)


def test_bomb_generator_makes_what_it_claims(tmp_path):
    # Small instances of the same generator: the stream really is the
    # concatenation of many frames, and decompresses to the payload.
    gz = hi.write_stream(tmp_path / "s.jsonl.gz", "gzip", b"[", b"ab", 4096, b"]")
    assert hi.decompress(gz, "gzip") == b"[" + b"ab" * 2048 + b"]"
    big = hi.write_bomb(tmp_path / "b.jsonl.gz", "gzip", "zeros", total=5 * hi.CHUNK_BYTES)
    assert hi.decompress(big, "gzip") == b"\0" * (5 * hi.CHUNK_BYTES)
    assert big.stat().st_size < 200_000
    if not hi.zstd_available():
        zst = hi.write_bomb(tmp_path / "b.jsonl.zst", "zstd", "x", total=3 * hi.CHUNK_BYTES)
        assert hi.decompress(zst, "zstd") == b"x" * (3 * hi.CHUNK_BYTES)
    assert hi.bomb_objects(7 * 10) == 10


# --- 2. one huge record beside a good one ----------------------------------------

FUNCTIONS = {"jsonl": "sanitize_jsonl", "csv": "sanitize_csv", "json_array": "sanitize_json_array",
             "json": "sanitize_json", "xml": "sanitize_xml"}


def layout_call(layout: str, path: Path, **params) -> str:
    fmt = hi.HUGE_RECORD_LAYOUTS[layout][0]
    if fmt == "xml":
        params["xml_row_tag"] = "row"
    return call(FUNCTIONS[fmt], path, **params)


def expected_rows(layout: str, bad_value) -> list:
    """The rows in file order, the bad record's row holding `bad_value`."""
    good_after_bad = hi.HUGE_RECORD_LAYOUTS[layout][3]
    return [[bad_value], ["ok"]] if good_after_bad else [["ok"], [bad_value]]


@pytest.mark.parametrize("layout", list(hi.HUGE_RECORD_LAYOUTS))
def test_huge_record_layout_reads_when_small(layout, tmp_path, run):
    # The same generator at 100 bytes: the file is what the huge case claims
    # to be (the value is read whole, or, for the unterminated quote, the
    # record is bad for a reason other than its size).
    path = hi.write_huge_record(tmp_path, layout, total=100)
    rows, stats = run(f"SELECT left(a, 20) FROM {layout_call(layout, path)}", LAST_STATS)
    assert "error" not in rows, shown(rows)
    if layout == "csv_unterminated_quote":
        assert rows["rows"] == expected_rows(layout, None), shown(rows)
        assert stats_of(stats)["rows_nulled"] == 1
    else:
        assert rows["rows"] == expected_rows(layout, "x" * 20), shown(rows)
        assert stats_of(stats)["rows_nulled"] == 0


@pytest.mark.parametrize("layout", ["jsonl", "csv_quoted_cell", "json_array"])
def test_huge_record_layout_agrees_with_duckdb_when_small(layout, tmp_path, run):
    # DuckDB's own readers read the small files of the layouts it has a reader for.
    path = hi.write_huge_record(tmp_path, layout, total=100)
    reader = {"jsonl": "read_json({p}, format := 'newline_delimited')",
              "csv_quoted_cell": "read_csv({p}, header := true, all_varchar := true)",
              "json_array": "read_json({p}, format := 'array')"}[layout].format(p=sql_literal(str(path)))
    ours, theirs = run(f"SELECT a FROM {layout_call(layout, path)}", f"SELECT a FROM {reader}")
    assert "error" not in ours and "error" not in theirs, (shown(ours), shown(theirs))
    assert ours["rows"] == theirs["rows"]


@pytest.mark.parametrize("mode", ["default", "skip_row", "stop"])
@pytest.mark.parametrize("layout", list(hi.HUGE_RECORD_LAYOUTS))
def test_one_huge_record(layout, mode, tmp_path, run):
    path = hi.write_huge_record(tmp_path, layout)
    on_error = None if mode == "default" else mode
    rows, stats, rejects = run(
        f"SELECT left(a, 20) FROM {layout_call(layout, path, on_error=on_error)}", LAST_STATS, LAST_REJECTS)
    if mode == "stop":
        assert_error(rows, "max_record_bytes", path.name)
        return
    if mode == "default" and error_matches(rows, RECORD_LIMIT):
        return
    if layout == "xml_row":
        # XML cannot be resynchronized inside an element (docs/errors.md
        # "Limits"): the huge row is one bad record that stands for the
        # rest of the file, and says so, so nothing is lost in silence.
        # (Column `a` came only from the lost row: count the rows instead.)
        rows, stats, rejects = run(
            f"SELECT count(*) FROM {layout_call(layout, path, on_error=on_error)}", LAST_STATS, LAST_REJECTS)
        assert rows["rows"] == [[0]], shown(rows)
        assert len(rejects.get("rows", [])) == 1, shown(rejects)
        assert "max_record_bytes" in rejects["rows"][0][3], shown(rejects)
        assert "the rest of the file is not read" in rejects["rows"][0][3], shown(rejects)
        counters = stats_of(stats)
        assert counters["rows_read"] == 1, counters
        return
    # Only the good record can give the scan its column `a`.
    assert not error_matches(rows, (('"a" not found',),)), (
        f"{layout} ({mode}): the good record after the huge one was not read (no column a): {shown(rows)}\n"
        f"rejects: {shown(rejects)}")
    assert "error" not in rows, f"{layout} ({mode}): {shown(rows)}"
    counters = stats_of(stats)
    if mode == "skip_row":
        assert rows["rows"] == [["ok"]], shown(rows)
        assert (counters["rows_read"], counters["rows_skipped"]) == (2, 1), counters
    else:
        # on_error not given is emit_null_row (docs/errors.md): the bad
        # record is a NULL row beside the good one.
        assert rows["rows"] == expected_rows(layout, None), shown(rows)
        assert (counters["rows_read"], counters["rows_nulled"]) == (2, 1), counters
    # The one reject is the huge record, and says why.
    assert len(rejects.get("rows", [])) == 1, shown(rejects)
    assert "max_record_bytes" in rejects["rows"][0][3], shown(rejects)


# --- 3-5. Parquet files that lie ----------------------------------------------------

# What each hostile file may give. "words": what an error must contain
# (the file's name stands for "an error naming the file"); "scan_rows": the
# rows a scan may return instead (None: it must fail); "probe_rows_read":
# the probe's row count when it succeeds; "footer_ok": whether
# sanitize_registry_from_parquet may answer NULL (the footer is sound
# Thrift that carries no registry).
PARQUET_CASES = {
    # Correct result: no rows, and one nested column (what read_parquet gives).
    "deep_1500": {"words": ("levels",), "scan_rows": [], "probe_rows_read": 0, "footer_ok": True},
    "deep_20000": {"words": ("levels",), "scan_rows": [], "probe_rows_read": 0, "footer_ok": True},
    "dictionary_lie": {"words": ("{name}",), "scan_rows": [[42]], "probe_rows_read": 1, "footer_ok": True},
    "leafless_2pow40_rows": {"words": ("column",), "scan_rows": None, "probe_rows_read": None, "footer_ok": True},
    "negative_rows": {"words": ("{name}",), "scan_rows": None, "probe_rows_read": None, "footer_ok": True},
    "footer_length_lie": {"words": ("{name}",), "scan_rows": None, "probe_rows_read": None, "footer_ok": False},
    "schema_count_lie": {"words": ("{name}",), "scan_rows": None, "probe_rows_read": None, "footer_ok": False},
}


def hostile_parquet(directory: Path, case: str, name: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return hi.HOSTILE_PARQUET[case](directory / (name or f"{case}.parquet"))


def case_words(case: str, path: Path) -> tuple:
    return tuple(w.format(name=path.name) for w in PARQUET_CASES[case]["words"])


@pytest.mark.parametrize("function", ["sanitize_parquet", "sanitize", "sanitize_probe",
                                      "sanitize_registry_from_parquet"])
@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_lying_parquet(case, function, tmp_path, run):
    path = hostile_parquet(tmp_path, case)
    expect = PARQUET_CASES[case]
    words = case_words(case, path)
    if function == "sanitize_registry_from_parquet":
        (result,) = run(f"SELECT {call(function, path)}")
        if not error_matches(result, (words, (path.name,))):
            assert expect["footer_ok"], f"expected an error naming the file: {shown(result)}"
            assert result.get("rows") == [[None]], f"expected NULL (no registry) or an error naming the file: {shown(result)}"
        return
    if function == "sanitize_probe":
        (result,) = run(f"SELECT stats FROM {call(function, path, input_format='parquet')}")
        if error_matches(result, (words,)):
            return
        assert expect["probe_rows_read"] is not None, f"expected an error containing {words}: {shown(result)}"
        assert "error" not in result, f"the error lacks {words}: {shown(result)}"
        assert probe_stats(result)["rows_read"] == expect["probe_rows_read"], shown(result)
        return
    params = {"input_format": "parquet"} if function == "sanitize" else {}
    # The trailing constant keeps the select list valid when a scan that
    # should have failed has no data column at all (DuckDB refuses an empty
    # one, which would hide what the scan did).
    (result,) = run(f"SELECT * EXCLUDE ({ETL_COLUMNS}), 0 AS end_of_row FROM {call(function, path, **params)}")
    if error_matches(result, (words,)):
        return
    assert expect["scan_rows"] is not None, f"expected an error containing {words}: {shown(result)}"
    assert "error" not in result, f"the error lacks {words}: {shown(result)}"
    assert [r[:-1] for r in result["rows"]] == expect["scan_rows"], shown(result)


def test_honest_dictionary_parquet_reads_as_duckdb_reads_it(tmp_path, run):
    # The same file as dictionary_lie with the true count: the generator
    # writes valid Parquet, so the lie is the only thing wrong with the other.
    path = hi.dictionary_parquet(tmp_path / "honest.parquet")
    ours, theirs = run(f"SELECT v FROM sanitize_parquet({sql_literal(str(path))})",
                       f"SELECT v FROM read_parquet({sql_literal(str(path))})")
    assert theirs.get("rows") == [[42]], shown(theirs)
    assert ours.get("rows") == [[42]], shown(ours)
    assert pq.read_table(path).to_pylist() == [{"v": 42}]


def test_deep_1500_parquet_is_valid_for_duckdb(tmp_path, run):
    # The reference for deep_1500: DuckDB reads it as no rows of one nested
    # column. (At 20,000 levels DuckDB 1.5.6's own reader overflows its
    # stack, so that file has no reference.)
    path = hostile_parquet(tmp_path, "deep_1500")
    (theirs,) = run(f"SELECT count(*) FROM read_parquet({sql_literal(str(path))})", load=False)
    assert theirs.get("rows") == [[0]], shown(theirs)


@pytest.mark.parametrize("case", ["leafless_2pow40_rows", "negative_rows"])
def test_duckdb_refuses_the_row_count_lies(case, tmp_path, run):
    # The premise of the expected errors: DuckDB's own reader refuses them too.
    path = hostile_parquet(tmp_path, case)
    (theirs,) = run(f"SELECT count(*) FROM read_parquet({sql_literal(str(path))})", load=False)
    assert "error" in theirs, shown(theirs)


# --- 6. a million columns ---------------------------------------------------------


@pytest.mark.parametrize("function", ["sanitize_jsonl", "sanitize_probe"])
def test_a_million_top_level_keys(function, tmp_path, run):
    path = hi.write_wide_object(tmp_path / "wide.jsonl")
    params = {"input_format": "jsonl"} if function == "sanitize_probe" else {}
    (result,) = run(f"SELECT count(*) FROM {call(function, path, **params)}")
    assert_error(result, "max_columns", "map_paths")


def test_a_million_keys_under_a_map_path_read(tmp_path, run):
    # What the max_columns error advises works: the same keys one level down,
    # named by map_paths, are one MAP column.
    line = '{"payload":{' + ",".join(f'"k{i}":0' for i in range(1_000_000)) + "}}\n"
    path = tmp_path / "wide_map.jsonl"
    path.write_text(line)
    (result,) = run(f"SELECT cardinality(payload) FROM {call('sanitize_jsonl', path, map_paths=['payload'])}")
    assert result.get("rows") == [[1_000_000]], shown(result)


# --- 7. lone surrogate escapes -------------------------------------------------------

SURROGATE_FORMATS = ["jsonl", "json", "json_array"]


@pytest.mark.parametrize("mode", ["default", "emit_null_row", "skip_row", "stop"])
@pytest.mark.parametrize("fmt", SURROGATE_FORMATS)
def test_lone_surrogates_are_bad_records(fmt, mode, tmp_path, run):
    path = hi.write_surrogates(tmp_path, fmt)
    on_error = None if mode == "default" else mode
    rows, rejects = run(f"SELECT * EXCLUDE ({ETL_COLUMNS}) FROM {call(FUNCTIONS[fmt], path, on_error=on_error)}",
                        LAST_REJECTS)
    bad = [i for i, (_, is_bad, _) in enumerate(hi.SURROGATE_RECORDS) if is_bad]
    if mode == "stop":
        assert_error(rows, "bad record", path.name)
        return
    if mode == "default":
        # Most of the records are bad: without on_error that is an error.
        assert_error(rows, f"most records read were bad ({len(bad)} of {len(hi.SURROGATE_RECORDS)})", "on_error")
        return
    assert "error" not in rows, shown(rows)
    # Never a silent replacement character, in a value or in a column name.
    assert "\ufffd" not in json.dumps(rows["columns"] + rows["rows"], ensure_ascii=False), shown(rows)
    assert rows["columns"] == ["a"], shown(rows)
    if mode == "skip_row":
        expected = [[v] for _, is_bad, v in hi.SURROGATE_RECORDS if not is_bad]
        action = "row_skipped"
    else:
        expected = [[v] for _, _, v in hi.SURROGATE_RECORDS]
        action = "row_nulled"
    assert rows["rows"] == expected, shown(rows)
    assert [r[:3] for r in rejects["rows"]] == [[i, "bad_encoding", action] for i in bad], shown(rejects)


# --- 8. a partition template that climbs out of the prefixes ------------------------

TRAVERSING_TEMPLATES = [
    "../../x/d={yyyy}{mm}{dd}",
    "d={yyyy}{mm}{dd}/../../../x",
    "y={yyyy}/../../x/d={mm}{dd}",
]


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("function", ["sanitize_pipeline", "sanitize_partitions"])
@pytest.mark.parametrize("template", TRAVERSING_TEMPLATES)
def test_partition_template_cannot_leave_the_prefixes(template, function, tmp_path, run):
    work = tmp_path / "w"
    source, output = work / "bronze" / "events", work / "silver" / "events"
    output.mkdir(parents=True)
    filled = template.replace("{yyyy}", "2026").replace("{mm}", "07").replace("{dd}", "01")
    # Data where the climbing template lands, and the directories the kernel
    # walks through on the way, so that a run that follows the template
    # really reads (and writes) outside the prefixes.
    hi.write_jsonl(Path(os.path.normpath(source / filled)) / "events.jsonl", [{"id": 1}])
    parts = Path(filled).parts
    for i in range(1, len(parts)):
        if parts[i] == ".." and parts[i - 1] != "..":
            (source / Path(*parts[:i])).mkdir(parents=True, exist_ok=True)
            (output / Path(*parts[:i])).mkdir(parents=True, exist_ok=True)
    before = files_under(work)
    params = dict(start_date="2026-07-01", end_date="2026-07-01", input_format="jsonl", partition_template=template)
    if function == "sanitize_pipeline":
        sql = (f"SELECT status, output_path FROM sanitize_pipeline({sql_literal(str(source))}, "
               f"{sql_literal(str(output))}" + "".join(f", {k} := {sql_value(v)}" for k, v in params.items()) + ")")
    else:
        sql = f"SELECT source_path, output_path, status FROM {call(function, source, output_prefix=str(output), **params)}"
    (result,) = run(sql)
    new = files_under(work) - before
    outside = sorted(p for p in new if not (work / p).resolve().is_relative_to(output.resolve()))
    assert not outside, f"files written outside the output prefix: {outside}; result: {shown(result)}"
    assert_error(result, "..")


# --- 9. every file-opening function over a hostile file -----------------------------

DAYS = ["2026-07-01", "2026-07-02", "2026-07-03"]


def day_dir(root: Path, day: str) -> Path:
    return root / f"year={day[:4]}" / f"month={day[5:7]}" / f"date={day}"


def bomb_lake(tmp_path: Path) -> Path:
    """Three daily partitions of JSON Lines; the middle one is a gzip bomb."""
    lake = tmp_path / "bronze"
    hi.write_jsonl(day_dir(lake, DAYS[0]) / "events.jsonl", [{"id": 1}])
    hi.write_bomb(day_dir(lake, DAYS[1]) / "events.jsonl.gz", "gzip", "zeros")
    hi.write_jsonl(day_dir(lake, DAYS[2]) / "events.jsonl", [{"id": 3}])
    return lake


def key(day: str) -> str:
    return f"year={day[:4]}/month={day[5:7]}/date={day}"


def test_partitions_lists_a_bomb_without_reading_it(tmp_path, run):
    lake = bomb_lake(tmp_path)
    bomb = day_dir(lake, DAYS[1]) / "events.jsonl.gz"
    (result,) = run(f"SELECT partition_key, files, bytes, status FROM "
                    f"{call('sanitize_partitions', lake, start_date=DAYS[0], end_date=DAYS[2], input_format='jsonl')}")
    assert "error" not in result, shown(result)
    sizes = [(day_dir(lake, d) / n).stat().st_size for d, n in
             zip(DAYS, ["events.jsonl", "events.jsonl.gz", "events.jsonl"])]
    assert result["rows"] == [[key(d), 1, s, "ready"] for d, s in zip(DAYS, sizes)], shown(result)
    assert bomb.stat().st_size == sizes[1]


def pipeline_sql(source: Path, output: Path, **params) -> str:
    named = "".join(f", {k} := {sql_value(v)}" for k, v in params.items() if v is not None)
    return (f"SELECT partition_key, status, rows_read, rows_written, rows_skipped, error FROM sanitize_pipeline("
            f"{sql_literal(str(source))}, {sql_literal(str(output))}, start_date := '{DAYS[0]}', "
            f"end_date := '{DAYS[2]}'{named})")


def outputs(silver: Path) -> list[str]:
    return sorted(str(p.relative_to(silver)) for p in silver.rglob("*.parquet"))


@pytest.mark.parametrize("mode", ["default", "skip_row", "stop"])
def test_pipeline_over_a_bomb_partition(mode, tmp_path, run):
    lake, silver = bomb_lake(tmp_path), tmp_path / "silver"
    on_error = None if mode == "default" else mode
    (result,) = run(pipeline_sql(lake, silver, input_format="jsonl", on_error=on_error))
    written = outputs(silver)
    bomb_out = [p for p in written if f"date={DAYS[1]}" in p]
    if mode == "stop":
        assert_error(result, "max_record_bytes", key(DAYS[1]))
        assert [p for p in written if f"date={DAYS[0]}" in p], f"the partition before the bomb is not complete: {written}"
        assert not bomb_out, written
        return
    assert "error" not in result, f"bad input must not fail the run under {mode}: {shown(result)}"
    by_key = {r[0]: r for r in result["rows"]}
    assert list(by_key) == [key(d) for d in DAYS], shown(result)
    for d in (DAYS[0], DAYS[2]):
        assert by_key[key(d)][1:5] == ["written", 1, 1, 0], shown(result)
    _, status, rows_read, rows_written, rows_skipped, error = by_key[key(DAYS[1])]
    if status == "failed":
        assert "max_record_bytes" in (error or ""), shown(result)
        assert not bomb_out, written
    else:
        assert status == "written", shown(result)
        assert rows_read == 1, shown(result)
        if mode == "skip_row":
            assert (rows_written, rows_skipped) == (0, 1), shown(result)
        else:
            assert (rows_written, rows_skipped) == (1, 0), shown(result)


@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_pipeline_over_a_lying_parquet_partition(case, tmp_path, run):
    lake, silver = tmp_path / "bronze", tmp_path / "silver"
    hi.dictionary_parquet(day_dir(lake, DAYS[0]) / "events.parquet", value=1)
    # Its own name, so that an error naming it cannot be about the others.
    hostile = hostile_parquet(day_dir(lake, DAYS[1]), case)
    hi.dictionary_parquet(day_dir(lake, DAYS[2]) / "events.parquet", value=3)
    (result,) = run(pipeline_sql(lake, silver, input_format="parquet"))
    words = case_words(case, hostile)
    if error_matches(result, (words,)):
        return
    assert "error" not in result, f"expected a report, or an error containing {words}: {shown(result)}"
    by_key = {r[0]: r for r in result["rows"]}
    assert list(by_key) == [key(d) for d in DAYS], shown(result)
    assert by_key[key(DAYS[0])][1:4] == ["written", 1, 1], shown(result)
    _, status, rows_read, rows_written, _, error = by_key[key(DAYS[1])]
    if status == "failed":
        assert all(w in (error or "") for w in words), f"the failed partition's error lacks {words}: {shown(result)}"
    else:
        expected_rows = PARQUET_CASES[case]["scan_rows"]
        assert expected_rows is not None, f"{case} must not be written: {shown(result)}"
        assert (status, rows_written) == ("written", len(expected_rows)), shown(result)


@pytest.mark.parametrize("case", list(PARQUET_CASES))
def test_latest_registry_over_a_lying_newest_partition(case, tmp_path, run):
    silver = tmp_path / "silver"
    good = day_dir(silver, DAYS[0]) / "part_20260701.parquet"
    good.parent.mkdir(parents=True)
    source = hi.write_jsonl(tmp_path / "day1.jsonl", [{"id": 1}])
    hostile = hostile_parquet(day_dir(silver, DAYS[1]), case)
    setup_reg, setup_copy, result = run(
        f"SET VARIABLE reg = (SELECT schema_registry FROM sanitize_jsonl({sql_literal(str(source))}) "
        "WHERE schema_registry IS NOT NULL)",
        f"COPY (SELECT 1 AS id) TO {sql_literal(str(good))} "
        "(FORMAT parquet, KV_METADATA {'schema_sanitizer.registry': getvariable('reg')})",
        f"SELECT partition_key, path, registry IS NOT NULL FROM {call('sanitize_latest_registry', silver)}",
    )
    assert "error" not in setup_reg and "error" not in setup_copy, (shown(setup_reg), shown(setup_copy))
    if error_matches(result, (case_words(case, hostile), (hostile.name,))):
        return
    # Passed over: the newest partition carries no registry (docs/registry.md).
    assert "error" not in result, f"expected the older registry, or an error naming {hostile.name}: {shown(result)}"
    assert [r[0] for r in result["rows"]] == [key(DAYS[0])], shown(result)
    assert result["rows"][0][1].endswith(good.name) and result["rows"][0][2] is True, shown(result)
