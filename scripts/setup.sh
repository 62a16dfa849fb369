#!/usr/bin/env bash
# Creates .venv with the DuckDB Python client and CLI pinned to the
# DUCKDB_VERSION of extension_config, plus the test tools. Idempotent.
# `setup.sh run`: the client and the shell only, all `make run` needs (the
# test tools take minutes to install; `make test` adds them).
set -euo pipefail
source "$(dirname "$0")/config.sh"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if [ "${1:-}" = "run" ]; then
  stamp_run="$VENV/.installed-run-$DUCKDB_VERSION"
  if [ ! -f "$stamp_run" ] && ! ls "$VENV"/.installed-"$DUCKDB_VERSION"-* >/dev/null 2>&1; then
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "duckdb==$DUCKDB_VERSION" "duckdb-cli==$DUCKDB_VERSION"
    touch "$stamp_run"
  fi
  exit 0
fi
stamp="$VENV/.installed-$DUCKDB_VERSION-$(sha1sum "$ROOT/scripts/requirements-test.txt" | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "duckdb==$DUCKDB_VERSION" "duckdb-cli==$DUCKDB_VERSION" -r "$ROOT/scripts/requirements-test.txt"
  touch "$stamp"
fi
# A second venv with the Python client of DUCKDB_NEXT_VERSION, for the SQL
# and client tests against the newer DuckDB line (scripts/test.sh); its
# other tools follow the pins of requirements-test.txt.
if [ ! -x "$VENV_NEXT/bin/python" ]; then
  python3 -m venv "$VENV_NEXT"
fi
stamp_next="$VENV_NEXT/.installed-$DUCKDB_NEXT_VERSION-$(sha1sum "$ROOT/scripts/requirements-test.txt" | cut -c1-12)"
if [ ! -f "$stamp_next" ]; then
  # pytest, pyarrow and numpy at the pins of requirements-test.txt.
  pins="$(grep -E '^(pytest|pyarrow|numpy)==' "$ROOT/scripts/requirements-test.txt")"
  # shellcheck disable=SC2086
  "$VENV_NEXT/bin/pip" install --quiet --disable-pip-version-check "duckdb==$DUCKDB_NEXT_VERSION" $pins
  touch "$stamp_next"
fi
# Azurite, the Azure Storage emulator of tests/test_remote_storage.py, is a
# Node.js package: installed into .tools/ with the machine's npm.
AZURITE_VERSION=3.37.0
if [ ! -x "$ROOT/.tools/node_modules/.bin/azurite-blob" ] || [ ! -f "$ROOT/.tools/.azurite-$AZURITE_VERSION" ]; then
  if command -v npm >/dev/null 2>&1; then
    mkdir -p "$ROOT/.tools"
    npm install --prefix "$ROOT/.tools" --silent --no-audit --no-fund "azurite@$AZURITE_VERSION" >/dev/null
    touch "$ROOT/.tools/.azurite-$AZURITE_VERSION"
  else
    echo "setup: npm not found; the Azure emulator tests will fail (install Node.js and npm)" >&2
  fi
fi
