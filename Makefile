# The one contract for building, linting, testing and benchmarking sidelight. CI calls these targets.
.DEFAULT_GOAL := all
SHELL := /bin/bash

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CLIENTS_DIR := tests/e2e/clients
# The real agent CLIs used by the end-to-end tests, installed from the pinned lock file.
CLIENTS := $(CLIENTS_DIR)/node_modules/.package-lock.json
# Kimi CLI (PyPI, Python >= 3.12) in a venv of its own, from a pinned requirements file.
KIMI_VENV := $(CLIENTS_DIR)/kimi-venv
KIMI := $(KIMI_VENV)/.installed
# Without cargo on PATH, maturin (the build backend) would download a Rust toolchain of several hundred MB
# and build with it; with this set, a build without cargo stops with maturin's one-paragraph error.
export MATURIN_NO_INSTALL_RUST := 1

.PHONY: install build-dev wheel run clients redis-server browser lint fmt test test-fast bench fuzz soak all clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)  ## install sidelight into .venv (builds the Rust extension in release mode)
	$(PY) -m pip install -q .

build-dev: $(PY)  ## editable install with test and lint dependencies
	$(PY) -m pip install -q -e '.[test,lint]'

# maturin from the lint extra (the [build-system] requirement); target/ is reused, so a rebuild is quick.
# The wheel is abi3 (one wheel for CPython >= 3.11) and manylinux (tagged with the oldest glibc it runs on).
wheel: build-dev  ## a portable wheel in dist/, which installs without Rust: pip install dist/sidelight-*.whl
	rm -f dist/sidelight-*.whl
	$(VENV)/bin/maturin build --release --out dist

run: install  ## the main job on the real agent CLIs' sample transcripts: a scan, then in a throwaway HOME a digest, a stale write refused, the status table
	$(VENV)/bin/sidelight scan tests/data/claude-code/*.jsonl tests/data/codex/*.jsonl tests/data/pi/*.jsonl tests/data/gemini/*.jsonl tests/data/qwen/*.jsonl tests/data/copilot/*.jsonl tests/data/kimi/*.jsonl tests/data/droid/*.jsonl
	$(PY) -m tests.support.run_demo

$(CLIENTS): $(CLIENTS_DIR)/package.json $(CLIENTS_DIR)/package-lock.json
	cd $(CLIENTS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

clients: $(CLIENTS) $(KIMI)  ## the real agent CLIs for the end-to-end tests

# The first python3.13 or python3.12 on PATH or under `pyenv root`; none: one line, and its tests skip.
$(KIMI): $(CLIENTS_DIR)/kimi-requirements.txt
	@PY=; root=$$(pyenv root 2>/dev/null); \
	for p in $$(command -v python3.13) $$(ls -d "$$root"/versions/3.13*/bin/python3.13 2>/dev/null) \
	         $$(command -v python3.12) $$(ls -d "$$root"/versions/3.12*/bin/python3.12 2>/dev/null); do \
		"$$p" -c pass 2>/dev/null && { PY=$$p; break; }; \
	done; \
	if [ -z "$$PY" ]; then echo "Kimi CLI not installed: no python3.13 or python3.12 (PATH, pyenv); its e2e tests will skip"; exit 0; fi; \
	echo "Kimi CLI: $$PY -m venv $(KIMI_VENV)"; \
	rm -rf $(KIMI_VENV) && "$$PY" -m venv $(KIMI_VENV) && \
	$(KIMI_VENV)/bin/pip install -q --disable-pip-version-check -r $< && touch $@

# The fleet tests start their own Redis servers (tests/support/redis_server.py); they fail without one, unless
# SIDELIGHT_SKIP_REDIS=1. Debian's package, installed when missing (CI runs as root; sudo elsewhere).
redis-server:  ## Debian's redis-server for the fleet tests, installed with apt-get when missing
	@command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || [ "$$SIDELIGHT_SKIP_REDIS" = 1 ] || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq redis-server >/dev/null; }
	@command -v redis-server >/dev/null || [ -x /usr/bin/redis-server ] || [ "$$SIDELIGHT_SKIP_REDIS" = 1 ] || \
		{ echo "redis-server could not be installed; set SIDELIGHT_SKIP_REDIS=1 to skip the fleet tests" >&2; exit 1; }

# The dashboard's browser tests (tests/browser) drive Debian's chromium through Playwright's Python package
# (the test extra); Playwright's own browser download needs hosts CI cannot reach. Installed when missing.
browser:  ## Debian's chromium for the dashboard's browser tests, installed with apt-get when missing
	@command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || \
		{ echo "chromium could not be installed (apt-get install chromium); the browser tests need it" >&2; exit 1; }

lint: build-dev  ## cargo fmt/clippy, ruff, mypy --strict, stubtest, the layer check
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest sidelight._core
	$(PY) -m tests.support.layers

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests
	$(VENV)/bin/ruff check --fix python tests

test: build-dev clients redis-server browser  ## every test: Rust unit and property tests, Python, end-to-end with the real CLIs
	cargo test --workspace --quiet
	$(VENV)/bin/pytest

test-fast: build-dev redis-server  ## Python tests without the real CLIs and the browser
	$(VENV)/bin/pytest -m "not e2e and not browser"

bench: build-dev  ## benchmarks, peers side by side in one run
	mkdir -p .benchmarks
	$(VENV)/bin/pytest tests/benchmarks --benchmark-enable --benchmark-columns=min,median,mean,stddev,ops \
		--benchmark-json=.benchmarks/scan.json
	$(PY) -m tests.benchmarks.report .benchmarks/scan.json

FUZZ_DIR := rust/sidelight-core/fuzz
FUZZ_TARGETS ?= decode_claude_code decode_pi decode_codex decode_declared tail cursor
# Seconds per target; the corpus grows in $(FUZZ_DIR)/corpus between runs (ignored by git).
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 16384

fuzz:  ## each fuzz target for FUZZ_SECONDS (default 60), seeded from the real transcripts; fails on a crash
	@command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	$(PYTHON) $(FUZZ_DIR)/seed_corpus.py . $(FUZZ_DIR)/corpus $(FUZZ_MAX_LEN)
	mkdir -p $(FUZZ_DIR)/logs
	set -o pipefail; cd $(FUZZ_DIR) && for t in $(FUZZ_TARGETS); do \
		cargo +nightly fuzz run --debug-assertions $$t -- -max_total_time=$(FUZZ_SECONDS) \
			-max_len=$(FUZZ_MAX_LEN) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			2>&1 | tee logs/$$t.log | { grep -E '^(#[0-9]+[[:space:]]+DONE|==|SUMMARY|.*panicked)' || true; } \
			|| exit 1; \
	done; for t in $(FUZZ_TARGETS); do \
		echo "$$t: $$(grep -o 'number_of_executed_units: [0-9]*' logs/$$t.log | cut -d' ' -f2) executions"; \
	done

soak: build-dev  ## SOAK_SESSIONS sessions written at random, a watcher, SOAK_READERS hook readers, for SOAK_SECONDS; checked against a model
	$(PY) -m tests.support.soak

all: lint test

clean:
	rm -rf $(VENV) target dist .pytest_cache .mypy_cache .ruff_cache python/sidelight/*.so
