"""Decimals with more digits than their declared precision, as pandas writes
them: every value read_parquet and pyarrow read must come back with every
digit (typed where it fits, else as text in a string version). A result that
looked fine and was 10^k too small is what this pins (docs/formats.md,
"Parquet").
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import sql_literal


def decimal_array(unscaled: list[int | None], precision: int, scale: int) -> pa.Array:
    """A decimal128 array built from its buffers: pyarrow's own constructors
    refuse values wider than the precision, writers such as pandas do not."""
    data = b"".join((0 if v is None else v).to_bytes(16, "little", signed=True) for v in unscaled)
    bits = sum(1 << i for i, v in enumerate(unscaled) if v is not None)
    validity = pa.py_buffer(bits.to_bytes((len(unscaled) + 7) // 8, "little"))
    return pa.Array.from_buffers(pa.decimal128(precision, scale), len(unscaled), [validity, pa.py_buffer(data)])


def ordered(values):
    return sorted(values, key=lambda v: (v is None, v))


CASES = [
    # (precision, scale, storage as integer, unscaled values)
    (5, 2, True, [1234567, -1234567, 99999, None, 100000, 5]),
    (5, 2, False, [1234567, -98765432, 12345, 99999999999]),
    (18, 3, False, [10**20, -(10**20) - 7, 12]),
    (9, 4, True, [-2_000_000_001, 2_147_483_647, 42]),
]


@pytest.mark.parametrize("precision,scale,as_integer,unscaled", CASES)
def test_every_digit_of_an_over_precision_decimal_is_kept(con, tmp_path, precision, scale, as_integer, unscaled):
    values = decimal_array(unscaled, precision, scale)
    table = pa.table(
        {
            "d": values,
            "l": pa.ListArray.from_arrays(pa.array(range(len(unscaled) + 1), pa.int32()), values),
            "s": pa.StructArray.from_arrays([values, pa.array(range(len(unscaled)))], names=["x", "n"]),
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path, store_decimal_as_integer=as_integer)
    f = sql_literal(str(path))
    # The reference is pyarrow's reading, and DuckDB's reader agrees with it.
    # (A fixed-length storage is as wide as the precision needs: wider values
    # are stored cut, and all readers read what is stored.)
    expected = ordered(None if v is None else str(v) for v in pq.read_table(path).column("d").to_pylist())
    assert sum(v is not None and len(v.replace("-", "").replace(".", "").lstrip("0")) > precision for v in expected) >= 1
    theirs = ordered(r[0] for r in con.execute(f"SELECT d::VARCHAR FROM read_parquet({f})").fetchall())
    assert theirs == expected

    columns = [r[0] for r in con.execute(f"DESCRIBE FROM sanitize_parquet({f})").fetchall()]
    assert "d_v2_string" in columns, columns
    ours = con.execute(
        f"SELECT coalesce(d::VARCHAR, d_v2_string), coalesce(l[1]::VARCHAR, l_v2_string_array[1]), "
        f"coalesce(s.x::VARCHAR, s.x_v2_string) FROM sanitize_parquet({f})"
    ).fetchall()
    for position in range(3):
        assert ordered(row[position] for row in ours) == expected, f"column {position}"
