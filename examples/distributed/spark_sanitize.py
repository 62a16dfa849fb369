"""Run shard_job.py on Apache Spark: probe every shard, merge the registries
in shard order on the driver, materialize every shard under the merged
registry.

    python examples/distributed/spark_sanitize.py \
        --extension build/release/schema_sanitizer.duckdb_extension \
        --output out/ --shard day1a.jsonl day1b.jsonl --shard day2.jsonl

Without --master it runs in local mode (local[2]) bound to 127.0.0.1.
docs/distributed.md has the stages and the pitfalls.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import shard_job

SHARD_JOB_FILE = Path(shard_job.__file__).resolve()


def run(
    extension: str | os.PathLike,
    shards: list[list[str]],
    output_dir: str | os.PathLike,
    master: str = "local[2]",
    threads: int | None = None,
    memory_limit: str = "1GB",
) -> tuple[str, list[dict]]:
    """Returns (merged registry JSON, [materialize_shard's result per shard, in shard order]).

    `threads` and `memory_limit` are one task's share of DuckDB: `threads`
    defaults to spark.task.cpus (the cores Spark reserves per task);
    `memory_limit` is per task too (Python workers live outside the JVM's
    heap, so no Spark memory setting bounds them).
    """
    # Workers must run this interpreter (the one with duckdb installed), not
    # whatever `python3` is first on the PATH. Set before the JVM starts.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark import SparkConf, SparkContext, SparkFiles

    extension = Path(extension).resolve()
    output_dir = Path(output_dir).resolve()
    shards = [[str(p) for p in paths] for paths in shards]
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName("schema_sanitizer-distributed")
        # Nothing listens beyond localhost; no web UI.
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.ui.enabled", "false")
    )
    sc = SparkContext(conf=conf)
    try:
        sc.setLogLevel("ERROR")
        # Ship the job module to every executor's Python path.
        sc.addPyFile(str(SHARD_JOB_FILE))
        shipped = extension.is_file()
        if shipped:
            sc.addFile(str(extension))  # SparkFiles.get(name) finds it on the executor
            ext_arg = extension.name
        else:
            ext_arg = str(extension)  # must be readable at this path on every executor
        task_threads = threads or int(sc.getConf().get("spark.task.cpus", "1"))

        # Nested functions: cloudpickle ships them by value, so executors need
        # shard_job (addPyFile) but not this module.
        def on_executor(stage, *args):
            import shard_job  # from addPyFile

            ext = SparkFiles.get(ext_arg) if shipped else ext_arg
            return getattr(shard_job, stage)(ext, *args)

        def probe(partition):
            for i, paths in partition:
                yield i, on_executor("probe_shard", i, paths, None, task_threads, memory_limit)

        # One partition per shard: partitionBy with the shard index as the
        # partition number, so each task is exactly one shard.
        shard_rdd = sc.parallelize(list(enumerate(shards))).partitionBy(len(shards), lambda i: i)

        # 1. probe every shard; sort by shard index: collect() order is not a
        # promise worth relying on, shard order is what the merge needs.
        registries = [reg for _, reg in sorted(shard_rdd.mapPartitions(probe).collect())]

        # 2. merge on the driver, then broadcast the one document
        merged = shard_job.merge_registries(extension, registries)
        merged_bc = sc.broadcast(merged)

        def materialize(partition):
            for i, paths in partition:
                out = str(output_dir / f"part-{i:05d}.parquet")
                yield on_executor("materialize_shard", i, paths, merged_bc.value, out, task_threads, memory_limit)

        # 3. materialize every shard under the merged registry (strict)
        outputs = sorted(shard_rdd.mapPartitions(materialize).collect(), key=lambda o: o["shard"])
    finally:
        sc.stop()
    return merged, outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extension", required=True, help="a .duckdb_extension file or a local extension repository")
    parser.add_argument("--output", required=True, help="output directory (part-NNNNN.parquet per shard)")
    parser.add_argument("--shard", action="append", nargs="+", required=True, metavar="PATH",
                        help="the files of one shard, in order; repeat per shard, in shard order")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    parser.add_argument("--memory-limit", default="1GB", help="DuckDB memory_limit per task (default 1GB)")
    args = parser.parse_args(argv)
    merged, outputs = run(args.extension, args.shard, args.output, args.master, memory_limit=args.memory_limit)
    json.dump({"registry": json.loads(merged), "outputs": outputs}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
