#!/usr/bin/env bash
# Runs every test layer: cargo (engine units and property tests), the
# sqllogictest files of test/sql against the built extension, and pytest
# (Python client, shell, dbt-duckdb). Builds first.
set -uo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
# No test reaches beyond 127.0.0.1: no cloud instance-metadata lookups
# (AWS, GCE, Azure's IMDS; docs/remote.md).
export AWS_EC2_METADATA_DISABLED=true
export NO_GCE_CHECK=true
export AZURE_TOKEN_CREDENTIALS=dev
bash scripts/setup.sh || exit 1
# Every layer runs, whatever an earlier one gave: a failure in one layer
# hides none of the others. Each layer's counts are printed at the end,
# then the sum, and the exit status is non-zero if any layer failed.
LOGS="$(mktemp -d)"
SUMMARY=()
FAILED=0
layer() {
  local name=$1
  shift
  echo "== $name"
  local log="$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9' '_').log"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local counts
  counts="$(python3 "$ROOT/scripts/test_counts.py" "$log")"
  SUMMARY+=("$name: exit $rc; $counts")
  if [ "$rc" -ne 0 ]; then FAILED=1; fi
}
layer "module floors and safety notes" bash -c '"$VENV/bin/python" scripts/check_floors.py && "$VENV/bin/python" scripts/check_safety_notes.py'
layer "cargo test" cargo test --quiet
layer "build" bash scripts/build.sh
layer "sqllogictest (test/sql)" "$VENV/bin/python" scripts/sqllogictest.py --repository build/repository test/sql
layer "pytest (tests/)" "$VENV/bin/python" -m pytest -q tests
# The same binary on the newer DuckDB line: every SQL test, and the tests of
# the Python client (those that need dbt, the CLI or the emulators' tools
# run above only).
layer "DuckDB ${DUCKDB_NEXT_VERSION}: sqllogictest (test/sql)" \
  "$VENV_NEXT/bin/python" scripts/sqllogictest.py --repository build/repository test/sql
layer "DuckDB ${DUCKDB_NEXT_VERSION}: pytest (Python client tests)" \
  "$VENV_NEXT/bin/python" -m pytest -q -k "not dbt and not shell" tests/test_python_client.py tests/test_bind_cache.py \
  tests/test_interrupt.py tests/test_thread_budget.py tests/test_panic_containment.py tests/test_pipeline.py \
  tests/test_pipeline_progress.py tests/test_parquet_corpus.py tests/test_file_system_parity.py
echo
echo "== summary"
for line in "${SUMMARY[@]}"; do echo "$line"; done
python3 "$ROOT/scripts/test_counts.py" --total "$LOGS"/*.log
exit "$FAILED"
