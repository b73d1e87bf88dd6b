#!/bin/sh
# verify37 F8: a CS231n batchnorm pair that never stores running_mean/running_var in bn_param, checked against
# --reference manualprop.BatchNorm1D: a usage error about parameters, not a FAIL naming the statistics never stored.
cd "$(dirname "$0")/.." && .venv/bin/python -m gradcheck check tests/buggy_layers/cs231n.py::batchnorm \
  --input-shape '8,4;4;4' --init '{"bn_param": {"mode": "train"}}' --reference manualprop.BatchNorm1D \
  --reference-init '{"num_features": 4}' --isolation process "$@"
