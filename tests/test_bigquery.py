"""The BigQuery statements (docs/bigquery.md), checked outside the
extension: sqlglot (BigQuery dialect) parses every statement strictly, and
bqemulator (tests/bq_emulator.py, driven by google-cloud-bigquery) runs the
sidecar DDL and MERGE, the latest-registry queries over a table loaded from
sanitize_pipeline's Parquet, and loads of every type the writer emits.

What is independent of the extension: the sqlglot parse of each statement
(and the validator's own checks, which a malformed DDL is shown to fail); the
expected BigQuery types, written by hand from BigQuery's Parquet conversion
table; the registries expected from the queries (the pipeline's report rows,
which tests/test_pipeline.py checks against the Parquet footers); the values
expected from a load (DuckDB's own read of the loaded file, normalized the
way BigQuery returns them: a NULL array reads as []).

bqemulator departs from BigQuery in ways these tests work around (each is
pinned by tests/test_bigquery_emulator.py or by a case below):

* it does not parse CREATE EXTERNAL TABLE with WITH PARTITION COLUMNS and has
  no external tables: the tests create a native table from our DDL's column
  list (plus the partition columns as ordinary columns) and load the files
  into it (`native_table_ddl`);
* a Parquet load matches columns by position: each file is loaded into a
  staging table with exactly the file's columns in the file's order, then
  copied into the main table by name (`load_partition`);
* it cannot load a Parquet MAP into the STRUCT<key_value ARRAY<...>> that
  BigQuery reads a MAP as; under bigquery_profile a map is written as that
  record already, so the `map` case loads;
* it reports BIGNUMERIC columns as NUMERIC in tables.get.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable

import pyarrow.parquet as pq
import pytest
import sqlglot
from google.cloud import bigquery
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from bq_emulator import BQ_PROJECT, bq_client, bq_server  # noqa: F401 (fixtures)
from conftest import connect_and_load, sql_literal

ETL_COLUMNS = [
    ("source_file", "STRING"),
    ("ingestion_timestamp", "TIMESTAMP"),
    ("schema_registry", "STRING"),
    ("schema_drifts", "STRING"),
]
DAILY = [("year", "INT64"), ("month", "INT64"), ("date", "DATE")]
HOURLY = DAILY + [("hour", "INT64")]
# The types BigQuery takes for a Hive partition key.
PARTITION_KEY_TYPES = {"STRING", "INT64", "DATE", "TIMESTAMP"}


# --- the DDL validator -------------------------------------------------------


class DdlError(ValueError):
    """The DDL is not a well-formed BigQuery CREATE EXTERNAL TABLE."""


@dataclass
class ExternalDdl:
    table: str
    columns: list[tuple[str, str]]  # (name, type as written in the DDL)
    partition_columns: list[tuple[str, str]]  # (name, type as written)
    options: dict[str, Any]
    column_list: str  # the text between the column list's parentheses
    partition_list: str | None  # the text between WITH PARTITION COLUMNS' parentheses


def _matching_paren(tokens, open_index: int, what: str) -> int:
    depth = 0
    for i in range(open_index, len(tokens)):
        if tokens[i].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[i].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return i
    raise DdlError(f"unbalanced parentheses in {what}")


def _strict_parse(sql: str, what: str) -> exp.Expression:
    """One statement, parsed with ErrorLevel.RAISE; a Command (sqlglot's
    fallback for syntax it does not know) is an error."""
    try:
        statements = [s for s in sqlglot.parse(sql, read="bigquery", error_level=sqlglot.ErrorLevel.RAISE) if s]
    except (ParseError, TokenError) as e:
        raise DdlError(f"{what} does not parse: {e}") from e
    if len(statements) != 1:
        raise DdlError(f"{what} is {len(statements)} statements, not one")
    if isinstance(statements[0], exp.Command):
        raise DdlError(f"{what} parses only as an opaque Command: {sql!r}")
    return statements[0]


def _top_level_items(text: str) -> list[str]:
    """`text` split at the commas outside <>, () and backquoted names."""
    items, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if quoted:
            quoted = ch != "`" or text[i - 1] == "\\"
        elif ch == "`":
            quoted = True
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]


def _column_defs(create: exp.Create, what: str) -> list[exp.ColumnDef]:
    schema = create.this
    if not isinstance(schema, exp.Schema) or not schema.expressions:
        raise DdlError(f"{what} has no column list")
    defs = schema.expressions
    for d in defs:
        if not isinstance(d, exp.ColumnDef) or not isinstance(d.args.get("kind"), exp.DataType):
            raise DdlError(f"{what}: {d.sql('bigquery')!r} is not a typed column")
    return defs


def _literal(node: exp.Expression) -> Any:
    if isinstance(node, exp.Array):
        return [_literal(e) for e in node.expressions]
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    raise DdlError(f"option value {node.sql('bigquery')!r} is not a literal")


def parse_external_ddl(ddl: str) -> ExternalDdl:
    """Splits `CREATE OR REPLACE EXTERNAL TABLE t (...) [WITH PARTITION
    COLUMNS (...)] OPTIONS (...)` at the partition clause (sqlglot reads the
    whole statement only as a Command), parses both parts strictly, and checks
    what BigQuery would refuse that a parser does not see."""
    try:
        tokens = sqlglot.tokenize(ddl, read="bigquery")
    except TokenError as e:
        raise DdlError(f"the DDL does not tokenize: {e}") from e
    clauses = [
        i
        for i in range(len(tokens) - 2)
        if tokens[i].token_type == TokenType.WITH
        and tokens[i + 1].token_type == TokenType.PARTITION
        and tokens[i + 2].token_type == TokenType.VAR
        and tokens[i + 2].text.upper() == "COLUMNS"
    ]
    if len(clauses) > 1:
        raise DdlError("more than one WITH PARTITION COLUMNS clause")
    partition_list = None
    main = ddl
    if clauses:
        i = clauses[0]
        if i + 3 >= len(tokens) or tokens[i + 3].token_type != TokenType.L_PAREN:
            raise DdlError("WITH PARTITION COLUMNS is not followed by a column list")
        close = _matching_paren(tokens, i + 3, "WITH PARTITION COLUMNS")
        partition_list = ddl[tokens[i + 3].end + 1 : tokens[close].start]
        main = ddl[: tokens[i].start] + ddl[tokens[close].end + 1 :]

    create = _strict_parse(main, "the statement without WITH PARTITION COLUMNS")
    if not (isinstance(create, exp.Create) and create.kind == "TABLE" and create.args.get("replace")):
        raise DdlError(f"not a CREATE OR REPLACE ... TABLE: {create.sql('bigquery')!r}")
    properties = create.args.get("properties")
    if properties is None or not any(isinstance(p, exp.ExternalProperty) for p in properties.expressions):
        raise DdlError("not an EXTERNAL table")
    options: dict[str, Any] = {}
    for p in properties.expressions:
        if isinstance(p, exp.FileFormatProperty):
            options["format"] = _literal(p.this)
        elif type(p) is exp.Property:  # (ExternalProperty is a subclass)
            options[p.name.lower()] = _literal(p.args["value"])
    defs = _column_defs(create, "the external table")

    # The column list as written (what a native table is made from), one
    # item per column sqlglot found, in the same order.
    main_tokens = sqlglot.tokenize(main, read="bigquery")
    open_index = next(i for i, t in enumerate(main_tokens) if t.token_type == TokenType.L_PAREN)
    close_index = _matching_paren(main_tokens, open_index, "the column list")
    column_list = main[main_tokens[open_index].end + 1 : main_tokens[close_index].start]
    items = _top_level_items(column_list)
    names = [d.name for d in defs]
    if [item.split("`")[1] if item.startswith("`") else item.split()[0] for item in items] != names:
        raise DdlError(f"the column list {items} is not the parsed columns {names}")
    columns = [(name, item.split(None, 1)[1] if not item.startswith("`") else item[len(name) + 2 :].strip())
               for name, item in zip(names, items)]

    lowered = [n.lower() for n in names]
    if len(set(lowered)) != len(lowered):
        raise DdlError(f"column names repeat (case-insensitively): {names}")
    for node in create.find_all(exp.DataType):
        if node.this == exp.DataType.Type.ARRAY and node.expressions and node.expressions[0].this == exp.DataType.Type.ARRAY:
            raise DdlError(f"BigQuery has no ARRAY of ARRAY: {node.sql('bigquery')}")
    if options.get("format") != "PARQUET" or not options.get("uris"):
        raise DdlError(f"the options lack format = 'PARQUET' or uris: {options}")

    partition_columns: list[tuple[str, str]] = []
    if partition_list is not None:
        part = _strict_parse(f"CREATE TABLE x ({partition_list})", "the WITH PARTITION COLUMNS list")
        if not isinstance(part, exp.Create):
            raise DdlError(f"the partition list is not a column list: {partition_list!r}")
        for d in _column_defs(part, "WITH PARTITION COLUMNS"):
            ty = d.args["kind"].sql("bigquery")
            if ty not in PARTITION_KEY_TYPES:
                raise DdlError(f"partition column {d.name} has the type {ty}, not a Hive key type")
            if d.name.lower() in lowered:
                raise DdlError(f"partition column {d.name} is also a data column")
            partition_columns.append((d.name, ty))
        if "hive_partition_uri_prefix" not in options:
            raise DdlError("partition columns without hive_partition_uri_prefix")
    return ExternalDdl(
        table=create.this.this.sql("bigquery"),
        columns=columns,
        partition_columns=partition_columns,
        options=options,
        column_list=column_list,
        partition_list=partition_list,
    )


def validate_external_ddl(ddl: str) -> None:
    """Raises DdlError unless `ddl` is a well-formed external-table DDL."""
    parse_external_ddl(ddl)


def strict(sql: str) -> exp.Expression:
    return _strict_parse(sql, "the statement")


# --- helpers -----------------------------------------------------------------


def scalar(con, sql: str, params: list | None = None):
    return con.execute(sql, params or []).fetchone()[0]


def bq_ddl(con, registry: str, **params) -> str:
    named = "".join(f", {name} := {value}" for name, value in params.items())
    return scalar(con, f"SELECT ddl FROM sanitize_bigquery_ddl(?, table_name := 'proj.silver.events'{named})", [registry])


def scan_registry(con, scan: str) -> str:
    return scalar(con, f"SELECT schema_registry FROM {scan} WHERE schema_registry IS NOT NULL")


def scan_columns(con, scan: str) -> list[str]:
    etl = {name for name, _ in ETL_COLUMNS}
    return [row[0] for row in con.execute(f"DESCRIBE FROM {scan}").fetchall() if row[0] not in etl]


def day_key(day: date) -> str:
    return f"year={day:%Y}/month={day:%m}/date={day:%Y-%m-%d}"


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run_pipeline(con, source: Path, output: Path, **params) -> list[dict]:
    named = "".join(f", {k} := {v if isinstance(v, bool) else sql_literal(str(v))}" for k, v in params.items())
    result = con.execute(f"SELECT * FROM sanitize_pipeline({sql_literal(str(source))}, {sql_literal(str(output))}{named})")
    names = [d[0] for d in result.description]
    return [dict(zip(names, row)) for row in result.fetchall()]


def run(client: bigquery.Client, sql: str) -> tuple[list[dict], bigquery.QueryJob]:
    job = client.query(sql)
    return [dict(row) for row in job.result()], job


def native_table_ddl(table: str, ddl: ExternalDdl, *, partition_columns: bool = True) -> str:
    """The native table the emulator can hold in place of our external table:
    `CREATE TABLE` with the external DDL's column list as written, then (with
    `partition_columns`) its Hive partition columns as ordinary columns.
    bqemulator parses no `CREATE EXTERNAL TABLE ... WITH PARTITION COLUMNS`,
    and an external table it accepts without the clause is an empty native
    table anyway."""
    columns = ddl.partition_columns if partition_columns else []
    partition = "".join(f",\n  `{name}` {ty}" for name, ty in columns)
    return f"CREATE TABLE `{table}` ({ddl.column_list}{partition}\n)"


def load_file(client: bigquery.Client, table: str, path: Path) -> bigquery.LoadJob:
    config = bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.PARQUET)
    options = bigquery.ParquetOptions()
    options.enable_list_inference = True
    config.parquet_options = options
    with open(path, "rb") as f:
        job = client.load_table_from_file(f, table, job_config=config)
    job.result()
    return job


def partition_values(key: str, columns: list[tuple[str, str]]) -> list[str]:
    """The SQL constants of a Hive key's values, typed as the partition columns."""
    pairs = [segment.split("=", 1) for segment in key.split("/")]
    assert [name for name, _ in pairs] == [name for name, _ in columns], key
    out = []
    for (_, value), (_, ty) in zip(pairs, columns):
        out.append(str(int(value)) if ty == "INT64" else f"{ty} '{value}'" if ty in ("DATE", "TIMESTAMP") else f"'{value}'")
    return out


def load_partition(client, table: str, staging: str, ddl: ExternalDdl, path: Path, key: str) -> int:
    """Loads one Parquet file of the lake into `table`, its partition columns
    set from the Hive key. bqemulator matches a Parquet file's columns by
    position, and the early files of a lake lack the columns later drifts
    added: the file goes first into a staging table with exactly its columns,
    in its order (types from our DDL), then into the table by name."""
    types = dict(ddl.columns)
    names = pq.ParquetFile(str(path)).schema_arrow.names
    run(client, f"CREATE TABLE `{staging}` ({', '.join(f'`{n}` {types[n]}' for n in names)})")
    load_file(client, staging, path)
    target = ", ".join([f"`{n}`" for n in names] + [f"`{n}`" for n, _ in ddl.partition_columns])
    values = ", ".join([f"`{n}`" for n in names] + partition_values(key, ddl.partition_columns))
    _, job = run(client, f"INSERT INTO `{table}` ({target}) SELECT {values} FROM `{staging}`")
    return job.num_dml_affected_rows


@pytest.fixture(scope="module")
def mcon(repository, tmp_path_factory):
    """A connection with the extension, for the module-scoped fixtures."""
    connection = connect_and_load(repository, tmp_path_factory.mktemp("ext"))
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture(scope="module")
def bq(bq_server):
    """A module-scoped client (bq_client is per test) for the shared tables."""
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials

    client = bigquery.Client(
        project=BQ_PROJECT, credentials=AnonymousCredentials(), client_options=ClientOptions(api_endpoint=bq_server)
    )
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def dataset(bq_client, request) -> str:
    """A fresh dataset, named after the test, in BQ_PROJECT; its id."""
    name = re.sub(r"\W", "_", request.node.name)
    bq_client.create_dataset(f"{BQ_PROJECT}.{name}")
    return name


# --- 1. sqlglot parses every statement ---------------------------------------

LAKE_SCAN = "sanitize_jsonl('test/data/lake_pipeline/**/*.jsonl', parse_iso_timestamps := true, hive_partitioning := false)"
PROFILE_SCAN = (
    "sanitize_jsonl('test/data/bigquery/profile.jsonl', bigquery_profile := true, "
    "field_name_policy := 'preserve', parse_iso_timestamps := true)"
)
DECIMAL_REGISTRY = json.dumps(
    {
        "registry_version": 1,
        "schema_generation": 1,
        "field_name_policy": "lower_alpha",
        "canonical_schema": {
            "fields": [
                {"name": "n", "source_key": "N", "version": 1, "type": {"kind": "decimal", "precision": 38, "scale": 12}},
                {"name": "p", "source_key": "p", "version": 1, "type": {"kind": "decimal", "precision": 18, "scale": 2}},
            ]
        },
    }
)
# Every type the writer emits that BigQuery takes, as a Parquet input.
ALL_TYPES_SELECT = """
SELECT 1::BIGINT AS i, 2::INTEGER AS int_a, 3::SMALLINT AS int_b, 4::UTINYINT AS int_c, 1.5::DOUBLE AS f,
       1.25::FLOAT AS flt, 'x' AS s, true AS b, TIMESTAMPTZ '2026-06-29 12:00:00+00' AS ts,
       TIMESTAMP_MS '2026-06-29 12:00:00.5' AS tms, DATE '2026-06-29' AS d, TIME '12:34:56' AS t, 'ab'::BLOB AS bl,
       gen_random_uuid() AS u, 1.5::DECIMAL(18,2) AS dec, 1.5::DECIMAL(38,12) AS big, {'a': 1, 'b': 'x'} AS st,
       ['p'] AS ls, [{'k': 'a', 'v': 1}] AS lst, [[1, 2], [3]] AS ll, MAP {'k': 1} AS m,
       {'deep': {'deeper': [{'deepest': [1]}]}} AS nest
"""


@pytest.fixture
def registries(con, tmp_path) -> dict[str, tuple[str, list[str]]]:
    """Registries to build DDLs from: (registry, its output columns as the
    scan declares them, ETL columns aside)."""
    all_types = tmp_path / "all_types.parquet"
    with_duckdb = f"COPY ({ALL_TYPES_SELECT}) TO {sql_literal(str(all_types))} (FORMAT parquet)"
    con.execute(with_duckdb)
    typed_scan = f"sanitize_parquet({sql_literal(str(all_types))}, bigquery_profile := true, hive_partitioning := false)"
    out = {
        "lake_pipeline": (scan_registry(con, LAKE_SCAN), scan_columns(con, LAKE_SCAN)),
        "profile": (scan_registry(con, PROFILE_SCAN), scan_columns(con, PROFILE_SCAN)),
        "decimal": (DECIMAL_REGISTRY, ["n", "p"]),
        "all_types": (scan_registry(con, typed_scan), scan_columns(con, typed_scan)),
    }
    return out


DDL_VARIANTS = {
    "daily": ({"hive_uri_prefix": "'gs://silver/events/'"}, DAILY),
    "hourly": ({"hive_uri_prefix": "'gs://silver/events'", "granularity": "'hourly'"}, HOURLY),
    "custom": (
        {
            "hive_uri_prefix": "'gs://b/t'",
            "source_uris": "['gs://b/t/dt=*/*.parquet']",
            "partition_columns": "MAP {'dt': 'DATE', 'region': 'STRING', 'loaded_at': 'TIMESTAMP', 'shard': 'integer'}",
            "require_partition_filter": "true",
        },
        [("dt", "DATE"), ("region", "STRING"), ("loaded_at", "TIMESTAMP"), ("shard", "INT64")],
    ),
    "no_list_inference": ({"hive_uri_prefix": "'gs://b/t'", "enable_list_inference": "false"}, DAILY),
    "no_hive": ({"source_uris": "['gs://b/x.parquet', 'gs://b/y.parquet']"}, []),
}


@pytest.mark.parametrize("variant", sorted(DDL_VARIANTS))
@pytest.mark.parametrize("source", ["lake_pipeline", "profile", "decimal", "all_types"])
def test_external_ddl_parses_strictly(con, registries, source, variant):
    registry, expected_columns = registries[source]
    params, expected_partitions = DDL_VARIANTS[variant]
    text = bq_ddl(con, registry, **params)
    validate_external_ddl(text)
    parsed = parse_external_ddl(text)

    assert parsed.table == "`proj.silver.events`"
    assert [name for name, _ in parsed.columns] == expected_columns + [name for name, _ in ETL_COLUMNS]
    assert parsed.columns[-4:] == ETL_COLUMNS
    assert parsed.partition_columns == expected_partitions
    assert (parsed.partition_list is None) == (expected_partitions == [])
    assert parsed.options["format"] == "PARQUET"
    list_inference = params.get("enable_list_inference") != "false"
    assert parsed.options["enable_list_inference"] is list_inference
    if "hive_uri_prefix" in params:
        prefix = params["hive_uri_prefix"].strip("'").rstrip("/")
        assert parsed.options["hive_partition_uri_prefix"] == prefix
        assert parsed.options["require_hive_partition_filter"] is (variant == "custom")
        assert parsed.options["uris"] == ([f"{prefix}/*"] if "source_uris" not in params else ["gs://b/t/dt=*/*.parquet"])
    else:
        assert "hive_partition_uri_prefix" not in parsed.options
        assert parsed.options["uris"] == ["gs://b/x.parquet", "gs://b/y.parquet"]
    has_bignumeric = any("BIGNUMERIC" in ty for _, ty in parsed.columns)
    assert has_bignumeric == (source in ("decimal", "all_types"))
    assert ("decimal_target_types" in parsed.options) == has_bignumeric
    if has_bignumeric:
        assert parsed.options["decimal_target_types"] == ["NUMERIC", "BIGNUMERIC"]

    types = dict(parsed.columns)
    if source == "decimal":
        assert types == {"n": "BIGNUMERIC(38, 12)", "p": "NUMERIC(18, 2)", **dict(ETL_COLUMNS)}
    if source == "profile":
        assert types["f_PARTITIONTIME"] == "STRING" and types["Id"] == "INT64"
        # Without list inference BigQuery reads the file's 3-level lists as
        # they are laid out: list -> repeated `list` -> `element`.
        assert types["matrix"] == (
            "ARRAY<STRUCT<`element` ARRAY<INT64>>>"
            if list_inference
            else "STRUCT<`list` ARRAY<STRUCT<`element` STRUCT<`element` STRUCT<`list` ARRAY<STRUCT<`element` INT64>>>>>>>"
        )
    if source == "lake_pipeline":
        assert types["tags"] == ("ARRAY<STRING>" if list_inference else "STRUCT<`list` ARRAY<STRUCT<`element` STRING>>>")
    if source == "all_types" and list_inference:
        # BigQuery's Parquet conversion table (docs/bigquery.md), by hand;
        # lower_alpha drops the names' `_`.
        assert types == {
            "b": "BOOL", "big": "BIGNUMERIC(38, 12)", "bl": "BYTES", "d": "DATE", "dec": "NUMERIC(18, 2)",
            "f": "FLOAT64", "flt": "FLOAT64", "i": "INT64", "inta": "INT64", "intb": "INT64", "intc": "INT64",
            "ll": "ARRAY<STRUCT<`element` ARRAY<INT64>>>", "ls": "ARRAY<STRING>",
            "lst": "ARRAY<STRUCT<`k` STRING, `v` INT64>>",
            # Under the profile a map is its key_value record on the tape,
            # named by the policy (lower_alpha: `keyvalue`).
            "m": "STRUCT<`keyvalue` ARRAY<STRUCT<`key` STRING, `value` INT64>>>",
            "nest": "STRUCT<`deep` STRUCT<`deeper` ARRAY<STRUCT<`deepest` ARRAY<INT64>>>>>",
            "s": "STRING", "st": "STRUCT<`a` INT64, `b` STRING>", "t": "TIME", "tms": "TIMESTAMP", "ts": "TIMESTAMP",
            "u": "BYTES", **dict(ETL_COLUMNS),
        }


def test_malformed_ddls_fail_the_validator(con, registries):
    daily = bq_ddl(con, registries["lake_pipeline"][0], hive_uri_prefix="'gs://silver/events'")
    validate_external_ddl(daily)  # the original passes

    def mutate(text: str, old: str, new: str) -> str:
        assert text.count(old) == 1, f"{old!r} not once in the DDL"
        return text.replace(old, new)

    cases = {
        "missing comma between columns": (mutate(daily, "`amount` FLOAT64,\n", "`amount` FLOAT64\n"), "does not parse"),
        "STRUCT without >": (mutate(daily, "`id` INT64,", "`id` STRUCT<a INT64,"), "does not parse"),
        "unbalanced ( in the partition list": (
            mutate(daily, "WITH PARTITION COLUMNS (\n", "WITH PARTITION COLUMNS ((\n"),
            "unbalanced parentheses in WITH PARTITION COLUMNS",
        ),
        "partition list not closed": (
            mutate(daily, "`date` DATE\n)\nOPTIONS", "`date` DATE\nOPTIONS"),
            "unbalanced parentheses in WITH PARTITION COLUMNS",
        ),
        "extra ) in the partition list": (
            mutate(daily, "`year` INT64,", "`year` INT64),"),
            "only as an opaque Command",
        ),
        "a clause sqlglot parses only as a Command": (
            mutate(daily, "WITH PARTITION COLUMNS", "WITH PARTITION COLUMN"),
            "only as an opaque Command",
        ),
        "WITH CONNECTION (Command)": (
            mutate(daily, ")\nWITH PARTITION COLUMNS", ")\nWITH CONNECTION `proj.us.conn`\nWITH PARTITION COLUMNS"),
            "only as an opaque Command",
        ),
        "an unknown type": (mutate(daily, "`id` INT64,", "`id` INT65,"), "does not parse"),
        "ARRAY of ARRAY": (mutate(daily, "`tags` ARRAY<STRING>", "`tags` ARRAY<ARRAY<STRING>>"), "no ARRAY of ARRAY"),
        "a partition column among the data columns": (
            mutate(daily, "`coupon` STRING,", "`coupon` STRING,\n  `date` DATE,"),
            "partition column date is also a data column",
        ),
        "a partition key of a non-key type": (
            mutate(daily, "`month` INT64,\n  `date`", "`month` FLOAT64,\n  `date`"),
            "has the type FLOAT64",
        ),
        "OPTIONS not closed": (daily.rstrip(";").rstrip(")") + ";", "does not parse"),
        "two statements": (daily + "\nSELECT 1;", "2 statements"),
        "unterminated string": (mutate(daily, "'PARQUET'", "'PARQUET"), "tokenize|does not parse"),
    }
    for name, (text, why) in cases.items():
        assert text != daily, name
        with pytest.raises(DdlError, match=why):
            validate_external_ddl(text)
            pytest.fail(f"the validator accepted: {name}")


def test_sidecar_statements_parse_strictly(con):
    ddl = strict(scalar(con, "SELECT sanitize_bigquery_sidecar_ddl('proj.meta.sidecar')"))
    assert isinstance(ddl, exp.Create) and ddl.kind == "TABLE" and ddl.args.get("exists")
    assert ddl.this.this.sql("bigquery") == "`proj.meta.sidecar`"
    columns = [(d.name, d.args["kind"].sql("bigquery"), [c.sql("bigquery") for c in d.args.get("constraints") or []])
               for d in ddl.this.expressions]
    assert columns == [
        ("external_table_name", "STRING", ["NOT NULL"]),
        ("last_ingested_partition", "STRING", ["NOT NULL"]),
    ]

    key = "year=2026/month=07/date=2026-07-05"
    merge = strict(scalar(con, "SELECT sanitize_bigquery_sidecar_merge('proj.meta.sidecar', 'proj.silver.events', ?)", [key]))
    assert isinstance(merge, exp.Merge)
    assert merge.this.sql("bigquery") == "`proj.meta.sidecar` AS T"
    source = merge.args["using"]
    assert {e.alias: e.this.this for e in source.find(exp.Select).expressions} == {
        "external_table_name": "proj.silver.events",
        "last_ingested_partition": key,
    }
    whens = merge.args["whens"].expressions
    assert [(w.args.get("matched"), isinstance(w.args["then"], exp.Update), isinstance(w.args["then"], exp.Insert)) for w in whens] == [
        (True, True, False),
        (False, False, True),
    ]
    # The update is guarded by "the pointer changed" (what makes a re-run a no-op).
    assert whens[0].args["condition"].sql("bigquery") == "T.last_ingested_partition <> S.last_ingested_partition"

    # Quotes, backslashes and control characters survive as the same value.
    odd = "region=it's\\x/dt=a\tb"
    merge = strict(scalar(con, "SELECT sanitize_bigquery_sidecar_merge('p.d.s', 'p.d.e', ?)", [odd]))
    assert [e.this.this for e in merge.args["using"].find(exp.Select).expressions] == ["p.d.e", odd]


QUERY_LAYOUTS = {
    "daily": ("", DAILY, "year=2026/month=06/date=2026-06-02", ["2026", "06", "2026-06-02"]),
    "hourly": (", granularity := 'hourly'", HOURLY, "year=2026/month=06/date=2026-06-02/hour=07", ["2026", "06", "2026-06-02", "07"]),
    "custom": (
        ", partition_columns := MAP {'dt': 'DATE', 'region': 'STRING', 'shard_1': 'INT64'}",
        [("dt", "DATE"), ("region", "STRING"), ("shard_1", "INT64")],
        "dt=2026-06-02/region=eu/shard_1=5",
        ["2026-06-02", "eu", "5"],
    ),
}


@pytest.mark.parametrize("layout", sorted(QUERY_LAYOUTS))
def test_registry_queries_parse_strictly(con, layout):
    params, columns, key, values = QUERY_LAYOUTS[layout]
    alone = con.execute(f"SELECT kind, query FROM sanitize_bigquery_registry_query('proj.silver.events'{params})").fetchall()
    both = con.execute(
        f"SELECT kind, query FROM sanitize_bigquery_registry_query('proj.silver.events', sidecar_table := 'proj.meta.sidecar'{params})"
    ).fetchall()
    assert [k for k, _ in alone] == ["full"] and [k for k, _ in both] == ["sidecar", "full"]
    assert both[1] == alone[0]

    full = strict(alone[0][1])
    assert isinstance(full, exp.Select)
    assert full.args["from_"].this.sql("bigquery") == "`proj.silver.events`"
    assert full.args["limit"].expression.sql() == "1"
    order = [o.this.sql("bigquery") for o in full.args["order"].expressions]
    assert all(o.args.get("desc") for o in full.args["order"].expressions)
    assert order[0] == "ingestion_timestamp" and "schema_generation" in order[1]
    assert order[2:] == [f"`{name}`" for name, _ in columns]

    sidecar = strict(both[0][1])
    assert isinstance(sidecar, exp.Select)
    (join,) = sidecar.args["joins"]
    conditions = list(join.args["on"].flatten()) if isinstance(join.args["on"], exp.And) else [join.args["on"]]
    assert len(conditions) == len(columns)
    # Each condition's regular expression, applied here (Python's re reads
    # these RE2 patterns alike), takes its column's value from a valid key
    # and nothing from keys that are not this table's partitions.
    bad_keys = ["", key.replace("=", ":"), "/".join(reversed(key.split("/"))), key + "/extra=1"]
    for condition, (name, ty), value in zip(conditions, columns, values):
        assert condition.this.sql("bigquery") == f"e.`{name}`"
        extract = condition.find(exp.RegexpExtract)
        pattern = extract.expression.this
        match = re.search(pattern, key)
        assert match is not None and match.group(1) == value, (pattern, key)
        for bad in bad_keys:
            assert re.search(pattern, bad) is None, (pattern, bad)
        cast = condition.expression
        if ty == "STRING":
            assert isinstance(cast, exp.RegexpExtract)
        else:
            # SAFE_CAST: a value that is not the type gives NULL (no row), not an error.
            assert isinstance(cast, exp.TryCast) and cast.args.get("safe") and cast.to.sql("bigquery") == ty
    # The key is the sidecar's row for this table.
    pointer = join.this
    assert isinstance(pointer, exp.Subquery) and pointer.alias == "s"
    assert pointer.this.args["from_"].this.sql("bigquery") == "`proj.meta.sidecar`"
    assert pointer.this.args["where"].this.sql("bigquery") == "external_table_name = 'proj.silver.events'"
    assert sidecar.args["from_"].this.sql("bigquery") == "`proj.silver.events` AS e"
    assert [o.this.sql("bigquery") for o in sidecar.args["order"].expressions][2:] == [f"e.`{n}`" for n, _ in columns]
    assert sidecar.args["limit"].expression.sql() == "1"


# --- 2. against the emulator -------------------------------------------------


def test_sidecar_ddl_and_merge_on_the_emulator(con, bq_client, dataset):
    sidecar = f"{BQ_PROJECT}.{dataset}.sidecar"
    events = f"{BQ_PROJECT}.{dataset}.events"
    ddl = scalar(con, "SELECT sanitize_bigquery_sidecar_ddl(?)", [sidecar])
    run(bq_client, ddl)
    run(bq_client, ddl)  # IF NOT EXISTS: a no-op
    schema = bq_client.get_table(sidecar).schema
    assert [(f.name, f.field_type, f.mode) for f in schema] == [
        ("external_table_name", "STRING", "REQUIRED"),
        ("last_ingested_partition", "STRING", "REQUIRED"),
    ]

    def merge(key: str, table: str = events) -> int:
        _, job = run(bq_client, scalar(con, "SELECT sanitize_bigquery_sidecar_merge(?, ?, ?)", [sidecar, table, key]))
        return job.num_dml_affected_rows

    def rows() -> list[tuple[str, str]]:
        result, _ = run(bq_client, f"SELECT * FROM `{sidecar}` ORDER BY external_table_name")
        return [(r["external_table_name"], r["last_ingested_partition"]) for r in result]

    day3, day1 = "year=2026/month=06/date=2026-06-03", "year=2026/month=06/date=2026-06-01"
    assert merge(day3) == 1  # inserted
    assert rows() == [(events, day3)]
    assert merge(day3) == 0  # the identical run: no row affected
    assert rows() == [(events, day3)]
    # A past-date re-run moves the pointer to the partition that run completed.
    assert merge(day1) == 1
    assert rows() == [(events, day1)]
    assert merge(day1) == 0
    # A trailing slash is the same key.
    assert merge(day1 + "/") == 0
    # The pointer of another table is another row; this one is untouched.
    other = f"{BQ_PROJECT}.{dataset}.other"
    assert merge(day3, other) == 1
    assert rows() == [(events, day1), (other, day3)]
    # Quotes, backslashes and a tab reach the table as given.
    odd = "region=it's\\x/dt=a\tb"
    assert merge(odd) == 1
    assert rows() == [(events, odd), (other, day3)]


# The lake of the registry-query tests: day 2 adds a field (a new
# generation), day 3 changes a type (another), so the three registries differ.
LAKE_DAYS = [date(2026, 6, 1) + timedelta(days=i) for i in range(3)]


def lake_records(index: int) -> list[dict]:
    records = []
    for i in range(5):
        record = {"id": (index + 1) * 100 + i, "amount": i * 3, "tags": ["a", "b"][: i % 3], "user": {"name": f"u{i}"}}
        if index >= 1:
            record["channel"] = "web" if i % 2 else "app"
        if index == 2 and i % 2:
            record["amount"] = f"{i} EUR"
        records.append(record)
    return records


@pytest.fixture(scope="module")
def daily_silver(mcon, tmp_path_factory):
    """sanitize_pipeline over the 3-day lake; (silver dir, report rows)."""
    root = tmp_path_factory.mktemp("daily")
    for index in reversed(range(len(LAKE_DAYS))):
        write_lines(root / "bronze" / day_key(LAKE_DAYS[index]) / "events.jsonl", lake_records(index))
    silver = root / "silver"
    report = run_pipeline(mcon, root / "bronze", silver, start_date="2026-06-01", end_date="2026-06-03", input_format="jsonl")
    assert [(r["partition_key"], r["status"]) for r in report] == [(day_key(d), "written") for d in LAKE_DAYS]
    generations = [r["schema_generation"] for r in report]
    assert generations[0] < generations[1] < generations[2], generations
    assert len({r["registry"] for r in report}) == 3
    return silver, report


@pytest.fixture(scope="module")
def events_table(mcon, bq, daily_silver):
    """The lake loaded into a native table made from our DDL; (table, parsed DDL)."""
    silver, report = daily_silver
    ddl_text = scalar(
        mcon,
        "SELECT ddl FROM sanitize_bigquery_ddl(?, table_name := ?, hive_uri_prefix := ?)",
        [report[-1]["registry"], f"{BQ_PROJECT}.lake.events", str(silver)],
    )
    ddl = parse_external_ddl(ddl_text)
    assert ddl.partition_columns == DAILY
    assert [n for n, _ in ddl.columns] == ["amount", "amount_v2_string", "channel", "id", "tags", "user"] + [
        n for n, _ in ETL_COLUMNS
    ]
    bq.create_dataset(f"{BQ_PROJECT}.lake")
    table = f"{BQ_PROJECT}.lake.events"
    run(bq, native_table_ddl(table, ddl))
    for index, row in enumerate(report):
        path = Path(row["output_path"])
        inserted = load_partition(bq, table, f"{BQ_PROJECT}.lake.staging_{index}", ddl, path, row["partition_key"])
        assert inserted == row["rows_written"] == pq.ParquetFile(str(path)).metadata.num_rows
    return table, ddl


def registry_queries(con, table: str, sidecar: str | None = None) -> dict[str, str]:
    extra = ", sidecar_table := ?" if sidecar else ""
    params = [table] + ([sidecar] if sidecar else [])
    return dict(con.execute(f"SELECT kind, query FROM sanitize_bigquery_registry_query(?{extra})", params).fetchall())


def test_loaded_lake_matches_the_files(mcon, bq, events_table, daily_silver):
    table, _ = events_table
    silver, report = daily_silver
    got, _ = run(
        bq,
        f"SELECT id, amount, amount_v2_string, channel, tags, `user`.name AS name, `year`, `month`, `date`, "
        f"schema_registry IS NOT NULL AS has_registry FROM `{table}` ORDER BY id",
    )
    files = ", ".join(sql_literal(r["output_path"]) for r in report)
    expected = mcon.execute(
        f"SELECT id, amount, amount_v2_string, channel, coalesce(tags, []), \"user\".name, year::BIGINT, month::BIGINT, "
        f"\"date\"::DATE, schema_registry IS NOT NULL FROM read_parquet([{files}], union_by_name = true, hive_partitioning = true) ORDER BY id"
    ).fetchall()
    assert [tuple(r.values()) for r in got] == expected
    assert sum(r["has_registry"] for r in got) == 3


def test_full_query_returns_the_latest_registry(mcon, bq, events_table, daily_silver):
    table, _ = events_table
    _, report = daily_silver
    rows, _ = run(bq, registry_queries(mcon, table)["full"])
    latest = report[-1]["registry"]
    assert latest == scalar(mcon, "SELECT sanitize_registry_from_parquet(?)", [report[-1]["output_path"]])
    assert rows == [{"schema_registry": latest}]
    assert json.loads(rows[0]["schema_registry"])["schema_generation"] == report[-1]["schema_generation"]


@pytest.mark.parametrize("day", [0, 1, 2])
def test_sidecar_query_returns_the_pointed_partitions_registry(mcon, bq, events_table, daily_silver, day):
    table, _ = events_table
    _, report = daily_silver
    sidecar = f"{BQ_PROJECT}.lake.sidecar_day{day}"
    run(bq, scalar(mcon, "SELECT sanitize_bigquery_sidecar_ddl(?)", [sidecar]))
    queries = registry_queries(mcon, table, sidecar)

    def point_at(index: int) -> int:
        key = report[index]["partition_key"]
        _, job = run(bq, scalar(mcon, "SELECT sanitize_bigquery_sidecar_merge(?, ?, ?)", [sidecar, table, key]))
        return job.num_dml_affected_rows

    # The daily run's pointer, then a re-run of `day` (a past date, but for
    # the last one) moves it, and the query follows.
    assert point_at(2) == 1
    assert run(bq, queries["sidecar"])[0] == [{"schema_registry": report[2]["registry"]}]
    assert point_at(day) == (0 if day == 2 else 1)
    rows, _ = run(bq, queries["sidecar"])
    assert rows == [{"schema_registry": report[day]["registry"]}]
    assert report[day]["registry"] == scalar(mcon, "SELECT sanitize_registry_from_parquet(?)", [report[day]["output_path"]])
    # The full query ignores the sidecar.
    assert run(bq, queries["full"])[0] == [{"schema_registry": report[-1]["registry"]}]


FALLBACKS = {
    "no row": None,
    "empty key": "",
    "invalid month": "year=2026/month=xx/date=2026-06-02",
    "no such partition": "year=2026/month=06/date=2026-06-09",
    "wrong order": "month=06/year=2026/date=2026-06-02",
    "missing segment": "year=2026/month=06",
    "another table's row only": "other",
}


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_sidecar_query_falls_back_to_full(mcon, bq, events_table, daily_silver, case):
    table, _ = events_table
    _, report = daily_silver
    sidecar = f"{BQ_PROJECT}.lake.sidecar_" + re.sub(r"\W", "_", case)
    run(bq, scalar(mcon, "SELECT sanitize_bigquery_sidecar_ddl(?)", [sidecar]))
    key = FALLBACKS[case]

    def merge(external: str, partition_key: str) -> None:
        _, job = run(bq, scalar(mcon, "SELECT sanitize_bigquery_sidecar_merge(?, ?, ?)", [sidecar, external, partition_key]))
        assert job.num_dml_affected_rows == 1

    if key == "other":
        # A valid pointer, but for another external table.
        merge(f"{BQ_PROJECT}.lake.other", report[1]["partition_key"])
    elif key == "":
        # Our MERGE refuses it; a row another writer left.
        with pytest.raises(Exception, match="is not a Hive key"):
            scalar(mcon, "SELECT sanitize_bigquery_sidecar_merge(?, ?, '')", [sidecar, table])
        run(bq, f"INSERT INTO `{sidecar}` VALUES ('{table}', '')")
    elif key is not None:
        merge(table, key)  # name=value segments: the MERGE takes it
    if key not in (None, "other"):
        valid = scalar(mcon, "SELECT valid FROM sanitize_parse_partition_key(?)", [key])
        assert valid is (case == "no such partition")  # well-formed, but not in the table
    queries = registry_queries(mcon, table, sidecar)
    assert run(bq, queries["sidecar"])[0] == []
    assert run(bq, queries["full"])[0] == [{"schema_registry": report[-1]["registry"]}]


# --- type mapping through a load job -----------------------------------------


def utc(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value


def array(value):
    """BigQuery reads a NULL array as an empty one."""
    return [] if value is None else value


@dataclass(frozen=True)
class TypeCase:
    name: str
    duckdb_type: str
    values: tuple[str, ...]  # SQL expressions, one row each (id 1, 2, ...)
    bigquery_type: str  # in our DDL, from BigQuery's Parquet conversion table
    field_type: str  # what tables.get reports for it
    expected: Callable[[Any], Any] = lambda v: v  # DuckDB's value -> BigQuery's
    profile: bool = True


TYPE_CASES = [
    TypeCase("bigint", "BIGINT", ("42", "NULL", "-9223372036854775807"), "INT64", "INTEGER"),
    TypeCase("integer", "INTEGER", ("7", "NULL", "-2147483648"), "INT64", "INTEGER"),
    TypeCase("smallint", "SMALLINT", ("-3", "NULL"), "INT64", "INTEGER"),
    TypeCase("utinyint", "UTINYINT", ("255", "NULL"), "INT64", "INTEGER"),
    TypeCase("ubigint", "UBIGINT", ("9223372036854775807", "NULL"), "INT64", "INTEGER"),
    TypeCase("double", "DOUBLE", ("1.5", "NULL", "-1e300"), "FLOAT64", "FLOAT"),
    TypeCase("float", "FLOAT", ("1.25", "NULL"), "FLOAT64", "FLOAT"),
    TypeCase("varchar", "VARCHAR", ("'héllo'", "NULL", "''"), "STRING", "STRING"),
    TypeCase("boolean", "BOOLEAN", ("true", "NULL", "false"), "BOOL", "BOOLEAN"),
    TypeCase(
        "timestamptz", "TIMESTAMPTZ", ("'2026-06-29 12:34:56.123456+02'", "NULL", "'1970-01-01 00:00:00+00'"),
        "TIMESTAMP", "TIMESTAMP",
    ),
    # Not profiled: written TIMESTAMP(MILLIS, not UTC), read as UTC (docs/bigquery.md's choice).
    TypeCase(
        "timestamp_ms", "TIMESTAMP_MS", ("'2026-06-29 12:34:56.789'", "NULL"), "TIMESTAMP", "TIMESTAMP",
        expected=lambda v: None if v is None else utc(v), profile=False,
    ),
    TypeCase("date", "DATE", ("'2026-06-29'", "NULL", "'0001-01-01'"), "DATE", "DATE"),
    TypeCase("time", "TIME", ("'12:34:56.789012'", "NULL", "'00:00:00'"), "TIME", "TIME"),
    TypeCase("blob", "BLOB", ("'\\xAA\\x00b'", "NULL", "''"), "BYTES", "BYTES"),
    TypeCase(
        "uuid", "UUID", ("'a8098c1a-f86e-11da-bd1a-00112444be1e'", "NULL"), "BYTES", "BYTES",
        expected=lambda v: None if v is None else v.bytes,
    ),
    TypeCase("decimal_18_2", "DECIMAL(18,2)", ("12345.67", "NULL", "-0.01"), "NUMERIC(18, 2)", "NUMERIC"),
    # bqemulator 1.4 reports a BIGNUMERIC column as NUMERIC (BigQuery: BIGNUMERIC).
    TypeCase(
        "decimal_38_12", "DECIMAL(38,12)", ("12345678901234567890.123456789012", "NULL"), "BIGNUMERIC(38, 12)", "NUMERIC",
    ),
    TypeCase(
        "struct", "STRUCT(a BIGINT, b VARCHAR)", ("{'a': 7, 'b': 'x'}", "NULL", "{'a': NULL, 'b': 'y'}"),
        "STRUCT<`a` INT64, `b` STRING>", "RECORD",
    ),
    TypeCase(
        "struct_with_list", "STRUCT(xs BIGINT[])", ("{'xs': [1, NULL, 2]}", "NULL", "{'xs': NULL}"),
        "STRUCT<`xs` ARRAY<INT64>>", "RECORD",
        expected=lambda v: None if v is None else {"xs": array(v["xs"])},
    ),
    TypeCase(
        "list_of_strings", "VARCHAR[]", ("['p', 'q']", "NULL", "[]", "['x', NULL]"), "ARRAY<STRING>", "STRING",
        expected=array,
    ),
    TypeCase(
        "list_of_structs", "STRUCT(k VARCHAR, v BIGINT)[]", ("[{'k': 'a', 'v': 1}, {'k': NULL, 'v': 2}]", "NULL", "[]", "[NULL, {'k': 'b', 'v': 3}]"),
        "ARRAY<STRUCT<`k` STRING, `v` INT64>>", "RECORD", expected=array,
    ),
    # The profile wraps the inner lists: ARRAY<STRUCT<element ARRAY<INT64>>>.
    TypeCase(
        "list_of_lists", "BIGINT[][]", ("[[1, 2], [3]]", "NULL", "[[4], NULL]", "[[NULL, 5]]"),
        "ARRAY<STRUCT<`element` ARRAY<INT64>>>", "RECORD",
        expected=lambda v: [{"element": array(e["element"])} for e in array(v)],
    ),
    # An inner list that is (or, its NULLs dropped, becomes) empty.
    TypeCase(
        "list_of_lists_empty_inner", "BIGINT[][]", ("[[4], []]", "[[1], [NULL]]", "[[]]"),
        "ARRAY<STRUCT<`element` ARRAY<INT64>>>", "RECORD",
        expected=lambda v: [{"element": array(e["element"])} for e in array(v)],
    ),
    TypeCase(
        "map", "MAP(VARCHAR, BIGINT)", ("MAP {'k1': 1, 'k2': 2}", "NULL"),
        # Under the profile a map is written as its key_value record (named
        # by the field-name policy: `keyvalue`), which DuckDB reads back as
        # BigQuery does: the expected value is the file's own.
        "STRUCT<`keyvalue` ARRAY<STRUCT<`key` STRING, `value` INT64>>>", "RECORD",
    ),
]


def null_array_elements(value, path: str = "") -> list[str]:
    """Where a list holds a NULL element (BigQuery: "an array element in a
    table can never be NULL"; the profile drops them)."""
    if isinstance(value, list):
        found = [f"{path}[{i}]" for i, e in enumerate(value) if e is None]
        return found + [p for i, e in enumerate(value) for p in null_array_elements(e, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [p for k, e in value.items() for p in null_array_elements(e, f"{path}.{k}")]
    return []


def normalize_etl(row: dict) -> dict:
    return {**row, "ingestion_timestamp": utc(row["ingestion_timestamp"])}


@pytest.mark.parametrize(
    "case",
    TYPE_CASES,
    ids=[c.name for c in TYPE_CASES],
)
def test_type_mapping_through_a_load_job(con, bq_client, dataset, tmp_path, case: TypeCase):
    # The input, written by DuckDB; the file BigQuery gets, by sanitize_pipeline.
    source = tmp_path / "bronze" / "year=2026/month=06/date=2026-06-29" / "in.parquet"
    source.parent.mkdir(parents=True)
    rows = " UNION ALL ".join(
        f"SELECT {i}::BIGINT AS id, CAST({value} AS {case.duckdb_type}) AS c" for i, value in enumerate(case.values, 1)
    )
    con.execute(f"COPY ({rows}) TO {sql_literal(str(source))} (FORMAT parquet)")
    report = run_pipeline(
        con, tmp_path / "bronze", tmp_path / "silver", start_date="2026-06-29", end_date="2026-06-29",
        input_format="parquet", bigquery_profile=case.profile,
    )
    assert [r["status"] for r in report] == ["written"], report
    path = Path(report[0]["output_path"])
    if case.profile:
        # pyarrow's read of the file: the profile left no NULL array element.
        written = pq.ParquetFile(str(path)).read(columns=["id", "c"]).to_pylist()
        assert [(r["id"], null_array_elements(r["c"])) for r in written if null_array_elements(r["c"])] == []

    ddl = parse_external_ddl(
        scalar(con, "SELECT ddl FROM sanitize_bigquery_ddl(?, table_name := 'p.d.t', hive_uri_prefix := 'gs://b/t')",
               [report[0]["registry"]])
    )
    assert ddl.columns == [("c", case.bigquery_type), ("id", "INT64")] + ETL_COLUMNS
    # BigQuery matches by name; bqemulator by position: the orders agree.
    assert pq.ParquetFile(str(path)).schema_arrow.names == [n for n, _ in ddl.columns]

    # The file's columns only (bqemulator loads by position).
    table = f"{BQ_PROJECT}.{dataset}.t"
    run(bq_client, native_table_ddl(table, ddl, partition_columns=False))
    schema = {f.name: f for f in bq_client.get_table(table).schema}
    assert schema["c"].field_type == case.field_type
    assert schema["c"].mode == ("REPEATED" if case.bigquery_type.startswith("ARRAY<") else "NULLABLE")
    job = load_file(bq_client, table, path)
    assert job.output_rows == len(case.values)

    got, _ = run(bq_client, f"SELECT * FROM `{table}` ORDER BY id")
    result = con.execute(f"SELECT * FROM read_parquet({sql_literal(str(path))}, hive_partitioning = false) ORDER BY id")
    names = [d[0] for d in result.description]
    expected = [normalize_etl({**dict(zip(names, row)), "c": case.expected(row[0])}) for row in result.fetchall()]
    assert [normalize_etl(r) for r in got] == expected
