"""Generators of hostile inputs for tests/test_hostile_inputs.py.

Everything here is built at test time into a temporary directory: nothing
large is ever committed. The big inputs are decompression bombs made by
repeating one compressed frame: gzip members and zstd frames each
concatenate into one stream (RFC 1952 §2.2, RFC 8878 §3.1), so a ~3 GB
stream costs one compression of a 16 MiB chunk plus a few MB of copying.

The Parquet files are written by hand (the Thrift compact protocol below),
because no writer produces a footer that lies: that is the point of them.
"""
from __future__ import annotations

import gzip
import io
import json
import shutil
import struct
import subprocess
from pathlib import Path

try:  # not pinned: the zstd CLI is the fallback, and without either the zstd cases skip
    import zstandard  # type: ignore
except ImportError:  # pragma: no cover - depends on the machine
    zstandard = None

# One compressed chunk decompresses to this much. 16 MiB of a repeated byte
# compresses to ~16 KB with gzip and ~0.5 KB with zstd, so even a 3 GB
# stream is only a few MB on disk.
CHUNK_BYTES = 16 << 20

# Larger than the 2 GiB address-space limit the readers run under, so a
# reader that holds the stream (or one record of it) whole cannot survive.
BOMB_BYTES = 3_000_000_000
HUGE_RECORD_BYTES = 2_500_000_000


# --- compressed streams ------------------------------------------------------


def zstd_available() -> str | None:
    """None when zstd frames can be written here, else the reason they cannot."""
    if zstandard is not None or shutil.which("zstd"):
        return None
    return "neither the zstandard package nor the zstd command line tool is available to write .zst inputs"


def zstd_frame(data: bytes) -> bytes:
    if zstandard is not None:
        return zstandard.ZstdCompressor(level=19).compress(data)
    proc = subprocess.run(["zstd", "-19", "-q", "-c"], input=data, capture_output=True, check=True)
    return proc.stdout


def compress_frame(data: bytes, codec: str) -> bytes:
    if codec == "gzip":
        # mtime=0: the same bytes every run.
        return gzip.compress(data, compresslevel=9, mtime=0)
    if codec == "zstd":
        return zstd_frame(data)
    raise ValueError(codec)


def repeated_chunk(fill: bytes, size: int = CHUNK_BYTES) -> bytes:
    """`fill` repeated to about `size` bytes, a whole number of times, so
    that chunks written back to back keep the pattern intact."""
    return fill * max(1, size // len(fill))


def write_stream(path: Path, codec: str, prefix: bytes, fill: bytes, total: int, suffix: bytes) -> Path:
    """A compressed stream that decompresses to `prefix`, then `fill`
    repeated for at least `total` bytes, then `suffix`.

    The middle is one compressed chunk written again and again: each copy is
    a complete gzip member or zstd frame, and a decompressor reads them as
    one stream."""
    chunk = repeated_chunk(fill, min(CHUNK_BYTES, max(total, len(fill))))
    frame = compress_frame(chunk, codec)
    copies = -(-total // len(chunk))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        if prefix:
            out.write(compress_frame(prefix, codec))
        for _ in range(copies):
            out.write(frame)
        if suffix:
            out.write(compress_frame(suffix, codec))
    return path


def decompress(path: Path, codec: str) -> bytes:
    """What the stream decompresses to; for checking the generators on small sizes."""
    data = path.read_bytes()
    if codec == "gzip":
        return gzip.decompress(data)
    if shutil.which("zstd"):
        return subprocess.run(["zstd", "-d", "-q", "-c"], input=data, capture_output=True, check=True).stdout
    # The stream is many frames: the reader must not stop after the first.
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()


# --- decompression bombs -------------------------------------------------------

# The payloads of a bomb: (prefix, repeated fill, suffix). None has a line
# break, so a reader must either hold the whole stream as one line (or one
# text event) or bound what it holds.
BOMB_PAYLOADS = {
    "zeros": (b"", b"\0", b""),
    "x": (b"", b"x", b""),
    # Valid JSON objects back to back without a line break: every value is
    # fine, the line is not.
    "objects_no_newline": (b"", b'{"a":1}', b""),
    # Well-formed XML whose root holds nothing but text: as a document it is
    # one enormous record; with a row tag it has no rows at all, and the
    # text between rows must be passed over without being held.
    "xml_text_in_root": (b"<root>", b"x", b"</root>\n"),
}


def write_bomb(path: Path, codec: str, payload: str = "zeros", total: int = BOMB_BYTES) -> Path:
    prefix, fill, suffix = BOMB_PAYLOADS[payload]
    return write_stream(path, codec, prefix, fill, total, suffix)


def bomb_objects(total: int = BOMB_BYTES) -> int:
    """How many `{"a":1}` objects the objects_no_newline bomb holds."""
    chunk = repeated_chunk(b'{"a":1}', min(CHUNK_BYTES, total))
    return -(-total // len(chunk)) * (len(chunk) // 7)


# --- one huge record beside a good one -------------------------------------------

# Per layout: the bytes before the huge value, after it, and where the good
# record lands in the output relative to the bad one. The huge value is
# 'x' repeated: it is a legal value, only its size is hostile.
HUGE_RECORD_LAYOUTS = {
    # format, prefix, suffix, good row comes after the bad one
    "jsonl": ("jsonl", b'{"a":"', b'"}\n{"a":"ok"}\n', True),
    "csv_quoted_cell": ("csv", b'a\n"', b'"\nok\n', True),
    # The quote never closes: the rest of the file is one cell.
    "csv_unterminated_quote": ("csv", b'a\nok\n"', b"", False),
    "json_array": ("json_array", b'[{"a":"', b'"},\n{"a":"ok"}]\n', True),
    "xml_row": ("xml", b"<root><row><a>", b"</a></row><row><a>ok</a></row></root>\n", True),
}

FILE_SUFFIX = {"jsonl": ".jsonl", "csv": ".csv", "json_array": ".json", "json": ".json", "xml": ".xml"}


def write_huge_record(directory: Path, layout: str, total: int = HUGE_RECORD_BYTES, codec: str = "gzip") -> Path:
    fmt, prefix, suffix, _ = HUGE_RECORD_LAYOUTS[layout]
    ext = ".gz" if codec == "gzip" else ".zst"
    return write_stream(directory / f"{layout}{FILE_SUFFIX[fmt]}{ext}", codec, prefix, b"x", total, suffix)


# --- many keys, bad escapes -----------------------------------------------------


def write_wide_object(path: Path, keys: int = 1_000_000) -> Path:
    """One JSON Lines object with `keys` distinct top-level keys.

    Kept under 16 MiB (the default max_record_bytes), so that what stops it
    is the column limit, not the record-size limit."""
    line = "{" + ",".join(f'"k{i}":0' for i in range(keys)) + "}\n"
    data = line.encode()
    assert len(data) < 16 << 20, len(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# Records as raw JSON text (the escapes are written literally: json.dumps
# would refuse to produce them from a Python string). `bad` marks the ones
# holding a lone surrogate, which no UTF-8 text can carry.
SURROGATE_RECORDS = [
    ('{"a":"ok"}', False, "ok"),
    ('{"a":"\\ud800"}', True, None),
    ('{"a":"x\\udc00y"}', True, None),
    # A proper pair: must decode to the one character it encodes.
    ('{"a":"\\ud83d\\ude00"}', False, "\U0001F600"),
    # A high surrogate followed by an escape that is no low surrogate.
    ('{"a":"\\ud800\\u0041"}', True, None),
    # In a key rather than a value.
    ('{"\\udfff":"k"}', True, None),
    # Low before high: two lone surrogates, not a pair.
    ('{"a":"\\udc00\\ud800"}', True, None),
]


def write_surrogates(directory: Path, fmt: str) -> Path:
    texts = [t for t, _, _ in SURROGATE_RECORDS]
    if fmt == "jsonl":
        path, body = directory / "surrogates.jsonl", "".join(t + "\n" for t in texts)
    elif fmt == "json":  # documents back to back, one per line
        path, body = directory / "surrogates.json", "".join(t + "\n" for t in texts)
    elif fmt == "json_array":
        path, body = directory / "surrogates_array.json", "[\n" + ",\n".join(texts) + "\n]\n"
    else:
        raise ValueError(fmt)
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="ascii")
    return path


# --- Thrift compact protocol (just what a Parquet footer needs) -----------------

T_BOOL_TRUE, T_BOOL_FALSE, T_I32, T_I64, T_BINARY, T_LIST, T_STRUCT = 1, 2, 5, 6, 8, 9, 12


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


# A value is (wire type, payload): built by these helpers.
def i32(v: int):
    return (T_I32, v)


def i64(v: int):
    return (T_I64, v)


def binary(v):
    return (T_BINARY, v.encode() if isinstance(v, str) else v)


def struct_(*fields):
    """A struct from (field id, value) pairs, in ascending id order."""
    return (T_STRUCT, fields)


def list_(elem_type: int, items, *, claimed: int | None = None):
    """A list; `claimed` writes a different element count in its header than
    the elements that follow (a lying footer)."""
    return (T_LIST, (elem_type, list(items), claimed))


def encode_value(value) -> bytes:
    wire, payload = value
    if wire in (T_I32, T_I64):
        return varint(zigzag(payload))
    if wire == T_BINARY:
        return varint(len(payload)) + payload
    if wire == T_STRUCT:
        return encode_struct(payload)
    if wire == T_LIST:
        elem_type, items, claimed = payload
        size = len(items) if claimed is None else claimed
        head = bytes([(size << 4) | elem_type]) if size < 15 else bytes([0xF0 | elem_type]) + varint(size)
        return head + b"".join(encode_value(item) for item in items)
    raise ValueError(wire)


def encode_struct(fields) -> bytes:
    out = bytearray()
    last = 0
    for fid, value in fields:
        wire = value[0]
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | wire)
        else:
            out.append(wire)
            out += varint(zigzag(fid))
        out += encode_value(value)
        last = fid
    out.append(0)  # stop
    return bytes(out)


# --- Parquet files by hand -------------------------------------------------------

MAGIC = b"PAR1"
# parquet.thrift enums
TYPE_INT32 = 1
REQUIRED, OPTIONAL = 0, 1
ENC_PLAIN, ENC_RLE, ENC_RLE_DICTIONARY = 0, 3, 8
PAGE_DATA, PAGE_DICTIONARY = 0, 2
CODEC_UNCOMPRESSED = 0


def schema_element(name: str, *, type_: int | None = None, repetition: int | None = None,
                   num_children: int | None = None):
    fields = []
    if type_ is not None:
        fields.append((1, i32(type_)))
    if repetition is not None:
        fields.append((3, i32(repetition)))
    fields.append((4, binary(name)))
    if num_children is not None:
        fields.append((5, i32(num_children)))
    return struct_(*fields)


def file_metadata(schema: list, num_rows: int, row_groups: list, *, schema_claimed: int | None = None) -> bytes:
    return encode_struct([
        (1, i32(1)),
        (2, list_(T_STRUCT, schema, claimed=schema_claimed)),
        (3, i64(num_rows)),
        (4, list_(T_STRUCT, row_groups)),
        (6, binary("schema_sanitizer hostile-input tests")),
    ])


def parquet_bytes(body: bytes, footer: bytes) -> bytes:
    """`body` holds the pages and starts right after the leading magic."""
    return MAGIC + body + footer + struct.pack("<I", len(footer)) + MAGIC


def deep_schema_parquet(path: Path, depth: int) -> Path:
    """No rows, one INT32 leaf under `depth` nested optional groups.

    The footer itself is flat (the schema is a list of elements with child
    counts), so only a reader that recurses per schema level meets the depth."""
    schema = [schema_element("schema", num_children=1)]
    schema += [schema_element(f"g{i}", repetition=OPTIONAL, num_children=1) for i in range(depth)]
    schema.append(schema_element("v", type_=TYPE_INT32, repetition=OPTIONAL))
    path.write_bytes(parquet_bytes(b"", file_metadata(schema, 0, [])))
    return path


def dictionary_parquet(path: Path, *, dictionary_claims: int = 1, value: int = 42) -> Path:
    """One REQUIRED INT32 column `v`, one row group, one row: a PLAIN
    dictionary page holding one value, then an RLE_DICTIONARY data page
    pointing at it. `dictionary_claims` is the value count the dictionary
    page header declares: 1 is the truth; 2**31-1 asks a reader that trusts
    it for an 8 GiB dictionary from 4 bytes."""
    dict_data = struct.pack("<i", value)
    dict_header = encode_struct([
        (1, i32(PAGE_DICTIONARY)),
        (2, i32(len(dict_data))),
        (3, i32(len(dict_data))),
        (7, struct_((1, i32(dictionary_claims)), (2, i32(ENC_PLAIN)))),
    ])
    # Bit width 1, then one RLE run: header (count 1 << 1 | 0 = RLE), value 0.
    data = bytes([1]) + varint(1 << 1) + bytes([0])
    data_header = encode_struct([
        (1, i32(PAGE_DATA)),
        (2, i32(len(data))),
        (3, i32(len(data))),
        (5, struct_((1, i32(1)), (2, i32(ENC_RLE_DICTIONARY)), (3, i32(ENC_RLE)), (4, i32(ENC_RLE)))),
    ])
    dict_offset = len(MAGIC)
    dict_page = dict_header + dict_data
    data_offset = dict_offset + len(dict_page)
    data_page = data_header + data
    chunk_size = len(dict_page) + len(data_page)
    column_meta = struct_(
        (1, i32(TYPE_INT32)),
        (2, list_(T_I32, [i32(ENC_PLAIN), i32(ENC_RLE), i32(ENC_RLE_DICTIONARY)])),
        (3, list_(T_BINARY, [binary("v")])),
        (4, i32(CODEC_UNCOMPRESSED)),
        (5, i64(1)),
        (6, i64(chunk_size)),
        (7, i64(chunk_size)),
        (9, i64(data_offset)),
        (11, i64(dict_offset)),
    )
    row_group = struct_(
        (1, list_(T_STRUCT, [struct_((2, i64(dict_offset)), (3, column_meta))])),
        (2, i64(chunk_size)),
        (3, i64(1)),
    )
    schema = [schema_element("schema", num_children=1), schema_element("v", type_=TYPE_INT32, repetition=REQUIRED)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(parquet_bytes(dict_page + data_page, file_metadata(schema, 1, [row_group])))
    return path


def leafless_parquet(path: Path, rows: int) -> Path:
    """A root without children, and one row group (with no column chunks)
    that declares `rows` rows: nothing to read them from."""
    schema = [schema_element("schema", num_children=0)]
    row_group = struct_((1, list_(T_STRUCT, [])), (2, i64(0)), (3, i64(rows)))
    path.write_bytes(parquet_bytes(b"", file_metadata(schema, rows, [row_group])))
    return path


def footer_length_lie_parquet(path: Path) -> Path:
    """The trailing footer length claims almost 4 GiB in a 16-byte file."""
    path.write_bytes(MAGIC + b"\0" * 4 + struct.pack("<I", 0xFFFFFFF0) + MAGIC)
    return path


def schema_count_lie_parquet(path: Path) -> Path:
    """The schema list header claims 2**31-1 elements and holds one."""
    schema = [schema_element("schema", num_children=0)]
    footer = file_metadata(schema, 0, [], schema_claimed=2**31 - 1)
    path.write_bytes(parquet_bytes(b"", footer))
    return path


# name -> writer(path). Every one of them is a file a reader must refuse
# (or read correctly) without crashing.
HOSTILE_PARQUET = {
    "deep_1500": lambda p: deep_schema_parquet(p, 1500),
    "deep_20000": lambda p: deep_schema_parquet(p, 20000),
    "dictionary_lie": lambda p: dictionary_parquet(p, dictionary_claims=2**31 - 1),
    "leafless_2pow40_rows": lambda p: leafless_parquet(p, 2**40),
    "negative_rows": lambda p: leafless_parquet(p, -5),
    "footer_length_lie": footer_length_lie_parquet,
    "schema_count_lie": schema_count_lie_parquet,
}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path
