# The one contract for building, linting, testing and benchmarking sidelight. CI calls these targets.
.DEFAULT_GOAL := all
SHELL := /bin/bash

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CLIENTS_DIR := tests/e2e/clients
# The real agent CLIs used by the end-to-end tests, installed from the pinned lock file.
CLIENTS := $(CLIENTS_DIR)/node_modules/.package-lock.json

.PHONY: install build-dev run clients lint fmt test test-fast bench all clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)  ## install sidelight into .venv (builds the Rust extension in release mode)
	$(PY) -m pip install -q .

build-dev: $(PY)  ## editable install with test and lint dependencies
	$(PY) -m pip install -q -e '.[test,lint]'

run: install  ## the main job: scan the sample transcripts written by the real agent CLIs
	$(VENV)/bin/sidelight scan tests/data/claude-code/*.jsonl tests/data/codex/*.jsonl tests/data/pi/*.jsonl

$(CLIENTS): $(CLIENTS_DIR)/package.json $(CLIENTS_DIR)/package-lock.json
	cd $(CLIENTS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

clients: $(CLIENTS)  ## the real claude, codex and pi CLIs for the end-to-end tests

lint: build-dev  ## cargo fmt/clippy, ruff, mypy --strict, stubtest
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest sidelight._core

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests
	$(VENV)/bin/ruff check --fix python tests

test: build-dev clients  ## every test: Rust unit and property tests, Python, end-to-end with the real CLIs
	cargo test --workspace --quiet
	$(VENV)/bin/pytest

test-fast: build-dev  ## Python tests without the real CLIs
	$(VENV)/bin/pytest -m "not e2e"

bench: build-dev  ## benchmarks, peers side by side in one run
	mkdir -p .benchmarks
	$(VENV)/bin/pytest tests/benchmarks --benchmark-enable --benchmark-columns=min,median,mean,stddev,ops \
		--benchmark-json=.benchmarks/scan.json
	$(PY) -m tests.benchmarks.report .benchmarks/scan.json

all: lint test

clean:
	rm -rf $(VENV) target .pytest_cache .mypy_cache .ruff_cache python/sidelight/*.so
