.PHONY: help setup check lint types test golden docs bench

VENV ?= .venv
PY := $(VENV)/bin/python

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' Makefile | sed -e 's/:.*## /\t/'

setup: ## create the venv with svcc, the test tools and the sample plugin
	python3 -m venv $(VENV) && $(VENV)/bin/pip install -q -e '.[test]' -e tests/plugins/svcc_sample_target

check: lint types test ## lint, types and the whole test suite

lint: ## ruff check and format check
	$(PY) -m ruff check . && $(PY) -m ruff format --check .

types: ## mypy --strict over the installed layout
	$(PY) tools/typecheck.py

test: ## the test suite
	$(VENV)/bin/pytest

golden: ## rewrite the golden documents (review the diff!)
	$(VENV)/bin/pytest tests/compiler/test_golden.py --snapshot-update

docs: ## regenerate the generated pages (codes, CLI) and build the manual strictly (the docs extra)
	$(PY) -m svcc.contracts.diagnostics > docs/diagnostics.md
	$(PY) tools/gen_cli_reference.py > docs/reference/cli.md
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir .site

bench: ## benchmarks: front end, generated servers, analysis service (not part of the tests)
	$(PY) bench/bench_frontend.py
	$(PY) bench/bench_rest.py
	$(PY) bench/bench_mcp.py
	$(PY) bench/bench_governed.py
	$(PY) bench/bench_service.py
