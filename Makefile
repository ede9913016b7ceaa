# toolgate — `make run` starts the product, `make test` passes every test. Both set everything up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help setup run test lint typecheck unit bench clean protocol ext-setup ext-build ext-check ext-unit vsix \
	e2e-setup e2e ide

help:
	@echo "make run    set up and start toolgate"
	@echo "make test   set up and run every check and test"
	@echo "make bench  set up and run the benchmarks (report in bench/results/)"
	@echo "make protocol  regenerate extension/src/protocol.generated.ts from the sidecar's protocol models"
	@echo "make vsix   build the VS Code extension package toolgate-<version>.vsix"
	@echo "make e2e    run the end-to-end tests in a real VS Code (code-server + Chromium)"
	@echo "make ide    start code-server on 127.0.0.1:8080 with the extension and a demo workspace"

# Re-installs only when the project's dependency list changes; otherwise a no-op.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

setup: $(STAMP)

run: setup
	$(BIN)/python examples/demo.py

lint: setup
	$(BIN)/ruff check server tests bench examples
	$(BIN)/ruff format --check server tests bench examples

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -q -m "not e2e"

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

$(VSIX): $(NPM_STAMP) $(EXT_SOURCES) $(SIDECAR_SOURCES)
	npm run --silent package

vsix: $(VSIX)

# -- end-to-end: code-server + Debian Chromium, installed once by scripts/setup-e2e.sh (stamped) -----------------
E2E_STAMP := .cache/code-server/.installed-4.100.3

$(E2E_STAMP): scripts/setup-e2e.sh | $(STAMP)
	scripts/setup-e2e.sh $(VENV)

e2e-setup: setup $(E2E_STAMP)

e2e: e2e-setup vsix
	$(BIN)/pytest -q -m e2e tests/e2e

ide: e2e-setup vsix
	$(BIN)/python tests/e2e/codeserver.py --port 8080

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/results
	rm -rf node_modules extension/dist extension/python extension/out extension/LICENSE .cache test-results toolgate-*.vsix
