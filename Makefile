# backprop-lab: two commands on a fresh machine.
#   make demo   -- check every built-in layer, then train manual vs tape on digits
#   make test   -- the whole test suite (unit, property, lessons, notebooks, CLI)
#   make notebooks -- open the coursework in Jupyter with the project's kernel
#   make bench  -- the benchmark scripts (tape vs manual, layers, checker, grading)
#   make site   -- the course site into site/ (lessons, executed notebooks, API reference);
#                  make site-serve serves it, make site-test checks it in headless Chromium
#   make bench-peers -- benchmarks/train_step.py with torch eager, HIPS autograd and jax.jit
#                  beside plain numpy, installed into their own environment (.venv-peers),
#                  so the test venv stays free of them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench bench-peers notebooks lint clean venv site site-serve site-test

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
	MPLBACKEND=Agg $(BIN)/python -m pytest -n 3 --dist worksteal --timeout 600 --durations=30

# each script runs even when one before it exits 1 (checker.py does when a target is missed, which a
# loaded machine makes likely): the last line says which did
bench: $(STAMP)
	@failed=""; for s in train_step layers checker grading; do \
	  echo "$(BIN)/python benchmarks/$$s.py"; $(BIN)/python benchmarks/$$s.py || failed="$$failed $$s.py"; \
	done; if [ -n "$$failed" ]; then echo "make bench: exit 1 from$$failed (a target missed, above)"; exit 1; fi

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

# The course site (docs/site.md): MkDocs + Material + mkdocs-jupyter + mkdocstrings, the
# `site` extra, and MathJax from npm (docs/site/package-lock.json), served from site/.
# A stamp of its own, so `make test` installs none of it.
SITE_STAMP := $(VENV)/.site-installed
$(SITE_STAMP): $(STAMP) pyproject.toml docs/site/package.json docs/site/package-lock.json
	$(BIN)/python -m pip install --quiet -e ".[site]"
	npm ci --prefix docs/site --no-audit --no-fund --loglevel=error
	@touch $(SITE_STAMP)

# (NO_MKDOCS_2_WARNING: Material prints a banner about MkDocs 2 on every build otherwise)
# builds once: every notebook is executed by mkdocs-jupyter (a failing cell fails the build)
site: $(SITE_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# http://127.0.0.1:8000, rebuilt on change (the whole site, notebooks included: --dirty
# would warn, and the build is strict)
site-serve: $(SITE_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# Debian's chromium when missing (CI runs as root); the browser test opens
# every page of the built site/ (docs/site/test_site.py), screenshots to site-screenshots/
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

site-test: site $(CHROMIUM)
	$(BIN)/python -m pytest -p no:cacheprovider -q -o addopts="" docs/site/test_site.py

# Jupyter refuses to run as root without --allow-root (a container, a CI job): passed only then
notebooks: $(STAMP)
	$(BIN)/jupyter notebook $$(test "$$(id -u)" = 0 && echo --allow-root) notebooks/

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) $(PEERS_VENV) demo-output .pytest_cache .hypothesis site site-screenshots docs/site/node_modules
