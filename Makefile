# `make run` and `make test` work on a fresh machine: each creates .venv when it is
# missing, installs torch first (the CPU wheel of the pinned version; any other version
# pulls gigabytes of CUDA packages), then the package with every extra.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[all]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/hiddenhand benchmark

# Lint first: a style error fails CI before the suite starts. The suite runs on two worker
# processes (pytest-xdist); the Ray modules share one worker (xdist_group "ray"), so that only
# one local Ray instance runs at a time. The tests that press Ctrl-C (marked ctrl_c) run
# apart, with SIGINT ignored as a background job starts them (nohup, `&` in a script): they
# must set up the handler they need themselves, and pass however the suite is started.
PYTEST := $(BIN)/python -m pytest -q -n 2 --dist loadgroup
IGNORING_CTRL_C := $(BIN)/python -c 'import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); sys.exit(subprocess.call(sys.argv[1:]))'

test: lint
	$(PYTEST) -m "not ctrl_c"
	$(IGNORING_CTRL_C) $(PYTEST) -m ctrl_c

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) build *.egg-info
