# Sourced by the scripts: exports the settings of extension_config and the
# platform name DuckDB uses for this machine.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
while IFS='=' read -r key value; do
  case "$key" in ''|\#*) continue ;; esac
  export "$key=$value"
done < "$ROOT/extension_config"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLATFORM=linux_amd64 ;;
  Linux-aarch64) PLATFORM=linux_arm64 ;;
  Darwin-arm64) PLATFORM=osx_arm64 ;;
  Darwin-x86_64) PLATFORM=osx_amd64 ;;
  *) echo "unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
export ROOT PLATFORM
export VENV="${VENV:-$ROOT/.venv}"
# The Python client of DUCKDB_NEXT_VERSION (scripts/setup.sh).
export VENV_NEXT="${VENV_NEXT:-$ROOT/.venv-duckdb-next}"
