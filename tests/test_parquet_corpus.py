"""Parquet that others ship: no read may kill the host, and every file that
DuckDB reads gives the same rows through sanitize_parquet (the row-count
invariant of docs/formats.md, over every Parquet fixture in the repository).
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, sql_literal

CORPUS = REPO_ROOT / "test" / "data" / "parquet_fuzz"
ADDRESS_SPACE_LIMIT = 2 << 30  # 2 GiB, as a container with strict memory accounting

CHILD = r"""
import duckdb, json, sys
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute("SET threads = 1")
con.execute("LOAD " + sys.argv[1])
for path in sys.argv[2:]:
    print(json.dumps({"start": path}), flush=True)
    try:
        n = con.execute("SELECT count(*) FROM sanitize_parquet(?)", [path]).fetchone()[0]
        print(json.dumps({"file": path, "rows": n}), flush=True)
    except duckdb.Error as e:
        print(json.dumps({"file": path, "error": str(e)}), flush=True)
"""


def corpus_files(tmp_path: Path) -> list[str]:
    """Every corpus file, linked under a .parquet name (the extension check)."""
    links = []
    for i, f in enumerate(sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix not in {".md", ".txt"})):
        link = tmp_path / f"{i:03d}_{f.stem}.parquet"
        link.symlink_to(f)
        links.append(str(link))
    return links


def test_no_corrupt_parquet_file_kills_the_process_under_a_2_gib_limit(extension_file, tmp_path, subprocess_env):
    files = corpus_files(tmp_path)
    assert len(files) > 100, "the fuzz corpus is missing"

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))

    proc = subprocess.run(
        [sys.executable, "-c", CHILD, sql_literal(str(extension_file)), *files],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=subprocess_env,
        timeout=600,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    started = [l["start"] for l in lines if "start" in l]
    assert proc.returncode == 0, (
        f"the process died ({proc.returncode}) reading {started[-1] if started else '?'}: {proc.stderr[-2000:]}"
    )
    results = [l for l in lines if "file" in l]
    assert len(results) == len(files)
    for r in results:
        if "error" in r:
            message = r["error"]
            assert "internal error" not in message, message
            assert Path(r["file"]).name in message, f"the error does not name the file: {message}"
            assert "panicked" not in proc.stderr
    # Some fuzzed files are still readable: they must give their rows.
    assert any("rows" in r for r in results)


def parquet_fixtures() -> list[Path]:
    return sorted(p for p in (REPO_ROOT / "test" / "data").rglob("*.parquet") if CORPUS not in p.parents)


# Files a reference reader reads that we refuse on purpose, with the reason.
DELIBERATE_ERRORS = {
    # pyarrow does not validate strings; DuckDB refuses them, and so do we
    # (docs/formats.md, "Parquet"): an error naming the file.
    "invalid_utf8.parquet": "not valid UTF-8",
    # Two map keys of 1 GiB each in one 2 GiB brotli page: past the page
    # limit max_record_bytes sets (docs/errors.md "Limits"), refused before
    # anything is decompressed; read_parquet takes 45 s and 4 GB for it.
    "large_string_map.brotli.parquet": "more than max_record_bytes allows for a page",
}


def reference_rows(path: Path) -> int | None:
    """The rows DuckDB reads from the file, or pyarrow when DuckDB cannot
    (DuckDB 1.5 refuses an empty STRUCT()); None when neither reads it."""
    try:
        # Every value, not a bare count(*): DuckDB counts without decoding
        # the pages (the row as text forces every column to be read).
        return (
            duckdb.connect()
            .execute("SELECT count(*) FROM read_parquet(?) AS t WHERE t::VARCHAR IS NOT NULL", [str(path)])
            .fetchone()[0]
        )
    except duckdb.Error:
        pass
    try:
        import pyarrow.parquet as pq

        return pq.read_table(path).num_rows
    except Exception:  # noqa: BLE001 - any failure means "pyarrow does not read it"
        return None


@pytest.mark.parametrize("path", parquet_fixtures(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_parquet_fixture_gives_the_rows_duckdb_reads(con, path):
    expected = None if path.name in DELIBERATE_ERRORS else reference_rows(path)
    if expected is None:
        # A file DuckDB and pyarrow refuse too (corrupt on purpose, or
        # invalid UTF-8): ours must refuse it with an error naming it.
        with pytest.raises(duckdb.Error) as err:
            con.execute("SELECT * FROM sanitize_parquet(?)", [str(path)]).fetchall()
        assert path.name in str(err.value)
        return
    got = len(con.execute("SELECT * FROM sanitize_parquet(?)", [str(path)]).fetchall())
    assert got == expected, f"{path}: sanitize_parquet gave {got} rows, the reference reader {expected}"
    # And the probe (which reads every row) agrees.
    stats = con.execute(
        "SELECT stats FROM sanitize_probe(?, input_format := 'parquet')", [str(path)]
    ).fetchone()[0]
    assert json.loads(stats)["rows_read"] == expected
