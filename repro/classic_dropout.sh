#!/bin/sh
# A dropout scaling at test time (classic/non-inverted) PASSed, unnamed, on main.
cd "$(dirname "$0")/.." && .venv/bin/python -m gradcheck check repro/classic_dropout.py::ClassicDropout --input-shape 4,5 --isolation process "$@"
