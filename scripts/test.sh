#!/usr/bin/env bash
# Runs every test layer: cargo (engine units and property tests), the
# sqllogictest files of test/sql against the built extension, and pytest
# (Python client, shell, dbt-duckdb). Builds first.
set -euo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
# No test reaches beyond 127.0.0.1: no cloud instance-metadata lookups
# (AWS, GCE, Azure's IMDS; docs/remote.md).
export AWS_EC2_METADATA_DISABLED=true
export NO_GCE_CHECK=true
export AZURE_TOKEN_CREDENTIALS=dev
bash scripts/setup.sh
echo "== module floors (docs/architecture.md)"
"$VENV/bin/python" scripts/check_floors.py
"$VENV/bin/python" scripts/check_safety_notes.py
echo "== cargo test"
cargo test --quiet
echo "== build"
bash scripts/build.sh
echo "== sqllogictest (test/sql)"
"$VENV/bin/python" scripts/sqllogictest.py --repository build/repository test/sql
echo "== pytest (tests/)"
"$VENV/bin/python" -m pytest -q tests
# The same binary on the newer DuckDB line: every SQL test, and the tests of
# the Python client (those that need dbt, the CLI or the emulators' tools
# run above only).
echo "== DuckDB ${DUCKDB_NEXT_VERSION}: sqllogictest (test/sql)"
"$VENV_NEXT/bin/python" scripts/sqllogictest.py --repository build/repository test/sql
echo "== DuckDB ${DUCKDB_NEXT_VERSION}: pytest (Python client tests)"
"$VENV_NEXT/bin/python" -m pytest -q -k "not dbt and not shell" tests/test_python_client.py tests/test_bind_cache.py \
  tests/test_interrupt.py tests/test_thread_budget.py tests/test_panic_containment.py tests/test_pipeline.py \
  tests/test_pipeline_progress.py tests/test_parquet_corpus.py
