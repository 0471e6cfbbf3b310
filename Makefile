# make bench: set up, measure the device ceilings, run the suite's main job on every device present;
#             peaks and run files go to results-local/ (git-ignored), never into the committed results/
# make test:  set up, then pytest (correctness of every kernel on every available device) on
#             TEST_JOBS xdist workers (default 2: about half the wall time on a 2-core machine;
#             each device's kernel items stay on one worker, see suite/pytest_plugin.py)
# ./solbench ARGS (or `. .venv/bin/activate; solbench ARGS`) runs the CLI from the venv
VENV := .venv
PY := $(VENV)/bin/python
ARGS ?=
TEST_JOBS ?= 2

.PHONY: setup bench test peaks lint clean dashboard nightly

setup: $(VENV)/.solbench-ok

$(VENV)/.solbench-ok: pyproject.toml scripts/setup.sh suite/cudawheel.py
	bash scripts/setup.sh

peaks: setup
	$(PY) -m suite.cli peaks

bench: setup
	$(PY) -m suite.cli peaks
	$(PY) -m suite.cli run --size bench $(ARGS)
	@echo "solbench is .venv/bin/solbench: run ./solbench ARGS, or . .venv/bin/activate first"

test: setup
	$(PY) -m pytest -n $(TEST_JOBS) $(ARGS)

# make dashboard: the static site from results/ and results-local/ → build/dashboard/index.html
dashboard: setup
	$(PY) -m suite.cli dashboard $(ARGS)

# make nightly: the nightly job on this machine (peaks if stale, the suite, reports, dashboard)
nightly: setup
	$(PY) -m suite.cli nightly $(ARGS)

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks
