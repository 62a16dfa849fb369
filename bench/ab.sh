#!/usr/bin/env bash
# A/B of two builds of the extension on one statement (a benchmark, not a
# test): one process per run, the builds alternating and the order swapped
# every round, so that the machine's drift between minutes hits both alike.
# Prints each build's times, sorted (min first; the middle one is the median).
#
#   bench/ab.sh A/schema_sanitizer.duckdb_extension B/schema_sanitizer.duckdb_extension [rounds] [threads]
#   Q="SELECT * FROM sanitize_probe('f.jsonl', input_format := 'jsonl')" bench/ab.sh ...
#
# Each build is named by its directory. Default statement: SELECT * of the
# 300 MB bench file into a temp table. WARM="..." runs a statement first,
# untimed, in the same connection: a DESCRIBE of the same call fills the
# bind cache, so that the time is the scan's alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
a=$1 b=$2 rounds=${3:-5} threads=${4:-1}
f="$root/bench/data/events-300mb-seed42.jsonl"
q=${Q:-"CREATE TEMP TABLE x AS SELECT * FROM sanitize_jsonl('$f')"}
warm=${WARM:-}
run() {
    "$root/.venv/bin/python" - "$1" "$q" "$threads" "$warm" <<'PY'
import sys, time, duckdb
ext, sql, threads, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")
con.execute(f"SET threads = {threads}")
if warm:
    con.execute(warm).fetchall()
t = time.perf_counter()
con.execute(sql).fetchall()
print(f"{time.perf_counter() - t:.2f}")
PY
}
for r in $(seq "$rounds"); do
    if (( r % 2 )); then order=("$a" "$b"); else order=("$b" "$a"); fi
    for e in "${order[@]}"; do
        echo "$(basename "$(dirname "$e")") $(run "$e")"
    done
done | sort -k1,1 -k2,2n | awk '{t[$1] = t[$1] " " $2} END {for (k in t) print k ":" t[k]}'
