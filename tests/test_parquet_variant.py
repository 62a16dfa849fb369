"""Parquet VARIANT columns against DuckDB's own VARIANT reader: every scalar
that read_parquet finds in a row must be in our row too, whatever column the
engine's versioning put it in (docs/formats.md, "Parquet", VARIANT).

The files are written by DuckDB from random JSON documents (seeded), so
they hold unshredded objects, lists, scalars of every JSON type and rows
that DuckDB shreds; the committed ones come from DuckDB's test data
(test/data/real/ORIGINS.md).
"""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from conftest import sql_literal

META = {"source_file", "ingestion_timestamp", "schema_registry", "schema_drifts"}
REAL = Path(__file__).resolve().parent.parent / "test" / "data" / "real"


def scalar(v):
    """A scalar in a form both readers share: numbers as rounded floats
    (the engine widens ints beside floats and may keep numbers in a string
    column), timestamps without zone suffix to the 10 µs (pre-1970
    nanoseconds round differently, docs/formats.md)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", round(float(v), 6))
    s = str(v)
    if s in ("true", "false"):
        return ("b", s == "true")
    try:
        return ("n", round(float(s), 6))
    except ValueError:
        pass
    m = re.match(r"^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]00(:00)?)?$", s)
    if m:
        return ("t", f"{m.group(1)} {m.group(2)}{(m.group(3) or '')[:6].ljust(6, '0')}")
    return ("s", s)


def leaves(v, out):
    """Every non-null scalar inside v; a JSON text the engine made of a
    value that shares a list with scalars counts as its own scalars."""
    if isinstance(v, dict):
        for x in v.values():
            leaves(x, out)
    elif isinstance(v, list):
        for x in v:
            leaves(x, out)
    elif isinstance(v, str) and v[:1] in "{[":
        try:
            leaves(json.loads(v), out)
        except ValueError:
            out.append(scalar(v))
    elif v is not None:
        out.append(scalar(v))
    return out


def rows_of_leaves(con, sql):
    return sorted(sorted(map(str, leaves([json.loads(x) if x else None for x in row], []))) for row in con.execute(sql).fetchall())


def compare(con, path):
    f = sql_literal(str(path))
    desc = con.execute(f"DESCRIBE FROM read_parquet({f})").fetchall()
    variants = [r[0] for r in desc if r[1] == "VARIANT"]
    plain = {r[0] for r in desc if r[1] != "VARIANT"}
    assert variants, desc
    theirs = rows_of_leaves(con, f"SELECT {', '.join(f'{c}::JSON' for c in variants)} FROM read_parquet({f})")
    ours_columns = [r[0] for r in con.execute(f"DESCRIBE FROM sanitize_parquet({f})").fetchall()]
    ours_columns = [c for c in ours_columns if c not in META and c not in plain]
    assert ours_columns, "no column holds the variant's values"
    ours = rows_of_leaves(con, f"SELECT {', '.join(f'to_json({c})' for c in ours_columns)} FROM sanitize_parquet({f})")
    assert len(ours) == len(theirs)
    assert ours == theirs


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.choice(["int", "float", "str", "bool", "null", "list", "obj"] if depth < 3 else ["int", "str", "float"])
    if kind == "int":
        return rng.choice([rng.randint(-100, 100), rng.randint(-(2**62), 2**62)])
    if kind == "float":
        return round(rng.uniform(-1e6, 1e6), 3)
    if kind == "str":
        return rng.choice(["x", "hello world", "é ü", "2024-01-02", ""]) + str(rng.randint(0, 9))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [random_json(rng, depth + 1) for _ in range(rng.randint(1, 4))]
    return {rng.choice("abcdef"): random_json(rng, depth + 1) for _ in range(rng.randint(1, 4))}


@pytest.mark.parametrize("seed", range(8))
def test_random_variants_keep_every_scalar(con, tmp_path, seed):
    rng = random.Random(seed)
    docs = [random_json(rng) for _ in range(60)]
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps({"id": i, "doc": json.dumps(d)}) + "\n" for i, d in enumerate(docs)))
    out = tmp_path / "v.parquet"
    con.execute(
        f"COPY (SELECT id, doc::JSON::VARIANT AS v FROM read_json({sql_literal(str(source))}, columns := {{'id': 'INTEGER', 'doc': 'VARCHAR'}})) "
        f"TO {sql_literal(str(out))}"
    )
    compare(con, out)


@pytest.mark.parametrize("name", ["variant_object_primitives.parquet", "variant_partial_shredded1.parquet"])
def test_shipped_variant_files_keep_every_scalar(con, name):
    compare(con, REAL / name)


def test_a_shredded_object_is_a_typed_struct(con):
    f = sql_literal(str(REAL / "variant_object_primitives.parquet"))
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE FROM sanitize_parquet({f}))").fetchall())
    assert types["var"] == "STRUCT(a INTEGER, c VARCHAR)"
