#!/usr/bin/env bash
# Runs every test layer: cargo (engine units and property tests), the
# sqllogictest files of test/sql against the built extension, and pytest
# (Python client, shell, dbt-duckdb). Builds first.
set -euo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
# No test reaches beyond 127.0.0.1: no cloud instance-metadata lookups.
export AWS_EC2_METADATA_DISABLED=true
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
