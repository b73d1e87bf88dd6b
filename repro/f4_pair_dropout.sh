#!/bin/sh
# verify37 F4: a correct CS231n dropout pair against --reference manualprop.Dropout: wrong FAIL on main
cd "$(dirname "$0")/.." && .venv/bin/python -m gradcheck check repro/cs231n_dropout.py::dropout --input-shape 4,5 \
  --init '{"dropout_param": {"p": 0.7, "mode": "train", "seed": 1}}' --reference manualprop.Dropout --isolation process "$@"
