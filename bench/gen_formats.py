#!/usr/bin/env python3
"""Seeded generators of the benchmark's events as CSV, one JSON array and XML.

The events are the kind gen_jsonl.py writes (ints, floats, strings, Booleans,
ISO timestamps as strings, tag lists, nested device/geo objects, nulls, text
that needs escaping), laid out the way each format allows:

- csv: flat, one header line, comma-delimited, RFC 4180 quoting (some notes
  hold a quote, a comma, a tab or a line break inside a quoted cell); nested
  fields are flattened (device_os, geo_city, ...), the tag list is one
  "a|b" cell, a null is an empty unquoted cell.
- json_array: exactly gen_jsonl.py's rows (same seed, same rows), as the
  elements of one top-level array, one element per line.
- xml: <events><event id="..."><user>..</user>...<tags><tag>..</tag>...</tags>
  <device os=".." version=".."><browser>..</browser><screen w=".." h=".."
  density=".."/></device><geo>..<address>..</address></geo>...</event>...</events>;
  a null is a missing element, an empty list an empty element (<tags/>).

The output depends only on the format, the seed and the size (or row count):
the same arguments write the same bytes, and a smaller size writes a prefix of
the rows of a larger one. A size-limited file ends at the first row that
reaches the size, plus the format's closing text.

Speed (the benchmark generates 300 MB): the csv and xml rows draw integers as
int(rng.random() * n), several times faster than rng.randrange(n) (pure
Python) and as deterministic, and take tag lists from a seeded pool of
TAG_POOL lists instead of calling rng.sample per row. On the 2-vCPU benchmark
machine, with a compiler running beside it: csv 13-15 MB/s, json_array (which
is gen_jsonl) about 19 MB/s, xml 24-33 MB/s.

Usage: gen_formats.py {csv,json_array,xml} (--rows N | --size-mb M) [--seed S] --out PATH
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import random
import sys
import time
from xml.sax.saxutils import escape as _xml_escape

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_jsonl  # noqa: E402

EVENT_TYPES = gen_jsonl.EVENT_TYPES
OSES = gen_jsonl.OSES
BROWSERS = gen_jsonl.BROWSERS
COUNTRIES = gen_jsonl.COUNTRIES
CITIES = gen_jsonl.CITIES
STREETS = gen_jsonl.STREETS
TAGS = gen_jsonl.TAGS
# gen_jsonl's notes plus one with a line break (a quoted multi-line CSV cell)
# and one with XML metacharacters.
NOTES = gen_jsonl.NOTES + ["line one\nline two", "a <b> & 'c' > d"]

BASE_TS = int(_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc).timestamp())
BLOCK_BYTES = 4 << 20
ROWS_PER_BLOCK = 256
TAG_POOL = 4096  # tag lists are drawn from a seeded pool: rng.sample per row is slow


def _tag_pool(rng: random.Random, fmt) -> list[str]:
    """TAG_POOL tag lists of 0-4 distinct tags, each formatted by fmt(list)."""
    return [fmt(rng.sample(TAGS, rng.randrange(5))) for _ in range(TAG_POOL)]


def _csv_cell(s: str) -> str:
    if any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def _xml_text(s: str) -> str:
    return _xml_escape(s, {'"': "&quot;"})


class _Clock:
    """Timestamps that advance 0-3 s per row; strftime is cached per second."""

    def __init__(self, rand) -> None:
        self.ts = BASE_TS
        self.cache: dict[int, str] = {}
        self.rand = rand

    def next(self) -> str:
        self.ts += int(self.rand() * 4)
        t = self.cache.get(self.ts)
        if t is None:
            if len(self.cache) > 4096:
                self.cache.clear()
            t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.ts))
            self.cache[self.ts] = t
        return t


CSV_HEADER = (
    "event_id,user_id,session_id,event_type,ts,amount,quantity,is_test,referrer,tags,"
    "device_os,device_version,device_browser,screen_w,screen_h,screen_density,"
    "geo_country,geo_city,geo_lat,geo_lon,geo_street,geo_zip,note\n"
)


def _csv_rows(seed: int):
    """Yield lists of CSV rows (strings), ROWS_PER_BLOCK at a time."""
    rng = random.Random(seed)
    rand = rng.random
    clock = _Clock(rand)
    n_bro, n_notes = len(BROWSERS), len(NOTES)
    tag_pool = _tag_pool(rng, "|".join)
    c_notes = [_csv_cell(n) for n in NOTES]
    c_cities = [_csv_cell(c) for c in CITIES]
    c_streets = [_csv_cell(s) for s in STREETS]
    i = 0
    while True:
        rows = []
        for i in range(i + 1, i + 1 + ROWS_PER_BLOCK):  # noqa: B020
            t = clock.next()
            referrer = "" if rand() < 0.10 else f"https://ex.com/p/{int(rand() * 1000)}"
            note = "" if rand() < 0.30 else c_notes[int(rand() * n_notes)]
            bro = "" if rand() < 0.05 else BROWSERS[int(rand() * n_bro)]
            tags = tag_pool[int(rand() * TAG_POOL)]
            rows.append(
                f"{i},{1 + int(rand() * 4_999_999)},{rng.getrandbits(64):016x},{EVENT_TYPES[int(rand() * 8)]},"
                f"{t},{int(rand() * 1_000_000) / 100:.2f},{1 + int(rand() * 19)},"
                f"{'true' if rand() < 0.02 else 'false'},{referrer},{tags},"
                f"{OSES[int(rand() * 5)]},{8 + int(rand() * 10)},{bro},"
                f"{320 + int(rand() * 3521)},{480 + int(rand() * 1681)},{(10 + int(rand() * 30)) / 10:.1f},"
                f"{COUNTRIES[int(rand() * 10)]},{c_cities[int(rand() * 10)]},"
                f"{rand() * 180 - 90:.5f},{rand() * 360 - 180:.5f},"
                f"{c_streets[int(rand() * 7)]},{int(rand() * 100000):05d},{note}\n"
            )
        yield rows


def _xml_tags(tags: list[str]) -> str:
    return "<tags>" + "".join(f"<tag>{t}</tag>" for t in tags) + "</tags>" if tags else "<tags/>"


def _xml_rows(seed: int):
    """Yield lists of <event> elements (strings), ROWS_PER_BLOCK at a time."""
    rng = random.Random(seed)
    rand = rng.random
    clock = _Clock(rand)
    n_bro, n_notes = len(BROWSERS), len(NOTES)
    tag_pool = _tag_pool(rng, _xml_tags)
    x_notes = [f"<note>{_xml_text(n)}</note>" for n in NOTES]
    x_cities = [_xml_text(c) for c in CITIES]
    x_streets = [_xml_text(s) for s in STREETS]
    i = 0
    while True:
        rows = []
        for i in range(i + 1, i + 1 + ROWS_PER_BLOCK):  # noqa: B020
            t = clock.next()
            referrer = "" if rand() < 0.10 else f"<referrer>https://ex.com/p/{int(rand() * 1000)}</referrer>"
            note = "" if rand() < 0.30 else x_notes[int(rand() * n_notes)]
            bro = "" if rand() < 0.05 else f"<browser>{BROWSERS[int(rand() * n_bro)]}</browser>"
            tags = tag_pool[int(rand() * TAG_POOL)]
            m = int(rand() * 6)
            scores = (
                "<scores>" + "".join(f"<score>{int(rand() * 1050) - 50}</score>" for _ in range(m)) + "</scores>"
                if m
                else "<scores/>"
            )
            rows.append(
                f'<event id="{i}"><user>{1 + int(rand() * 4_999_999)}</user>'
                f"<session>{rng.getrandbits(64):016x}</session><type>{EVENT_TYPES[int(rand() * 8)]}</type>"
                f"<ts>{t}</ts><amount>{int(rand() * 1_000_000) / 100:.2f}</amount>"
                f"<quantity>{1 + int(rand() * 19)}</quantity>"
                f"<is_test>{'true' if rand() < 0.02 else 'false'}</is_test>{referrer}{tags}{scores}"
                f'<device os="{OSES[int(rand() * 5)]}" version="{8 + int(rand() * 10)}">{bro}'
                f'<screen w="{320 + int(rand() * 3521)}" h="{480 + int(rand() * 1681)}" density="{(10 + int(rand() * 30)) / 10:.1f}"/>'
                f"</device><geo><country>{COUNTRIES[int(rand() * 10)]}</country><city>{x_cities[int(rand() * 10)]}</city>"
                f"<lat>{rand() * 180 - 90:.5f}</lat><lon>{rand() * 360 - 180:.5f}</lon>"
                f"<address><street>{x_streets[int(rand() * 7)]}</street><zip>{int(rand() * 100000):05d}</zip></address>"
                f"</geo>{note}</event>\n"
            )
        yield rows


def _write_rows(out, blocks, header: str, footer: str, rows: int | None, size_bytes: int | None):
    """Write header, the rows of `blocks` (each row ends with its newline), footer.

    Return (rows, bytes). With size_bytes, stop at the first row with which
    header + rows reach size_bytes - len(footer), so the file is about
    size_bytes long.
    """
    if (rows is None) == (size_bytes is None):
        raise ValueError("exactly one of rows / size_bytes")
    hb, fb = header.encode(), footer.encode()
    out.write(hb)
    written = len(hb)
    target = None if size_bytes is None else max(0, size_bytes - len(fb))
    n = 0
    pending: list[bytes] = []
    pending_len = 0
    for block in blocks:
        if rows is not None:
            if n >= rows:
                break
            block = block[: rows - n]
        data = "".join(block).encode("utf-8")
        if target is not None and written + pending_len + len(data) >= target:
            # Keep the rows of this block up to the first that reaches the target.
            acc = written + pending_len
            for j, r in enumerate(block):
                acc += len(r.encode("utf-8"))
                if acc >= target:
                    break
            data = "".join(block[: j + 1]).encode("utf-8")
            pending.append(data)
            pending_len += len(data)
            n += j + 1
            break
        pending.append(data)
        pending_len += len(data)
        n += len(block)
        if pending_len >= BLOCK_BYTES:
            out.write(b"".join(pending))
            written += pending_len
            pending, pending_len = [], 0
    out.write(b"".join(pending))
    written += pending_len
    out.write(fb)
    return n, written + len(fb)


def generate(fmt: str, out, seed: int, rows: int | None = None, size_bytes: int | None = None) -> tuple[int, int]:
    """Write `fmt` rows to the binary file object `out`; return (rows, bytes)."""
    if fmt == "csv":
        return _write_rows(out, _csv_rows(seed), CSV_HEADER, "", rows, size_bytes)
    if fmt == "xml":
        return _write_rows(
            out, _xml_rows(seed), '<?xml version="1.0" encoding="UTF-8"?>\n<events>\n', "</events>\n", rows, size_bytes
        )
    if fmt == "json_array":
        return _json_array(out, seed, rows, size_bytes)
    raise ValueError(f"unknown format {fmt!r}")


class _ArraySink:
    """Turns gen_jsonl's newline-terminated rows into array elements.

    Every "\\n" in gen_jsonl's output ends a row (strings escape newlines),
    so ",\\n" between rows is a byte replacement. The separator goes before
    each row but the first, so no trailing comma is ever written.
    """

    def __init__(self, out) -> None:
        self.out = out
        self.first = True
        self.bytes = 0

    def write(self, b: bytes) -> None:
        if not b:
            return
        assert b.endswith(b"\n"), "gen_jsonl writes whole rows"
        body = b[:-1].replace(b"\n", b",\n")
        data = body if self.first else b",\n" + body
        self.first = False
        self.out.write(data)
        self.bytes += len(data)


def _json_array(out, seed: int, rows: int | None, size_bytes: int | None) -> tuple[int, int]:
    head, foot = b"[\n", b"\n]\n"
    out.write(head)
    sink = _ArraySink(out)
    # Each row but the first gains one byte (its comma), so the array is about
    # 0.2% larger than size_bytes (rows are about 500 bytes).
    target = None if size_bytes is None else max(1, size_bytes - len(head) - len(foot))
    n, _ = gen_jsonl.generate(sink, seed, rows=rows, size_bytes=target)
    out.write(foot)
    return n, len(head) + sink.bytes + len(foot)


def generate_file(fmt: str, path: str, seed: int, rows: int | None = None, size_mb: float | None = None):
    """Write to `path` atomically (tmp file + rename); return (rows, bytes)."""
    size_bytes = None if size_mb is None else int(size_mb * 1_000_000)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb", buffering=BLOCK_BYTES) as f:
        result = generate(fmt, f, seed, rows=rows, size_bytes=size_bytes)
    os.replace(tmp, path)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("format", choices=["csv", "json_array", "xml"])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rows", type=int, help="number of rows")
    g.add_argument("--size-mb", type=float, help="target size in MB (10^6 bytes)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True, help="output path ('-' for stdout)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    if a.out == "-":
        size_bytes = None if a.size_mb is None else int(a.size_mb * 1_000_000)
        rows, nbytes = generate(a.format, sys.stdout.buffer, a.seed, rows=a.rows, size_bytes=size_bytes)
    else:
        rows, nbytes = generate_file(a.format, a.out, a.seed, rows=a.rows, size_mb=a.size_mb)
    dt = time.perf_counter() - t0
    print(f"wrote {rows} rows, {nbytes / 1e6:.1f} MB in {dt:.1f} s ({nbytes / 1e6 / dt:.0f} MB/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
