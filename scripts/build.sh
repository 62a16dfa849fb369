#!/usr/bin/env bash
# Builds the extension and lays out a local extension repository:
#   build/release/schema_sanitizer.duckdb_extension
#   build/repository/v<DUCKDB_VERSION>/<platform>/schema_sanitizer.duckdb_extension
#   build/repository/v<DUCKDB_NEXT_VERSION>/<platform>/... (the same binary)
# so that `SET custom_extension_repository = '<abs>/build/repository'; INSTALL schema_sanitizer;` works.
set -euo pipefail
source "$(dirname "$0")/config.sh"
cd "$ROOT"
cargo build --release --features extension
case "$(uname -s)" in Darwin) LIB=target/release/lib${EXTENSION_NAME}.dylib ;; *) LIB=target/release/lib${EXTENSION_NAME}.so ;; esac
mkdir -p build/release "build/repository/v${DUCKDB_VERSION}/${PLATFORM}"
OUT="build/release/${EXTENSION_NAME}.duckdb_extension"
REPO_FILE="build/repository/v${DUCKDB_VERSION}/${PLATFORM}/${EXTENSION_NAME}.duckdb_extension"
# Write to a temporary name and rename: a process that has the old file
# loaded keeps its inode instead of crashing on a file rewritten in place.
python3 scripts/append_metadata.py --library "$LIB" --out "$OUT.tmp" --platform "$PLATFORM" \
  --duckdb-version "$C_API_VERSION" --extension-version "v${EXTENSION_VERSION}" --abi-type "$ABI_TYPE"
cp "$OUT.tmp" "$REPO_FILE.tmp"
mv -f "$REPO_FILE.tmp" "$REPO_FILE"
# The same binary for the newer DuckDB line: INSTALL by name looks under
# the client's own version.
NEXT_DIR="build/repository/v${DUCKDB_NEXT_VERSION}/${PLATFORM}"
mkdir -p "$NEXT_DIR"
cp "$OUT.tmp" "$NEXT_DIR/${EXTENSION_NAME}.duckdb_extension.tmp"
mv -f "$NEXT_DIR/${EXTENSION_NAME}.duckdb_extension.tmp" "$NEXT_DIR/${EXTENSION_NAME}.duckdb_extension"
mv -f "$OUT.tmp" "$OUT"
echo "built $OUT and the repository build/repository (v${DUCKDB_VERSION} and v${DUCKDB_NEXT_VERSION}, ${PLATFORM})"
