{#- Helpers of the schema_sanitizer example (docs/dbt.md). -#}

{% macro sanitizer_literal(text) -%}
  {#- `text` as a SQL string literal. -#}
  {{- return("'" ~ (text | string | replace("'", "''")) ~ "'") -}}
{%- endmacro %}

{% macro sanitizer_silver_dir() -%}
  {{- return(var('silver_dir', 'silver') | string) -}}
{%- endmacro %}

{% macro sanitizer_day_file(day) -%}
  {#- The Parquet file of one day: one file per run, overwritten when the day is run again. -#}
  {{- return(sanitizer_silver_dir() ~ '/events_' ~ day ~ '.parquet') -}}
{%- endmacro %}

{% macro sanitizer_all_days() -%}
  {{- return(sanitizer_silver_dir() ~ '/events_*.parquet') -}}
{%- endmacro %}

{% macro sanitizer_source_path() -%}
  {{- return(var('source_path', 'data/events_' ~ var('day') ~ '.jsonl') | string) -}}
{%- endmacro %}

{% macro sanitizer_registry_in(relation_sql) -%}
  {#-
    The registry to start a run from, as a SQL expression for
    `sanitize_jsonl(..., registry := ...)`: the newest `schema_registry` of
    `relation_sql` (a relation, or a read_parquet(...) call), or NULL (a new
    registry) when it has none. Every scan puts the registry after it on
    exactly one row. Newest = highest schema_generation, then the latest
    ingestion_timestamp. Read when the model is compiled at run time, so the
    registry is a literal in target/run/...
  -#}
  {%- if not execute -%}
    {{- return('NULL') -}}
  {%- endif -%}
  {%- set newest = run_query(
        'select schema_registry from ' ~ relation_sql
        ~ ' where schema_registry is not null'
        ~ " order by json_extract(schema_registry, '$.schema_generation')::bigint desc, ingestion_timestamp desc"
        ~ ' limit 1') -%}
  {%- if newest.rows | length == 0 -%}
    {{- return('NULL') -}}
  {%- endif -%}
  {{- return(sanitizer_literal(newest.rows[0][0])) -}}
{%- endmacro %}

{% macro sanitizer_latest_registry_in_files(parquet_glob) -%}
  {#- sanitizer_registry_in over Parquet files (only that column is read), NULL before the first file. -#}
  {%- if not execute -%}
    {{- return('NULL') -}}
  {%- endif -%}
  {%- set files = run_query('select count(*) from glob(' ~ sanitizer_literal(parquet_glob) ~ ')') -%}
  {%- if files.rows[0][0] == 0 -%}
    {{- return('NULL') -}}
  {%- endif -%}
  {{- return(sanitizer_registry_in('read_parquet(' ~ sanitizer_literal(parquet_glob) ~ ', union_by_name = true)')) -}}
{%- endmacro %}

{% macro get_incremental_sanitizer_widen_sql(arg_dict) -%}
  {#-
    incremental_strategy = 'sanitizer_widen' (the events_table model).
    DuckDB's INSERT casts a STRUCT to the column's STRUCT type by field name
    and silently drops the fields the column lacks, and on_schema_change only
    adds and retypes top-level columns. So, before inserting, every column
    whose type the batch changed (a STRUCT, or a list of STRUCTs, that grew a
    field) is altered to the UNION of both types, which DuckDB computes
    (UNION ALL BY NAME merges struct fields): the old rows get NULL in the
    new fields, and no field of either side is ever dropped. Then the rows of
    the batch's source files are replaced (re-running a day does not
    duplicate it) and the batch is inserted by name. One statement, in the
    materialization's transaction.
  -#}
  {%- set target = arg_dict['target_relation'] -%}
  {%- set temp = arg_dict['temp_relation'] -%}
  {%- set union_types = {} -%}
  {%- for row in run_query('describe (from ' ~ target ~ ' limit 0) union all by name (from ' ~ temp ~ ' limit 0)').rows -%}
    {%- do union_types.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- for row in run_query('describe ' ~ target).rows -%}
    {%- if row[0] in union_types and union_types[row[0]] != row[1] %}
  alter table {{ target }} alter column {{ adapter.quote(row[0]) }} set data type {{ union_types[row[0]] }};
    {%- endif -%}
  {%- endfor %}
  delete from {{ target }} where source_file in (select source_file from {{ temp }});
  insert into {{ target }} by name select * from {{ temp }}
{%- endmacro %}
