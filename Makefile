# Thin aliases for the scripts; each works on a fresh clone.
.PHONY: run build test bench check fmt clean

run:            ## build, install into build/repository, query examples/ in the shell
	bash scripts/run_sample.sh

build:
	bash scripts/setup.sh && bash scripts/build.sh

test:           ## every test layer
	bash scripts/test.sh

check:          ## formatting and lints, as CI runs them
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features extension -- -D warnings

bench:          ## benchmark against DuckDB's own readers (not a test)
	bash scripts/setup.sh && bash scripts/build.sh && .venv/bin/python bench/bench.py

fmt:
	cargo fmt --all

clean:
	rm -rf build target
