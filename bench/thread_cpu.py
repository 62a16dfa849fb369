"""CPU time per thread of one statement (a benchmark, not a test): which
thread carries how much of a probe or scan, so that the part that stays on
one thread (the probe's absorbing, the consumer's chunk work) can be read
off at any `threads` setting, also above the machine's core count.

    .venv/bin/python bench/thread_cpu.py build/release/schema_sanitizer.duckdb_extension 4 \\
        "DESCRIBE FROM sanitize_csv('bench/data/events-200mb-seed42.csv', parse_integers := true)" --runs 5

Each run is a fresh connection; a thread is named by its kernel name
(`python` for the thread that ran the statement, `sanitize-decode` for our
helpers, DuckDB's workers by theirs). Prints each run's wall time and the
CPU seconds of every thread that used more than 10 ms (the poller that
reads them is a second, idle `python`), then the medians of the wall
time, the statement thread's CPU and the helpers' CPU together.
Reads /proc, so Linux only.
"""
import argparse
import os
import statistics
import threading
import time

import duckdb


def cpu_by_thread() -> dict[str, tuple[str, float]]:
    """Every thread of this process: (kernel name, user + system seconds)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended between the listing and the read
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[tid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def run(ext: str, threads: int, sql: str) -> tuple[float, list[tuple[str, float]]]:
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("SET enable_progress_bar = false")
    con.execute(f"LOAD '{ext}'")
    con.execute(f"SET threads = {threads}")
    before = cpu_by_thread()
    seen: dict[str, tuple[str, float]] = {}
    done = threading.Event()

    def poll() -> None:
        # Threads that end with the statement are read while they live.
        while not done.is_set():
            seen.update(cpu_by_thread())
            time.sleep(0.005)

    poller = threading.Thread(target=poll)
    poller.start()
    start = time.perf_counter()
    con.execute(sql).fetchall()
    wall = time.perf_counter() - start
    seen.update(cpu_by_thread())
    done.set()
    poller.join()
    con.close()
    used = [(name, cpu - before.get(tid, (name, 0.0))[1]) for tid, (name, cpu) in seen.items()]
    # The poller shows as a second, less busy `python` thread.
    used = [u for u in used if u[1] > 0.01]
    return wall, sorted(used, key=lambda u: -u[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("extension")
    ap.add_argument("threads", type=int)
    ap.add_argument("sql")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    walls, statement, helpers = [], [], []
    for _ in range(a.runs):
        wall, used = run(a.extension, a.threads, a.sql)
        walls.append(wall)
        statement.append(max((cpu for name, cpu in used if name == "python"), default=0.0))
        helpers.append(sum(cpu for name, cpu in used if name == "sanitize-decode"))
        print(f"wall {wall:.3f} s  " + "  ".join(f"{name} {cpu:.2f}" for name, cpu in used))
    print(
        f"median wall {statistics.median(walls):.3f} s, statement thread {statistics.median(statement):.2f} "
        f"CPU-s, helpers {statistics.median(helpers):.2f} CPU-s"
    )


if __name__ == "__main__":
    main()
