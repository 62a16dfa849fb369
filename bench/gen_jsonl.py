#!/usr/bin/env python3
"""Seeded generator of "clean" JSON Lines events for the benchmark.

Every row has the same keys with the same JSON types (only a few keys are
occasionally null), so a reader infers one stable schema:

    event_id        int (row number, strictly increasing)
    user_id         int
    session_id      string (16 hex chars)
    event_type      string (small vocabulary)
    ts              string, ISO 8601 UTC "2026-01-02T03:04:05Z"
    amount          float (two decimals, always written with a fraction)
    quantity        int
    is_test         bool
    referrer        string, null in ~10% of rows
    tags            list of strings (0-4 items)
    scores          list of ints (0-5 items)
    device          object: os, version (int), browser (string or null ~5%),
                    screen: object {w: int, h: int, density: float}
    geo             object: country, city, lat (float), lon (float),
                    address: object {street: string, zip: string}
    note            string with spaces/punctuation/non-ASCII (escaped), null ~30%

Output is a pure function of (--seed, --rows | --size-mb): the same arguments
write the same bytes. Sizes are decimal megabytes (1 MB = 1,000,000 bytes);
with --size-mb the generator stops after the first row that reaches the size.

Rows are rendered from pre-encoded JSON fragments with one f-string per row
and written in ~4 MB blocks: 14-17 MB/s on the 2-core benchmark machine
(300 MB in 18-21 s). Serialising the same rows with json.dumps alone, without
generating any values, costs as much as this whole generator.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import random
import sys
import time

EVENT_TYPES = ["page_view", "click", "add_to_cart", "checkout", "purchase", "search", "signup", "logout"]
OSES = ["ios", "android", "windows", "macos", "linux"]
BROWSERS = ["safari", "chrome", "firefox", "edge", "samsung", "opera"]
COUNTRIES = ["ES", "PT", "FR", "DE", "US", "MX", "AR", "BR", "JP", "IN"]
CITIES = ["Madrid", "Lisboa", "Paris", "Berlin", "New York", "Ciudad de México", "Buenos Aires", "São Paulo", "Tōkyō", "Mumbai"]
STREETS = ["Calle Mayor", "Rua Augusta", "Rue de Rivoli", "Unter den Linden", "5th Avenue", "Av. Reforma", "Av. Corrientes"]
TAGS = ["new", "vip", "promo", "mobile", "returning", "beta", "eu", "us", "latam", "apac", "newsletter", "trial"]
NOTES = [
    "first visit",
    "came from \"newsletter\" link",
    "cart: 3 items, total > 100",
    "niño pidió ayuda — resolved",
    "tab\tseparated\tvalue",
    "path C:\\temp\\x",
    "emoji 🎉 order",
    "plain note",
]

# Pre-encoded JSON literals (json.dumps once, not per row).
_ENC = lambda xs: [json.dumps(x) for x in xs]  # noqa: E731
E_EVENT_TYPES = _ENC(EVENT_TYPES)
E_OSES = _ENC(OSES)
E_BROWSERS = _ENC(BROWSERS) + ["null"]  # index len(BROWSERS) used ~5%
E_COUNTRIES = _ENC(COUNTRIES)
E_CITIES = _ENC(CITIES)
E_STREETS = _ENC(STREETS)
E_NOTES = _ENC(NOTES)
E_TAGS = _ENC(TAGS)

BASE_TS = int(_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc).timestamp())
BLOCK_BYTES = 4 << 20
ROWS_PER_CHECK = 256


def generate(out, seed: int, rows: int | None = None, size_bytes: int | None = None) -> tuple[int, int]:
    """Write rows to the binary file object `out`; return (rows, bytes)."""
    if (rows is None) == (size_bytes is None):
        raise ValueError("exactly one of rows / size_bytes")
    rng = random.Random(seed)
    rand = rng.random
    randrange = rng.randrange
    getrandbits = rng.getrandbits
    sample = rng.sample

    n_tags = len(TAGS)
    n_bro = len(BROWSERS)
    buf: list[str] = []
    buf_len = 0
    written = 0
    i = 0
    limit_rows = rows if rows is not None else 1 << 62
    ts = BASE_TS
    # Timestamps advance by 0-3 s per row; strftime is cached per second.
    ts_cache: dict[int, str] = {}
    while i < limit_rows:
        chunk_end = min(limit_rows, i + ROWS_PER_CHECK)
        lines = []
        for i in range(i, chunk_end):  # noqa: B020
            ts += randrange(4)
            t = ts_cache.get(ts)
            if t is None:
                if len(ts_cache) > 4096:
                    ts_cache.clear()
                t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
                ts_cache[ts] = t
            r = rand()
            referrer = "null" if r < 0.10 else f'"https://ex.com/p/{randrange(1000)}"'
            note = "null" if rand() < 0.30 else E_NOTES[randrange(len(E_NOTES))]
            bro = E_BROWSERS[n_bro if rand() < 0.05 else randrange(n_bro)]
            k = randrange(5)
            tags = ",".join(E_TAGS[j] for j in sample(range(n_tags), k)) if k else ""
            m = randrange(6)
            scores = ",".join(str(randrange(-50, 1000)) for _ in range(m)) if m else ""
            lines.append(
                f'{{"event_id":{i + 1},"user_id":{randrange(1, 5_000_000)},'
                f'"session_id":"{getrandbits(64):016x}","event_type":{E_EVENT_TYPES[randrange(8)]},'
                f'"ts":"{t}","amount":{randrange(0, 1_000_000) / 100:.2f},"quantity":{randrange(1, 20)},'
                f'"is_test":{"true" if rand() < 0.02 else "false"},"referrer":{referrer},'
                f'"tags":[{tags}],"scores":[{scores}],'
                f'"device":{{"os":{E_OSES[randrange(5)]},"version":{randrange(8, 18)},"browser":{bro},'
                f'"screen":{{"w":{randrange(320, 3841)},"h":{randrange(480, 2161)},"density":{randrange(10, 40) / 10:.1f}}}}},'
                f'"geo":{{"country":{E_COUNTRIES[randrange(10)]},"city":{E_CITIES[randrange(10)]},'
                f'"lat":{rand() * 180 - 90:.5f},"lon":{rand() * 360 - 180:.5f},'
                f'"address":{{"street":{E_STREETS[randrange(7)]},"zip":"{randrange(100000):05d}"}}}},'
                f'"note":{note}}}\n'
            )
        i = chunk_end
        block = "".join(lines).encode("utf-8")
        buf.append(block)
        buf_len += len(block)
        if size_bytes is not None and written + buf_len >= size_bytes:
            # Trim to the first row that reaches the size.
            data = b"".join(buf)
            need = size_bytes - written
            cut = data.index(b"\n", need - 1) + 1 if need > 0 else 0
            out.write(data[:cut])
            written += cut
            dropped = data[cut:].count(b"\n")
            return i - dropped, written
        if buf_len >= BLOCK_BYTES:
            out.write(b"".join(buf))
            written += buf_len
            buf, buf_len = [], 0
    if buf:
        out.write(b"".join(buf))
        written += buf_len
    return i, written


def generate_file(path: str, seed: int, rows: int | None = None, size_mb: float | None = None) -> tuple[int, int]:
    """Write to `path` atomically (tmp file + rename); return (rows, bytes)."""
    size_bytes = None if size_mb is None else int(size_mb * 1_000_000)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb", buffering=BLOCK_BYTES) as f:
        result = generate(f, seed, rows=rows, size_bytes=size_bytes)
    os.replace(tmp, path)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--rows", type=int, help="number of rows")
    g.add_argument("--size-mb", type=float, help="target size in MB (10^6 bytes)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", required=True, help="output path ('-' for stdout)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    if a.out == "-":
        size_bytes = None if a.size_mb is None else int(a.size_mb * 1_000_000)
        rows, nbytes = generate(sys.stdout.buffer, a.seed, rows=a.rows, size_bytes=size_bytes)
    else:
        rows, nbytes = generate_file(a.out, a.seed, rows=a.rows, size_mb=a.size_mb)
    dt = time.perf_counter() - t0
    print(f"wrote {rows} rows, {nbytes / 1e6:.1f} MB in {dt:.1f} s ({nbytes / 1e6 / dt:.0f} MB/s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
