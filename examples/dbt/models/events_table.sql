{#-
  The same events as one incremental TABLE in the database (docs/dbt.md,
  "An incremental table"). A plain incremental model would lose the new
  struct fields (DuckDB's INSERT drops them without an error); the
  sanitizer_widen strategy (macros/sanitizer.sql) first widens the struct
  columns to the union of the table's and the batch's types. The registry
  is read back from the table itself.
-#}
{{ config(
    materialized = 'incremental',
    incremental_strategy = 'sanitizer_widen',
    on_schema_change = 'append_new_columns',
) }}

select *
from sanitize_jsonl(
    {{ sanitizer_literal(sanitizer_source_path()) }},
    registry := {{ sanitizer_registry_in(this) if is_incremental() else 'NULL' }}
)
