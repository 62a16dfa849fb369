#!/usr/bin/env bash
# Moves the project to another DuckDB version: rewrites DUCKDB_VERSION in
# extension_config and the matching `duckdb` crate pin in Cargo.toml.
# Usage: scripts/set_duckdb_version.sh 1.5.7   (then see docs/updating.md)
set -euo pipefail
new="${1:?usage: $0 M.m.p}"
cd "$(dirname "$0")/.."
IFS=. read -r major minor patch <<<"$new"
crate="1.$((major * 10000 + minor * 100 + patch)).0"
sed -i "s/^DUCKDB_VERSION=.*/DUCKDB_VERSION=$new/" extension_config
sed -i "s/^duckdb = { version = \"=[0-9.]*\"/duckdb = { version = \"=$crate\"/" Cargo.toml
echo "DuckDB $new: extension_config and Cargo.toml (duckdb =$crate) updated; now follow docs/updating.md"
