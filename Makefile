# The two set-up commands of the README: `make run` and `make test`.
PY ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python

.PHONY: venv run test typecheck test-gpu bench clean

$(VPY): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	touch $(VPY)

venv: $(VPY)

run: $(VPY)
	$(VENV)/bin/c2tui run

# two workers (CI has two cores; much of the suite waits on sims, subprocesses and terminals);
# TEST_WORKERS=0 runs it in one process
TEST_WORKERS ?= 2

test: $(VPY)
	$(VPY) -m pytest -x -p no:cacheprovider --timeout=600 -n $(TEST_WORKERS) tests

# mypy over prover/ and c2tui/, its error count held to .ci/mypy-baseline (CI runs it)
typecheck: $(VPY)
	$(VPY) .ci/typecheck.py

test-gpu: $(VPY)
	$(VPY) -m pytest -m gpu tests

clean:
	rm -rf $(VENV) build *.egg-info
