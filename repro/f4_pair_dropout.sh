#!/bin/sh
# verify37 F4: a correct CS231n dropout pair (p the KEEP probability; tests/test_dropout_conventions.py's CS231N)
# against --reference manualprop.Dropout: a wrong FAIL on main (compared entry by entry with the reference's own mask).
# Extra arguments are passed on (e.g. --reference-init '{"p": 0.3}', --isolation auto).
cd "$(dirname "$0")/.." || exit 2
f="${TMPDIR:-/tmp}/cs231n_dropout_f4.py"
.venv/bin/python -c "import sys; sys.path[:0] = ['tests']; from test_dropout_conventions import CS231N
open('$f', 'w').write(CS231N.replace('BACKWARD', 'dout * mask'))" && .venv/bin/python -m gradcheck check "$f::dropout" \
  --input-shape 4,5 --init '{"dropout_param": {"p": 0.7, "mode": "train", "seed": 1}}' --reference manualprop.Dropout \
  --isolation process "$@"
