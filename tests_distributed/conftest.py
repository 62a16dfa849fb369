"""Fixtures for the Spark test, which runs in its own venv (.venv-spark, made
by scripts/test_distributed.sh) and so outside `pytest tests`. It shares the
scenario and the checks of tests/distributed_scenario.py with the Dask test.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import duckdb
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT / "examples" / "distributed"))

EXTENSION_NAME = "schema_sanitizer"
BUILD_HINT = "build it first with `bash scripts/build.sh` (after `bash scripts/setup.sh`)"

# Nothing reaches beyond 127.0.0.1: no cloud instance-metadata lookups.
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
os.environ["NO_GCE_CHECK"] = "true"
os.environ["AZURE_TOKEN_CREDENTIALS"] = "dev"


@pytest.fixture(scope="session")
def extension_file() -> Path:
    path = REPO_ROOT / "build" / "release" / f"{EXTENSION_NAME}.duckdb_extension"
    if not path.is_file():
        pytest.fail(f"{path} is missing; {BUILD_HINT}", pytrace=False)
    return path


@pytest.fixture(scope="session")
def repository() -> Path:
    repo = REPO_ROOT / "build" / "repository"
    if not (repo / f"v{duckdb.__version__}").is_dir():
        pytest.fail(f"{repo}/v{duckdb.__version__} is missing; {BUILD_HINT}", pytrace=False)
    return repo


@pytest.fixture
def con(repository: Path, tmp_path: Path):
    """The reference connection: the extension INSTALLed from build/repository
    into a per-test extension_directory, for the single-machine run."""
    connection = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        connection.execute("SET extension_directory = ?", [str(tmp_path / "ext")])
        connection.execute(f"INSTALL {EXTENSION_NAME} FROM '{repository}'")
        connection.execute(f"LOAD {EXTENSION_NAME}")
        yield connection
    finally:
        connection.close()
