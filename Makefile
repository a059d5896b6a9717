# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test lint format bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

## demo: install into .venv, validate the three example suites and run two of them, offline
# No model is configured, so judge checks are skipped on purpose (--no-judge); the reports
# say so. Without --no-judge they would be reported `not judged` and the case-trials
# `incomplete`, never passed.
demo: $(STAMP)
	$(BIN)/caseforge validate examples/ac-clarifier
	$(BIN)/caseforge validate examples/support-refund
	$(BIN)/caseforge validate examples/test-agent
	$(BIN)/caseforge run examples/support-refund --config v1 --trials 3 --no-judge
	$(BIN)/caseforge run examples/ac-clarifier --config checklist --config holistic --trials 3 --no-judge

## test: install what the tests need, run them all, then lint and type-check src/
test: $(STAMP)
	$(BIN)/python -m pytest
	$(MAKE) --no-print-directory lint

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks examples
	$(BIN)/ruff check --fix src tests benchmarks examples

bench: $(STAMP)
	$(BIN)/python benchmarks/validate_scale.py
	$(BIN)/python benchmarks/runner_overhead.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
