# One-command entry points. `make run` and `make test` each create the virtualenv and install
# the project first (torch pinned to the CPU build through constraints.txt).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench server clean

run: $(STAMP)
	$(BIN)/rotbench run

test: $(STAMP)
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_world.py
	$(BIN)/python benchmarks/bench_deposit.py
	$(BIN)/python benchmarks/bench_rescore.py
	$(BIN)/python benchmarks/bench_run.py
	$(BIN)/python benchmarks/bench_peers.py

server: $(STAMP)
	$(BIN)/rotbench server --port 4200

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --quiet -c constraints.txt -e '.[dev,mem0,particles,benchd]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) cache/* reports/* .prefect
	touch cache/.gitkeep reports/.gitkeep
