# Thin aliases for the scripts; each works on a fresh clone.
.PHONY: run build test test-distributed bench bench-memory bench-pipeline check fmt clean

run:            ## build, install into build/repository, query examples/ in the shell
	bash scripts/run_sample.sh

build:
	bash scripts/setup.sh && bash scripts/build.sh

test:           ## every test layer
	bash scripts/test.sh

test-distributed: ## the Spark adapter of examples/distributed, in its own venv (.venv-spark)
	bash scripts/test_distributed.sh

check:          ## formatting and lints, as CI runs them
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features extension -- -D warnings

bench:          ## benchmark against DuckDB's own readers (not a test)
	bash scripts/setup.sh && bash scripts/build.sh && .venv/bin/pip install -q -r scripts/requirements-bench.txt && .venv/bin/python bench/bench.py

bench-memory:   ## peak RSS of sanitize_jsonl vs read_json on a 200 MB and a 2 GB file (not a test)
	bash scripts/setup.sh && bash scripts/build.sh && .venv/bin/pip install -q -r scripts/requirements-bench.txt && .venv/bin/python bench/bench_memory.py

bench-pipeline: ## sanitize_pipeline vs the same loop by hand over 30 daily partitions, 300 MB (not a test)
	bash scripts/setup.sh && bash scripts/build.sh && .venv/bin/pip install -q -r scripts/requirements-bench.txt && .venv/bin/python bench/bench_pipeline.py

fmt:
	cargo fmt --all

clean:
	rm -rf build target
