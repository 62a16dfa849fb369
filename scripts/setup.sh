#!/usr/bin/env bash
# Creates .venv with the DuckDB Python client and CLI pinned to the
# DUCKDB_VERSION of extension_config, plus the test tools. Idempotent.
set -euo pipefail
source "$(dirname "$0")/config.sh"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
stamp="$VENV/.installed-$DUCKDB_VERSION-$(sha1sum "$ROOT/scripts/requirements-test.txt" | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "duckdb==$DUCKDB_VERSION" "duckdb-cli==$DUCKDB_VERSION" -r "$ROOT/scripts/requirements-test.txt"
  touch "$stamp"
fi
