#!/bin/sh
# corpus38's cases: public numpy code through autoprop and `gradcheck check` (session 38, issue 10).
# Usage: cases/corpus38/RUN.sh CHECKOUT   (a backprop-lab checkout with .venv). One line per finding:
# Fn REPRODUCED / Fn FIXED; An lines classify autoprop on each code base (OK / ERROR / WRONG); Un lines are
# upstream bugs (not ours). Takes about 3 minutes on 2 shared cores.
set -e
CO=$(cd "${1:?usage: RUN.sh CHECKOUT}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PY="$CO/.venv/bin/python"
UP=$(PY="$PY" "$HERE/upstream.sh")
"$PY" "$HERE/autoprop_corpus.py" "$CO" "$UP"
"$PY" "$HERE/autoprop_findings.py" "$CO"
"$PY" "$HERE/gradcheck_corpus.py" "$CO" "$UP"
