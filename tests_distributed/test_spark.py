"""The distributed job of examples/distributed on Apache Spark, local mode
(local[2], bound to 127.0.0.1): the scenario and the two checks of
tests/test_distributed_dask.py (tests/distributed_scenario.py) through
spark_sanitize.py. Runs in .venv-spark: `make test-distributed`.
"""
from __future__ import annotations

import os
from pathlib import Path

import distributed_scenario as scenario
import spark_sanitize


def test_spark_local_mode_equals_one_run(con, extension_file: Path, tmp_path: Path):
    """The extension shipped as a file with SparkContext.addFile."""
    shards = scenario.write_shards(tmp_path / "in")
    merged, outputs = spark_sanitize.run(extension_file, shards, tmp_path / "out")
    scenario.check_registry(con, merged, shards)
    scenario.check_rows(con, outputs, shards)
    # The shards were written by Spark's Python workers, not by this process.
    assert os.getpid() not in {o["pid"] for o in outputs}, outputs


def test_spark_repository_directory(con, repository: Path, tmp_path: Path):
    """The extension as a local repository directory (INSTALL ... FROM on each executor)."""
    shards = scenario.write_shards(tmp_path / "in")
    merged, outputs = spark_sanitize.run(repository, shards, tmp_path / "out")
    scenario.check_registry(con, merged, shards)
    scenario.check_rows(con, outputs, shards)
