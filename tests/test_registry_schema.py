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
