# The two commands of the quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev

.PHONY: demo test test-loaded lint docs docs-serve package schema format bench bench-inspect screenshots clean

# _version.py too: the installed metadata's version is read from it (pyproject.toml, dynamic).
# The tests need the optional extras whose code they exercise beyond dev's list: inspect
# (inspect-ai, for `caseforge export inspect`), tables (pyarrow) and otel (OpenTelemetry's
# SDK and OTLP/HTTP exporter), named here explicitly.
$(STAMP): pyproject.toml src/caseforge/_version.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,inspect,tables,otel]'
	@touch $(STAMP)

## demo: install into .venv, validate the four example suites and run three of them, offline
# No model is configured, so judge checks are skipped on purpose (--no-judge); the reports
# say so. Without --no-judge they would be reported `not judged` and the case-trials
# `incomplete`, never passed.
# It ends with the regression gate: v2 is the committed-style baseline, v1 the change under
# review; the gate must exit 1 (a real regression), and the demo checks that it does.
DEMO := .caseforge/demo
demo: $(STAMP)
	$(BIN)/caseforge validate examples/ac-clarifier
	$(BIN)/caseforge validate examples/support-refund
	$(BIN)/caseforge validate examples/test-agent
	$(BIN)/caseforge validate examples/langgraph-orders
	$(BIN)/caseforge run examples/ac-clarifier --config checklist --config holistic --trials 3 --no-judge
	$(BIN)/caseforge run examples/langgraph-orders --config v2 --config v1 --no-judge
	$(BIN)/caseforge run examples/support-refund --config v2 --trials 3 --no-judge --quiet --out $(DEMO)/v2
	$(BIN)/caseforge baseline $(DEMO)/v2/report.json --write $(DEMO)/baseline.json
	$(BIN)/caseforge run examples/support-refund --config v1 --trials 3 --no-judge --out $(DEMO)/v1
	$(BIN)/caseforge compare $(DEMO)/v2/report.json $(DEMO)/v1/report.json
	@$(BIN)/caseforge gate $(DEMO)/v1/report.json --baseline $(DEMO)/baseline.json; code=$$?; \
	  echo "gate exit code $$code (1 = regression: CI would stop this change)"; test $$code -eq 1
	@echo "in a browser: $(BIN)/caseforge serve examples/support-refund examples/ac-clarifier"

## test: install what the tests need, run them all (listing the 25 slowest), then lint and
# type-check src/, then build and check the sdist and the wheel
test: $(STAMP)
	$(BIN)/python -m pytest --durations=25
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory package

## test-loaded: `make test` with two CPU-bound processes running beside it, as on a busy
# shared CI runner: no test may depend on the machine's speed. Not part of .ci/run; its wall
# time is recorded in benchmarks/RESULTS.md.
test-loaded: $(STAMP)
	@$(PYTHON) -c 'while True: pass' & hog1=$$!; \
	 $(PYTHON) -c 'while True: pass' & hog2=$$!; \
	 trap 'kill $$hog1 $$hog2 2>/dev/null' EXIT INT TERM; \
	 start=$$(date +%s); \
	 $(MAKE) --no-print-directory test; code=$$?; \
	 echo "make test beside two CPU hogs: $$(( $$(date +%s) - start )) s, exit $$code"; \
	 exit $$code

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(MAKE) --no-print-directory docs

## docs: build the docs site into site/, strictly (a broken link, anchor or missing page
# fails) and offline (no web fonts, the offline plugin; nothing is fetched)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

## docs-serve: the docs site on http://127.0.0.1:8000/ (loopback only), rebuilt on each edit
docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

## package: build the sdist, then the wheel from it, into dist/ and `twine check` both.
# Offline: --no-isolation builds with the hatchling in .venv instead of downloading one.
# Nothing is uploaded; docs/ci/release.yml publishes on a v* tag.
package: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/twine check --strict dist/*

## schema: regenerate the shipped report.schema.json from the typed RunReport model
schema: $(STAMP)
	$(BIN)/python -c "from caseforge.report.model import schema_text; import sys; sys.stdout.write(schema_text())" > src/caseforge/report/report.schema.json

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks examples
	$(BIN)/ruff check --fix src tests benchmarks examples

bench: $(STAMP)
	$(BIN)/python benchmarks/validate_scale.py
	$(BIN)/python benchmarks/validate_oracles.py
	$(BIN)/python benchmarks/stop_latency.py
	$(BIN)/python benchmarks/runner_overhead.py
	$(BIN)/python benchmarks/pytest_plugin.py
	$(BIN)/python benchmarks/scan_throughput.py
	$(BIN)/python benchmarks/overlap_threshold.py
	$(BIN)/python benchmarks/serve.py
	$(BIN)/python benchmarks/privacy_corpus.py tests/privacy/corpus_d tests/privacy/corpus tests/privacy/corpus_b
	$(BIN)/python benchmarks/audit_time.py --before cd0dcf3

## bench-inspect: the same 2,000 cases through caseforge and through Inspect AI (wall time,
# peak RSS, their ratios). Inspect runs from its own venv, benchmarks/.venv-inspect, which the
# script makes on first use (inspect-ai from PyPI): never a dependency of .venv.
bench-inspect: $(STAMP)
	$(BIN)/python benchmarks/vs_inspect.py

## screenshots: refresh docs/screenshots/ from the browser tests (Debian's chromium): the
# web app's screens and the docs site's home, a how-to and the CLI reference
screenshots: $(STAMP)
	CASEFORGE_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q -p no:randomly tests/serve/test_browser.py tests/serve/test_browser_daily.py tests/serve/test_live.py tests/docs/test_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache dist site
