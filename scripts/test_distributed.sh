#!/usr/bin/env bash
# The Spark adapter of examples/distributed (docs/distributed.md): its own
# venv, .venv-spark, with PySpark (local mode, the JVM from the machine's
# Java 17), then pytest on tests_distributed/. The Dask adapter's test runs
# with the others in tests/ (scripts/test.sh). Needs the built extension
# (bash scripts/build.sh).
set -euo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
# Nothing reaches beyond 127.0.0.1 (docs/remote.md).
export AWS_EC2_METADATA_DISABLED=true
export NO_GCE_CHECK=true
export AZURE_TOKEN_CREDENTIALS=dev
VENV_SPARK="${VENV_SPARK:-$ROOT/.venv-spark}"
# DuckDB at the version of extension_config; pandas below 3, which PySpark
# 4.3 warns about (docs/distributed.md); pyarrow and pytest at the pins of
# scripts/requirements-test.txt.
PYSPARK_VERSION=4.3.0
pins="$(grep -E '^(pytest|pyarrow)==' "$ROOT/scripts/requirements-test.txt" | tr '\n' ' ')"
if ! command -v java >/dev/null 2>&1; then
  echo "test_distributed: java not found; PySpark needs a JDK (17 or 21)" >&2
  exit 1
fi
if [ ! -x "$VENV_SPARK/bin/python" ]; then
  python3 -m venv "$VENV_SPARK"
fi
stamp="$VENV_SPARK/.installed-$(echo "$PYSPARK_VERSION $DUCKDB_VERSION $pins" | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  # shellcheck disable=SC2086
  "$VENV_SPARK/bin/pip" install --quiet --disable-pip-version-check \
    "pyspark==$PYSPARK_VERSION" "duckdb==$DUCKDB_VERSION" "pandas<3" $pins
  touch "$stamp"
fi
echo "== pytest (tests_distributed/: Spark local mode)"
"$VENV_SPARK/bin/python" -m pytest -q tests_distributed
