# One-command entry points. `make run` and `make test` each create the virtualenv and install
# the project first (torch pinned to the CPU build through constraints.txt): `make run` only
# what the main job needs, `make test` the test, docs and peer-engine extras on top (a second
# stamp), and Hindsight's own virtualenv (a third stamp). All show pip's progress.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
TEST_EXTRAS := dev,docs,mem0,particles,benchd,graphiti,langmem
HINDSIGHT_VENV ?= .venv-hindsight
HINDSIGHT_STAMP := $(HINDSIGHT_VENV)/.installed-test
PIP := $(BIN)/python -m pip install --progress-bar on -c constraints.txt

.PHONY: hindsight-env run test test-fast docs lint bench server clean browser dist \
	published published-hindsight published-page verify-published verify-published-hindsight

run: $(STAMP)
	$(BIN)/rotbench run

# The whole suite, in TEST_WORKERS processes (pytest-xdist); each test file stays in one
# process, so its shared runs are made once, and the longest files go out first
# (tests/conftest.py). `make test TEST_WORKERS=0` runs it in this one process.
# Hindsight's tests (HINDSIGHT_TESTS) run at the same time in Hindsight's own virtualenv,
# where they may not skip themselves (ROTBENCH_REQUIRE_HINDSIGHT); their output follows the
# suite's, and either one failing fails `make test`. In the main virtualenv they skip.
TEST_WORKERS ?= 2
HINDSIGHT_TESTS := tests/engines/test_hindsight.py tests/engines/test_hindsight_postgres.py
test: $(TEST_STAMP) $(HINDSIGHT_STAMP) browser
	@echo "make: Hindsight's tests run in $(HINDSIGHT_VENV) beside the suite; their output follows it"
	@log=$$(mktemp); \
	ROTBENCH_REQUIRE_HINDSIGHT=1 $(HINDSIGHT_VENV)/bin/pytest -n 0 -p no:cacheprovider \
	  $(HINDSIGHT_TESTS) \
	  >"$$log" 2>&1 & hindsight=$$!; \
	ROTBENCH_REQUIRE_BROWSER=1 $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile \
	  --no-loadscope-reorder; suite=$$?; \
	wait $$hindsight; status=$$?; \
	echo "make: Hindsight's tests, in $(HINDSIGHT_VENV) (exit $$status):"; \
	cat "$$log"; rm -f "$$log"; \
	test $$suite = 0 && test $$status = 0

# The quick loop while editing: everything but the slow, browser and subprocess tests.
test-fast: $(TEST_STAMP)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow and not browser and not subprocess"

# The HTML report is checked in headless Chromium (Debian's `chromium` package). Installed
# here when missing and running as root; otherwise say how.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "make test needs chromium: sudo apt-get install -y chromium" >&2; exit 1; fi; }

# The documentation site, from mkdocs.yml and docs/, into site/ (gitignored). --strict turns
# every warning (a broken link or anchor, a missing page) into a failure. Not --quiet: it
# hides the warnings from the strict count, and a broken link then passes.
docs: $(TEST_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_world.py
	$(BIN)/python benchmarks/bench_deposit.py
	$(BIN)/python benchmarks/bench_rescore.py
	$(BIN)/python benchmarks/bench_run.py
	$(BIN)/python benchmarks/bench_peers.py
	$(BIN)/python benchmarks/bench_html.py

server: $(STAMP)
	$(BIN)/rotbench server --port 4200

$(STAMP): pyproject.toml constraints.txt
	@echo "make: installing rotbench and what a run needs into $(VENV) (CPU torch; pip's progress follows)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP) -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	@echo "make: installing the test, docs and peer-engine extras ($(TEST_EXTRAS)) into $(VENV)"
	$(PIP) -e '.[$(TEST_EXTRAS)]'
	touch $(TEST_STAMP)

# The wheel an engine's CI installs (with the shipped vectors, profiles, prompts and
# templates inside), and beside it the constraints it is installed with (CPU torch and the
# versions the shipped vectors were encoded with): docs/engines/your-engine.md.
DIST ?= dist
dist: $(STAMP)
	$(BIN)/python -m pip wheel --no-deps --no-build-isolation --wheel-dir $(DIST) .
	cp constraints.txt $(DIST)/rotbench-constraints.txt

clean:
	rm -rf $(VENV) $(HINDSIGHT_VENV) cache/* reports/* .prefect site dist
	touch cache/.gitkeep reports/.gitkeep

# Hindsight (hindsight-api-slim 1.1.0) pins sqlalchemy<2.1, greenlet<3.4 and protobuf>=7.35,
# which the particles and mem0 extras exclude: it gets a virtualenv of its own, with LangMem
# (built once, as the stamp says; `make test` builds it too, for Hindsight's tests).
# Then: .venv-hindsight/bin/rotbench run --engine hindsight --engine langmem --engine reference
hindsight-env: $(HINDSIGHT_STAMP)

$(HINDSIGHT_STAMP): pyproject.toml constraints.txt
	@echo "make: installing rotbench with the hindsight, langmem and dev extras into $(HINDSIGHT_VENV)"
	test -x $(HINDSIGHT_VENV)/bin/python || $(PYTHON) -m venv $(HINDSIGHT_VENV)
	$(HINDSIGHT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(HINDSIGHT_VENV)/bin/python -m pip install --progress-bar on -c constraints.txt -e '.[dev,hindsight,langmem]'
	touch $(HINDSIGHT_STAMP)

# The reports of record shipped in the package (rotbench/published/data, one file an arm) and
# their page (docs/results/published.md): every engine of this environment on the default
# worlds, oracle and noisy good/typical, then Hindsight from its own environment when there
# is one (make hindsight-env). Each arm is one `rotbench run` under PUBLISHED_RUNS.
PUBLISHED_RUNS ?= build/published-runs
published: $(TEST_STAMP)
	$(BIN)/python -m rotbench.published.regenerate --runs-dir $(PUBLISHED_RUNS)
	@if [ -x $(HINDSIGHT_VENV)/bin/python ]; then $(MAKE) published-hindsight; \
	else echo "make: no $(HINDSIGHT_VENV): Hindsight's records are kept only while on the same worlds (make hindsight-env, then make published-hindsight)" >&2; fi
	$(MAKE) published-page

published-hindsight:
	$(HINDSIGHT_VENV)/bin/python -m rotbench.published.regenerate --engine hindsight \
	  --runs-dir $(PUBLISHED_RUNS)-hindsight

published-page: $(STAMP)
	$(BIN)/python -m rotbench.published.regenerate --page-only --page docs/results/published.md

# Every shipped record this environment can run against a cold run today, figure for figure
# (minutes: the peers); the cheap engines' are in the normal suite.
verify-published: $(TEST_STAMP)
	ROTBENCH_VERIFY_PUBLISHED=1 $(BIN)/pytest tests/published -n 0

verify-published-hindsight:
	$(HINDSIGHT_VENV)/bin/python -m rotbench.published.regenerate --verify --engine hindsight \
	  --runs-dir $(PUBLISHED_RUNS)-hindsight-verify
