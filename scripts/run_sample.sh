#!/usr/bin/env bash
# The README's first command: build, install into the local extension
# repository, then INSTALL/LOAD by name in the DuckDB shell and query the
# shipped sample file.
set -euo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
bash scripts/setup.sh run
bash scripts/build.sh
"$VENV/bin/duckdb" -unsigned -c "
SET custom_extension_repository = '$ROOT/build/repository';
FORCE INSTALL schema_sanitizer;
LOAD schema_sanitizer;
SELECT * EXCLUDE (schema_registry, schema_drifts) FROM sanitize_jsonl('examples/events.jsonl');
SELECT drift.drift_type, drift.output_name, drift.new_schema
FROM (SELECT unnest(CAST(schema_drifts AS JSON)::JSON[]) AS d FROM sanitize_jsonl('examples/events.jsonl') WHERE schema_drifts IS NOT NULL),
     LATERAL (SELECT d->>'drift_type' AS drift_type, d->>'output_name' AS output_name, d->>'new_schema' AS new_schema) AS drift;
"
