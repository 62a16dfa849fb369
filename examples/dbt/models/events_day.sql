{#-
  One day of events, sanitized, written to its own Parquet file
  (silver/events_<day>.parquet); the relation `events_day` is a view over that
  file. The scan starts from the newest registry of the files already written,
  so a field keeps its column name and type from day to day and a changed
  type gets a versioned column (device.os_v2_integer) instead of a conflict.
  schema_registry and schema_drifts stay in the file: the registry is what the
  next run starts from, the drifts are the day's audit trail.
-#}
{{ config(
    materialized = 'external',
    location = sanitizer_day_file(var('day')),
    format = 'parquet',
) }}

select *
from sanitize_jsonl(
    {{ sanitizer_literal(sanitizer_source_path()) }},
    registry := {{ sanitizer_latest_registry_in_files(sanitizer_all_days()) }}
)
