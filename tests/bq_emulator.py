"""Pytest fixtures for a BigQuery API emulator on 127.0.0.1.

The emulator is bqemulator (pinned in scripts/requirements-test.txt), run by
tests/bq_emulator_launcher.py in a subprocess, in memory and offline. A test
module uses it with

    from bq_emulator import bq_server, bq_client  # noqa: F401 (fixtures)

`bq_server` (one emulator per test module) yields its REST base URL;
`bq_client` is a google.cloud.bigquery.Client for project BQ_PROJECT on it,
with anonymous credentials. Projects need no creating: a dataset created in
any project makes it exist.

bqemulator also registers a pytest plugin of its own (bqemu_* fixtures, an
in-process server that would download DuckDB's spatial extension). Its import
fails without testcontainers, so pytest.ini turns it off (-p no:bqemulator).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

BQ_PROJECT = "test-project"
LAUNCHER = Path(__file__).with_name("bq_emulator_launcher.py")
START_TIMEOUT_S = 60.0


def start_emulator(workdir: Path, project: str = BQ_PROJECT) -> tuple[subprocess.Popen, dict, Path]:
    """Starts the launcher; returns the process, its ready record
    ({"rest_url", "grpc_endpoint", "pid"}) and its log file."""
    ready = workdir / "ready.json"
    log = workdir / "emulator.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(LAUNCHER), "--ready-file", str(ready), "--project", project],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,  # bqemulator reads .bqemu.toml from its working directory
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready.exists():
        if process.poll() is not None:
            raise RuntimeError(f"bqemulator exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            stop_emulator(process)
            raise RuntimeError(f"bqemulator not ready after {START_TIMEOUT_S}s:\n{log.read_text()[-4000:]}")
        time.sleep(0.05)
    return process, json.loads(ready.read_text()), log


def stop_emulator(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def bq_server(tmp_path_factory):
    """A running emulator for the module; yields its REST base URL
    (http://127.0.0.1:PORT)."""
    process, info, _log = start_emulator(tmp_path_factory.mktemp("bqemulator"))
    try:
        yield info["rest_url"]
    finally:
        stop_emulator(process)


@pytest.fixture
def bq_client(bq_server: str):
    """A google.cloud.bigquery.Client for BQ_PROJECT against the emulator,
    with anonymous credentials."""
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery

    client = bigquery.Client(
        project=BQ_PROJECT,
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=bq_server),
    )
    try:
        yield client
    finally:
        client.close()
