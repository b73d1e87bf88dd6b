#!/bin/sh
# verify37 F13: under check's default --isolation auto (the namespaces sandbox), a file importing scipy is told to
# `pip install -r requirements.txt`, which cannot help: the sandbox provides only numpy (and the course packages).
cd "$(dirname "$0")/.." && .venv/bin/python -m gradcheck check repro/scipy_relu.py::ReLU --input-shape 4,5 "$@"
