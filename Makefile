# toolgate — `make run` starts the product, `make test` passes every test. Both set everything up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help setup run demo demo-headless test fuzz lint typecheck unit bench clean protocol ext-setup ext-build ext-check \
	ext-unit vsix vsix-all code-server-setup e2e-setup e2e ide apt-setup

help:
	@echo "make run    set up and start toolgate in code-server on 127.0.0.1 (port 8080 if free; PORT=N to choose); Ctrl-C stops it"
	@echo "make demo   the same, with the chat connected to a local mock model playing a scripted session"
	@echo "make demo-headless  a few tool calls through 'toolgate run-tools', printed (no editor)"
	@echo "make test   set up and run every check and test"
	@echo "make fuzz   property tests with fresh random examples (make test replays a fixed set), and a long differential run"
	@echo "make bench  set up and run the benchmarks (report in bench/results/)"
	@echo "make protocol  regenerate extension/src/protocol.generated.ts from the sidecar's protocol models"
	@echo "make vsix   build the VS Code extension package toolgate-<version>.vsix for this machine's platform (with its wheels)"
	@echo "make vsix-all  the platform packages for every target, and the universal one, in dist-vsix/"
	@echo "make e2e    run the end-to-end tests in a real VS Code (code-server + Chromium)"

# Re-installs only when the project's dependency list changes; otherwise a no-op.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

setup: $(STAMP)

# code-server with the extension (make vsix) on a fresh copy of examples/demo-workspace; tests/e2e/launcher.py.
LAUNCH = $(BIN)/python tests/e2e/launcher.py $(if $(PORT),--port $(PORT))

run: code-server-setup vsix
	@$(LAUNCH)

demo: code-server-setup vsix
	@$(LAUNCH) --demo

demo-headless: setup
	$(BIN)/python examples/demo.py

lint: setup
	$(BIN)/ruff check server tests bench examples
	$(BIN)/ruff format --check server tests bench examples

typecheck: setup
	$(BIN)/mypy

unit: setup apt-setup
	$(BIN)/pytest -q -m "not e2e"

# Debian packages the unit and integration tests need (bubblewrap, for the Bash sandbox); quick once installed.
apt-setup:
	@scripts/setup-e2e.sh --apt-only

# The differential run: generated commands the classifier calls read-only, run under bwrap and strace
# (tests/differential); bounded by TOOLGATE_DIFF_COUNT commands and TOOLGATE_DIFF_SECONDS, replayed by TOOLGATE_DIFF_SEED.
fuzz: setup apt-setup  ## property tests with fresh random examples, many more of them (not part of `make test`)
	TOOLGATE_HYPOTHESIS=fuzz $(BIN)/pytest -q -p no:cacheprovider $$(grep -rl "@given" tests)
	$(BIN)/python -m tests.differential

test: lint typecheck unit ext-check ext-unit e2e

bench: setup
	$(BIN)/python -m bench

protocol: setup
	$(BIN)/toolgate protocol typescript --out extension/src/protocol.generated.ts

# -- the VS Code extension (extension/; the root package.json is its npm workspace) ---------------------------------
NPM_STAMP := node_modules/.toolgate-installed
EXT_VERSION = $(shell node -p "require('./extension/package.json').version")
VSIX = toolgate-$(EXT_VERSION).vsix
EXT_SOURCES := $(shell find extension/src extension/webview extension/media -type f 2>/dev/null) \
	extension/package.json extension/esbuild.mjs extension/scripts/package.mjs extension/.vscodeignore \
	extension/README.md
SIDECAR_SOURCES := $(shell find server/toolgate -name '*.py' -o -name py.typed 2>/dev/null) pyproject.toml LICENSE

$(NPM_STAMP): package.json package-lock.json extension/package.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

ext-setup: $(NPM_STAMP)

ext-build: ext-setup
	npm run --silent build

ext-check: ext-setup
	npm run --silent check

ext-unit: setup ext-setup
	npm test --silent

# The host's platform package: the bundles, the sidecar source, and a wheelhouse (pip downloads it, once per build).
$(VSIX): $(NPM_STAMP) $(EXT_SOURCES) $(SIDECAR_SOURCES) | $(STAMP)
	node extension/scripts/package.mjs --target host --python $(BIN)/python

vsix: $(VSIX)

VSIX_TARGETS := linux-x64 linux-arm64 alpine-x64 darwin-x64 darwin-arm64 win32-x64 universal
vsix-all: ext-setup setup
	@for target in $(VSIX_TARGETS); do \
		node extension/scripts/package.mjs --target $$target --python $(BIN)/python \
			--out dist-vsix/toolgate-$(EXT_VERSION)-$$target.vsix || exit 1; \
	done

# -- code-server (make run, make demo) and Debian Chromium (the end-to-end tests), installed once by
# scripts/setup-e2e.sh (stamped) ---------------------------------------------------------------------------------
CODE_SERVER_STAMP := .cache/code-server/.installed-4.100.3
BROWSER_STAMP := .cache/.chromium-installed

$(CODE_SERVER_STAMP): scripts/setup-e2e.sh | $(STAMP)
	scripts/setup-e2e.sh --without-browser $(VENV)
	@touch $@

$(BROWSER_STAMP): scripts/setup-e2e.sh | $(CODE_SERVER_STAMP)
	scripts/setup-e2e.sh $(VENV)
	@touch $@

code-server-setup: setup $(CODE_SERVER_STAMP)

e2e-setup: code-server-setup $(BROWSER_STAMP)

e2e: e2e-setup vsix
	$(BIN)/pytest -q -m e2e tests/e2e

ide: run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/results
	rm -rf node_modules extension/dist extension/python extension/out extension/LICENSE .cache test-results toolgate-*.vsix dist-vsix
