# make bench: set up, measure the device ceilings, run the suite's main job on every device present;
#             peaks and run files go to results-local/ (git-ignored), never into the committed results/
# make test:  set up, then pytest (correctness of every kernel on every available device)
# ./solbench ARGS (or `. .venv/bin/activate; solbench ARGS`) runs the CLI from the venv
VENV := .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: setup bench test peaks lint clean

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
	$(PY) -m pytest $(ARGS)

lint: setup
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks
