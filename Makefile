# backprop-lab: two commands on a fresh machine.
#   make demo   -- check every built-in layer, then train manual vs tape on digits
#   make test   -- the whole test suite (unit, property, lessons, notebooks, CLI)
#   make notebooks -- open the coursework in Jupyter with the project's kernel
#   make bench  -- the benchmark scripts (tape vs manual, layers, checker, grading)
#   make bench-peers -- benchmarks/train_step.py with torch eager, HIPS autograd and jax.jit
#                  beside plain numpy, installed into their own environment (.venv-peers),
#                  so the test venv stays free of them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-peers notebooks lint clean venv

venv: $(STAMP)

# Recreated when pyproject.toml changes (a stale venv is rebuilt, not patched).
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,notebooks,distributed]"
	$(BIN)/python -m ipykernel install --sys-prefix --name backprop-lab --display-name "backprop-lab (.venv)" >/dev/null
	@touch $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(BIN)/gradcheck zoo --plots demo-output/zoo
	MPLBACKEND=Agg $(BIN)/gradcheck train --plots demo-output/train
	MPLBACKEND=Agg $(BIN)/gradcheck train --model cnn --epochs 15 --plots demo-output/train-cnn

test: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m pytest -n 2 --timeout 600

bench: $(STAMP)
	$(BIN)/python benchmarks/train_step.py
	$(BIN)/python benchmarks/layers.py
	$(BIN)/python benchmarks/checker.py
	$(BIN)/python benchmarks/grading.py

# torch==2.13.0 is the CPU build pip takes from this machine's disk (a bare "torch" would
# fetch a CUDA build of several GB); jax from PyPI (about 600 MB)
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed
$(PEERS_STAMP): pyproject.toml
	@test -x $(PEERS_VENV)/bin/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet -e . threadpoolctl autograd torch==2.13.0 jax jaxlib
	@touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_VENV)/bin/python benchmarks/train_step.py

notebooks: $(STAMP)
	$(BIN)/jupyter notebook notebooks/

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) $(PEERS_VENV) demo-output .pytest_cache .hypothesis
