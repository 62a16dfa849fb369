"""The distributed job of examples/distributed on Dask (docs/distributed.md):
a LocalCluster of 2 worker processes x 1 thread on 127.0.0.1 probes six
drifting shards, the driver merges the registries in shard order, the
workers write each shard under the merged registry in strict mode.

Checked against ONE single-machine run over every file in shard order
(tests/distributed_scenario.py): the merged registry is that run's registry,
and the written Parquet rows are that run's rows (multiset, names, types).
The Spark adapter runs the same scenario in tests_distributed/ (its own venv,
`make test-distributed`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import distributed_scenario as scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "distributed"
sys.path.insert(0, str(EXAMPLES))

import dask_sanitize  # noqa: E402  (dask and distributed are pinned in scripts/requirements-test.txt)
import shard_job  # noqa: E402


def test_dask_local_cluster_equals_one_run(con, extension_file: Path, tmp_path: Path):
    """The extension shipped as a file with UploadFile, to the default LocalCluster."""
    shards = scenario.write_shards(tmp_path / "in")
    merged, outputs = dask_sanitize.run(extension_file, shards, tmp_path / "out")
    scenario.check_registry(con, merged, shards)
    scenario.check_rows(con, outputs, shards)
    # The shards were written by the worker processes, not by this one.
    assert os.getpid() not in {o["pid"] for o in outputs}, outputs


def test_dask_given_scheduler_and_repository(con, repository: Path, tmp_path: Path):
    """The extension as a local repository directory (INSTALL ... FROM on
    each worker), on a cluster started here and passed by its address."""
    from distributed import LocalCluster

    shards = scenario.write_shards(tmp_path / "in")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        merged, outputs = dask_sanitize.run(repository, shards, tmp_path / "out", scheduler=cluster.scheduler_address)
    scenario.check_registry(con, merged, shards)
    scenario.check_rows(con, outputs, shards)


def test_merge_order_matters(con, extension_file: Path, tmp_path: Path):
    """Why the adapters gather in shard order: the same registries merged in
    another order name the versions differently (so a merge in completion
    order would not be the single run's registry)."""
    shards = scenario.write_shards(tmp_path / "in")
    registries = [shard_job.probe_shard(extension_file, i, files) for i, files in enumerate(shards)]
    in_order = json.loads(shard_job.merge_registries(extension_file, registries))
    reversed_order = json.loads(shard_job.merge_registries(extension_file, registries[::-1]))
    assert in_order == json.loads(scenario.single_machine_registry(con, shards))
    assert in_order != reversed_order


def test_materialize_refuses_object_store_output(extension_file: Path, tmp_path: Path):
    shards = scenario.write_shards(tmp_path / "in", n_shards=1)
    registry = shard_job.probe_shard(extension_file, 0, shards[0])
    with pytest.raises(ValueError, match="not a local path"):
        shard_job.materialize_shard(extension_file, 0, shards[0], registry, "s3://bucket/part-0.parquet")


def test_dask_cli(extension_file: Path, tmp_path: Path, subprocess_env: dict[str, str]):
    """The script's __main__ guard: run as a program, its LocalCluster's
    spawned workers import it again without starting clusters of their own."""
    shards = scenario.write_shards(tmp_path / "in", n_shards=3)
    args = [sys.executable, str(EXAMPLES / "dask_sanitize.py"), "--extension", str(extension_file),
            "--output", str(tmp_path / "out")]
    for files in shards:
        args += ["--shard", *map(str, files)]
    done = subprocess.run(args, capture_output=True, text=True, env=subprocess_env, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [o["shard"] for o in report["outputs"]] == [0, 1, 2]
    assert sorted(os.listdir(tmp_path / "out")) == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    assert "amount_v2_string" in [f["name"] for f in report["registry"]["canonical_schema"]["fields"]]


def test_connection_takes_the_tasks_share(extension_file: Path, repository: Path):
    """Every task's connection is opened with its share, not DuckDB's defaults
    (every core, 80% of the RAM); from a file and from a repository alike."""
    for extension in (extension_file, repository):
        con = shard_job.connect(extension, threads=1, memory_limit="256MB")
        try:
            threads, limit = con.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()
            loaded = con.execute(
                "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'schema_sanitizer'"
            ).fetchone()
        finally:
            con.close()
        assert (threads, limit, loaded) == (1, "244.1 MiB", (True,)), extension


def test_dask_share_follows_the_workers():
    """A task's share on Dask: 1 thread, the worker's memory over its threads."""
    from distributed import Client, LocalCluster

    # In-process workers talk over inproc://, no socket at all.
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, memory_limit="2GiB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        assert dask_sanitize._share(client) == (1, "1024MiB")
