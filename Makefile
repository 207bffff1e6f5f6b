# The two set-up commands of the README: `make run` and `make test`, each one command from a
# fresh clone. Each has its own virtual environment: `make run` installs the package's run-time
# dependencies only (a dashboard needs no test tool: the test extra made its venv 798 MB), and
# `make test` (and `make venv`, the developers' .venv) the package with its test extra.
PY ?= python3
VENV ?= .venv
RUN_VENV ?= .venv-run
VPY := $(VENV)/bin/python
RPY := $(RUN_VENV)/bin/python

.PHONY: venv run-venv run test typecheck test-gpu bench clean

$(VPY): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test]'
	touch $(VPY)

$(RPY): pyproject.toml
	$(PY) -m venv $(RUN_VENV)
	$(RPY) -m pip install -q --upgrade pip
	$(RPY) -m pip install -q -e .
	touch $(RPY)

venv: $(VPY)

run-venv: $(RPY)

run: $(RPY)
	$(RUN_VENV)/bin/c2tui run

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
	rm -rf $(VENV) $(RUN_VENV) build *.egg-info
