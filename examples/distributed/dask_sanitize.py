"""Run shard_job.py on Dask: probe every shard, merge the registries in shard
order on the driver, materialize every shard under the merged registry.

    python examples/distributed/dask_sanitize.py \
        --extension build/release/schema_sanitizer.duckdb_extension \
        --output out/ --shard day1a.jsonl day1b.jsonl --shard day2.jsonl

Without --scheduler it starts a LocalCluster on 127.0.0.1. docs/distributed.md
has the stages and the pitfalls.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from distributed import Client, LocalCluster, get_worker
from distributed.diagnostics.plugin import UploadFile

import shard_job

SHARD_JOB_FILE = Path(shard_job.__file__).resolve()


def _share(client: Client) -> tuple[int, str]:
    """(threads, memory_limit) for one task: each worker thread runs one
    task, so a task gets 1 thread and its worker's memory divided by the
    worker's threads (the smallest worker decides)."""
    shares = [
        w["memory_limit"] // max(w["nthreads"], 1)
        for w in client.scheduler_info()["workers"].values()
        if w.get("memory_limit")
    ]
    if not shares:  # workers without a memory limit
        return 1, "1GB"
    return 1, f"{max(min(shares) // 2**20, 64)}MiB"


def run(
    extension: str | os.PathLike,
    shards: list[list[str]],
    output_dir: str | os.PathLike,
    scheduler: str | None = None,
    n_workers: int = 2,
    threads_per_worker: int = 1,
) -> tuple[str, list[dict]]:
    """Returns (merged registry JSON, [materialize_shard's result per shard, in shard order])."""
    extension = Path(extension).resolve()
    output_dir = Path(output_dir).resolve()
    shards = [[str(p) for p in paths] for paths in shards]
    cluster = None
    if scheduler is None:
        # Worker processes (not threads): each task's DuckDB connection is
        # then in its own process, as on a real cluster.
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        scheduler = cluster.scheduler_address
    try:
        with Client(scheduler) as client:
            # Ship the job module and, when it is a file, the extension to
            # every worker (also to workers that join later). The names keep
            # the two plugins apart: UploadFile has one fixed default name.
            client.register_plugin(UploadFile(str(SHARD_JOB_FILE)), name="upload-shard_job")
            shipped = extension.is_file()
            if shipped:
                client.register_plugin(UploadFile(str(extension), load=False), name=f"upload-{extension.name}")
                ext_arg = extension.name
            else:
                ext_arg = str(extension)  # must be readable at this path on every worker
            threads, memory_limit = _share(client)

            # What runs on a worker. Defined here, not at module level, so that
            # cloudpickle ships it by value: a worker needs shard_job only, not
            # this module (which a remote worker could not import).
            def task(stage, *args):
                import shard_job  # the copy UploadFile put on this worker

                # A shipped file is in this worker's local directory.
                ext = os.path.join(get_worker().local_directory, ext_arg) if shipped else ext_arg
                return getattr(shard_job, stage)(ext, *args)

            # 1. probe every shard from scratch (pure=False: a rerun probes again)
            probes = [
                client.submit(task, "probe_shard", i, paths, None, threads, memory_limit, pure=False)
                for i, paths in enumerate(shards)
            ]
            # gather() returns the results in the order of `probes`, which is
            # shard order, whatever order the tasks finished in.
            registries = client.gather(probes)

            # 2. merge on the driver, then broadcast the one document
            merged = shard_job.merge_registries(extension, registries)
            merged_future = client.scatter(merged, broadcast=True)

            # 3. materialize every shard under the merged registry (strict)
            writes = [
                client.submit(
                    task, "materialize_shard", i, paths, merged_future,
                    str(output_dir / f"part-{i:05d}.parquet"), threads, memory_limit, pure=False,
                )
                for i, paths in enumerate(shards)
            ]
            outputs = client.gather(writes)
    finally:
        if cluster is not None:
            cluster.close()
    return merged, outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extension", required=True, help="a .duckdb_extension file or a local extension repository")
    parser.add_argument("--output", required=True, help="output directory (part-NNNNN.parquet per shard)")
    parser.add_argument("--shard", action="append", nargs="+", required=True, metavar="PATH",
                        help="the files of one shard, in order; repeat per shard, in shard order")
    parser.add_argument("--scheduler", help="address of a running scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    parser.add_argument("--threads-per-worker", type=int, default=1)
    args = parser.parse_args(argv)
    merged, outputs = run(args.extension, args.shard, args.output, args.scheduler, args.workers, args.threads_per_worker)
    json.dump({"registry": json.loads(merged), "outputs": outputs}, sys.stdout, indent=2)
    print()
    return 0


# The guard is required: LocalCluster starts its worker processes with
# multiprocessing's "spawn", which imports the main module again in each of
# them; unguarded, every worker would start a cluster of its own.
if __name__ == "__main__":
    sys.exit(main())
