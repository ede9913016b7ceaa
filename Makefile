# toolgate — `make run` starts the product, `make test` passes every test. Both set everything up first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help setup run test lint typecheck unit bench clean protocol

help:
	@echo "make run    set up and start toolgate"
	@echo "make test   set up and run every check and test"
	@echo "make bench  set up and run the benchmarks (report in bench/results/)"
	@echo "make protocol  regenerate extension/src/protocol.generated.ts from the sidecar's protocol models"

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
	$(BIN)/pytest -q

test: lint typecheck unit

bench: setup
	$(BIN)/python -m bench

protocol: setup
	$(BIN)/toolgate protocol typescript --out extension/src/protocol.generated.ts

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache bench/results
