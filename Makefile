# Developer shortcuts. `make test` is the one test command (tests/run.sh, as CI runs it);
# the other targets run parts of it against an existing .venv.
.DEFAULT_GOAL := help
.PHONY: help dev test lint bench wheel sdist wheel-check docs

VENV ?= .venv
PYTHON3 ?= python3
BIN := $(VENV)/bin
# Every benchmark script by default; pick some with `make bench BENCHES=benches/bench_noise.py`.
BENCHES ?= $(wildcard benches/bench_*.py)
# Where `make wheel` and `make sdist` put what they build.
DIST ?= dist

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

dev: ## build the extension (release) into .venv, with the test and docs extras
	test -x $(BIN)/python || $(PYTHON3) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "maturin>=1.9,<2"
	VIRTUAL_ENV=$(abspath $(VENV)) PYO3_PYTHON=$(abspath $(BIN))/python \
		$(BIN)/maturin develop --release --locked --extras test,docs

test: ## every check and the whole test suite (tests/run.sh)
	bash tests/run.sh

lint: ## ruff, rustfmt, clippy and mypy, without building or testing
	$(BIN)/ruff check python tests benches examples docs
	$(BIN)/ruff format --check python tests benches examples docs
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	$(BIN)/python -m mypy python/privtab

bench: ## run the benchmark scripts (needs `make dev` and the bench extras)
	@for script in $(BENCHES); do \
		echo "== $$script"; \
		$(BIN)/python $$script || exit 1; \
	done

# --compatibility pypi: tagged for the oldest glibc this machine's build links against (the
# release's manylinux2014 wheels are built in the manylinux2014 container, see wheels.yml).
wheel: ## build the release wheel (abi3, stripped, --locked) into dist/
	$(BIN)/maturin build --release --compatibility pypi --out $(DIST)

sdist: ## build the source distribution into dist/
	$(BIN)/maturin sdist --out $(DIST)

wheel-check: ## build the wheel, install it into a fresh venv without Rust, test it there
	bash tests/wheel_check.sh

# Warnings are errors and every reference must resolve; the gallery's examples run.
docs: ## build the documentation site into docs/_build/html (needs `make dev`)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
