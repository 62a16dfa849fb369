{#-
  Every day, as one relation: a view over all the daily files, unioned by
  name. union_by_name merges the columns and the struct fields of every file
  (a day-1 row has device.model NULL; day 2 has every column day 1 had, the
  registry guarantees it, plus its new ones). Recreated on every run, after
  events_day.
-#}
-- depends_on: {{ ref('events_day') }}
{{ config(materialized = 'view') }}

select * exclude (schema_registry, schema_drifts)
from read_parquet({{ sanitizer_literal(sanitizer_all_days()) }}, union_by_name = true)
-- dbt-duckdb's external materialization writes one all-NULL row for an
-- empty day; every real row has its source_file.
where source_file is not null
