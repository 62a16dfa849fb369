"""Shared fixtures for the pytest layer: the built extension, a loaded connection, the CLI.

Every fixture that installs the extension points DuckDB's `extension_directory`
at a per-test temporary directory, so the tests neither read from nor write to
~/.duckdb/extensions.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import duckdb
import pytest

EXTENSION_NAME = "schema_sanitizer"
REPO_ROOT = Path(__file__).resolve().parents[1]
BUILD_HINT = "build it first with `bash scripts/build.sh` (after `bash scripts/setup.sh`)"


def sql_literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def duckdb_platform() -> str:
    with duckdb.connect() as con:
        return con.execute("PRAGMA platform").fetchone()[0]


# No test may reach beyond 127.0.0.1: without credentials in the
# environment, the AWS, GCS and Azure credential chains would ask the
# instance metadata endpoint (169.254.169.254). The extension honours these
# switches as each provider's own libraries do (docs/remote.md); .ci/run and
# scripts/test.sh set them too.
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
os.environ["NO_GCE_CHECK"] = "true"
os.environ["AZURE_TOKEN_CREDENTIALS"] = "dev"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def repository(repo_root: Path) -> Path:
    """Absolute path of the local extension repository build/repository."""
    repo = repo_root / "build" / "repository"
    binary = repo / f"v{duckdb.__version__}" / duckdb_platform() / f"{EXTENSION_NAME}.duckdb_extension"
    if not binary.is_file():
        pytest.fail(
            f"the extension is not in the local repository: {binary} is missing; {BUILD_HINT}",
            pytrace=False,
        )
    return repo


@pytest.fixture(scope="session")
def extension_file(repo_root: Path) -> Path:
    """The built extension as a plain file (for LOAD '<path>')."""
    path = repo_root / "build" / "release" / f"{EXTENSION_NAME}.duckdb_extension"
    if not path.is_file():
        pytest.fail(f"{path} is missing; {BUILD_HINT}", pytrace=False)
    return path


@pytest.fixture
def extension_dir(tmp_path: Path) -> Path:
    """A per-test extension_directory, so INSTALL never touches the home directory."""
    return tmp_path / "ext"


def connect_and_load(repository: Path, extension_dir: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"SET extension_directory = {sql_literal(str(extension_dir))}")
    con.execute(f"SET custom_extension_repository = {sql_literal(str(repository))}")
    con.execute(f"FORCE INSTALL {EXTENSION_NAME}")
    con.execute(f"LOAD {EXTENSION_NAME}")
    return con


@pytest.fixture
def con(repository: Path, extension_dir: Path):
    """An in-memory connection with the extension INSTALLed by name from build/repository and LOADed."""
    connection = connect_and_load(repository, extension_dir)
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture(scope="session")
def duckdb_cli() -> Path:
    """The DuckDB shell of the venv (duckdb-cli), next to the running interpreter."""
    cli = Path(sys.executable).parent / "duckdb"
    if not (cli.is_file() and os.access(cli, os.X_OK)):
        pytest.fail(f"{cli} is missing: install the venv with `bash scripts/setup.sh`", pytrace=False)
    return cli


@pytest.fixture
def write_jsonl():
    """write_jsonl(path, records) writes one JSON document per line and returns the path."""

    def write(path: Path, records: list) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return path

    return write


@pytest.fixture
def subprocess_env(tmp_path: Path) -> dict[str, str]:
    """Environment for child processes: HOME in tmp_path (so a stray default
    extension directory would show up there, not in the real home) and no
    inherited panic-probe switch."""
    env = dict(os.environ)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env["HOME"] = str(home)
    env.pop("SCHEMA_SANITIZER_PANIC_PROBE", None)
    env["RUST_BACKTRACE"] = "0"
    return env
