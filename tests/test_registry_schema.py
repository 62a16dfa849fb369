"""The registry documents a scan writes are valid against the published JSON
Schema (docs/registry.schema.json), contract section included."""
from __future__ import annotations

import json

import jsonschema

from conftest import REPO_ROOT


def test_registries_validate_against_the_published_schema(con):
    schema = json.loads((REPO_ROOT / "docs" / "registry.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    cases = [
        "sanitize_jsonl('test/data/issue10/ts_day1.jsonl', parse_iso_timestamps := true)",
        "sanitize_csv('test/data/csv/basic.csv', csv_delimiter := ',', parse_integers := true)",
        "sanitize_parquet('test/data/real/pandas_decimal.parquet')",
        "sanitize_jsonl('test/data/hive/lake/**/*.jsonl')",
        "sanitize_jsonl('test/data/policies/day1.jsonl', pin_types := MAP {'amount': 'DOUBLE'}, freeze := ['device'])",
    ]
    for call in cases:
        registry = con.execute(f"SELECT schema_registry FROM {call} WHERE schema_registry IS NOT NULL").fetchone()[0]
        doc = json.loads(registry)
        jsonschema.validate(doc, schema)
        assert "contract" in doc, call
    # A contract with an unknown option or a wrong value type is invalid.
    bad = dict(doc, contract={"parse_integers": "yes"})
    try:
        jsonschema.validate(bad, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("a non-boolean parse_integers passed the schema")


def test_a_python_dict_is_a_registry(con):
    """A registry handed over as a Python dict (a STRUCT or MAP parameter)
    is the same document as its JSON text."""
    call = "sanitize_jsonl('test/data/hive/lake/**/*.jsonl')"
    text = con.execute(f"SELECT schema_registry FROM {call} WHERE schema_registry IS NOT NULL").fetchone()[0]
    doc = json.loads(text)
    assert doc["partition_columns"][0] == {"key": "date", "name": "date", "type": "DATE"}
    # Drop a field so that the dict-based scan visibly adds it back as a drift.
    doc["canonical_schema"]["fields"] = [f for f in doc["canonical_schema"]["fields"] if f["name"] != "amount"]
    doc.pop("variants")
    rows = con.execute(
        "SELECT schema_registry, schema_drifts FROM sanitize_jsonl('test/data/hive/lake/**/*.jsonl', registry := ?) "
        "WHERE schema_registry IS NOT NULL",
        [doc],
    ).fetchone()
    again = json.loads(rows[0])
    drifts = json.loads(rows[1])
    assert [d["output_name"] for d in drifts] == ["amount"]
    assert again["partition_columns"] == doc["partition_columns"]
    assert again["schema_generation"] == doc["schema_generation"] + 1
